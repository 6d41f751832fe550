"""Node auto repair of a managed node group (`nodeGroups[].repair`): when EKS replaces or reboots a sick node.

Why it is configured per group: a GPU that falls off the bus (XID 79) or reports a double-bit ECC error leaves
a node that still looks Ready, and pods fail on it until someone notices. EKS managed node groups repair such
nodes on the conditions the `eks-node-monitoring-agent` add-on reports (`AcceleratedHardwareReady`...), but
only when the group's `nodeRepairConfig` says so, and a GPU group and a CPU group want different pacing.

Keys are the EKS API's own (`nodeRepairConfig` of CreateNodegroup, botocore `eks` model 1.44: shape
`NodeRepairConfig`), so a user who knows eksctl or terraform-aws-eks recognises them; values are checked
against that model's limits and enum here, because Pulumi's mocks accept anything and AWS would refuse late.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from pydantic import Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from gpuplane.components.config.base import FieldError, _Args

# botocore `eks` shape `RepairAction` (1.44.5). eksctl's example file uses `Terminate`/`Restart`, which the API
# refuses; only these three exist.
RepairAction = Literal["Replace", "Reboot", "NoAction"]
REPAIR_ACTIONS: Final = ("Replace", "Reboot", "NoAction")

# The NodeConditions the node monitoring agent sets, one per category (aws/eks-node-monitoring-agent README,
# v1.7.0, 2026-08-04: "KernelReady, NetworkingReady, StorageReady, AcceleratedHardwareReady" and the container
# runtime category's `ContainerRuntimeReady`; EKS user guide "node-health").
NodeMonitoringCondition = Literal[
    "AcceleratedHardwareReady", "ContainerRuntimeReady", "KernelReady", "NetworkingReady", "StorageReady"
]

# Reasons are CamelCase words from the agent (`NvidiaXID79Error`, `DCGMDiagnosticFailure`, `DCGMHealthCode3`).
_REASON_RE: Final = re.compile(r"^[A-Z][A-Za-z0-9]{1,127}$")


class RepairOverrideArgs(_Args):
    """What EKS does, and after how long, for one condition and reason the node monitoring agent reports.

    With overrides, the API needs all four fields of each (botocore: "If you use this, you must specify all the
    values"), so none has a default.
    """

    node_monitoring_condition: NodeMonitoringCondition = Field(
        description="The agent's NodeCondition, e.g. `AcceleratedHardwareReady`. Required."
    )
    node_unhealthy_reason: str = Field(
        description="The agent's reason on that condition, e.g. `NvidiaXID79Error`, `NvidiaDoubleBitError`. Required."
    )
    min_repair_wait_time_mins: int = Field(
        ge=1, le=10080, description="Minutes the condition must last before EKS acts (1 to 10080, a week). Required."
    )
    repair_action: RepairAction = Field(description="`Replace`, `Reboot` or `NoAction`. Required.")

    @field_validator("node_unhealthy_reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        if not _REASON_RE.fullmatch(value):
            raise ValueError(
                f"'{value}' is not a node monitoring agent reason (a CamelCase word such as NvidiaXID79Error, "
                "NvidiaDoubleBitError or DCGMDiagnosticFailure)"
            )
        return value


class NodeRepairArgs(_Args):
    """EKS node auto repair for one managed node group. Default: on, paced so a bad rollout cannot empty a group.

    A threshold and a pace are each a count or a percentage, never both (the API refuses both). When neither is
    given, gpuplane sets counts from the group's `maxSize` (see `components.plan.node_repair`): repair stops once
    more than a fifth of the group (at least one node) is unhealthy at once, since that many sick nodes point at
    a cause a new node does not fix (a bad AMI, a driver, the network), and nodes are repaired one at a time.
    """

    enabled: bool = Field(default=True, description="Let EKS repair unhealthy nodes of this group. Default true.")
    max_unhealthy_node_threshold_count: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Repair stops while more nodes than this are unhealthy. Default: a fifth of `maxSize`, at "
        "least 1 (unless the percentage is set).",
    )
    max_unhealthy_node_threshold_percentage: int | None = Field(
        default=None, ge=1, le=100, description="The same threshold as a share of the group (1-100). Default unset."
    )
    max_parallel_nodes_repaired_count: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Nodes repaired at once. Default 1 (unless the percentage is set).",
    )
    max_parallel_nodes_repaired_percentage: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="The same pace as a share of the unhealthy nodes (1-100). Default unset.",
    )
    node_repair_config_overrides: list[RepairOverrideArgs] | None = Field(
        default=None,
        description="Per condition and reason: action and wait. Default: GPU groups `Replace` after 10 minutes on "
        "the GPU failures a reboot does not cure (XID 79, 48, 74, 95, double-bit ECC, NVLink, missing GPUs, DCGM "
        "diagnostic failures); CPU groups none (EKS's defaults). `[]` keeps EKS's defaults on a GPU group too.",
    )

    @model_validator(mode="after")
    def _one_of_each(self) -> NodeRepairArgs:
        for what in ("max_unhealthy_node_threshold", "max_parallel_nodes_repaired"):
            count, percentage = getattr(self, f"{what}_count"), getattr(self, f"{what}_percentage")
            if count is not None and percentage is not None:
                camel = "".join(p.capitalize() if i else p for i, p in enumerate(what.split("_")))
                raise FieldError(
                    f"{camel}Percentage",
                    f"{percentage} is set together with {camel}Count {count}; the EKS API takes one of the two",
                )
        seen: set[tuple[str, str]] = set()
        for index, override in enumerate(self.node_repair_config_overrides or []):
            key = (override.node_monitoring_condition, override.node_unhealthy_reason)
            if key in seen:
                raise FieldError(
                    f"nodeRepairConfigOverrides[{index}]",
                    f"{key[0]}/{key[1]} is listed twice; one override per condition and reason",
                )
            seen.add(key)
        others = sorted(to_camel(name) for name in self.model_fields_set - {"enabled"})
        if not self.enabled and others:
            raise FieldError("enabled", f"is false but {others} are set; remove them or enable repair")
        return self
