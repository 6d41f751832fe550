"""The price table and the cost estimate: values computed by hand from the tables of facts/prices.py."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from pathlib import Path

import pytest

from gpuplane.components.facts import prices
from gpuplane.components.plan import cost

ROOT = Path(__file__).resolve().parents[3]
GP3_HOURLY_PER_GIB = 0.08 / 730


def test_the_table_names_its_source_date_and_regions():
    table = prices.table()
    assert table.date == "2026-07-20"
    assert "karpenter-provider-aws" in table.source and "6fc13b5236fd" in table.source
    assert table.covered == ("us-east-1", "us-gov-east-1", "us-gov-west-1")
    us = table.regions["us-east-1"]
    assert len(us) > 1300
    # Values as the Price List API publishes them for us-east-1 (Karpenter's table of 2026-07-20).
    assert (us["p5.48xlarge"], us["g5.xlarge"], us["m6i.large"], us["c6a.large"]) == (55.04, 1.006, 0.096, 0.0765)
    assert all(p > 0 for region in table.regions.values() for p in region.values())


def test_a_region_the_table_lacks_gets_the_nearest_covered_price_labelled():
    own = prices.on_demand("g5.xlarge", "us-east-1")
    assert (own.usd_per_hour, own.priced_region, own.note) == (1.006, "us-east-1", None)
    west = prices.on_demand("g5.xlarge", "us-west-2")
    assert (west.usd_per_hour, west.priced_region) == (1.006, "us-east-1")
    assert west.note == "us-east-1 price (us-west-2 is not in the price table)"
    assert prices.on_demand("m5.large", "eu-west-1").priced_region == "us-east-1"
    # GovCloud is its own partition: its own table, never a commercial region's price.
    gov = prices.on_demand("m5.large", "us-gov-west-1")
    assert gov.priced_region == "us-gov-west-1" and gov.usd_per_hour != prices.table().regions["us-east-1"]["m5.large"]
    assert prices.nearest_covered("us-gov-west-1", prices.table().covered) == ["us-gov-west-1", "us-gov-east-1"]
    # aws-cn: no table in USD; never a silent zero, and never a price of another partition.
    cn = prices.on_demand("m5.large", "cn-north-1")
    assert cn.usd_per_hour is None and cn.note is not None and "no price for m5.large" in cn.note


def _node(cost_line: cost.CostLine) -> tuple[float, float]:
    return cost_line.idle, cost_line.max


def test_a_p5_stack_by_hand():
    usage = cost.StackUsage(
        region="us-east-1",
        groups=(
            cost.GroupUsage("train", ("p5.48xlarge",), "ON_DEMAND", 0, 2, root_volume_gib=200),
            cost.GroupUsage("system", ("m6i.large",), "ON_DEMAND", 2, 3, root_volume_gib=50),
        ),
        kubernetes_versions=("1.36",),
        nat_gateways=3,
        efs_file_systems=1,
        efs_stated_gib=1024,
        load_balancers=1,
        kms_keys=2,
    )
    estimate = cost.estimate(usage, today=dt.date(2026, 11, 24))
    lines = {line.item: line for line in estimate.lines}
    p5_node = 55.04 + 200 * GP3_HOURLY_PER_GIB
    m6i_node = 0.096 + 50 * GP3_HOURLY_PER_GIB
    assert _node(lines["node group train"]) == (0.0, round(2 * p5_node, 4))
    assert _node(lines["node group system"]) == (round(2 * m6i_node, 4), round(3 * m6i_node, 4))
    assert _node(lines["EKS control plane"]) == (0.10, 0.10)
    assert _node(lines["NAT gateways"]) == (0.15, 0.15)  # 3 x (0.045 + 0.005 public IPv4)
    assert _node(lines["EFS"]) == (round(1024 * 0.30 / 730, 4), round(1024 * 0.30 / 730, 4))
    assert _node(lines["load balancers"]) == (0.0225, 0.0225)
    assert _node(lines["KMS keys"]) == (round(2 / 730, 4), round(2 / 730, 4))
    idle = 2 * m6i_node + 0.10 + 0.15 + 1024 * 0.30 / 730 + 0.0225 + 2 / 730
    assert estimate.idle == pytest.approx(idle, abs=1e-3)
    assert estimate.max == pytest.approx(idle - 2 * m6i_node + 3 * m6i_node + 2 * p5_node, abs=1e-3)
    assert estimate.max > 110  # two p5.48xlarge: about $55 an hour each
    document = estimate.as_dict()
    assert document["maxMonthly"] == round(estimate.max * 730, 2)
    assert document["instancePrices"] == {"source": prices.table().source, "date": "2026-07-20"}
    assert document["servicePrices"]["date"] == prices.SERVICE_PRICES_DATE


def test_spot_groups_are_priced_at_their_dearest_on_demand_ceiling_and_say_so():
    group = cost.GroupUsage("gpu", ("g5.xlarge", "g5.2xlarge"), "SPOT", 0, 2)
    line = cost.group_line(group, "us-east-1")
    assert _node(line) == (0.0, 2 * 1.212)
    assert "spot, at most $1.212/h" in line.detail
    assert any("spot prices vary" in n for n in line.notes)
    on_demand = cost.group_line(cost.GroupUsage("gpu", ("g5.xlarge", "g5.2xlarge"), "ON_DEMAND", 0, 2), "us-east-1")
    assert _node(on_demand) == (0.0, 2 * 1.006)  # on-demand groups launch the first listed type


def test_always_on_gpu_workloads_keep_nodes_up_and_are_named():
    group = cost.GroupUsage("gpu", ("g5.xlarge",), "SPOT", 0, 2, kept_up=1, kept_up_by=("ml/mobilenet-gpu",))
    line = cost.group_line(group, "us-east-1")
    assert line.idle == 1.006
    assert "1 node(s) above minSize 0 kept up by ml/mobilenet-gpu" in line.notes
    capped = cost.GroupUsage("gpu", ("g5.xlarge",), "SPOT", 0, 2, kept_up=5)
    assert capped.idle_nodes == 2  # never above maxSize


def test_extended_support_costs_six_times_standard():
    usage = cost.StackUsage(region="us-east-1", kubernetes_versions=("1.32",))
    before = cost.estimate(usage, today=dt.date(2026, 3, 22)).lines[0]
    after = cost.estimate(usage, today=dt.date(2026, 3, 23)).lines[0]
    assert (before.idle, after.idle) == (0.10, 0.60)
    assert "extended support" in after.detail and "ends 2026-03-23" in before.notes[0]


def test_a_type_without_any_price_is_left_out_by_name_never_zero_silently():
    line = cost.group_line(cost.GroupUsage("gpu", ("g5.xlarge",), "ON_DEMAND", 1, 2), "cn-north-1")
    assert _node(line) == (0.0, 0.0)
    assert line.notes == ("no price for g5.xlarge in the price table: left out of the total",)


def _plan_resources() -> list[dict[str, object]]:
    group_urn = "urn:pulumi:s::p::gpuplane:index:NodeGroup$aws:eks/nodeGroup:NodeGroup::p-gpu-ng"
    template = "urn:pulumi:s::p::gpuplane:index:NodeGroup$aws:ec2/launchTemplate:LaunchTemplate::p-gpu-lt"
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "gpuplane.io/node-group", "operator": "In", "values": ["gpu"]}]}
                ]
            }
        }
    }

    def deployment(name: str, gpus: int, replicas: int | None) -> dict[str, object]:
        spec: dict[str, object] = {
            "template": {
                "spec": {"affinity": affinity, "containers": [{"resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}
            }
        }
        if replicas is not None:
            spec["replicas"] = replicas
        return {
            "urn": f"urn:{name}",
            "type": "kubernetes:apps/v1:Deployment",
            "dependencies": [],
            "inputs": {"metadata": {"name": name, "namespace": "ml"}, "spec": spec},
        }

    return [
        {
            "urn": group_urn,
            "type": "aws:eks/nodeGroup:NodeGroup",
            "dependencies": [template],
            "inputs": {
                "labels": {"gpuplane.io/node-group": "gpu"},
                "instanceTypes": ["g5.12xlarge"],
                "capacityType": "ON_DEMAND",
                "scalingConfig": {"minSize": 0, "maxSize": 4, "desiredSize": 0},
            },
        },
        {
            "urn": template,
            "type": "aws:ec2/launchTemplate:LaunchTemplate",
            "dependencies": [],
            "inputs": {"blockDeviceMappings": [{"ebs": {"volumeSize": 100}}]},
        },
        {
            "urn": "urn:tag",
            "type": "aws:autoscaling/tag:Tag",
            "dependencies": [group_urn],
            "inputs": {
                "tag": {"key": "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu", "value": "4"}
            },
        },
        deployment("a", 2, 2),  # 4 GPU units
        deployment("b", 1, None),  # 1 unit (replicas default 1)
        deployment("scaled", 1, None),  # HPA floor 0: keeps nothing up
        {
            "urn": "urn:hpa",
            "type": "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
            "dependencies": [],
            "inputs": {
                "metadata": {"name": "scaled-hpa", "namespace": "ml"},
                "spec": {"scaleTargetRef": {"name": "scaled"}, "minReplicas": 0},
            },
        },
        {
            "urn": "urn:pv",
            "type": "kubernetes:core/v1:PersistentVolume",
            "dependencies": [],
            "inputs": {"spec": {"capacity": {"storage": "1Ti"}, "csi": {"driver": "efs.csi.aws.com"}}},
        },
        {"urn": "urn:efs", "type": "aws:efs/fileSystem:FileSystem", "dependencies": [], "inputs": {}},
        {
            "urn": "urn:lb",
            "type": "kubernetes:core/v1:Service",
            "dependencies": [],
            "inputs": {"spec": {"type": "LoadBalancer"}},
        },
        {"urn": "urn:c", "type": "aws:eks/cluster:Cluster", "dependencies": [], "inputs": {"version": "1.36"}},
    ]


def test_usage_is_read_from_plan_resources():
    usage = cost.usage_from_resources("us-east-1", _plan_resources())
    (group,) = usage.groups
    # 5 GPU units held by always-on Deployments, 4 units a node: 2 nodes kept up; the HPA with floor 0 holds none.
    assert (group.name, group.instance_types, group.root_volume_gib, group.kept_up) == ("gpu", ("g5.12xlarge",), 100, 2)
    assert group.kept_up_by == ("ml/a", "ml/b")
    assert (usage.efs_file_systems, usage.efs_stated_gib, usage.load_balancers) == (1, 1024.0, 1)
    assert usage.kubernetes_versions == ("1.36",)
    assert cost._gib("500G") == pytest.approx(500e9 / 2**30)


def test_the_price_refresh_script_parses_karpenters_generated_file(tmp_path):
    spec = importlib.util.spec_from_file_location("refresh_prices", ROOT / "scripts/refresh_prices.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    fixture = (
        "package pricing\n\n// generated at 2026-07-20T13:44:30Z for us-east-1\n\n"
        "var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{\n"
        '\t// us-east-1\n\t"us-east-1": {\n\t\t// g5 family\n'
        '\t\t"g5.12xlarge": 5.672000, "g5.xlarge": 1.006000,\n'
        '\t\t"p6-b200.48xlarge": 113.932800, "x.zero": 0.000000,\n\t},\n}\n'
    )
    date, regions = script.parse_karpenter(fixture)
    assert date == "2026-07-20"
    assert regions == {
        "us-east-1": {"g5.12xlarge": 5.672, "g5.xlarge": 1.006, "p6-b200.48xlarge": 113.9328, "x.zero": 0.0}
    }
    document = script.build(regions, "fixture", date)
    assert document["regions"]["us-east-1"] == {"g5.12xlarge": 5.672, "g5.xlarge": 1.006, "p6-b200.48xlarge": 113.9328}
    assert json.loads(script.dumps(document)) == document
    with pytest.raises(ValueError, match="not a Karpenter generated pricing file"):
        script.parse_karpenter("package pricing\n")


def test_unknown_versions_and_unpriced_spot_types_are_said_not_hidden():
    line = cost.estimate(cost.StackUsage(region="us-east-1", kubernetes_versions=("1.29",))).lines[0]
    assert line.idle == 0.10 and "not in manifests/versions.py" in line.notes[0]
    spot = cost.group_line(cost.GroupUsage("gpu", ("g5.xlarge", "g5.xlarge-fake"), "SPOT", 0, 1), "us-east-1")
    assert spot.max == 1.006
    assert "no price for g5.xlarge-fake in the price table: the ceiling leaves it out" in spot.notes


def test_a_counted_odcr_is_billed_in_the_idle_figure_as_in_the_maximum():
    """2 x p4d.24xlarge reserved: about $43.92/h whether a node runs or not; the nodes add only their volumes."""
    group = cost.GroupUsage(
        "train",
        ("p4d.24xlarge",),
        "ON_DEMAND",
        0,
        2,
        root_volume_gib=100,
        reservation="cr-0123456789abcdef0",
        reserved_count=2,
        reservation_end="2027-01-01T00:00:00Z",
    )
    usage = cost.StackUsage(region="us-east-1", groups=(group,), kubernetes_versions=("1.36",))
    estimate = cost.estimate(usage, today=dt.date(2026, 11, 24))
    lines = {line.item: line for line in estimate.lines}
    odcr = lines["ODCR cr-0123456789abcdef0"]
    assert _node(odcr) == (round(2 * 21.957642, 4), round(2 * 21.957642, 4))
    assert odcr.notes[0] == ("reserved: 2 x p4d.24xlarge billed every hour, running or not; ends 2027-01-01T00:00:00Z")
    # Both nodes run inside the reservation: only their root volumes are added on the group's line.
    assert _node(lines["node group train"]) == (0.0, round(2 * 100 * GP3_HOURLY_PER_GIB, 4))
    assert estimate.idle >= 43.92
    assert estimate.max == pytest.approx(43.915284 + 0.10 + 200 * GP3_HOURLY_PER_GIB, abs=1e-3)


def test_nodes_beyond_a_counted_odcr_pay_the_on_demand_rate():
    group = cost.GroupUsage(
        "gpu", ("g5.xlarge",), "ON_DEMAND", 1, 3, reservation="cr-0123456789abcdef0", reserved_count=1
    )
    line = cost.group_line(group, "us-east-1")
    assert _node(line) == (0.0, round(2 * 1.006, 4))
    assert "up to 1 inside reservation cr-0123456789abcdef0" in line.detail


def test_an_odcr_of_unstated_size_says_how_to_count_it():
    odcr = cost.GroupUsage("gpu", ("g5.xlarge",), "ON_DEMAND", 0, 1, reservation="cr-0123456789abcdef0")
    line = cost.group_line(odcr, "us-east-1")
    assert line.max == 1.006
    assert any("set capacityReservation.instanceCount to count it" in n for n in line.notes)
    assert cost.reservation_line(odcr, "us-east-1") is None


def test_a_capacity_block_is_prepaid_at_zero_an_hour_and_says_what_until_when():
    block = cost.GroupUsage(
        "train",
        ("p5e.48xlarge",),  # no price in the table, and none needed: the block is paid up front
        "CAPACITY_BLOCK",
        0,
        2,
        root_volume_gib=200,
        reservation="cr-0123456789abcdef0",
        reserved_count=2,
        reservation_end="2026-12-01T11:30:00Z",
    )
    estimate = cost.estimate(cost.StackUsage(region="us-east-1", groups=(block,)))
    group, prepaid = estimate.lines
    assert _node(group) == (0.0, round(2 * 200 * GP3_HOURLY_PER_GIB, 4))
    assert (prepaid.item, prepaid.idle, prepaid.max) == ("Capacity Block cr-0123456789abcdef0", 0.0, 0.0)
    assert prepaid.notes[0].startswith("prepaid: 2 x p5e.48xlarge until 2026-12-01T11:30:00Z;")
    assert estimate.excluded == ()


def test_a_type_without_a_price_is_named_in_the_total_itself():
    groups = (
        cost.GroupUsage("big", ("p5e.48xlarge",), "ON_DEMAND", 0, 2),
        cost.GroupUsage("system", ("m6i.large",), "ON_DEMAND", 2, 3),
        cost.GroupUsage("spot", ("g5.xlarge", "g5.xlarge-fake"), "SPOT", 0, 1),
    )
    estimate = cost.estimate(cost.StackUsage(region="us-east-1", groups=groups))
    assert estimate.excluded == ("g5.xlarge-fake", "p5e.48xlarge")
    assert estimate.total_note == "excludes g5.xlarge-fake, p5e.48xlarge: no price"
    document = estimate.as_dict()
    assert (document["excludes"], document["totalNote"]) == (["g5.xlarge-fake", "p5e.48xlarge"], estimate.total_note)
    one = cost.estimate(cost.StackUsage(region="us-east-1", groups=groups[:1]))
    assert one.total_note == "excludes p5e.48xlarge: no price"
    assert cost.estimate(cost.StackUsage(region="us-east-1", groups=groups[1:2])).total_note == ""


def test_a_gpu_node_kept_up_and_mostly_idle_is_a_warning_with_the_idle_share_priced():
    """A 1-GPU variant on an 8-GPU p5.48xlarge keeps $55/h up to use $6.88/h of it."""
    group = cost.GroupUsage(
        "big",
        ("p5.48xlarge",),
        "ON_DEMAND",
        0,
        2,
        kept_up=1,
        kept_up_by=("ml/resnet-gpu",),
        gpu_units_per_node=8,
        gpu_units_held=1,
    )
    line = cost.group_line(group, "us-east-1")
    assert line.warnings == (
        "ml/resnet-gpu keep(s) 1 x p5.48xlarge up using 1 of its 8 GPU unit(s): the 7 idle cost $48.16/h; "
        "a type with fewer GPUs per node fits it better",
    )
    estimate = cost.estimate(cost.StackUsage(region="us-east-1", groups=(group,)))
    assert estimate.warnings == line.warnings and estimate.as_dict()["warnings"] == list(line.warnings)
    # Half or more of the GPUs in use: no warning; nothing kept up: none either.
    half = cost.GroupUsage(
        "big", ("p5.48xlarge",), "ON_DEMAND", 0, 2, kept_up=1, gpu_units_per_node=8, gpu_units_held=4
    )
    assert cost.group_line(half, "us-east-1").warnings == ()
    assert cost.group_line(cost.GroupUsage("big", ("p5.48xlarge",), "ON_DEMAND", 0, 2), "us-east-1").warnings == ()


def test_a_gpu_workload_at_zero_replicas_keeps_nothing_up_and_says_how_to_start_it():
    resources = _plan_resources()
    for r in resources:
        if r["type"] == "kubernetes:apps/v1:Deployment" and r["inputs"]["metadata"]["name"] in ("a", "b"):  # type: ignore[index]
            r["inputs"]["spec"]["replicas"] = 0  # type: ignore[index]
    (group,) = cost.usage_from_resources("us-east-1", resources).groups
    # "scaled" has an autoscaler floor of 0: it scales from zero, it is not parked.
    assert (group.kept_up, group.parked) == (0, ("ml/a", "ml/b"))
    line = cost.group_line(group, "us-east-1")
    assert line.idle == 0.0
    node = 5.672 + 100 * GP3_HOURLY_PER_GIB
    assert line.notes[-1] == (
        f"ml/a, ml/b at 0 replicas: keeps no GPU node up; set its replicas to start it: +${node:.2f}/h per node "
        "it brings up"
    )


def test_reservations_stated_in_config_reach_the_groups_read_from_resources():
    resources = _plan_resources()
    template = next(r for r in resources if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate")
    template["inputs"]["capacityReservationSpecification"] = {  # type: ignore[index]
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}
    }
    stated = {"gpu": cost.Reservation(instance_count=4, end_time="2027-01-01T00:00:00Z")}
    (group,) = cost.usage_from_resources("us-east-1", resources, stated).groups
    assert (group.reservation, group.reserved_count, group.reservation_end) == (
        "cr-0123456789abcdef0",
        4,
        "2027-01-01T00:00:00Z",
    )
    assert (group.gpu_units_per_node, group.gpu_units_held) == (4, 5)
    assert cost.usage_from_resources("us-east-1", resources).groups[0].reserved_count is None


def test_metrics_and_alerts_are_a_line_of_their_own_at_no_aws_charge():
    """Each metrics choice's added $/h is stated on the render, here zero beyond the system nodes."""
    resources = [
        {
            "urn": "r",
            "type": "kubernetes:helm.sh/v3:Release",
            "dependencies": [],
            "inputs": {"name": "kube-prometheus-stack"},
        },
        {"urn": "t", "type": "aws:sns/topic:Topic", "dependencies": [], "inputs": {}},
    ]
    usage = cost.usage_from_resources("us-east-1", resources)
    assert (usage.metrics_stack, usage.sns_topics) == (True, 1)
    (line,) = [x for x in cost.estimate(usage).lines if x.item == "metrics and alerts"]
    assert (line.idle, line.max) == (0.0, 0.0)
    assert line.detail == "kube-prometheus-stack on the system nodes; 1 SNS topic(s)"
    assert any("system nodes" in note for note in line.notes)
    assert [x for x in cost.estimate(cost.StackUsage(region="us-east-1")).lines if x.item == "metrics and alerts"] == []
