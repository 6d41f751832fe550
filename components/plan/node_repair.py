"""The `nodeRepairConfig` of each managed node group: the defaults a GPU group and a CPU group get.

Why these defaults (EKS user guide "node-health"; NVIDIA's XID error catalog):
- Replace, not Reboot, on the GPU failures below: a GPU that fell off the bus (XID 79), an uncorrectable
  memory error (XID 48 and `NvidiaDoubleBitError`, XID 95 uncontained ECC), an NVLink fault (XID 74 and
  `NvidiaNVLinkError`), fewer GPUs than the instance has (`NvidiaDeviceCountMismatch`) or a failed DCGM
  diagnostic stay with the hardware; a new instance usually lands on another host. Ten minutes is EKS's own
  wait for `AcceleratedHardwareReady`, written out so the plan shows it.
- One node at a time, and a stop once more than a fifth of the group (at least one node) is unhealthy: many
  sick nodes at once point at the AMI, a driver or the network, which replacing nodes does not fix, and a bad
  rollout must not recycle a whole GPU group (each new GPU node costs minutes of boot and image pulls). EKS's
  built-in pause (more than 20% of a group larger than five) never applies to the small groups GPU stacks use.
- CPU groups keep EKS's per-condition defaults (Replace after 30 minutes) with the same pacing.

Values here use the pulumi_aws argument names (`aws.eks.NodeGroupNodeRepairConfigArgs`, 7.51.1); tests map
them to the API's names and validate them against botocore's `NodeRepairConfig` shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from gpuplane.manifests import scheduling

if TYPE_CHECKING:
    from gpuplane.components.config import NodeGroupArgs

GPU_CONDITION: Final = "AcceleratedHardwareReady"
# The agent's reasons on `AcceleratedHardwareReady` that a new instance cures and a reboot rarely does.
GPU_REPLACE_REASONS: Final = (
    "NvidiaXID79Error",
    "NvidiaXID48Error",
    "NvidiaXID95Error",
    "NvidiaXID74Error",
    "NvidiaDoubleBitError",
    "NvidiaNVLinkError",
    "NvidiaDeviceCountMismatch",
    "DCGMDiagnosticFailure",
)
GPU_REPAIR_WAIT_MINUTES: Final = 10
UNHEALTHY_SHARE_PERCENT: Final = 20


def default_unhealthy_threshold(max_size: int) -> int:
    """A fifth of the group's largest size, at least one node: above it, repair stops."""
    return max(1, max_size * UNHEALTHY_SHARE_PERCENT // 100)


def gpu_overrides() -> list[dict[str, Any]]:
    """Replace after ten minutes on each GPU failure in `GPU_REPLACE_REASONS`."""
    return [
        {
            "node_monitoring_condition": GPU_CONDITION,
            "node_unhealthy_reason": reason,
            "min_repair_wait_time_mins": GPU_REPAIR_WAIT_MINUTES,
            "repair_action": "Replace",
        }
        for reason in GPU_REPLACE_REASONS
    ]


def repair_config(group: NodeGroupArgs) -> dict[str, Any]:
    """The group's `node_repair_config` (pulumi_aws names); only `enabled: false` when repair is off."""
    repair = group.repair
    if not repair.enabled:
        return {"enabled": False}
    config: dict[str, Any] = {"enabled": True}
    if repair.max_unhealthy_node_threshold_percentage is not None:
        config["max_unhealthy_node_threshold_percentage"] = repair.max_unhealthy_node_threshold_percentage
    else:
        config["max_unhealthy_node_threshold_count"] = (
            repair.max_unhealthy_node_threshold_count or default_unhealthy_threshold(group.max_size)
        )
    if repair.max_parallel_nodes_repaired_percentage is not None:
        config["max_parallel_nodes_repaired_percentage"] = repair.max_parallel_nodes_repaired_percentage
    else:
        config["max_parallel_nodes_repaired_count"] = repair.max_parallel_nodes_repaired_count or 1
    if repair.node_repair_config_overrides is not None:
        overrides = [o.model_dump() for o in repair.node_repair_config_overrides]
    else:
        overrides = gpu_overrides() if group.kind == "gpu" else []
    if overrides:
        config["node_repair_config_overrides"] = overrides
    return config


def needs_monitoring_agent(groups: list[NodeGroupArgs]) -> bool:
    """Whether any group repairs nodes: the conditions it acts on come from the node monitoring agent."""
    return any(g.repair.enabled for g in groups)


def dcgm_server_tolerations(startup_taints: Sequence[str] = ()) -> list[dict[str, str]]:
    """Tolerations of the agent's `dcgm-server` DaemonSet (its chart gives it none): our GPU taint, startup taints."""
    return [
        *scheduling.gpu_tolerations(),
        *({"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints),
    ]
