"""Reserved GPU capacity (Capacity Blocks, ODCRs) and EFA as node-group settings.

Plans for a p5 Capacity Block group with EFA and a p4d ODCR group: the values the launch template, the
node group, the security group rules, the EFA device plugin and the queue get, each checked against
botocore's EC2/EKS models where AWS validates them; every refusal with its key, before anything is made.
"""

from __future__ import annotations

import inspect
from typing import Any

import botocore.session
import pulumi_aws as aws
import pytest

from gpuplane.components.config import CapacityType, NetworkArgs, NodeGroupArgs, ReservationPreference
from gpuplane.components.plan import capacity, node_template
from gpuplane.infra import config
from gpuplane.infra.mockrun import RecordedResource, Recording
from gpuplane.manifests import versions, wellknown
from tests.conftest import DEV_CLUSTER

SESSION = botocore.session.get_session()
EKS = SESSION.get_service_model("eks")
EC2 = SESSION.get_service_model("ec2")
LAUNCH_TEMPLATE_DATA = EC2.operation_model("CreateLaunchTemplate").input_shape.members["LaunchTemplateData"]

AZS = ["us-west-2a", "us-west-2b", "us-west-2c"]
SYSTEM = {"name": "system", "instanceTypes": ["m6i.large"], "minSize": 1, "maxSize": 2}
BLOCK = {
    "name": "p5-block",
    "kind": "gpu",
    "instanceTypes": ["p5.48xlarge"],
    "capacityType": "CAPACITY_BLOCK",
    "minSize": 0,
    "maxSize": 2,
    "efa": True,
    "capacityReservation": {
        "id": "cr-02168da1478b509e0",
        "availabilityZone": "us-west-2b",
        "instanceCount": 2,
        "endTime": "2026-12-01T11:30:00Z",
    },
}
ODCR = {
    "name": "p4d-odcr",
    "kind": "gpu",
    "instanceTypes": ["p4d.24xlarge"],
    "minSize": 0,
    "maxSize": 4,
    "efa": True,
    "capacityReservation": {"id": "cr-0123456789abcdef0", "availabilityZone": "us-west-2c", "instanceCount": 4},
}
SPOT = {"name": "g6-spot", "kind": "gpu", "instanceTypes": ["g6.xlarge"], "capacityType": "SPOT", "minSize": 0}
TRAINING = {
    "name": "mnist",
    "strategy": "multiWorkerMirrored",
    "command": ["python", "train.py"],
    "worker": {"replicas": 2, "resources": {"limits": {"cpu": "4", "memory": "16Gi"}, "gpus": 2}},
}


def enum(model: Any, shape: str) -> set[str]:
    return set(model.shape_for(shape).enum)


def stack(*extra: dict[str, Any], azs: list[str] | None = AZS, **more: Any) -> dict[str, Any]:
    overrides: dict[str, Any] = {"cluster": DEV_CLUSTER, "nodeGroups": [SYSTEM, *extra], **more}
    if azs is not None:
        overrides["network"] = {"availabilityZones": azs}
    return overrides


def problems(overrides: dict[str, Any]) -> list[str]:
    raw: dict[str, Any] = {f"gpuplane:{k}": v for k, v in overrides.items()}
    raw["aws:region"] = "us-west-2"
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    return info.value.problems


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, **changes}


def reservation(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, "capacityReservation": {**base["capacityReservation"], **changes}}


# --- values against botocore and pulumi_aws ------------------------------------------------------------------


def test_capacity_values_exist_in_the_aws_models():
    assert "CAPACITY_BLOCK" in enum(EKS, "CapacityTypes")
    assert set(CapacityType.__args__) == enum(EKS, "CapacityTypes")  # type: ignore[attr-defined]
    market = LAUNCH_TEMPLATE_DATA.members["InstanceMarketOptions"].members["MarketType"]
    assert capacity.CAPACITY_BLOCK_MARKET in market.enum
    preference = LAUNCH_TEMPLATE_DATA.members["CapacityReservationSpecification"].members[
        "CapacityReservationPreference"
    ]
    assert set(ReservationPreference.__args__) == set(preference.enum)  # type: ignore[attr-defined]


def test_pulumi_argument_names_are_the_sdks():
    def params(cls: type) -> set[str]:
        return set(inspect.signature(cls).parameters)

    group = NodeGroupArgs.model_validate(with_(BLOCK))
    lt = capacity.launch_template_capacity(group)
    assert set(lt) <= set(inspect.signature(aws.ec2.LaunchTemplate._internal_init).parameters)
    assert set(lt["instance_market_options"]) <= params(aws.ec2.LaunchTemplateInstanceMarketOptionsArgs)
    spec = lt["capacity_reservation_specification"]
    assert set(spec) <= params(aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs)
    assert set(spec["capacity_reservation_target"]) <= params(
        aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs
    )
    for interface in capacity.efa_network_interfaces(group, ["sg-1"]):
        assert set(interface) <= params(aws.ec2.LaunchTemplateNetworkInterfaceArgs)


