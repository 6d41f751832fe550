"""The metrics and node-agent checks (issue 29) against fake clusters: each pass, each failure with its fix."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from gpuplane.infra.verify import checks_metrics as cm
from gpuplane.infra.verify import promapi, samples
from gpuplane.infra.verify.model import CheckFailed
from gpuplane.manifests import observability as obs
from tests.verify.fakes import FakeCluster, FakePrometheus, ProxyError, healthy_nodes, pod

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
    # dev's default backend is the in-cluster Prometheus; prod's is managedPrometheus (issue 29): no Prometheus pods
    # in its cluster to check, only the node agent. A prod stack that sets `metrics: prometheus` gets all three.
    assert dev.metrics is True and prod.metrics is False
    assert [c.name for c in cm.metrics_checks(dev)] == ["metrics", "metrics-arriving", "node-agent"]
    assert [c.name for c in cm.metrics_checks(prod)] == ["node-agent"]
    prod_prometheus = dataclasses.replace(prod, metrics=True)
    assert [c.name for c in cm.metrics_checks(prod_prometheus)] == ["metrics", "metrics-arriving", "node-agent"]
    arriving = cm.metrics_checks(dev)[1]
    # It waits for the GPU probe (a GPU node up) and serving (the requests TF Serving counts), whatever their
    # outcome, and needs the pods of the stack running.
    assert arriving.needs == ("metrics",) and arriving.after == ("gpu-gpu", "serving")
    assert cm.metrics_checks(prod_prometheus)[1].after == ("gpu-gpu",)
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


# --- metrics arriving (the in-cluster Prometheus, through the service proxy) ---------------------------------
def _exporter(name: str, node: str, ip: str) -> dict[str, Any]:
    made = pod(name, "nvidia-gpu", node)
    made["status"]["podIP"] = ip
    return made


def _arriving_cluster(
    dev, series: dict[str, Any], *, gpu_nodes: bool = True, targets: list[Any] | None = None, **kw: Any
) -> FakeCluster:
    nodes = healthy_nodes(dev, gpu_nodes=gpu_nodes)
    exporters = [_exporter("dcgm-exporter-a", "gpu-0", "10.0.1.5"), _exporter("dcgm-exporter-b", "gpu-1", "10.0.2.6")]
    cluster = FakeCluster(nodes, {"monitoring": STACK_PODS, "nvidia-gpu": exporters if gpu_nodes else []})
    cluster.prometheus = FakePrometheus(series, targets, **kw)
    return cluster


def _healthy_series() -> dict[str, Any]:
    return {
        # one GPU per node; the in-cluster targets' instance is the exporter pod's IP (endpoint discovery)
        "DCGM_FI_DEV_GPU_UTIL": [
            {"gpu": "0", "instance": "10.0.1.5:9400", "job": "dcgm-exporter"},
            {"gpu": "0", "instance": "10.0.2.6:9400", "job": "dcgm-exporter"},
        ],
        "kube_node_status_condition": [{"node": "system-0", "condition": "Ready"}] * 3,
        ":tensorflow:serving:request_count": [{"model_name": "mobilenet", "status": "OK", "variant": "cpu"}],
        "kueue_pending_workloads": [{"cluster_queue": "gpu", "status": "active"}],
        # one series per node state, from the chart's ServiceMonitor (job: the chart's Service)
        "cluster_autoscaler_nodes_count": [
            {"state": state, "job": "cluster-autoscaler-aws-cluster-autoscaler"} for state in ("ready", "unready")
        ],
    }


def test_the_metric_names_are_the_manifests_own():
    assert samples.GPU_UTIL == "DCGM_FI_DEV_GPU_UTIL" == obs.DCGM_METRICS[0]
    assert samples.KUBE_STATE.metric in obs.KUBE_STATE_METRICS
    assert samples.TF_SERVING.metric == ":tensorflow:serving:request_count" == obs.TF_SERVING_METRICS[0]
    assert samples.KUEUE.metric == "kueue_pending_workloads" == obs.KUEUE_METRICS[0]
    assert samples.DCGM.job == obs.DCGM_JOB_RE
    assert samples.AUTOSCALER.metric == "cluster_autoscaler_nodes_count" in obs.AUTOSCALER_METRICS
    # the job both stores write: the chart's Service (`<release>-aws-cluster-autoscaler`), matched exactly
    assert re.fullmatch(samples.AUTOSCALER.job, "cluster-autoscaler-aws-cluster-autoscaler")
    assert not re.fullmatch(samples.AUTOSCALER.job, "cluster-autoscaler")


def test_arriving_passes_with_every_source_and_reads_prometheus_through_the_proxy(dev, make_ctx):
    cluster = _arriving_cluster(dev, _healthy_series())
    outcome = cm.check_metrics_arriving(make_ctx(dev, cluster))
    assert outcome.status == "pass"
    assert outcome.evidence == (
        "Prometheus holds samples of DCGM: 1 GPU(s) on gpu-0, 1 GPU(s) on gpu-1; kube-state-metrics: 3 series; "
        "TF Serving: model_name mobilenet; Kueue: 1 series; cluster-autoscaler: 2 series"
    )
    assert cluster.prometheus is not None
    namespace, service, port, path, query = cluster.prometheus.calls[0]
    assert (namespace, service, port, path) == ("monitoring", "kube-prometheus-stack-prometheus", 9090, "api/v1/query")
    assert query == {"query": "DCGM_FI_DEV_GPU_UTIL"}
    assert [c[4]["query"] for c in cluster.prometheus.calls[1:]] == [
        "count(kube_node_status_condition)",
        "count by (model_name) (:tensorflow:serving:request_count)",
        "count(kueue_pending_workloads)",
        "count(cluster_autoscaler_nodes_count)",
    ]


def test_a_gpu_series_is_placed_by_its_node_label_or_hostname_too():
    ips = {"10.0.1.5": "gpu-0"}
    series = [
        {"metric": {"node": "gpu-1", "instance": "10.9.9.9:9400"}},  # the managed collector's relabelling
        {"metric": {"kubernetes_node": "gpu-2"}},
        {"metric": {"instance": "10.0.1.5:9400"}},
        {"metric": {"Hostname": "gpu-3"}},
        {"metric": {"Hostname": "dcgm-exporter-xyz"}},  # a pod's hostname: no node
        {"metric": {"hostname": "gpu-4"}},  # the label's name after dcgm-exporter 4.8.2
    ]
    assert samples.dcgm_nodes(series, ips, ["gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4"]) == {
        "gpu-1": 1,
        "gpu-2": 1,
        "gpu-0": 1,
        "gpu-3": 1,
        "gpu-4": 1,
    }


def test_arriving_without_gpu_nodes_says_dcgm_was_not_looked_for(dev, make_ctx):
    series = _healthy_series()
    del series["DCGM_FI_DEV_GPU_UTIL"]
    outcome = cm.check_metrics_arriving(make_ctx(dev, _arriving_cluster(dev, series, gpu_nodes=False)))
    assert outcome.status == "pass"
    assert outcome.evidence.endswith(f"Not looked for: DCGM: {samples.NO_GPU_NODE}")
    assert outcome.details["notLookedFor"] == [f"DCGM: {samples.NO_GPU_NODE}"]


def test_arriving_waits_for_samples_that_come_late(dev, make_ctx):
    # The GPU probe's new node: its exporter's first scrape lands on the third look.
    cluster = _arriving_cluster(dev, _healthy_series(), arrive_after={"DCGM_FI_DEV_GPU_UTIL": 2})
    outcome = cm.check_metrics_arriving(make_ctx(dev, cluster, deadline_s=240))
    assert outcome.status == "pass"
    assert outcome.timings["samplesSeenAfter"] == 2 * samples.POLL_S


def test_arriving_fails_naming_the_gpu_node_without_samples_and_its_target(dev, make_ctx):
    series = _healthy_series()
    series["DCGM_FI_DEV_GPU_UTIL"] = series["DCGM_FI_DEV_GPU_UTIL"][:1]
    targets = [
        {"labels": {"job": "dcgm-exporter", "instance": "10.0.1.5:9400"}, "health": "up", "lastError": ""},
        {
            "labels": {"job": "dcgm-exporter", "instance": "10.0.2.6:9400"},
            "health": "down",
            "lastError": 'Get "http://10.0.2.6:9400/metrics": context deadline exceeded',
        },
    ]
    ctx = make_ctx(dev, _arriving_cluster(dev, series, targets=targets), deadline_s=60)
    failure = _fail(cm.check_metrics_arriving, ctx).outcome
    assert failure.evidence == (
        "no DCGM_FI_DEV_GPU_UTIL from GPU node(s) gpu-1 (DCGM) after 45 s. Targets: DCGM on gpu-1: 10.0.2.6:9400 "
        'down (last error: Get "http://10.0.2.6:9400/metrics": context deadline exceeded)'
    )
    assert failure.fix.startswith(samples.DCGM.look)
    assert failure.details["missing"] == {"DCGM": ["gpu-1"]}


def test_arriving_fails_naming_a_source_without_samples_and_without_target(dev, make_ctx):
    series = _healthy_series()
    del series["kube_node_status_condition"], series["kueue_pending_workloads"]
    targets = [
        {
            "labels": {"job": "kueue-controller-manager-metrics-service", "instance": "10.0.3.7:8443"},
            "health": "down",
            "lastError": "server returned HTTP status 403 Forbidden",
        },
    ]
    failure = _fail(cm.check_metrics_arriving, make_ctx(dev, _arriving_cluster(dev, series, targets=targets))).outcome
    assert failure.evidence.startswith(
        "no kube_node_status_condition samples (kube-state-metrics); no kueue_pending_workloads samples (Kueue) after"
    )
    assert failure.evidence.endswith(
        "Targets: kube-state-metrics: no active target (nothing discovered); Kueue: 10.0.3.7:8443 down (last error: "
        "server returned HTTP status 403 Forbidden)"
    )
    assert samples.KUBE_STATE.look in failure.fix and samples.KUEUE.look in failure.fix


def test_arriving_fails_naming_the_autoscalers_target(dev, make_ctx):
    series = _healthy_series()
    del series["cluster_autoscaler_nodes_count"]
    targets = [
        {
            "labels": {"job": "cluster-autoscaler-aws-cluster-autoscaler", "instance": "10.0.3.9:8085"},
            "health": "down",
            "lastError": 'Get "http://10.0.3.9:8085/metrics": connection refused',
        },
    ]
    failure = _fail(cm.check_metrics_arriving, make_ctx(dev, _arriving_cluster(dev, series, targets=targets))).outcome
    assert failure.evidence.startswith("no cluster_autoscaler_nodes_count samples (cluster-autoscaler) after")
    assert failure.evidence.endswith(
        'Targets: cluster-autoscaler: 10.0.3.9:8085 down (last error: Get "http://10.0.3.9:8085/metrics": '
        "connection refused)"
    )
    assert failure.fix.startswith(samples.AUTOSCALER.look)
    assert "cluster-autoscaler-aws-cluster-autoscaler" in samples.AUTOSCALER.look


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (403, "may not `get` `services/proxy` in namespace monitoring"),
        (404, "no Service monitoring/kube-prometheus-stack-prometheus"),
        (503, "no Ready Prometheus pod behind Service monitoring/kube-prometheus-stack-prometheus:9090"),
    ],
)
def test_arriving_explains_a_proxy_that_fails(dev, make_ctx, status, says):
    cluster = _arriving_cluster(dev, _healthy_series())
    cluster.proxy_error = ProxyError(status)
    failure = _fail(cm.check_metrics_arriving, make_ctx(dev, cluster)).outcome
    assert failure.evidence.startswith(
        f"query DCGM_FI_DEV_GPU_UTIL through the API server's service proxy failed: HTTP {status}"
    )
    assert says in failure.cause


def test_arriving_reports_prometheus_refusing_a_query(dev, make_ctx):
    cluster = _arriving_cluster(dev, _healthy_series())
    cluster.proxy_error = ProxyError(400, '{"status":"error","errorType":"bad_data","error":"parse error"}')
    failure = _fail(cm.check_metrics_arriving, make_ctx(dev, cluster)).outcome
    assert failure.evidence == "querying Prometheus failed: Prometheus answered bad_data: parse error"


def test_sources_follow_the_stack(dev, prod):
    names = lambda found: [s.name for s in found[0]]  # noqa: E731
    # the same for both Prometheus stores: AMP's collector reaches Kueue through the plain-HTTP relay
    # and the autoscaler's plain-HTTP Service directly, wherever the stack runs one
    assert names(samples.sources(dev)) == ["DCGM", "kube-state-metrics", "TF Serving", "Kueue", "cluster-autoscaler"]
    assert names(samples.sources(prod)) == ["DCGM", "kube-state-metrics", "cluster-autoscaler"]
    off = samples.sources(dataclasses.replace(prod, dcgm_exporter=False, autoscaler=False))
    assert names(off) == ["kube-state-metrics"] and off[1] == ["DCGM: observability.dcgmExporter is off"]


def test_a_prometheus_answer_that_is_not_one_is_an_error():
    with pytest.raises(promapi.QueryError, match="not a Prometheus API answer"):
        promapi.prometheus_answer("<html>502 Bad Gateway</html>")
    with pytest.raises(promapi.QueryError, match="not a Prometheus API answer"):
        promapi.prometheus_answer("[]")
    assert promapi.prometheus_answer('{"status":"success","data":{"resultType":"vector","result":[]}}') == []
