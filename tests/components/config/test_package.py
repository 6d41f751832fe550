"""The config package: one import name over modules split by concern, public names only."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gpuplane.components.config as config
from gpuplane.components.config import (
    cluster,
    common,
    gpu,
    network,
    node_groups,
    platform,
    queue,
    storage,
    workloads,
)

# The public names the package has offered since `components/config.py` became a package, and those added
# since (the queue's settings, the several-errors exception). Private helpers are not re-exported: each
# stays in the module that uses it. Node repair's settings. The node groups' upgrade order.
PUBLIC_NAMES = (
    "AmiType", "AutoscalerArgs", "CapacityReservationArgs", "CapacityType", "ClusterArgs",
    "EFS_BASE_PATH_MAX_COMPONENTS", "EFS_PATH_MAX_CHARS", "EFS_UNIQUE_SUFFIX_CHARS", "FieldError", "FieldErrors",
    "GpuSharingArgs", "LOG_RETENTION_DAYS", "LogType", "MAX_AZS_PER_REGION", "MigArgs", "MpsArgs", "NatMode",
    "NetworkArgs", "NodeGroupArgs", "ObservabilityArgs", "POSIX_ID_MAX", "POSIX_ID_MIN", "PlatformArgs", "Profile",
    "QueueArgs", "ReservationPreference", "ServingArgs", "StorageArgs", "Taint", "TaintEffect", "TimeSlicingArgs",
    "TrainingArgs", "VolumeArgs",
    "NodeRepairArgs", "RepairAction", "RepairOverrideArgs",
    "NodeUpgradeOrder",
)  # fmt: skip


def test_the_package_offers_its_public_names_and_no_private_one():
    missing = [name for name in PUBLIC_NAMES if not hasattr(config, name)]
    assert missing == []
    assert sorted(config.__all__) == sorted(PUBLIC_NAMES)
    assert [name for name in config.__all__ if name.startswith("_")] == []
    private = [name for name in vars(config) if name.startswith("_") and not name.startswith("__")]
    assert private == []


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
    assert config.ServingArgs is workloads.ServingArgs
    assert config.TrainingArgs is workloads.TrainingArgs
    assert config.LOG_RETENTION_DAYS is common.LOG_RETENTION_DAYS


@pytest.mark.parametrize(
    "module",
    [
        *(f"config.{m}" for m in ("platform", "node_groups", "storage", "gpu", "network", "cluster", "common")),
        *(f"config.{m}" for m in ("queue", "workloads", "base")),
        *(f"plan.{m}" for m in ("gpu_nodes", "placement", "training_queue", "cross_checks", "names", "node_template")),
        *(f"facts.{m}" for m in ("catalog", "partition", "subnets", "name_limits")),
        "destroy.teardown",
    ],
)
def test_importing_any_module_first_works(module: str):
    """Each module imports on its own in a fresh interpreter: no order of imports is needed to break a loop."""
    subprocess.run([sys.executable, "-c", f"import gpuplane.components.{module}"], check=True)
