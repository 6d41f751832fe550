"""Control plane and node checks against fake clusters: each pass, each failure with its evidence, cause and fix."""

from __future__ import annotations

import dataclasses

import pytest

from gpuplane.infra.aws.session import AwsError
from gpuplane.infra.verify import checks_control as cc
from gpuplane.infra.verify.model import CheckFailed
from gpuplane.manifests import wellknown
from tests.verify.fakes import FakeAws, FakeCluster, active_addons, healthy_nodes, node, pod


def _fail(check, ctx) -> CheckFailed:
    with pytest.raises(CheckFailed) as caught:
        check(ctx)
    outcome = caught.value.outcome
    assert outcome.status == "fail" and outcome.evidence and outcome.cause and outcome.fix
    return caught.value


# --- api ---


def test_api_passes_at_the_configured_version(dev, make_ctx):
    outcome = cc.check_api(make_ctx(dev, FakeCluster(healthy_nodes(dev))))
    assert outcome.status == "pass"
    assert outcome.evidence == f"API server answers, Kubernetes {dev.kubernetes_version} as configured"


def test_api_unreachable_on_a_public_endpoint_names_the_cidrs(dev, make_ctx):
    cluster = FakeCluster([])
    cluster.unreachable = "MaxRetryError: connection timed out"
    failure = _fail(cc.check_api, make_ctx(dev, cluster)).outcome
    assert "connection timed out" in failure.evidence
    assert "publicAccessCidrs" in failure.cause and "publicAccessCidrs" in failure.fix


def test_api_unreachable_on_prod_says_to_run_from_inside_the_vpc(prod, make_ctx):
    assert prod.public_endpoint is False
    cluster = FakeCluster([])
    cluster.unreachable = "MaxRetryError: connection timed out"
    failure = _fail(cc.check_api, make_ctx(prod, cluster)).outcome
    assert "private" in failure.cause
    assert "inside the VPC" in failure.cause or "in the VPC" in failure.fix


def test_api_refusing_credentials_points_at_the_access_entry(dev, make_ctx):
    cluster = FakeCluster([])
    cluster.unreachable = "ApiException: (401) Unauthorized"
    failure = _fail(cc.check_api, make_ctx(dev, cluster)).outcome
    assert "access entry" in failure.cause and "adminPrincipals" in failure.fix


def test_api_at_another_version_fails_naming_both(dev, make_ctx):
    cluster = FakeCluster([])
    cluster.version = "1.33"
    failure = _fail(cc.check_api, make_ctx(dev, cluster)).outcome
    assert failure.evidence == f"the API server runs Kubernetes 1.33; the stack says {dev.kubernetes_version}"
    assert "kubernetesVersion to 1.33" in failure.fix


# --- nodes ---


def test_nodes_pass_with_gpu_group_at_zero(dev, make_ctx):
    outcome = cc.check_nodes(make_ctx(dev, FakeCluster(healthy_nodes(dev))))
    assert outcome.status == "pass"
    assert outcome.evidence == "system: 2/2 Ready (min 1); gpu: 0/0 Ready (min 0) (scales from zero)"


def test_a_node_not_ready_fails_with_the_kubelet_message(dev, make_ctx):
    nodes = healthy_nodes(dev)
    nodes[1] = node("system-1", "system", ready=False, labels=dev.group("system").labels)
    failure = _fail(cc.check_nodes, make_ctx(dev, FakeCluster(nodes))).outcome
    assert "system-1 (system): container runtime network not ready" in failure.evidence
    assert "access entry" in failure.cause and "describe-nodegroup" in failure.fix


def test_a_group_below_its_minimum_fails(prod, make_ctx):
    nodes = [n for n in healthy_nodes(prod, gpu_nodes=True) if n["metadata"]["name"] != "gpu-0"]
    nodes = [n for n in nodes if not n["metadata"]["name"].startswith("gpu")]
    failure = _fail(cc.check_nodes, make_ctx(prod, FakeCluster(nodes))).outcome
    assert failure.evidence.startswith(f"gpu: 0 Ready of minSize {prod.group('gpu').min_size}")


def test_a_missing_label_and_taint_are_named(dev, make_ctx):
    gpu = dev.group("gpu")
    labels = dict(gpu.labels)
    labels.pop(wellknown.LABEL_GPUPLANE_CUDA_DRIVER_MAJOR)
    nodes = [*healthy_nodes(dev), node("gpu-0", "gpu", labels=labels, taints=())]
    failure = _fail(cc.check_nodes, make_ctx(dev, FakeCluster(nodes))).outcome
    assert f"gpu-0 lacks labels {wellknown.LABEL_GPUPLANE_CUDA_DRIVER_MAJOR}=580 (node: missing)" in failure.evidence
    assert "gpu-0 lacks taints nvidia.com/gpu=true:NoSchedule" in failure.evidence
    assert "pulumi up" in failure.fix


