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

from gpuplane.manifests import lifecycle, wellknown

_CPU_FLAG_RE: Final = re.compile(r"^[A-Z0-9_]{2,32}$")


def gpu_limits(count: int = 1, resource: str = wellknown.GPU_RESOURCE) -> dict[str, str]:
    """Resource limits for `count` GPU units (extended resources are set as limits; requests follow)."""
    if count < 1:
        raise ValueError(f"GPU count {count} must be at least 1")
    return {resource: str(count)}


def gpu_tolerations() -> list[dict[str, str]]:
    """Tolerate the GPU taint.

    EKS's ExtendedResourceToleration adds this for `nvidia.com/gpu` requests already; it is explicit here
    so MIG-mixed resources and pods on other clusters behave the same.
    """
    return [{"key": wellknown.GPU_TAINT.key, "operator": "Exists", "effect": wellknown.GPU_TAINT.effect}]


def cuda_requirement(cuda_major: int) -> dict[str, Any]:
    """Node selector requirement: the node's driver runs CUDA `cuda_major` user space."""
    if cuda_major not in lifecycle.CUDA_MIN_DRIVER:
        raise ValueError(f"CUDA {cuda_major} is unknown; known CUDA majors: {sorted(lifecycle.CUDA_MIN_DRIVER)}")
    minimum = lifecycle.CUDA_MIN_DRIVER[cuda_major]
    # GFD's label is the driver major; `Gt` compares integers, so "at least N" is "greater than N-1".
    return {"key": wellknown.LABEL_CUDA_DRIVER_MAJOR, "operator": "Gt", "values": [str(minimum - 1)]}


def cpu_feature_requirements(features: Sequence[str]) -> list[dict[str, Any]]:
    """Node selector requirements: the node's CPU has every flag in `features` (NFD cpuid names)."""
    requirements = []
    for feature in features:
        if not _CPU_FLAG_RE.match(feature):
            raise ValueError(f"CPU feature '{feature}' is not an NFD cpuid flag name like AVX512F or AMXTILE")
        requirements.append({"key": f"{wellknown.NFD_CPUID_PREFIX}{feature}", "operator": "In", "values": ["true"]})
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
    resource: str = wellknown.GPU_RESOURCE,
    cuda_major: int | None = None,
    cpu_features: Sequence[str] = (),
) -> dict[str, Any]:
    """Everything a GPU pod spec needs: `limits` for its container, `tolerations` and `affinity` for the pod."""
    scheduling: dict[str, Any] = {"limits": gpu_limits(gpus, resource), "tolerations": gpu_tolerations()}
    affinity = node_affinity(cuda_major=cuda_major, cpu_features=cpu_features)
    if affinity is not None:
        scheduling["affinity"] = affinity
    return scheduling


## Quantities: what a container asks for, in numbers the fit check can compare.
_QUANTITY_RE: Final = re.compile(r"^(?P<num>[0-9]+(\.[0-9]+)?)(?P<suffix>m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
_SUFFIX: Final[dict[str, int]] = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip


def cpu_millicores(quantity: str) -> int:
    """`500m`, `2`, `1.5` -> millicores; ValueError for anything else."""
    match = _QUANTITY_RE.match(str(quantity))
    if not match or match.group("suffix") not in (None, "m"):
        raise ValueError(f"'{quantity}' is not a CPU quantity like 500m, 2 or 1.5")
    number = float(match.group("num"))
    millis = number if match.group("suffix") == "m" else number * 1000
    if millis <= 0:
        raise ValueError(f"'{quantity}' must be more than zero CPUs")
    return round(millis)


def memory_bytes(quantity: str) -> int:
    """`512Mi`, `2Gi`, `1G`, `1000000` -> bytes; ValueError for anything else (`m` would be milli-bytes)."""
    match = _QUANTITY_RE.match(str(quantity))
    if not match or match.group("suffix") == "m":
        raise ValueError(f"'{quantity}' is not a memory quantity like 512Mi, 2Gi or 1G")
    value = int(float(match.group("num")) * _SUFFIX[match.group("suffix") or ""])
    if value <= 0:
        raise ValueError(f"'{quantity}' must be more than zero bytes")
    return value


def node_group_affinity(groups: Sequence[str], extra: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """Required node affinity on the groups a workload fits, plus `extra` requirements.

    Only labels the node group sets itself (and advertises in its ASG node-template tags) are used, so
    the cluster-autoscaler can scale a group up from zero for the pod.
    """
    expressions = [{"key": wellknown.LABEL_NODE_GROUP, "operator": "In", "values": sorted(groups)}, *extra]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
        }
    }


def cpu_label(feature: str) -> str:
    """The node label gpuplane sets for a CPU instruction-set feature (e.g. `gpuplane.io/cpu-avx2`)."""
    return f"{wellknown.LABEL_CPU_PREFIX}{feature}"
