"""Add-ons by region: the render refuses what a region lacks; preflight asks DescribeAddonVersions.

moto has no EKS add-ons, so preflight's answers come from botocore's Stubber: the request is checked
against the real `eks` API model (parameter names and types), the response is what EKS would say.
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from gpuplane.components.plan import addons
from gpuplane.components.platform import Platform
from gpuplane.infra import config, mockrun
from gpuplane.infra.aws import preflight
from gpuplane.manifests import wellknown
from tests.conftest import DEV_CLUSTER, stack_config

SCALED: dict[str, Any] = {
    "name": "resnet",
    "model": {"name": "resnet"},
    "variants": [
        {
            "name": "cpu",
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}},
            "autoscaling": {"maxReplicas": 4},
        }
    ],
}


def raw(region: str, **overrides: Any) -> dict[str, Any]:
    return {
        "aws:region": region,
        "gpuplane:cluster": DEV_CLUSTER,
        **{f"gpuplane:{k}": v for k, v in overrides.items()},
    }


# --- the render ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("region", ["cn-north-1", "cn-northwest-1", "us-gov-west-1", "us-gov-east-1"])
def test_an_autoscaled_variant_is_refused_where_metrics_server_is_not_offered(region: str) -> None:
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw(region, serving=[SCALED]), "test")
    assert info.value.problems == [
        f"gpuplane:serving[0].variants[0].autoscaling: needs the EKS add-on 'metrics-server', which AWS does not "
        f"offer in {region} (eksctl excludes it in the China, GovCloud and ISO regions); remove autoscaling from "
        "the variant (fixed replicas) or deploy the stack in another region"
    ]


def test_a_program_building_the_platform_itself_is_refused_the_same_way() -> None:
    args = config.parse(raw("us-west-2", serving=[SCALED]), "test").platform

    def program() -> dict[str, Any]:
        Platform("p", args, region="cn-north-1")
        return {}

    with pytest.raises(
        ValueError, match=r"serving\[0\]\.variants\[0\]\.autoscaling: needs the EKS add-on 'metrics-server'"
    ):
        mockrun.run(program, "gpuplane", "test", "cn-north-1")


def test_the_same_stack_is_fine_in_a_commercial_region() -> None:
    parsed = config.parse(raw("us-west-2", serving=[SCALED]), "test")
    names = [a.name for a in addons.stack_addons(parsed.platform)]
    assert names[-1] == wellknown.ADDON_METRICS_SERVER


def test_fixed_replicas_need_no_metrics_server_in_china() -> None:
    fixed = {**SCALED, "variants": [{k: v for k, v in SCALED["variants"][0].items() if k != "autoscaling"}]}
    parsed = config.parse(raw("cn-north-1", serving=[fixed]), "test")
    assert wellknown.ADDON_METRICS_SERVER not in [a.name for a in addons.stack_addons(parsed.platform)]


def test_stack_addons_name_the_key_that_needs_each() -> None:
    parsed = stack_config({"cluster": DEV_CLUSTER, "serving": [SCALED]})
    found = {a.name: a.key for a in addons.stack_addons(parsed.platform)}
    assert found == {
        "eks-pod-identity-agent": "cluster",
        "vpc-cni": "cluster",
        "kube-proxy": "cluster",
        "coredns": "cluster",
        "aws-efs-csi-driver": "storage.enabled",
        "aws-ebs-csi-driver": "observability.metrics",  # the in-cluster Prometheus's volume
        "eks-node-monitoring-agent": "nodeGroups[0].repair",  # node auto repair acts on its conditions
        "metrics-server": "serving[0].variants[0].autoscaling",
    }


@pytest.mark.parametrize(("metrics", "ebs"), [("prometheus", True), ("managedPrometheus", False), ("none", False)])
def test_the_ebs_driver_only_where_prometheus_keeps_a_volume(metrics: str, ebs: bool) -> None:
    parsed = stack_config({"cluster": DEV_CLUSTER, "observability": {"metrics": metrics}})
    assert (wellknown.ADDON_EBS_CSI in [a.name for a in addons.stack_addons(parsed.platform)]) is ebs


# --- preflight ---------------------------------------------------------------------------------------------


def eks_answer(addon: str, k8s: str, versions_: list[tuple[str, bool]]) -> dict[str, Any]:
    return {
        "addons": [
            {
                "addonName": addon,
                "type": "networking",
                "addonVersions": [
                    {
                        "addonVersion": v,
                        "architecture": ["amd64", "arm64"],
                        "compatibilities": [{"clusterVersion": k8s, "platformVersions": ["*"], "defaultVersion": d}],
                    }
                    for v, d in versions_
                ],
            }
        ]
        if versions_
        else []
    }


def stubbed(cfg: config.StackConfig, answers: dict[str, dict[str, Any]]) -> list[preflight.Check]:
    eks = boto3.session.Session(
        region_name=cfg.region, aws_access_key_id="testing", aws_secret_access_key="testing"
    ).client("eks")
    version = cfg.platform.cluster.kubernetes_version
    with Stubber(eks) as stub:
        for addon in addons.stack_addons(cfg.platform):
            stub.add_response(
                "describe_addon_versions",
                answers[addon.name],
                {"addonName": addon.name, "kubernetesVersion": version},
            )
        checks = preflight.addon_checks(cfg, eks)
        stub.assert_no_pending_responses()
    return checks


def test_every_addon_with_a_version_passes() -> None:
    cfg = stack_config({"cluster": DEV_CLUSTER, "serving": [SCALED]})
    k8s = cfg.platform.cluster.kubernetes_version
    answers = {
        a.name: eks_answer(a.name, k8s, [("v1.0.1-eksbuild.1", False), ("v1.0.2-eksbuild.1", True)])
        for a in addons.stack_addons(cfg.platform)
    }
    checks = stubbed(cfg, answers)
    assert [c.name for c in checks] == [f"EKS add-on: {a.name}" for a in addons.stack_addons(cfg.platform)]
    assert {c.status for c in checks} == {"pass"}
    assert checks[0].detail == f"2 version(s) for Kubernetes {k8s}, default v1.0.2-eksbuild.1"


def test_an_addon_without_a_version_for_the_kubernetes_version_fails_naming_the_key() -> None:
    cfg = stack_config({"cluster": DEV_CLUSTER, "serving": [SCALED]})
    k8s = cfg.platform.cluster.kubernetes_version
    answers = {
        a.name: eks_answer(a.name, k8s, [("v1.0.0-eksbuild.1", True)]) for a in addons.stack_addons(cfg.platform)
    }
    answers[wellknown.ADDON_METRICS_SERVER] = eks_answer(wellknown.ADDON_METRICS_SERVER, k8s, [])
    checks = {c.name: c for c in stubbed(cfg, answers)}
    metrics = checks["EKS add-on: metrics-server"]
    assert metrics.status == "fail"
    assert metrics.detail == (
        f"EKS offers no metrics-server for Kubernetes {k8s} in us-west-2; serving[0].variants[0].autoscaling needs it"
    )
    assert metrics.fix.startswith("Remove serving[0].variants[0].autoscaling")
    assert checks["EKS add-on: coredns"].status == "pass"


def test_an_endpoint_without_the_api_warns_and_says_how_to_check() -> None:
    cfg = stack_config({"cluster": DEV_CLUSTER})

    class Old:
        def describe_addon_versions(self, **_: Any) -> dict[str, Any]:
            raise NotImplementedError

    checks = preflight.addon_checks(cfg, Old())
    assert {c.status for c in checks} == {"warn"}
    assert checks[0].fix.startswith("aws eks describe-addon-versions --addon-name eks-pod-identity-agent")
