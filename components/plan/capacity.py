"""Reserved capacity and EFA of a node group, as the launch template and the queue need them: pure decisions.

What is decided here, from the validated `NodeGroupArgs` only:
- the launch template's `instanceMarketOptions` and `capacityReservationSpecification` (a Capacity Block:
  market type `capacity-block` and the block as target; an ODCR: a preference or a target);
- the AZs a reserved group may use (its reservation's AZ only) as positions in `network.availabilityZones`;
- the network interfaces of an EFA node (facts/efa.py: one per network card as each card's interface types
  allow: the primary on card 0, `efa` there where card 0 has EFA, `efa-only` on the others) and the
  label and extended resource its nodes advertise (for the EFA device plugin and scale from zero);
- the order the queue tries the groups in: reserved, then on-demand, then spot (`capacity_rank`);
- what render says about a reservation's end.

Field names are pulumi_aws 7.x's (`aws.ec2.LaunchTemplate` args, snake_case); the values are botocore's
enums (ec2 `MarketType`, `CapacityReservationPreference`, `NetworkInterfaceType`), checked by
tests/test_aws_models.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from gpuplane.components.facts import efa
from gpuplane.manifests import wellknown

if TYPE_CHECKING:
    from gpuplane.components.config import NetworkArgs, NodeGroupArgs

# ec2 `MarketType` for a Capacity Block (EKS user guide, "Create a managed node group with Capacity Blocks").
CAPACITY_BLOCK_MARKET: Final = "capacity-block"
# EKS scales a Capacity Block group to 0 forty minutes before the block ends; EC2 starts terminating its
# instances thirty minutes before (EKS user guide, "Capacity Blocks for ML"; EC2 user guide, "Capacity Blocks").
EKS_SCALE_DOWN_BEFORE_END_MINUTES: Final = 40
EC2_TERMINATION_BEFORE_END_MINUTES: Final = 30

RANK_RESERVED: Final = 0
RANK_ON_DEMAND: Final = 1
RANK_SPOT: Final = 2


def capacity_kind(group: NodeGroupArgs) -> str:
    """`reserved`, `on-demand` or `spot`: the kind of capacity the group's nodes run on."""
    if group.reserved:
        return "reserved"
    return "spot" if group.capacity_type == "SPOT" else "on-demand"


def capacity_rank(group: NodeGroupArgs) -> int:
    """The queue's order: reserved GPUs are paid for whether used or not, spot ones can vanish."""
    return {"reserved": RANK_RESERVED, "on-demand": RANK_ON_DEMAND, "spot": RANK_SPOT}[capacity_kind(group)]


def launch_template_capacity(group: NodeGroupArgs) -> dict[str, Any]:
    """The launch template's reservation arguments (`aws.ec2.LaunchTemplate(**...)`); empty without one.

    A Capacity Block group names its one instance type here, in the launch template, and none on the node
    group (`node_group_instance_types`): EKS rejects a Capacity Block node group created otherwise (EKS user
    guide, "Create a managed node group with Capacity Blocks"; eksctl pkg/cfn/builder/managed_nodegroup.go and
    its testdata/launch_template/capacity_block.json, terraform-aws-eks modules/eks-managed-node-group/main.tf,
    read 2026-11-28).
    """
    reservation = group.capacity_reservation
    args: dict[str, Any] = {}
    if group.capacity_type == "CAPACITY_BLOCK":
        args["instance_type"] = group.instance_types[0]
        args["instance_market_options"] = {"market_type": CAPACITY_BLOCK_MARKET}
    if reservation is None:
        return args
    if reservation.id is not None:
        args["capacity_reservation_specification"] = {
            "capacity_reservation_target": {"capacity_reservation_id": reservation.id}
        }
    elif reservation.resource_group_arn is not None:
        args["capacity_reservation_specification"] = {
            "capacity_reservation_target": {"capacity_reservation_resource_group_arn": reservation.resource_group_arn}
        }
    elif reservation.preference is not None:
        args["capacity_reservation_specification"] = {"capacity_reservation_preference": reservation.preference}
    return args


def node_group_instance_types(group: NodeGroupArgs) -> list[str] | None:
    """The node group's `instanceTypes`: None for a Capacity Block group (its launch template names the type)."""
    return None if group.capacity_type == "CAPACITY_BLOCK" else list(group.instance_types)


