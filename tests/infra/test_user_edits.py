"""Hand-written stack edits to the observability, reserved-capacity and training keys.

Each case is an edit a user makes to a stack file that gpuplane accepted (or answered with a made-up second
line) before: every one must now exit 2 with one line per problem, naming the key, the value and what is
allowed, and nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.infra import config
from tests.conftest import DEV_CLUSTER

SYSTEM = {"name": "system", "instanceTypes": ["m6i.large"], "minSize": 1, "maxSize": 2}
GPU = {"limits": {"cpu": "1", "memory": "2Gi"}, "gpus": 1}
CPU = {"limits": {"cpu": "1", "memory": "2Gi"}}


def problems(overrides: dict[str, Any], region: str = "us-west-2") -> list[str]:
    raw: dict[str, Any] = {f"gpuplane:{k}": v for k, v in {"cluster": DEV_CLUSTER, **overrides}.items()}
    raw["aws:region"] = region
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    return info.value.problems


# --- observability.retention: what Prometheus and the Prometheus Operator's CRD take ------------------------


@pytest.mark.parametrize("retention", ["12h7d", "1d1d", "7d1y", "300y", "99999999999999999999y"])
def test_retention_prometheus_refuses_is_refused(retention: str) -> None:
    # Units out of order or repeated fail the operator's `Duration` pattern (helm install fails at `pulumi up`);
    # past 292 years the duration overflows Go's int64 nanoseconds (Prometheus refuses it at start).
    found = problems({"observability": {"retention": retention}})
    assert len(found) == 1, found
    assert found[0].startswith("gpuplane:observability.retention: ")
    assert repr(retention) in found[0] and "7d" in found[0]


@pytest.mark.parametrize("retention", ["7d", "1y2w3d4h5m6s7ms", "292y", "36h", "2w"])
def test_retention_prometheus_takes_is_taken(retention: str) -> None:
    raw = {"gpuplane:cluster": DEV_CLUSTER, "gpuplane:observability": {"retention": retention}}
    assert config.parse({**raw, "aws:region": "us-west-2"}, "test").platform.observability.retention == retention


# --- ARNs of another partition or region -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arn", "region", "needle"),
    [
        ("arn:aws-cn:sns:us-west-2:123456789012:alerts", "us-west-2", "arn:aws:sns:"),
        ("arn:aws:sns:cn-north-1:123456789012:alerts", "cn-north-1", "arn:aws-cn:sns:"),
        ("arn:aws-us-gov:sns:us-west-2:123456789012:alerts", "us-west-2", "arn:aws:sns:"),
    ],
)
def test_alert_topic_of_another_partition_is_refused(arn: str, region: str, needle: str) -> None:
    found = problems({"observability": {"metrics": "prometheus", "alertTopicArn": arn}}, region)
    assert found == [line for line in found if line.startswith("gpuplane:observability.alertTopicArn: ")], found
    assert len(found) == 1 and arn in found[0] and needle in found[0], found


@pytest.mark.parametrize(
    ("arn", "needle"),
    [
        ("arn:aws-cn:resource-groups:cn-north-1:123456789012:group/odcr", "arn:aws:resource-groups:us-east-2:"),
        ("arn:aws:resource-groups:us-west-2:123456789012:group/odcr", "arn:aws:resource-groups:us-east-2:"),
    ],
)
def test_reservation_group_of_another_region_is_refused(arn: str, needle: str) -> None:
    group = {
        "name": "odcr",
        "kind": "gpu",
        "instanceTypes": ["p4d.24xlarge"],
        "minSize": 0,
        "maxSize": 2,
        "capacityReservation": {"resourceGroupArn": arn},
    }
    found = problems({"nodeGroups": [SYSTEM, group]}, "us-east-2")
    assert len(found) == 1, found
    assert found[0].startswith("gpuplane:nodeGroups[1].capacityReservation.resourceGroupArn: ")
    assert arn in found[0] and needle in found[0]


# --- no made-up second line --------------------------------------------------------------------------------


def test_bad_metric_is_one_line_not_a_line_about_cpu_too() -> None:
    # With `metric` refused, re-checking the variant with metric's default (cpu) made up "target: is for the
    # Prometheus metrics; with metric cpu set targetCpuUtilization", which the user never wrote.
    variant = {
        "name": "g",
        "resources": {"requests": {"cpu": "500m"}, **GPU},
        "autoscaling": {"maxReplicas": 3, "metric": "rps", "target": 5},
    }
    found = problems({"serving": [{"name": "m", "model": {"name": "m"}, "variants": [variant]}]})
    assert len(found) == 1, found
    assert found[0].startswith("gpuplane:serving[0].variants[0].autoscaling.metric: ") and "'rps'" in found[0]


def test_bad_reservation_id_is_one_line_not_a_line_about_its_zone_too() -> None:
    group = {
        "name": "blk",
        "kind": "gpu",
        "instanceTypes": ["p5.48xlarge"],
        "capacityType": "CAPACITY_BLOCK",
        "minSize": 0,
        "maxSize": 2,
        "capacityReservation": {"id": "cr-XYZ", "availabilityZone": "us-east-2b", "instanceCount": 2},
    }
    found = problems({"network": {"availabilityZones": ["us-east-2a", "us-east-2b"]}, "nodeGroups": [SYSTEM, group]})
    assert len(found) == 1, found
    assert found[0].startswith("gpuplane:nodeGroups[1].capacityReservation.id: ") and "'cr-XYZ'" in found[0]


def test_training_role_in_a_missing_group_is_said_once_under_its_nodegroups_key() -> None:
    # The queue check re-raised the placement error under `chief.replicas`: the same line twice, one wrong key.
    groups = [
        SYSTEM,
        {"name": "gpua", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 0, "maxSize": 4},
        {"name": "gpub", "kind": "gpu", "instanceTypes": ["g5.2xlarge"], "minSize": 0, "maxSize": 4},
    ]
    run = {
        "name": "run",
        "strategy": "parameterServer",
        "command": ["python", "train.py"],
        "chief": {"resources": GPU, "nodeGroups": ["gpuz"]},
        "worker": {"replicas": 2, "resources": GPU, "nodeGroups": ["gpuz"]},
        "ps": {"resources": CPU},
    }
    found = problems({"nodeGroups": groups, "training": [run]})
    assert [line.split(": ", 1)[0] for line in found] == [
        "gpuplane:training[0].chief.nodeGroups",
        "gpuplane:training[0].worker.nodeGroups",
    ], found
    assert all("['gpuz'] do not exist" in line for line in found)


def test_gpu_roles_pinned_to_different_groups_are_told_to_name_one_group() -> None:
    # Was "...fit no single GPU group at its maxSize ... raise that group's maxSize" under chief.replicas: no
    # maxSize helps roles pinned to groups with none in common.
    groups = [
        SYSTEM,
        {"name": "gpua", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 0, "maxSize": 4},
        {"name": "gpub", "kind": "gpu", "instanceTypes": ["g5.2xlarge"], "minSize": 0, "maxSize": 4},
    ]
    run = {
        "name": "run",
        "strategy": "parameterServer",
        "command": ["python", "train.py"],
        "chief": {"resources": GPU, "nodeGroups": ["gpua"]},
        "worker": {"replicas": 2, "resources": GPU, "nodeGroups": ["gpub"]},
        "ps": {"resources": CPU},
    }
    found = problems({"nodeGroups": groups, "training": [run]})
    assert len(found) == 1, found
    assert found[0].startswith("gpuplane:training[0].worker.nodeGroups: ")
    assert "chief: ['gpua'], worker: ['gpub']" in found[0] and "chief.nodeGroups and worker.nodeGroups" in found[0]
    assert "maxSize" not in found[0]


@pytest.mark.parametrize("where", ["chief", "worker"])
def test_an_empty_node_group_list_is_refused_as_empty(where: str) -> None:
    # Was "none of the groups it names has a gpu group ...; named: ; groups that have it: ...".
    run = {
        "name": "run",
        "strategy": "parameterServer",
        "command": ["python", "train.py"],
        "chief": {"resources": CPU},
        "worker": {"replicas": 2, "resources": GPU},
        "ps": {"resources": CPU},
    }
    run[where] = {**run[where], "nodeGroups": []}  # type: ignore[dict-item]
    found = problems({"training": [run]})
    assert found == [
        f"gpuplane:training[0].{where}.nodeGroups: is empty; name at least one node group, or remove the key to use "
        "every group that fits"
    ]


def test_an_empty_node_group_list_of_a_serving_variant_is_refused_as_empty() -> None:
    variant = {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}, "nodeGroups": []}
    found = problems({"serving": [{"name": "m", "model": {"name": "m"}, "variants": [variant]}]})
    assert len(found) == 1 and found[0].startswith("gpuplane:serving[0].variants[0].nodeGroups: is empty"), found


@pytest.mark.parametrize(
    ("observability", "key"),
    [
        ({"metrics": "managedPrometheus", "retention": "30d"}, "retention"),
        ({"metrics": "cloudwatch", "grafana": True}, "grafana"),
        ({"metrics": "cloudwatch", "servingP99Ms": 200}, "servingP99Ms"),
        ({"metrics": "none", "queueWaitMinutes": 60}, "queueWaitMinutes"),
        ({"metrics": "none", "gpuMemoryPercent": 90}, "gpuMemoryPercent"),
        ({"metrics": "none", "alertTopicArn": "arn:aws:sns:us-west-2:123456789012:alerts"}, "alertTopicArn"),
    ],
)
def test_a_key_the_backend_never_reads_is_said(observability: dict[str, Any], key: str) -> None:
    # Was rendered without a word: a user who set a topic or a threshold believed alerts would follow.
    raw = {"gpuplane:cluster": DEV_CLUSTER, "gpuplane:observability": observability, "aws:region": "us-west-2"}
    warnings = [w for w in config.parse(raw, "test").warnings if "observability" in w]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"gpuplane:observability.{key}: ")
    assert f"is ignored with observability.metrics: {observability['metrics']}" in warnings[0]


def test_keys_the_backend_reads_and_grafana_off_are_not_warned_about() -> None:
    observability = {
        "metrics": "managedPrometheus",
        "grafana": False,
        "servingP99Ms": 200,
        "alertTopicArn": "arn:aws:sns:us-west-2:123456789012:alerts",
    }
    raw = {"gpuplane:cluster": DEV_CLUSTER, "gpuplane:observability": observability, "aws:region": "us-west-2"}
    assert [w for w in config.parse(raw, "test").warnings if "observability" in w] == []