def test_p6_b300_block_gets_the_primary_ena_on_card_zero_and_16_efa():
    """p6-b300.48xlarge (card 0 ENA only, EFA on cards 1-16) is accepted with EFA; the template follows the cards."""
    group = NodeGroupArgs.model_validate(with_(BLOCK, name="b300", instanceTypes=["p6-b300.48xlarge"]))
    interfaces = capacity.efa_network_interfaces(group, ["sg-cluster", "sg-efa"])
    assert [(i["network_card_index"], i["device_index"], i["interface_type"]) for i in interfaces] == [
        (0, 0, "interface"),
        *[(card, 1, "efa-only") for card in range(1, 17)],
    ]
    assert all(i["security_groups"] == ["sg-cluster", "sg-efa"] for i in interfaces)
    assert group.efa_interfaces == 16
    assert capacity.efa_resources(group) == {wellknown.EFA_RESOURCE: 16}
    assert capacity.role_efa([group], 8) == 16 and capacity.role_efa([group], 1) == 2


def test_odcr_preference_and_group_target():
    pref = NodeGroupArgs.model_validate(
        {
            "name": "odcr",
            "instanceTypes": ["m6i.large"],
            "capacityReservation": {"preference": "capacity-reservations-only"},
        }
    )
    assert capacity.launch_template_capacity(pref) == {
        "capacity_reservation_specification": {"capacity_reservation_preference": "capacity-reservations-only"}
    }
    assert not pref.reserved
    assert capacity.capacity_kind(pref) == "on-demand"
    arn = "arn:aws:resource-groups:us-west-2:111122223333:group/my-odcrs"
    target = NodeGroupArgs.model_validate(
        {"name": "odcr", "instanceTypes": ["m6i.large"], "capacityReservation": {"resourceGroupArn": arn}}
    )
    assert capacity.launch_template_capacity(target) == {
        "capacity_reservation_specification": {
            "capacity_reservation_target": {"capacity_reservation_resource_group_arn": arn}
        }
    }
    assert target.reserved
    assert capacity.subnet_positions(target, NetworkArgs()) is None


# --- the rendered stack -----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def reserved_run(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    from gpuplane.infra import render  # noqa: PLC0415
    from tests.conftest import once_per_session, stack_config  # noqa: PLC0415

    overrides = stack(BLOCK, ODCR, SPOT, training=[TRAINING])
    overrides.pop("cluster")
    config_ = stack_config({"cluster": DEV_CLUSTER, **overrides})
    return once_per_session(tmp_path_factory, "reserved-run", lambda: render.run_stack(config_))


def _group(rec: Recording, name: str) -> RecordedResource:
    return next(
        r for r in rec.by_type("aws:eks/nodeGroup:NodeGroup") if r.inputs["labels"][wellknown.LABEL_NODE_GROUP] == name
    )


def _template(rec: Recording, name: str) -> dict[str, Any]:
    ng = _group(rec, name)
    return next(
        r for r in rec.resources if r.parent == ng.parent and r.type == "aws:ec2/launchTemplate:LaunchTemplate"
    ).inputs


def test_capacity_block_group(reserved_run):
    ng = _group(reserved_run, "p5-block").inputs
    assert ng["capacityType"] == "CAPACITY_BLOCK" and ng["capacityType"] in enum(EKS, "CapacityTypes")
    # The block's type in the launch template and none on the node group, or EKS rejects the create (EKS user
    # guide, Capacity Blocks for managed node groups; eksctl's testdata/launch_template/capacity_block.json).
    assert "instanceTypes" not in ng
    assert ng["scalingConfig"] == {"minSize": 0, "maxSize": 2, "desiredSize": 0}
    lt = _template(reserved_run, "p5-block")
    assert lt["instanceType"] == "p5.48xlarge" and lt["instanceType"] in enum(EC2, "InstanceType")
    assert lt["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert lt["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-02168da1478b509e0"}
    }
    # Only the reservation's AZ: us-west-2b is the second of network.availabilityZones.
    assert len(ng["subnetIds"]) == 1
    private = [s for s in reserved_run.by_type("aws:ec2/subnet:Subnet") if "private" in s.name]
    by_id = {s.id: s for s in private}
    assert by_id[ng["subnetIds"][0]].inputs["availabilityZone"] == "us-west-2b"


def test_efa_interfaces_security_groups_and_placement(reserved_run):
    lt = _template(reserved_run, "p5-block")
    interfaces = lt["networkInterfaces"]
    assert len(interfaces) == 32
    assert [(i["networkCardIndex"], i["deviceIndex"], i["interfaceType"]) for i in interfaces[:2]] == [
        (0, 0, "efa"),
        (1, 1, "efa-only"),
    ]
    assert {i["interfaceType"] for i in interfaces} <= enum(EC2, "NetworkInterfaceType")
    cluster_sg = reserved_run.one("aws:eks/cluster:Cluster").outputs["vpcConfig"]["clusterSecurityGroupId"]
    (efa_sg,) = [g for g in reserved_run.by_type("aws:ec2/securityGroup:SecurityGroup") if g.name.endswith("-efa-sg")]
    for interface in interfaces:
        assert interface["securityGroups"] == [cluster_sg, efa_sg.id]
        # EC2 refuses associatePublicIpAddress (even false) with several interfaces: left out
        assert "associatePublicIpAddress" not in interface
    # No placement group with a reservation target; a plain EFA group would get one.
    assert "placement" not in lt
    assert reserved_run.by_type("aws:ec2/placementGroup:PlacementGroup") == []
    rules = [
        r
        for t in (
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
            "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
        )
        for r in reserved_run.by_type(t)
        if r.inputs.get("securityGroupId") == efa_sg.id
    ]
    assert len(rules) == 2
    for rule in rules:
        assert rule.inputs["ipProtocol"] == "-1"
        assert rule.inputs["referencedSecurityGroupId"] == efa_sg.id