def subnet_positions(group: NodeGroupArgs, network: NetworkArgs) -> list[int] | None:
    """Positions (in the network's AZ order) of the private subnets the group may use; None for all of them.

    A reservation serves launches in its own AZ only. cross_checks refuses a reservation AZ that is not
    one of the listed `network.availabilityZones`, so the position exists. An EFA group whose AZ no reservation
    names uses the network's first private subnet only: EFA's OS-bypass traffic does not leave its subnet (EC2
    user guide, EFA limitations), and a cluster placement group holds instances of one AZ (botocore's autoscaling
    model, CreateAutoScalingGroup `PlacementGroup`: "You cannot specify multiple Availability Zones and a cluster
    placement group"), so a group spread over the AZs would fail launches and split a run's nodes. eksctl refuses
    such groups ("efaEnabled nodegroups must have only one subnet or one availability zone", pkg/apis/eksctl.io/
    v1alpha5 validation, read 2026-11-26); gpuplane picks the first AZ instead.
    """
    reservation = group.capacity_reservation
    if reservation is None or reservation.availability_zone is None:
        return [0] if group.efa else None
    zones = list(network.availability_zones or [])
    return [zones.index(reservation.availability_zone)]


def efa_network_interfaces(group: NodeGroupArgs, security_group_ids: Sequence[Any]) -> list[dict[str, Any]]:
    """The launch template's `network_interfaces` of an EFA group; empty otherwise.

    Every interface carries the same security groups (`security_group_ids`: the cluster security group,
    which EFS on 2049 and the control plane rely on, and the EFA group's self-referencing one): with
    interfaces in the launch template, EKS adds no security group of its own. Deleted with the instance.
    No `associate_public_ip_address` at all, not even "false": EC2 refuses the parameter on a launch with
    several network interfaces ("The associatePublicIPAddress parameter cannot be specified when launching with
    multiple network interfaces", InvalidParameterCombination: read 2026-11-26 in terraform-provider-aws's
    acceptance test of a fleet with several interfaces and in a field report of multi-card p6 launches, which
    both drop the field; eksctl leaves it out of EFA groups too). The subnets are private, so no public
    address is given anyway.
    """
    if not group.efa:
        return []
    return [
        {
            "network_card_index": interface.network_card_index,
            "device_index": interface.device_index,
            "interface_type": interface.interface_type,
            "security_groups": list(security_group_ids),
            "delete_on_termination": "true",
        }
        for interface in efa.layout_for(group.instance_types[0])
    ]


def efa_labels(group: NodeGroupArgs) -> dict[str, str]:
    """The EFA label the device plugin's DaemonSet selects on (and the autoscaler's node template carries)."""
    return {wellknown.LABEL_EFA: "true"} if group.efa else {}


def efa_resources(group: NodeGroupArgs) -> dict[str, int]:
    """The EFA extended resource a node advertises, for the autoscaler's node template (scale from zero)."""
    return {wellknown.EFA_RESOURCE: group.efa_interfaces} if group.efa else {}


def efa_share(group: NodeGroupArgs, gpus: int) -> int:
    """The whole EFA interfaces `gpus` GPUs of one node of `group` are entitled to (0 without EFA).

    A pod gets the node's interfaces in proportion to its GPUs (a p5.48xlarge's 32 interfaces over 8 GPUs: 4
    per GPU; a pod with all 8 gets all 32), so pods that share a node also share its EFA devices.
    """
    if not group.efa or not group.instance.gpu_count:
        return 0
    return group.efa_interfaces * gpus // group.instance.gpu_count


