"""Scheduling helpers for GPU workloads: requests, tolerations, and node affinity on driver and CPU.

Why affinity on GFD/NFD labels: the two failures the source write-ups hit at container start are CUDA
user space newer than the node's kernel driver ("kernel version does not match DSO version") and an
image built for CPU instructions the node lacks ("Illegal instruction", e.g. AVX-512). GPU feature
discovery labels each node with its driver's CUDA version and NFD with its CPU flags, so a pod that
declares what its image needs is only ever placed where it can start.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from gpuplane.manifests import versions

_CPU_FLAG_RE: Final = re.compile(r"^[A-Z0-9_]{2,32}$")


def gpu_limits(count: int = 1, resource: str = versions.GPU_RESOURCE) -> dict[str, str]:
    """Resource limits for `count` GPU units (extended resources are set as limits; requests follow)."""
    if count < 1:
        raise ValueError(f"GPU count {count} must be at least 1")
    return {resource: str(count)}


def gpu_tolerations() -> list[dict[str, str]]:
    """Tolerate the GPU taint.

    EKS's ExtendedResourceToleration adds this for `nvidia.com/gpu` requests already; it is explicit here
    so MIG-mixed resources and pods on other clusters behave the same.
    """
    return [{"key": versions.GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]


def cuda_requirement(cuda_major: int) -> dict[str, Any]:
    """Node selector requirement: the node's driver runs CUDA `cuda_major` user space."""
    if cuda_major not in versions.CUDA_MIN_DRIVER:
        raise ValueError(f"CUDA {cuda_major} is unknown; known CUDA majors: {sorted(versions.CUDA_MIN_DRIVER)}")
    minimum = versions.CUDA_MIN_DRIVER[cuda_major]
    # GFD's label is the driver major; `Gt` compares integers, so "at least N" is "greater than N-1".
    return {"key": versions.LABEL_CUDA_DRIVER_MAJOR, "operator": "Gt", "values": [str(minimum - 1)]}


def cpu_feature_requirements(features: Sequence[str]) -> list[dict[str, Any]]:
    """Node selector requirements: the node's CPU has every flag in `features` (NFD cpuid names)."""
    requirements = []
    for feature in features:
        if not _CPU_FLAG_RE.match(feature):
            raise ValueError(f"CPU feature '{feature}' is not an NFD cpuid flag name like AVX512F or AMXTILE")
        requirements.append({"key": f"{versions.NFD_CPUID_PREFIX}{feature}", "operator": "In", "values": ["true"]})
    return requirements


def node_affinity(*, cuda_major: int | None = None, cpu_features: Sequence[str] = ()) -> dict[str, Any] | None:
    """Pod `affinity` requiring what the image needs; None when it needs nothing special."""
    expressions = [
        *([cuda_requirement(cuda_major)] if cuda_major is not None else []),
        *cpu_feature_requirements(cpu_features),
    ]
    if not expressions:
        return None
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
        }
    }


def gpu_pod_scheduling(
    *,
    gpus: int = 1,
    resource: str = versions.GPU_RESOURCE,
    cuda_major: int | None = None,
    cpu_features: Sequence[str] = (),
) -> dict[str, Any]:
    """Everything a GPU pod spec needs: `limits` for its container, `tolerations` and `affinity` for the pod."""
    scheduling: dict[str, Any] = {"limits": gpu_limits(gpus, resource), "tolerations": gpu_tolerations()}
    affinity = node_affinity(cuda_major=cuda_major, cpu_features=cpu_features)
    if affinity is not None:
        scheduling["affinity"] = affinity
    return scheduling