def test_every_launch_template_is_valid_launch_template_data(reserved_run):
    """Each group's template through botocore's ec2 model (CreateLaunchTemplate `LaunchTemplateData`)."""
    from tests.test_aws_models import launch_template_data  # noqa: PLC0415

    for name in ("p5-block", "p4d-odcr", "g6-spot", "system"):
        _, found = launch_template_data(_template(reserved_run, name))
        assert found == [], (name, found)
    assert launch_template_data(_template(reserved_run, "p5-block"))[0]["InstanceType"] == "p5.48xlarge"


def test_render_and_cost_name_the_block_type_from_its_launch_template(reserved_run):
    from gpuplane.infra import render  # noqa: PLC0415
    from tests.conftest import stack_config  # noqa: PLC0415

    config = stack_config(stack(BLOCK, ODCR, SPOT, training=[TRAINING]))
    groups = {g["name"]: g for g in render.summary(config, reserved_run)["nodeGroups"]}
    assert groups["p5-block"]["instanceTypes"] == ["p5.48xlarge"]
    lines = {line["item"]: line for line in render.cost_estimate(config, reserved_run).as_dict()["lines"]}
    assert "x p5.48xlarge" in lines["node group p5-block"]["detail"], lines["node group p5-block"]


def test_odcr_group(reserved_run):
    ng = _group(reserved_run, "p4d-odcr").inputs
    assert ng["capacityType"] == "ON_DEMAND"
    assert ng["instanceTypes"] == ["p4d.24xlarge"]
    lt = _template(reserved_run, "p4d-odcr")
    assert "instanceMarketOptions" not in lt and "instanceType" not in lt
    assert lt["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}
    }
    assert len(lt["networkInterfaces"]) == 4
    assert ng["labels"][wellknown.LABEL_EFA] == "true"


def test_plain_groups_are_unchanged(reserved_run):
    lt = _template(reserved_run, "g6-spot")
    for key in ("networkInterfaces", "capacityReservationSpecification", "instanceMarketOptions", "placement"):
        assert key not in lt
    assert len(_group(reserved_run, "g6-spot").inputs["subnetIds"]) == 3
    assert wellknown.LABEL_EFA not in _group(reserved_run, "g6-spot").inputs["labels"]


def test_efa_device_plugin_only_on_efa_groups(reserved_run):
    releases = [
        r
        for r in reserved_run.by_type("kubernetes:helm.sh/v3:Release")
        if r.inputs["chart"] == "aws-efa-k8s-device-plugin"
    ]
    assert len(releases) == 1
    release = releases[0].inputs
    assert release["version"] == versions.EFA_DEVICE_PLUGIN_VERSION
    assert release["repositoryOpts"]["repo"] == "https://aws.github.io/eks-charts"
    assert release["values"]["nodeSelector"] == {wellknown.LABEL_EFA: "true"}


def test_autoscaler_template_advertises_efa():
    group = NodeGroupArgs.model_validate(BLOCK)
    tags = node_template.autoscaler_tags(group, "c")
    assert tags[f"{wellknown.CA_TAG_PREFIX}/node-template/resources/vpc.amazonaws.com/efa"] == "32"
    assert tags[f"{wellknown.CA_TAG_PREFIX}/node-template/label/{wellknown.LABEL_EFA}"] == "true"
    plain = NodeGroupArgs.model_validate(SPOT)
    assert not any("efa" in k for k in node_template.autoscaler_tags(plain, "c"))


def test_placement_group_for_efa_without_reservation(run_platform):
    plain = with_(ODCR, name="p4d-od")
    plain.pop("capacityReservation")
    rec = run_platform(stack(plain))
    groups = rec.by_type("aws:ec2/placementGroup:PlacementGroup")
    assert [g.inputs["strategy"] for g in groups] == ["cluster"]
    assert groups[0].inputs["name"] == "gpuplane-test-p4d-od"
    assert _template(rec, "p4d-od")["placement"] == {"groupName": "gpuplane-test-p4d-od"}


@pytest.mark.parametrize("placement_group", [None, False])
def test_efa_group_without_a_reservation_az_uses_one_subnet(run_platform, placement_group):
    """EFA's OS-bypass traffic does not cross subnets, and a cluster placement group holds instances of one AZ
    (botocore autoscaling model, CreateAutoScalingGroup `PlacementGroup`: "You cannot specify multiple
    Availability Zones and a cluster placement group"; EC2 user guide, EFA limitations). So an EFA group whose AZ
    no reservation names launches in one private subnet, the network's first, with or without its placement group.
    """
    plain = with_(ODCR, name="p4d-od")
    plain.pop("capacityReservation")
    if placement_group is not None:
        plain["placementGroup"] = placement_group
    rec = run_platform(stack(plain))
    (first_private,) = [
        a.inputs["subnetId"]
        for a in rec.by_type("aws:ec2/routeTableAssociation:RouteTableAssociation")
        if a.name.endswith("-network-private-0-rta")
    ]
    assert _group(rec, "p4d-od").inputs["subnetIds"] == [first_private]
    assert capacity.subnet_positions(NodeGroupArgs.model_validate(plain), NetworkArgs()) == [0]
    # Groups without EFA keep every AZ.
    assert capacity.subnet_positions(NodeGroupArgs.model_validate(SPOT), NetworkArgs()) is None


