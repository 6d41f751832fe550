"""GPU facts of node groups: drivers, sharing, what one allocatable unit is worth. Pure, tested logic.

Why in one place: the device plugin's named configs, the node labels that select them, the autoscaler's
`resources/nvidia.com/gpu` tag, the GPU memory a workload may use and the CUDA versions a group can run
all follow from the same few facts (instance type, AMI, driver mode, sharing). Computing them once keeps
the plugin, the autoscaler and the workloads in agreement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from gpuplane.components.config.gpu import MIG_PROFILE_RE
from gpuplane.components.facts import catalog
from gpuplane.manifests import lifecycle, wellknown

if TYPE_CHECKING:
    # Types only (the plan layer may import the config; import-linter counts this import too).
    from gpuplane.components.config import NodeGroupArgs

# MIG instances per GPU for each compute-slice size (NVIDIA MIG user guide: A100/H100 profiles).
_MIG_INSTANCES: Final[dict[int, int]] = {1: 7, 2: 3, 3: 2, 4: 1, 7: 1}


def ami_family(group: NodeGroupArgs) -> str:
    """`al2023` or `bottlerocket`."""
    return wellknown.AMI_TYPES[group.resolved_ami_type][2]


def driver_major(group: NodeGroupArgs) -> int:
    """NVIDIA driver major version the group's nodes run (always the AMI's: see NodeGroupArgs.driver)."""
    return lifecycle.AMI_DRIVER_MAJOR[ami_family(group)]


def _mig(group: NodeGroupArgs) -> tuple[int, int]:
    assert group.sharing.mig is not None
    match = MIG_PROFILE_RE.fullmatch(group.sharing.mig.profile)
    assert match is not None  # validated by MigArgs
    return int(match.group(1)), int(match.group(2))


def units_per_gpu(group: NodeGroupArgs) -> int:
    """How many allocatable units one physical GPU becomes."""
    sharing = group.sharing
    if sharing.time_slicing:
        return sharing.time_slicing.replicas
    if sharing.mps:
        return sharing.mps.replicas
    if sharing.mig:
        return _MIG_INSTANCES[_mig(group)[0]]
    return 1


def allocatable_units(group: NodeGroupArgs) -> int:
    """GPU units one node advertises (what the autoscaler's node template must say)."""
    return group.instance.gpu_count * units_per_gpu(group)


def gpu_resource_name(group: NodeGroupArgs) -> str:
    """The extended resource pods request: `nvidia.com/gpu`, or `nvidia.com/mig-<profile>` for mixed MIG."""
    if group.sharing.mig and group.sharing.mig.strategy == "mixed":
        slices, memory = _mig(group)
        return f"nvidia.com/mig-{slices}g.{memory}gb"
    return wellknown.GPU_RESOURCE


def memory_per_unit_mib(group: NodeGroupArgs) -> int:
    """GPU memory one allocatable unit may use (MiB), from the memory the GPU really reports.

    Time-slicing gives no isolation, so the share is a budget the workload must keep (the runtime helper
    turns it into TensorFlow's per-process memory fraction); MPS enforces the same equal share; a MIG
    slice has its own memory.
    """
    if group.sharing.mig:
        return _mig(group)[1] * 1024
    return group.instance.gpu_memory_mib // units_per_gpu(group)


def memory_fraction(group: NodeGroupArgs) -> float:
    """Fraction of one GPU's memory TensorFlow may use in a unit, rounded down to 1/1000 (1.0 when not shared).

    The unit's share less a CUDA context (`catalog.CUDA_CONTEXT_RESERVE_MIB`): the fraction bounds TensorFlow's
    allocator, and each process's context comes on top of it, so with the whole share as the fraction the last of
    N processes filling theirs would run the GPU out of memory (under MPS, past its pinned-memory limit).
    """
    if group.sharing.mode in ("none", "mig"):
        return 1.0  # a whole GPU, or a MIG slice that is a whole device to the process
    # TensorFlow's budget is fraction x the memory the driver reports (R): each of the N units needs its budget and
    # a context within R / N, so fraction <= 1/N - reserve / R, for the least R the driver may report.
    reported = catalog.reported_gpu_memory_floor_mib(group.instance)
    fraction = 1 / units_per_gpu(group) - catalog.CUDA_CONTEXT_RESERVE_MIB / reported
    # Thousandths: the smallest budget the config allows (256 MiB) is 0.6 % of a 40 GiB A100, 0.2 % of an H200.
    return int(1000 * fraction) / 1000


def needs_standalone_plugin(group: NodeGroupArgs) -> bool:
    """AL2023 NVIDIA AMIs have no device plugin; Bottlerocket runs its own; the operator brings one."""
    return group.kind == "gpu" and group.driver == "ami" and ami_family(group) == "al2023"


def device_plugin_config(group: NodeGroupArgs) -> dict[str, Any]:
    """The device plugin's config for this group (`version: v1` file format)."""
    config: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": "none"}}
    sharing = group.sharing
    resource = [{"name": wellknown.GPU_RESOURCE, "replicas": units_per_gpu(group)}]
    if sharing.time_slicing:
        # renameByDefault false: pods keep requesting nvidia.com/gpu; failRequestsGreaterThanOne: a pod
        # asking for 2 shares of one GPU would get no more compute, only a false promise.
        config["sharing"] = {
            "timeSlicing": {"renameByDefault": False, "failRequestsGreaterThanOne": True, "resources": resource}
        }
    elif sharing.mps:
        config["sharing"] = {"mps": {"renameByDefault": False, "resources": resource}}
    elif sharing.mig:
        config["flags"]["migStrategy"] = sharing.mig.strategy
    return config


def node_labels(group: NodeGroupArgs, *, gpu_operator: bool) -> dict[str, str]:
    """Labels of the group's nodes: identity, GPU facts workloads select on, and per-node plugin config.

    `gpu_operator` says whether the GPU Operator runs in the cluster: then its per-node `deploy` labels
    keep it from installing a driver where the AMI has one, and off Bottlerocket nodes entirely.
    """
    labels = {wellknown.LABEL_NODE_GROUP: group.name}
    # CPU features common to every instance type of the group (a node may be any of them).
    common = frozenset.intersection(*(catalog.cpu_features(catalog.lookup(t)) for t in group.instance_types))
    labels |= {f"{wellknown.LABEL_CPU_PREFIX}{feature}": "true" for feature in sorted(common)}
    if group.kind == "gpu":
        labels |= {
            wellknown.GPU_PRESENT_LABEL: "true",
            # The cluster-autoscaler's AWS provider knows GPU nodes by this label; without it a new GPU
            # node looks GPU-less until the device plugin registers, and the autoscaler adds another
            # (cluster-autoscaler AWS README, "Special note on GPU instances").
            wellknown.ACCELERATOR_LABEL: f"nvidia-{(group.instance.gpu_model or 'gpu').lower()}",
            "gpuplane.io/gpu-driver": group.driver,
            "gpuplane.io/gpu-sharing": group.sharing.mode,
            "gpuplane.io/gpu-memory-per-unit-mib": str(memory_per_unit_mib(group)),
            # Written as the runtime helper's value is (tf_runtime: repr of the float), so the two compare equal.
            "gpuplane.io/gpu-memory-fraction": repr(float(memory_fraction(group))),
            "gpuplane.io/cuda-driver-major": str(driver_major(group)),
            wellknown.LABEL_GPU_COMPUTE_CAPABILITY: str(catalog.compute_capability(group.instance)),
        }
        if needs_standalone_plugin(group) or group.driver == "operator":
            labels[wellknown.LABEL_DEVICE_PLUGIN_CONFIG] = group.name
        if group.sharing.mig:
            labels[wellknown.LABEL_MIG_CONFIG] = group.sharing.mig.profile
        if gpu_operator and ami_family(group) == "bottlerocket":
            labels["nvidia.com/gpu.deploy.operands"] = "false"
        elif gpu_operator:
            # Belt and braces next to driver.enabled=false: the AMI's driver and toolkit stay the only ones.
            labels["nvidia.com/gpu.deploy.driver"] = "false"
            labels["nvidia.com/gpu.deploy.container-toolkit"] = "false"
        if needs_standalone_plugin(group) and not gpu_operator:
            labels["gpuplane.io/device-plugin"] = "true"
    labels.update(group.labels)
    return labels


@dataclass(frozen=True)
class GpuPlan:
    """What the cluster needs installed for its GPU groups."""

    groups: tuple[NodeGroupArgs, ...]

    @property
    def gpu_groups(self) -> list[NodeGroupArgs]:
        """Only the GPU groups."""
        return [g for g in self.groups if g.kind == "gpu"]

    @property
    def operator(self) -> bool:
        """Install the GPU Operator (some group asked for it; it then manages every non-Bottlerocket GPU node)."""
        return any(g.driver == "operator" for g in self.gpu_groups)

    @property
    def standalone_plugin(self) -> bool:
        """Install the device-plugin chart (AL2023 NVIDIA groups, and no operator to do it)."""
        return not self.operator and any(needs_standalone_plugin(g) for g in self.gpu_groups)

    @property
    def mig(self) -> bool:
        """Some group uses MIG (the operator's MIG manager is needed)."""
        return any(g.sharing.mig for g in self.gpu_groups)

    def plugin_configs(self) -> dict[str, dict[str, Any]]:
        """Named device-plugin configs: `default` (whole GPUs) plus one per managed GPU group."""
        configs: dict[str, dict[str, Any]] = {"default": {"version": "v1", "flags": {"migStrategy": "none"}}}
        for group in self.gpu_groups:
            if wellknown.LABEL_DEVICE_PLUGIN_CONFIG in node_labels(group, gpu_operator=self.operator):
                configs[group.name] = device_plugin_config(group)
        return configs


def check_cuda(cuda_major: int, groups: Sequence[NodeGroupArgs]) -> list[str]:
    """GPU groups whose driver runs `cuda_major` user space; ValueError naming them all if none does."""
    if cuda_major not in lifecycle.CUDA_MIN_DRIVER:
        raise ValueError(f"CUDA {cuda_major} is unknown; known CUDA majors: {sorted(lifecycle.CUDA_MIN_DRIVER)}")
    need = lifecycle.CUDA_MIN_DRIVER[cuda_major]
    gpu = [g for g in groups if g.kind == "gpu"]
    fits = [g.name for g in gpu if driver_major(g) >= need]
    if not fits:
        have = ", ".join(f"{g.name} (driver {driver_major(g)})" for g in gpu) or "none"
        raise ValueError(f"no GPU group's driver supports CUDA {cuda_major} (needs driver >= {need}); groups: {have}")
    return fits


def runtime_gpu_settings(group: NodeGroupArgs) -> dict[str, Any]:
    """Keyword arguments for `manifests.tf_runtime.wrap_container` for a TF container on this group.

    This is how a workload's TensorFlow learns its share: the runtime helper turns a shared GPU into
    `TF_FORCE_GPU_ALLOW_GROWTH=true` and the fraction into TF Serving's `--per_process_gpu_memory_fraction`.
    MIG slices and whole GPUs are not shared: TF may take all of the device it sees.
    """
    shared = group.sharing.mode in ("time-slicing", "mps")
    return {"gpu_shared": shared, "gpu_memory_fraction": memory_fraction(group) if shared else None}
