"""Checks of `observability.metrics: cloudwatch`: the add-on's agent running, Container Insights GPU metrics arriving.

The add-on's ACTIVE state is the add-on check's (checks_control, every add-on of the stack); here: the CloudWatch
agent on every Ready node (its DaemonSet in `amazon-cloudwatch`), and CloudWatch's own answer that GPU metrics
arrive: ListMetrics (published in the last 3 hours) and GetMetricData (data points in the last 15 minutes) on
`node_gpu_utilization` for the cluster, asked only when a GPU node is up (GPU groups may sit at zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from gpuplane.infra.verify.checks_control import is_ready, nodes_by_group
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register, skipped
from gpuplane.manifests import cloudwatch, wellknown

if TYPE_CHECKING:
    from datetime import datetime

    from gpuplane.infra.verify.expect import Expectations

AGENT_PREFIX = "cloudwatch-agent-"
SCRAPER_PREFIX = "cloudwatch-agent-cluster-scraper"
RECENT_MINUTES = 15


@runtime_checkable
class ContainerInsightsAws(Protocol):
    """What the GPU-metrics check asks of CloudWatch (`StackAws` has it; a seam without it skips the check)."""

    def container_insights_metrics(
        self, cluster: str, names: Sequence[str], start: datetime, end: datetime
    ) -> dict[str, dict[str, Any]]:
        """Per metric name: `listed` (ListMetrics, RecentlyActive PT3H) and `values` (GetMetricData, Maximum)."""


def _running_ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    return status.get("phase") == "Running" and ready


def check_agent(ctx: Context) -> Outcome:
    """The CloudWatch agent runs on every Ready node: no agent, no Container Insights metric from that node."""
    nodes = [n for n in ctx.cluster.list_nodes() if is_ready(n)]
    covered = {
        (p.get("spec") or {}).get("nodeName")
        for p in ctx.cluster.list_pods(wellknown.CLOUDWATCH_NAMESPACE)
        if p["metadata"]["name"].startswith(AGENT_PREFIX)
        and not p["metadata"]["name"].startswith(SCRAPER_PREFIX)
        and _running_ready(p)
    }
    bare = sorted(str(n["metadata"]["name"]) for n in nodes if n["metadata"]["name"] not in covered)
    if bare:
        raise CheckFailed(
            f"no running CloudWatch agent on node(s) {bare}",
            "the amazon-cloudwatch-observability add-on is not ACTIVE, or its agent cannot start there (image pull, "
            "no credentials: the add-on's Pod Identity association)",
            f"`kubectl -n {wellknown.CLOUDWATCH_NAMESPACE} get pods -o wide`; "
            f"`aws eks describe-addon --addon-name {wellknown.ADDON_CLOUDWATCH_OBSERVABILITY}`",
        )
    return passed(f"CloudWatch agent Running on all {len(nodes)} Ready node(s)", nodes=len(nodes))


def check_gpu_metrics(ctx: Context) -> Outcome:
    """Container Insights has GPU metrics of the cluster, and recent ones, while a GPU node is up."""
    groups = nodes_by_group(ctx.cluster.list_nodes())
    gpu_nodes = [n for g in ctx.expect.gpu_groups for n in groups.get(g.name, []) if is_ready(n)]
    if not gpu_nodes:
        return skipped("no GPU node up: Container Insights has no GPU metric to show (GPU groups at zero)")
    if ctx.aws is None or not isinstance(ctx.aws, ContainerInsightsAws):
        return skipped("no AWS session: CloudWatch not asked")
    end = ctx.now()
    try:
        found = ctx.aws.container_insights_metrics(
            ctx.expect.cluster_name, cloudwatch.GPU_METRICS, end - timedelta(minutes=RECENT_MINUTES), end
        )
    except Exception as exc:  # AwsError (credentials, region) or a botocore error
        raise CheckFailed(
            f"CloudWatch did not answer: {getattr(exc, 'message', None) or exc}",
            "no AWS credentials for the stack's identity, or it may not call cloudwatch:ListMetrics/GetMetricData",
            getattr(exc, "fix", "") or "check the stack's AWS identity with `gpuplane preflight STACK`",
        ) from None
    unlisted = [name for name in cloudwatch.GPU_METRICS if not found.get(name, {}).get("listed")]
    silent = [name for name in cloudwatch.GPU_METRICS if not found.get(name, {}).get("values")]
    if unlisted or silent:
        raise CheckFailed(
            f"Container Insights of {ctx.expect.cluster_name}: "
            + (f"never published {unlisted} (ListMetrics, last 3 h)" if unlisted else "")
            + ("; " if unlisted and silent else "")
            + (f"no data points of {silent} in the last {RECENT_MINUTES} minutes" if silent else ""),
            "the add-on's dcgm-exporter does not run on the GPU nodes (its instance type is not in the add-on's "
            "list, or accelerated_compute_metrics is off), or the agent cannot reach it",
            f"`kubectl -n {wellknown.CLOUDWATCH_NAMESPACE} get pods -o wide | grep dcgm`; docs/operations.md, "
            "'observability.metrics: cloudwatch'",
        )
    latest = {name: max(found[name]["values"]) for name in cloudwatch.GPU_METRICS}
    return passed(
        f"Container Insights GPU metrics arriving for {len(gpu_nodes)} GPU node(s): "
        + ", ".join(f"{name} max {value:g}" for name, value in latest.items()),
        gpuNodes=len(gpu_nodes),
    )


@register("cloudwatch", order=81)
def cloudwatch_checks(expect: Expectations) -> list[Check]:
    """The agent and the GPU metrics, where the stack runs the CloudWatch backend."""
    if wellknown.ADDON_CLOUDWATCH_OBSERVABILITY not in expect.addons:
        return []
    return [
        Check(
            "cloudwatch-agent",
            "CloudWatch agent (Container Insights)",
            check_agent,
            needs=("nodes",),
            deadline_s=60,
            proves="the agent that publishes Container Insights runs on every Ready node",
        ),
        Check(
            "cloudwatch-gpu-metrics",
            "Container Insights GPU metrics",
            check_gpu_metrics,
            needs=("nodes",),
            deadline_s=60,
            proves="CloudWatch lists the cluster's GPU metrics and has data points of the last 15 minutes",
        ),
    ]
