"""The config package: one import name over modules split by concern, and no import loop through it."""

from __future__ import annotations

import subprocess
import sys

import gpuplane.components.config as config
from gpuplane.components.config import cluster, common, gpu, network, node_groups, platform, queue, storage

# Every name `components/config.py` defined or re-exported before it became a package (its own
# `vars()` less the modules and typing/pydantic helpers it imported).
OLD_MODULE_NAMES = (
    "AmiType", "AutoscalerArgs", "CapacityType", "ClusterArgs", "EFS_BASE_PATH_MAX_COMPONENTS", "EFS_PATH_MAX_CHARS",
    "EFS_UNIQUE_SUFFIX_CHARS", "FieldError", "GpuSharingArgs", "LOG_RETENTION_DAYS", "LogType", "MAX_AZS_PER_REGION",
    "MigArgs", "MpsArgs", "NatMode", "NetworkArgs", "NodeGroupArgs", "ObservabilityArgs", "POSIX_ID_MAX",
    "POSIX_ID_MIN", "PlatformArgs", "Profile", "ServingArgs", "StorageArgs", "Taint", "TaintEffect",
    "TimeSlicingArgs", "TrainingArgs", "VolumeArgs", "_Args", "_DNS_LABEL_RE", "_EFS_PATH_RE", "_EFS_PERMS_RE",
    "_FS_ID_RE", "_IAM_PRINCIPAL_RE", "_K8S_KEY_RE", "_K8S_NAME", "_K8S_QUANTITY_RE", "_K8S_VALUE_RE",
    "_MIG_PROFILE_RE", "_NAME_RE", "_PROD_CLUSTER", "_PROD_NETWORK", "_PROD_STORAGE", "_RESERVED_LABEL_DOMAINS",
    "_SG_ID_RE", "_blocks_scheduling", "_check_cidr", "_default_volumes", "default_node_groups",
    "dynamic_access_point_path_length",
)  # fmt: skip


# Names added since the split (the training queue's settings).
NEW_NAMES = ("QueueArgs",)


def test_every_old_name_is_importable_from_the_package():
    missing = [name for name in OLD_MODULE_NAMES if not hasattr(config, name)]
    assert missing == []
    assert sorted(config.__all__) == sorted(OLD_MODULE_NAMES + NEW_NAMES)


def test_each_args_class_lives_in_its_concern_module():
    assert config.NetworkArgs is network.NetworkArgs
    assert config.ClusterArgs is cluster.ClusterArgs
    assert config.NodeGroupArgs is node_groups.NodeGroupArgs
    assert config.Taint is node_groups.Taint
    assert config.GpuSharingArgs is gpu.GpuSharingArgs
    assert config.StorageArgs is storage.StorageArgs
    assert config.VolumeArgs is storage.VolumeArgs
    assert config.PlatformArgs is platform.PlatformArgs
    assert config.QueueArgs is queue.QueueArgs
    assert config.LOG_RETENTION_DAYS is common.LOG_RETENTION_DAYS


def test_cross_checks_do_not_import_the_config_that_calls_them():
    """config -> workload_checks -> gpu_plan -> config was a loop held open by an import's position."""
    probe = (
        "import sys\n"
        "import gpuplane.components.gpu_plan, gpuplane.components.workload_checks, gpuplane.components.queue_plan\n"
        "print('gpuplane.components.config' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_importing_any_config_module_first_works():
    for module in ("platform", "node_groups", "storage", "gpu", "network", "cluster", "common", "queue"):
        probe = f"import gpuplane.components.config.{module}"
        subprocess.run([sys.executable, "-c", probe], check=True)
