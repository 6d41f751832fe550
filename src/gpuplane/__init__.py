"""gpuplane: a GPU-ready EKS platform for TensorFlow, as Pulumi components in Python.

One import name for everything: `gpuplane.components` (Pulumi components and their typed args),
`gpuplane.manifests` (pure Kubernetes object builders, no Pulumi) and `gpuplane.infra` (the program,
config loading, the offline renderer and the CLI). The folders live at the top of the repository
(`components/`, `manifests/`, `infra/`); `src/gpuplane/` links them in, so a wheel installs only
`gpuplane` and an editable install, mypy, pytest and the Pulumi CLI all see the same names.

The public surface is re-exported here and pinned by `tests/test_project.py`. It is loaded lazily so
that `gpuplane --version` does not pay for importing pulumi_aws.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplane.components.autoscaler import ClusterAutoscaler
    from gpuplane.components.cluster import Cluster
    from gpuplane.components.config import (
        AutoscalerArgs,
        ClusterArgs,
        NetworkArgs,
        NodeGroupArgs,
        PlatformArgs,
        StorageArgs,
        VolumeArgs,
    )
    from gpuplane.components.config.workloads import ServingArgs, TrainingArgs
    from gpuplane.components.gpu import GpuEnablement
    from gpuplane.components.network import Network
    from gpuplane.components.node_group import NodeGroup
    from gpuplane.components.plan.gpu_nodes import GpuPlan
    from gpuplane.components.plan.placement import WorkloadContext
    from gpuplane.components.platform import Platform
    from gpuplane.components.serving import TfServing
    from gpuplane.components.storage import SharedStorage
    from gpuplane.components.training import TfTraining
    from gpuplane.components.workspace import Workspace

# name -> module that defines it
_PUBLIC: dict[str, str] = {
    "Platform": "gpuplane.components.platform",
    "Network": "gpuplane.components.network",
    "Cluster": "gpuplane.components.cluster",
    "NodeGroup": "gpuplane.components.node_group",
    "SharedStorage": "gpuplane.components.storage",
    "GpuEnablement": "gpuplane.components.gpu",
    "GpuPlan": "gpuplane.components.plan.gpu_nodes",
    "ClusterAutoscaler": "gpuplane.components.autoscaler",
    "Workspace": "gpuplane.components.workspace",
    "PlatformArgs": "gpuplane.components.config",
    "NetworkArgs": "gpuplane.components.config",
    "ClusterArgs": "gpuplane.components.config",
    "NodeGroupArgs": "gpuplane.components.config",
    "StorageArgs": "gpuplane.components.config",
    "VolumeArgs": "gpuplane.components.config",
    "AutoscalerArgs": "gpuplane.components.config",
    "TfServing": "gpuplane.components.serving",
    "TfTraining": "gpuplane.components.training",
    "ServingArgs": "gpuplane.components.config.workloads",
    "TrainingArgs": "gpuplane.components.config.workloads",
    "WorkloadContext": "gpuplane.components.plan.placement",
}

__all__ = [
    "AutoscalerArgs",
    "Cluster",
    "ClusterArgs",
    "ClusterAutoscaler",
    "GpuEnablement",
    "GpuPlan",
    "Network",
    "NetworkArgs",
    "NodeGroup",
    "NodeGroupArgs",
    "Platform",
    "PlatformArgs",
    "ServingArgs",
    "SharedStorage",
    "StorageArgs",
    "TfServing",
    "TfTraining",
    "TrainingArgs",
    "VolumeArgs",
    "WorkloadContext",
    "Workspace",
    "__version__",
]


def _version() -> str:
    from importlib import metadata  # noqa: PLC0415 - importlib.metadata alone is ~50 ms of every CLI start

    try:
        return metadata.version("gpuplane")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """Import a public name (and `__version__`) on first use (PEP 562)."""
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'gpuplane' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