def role_efa_problem(groups: Sequence[NodeGroupArgs], gpus: int) -> str | None:
    """Why a GPU pod that may land on `groups` cannot be given one EFA request that serves them all; None if it can.

    One pod spec serves every group the pod may land on, and its EFA request decides where Kueue admits it
    (a flavor without EFA has no EFA quota) and whether NCCL gets EFA at all. So a pod that may land on EFA
    groups must be able to ask for at least one interface on each of them:
    - EFA and non-EFA groups together: asking would drop the non-EFA groups without a word, not asking would
      leave EFA unused; the user names which (`nodeGroups`);
    - EFA groups that share GPUs: a shared GPU has no share of the node's interfaces;
    - a pod whose GPUs earn less than one interface on some EFA group (1 GPU of a p4d: 4 interfaces over 8 GPUs).
    Pods without GPUs, and pods whose groups have no EFA at all, have nothing to ask.
    """
    efa_groups = [g for g in groups if g.efa]
    if not gpus or not efa_groups:
        return None

    def shares(chosen: Sequence[NodeGroupArgs]) -> str:
        return ", ".join(f"{g.name} ({g.efa_interfaces} over {g.instance.gpu_count} GPUs)" for g in chosen)

    plain = [g for g in groups if not g.efa]
    if plain:
        return (
            f"may land on EFA groups {[g.name for g in efa_groups]} and on groups without EFA "
            f"{[g.name for g in plain]}; one pod spec cannot ask for EFA devices on some of them only (asking drops "
            "the groups without EFA, not asking leaves EFA unused and NCCL on TCP). Name the groups in nodeGroups: "
            f"{[g.name for g in efa_groups]} for EFA, or {[g.name for g in plain]} without it"
        )
    shared = [g for g in efa_groups if g.sharing.mode != "none"]
    if shared:
        return (
            f"may land on EFA groups that share their GPUs {[f'{g.name} ({g.sharing.mode})' for g in shared]}: a "
            "shared GPU has no share of the node's EFA interfaces. Name EFA groups with whole GPUs in nodeGroups, "
            "or set efa: false on the shared group"
        )
    short = [g for g in efa_groups if efa_share(g, gpus) == 0]
    if short:
        needed = max(-(-g.instance.gpu_count // g.efa_interfaces) for g in short)
        whole = [g.name for g in efa_groups if g not in short]
        return (
            f"{gpus} GPU(s) per pod earn less than one EFA interface on {shares(short)}: ask for at least {needed} "
            "GPUs per pod (resources.gpus)"
            + (f", or name groups where they earn one in nodeGroups: {whole}" if whole else "")
        )
    return None


def role_efa(groups: Sequence[NodeGroupArgs], gpus: int) -> int:
    """EFA interfaces one pod of a GPU role requests: the smallest share of the EFA groups it may land on.

    With groups of different shares (p5.48xlarge 32 interfaces over 8 GPUs, p5en.48xlarge 16, p4d.24xlarge 4),
    the pod asks for what the poorest of them gives its GPUs, so that any of them can take it; on a richer
    group it uses fewer interfaces than the node has. 0 when no group it may land on has EFA (or without GPUs).
    ValueError (`role_efa_problem`) where no request serves every group; the stack's validator refuses it
    first, under the role's `nodeGroups`.
    """
    problem = role_efa_problem(groups, gpus)
    if problem is not None:
        raise ValueError(problem)
    efa_groups = [g for g in groups if g.efa]
    if not gpus or not efa_groups:
        return 0
    return min(efa_share(g, gpus) for g in efa_groups)


def reservation_notes(group: NodeGroupArgs) -> list[str]:
    """What render states about a group's reservation: what it is, and what happens at its end."""
    reservation = group.capacity_reservation
    if reservation is None:
        return []
    where = f" in {reservation.availability_zone}" if reservation.availability_zone else ""
    count = f", {reservation.instance_count} instance(s)" if reservation.instance_count else ""
    if group.capacity_type == "CAPACITY_BLOCK":
        notes = [
            f"group '{group.name}': Capacity Block {reservation.id}{where}{count} of {group.instance_types[0]}; "
            "nodes launch only while the block is active (desired size 0 until then, the autoscaler scales up)"
        ]
        if reservation.end_time:
            notes.append(
                f"group '{group.name}': the block ends {reservation.end_time}; EKS scales the group to 0 "
                f"{EKS_SCALE_DOWN_BEFORE_END_MINUTES} min before and EC2 terminates its instances from "
                f"{EC2_TERMINATION_BEFORE_END_MINUTES} min before: runs on it finish by then or are stopped and "
                'requeued; remove the group when the block ends (docs/reserved-gpus.md, "The block\'s end")'
            )
        else:
            notes.append(
                f"group '{group.name}': no capacityReservation.endTime given; `gpuplane preflight` reads the "
                "block's end"
            )
        return notes
    if reservation.id is not None:
        target = f"ODCR {reservation.id}{where}{count}"
    elif reservation.resource_group_arn is not None:
        target = f"ODCR group {reservation.resource_group_arn}"
    else:
        return [f"group '{group.name}': ODCR preference '{reservation.preference}'"]
    notes = [f"group '{group.name}': on-demand nodes target {target}"]
    if reservation.end_time:
        notes.append(
            f"group '{group.name}': the reservation ends {reservation.end_time}; launches that target it fail "
            "after that: renew it or remove the target"
        )
    return notes