def test_queue_spends_reserved_first(reserved_run):
    cq = next(r for r in reserved_run.resources if r.type == "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    flavors = [f["name"] for f in cq.inputs["spec"]["resourceGroups"][0]["flavors"]]
    assert flavors == ["group-p5-block", "group-p4d-odcr", "group-system", "group-g6-spot"]
    assert cq.inputs["spec"]["flavorFungibility"] == {
        "whenCanBorrow": "MayStopSearch",
        "whenCanPreempt": "TryNextFlavor",
    }


def test_render_notes_say_what_happens_at_the_end():
    notes = capacity.reservation_notes(NodeGroupArgs.model_validate(BLOCK))
    assert any("2026-12-01T11:30:00Z" in n and "40 min" in n and "30 min" in n for n in notes)


# --- refusals, each with its key ------------------------------------------------------------------------------


REFUSALS: list[tuple[str, dict[str, Any], str, list[str]]] = [
    (
        "a type without EFA",
        stack(with_(SPOT, efa=True)),
        "gpuplane:nodeGroups[1].efa:",
        ["g6.xlarge has no EFA", "p5.48xlarge (32)"],
    ),
    (
        "efa on a cpu group",
        stack(with_(SYSTEM, name="cpu2", efa=True)),
        "gpuplane:nodeGroups[1].efa:",
        ["kind is 'cpu'"],
    ),
    (
        "two types with a block",
        stack(with_(BLOCK, instanceTypes=["p5e.48xlarge", "p5en.48xlarge"])),
        "gpuplane:nodeGroups[1].instanceTypes:",
        ["a Capacity Block reserves one instance type"],
    ),
    (
        "a size beyond the block",
        stack(with_(BLOCK, maxSize=3)),
        "gpuplane:nodeGroups[1].maxSize:",
        ["3 exceeds capacityReservation.instanceCount 2"],
    ),
    (
        "desired size with a block",
        stack(with_(BLOCK, minSize=1)),
        "gpuplane:nodeGroups[1].desiredSize:",
        ["use 0"],
    ),
    (
        "a block without its id",
        stack(with_(BLOCK, capacityReservation={"instanceCount": 2})),
        "gpuplane:nodeGroups[1].capacityReservation.id:",
        ["is required with capacityType CAPACITY_BLOCK"],
    ),
    (
        "a block without its count",
        stack(reservation(BLOCK, instanceCount=None)),
        "gpuplane:nodeGroups[1].capacityReservation.instanceCount:",
        ["is required"],
    ),
    (
        "subnets outside the AZ",
        stack(BLOCK, azs=["us-west-2a", "us-west-2c"]),
        "gpuplane:nodeGroups[1].capacityReservation.availabilityZone:",
        ["'us-west-2b' is not one of network.availabilityZones"],
    ),
    (
        "AZs not named",
        stack(BLOCK, azs=None),
        "gpuplane:nodeGroups[1].capacityReservation.availabilityZone:",
        ["set network.availabilityZones"],
    ),
    (
        "a reservation id without its AZ",
        stack(reservation(ODCR, availabilityZone=None)),
        "gpuplane:nodeGroups[1].capacityReservation.availabilityZone:",
        ["is required with id 'cr-0123456789abcdef0'"],
    ),
    (
        "preference and target together",
        stack(reservation(ODCR, preference="open")),
        "gpuplane:nodeGroups[1].capacityReservation.preference:",
        ["one option at a time"],
    ),
    (
        "a bad reservation id",
        stack(reservation(ODCR, id="cr-xyz")),
        "gpuplane:nodeGroups[1].capacityReservation.id:",
        ["'cr-xyz' is not a Capacity Reservation id"],
    ),
    (
        "an end without a zone",
        stack(reservation(BLOCK, endTime="2026-12-01T11:30:00")),
        "gpuplane:nodeGroups[1].capacityReservation.endTime:",
        ["has no time zone"],
    ),
    (
        "a reservation on spot",
        stack(with_(SPOT, capacityReservation={"preference": "open"})),
        "gpuplane:nodeGroups[1].capacityReservation:",
        ["does not apply to SPOT groups"],
    ),
    (
        "a block on a cpu group",
        stack(with_(SYSTEM, name="cpu2", capacityType="CAPACITY_BLOCK")),
        "gpuplane:nodeGroups[1].capacityType:",
        ["is for GPU groups"],
    ),
    (
        "a block of a type EC2 sells no Capacity Blocks of",
        stack(with_(BLOCK, instanceTypes=["g5.12xlarge"], efa=False)),
        "gpuplane:nodeGroups[1].capacityType:",
        ["'CAPACITY_BLOCK' with g5.12xlarge", "on-demand, spot only", "p5.48xlarge", "p4d.24xlarge"],
    ),
    (
        "an ODCR smaller than the group",
        stack(with_(ODCR, maxSize=5)),
        "gpuplane:nodeGroups[1].maxSize:",
        ["5 exceeds capacityReservation.instanceCount 4"],
    ),
    (
        "a placement group with a reservation target",
        stack(with_(ODCR, placementGroup=True)),
        "gpuplane:nodeGroups[1].placementGroup:",
        ["InsufficientInstanceCapacity"],
    ),
    (
        "a placement group without efa",
        stack(with_(SPOT, placementGroup=True)),
        "gpuplane:nodeGroups[1].placementGroup:",
        ["EFA groups only"],
    ),
    (
        "efa types with different interface counts",
        stack(with_(ODCR, instanceTypes=["g6e.12xlarge", "g6e.24xlarge"], capacityReservation=None)),
        "gpuplane:nodeGroups[1].instanceTypes:",
        ["EFA interfaces per node differ", "'g6e.24xlarge': 2"],
    ),
]


@pytest.mark.parametrize(("case", "overrides", "key", "fragments"), REFUSALS, ids=[c[0] for c in REFUSALS])
def test_refusals_name_the_key_and_value(case, overrides, key, fragments):
    found = problems(overrides)
    matching = [p for p in found if p.startswith(key)]
    assert matching, f"no problem starts with {key!r}: {found}"
    for fragment in fragments:
        assert any(fragment in p for p in matching), f"{fragment!r} not in {matching}"


def test_types_with_the_same_count_but_another_layout_are_refused(monkeypatch):
    """No two GPU types of one shape differ in layout today (p4d/p4de share theirs); a data refresh might."""
    from gpuplane.components.facts import efa  # noqa: PLC0415

    shifted = (efa.EfaInterface(0, 0, "interface"), *(efa.EfaInterface(c, 1, "efa-only") for c in range(1, 5)))
    real = efa.layout_for
    monkeypatch.setattr(efa, "layout_for", lambda name: shifted if name == "p4de.24xlarge" else real(name))
    group = with_(ODCR, instanceTypes=["p4d.24xlarge", "p4de.24xlarge"], capacityReservation=None)
    found = [p for p in problems(stack(group)) if p.startswith("gpuplane:nodeGroups[1].instanceTypes:")]
    assert found and "EFA interface layouts differ" in found[0] and "0:interface" in found[0], found
    monkeypatch.setattr(efa, "layout_for", real)
    NodeGroupArgs.model_validate(group)  # the real data: one layout, accepted


def test_render_summary_states_the_reservations(tmp_path):
    from gpuplane.infra import render  # noqa: PLC0415
    from tests.conftest import stack_config  # noqa: PLC0415

    target = render.Target.of(stack_config(stack(BLOCK, ODCR)))
    assert any("Capacity Block cr-02168da1478b509e0 in us-west-2b, 2 instance(s)" in n for n in target.notes)
    assert any("the block ends 2026-12-01T11:30:00Z" in n for n in target.notes)
    assert any("on-demand nodes target ODCR cr-0123456789abcdef0 in us-west-2c" in n for n in target.notes)


def test_gpu_pods_request_their_share_of_efa_and_the_queue_covers_it(reserved_run):
    from gpuplane.components.config import TrainingArgs  # noqa: PLC0415
    from gpuplane.components.plan.placement import WorkloadContext  # noqa: PLC0415
    from gpuplane.components.plan.training import training_spec  # noqa: PLC0415
    from gpuplane.manifests import training  # noqa: PLC0415
    from tests.conftest import stack_config  # noqa: PLC0415

    platform = stack_config(stack(BLOCK, ODCR, SPOT)).platform
    context = WorkloadContext.of(platform)
    # Whole-node workers pinned to the block: 8 GPUs of a p5.48xlarge get all 32 interfaces.
    big = TrainingArgs.model_validate(
        {
            **TRAINING,
            "worker": {
                "replicas": 2,
                "nodeGroups": ["p5-block"],
                "resources": {"limits": {"cpu": "96", "memory": "1000Gi"}, "gpus": 8},
            },
        }
    )
    (worker,) = training_spec(big, context).roles
    assert worker.efa == 32
    assert worker.resources["limits"][wellknown.EFA_RESOURCE] == "32"
    pod = training.jobset(training_spec(big, context))["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert {"name": "FI_PROVIDER", "value": "efa"} in pod["spec"]["containers"][0]["env"]
    # 2-GPU pods that may land on the block (4 interfaces per GPU) or the ODCR (4 over 8 GPUs): the smaller share.
    (small,) = training_spec(TrainingArgs.model_validate(TRAINING), context).roles
    assert small.efa == 1 and small.resources["limits"][wellknown.EFA_RESOURCE] == "1"
    assert capacity.role_efa([NodeGroupArgs.model_validate(ODCR)], 2) == 1
    assert capacity.role_efa([NodeGroupArgs.model_validate(BLOCK)], 2) == 8
    # The queue covers EFA, each flavor with what its group holds at maxSize.
    cq = next(r for r in reserved_run.resources if r.type == "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    group = cq.inputs["spec"]["resourceGroups"][0]
    assert group["coveredResources"][-1] == wellknown.EFA_RESOURCE
    quotas = {f["name"]: {q["name"]: q["nominalQuota"] for q in f["resources"]} for f in group["flavors"]}
    assert quotas["group-p5-block"][wellknown.EFA_RESOURCE] == "64"
    assert quotas["group-p4d-odcr"][wellknown.EFA_RESOURCE] == "16"
    assert quotas["group-g6-spot"][wellknown.EFA_RESOURCE] == "0"


def test_the_aws_side_converts_to_a_terraform_plan(reserved_run, run_platform):
    from gpuplane.infra import render, tfplan  # noqa: PLC0415
    from tests.conftest import stack_config  # noqa: PLC0415

    plain = with_(ODCR, name="p4d-od")
    plain.pop("capacityReservation")
    for rec, overrides in ((reserved_run, stack(BLOCK, ODCR, SPOT)), (run_platform(stack(plain)), stack(plain))):
        plan = render.plan_document(stack_config(overrides), rec)
        doc = tfplan.from_recording(plan, rec)
        types = {r["type"] for r in doc["planned_values"]["root_module"]["resources"]}
        assert "aws_launch_template" in types
    assert "aws_placement_group" in types


def test_queue_objects_are_valid_kueue_v1beta2(reserved_run):
    """The reserved stack's Kueue objects (EFA covered, flavors reordered) against the CRDs' schema and CEL rules."""
    from tests.queue import kueue_api  # noqa: PLC0415

    found = [r for r in reserved_run.resources if r.type.startswith("kubernetes:kueue.x-k8s.io/v1beta2:")]
    assert {r.type.rsplit(":", 1)[1] for r in found} >= {"ResourceFlavor", "ClusterQueue", "LocalQueue"}
    for resource in found:
        doc = {k: resource.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec") if k in resource.inputs}
        assert kueue_api.problems(doc) == [], doc


# aws/eks-charts stable/aws-efa-k8s-device-plugin at bfe91c4 (chart v0.5.30): values.yaml declares `nodeSelector: {}`
# and `tolerations: []`, and templates/daemonset.yaml reads both (`with .Values.nodeSelector`, `with
# .Values.tolerations`). Recorded per version: a bump without reading the new chart fails here.
EFA_CHART_DOCUMENTED = {("aws-efa-k8s-device-plugin", "v0.5.30"): {"nodeSelector", "tolerations"}}


def test_efa_plugin_values_use_documented_keys(reserved_run):
    (release,) = [r for r in render_releases(reserved_run) if r["chart"] == versions.EFA_DEVICE_PLUGIN_CHART]
    documented = EFA_CHART_DOCUMENTED[(release["chart"], release["version"])]
    assert set(release["values"]) <= documented
    assert set(EFA_CHART_DOCUMENTED) == {(versions.EFA_DEVICE_PLUGIN.package, versions.EFA_DEVICE_PLUGIN.version)}


def render_releases(recording: Recording) -> list[dict[str, Any]]:
    from gpuplane.infra import render  # noqa: PLC0415

    return list(render.helm_releases(recording).values())


PS_GPU: dict[str, Any] = {
    "name": "ps-gpu",
    "strategy": "parameterServer",
    "command": ["python", "train.py"],
    "chief": {"resources": {"limits": {"cpu": "4", "memory": "16Gi"}, "gpus": 2}},
    "worker": {"replicas": 2, "resources": {"limits": {"cpu": "4", "memory": "16Gi"}, "gpus": 2}},
    "ps": {"resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
}


# --- one group per run (Kueue assigns a flavor per PodSet) ------------------------------------
#
# A p5 block (reserved), a p4d ODCR (reserved), p5 on demand and g6 spot: the PS run's 4-CPU, 16 GiB GPU pods fit
# the first three (g6.xlarge is too small), each of which holds the whole run at maxSize.
ON_DEMAND = {
    "name": "p5-ondemand",
    "kind": "gpu",
    "instanceTypes": ["p5.48xlarge"],
    "minSize": 0,
    "maxSize": 2,
    "efa": True,
}
GPU_GROUPS = (BLOCK, ODCR, ON_DEMAND, SPOT)
PS_PINNED: dict[str, Any] = {
    **PS_GPU,
    "name": "ps-pinned",
    "chief": {**PS_GPU["chief"], "nodeGroups": ["p5-block"]},
    "worker": {**PS_GPU["worker"], "nodeGroups": ["p5-block"]},
}
PS_CPU_CHIEF: dict[str, Any] = {
    **PS_GPU,
    "name": "ps-cpu-chief",
    "chief": {"resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
}


def _affinity_groups(pod: dict[str, Any]) -> set[str]:
    """The node groups a pod's required node affinity allows (the `gpuplane.io/node-group In` term)."""
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    (term,) = terms
    (expr,) = [e for e in term["matchExpressions"] if e["key"] == wellknown.LABEL_NODE_GROUP]
    assert expr["operator"] == "In"
    return set(expr["values"])


def kueue_flavors(jobset: dict[str, Any], flavors: list[dict[str, Any]], cq: dict[str, Any]) -> dict[str, list[str]]:
    """The flavors Kueue may give each PodSet (replicatedJob), in the ClusterQueue's order.

    What Kueue's flavor assigner checks before quota (pkg/scheduler/flavorassigner, v0.19.2): the flavor's
    `nodeLabels` must satisfy the pod's required node affinity, its `nodeTaints` must be tolerated, and every
    resource the pod requests must have quota in that flavor.
    """
    by_name = {f["metadata"]["name"]: f["spec"] for f in flavors}
    (group,) = cq["spec"]["resourceGroups"]
    found: dict[str, list[str]] = {}
    for rjob in jobset["spec"]["replicatedJobs"]:
        pod = rjob["template"]["spec"]["template"]["spec"]
        allowed = _affinity_groups(pod) if "affinity" in pod else None
        tolerated = {(t["key"], t.get("effect")) for t in pod.get("tolerations", [])}
        requested = {k for c in pod["containers"] for k in c["resources"].get("limits", {})}
        names = []
        for entry in group["flavors"]:
            spec = by_name[entry["name"]]
            quota = {q["name"]: q["nominalQuota"] for q in entry["resources"]}
            if allowed is not None and spec["nodeLabels"][wellknown.LABEL_NODE_GROUP] not in allowed:
                continue
            if any((t["key"], t["effect"]) not in tolerated for t in spec.get("nodeTaints", [])):
                continue
            if any(quota.get(r) in (None, "0") for r in requested if r not in ("cpu", "memory")):
                continue
            names.append(entry["name"])
        found[rjob["name"]] = names
    return found


@pytest.fixture(scope="session")
def one_group_stack(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Recording]:
    from gpuplane.infra import render  # noqa: PLC0415
    from tests.conftest import once_per_session, stack_config  # noqa: PLC0415

    config_ = stack_config(stack(*GPU_GROUPS, training=[TRAINING, PS_PINNED, PS_CPU_CHIEF]))
    return config_, once_per_session(tmp_path_factory, "one-group-stack", lambda: render.run_stack(config_))


def _queue_docs(rec: Recording) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {str(k): r.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec") if k in r.inputs}
        for r in rec.resources
        if r.type.startswith("kubernetes:kueue.x-k8s.io/v1beta2:")
    ]
    (cq,) = [d for d in docs if d["kind"] == "ClusterQueue"]
    return [d for d in docs if d["kind"] == "ResourceFlavor"], cq


def _runs(config_: Any) -> dict[str, dict[str, Any]]:
    from gpuplane.components.plan.training import run_manifests  # noqa: PLC0415

    runs: dict[str, dict[str, Any]] = {}
    for doc in run_manifests(config_.platform).values():
        meta: dict[str, Any] = doc["metadata"]  # type: ignore[assignment]
        runs[meta["labels"]["app.kubernetes.io/instance"]] = dict(doc)
    return runs


def test_queue_objects_of_the_four_group_stack_are_valid_and_ordered(one_group_stack):
    from tests.queue import kueue_api  # noqa: PLC0415

    _config, rec = one_group_stack
    flavors, cq = _queue_docs(rec)
    for doc in [*flavors, cq]:
        assert kueue_api.problems(doc) == [], doc
    order = [f["name"] for f in cq["spec"]["resourceGroups"][0]["flavors"]]
    assert order == ["group-p5-block", "group-p4d-odcr", "group-system", "group-p5-ondemand", "group-g6-spot"]


def test_mirrored_run_is_one_gpu_podset_that_falls_back_from_the_block(one_group_stack):
    """multiWorkerMirrored: one GPU PodSet, offered reserved groups first, then on-demand: one group, fallback kept."""
    config_, rec = one_group_stack
    flavors, cq = _queue_docs(rec)
    found = kueue_flavors(_runs(config_)["mnist"], flavors, cq)
    assert found == {"worker": ["group-p5-block", "group-p4d-odcr", "group-p5-ondemand"]}


def test_pinned_ps_run_puts_every_gpu_pod_in_the_one_group(one_group_stack):
    """parameterServer with GPUs on chief and workers, both pinned: each GPU PodSet has that one flavor only."""
    config_, rec = one_group_stack
    flavors, cq = _queue_docs(rec)
    run = _runs(config_)["ps-pinned"]
    found = kueue_flavors(run, flavors, cq)
    assert found["chief"] == found["worker"] == ["group-p5-block"]
    assert found["ps"] == ["group-system"]  # CPU only: the CPU group, by quota
    pods = {r["name"]: r["template"]["spec"]["template"]["spec"] for r in run["spec"]["replicatedJobs"]}
    assert _affinity_groups(pods["chief"]) == _affinity_groups(pods["worker"]) == {"p5-block"}
    assert run["spec"]["suspend"] is True and run["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "training"


def test_ps_run_with_a_cpu_chief_keeps_the_fallback(one_group_stack):
    """Only the workers ask for GPUs: one GPU PodSet, every group that fits it, reserved first; not refused."""
    config_, rec = one_group_stack
    flavors, cq = _queue_docs(rec)
    found = kueue_flavors(_runs(config_)["ps-cpu-chief"], flavors, cq)
    assert found["worker"] == ["group-p5-block", "group-p4d-odcr", "group-p5-ondemand"]
    assert found["chief"] == found["ps"] == ["group-system"]


def test_render_no_longer_notes_runs_it_refuses():
    from gpuplane.infra import render  # noqa: PLC0415
    from tests.conftest import stack_config  # noqa: PLC0415

    target = render.Target.of(stack_config(stack(*GPU_GROUPS, training=[TRAINING, PS_PINNED, PS_CPU_CHIEF])))
    assert not [n for n in target.notes if n.startswith("training ")]


def test_ps_run_with_gpu_chief_and_workers_on_several_groups_is_refused():
    (found,) = problems(stack(*GPU_GROUPS, training=[PS_GPU]))
    assert found.startswith("gpuplane:training[0].chief.nodeGroups: training 'ps-gpu': ")
    for fragment in (
        "its GPU roles (chief, worker) may use GPU groups ['p4d-odcr', 'p5-block', 'p5-ondemand']",
        "Kueue picks a group for each role on its own (one flavor per PodSet)",
        "chief.nodeGroups and worker.nodeGroups: [p5-block]",
        "the groups that hold the whole run, in the queue's order: p5-block, p4d-odcr, p5-ondemand",
        "GPUs on the worker role only (remove chief.resources.gpus)",
        '"One group per run"',
    ):
        assert fragment in found, found


@pytest.mark.parametrize(
    ("chief", "worker", "key", "first"),
    [
        # Chief pinned, workers free: the workers could still go on-demand.
        (["p5-block"], None, "training[0].worker.nodeGroups", "p5-block"),
        # Both pinned to the same two groups: still two flavors each.
        (["p5-ondemand", "p4d-odcr"], ["p5-ondemand", "p4d-odcr"], "training[0].chief.nodeGroups", "p4d-odcr"),
        # Workers pinned to the on-demand group, chief free: the chief is what to pin.
        (None, ["p5-ondemand"], "training[0].chief.nodeGroups", "p5-ondemand"),
    ],
)
def test_partly_pinned_ps_runs_are_refused_with_the_role_to_fix(chief, worker, key, first):
    run = {
        **PS_GPU,
        "chief": {**PS_GPU["chief"], **({"nodeGroups": chief} if chief else {})},
        "worker": {**PS_GPU["worker"], **({"nodeGroups": worker} if worker else {})},
    }
    (found,) = problems(stack(*GPU_GROUPS, training=[run]))
    assert found.startswith(f"gpuplane:{key}: "), found
    assert f"chief.nodeGroups and worker.nodeGroups: [{first}]" in found


def test_one_gpu_group_needs_no_pin():
    """With one GPU group that fits, the run's GPU roles cannot split: nothing to refuse."""
    from gpuplane.components.config import QueueArgs  # noqa: PLC0415
    from gpuplane.components.plan import training_queue  # noqa: PLC0415
    from gpuplane.components.plan.placement import WorkloadContext  # noqa: PLC0415
    from gpuplane.components.plan.training import queued_run  # noqa: PLC0415
    from tests.conftest import stack_config  # noqa: PLC0415

    platform = stack_config(stack(BLOCK, SPOT, training=[PS_GPU])).platform
    context = WorkloadContext.of(platform)
    assert training_queue.holding_groups(platform.training[0], context, QueueArgs()) == ["p5-block"]
    training_queue.check_one_group(platform.training[0], context, QueueArgs())
    assert queued_run(platform.training[0], context, QueueArgs())["kind"] == "JobSet"


def test_gpuplane_train_refuses_the_split_run_too():
    """`queued_run` (what `gpuplane train` submits) applies the same check, keyed on the role."""
    from gpuplane.components.config import QueueArgs  # noqa: PLC0415
    from gpuplane.components.config.base import FieldError  # noqa: PLC0415
    from gpuplane.components.config.workloads import TrainingArgs  # noqa: PLC0415
    from gpuplane.components.plan.placement import WorkloadContext  # noqa: PLC0415
    from gpuplane.components.plan.training import queued_run  # noqa: PLC0415
    from tests.conftest import stack_config  # noqa: PLC0415

    platform = stack_config(stack(*GPU_GROUPS, training=[PS_PINNED])).platform
    unpinned = TrainingArgs.model_validate(PS_GPU)
    with pytest.raises(FieldError) as info:
        queued_run(unpinned, WorkloadContext.of(platform), QueueArgs())
    assert info.value.field == "chief.nodeGroups"


def test_gpu_parameter_servers_with_gpu_workers_are_held_to_the_same_rule():
    """Any two GPU roles, not only chief and workers: a CPU chief with GPU ps and workers is refused the same way."""
    run = {
        **PS_CPU_CHIEF,
        "ps": {"resources": {"limits": {"cpu": "4", "memory": "16Gi"}, "gpus": 2}},
    }
    (found,) = problems(stack(*GPU_GROUPS, training=[run]))
    assert found.startswith("gpuplane:training[0].worker.nodeGroups: "), found
    assert "its GPU roles (worker, ps)" in found
    assert "worker.nodeGroups and ps.nodeGroups: [p5-block]" in found
    assert "GPUs on the worker role only (remove ps.resources.gpus)" in found
