"""Checks of reserved capacity and EFA: reserved groups' nodes on their reservation, EFA nodes with their devices.

What they can see from the API alone: the labels EKS puts on a managed node group's nodes and what each
node advertises as allocatable. That a node really runs inside the named reservation (and not in open
on-demand capacity of the same type and AZ) only EC2 shows (`aws ec2 describe-instances --query
'Reservations[].Instances[].CapacityReservationId'`); `gpuplane preflight` reads the reservation itself. The
check here proves what the cluster shows: the zone and the capacity type, which a wrong subnet or a group
created without the reservation's market options would get wrong.

Facts: EKS labels every node of a managed node group `eks.amazonaws.com/capacityType` with the group's
capacity type (`ON_DEMAND`, `SPOT`, `CAPACITY_BLOCK`; EKS user guide "Managed node groups", and the EKS
best-practices guide's P6e-GB200 page: nodes of a block are "labeled ... eks.amazonaws.com/capacityType=
CAPACITY_BLOCK"); the kubelet labels `topology.kubernetes.io/zone` from the instance's AZ; the EFA device
plugin (aws/eks-charts `aws-efa-k8s-device-plugin`) advertises one `vpc.amazonaws.com/efa` per EFA device.
"""

from __future__ import annotations

from typing import Any, Final

from gpuplane.infra.verify.checks_control import is_ready, nodes_by_group
from gpuplane.infra.verify.expect import Expectations, GroupExpect
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register, skipped
from gpuplane.manifests import verify as probes
from gpuplane.manifests import versions, wellknown

CAPACITY_TYPE_LABEL: Final = "eks.amazonaws.com/capacityType"


def _ready_nodes(ctx: Context, groups: list[GroupExpect]) -> dict[str, list[dict[str, Any]]]:
    found = nodes_by_group(ctx.cluster.list_nodes())
    return {g.name: [n for n in found.get(g.name, []) if is_ready(n)] for g in groups}


def _label(node: dict[str, Any], key: str) -> str | None:
    value = (node["metadata"].get("labels") or {}).get(key)
    return None if value is None else str(value)


def check_reserved_capacity(ctx: Context) -> Outcome:
    """Every Ready node of a reserved group runs in the reservation's AZ with the group's capacity type."""
    groups = [g for g in ctx.expect.groups if g.reserved]
    by_group = _ready_nodes(ctx, groups)
    seen = sum(len(nodes) for nodes in by_group.values())
    if not seen:
        return skipped(
            f"no Ready node of reserved group(s) {[g.name for g in groups]}: nothing to check (a Capacity Block "
            "group stays at 0 nodes until the block is active and a pod asks for its GPUs)",
            groups=[g.name for g in groups],
        )
    wrong: list[str] = []
    for group in groups:
        for node in by_group[group.name]:
            name = node["metadata"]["name"]
            zone = _label(node, probes.ZONE_LABEL)
            kind = _label(node, CAPACITY_TYPE_LABEL)
            if kind != group.capacity_type:
                wrong.append(f"{name} ({group.name}): {CAPACITY_TYPE_LABEL}={kind}, plan {group.capacity_type}")
            if group.reservation_zone is not None and zone != group.reservation_zone:
                wrong.append(
                    f"{name} ({group.name}): zone {zone}, reservation {group.reservation_id} is in "
                    f"{group.reservation_zone}"
                )
    if wrong:
        raise CheckFailed(
            f"reserved node(s) off their reservation: {'; '.join(wrong)}",
            "the group's subnets or launch template differ from the plan (changed outside Pulumi, or an older "
            "stack without capacityReservation), so the nodes were not launched into the reservation",
            "`pulumi preview` to see the drift, then `pulumi up`; `aws eks describe-nodegroup` (capacityType, "
            "subnets) and `aws ec2 describe-instances --filters Name=tag:eks:nodegroup-name,Values=<group> "
            "--query 'Reservations[].Instances[].[Placement.AvailabilityZone,CapacityReservationId]'`",
            details={"problems": wrong},
        )
    where = ", ".join(
        f"{g.name}: {len(by_group[g.name])} node(s) {g.capacity_type}"
        + (f" in {g.reservation_zone}" if g.reservation_zone else "")
        for g in groups
        if by_group[g.name]
    )
    return passed(where, nodes=seen)


