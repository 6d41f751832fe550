"""The cloudwatch backend's verify checks: the agent per node, GPU metrics in CloudWatch (fakes, botocore Stubber)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.stub import Stubber

from gpuplane.infra.verify import aws as verify_aws
from gpuplane.infra.verify import checks_cloudwatch as cc
from gpuplane.infra.verify.model import CheckFailed
from gpuplane.manifests import cloudwatch, wellknown
from tests.verify.fakes import FakeAws, FakeCluster, active_addons, healthy_nodes, pod


class CloudWatchFake(FakeAws):
    """FakeAws with the Container Insights seam: fixed answers per metric name."""

    def __init__(self, answers, addons=None) -> None:
        super().__init__(addons)
        self.answers = answers
        self.asked: list[tuple[str, tuple[str, ...]]] = []

    def container_insights_metrics(self, cluster, names, start, end):
        assert end - start == timedelta(minutes=cc.RECENT_MINUTES)
        self.asked.append((cluster, tuple(names)))
        return {n: self.answers.get(n, {"listed": False, "values": []}) for n in names}


@pytest.fixture
def cw(dev):
    return dataclasses.replace(dev, addons=(*dev.addons, wellknown.ADDON_CLOUDWATCH_OBSERVABILITY))


def _agents(nodes, skip=()):
    return [
        pod(f"cloudwatch-agent-{i}", wellknown.CLOUDWATCH_NAMESPACE, n["metadata"]["name"])
        for i, n in enumerate(nodes)
        if n["metadata"]["name"] not in skip
    ]


def test_checks_are_made_only_with_the_cloudwatch_addon(dev, cw):
    assert cc.cloudwatch_checks(dev) == []
    assert [c.name for c in cc.cloudwatch_checks(cw)] == ["cloudwatch-agent", "cloudwatch-gpu-metrics"]


def test_agent_on_every_ready_node_passes_and_a_bare_node_fails(cw, make_ctx):
    nodes = healthy_nodes(cw, gpu_nodes=True)
    ok = cc.check_agent(make_ctx(cw, FakeCluster(nodes, {wellknown.CLOUDWATCH_NAMESPACE: _agents(nodes)})))
    assert ok.status == "pass" and ok.evidence == f"CloudWatch agent Running on all {len(nodes)} Ready node(s)"
    # The cluster scraper (a Deployment) does not count as a node's agent.
    scraper = [pod("cloudwatch-agent-cluster-scraper-7d9-abc", wellknown.CLOUDWATCH_NAMESPACE, "gpu-0")]
    pods = _agents(nodes, skip={"gpu-0"}) + scraper
    with pytest.raises(CheckFailed) as caught:
        cc.check_agent(make_ctx(cw, FakeCluster(nodes, {wellknown.CLOUDWATCH_NAMESPACE: pods})))
    outcome = caught.value.outcome
    assert "no running CloudWatch agent on node(s) ['gpu-0']" in outcome.evidence
    assert "Pod Identity" in outcome.cause and "describe-addon" in outcome.fix


def test_gpu_metrics_skip_without_gpu_nodes(cw, make_ctx):
    fake = CloudWatchFake({})
    outcome = cc.check_gpu_metrics(make_ctx(cw, FakeCluster(healthy_nodes(cw)), fake))
    assert outcome.status == "skipped" and "no GPU node up" in outcome.evidence
    assert fake.asked == []


def test_gpu_metrics_pass_when_listed_and_recent(cw, make_ctx):
    answers = {n: {"listed": True, "values": [12.0, 40.5]} for n in cloudwatch.GPU_METRICS}
    fake = CloudWatchFake(answers)
    outcome = cc.check_gpu_metrics(make_ctx(cw, FakeCluster(healthy_nodes(cw, gpu_nodes=True)), fake))
    assert outcome.status == "pass" and "node_gpu_utilization max 40.5" in outcome.evidence
    assert fake.asked == [(cw.cluster_name, cloudwatch.GPU_METRICS)]


def test_gpu_metrics_fail_naming_what_is_missing(cw, make_ctx):
    answers = {n: {"listed": True, "values": [1.0]} for n in cloudwatch.GPU_METRICS}
    answers["node_gpu_memory_utilization"] = {"listed": True, "values": []}
    answers["node_gpu_limit"] = {"listed": False, "values": []}
    with pytest.raises(CheckFailed) as caught:
        cc.check_gpu_metrics(make_ctx(cw, FakeCluster(healthy_nodes(cw, gpu_nodes=True)), CloudWatchFake(answers)))
    evidence = caught.value.outcome.evidence
    assert "never published ['node_gpu_limit']" in evidence
    assert "no data points of ['node_gpu_memory_utilization', 'node_gpu_limit'] in the last 15 minutes" in evidence


def test_gpu_metrics_skip_on_a_seam_without_cloudwatch(cw, make_ctx):
    outcome = cc.check_gpu_metrics(
        make_ctx(cw, FakeCluster(healthy_nodes(cw, gpu_nodes=True)), FakeAws(active_addons(cw)))
    )
    assert outcome.status == "skipped" and "CloudWatch not asked" in outcome.evidence


def test_stack_aws_asks_list_metrics_and_get_metric_data_as_the_model_says():
    """The requests and answers are checked against botocore's `cloudwatch` model by the Stubber."""
    client = boto3.client("cloudwatch", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(client)
    end = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    start = end - timedelta(minutes=15)
    names = ("node_gpu_utilization", "node_gpu_limit")
    dims = [{"Name": "ClusterName", "Value": "c"}]
    stub.add_response(
        "list_metrics",
        {"Metrics": [{"Namespace": "ContainerInsights", "MetricName": names[0], "Dimensions": dims}]},
        {"Namespace": "ContainerInsights", "MetricName": names[0], "Dimensions": dims, "RecentlyActive": "PT3H"},
    )
    stub.add_response(
        "list_metrics",
        {"Metrics": []},
        {"Namespace": "ContainerInsights", "MetricName": names[1], "Dimensions": dims, "RecentlyActive": "PT3H"},
    )
    queries = [
        {
            "Id": f"m{i}",
            "MetricStat": {
                "Metric": {"Namespace": "ContainerInsights", "MetricName": n, "Dimensions": dims},
                "Period": 60,
                "Stat": "Maximum",
            },
        }
        for i, n in enumerate(names)
    ]
    stub.add_response(
        "get_metric_data",
        {
            "MetricDataResults": [
                {"Id": "m0", "Values": [55.0], "Timestamps": [end], "StatusCode": "Complete"},
                {"Id": "m1", "Values": [], "Timestamps": [], "StatusCode": "Complete"},
            ]
        },
        {"MetricDataQueries": queries, "StartTime": start, "EndTime": end},
    )
    with stub:
        found = verify_aws.StackAws(None, lambda: None, cloudwatch=client).container_insights_metrics(  # type: ignore[arg-type]
            "c", names, start, end
        )
    assert found == {
        "node_gpu_utilization": {"listed": True, "values": [55.0]},
        "node_gpu_limit": {"listed": False, "values": []},
    }
    stub.assert_no_pending_responses()
