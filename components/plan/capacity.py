"""Reserved capacity and EFA of a node group, as the launch template and the queue need them: pure decisions.

What is decided here (issue 31), from the validated `NodeGroupArgs` only:
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
from gpuplane.manifests import versions

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
    return {versions.LABEL_EFA: "true"} if group.efa else {}


def efa_resources(group: NodeGroupArgs) -> dict[str, int]:
    """The EFA extended resource a node advertises, for the autoscaler's node template (scale from zero)."""
    return {versions.EFA_RESOURCE: group.efa_interfaces} if group.efa else {}


def role_efa(groups: Sequence[NodeGroupArgs], gpus: int) -> int:
    """EFA interfaces one pod of a GPU role requests: its share of the node's interfaces, or 0.

    A pod gets the node's interfaces in proportion to its GPUs (a p5.48xlarge's 32 interfaces over 8 GPUs:
    4 per GPU; a pod with all 8 gets all 32), so pods that share a node also share its EFA devices. It
    asks only when every group it may land on has EFA, whole GPUs and the same share (one pod spec serves
    them all); a pod smaller than one interface's share (1 GPU of a p4d: 4 interfaces over 8 GPUs) asks for
    none, and its NCCL traffic goes over the node's IP interface.
    """
    if gpus == 0 or not groups:
        return 0
    shares = set()
    for group in groups:
        if not group.efa or group.sharing.mode != "none":
            return 0
        shares.add(group.efa_interfaces * gpus // group.instance.gpu_count)
    return shares.pop() if len(shares) == 1 else 0


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
