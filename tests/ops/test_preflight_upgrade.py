"""Upgrade readiness: the live cluster against the stack's minor, EKS upgrade insights, the GPU stack's ranges.

The answers come from botocore's Stubber: each request is checked against the real `eks` model (ListInsights'
filter, DescribeCluster's name), and each response is what EKS would say.
"""

from __future__ import annotations

import datetime
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from gpuplane.infra import config
from gpuplane.infra.aws import preflight
from tests.conftest import DEV_CLUSTER, stack_config

NOW = datetime.datetime(2026, 11, 24, tzinfo=datetime.UTC)


def stack(version: str) -> config.StackConfig:
    return stack_config({"cluster": {**DEV_CLUSTER, "kubernetesVersion": version}})


def eks() -> Any:
    return boto3.client("eks", region_name="us-west-2", aws_access_key_id="a", aws_secret_access_key="b")


def cluster(cfg: config.StackConfig, version: str, status: str = "ACTIVE") -> dict[str, Any]:
    return {"cluster": {"name": cfg.cluster_name, "version": version, "status": status}}


def insight(name: str, status: str, reason: str = "") -> dict[str, Any]:
    return {
        "id": f"id-{name}",
        "name": name,
        "category": "UPGRADE_READINESS",
        "kubernetesVersion": "1.36",
        "lastRefreshTime": NOW,
        "lastTransitionTime": NOW,
        "description": f"Checks {name}",
        "insightStatus": {"status": status, "reason": reason},
    }


def insights_request(cfg: config.StackConfig, version: str) -> dict[str, Any]:
    return {
        "clusterName": cfg.cluster_name,
        "filter": {"categories": ["UPGRADE_READINESS"], "kubernetesVersions": [version]},
    }


def run(cfg: config.StackConfig, *answers: tuple[str, dict[str, Any], dict[str, Any]]) -> list[preflight.Check]:
    client = eks()
    with Stubber(client) as stub:
        for operation, response, params in answers:
            stub.add_response(operation, response, params)
        found = preflight.upgrade_checks(cfg, client)
        stub.assert_no_pending_responses()
    return found


def test_one_minor_with_passing_insights_passes() -> None:
    cfg = stack("1.36")
    checks = run(
        cfg,
        ("describe_cluster", cluster(cfg, "1.35"), {"name": cfg.cluster_name}),
        (
            "list_insights",
            {"insights": [insight("Deprecated APIs removed in Kubernetes v1.36", "PASSING")]},
            insights_request(cfg, "1.36"),
        ),
    )
    assert [(c.name, c.status) for c in checks] == [
        ("Kubernetes upgrade", "pass"),
        ("Kubernetes upgrade: insights for 1.36", "pass"),
    ]
    assert checks[0].detail.startswith("1.35 -> 1.36: control plane, then add-ons, node groups")
    assert checks[1].detail == "1 upgrade insight(s) for 1.36, all passing"


def test_a_deprecated_api_in_use_fails_naming_the_insight_and_its_reason() -> None:
    cfg = stack("1.36")
    checks = run(
        cfg,
        ("describe_cluster", cluster(cfg, "1.35"), {"name": cfg.cluster_name}),
        (
            "list_insights",
            {
                "insights": [
                    insight("Deprecated APIs removed in Kubernetes v1.36", "ERROR", "flowcontrol/v1beta3 in use"),
                    insight("Kubelet version skew", "PASSING"),
                ],
            },
            insights_request(cfg, "1.36"),
        ),
    )
    found = {c.name: c for c in checks}["Kubernetes upgrade: insights for 1.36"]
    assert found.status == "fail"
    assert found.detail == (
        "1 insight(s) in ERROR for 1.36: Deprecated APIs removed in Kubernetes v1.36 (flowcontrol/v1beta3 in use)"
    )
    assert "aws eks describe-insight" in found.fix


def test_insights_are_read_page_by_page_and_a_warning_warns() -> None:
    cfg = stack("1.36")
    checks = run(
        cfg,
        ("describe_cluster", cluster(cfg, "1.35"), {"name": cfg.cluster_name}),
        ("list_insights", {"insights": [insight("a", "PASSING")], "nextToken": "t"}, insights_request(cfg, "1.36")),
        (
            "list_insights",
            {"insights": [insight("b", "WARNING", "a client calls a deprecated API")]},
            {**insights_request(cfg, "1.36"), "nextToken": "t"},
        ),
    )
    found = checks[-1]
    assert (found.status, found.detail) == (
        "warn",
        "1 insight(s) to look at for 1.36: b (a client calls a deprecated API)",
    )


def test_a_jump_of_two_minors_is_refused_with_the_path_and_insights_for_the_first_step() -> None:
    cfg = stack("1.36")
    checks = run(
        cfg,
        ("describe_cluster", cluster(cfg, "1.34"), {"name": cfg.cluster_name}),
        ("list_insights", {"insights": []}, insights_request(cfg, "1.35")),
    )
    jump = checks[0]
    assert jump.status == "fail"
    assert "2 minors ahead of the running cluster's 1.34" in jump.detail
    assert "take the path 1.34 -> 1.35 -> 1.36" in jump.detail
    assert jump.fix.startswith('Set cluster.kubernetesVersion: "1.35"')
    assert (checks[1].name, checks[1].status) == ("Kubernetes upgrade: insights for 1.35", "warn")