def _efa_allocatable(node: dict[str, Any]) -> int | None:
    value = ((node.get("status") or {}).get("allocatable") or {}).get(wellknown.EFA_RESOURCE)
    try:
        return None if value is None else int(str(value))
    except ValueError:
        return None


def check_efa(ctx: Context) -> Outcome:
    """Every Ready node of an EFA group advertises the `vpc.amazonaws.com/efa` devices its launch template gives."""
    groups = [g for g in ctx.expect.groups if g.efa_interfaces]
    by_group = _ready_nodes(ctx, groups)
    seen = sum(len(nodes) for nodes in by_group.values())
    if not seen:
        return skipped(
            f"no Ready node of EFA group(s) {[g.name for g in groups]}: nothing to check (GPU groups scale from 0 "
            "when a pod asks for their GPUs)",
            groups=[g.name for g in groups],
        )
    missing: list[str] = []
    short: list[str] = []
    for group in groups:
        for node in by_group[group.name]:
            name = node["metadata"]["name"]
            have = _efa_allocatable(node)
            if have is None:
                missing.append(f"{name} ({group.name})")
            elif have != group.efa_interfaces:
                short.append(f"{name} ({group.name}): {have}, plan {group.efa_interfaces}")
    if missing:
        raise CheckFailed(
            f"no {wellknown.EFA_RESOURCE} allocatable on EFA node(s) {missing}",
            "the EFA device plugin does not run on these nodes (its DaemonSet selects "
            f"{wellknown.LABEL_EFA}=true), or the EFA driver is not loaded",
            f"`kubectl -n {wellknown.NVIDIA_NAMESPACE} get pods -o wide | grep {versions.EFA_DEVICE_PLUGIN_CHART}` and "
            "its logs on that node; in a pod on the node: `fi_info -p efa` lists the devices",
            details={"missing": missing},
        )
    if short:
        raise CheckFailed(
            f"{wellknown.EFA_RESOURCE} allocatable differs from the plan: {'; '.join(short)}",
            "the instances got other interfaces than the launch template's (the template was changed outside "
            "Pulumi, or the group runs another instance type), or some EFA devices failed to come up",
            "`aws ec2 describe-instances --query 'Reservations[].Instances[].NetworkInterfaces[].[Attachment."
            "NetworkCardIndex,InterfaceType]'` against docs/reserved-gpus.md's layout; `pulumi up` restores the "
            "template, then replace the nodes",
            details={"short": short},
        )
    where = ", ".join(
        f"{g.name}: {len(by_group[g.name])} node(s) x {g.efa_interfaces}" for g in groups if by_group[g.name]
    )
    return passed(f"{wellknown.EFA_RESOURCE} as planned on {where}", nodes=seen)


@register("capacity", order=25)
def capacity_checks(expect: Expectations) -> list[Check]:
    """Reserved-capacity placement where a group is reserved; EFA devices where a group has EFA."""
    made = []
    if any(g.reserved for g in expect.groups):
        made.append(
            Check(
                "reserved-capacity",
                "Reserved groups' nodes on their reservation",
                check_reserved_capacity,
                needs=("nodes",),
                deadline_s=60,
                proves="every Ready node of a Capacity Block or ODCR-target group carries the group's capacity "
                "type and runs in the reservation's AZ",
            )
        )
    if any(g.efa_interfaces for g in expect.groups):
        made.append(
            Check(
                "efa",
                "EFA devices on EFA nodes",
                check_efa,
                needs=("nodes",),
                deadline_s=60,
                proves=f"every Ready node of an EFA group advertises the {wellknown.EFA_RESOURCE} its launch "
                "template gives",
            )
        )
    return made