# --- add-ons ---


def test_addons_pass_when_all_active(dev, make_ctx):
    outcome = cc.check_addons(make_ctx(dev, FakeCluster([]), FakeAws(active_addons(dev))))
    assert outcome.status == "pass"
    assert outcome.evidence.startswith("eks-pod-identity-agent v1.0.0-eksbuild.1 ACTIVE, vpc-cni")
    assert outcome.details["addons"]["coredns"] == "v1.0.0-eksbuild.1"


def test_a_missing_addon_fails(dev, make_ctx):
    found = active_addons(dev)
    del found["aws-efs-csi-driver"]
    failure = _fail(cc.check_addons, make_ctx(dev, FakeCluster([]), FakeAws(found))).outcome
    assert failure.evidence.startswith("add-ons missing: aws-efs-csi-driver")


def test_a_degraded_addon_fails_with_its_health_issue(dev, make_ctx):
    found = active_addons(dev)
    found["coredns"] |= {
        "status": "DEGRADED",
        "health": {"issues": [{"code": "InsufficientNumberOfReplicas", "message": "0 of 2 ready"}]},
    }
    failure = _fail(cc.check_addons, make_ctx(dev, FakeCluster([]), FakeAws(found))).outcome
    assert failure.evidence == "add-ons not ACTIVE: coredns DEGRADED (InsufficientNumberOfReplicas: 0 of 2 ready)"
    assert "describe-addon" in failure.fix


def test_addons_without_credentials_fail_with_the_sessions_fix(dev, make_ctx):
    aws = FakeAws(error=AwsError("no AWS credentials found", "Set AWS_PROFILE"))
    failure = _fail(cc.check_addons, make_ctx(dev, FakeCluster([]), aws)).outcome
    assert failure.evidence == "EKS did not answer about the add-ons: no AWS credentials found"
    assert failure.fix == "Set AWS_PROFILE"


# --- system pods ---


def _system(
    dev, *, gpu_nodes: bool = True, autoscaler_on: str = "system-0", plugin_on: tuple[str, ...] = ("gpu-0", "gpu-1")
):
    pods = {
        "kube-system": [pod("cluster-autoscaler-abc", "kube-system", autoscaler_on)] if autoscaler_on else [],
        wellknown.NVIDIA_NAMESPACE: [
            pod(f"nvidia-device-plugin-{n}", wellknown.NVIDIA_NAMESPACE, n) for n in plugin_on
        ],
    }
    return FakeCluster(healthy_nodes(dev, gpu_nodes=gpu_nodes), pods)


def test_system_pods_pass(dev, make_ctx):
    outcome = cc.check_system_pods(make_ctx(dev, _system(dev)))
    assert outcome.evidence == "cluster-autoscaler Running on system-0 (system); device plugin Running on 2 GPU node(s)"


def test_system_pods_without_gpu_nodes_say_the_probe_checks_the_plugin(dev, make_ctx):
    outcome = cc.check_system_pods(make_ctx(dev, _system(dev, gpu_nodes=False, plugin_on=())))
    assert "no GPU node up now" in outcome.evidence


def test_no_autoscaler_fails(dev, make_ctx):
    failure = _fail(cc.check_system_pods, make_ctx(dev, _system(dev, autoscaler_on=""))).outcome
    assert failure.evidence == "no Running, Ready cluster-autoscaler pod in kube-system"
    assert "Helm release" in failure.cause


def test_autoscaler_on_a_gpu_node_fails(dev, make_ctx):
    failure = _fail(cc.check_system_pods, make_ctx(dev, _system(dev, autoscaler_on="gpu-1"))).outcome
    assert failure.evidence == "cluster-autoscaler runs on GPU node gpu-1 (gpu)"
    assert "never be scaled down" in failure.cause


def test_a_gpu_node_without_device_plugin_fails(dev, make_ctx):
    failure = _fail(cc.check_system_pods, make_ctx(dev, _system(dev, plugin_on=("gpu-0",)))).outcome
    assert failure.evidence == "no running device plugin on GPU nodes ['gpu-1']"
    assert "nvidia.com/gpu" in failure.cause


def test_autoscaler_off_is_not_looked_for(dev, make_ctx):
    off = dataclasses.replace(dev, autoscaler=False)
    outcome = cc.check_system_pods(make_ctx(off, _system(dev, autoscaler_on="")))
    assert outcome.evidence == "device plugin Running on 2 GPU node(s)"