def test_a_cluster_busy_with_another_update_fails() -> None:
    cfg = stack("1.36")
    checks = run(
        cfg,
        ("describe_cluster", cluster(cfg, "1.35", status="UPDATING"), {"name": cfg.cluster_name}),
        ("list_insights", {"insights": [insight("a", "PASSING")]}, insights_request(cfg, "1.36")),
    )
    busy = {c.name: c for c in checks}["Kubernetes upgrade: cluster status"]
    assert busy.status == "fail" and "is UPDATING" in busy.detail


@pytest.mark.parametrize("running", ["1.36", "1.36.3"])
def test_no_upgrade_when_the_cluster_runs_the_minor(running: str) -> None:
    cfg = stack("1.36")
    checks = run(cfg, ("describe_cluster", cluster(cfg, running), {"name": cfg.cluster_name}))
    assert [(c.status, c.detail) for c in checks] == [
        ("pass", f"cluster {cfg.cluster_name} runs {running}: no upgrade")
    ]


def test_no_cluster_yet_is_no_upgrade() -> None:
    cfg = stack("1.36")
    client = eks()
    with Stubber(client) as stub:
        stub.add_client_error(
            "describe_cluster", "ResourceNotFoundException", "No cluster found", 404, {"name": cfg.cluster_name}
        )
        checks = preflight.upgrade_checks(cfg, client)
    assert [(c.status, c.detail) for c in checks] == [("pass", f"no cluster {cfg.cluster_name} yet: created at 1.36")]


def test_an_endpoint_without_insights_says_it_could_not_ask() -> None:
    cfg = stack("1.36")
    client = eks()
    with Stubber(client) as stub:
        stub.add_response("describe_cluster", cluster(cfg, "1.35"), {"name": cfg.cluster_name})
        stub.add_client_error("list_insights", "404", "Not yet implemented", 404, insights_request(cfg, "1.36"))
        checks = preflight.upgrade_checks(cfg, client)
    assert checks[-1].status == "warn" and "does not implement ListInsights" in checks[-1].detail
    assert "--filter categories=UPGRADE_READINESS,kubernetesVersions=1.36" in checks[-1].fix


def test_access_denied_on_insights_is_the_step_failure_not_a_warning() -> None:
    cfg = stack("1.36")
    client = eks()
    with Stubber(client) as stub:
        stub.add_response("describe_cluster", cluster(cfg, "1.35"), {"name": cfg.cluster_name})
        stub.add_client_error("list_insights", "AccessDeniedException", "no", 403, insights_request(cfg, "1.36"))
        with pytest.raises(Exception, match="AccessDenied"):
            preflight.upgrade_checks(cfg, client)


def test_gpu_stack_checks_name_each_part_the_stack_runs() -> None:
    checks = {c.name: c for c in preflight.gpu_stack_checks(stack("1.36"))}
    assert {"GPU stack at 1.36: nvidia-driver", "GPU stack at 1.36: cluster-autoscaler"} <= set(checks)
    assert checks["GPU stack at 1.36: cluster-autoscaler"].detail == "v1.36.1 for Kubernetes 1.36"
    assert {c.status for c in checks.values()} == {"pass"}


def test_gpu_stack_checks_judge_the_gpu_operator_only_on_a_stack_that_installs_it() -> None:
    ami = {c.name for c in preflight.gpu_stack_checks(stack("1.36"))}
    assert "GPU stack at 1.36: gpu-operator" not in ami
    operator = stack_config(
        {
            "cluster": {**DEV_CLUSTER, "kubernetesVersion": "1.36"},
            "nodeGroups": [
                {"name": "system", "instanceTypes": ["m6i.large"]},
                {"name": "gpu", "kind": "gpu", "instanceTypes": ["g6.xlarge"], "minSize": 0, "driver": "operator"},
            ],
        }
    )
    checks = {c.name: c for c in preflight.gpu_stack_checks(operator)}
    found = checks["GPU stack at 1.36: gpu-operator"]
    assert found.status == "pass" and found.detail.startswith("1.36 is within 1.33 to 1.36 (NVIDIA's GPU Operator")


def test_a_minor_below_the_running_one_fails_before_the_up() -> None:
    """EKS never downgrades a control plane: the stack pinned below what runs is refused here, not by AWS."""
    cfg = stack("1.35")
    (check,) = run(cfg, ("describe_cluster", cluster(cfg, "1.36"), {"name": cfg.cluster_name}))
    assert check.status == "fail"
    assert "older than the running cluster's 1.36" in check.detail and "never downgrades" in check.detail
    assert check.fix == 'Set cluster.kubernetesVersion: "1.36"'
