"""The typed args of every component, which are also the schema of the stack config.

Why one set of types for both: a bad value must get the same clear error whether it comes from
`stacks/Pulumi.<stack>.yaml` (through `infra.config`) or from another team's program that builds a
`NodeGroupArgs` by hand. Field names are snake_case in Python and camelCase in the stack file (the
Pulumi convention); unknown keys are errors. Every field documents its default where it is declared;
where the `prod` profile changes a default, the description says so and `PlatformArgs` applies it to
every field the user did not set.

Why a package: one module per concern of the stack file (`network`, `cluster`, `node_groups`, `gpu`
sharing, `storage`, and `platform`, which holds the whole and its cross-checks; `common` has what
several of them check). This module is the one import name: every type, constant and helper is
re-exported here, so `from gpuplane.components.config import X` does not depend on the layout.
"""

from gpuplane.components.args_base import FieldError, _Args
from gpuplane.components.config.cluster import _IAM_PRINCIPAL_RE, _SG_ID_RE, ClusterArgs, LogType
from gpuplane.components.config.common import _DNS_LABEL_RE, LOG_RETENTION_DAYS, Profile, _check_cidr
from gpuplane.components.config.gpu import _MIG_PROFILE_RE, GpuSharingArgs, MigArgs, MpsArgs, TimeSlicingArgs
from gpuplane.components.config.network import MAX_AZS_PER_REGION, NatMode, NetworkArgs
from gpuplane.components.config.node_groups import (
    _K8S_KEY_RE,
    _K8S_NAME,
    _K8S_VALUE_RE,
    _NAME_RE,
    _RESERVED_LABEL_DOMAINS,
    AmiType,
    CapacityType,
    NodeGroupArgs,
    Taint,
    TaintEffect,
    _blocks_scheduling,
    default_node_groups,
)
from gpuplane.components.config.platform import (
    _PROD_CLUSTER,
    _PROD_NETWORK,
    _PROD_STORAGE,
    AutoscalerArgs,
    ObservabilityArgs,
    PlatformArgs,
)
from gpuplane.components.config.queue import QueueArgs
from gpuplane.components.config.storage import (
    _EFS_PATH_RE,
    _EFS_PERMS_RE,
    _FS_ID_RE,
    _K8S_QUANTITY_RE,
    EFS_BASE_PATH_MAX_COMPONENTS,
    EFS_PATH_MAX_CHARS,
    EFS_UNIQUE_SUFFIX_CHARS,
    POSIX_ID_MAX,
    POSIX_ID_MIN,
    StorageArgs,
    VolumeArgs,
    _default_volumes,
    dynamic_access_point_path_length,
)
from gpuplane.components.workload_args import ServingArgs, TrainingArgs

__all__ = [
    "EFS_BASE_PATH_MAX_COMPONENTS",
    "EFS_PATH_MAX_CHARS",
    "EFS_UNIQUE_SUFFIX_CHARS",
    "LOG_RETENTION_DAYS",
    "MAX_AZS_PER_REGION",
    "POSIX_ID_MAX",
    "POSIX_ID_MIN",
    "_DNS_LABEL_RE",
    "_EFS_PATH_RE",
    "_EFS_PERMS_RE",
    "_FS_ID_RE",
    "_IAM_PRINCIPAL_RE",
    "_K8S_KEY_RE",
    "_K8S_NAME",
    "_K8S_QUANTITY_RE",
    "_K8S_VALUE_RE",
    "_MIG_PROFILE_RE",
    "_NAME_RE",
    "_PROD_CLUSTER",
    "_PROD_NETWORK",
    "_PROD_STORAGE",
    "_RESERVED_LABEL_DOMAINS",
    "_SG_ID_RE",
    "AmiType",
    "AutoscalerArgs",
    "CapacityType",
    "ClusterArgs",
    "FieldError",
    "GpuSharingArgs",
    "LogType",
    "MigArgs",
    "MpsArgs",
    "NatMode",
    "NetworkArgs",
    "NodeGroupArgs",
    "ObservabilityArgs",
    "PlatformArgs",
    "Profile",
    "QueueArgs",
    "ServingArgs",
    "StorageArgs",
    "Taint",
    "TaintEffect",
    "TimeSlicingArgs",
    "TrainingArgs",
    "VolumeArgs",
    "_Args",
    "_blocks_scheduling",
    "_check_cidr",
    "_default_volumes",
    "default_node_groups",
    "dynamic_access_point_path_length",
]
