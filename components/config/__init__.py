"""The schema: the typed args of every component, which are also the schema of the stack config.

Why one set of types for both: a bad value must get the same clear error whether it comes from
`stacks/Pulumi.<stack>.yaml` (through `infra.config`) or from another team's program that builds a
`NodeGroupArgs` by hand. Field names are snake_case in Python and camelCase in the stack file (the
Pulumi convention); unknown keys are errors. Every field documents its default where it is declared;
where the `prod` profile changes a default, the description says so and `PlatformArgs` applies it to
every field the user did not set.

What lives here: one module per concern of the stack file (`network`, `cluster`, `node_groups`, `gpu`
sharing, `storage`, `queue`, `workloads` for serving and training, and `platform`, which holds the
whole), `base` (the args base class and `FieldError`) and `common` (what several of them check). Each
field is checked where it is declared; the rules that span sections are in `components.plan.cross_checks`,
which takes these args.

What it may import: `components.facts` (instance types, partitions, name limits, subnet arithmetic) and
`gpuplane.manifests`; never `components.plan`, the resources, Pulumi or boto3 (import-linter enforces it).
This module re-exports the public names only; helpers private to a module stay in it.
"""

from gpuplane.components.config.base import FieldError, FieldErrors
from gpuplane.components.config.cluster import ClusterArgs, LogType, NodeUpgradeOrder
from gpuplane.components.config.common import LOG_RETENTION_DAYS, Profile
from gpuplane.components.config.gpu import GpuSharingArgs, MigArgs, MpsArgs, TimeSlicingArgs
from gpuplane.components.config.network import MAX_AZS_PER_REGION, NatMode, NetworkArgs
from gpuplane.components.config.node_groups import (
    AmiType,
    CapacityReservationArgs,
    CapacityType,
    NodeGroupArgs,
    ReservationPreference,
    Taint,
    TaintEffect,
)
from gpuplane.components.config.node_repair import NodeRepairArgs, RepairAction, RepairOverrideArgs
from gpuplane.components.config.platform import AutoscalerArgs, ObservabilityArgs, PlatformArgs
from gpuplane.components.config.queue import QueueArgs
from gpuplane.components.config.storage import (
    EFS_BASE_PATH_MAX_COMPONENTS,
    EFS_PATH_MAX_CHARS,
    EFS_UNIQUE_SUFFIX_CHARS,
    POSIX_ID_MAX,
    POSIX_ID_MIN,
    StorageArgs,
    VolumeArgs,
)
from gpuplane.components.config.workloads import ServingArgs, TrainingArgs

__all__ = [
    "EFS_BASE_PATH_MAX_COMPONENTS",
    "EFS_PATH_MAX_CHARS",
    "EFS_UNIQUE_SUFFIX_CHARS",
    "LOG_RETENTION_DAYS",
    "MAX_AZS_PER_REGION",
    "POSIX_ID_MAX",
    "POSIX_ID_MIN",
    "AmiType",
    "AutoscalerArgs",
    "CapacityReservationArgs",
    "CapacityType",
    "ClusterArgs",
    "FieldError",
    "FieldErrors",
    "GpuSharingArgs",
    "LogType",
    "MigArgs",
    "MpsArgs",
    "NatMode",
    "NetworkArgs",
    "NodeGroupArgs",
    "NodeRepairArgs",
    "NodeUpgradeOrder",
    "ObservabilityArgs",
    "PlatformArgs",
    "Profile",
    "QueueArgs",
    "RepairAction",
    "RepairOverrideArgs",
    "ReservationPreference",
    "ServingArgs",
    "StorageArgs",
    "Taint",
    "TaintEffect",
    "TimeSlicingArgs",
    "TrainingArgs",
    "VolumeArgs",
]
