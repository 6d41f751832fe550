"""The metrics and node-agent checks (issue 29) against fake clusters: each pass, each failure with its fix."""

from __future__ import annotations

import dataclasses

import pytest

from gpuplane.infra.verify import checks_metrics as cm
from gpuplane.infra.verify.model import CheckFailed
from tests.verify.fakes import FakeCluster, healthy_nodes, pod

STACK_PODS = [
    pod("prometheus-kube-prometheus-stack-prometheus-0", "monitoring", "system-0"),
    pod("alertmanager-kube-prometheus-stack-alertmanager-0", "monitoring", "system-0"),
    pod("kube-prometheus-stack-operator-6d9f7-abcde", "monitoring", "system-1"),
    pod("kube-prometheus-stack-kube-state-metrics-7c8b9-fghij", "monitoring", "system-1"),
]


def _fail(check, ctx) -> CheckFailed:
    with pytest.raises(CheckFailed) as caught:
        check(ctx)
    outcome = caught.value.outcome
    assert outcome.status == "fail" and outcome.evidence and outcome.cause and outcome.fix
    return caught.value


def test_the_shipped_stacks_get_both_checks(dev, prod):
    # dev's default backend is the in-cluster Prometheus; prod's is managedPrometheus (issue 29: no Prometheus
    # pods to check in the cluster, only the node agent).
    assert dev.metrics is True and prod.metrics is False
    assert [c.name for c in cm.metrics_checks(dev)] == ["metrics", "node-agent"]
    assert [c.name for c in cm.metrics_checks(prod)] == ["node-agent"]
    assert cm.metrics_checks(dataclasses.replace(dev, metrics=False, addons=())) == []


def test_metrics_pass_with_the_stack_and_an_exporter_per_gpu_node(dev, make_ctx):
    nodes = healthy_nodes(dev, gpu_nodes=True)
    gpu = [n["metadata"]["name"] for n in nodes if n["metadata"]["name"].startswith("gpu-")]
    exporters = [pod(f"dcgm-exporter-{i}", "nvidia-gpu", name) for i, name in enumerate(gpu)]
    outcome = cm.check_metrics(make_ctx(dev, FakeCluster(nodes, {"monitoring": STACK_PODS, "nvidia-gpu": exporters})))
    assert outcome.status == "pass"
    assert outcome.evidence.endswith(f"DCGM exporter on {len(gpu)} GPU node(s)")


def test_metrics_fail_naming_the_missing_part(dev, make_ctx):
    pods = [p for p in STACK_PODS if not p["metadata"]["name"].startswith("prometheus-")]
    failure = _fail(cm.check_metrics, make_ctx(dev, FakeCluster(healthy_nodes(dev), {"monitoring": pods}))).outcome
    assert failure.evidence.startswith("no Running, Ready pod of Prometheus in namespace monitoring")


def test_metrics_fail_on_a_gpu_node_without_exporter(dev, make_ctx):
    nodes = healthy_nodes(dev, gpu_nodes=True)
    failure = _fail(cm.check_metrics, make_ctx(dev, FakeCluster(nodes, {"monitoring": STACK_PODS}))).outcome
    assert "no running DCGM exporter on GPU node(s) ['gpu-0', 'gpu-1']" in failure.evidence
    assert "5555" in failure.cause


def test_node_agent_on_every_ready_node(dev, make_ctx):
    nodes = healthy_nodes(dev)
    agents = [pod(f"eks-node-monitoring-agent-{i}", "kube-system", n["metadata"]["name"]) for i, n in enumerate(nodes)]
    outcome = cm.check_node_agent(make_ctx(dev, FakeCluster(nodes, {"kube-system": agents})))
    assert outcome.status == "pass" and f"all {len(nodes)} Ready node(s)" in outcome.evidence
    failure = _fail(cm.check_node_agent, make_ctx(dev, FakeCluster(nodes, {"kube-system": agents[1:]}))).outcome
    assert failure.evidence == f"no running eks-node-monitoring-agent on node(s) ['{nodes[0]['metadata']['name']}']"
