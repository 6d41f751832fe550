"""Samples arriving in a Prometheus-compatible store: which sources the stack should feed, and whether they do.

Why one module for both stores: the in-cluster Prometheus (read through the API server's service proxy) and
an Amazon Managed Service for Prometheus workspace (read with a SigV4-signed query) answer the same HTTP API
(`/api/v1/query`, an instant query: only series with a sample in the last 5 minutes, Prometheus's lookback).
So "metrics arriving" is one rule, given a `query` function and a `diagnose` function that says, for what is
missing, what the store knows of its scrape target (Prometheus's `/api/v1/targets`; AMP has no targets API,
so there `up` for the job).

The metric names are the ones the rules, dashboards and scaling queries read (`manifests/observability.py`),
never retyped here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from gpuplane.infra.verify.checks_control import is_ready, nodes_by_group
from gpuplane.infra.verify.model import CheckFailed, Context, Outcome, passed
from gpuplane.manifests import observability as obs
from gpuplane.manifests import queue as queue_manifests
from gpuplane.manifests import wellknown

if TYPE_CHECKING:
    from gpuplane.infra.verify.expect import Expectations

Query = Callable[[str], list[dict[str, Any]]]
"""PromQL instant query -> the result vector (`[{"metric": {...}, "value": [t, "v"]}]`); `QueryError` on an error."""

GPU_UTIL: Final = obs.DCGM_METRICS[0]
"""`DCGM_FI_DEV_GPU_UTIL`: one series per GPU, the first DCGM field the dashboards read."""


@dataclass(frozen=True)
class Source:
    """One exporter the stack's store should hold samples of."""

    name: str
    metric: str
    job: str
    """A regex (full match) on the `job` label of its scrape targets."""
    by: str = ""
    """The label whose values the evidence lists (`model_name` for TF Serving); '' counts series."""
    look: str = ""
    """What to look at when no sample arrives."""

    @property
    def query(self) -> str:
        """The PromQL that finds its samples."""
        if self.name == "DCGM":
            return self.metric  # one series per GPU, labels kept: they say which node
        return f"count by ({self.by}) ({self.metric})" if self.by else f"count({self.metric})"


DCGM = Source(
    "DCGM",
    GPU_UTIL,
    obs.DCGM_JOB_RE,
    look=f"`kubectl -n {wellknown.NVIDIA_NAMESPACE} get pods -o wide` (the exporter on that node) and its log",
)
KUBE_STATE = Source(
    "kube-state-metrics",
    obs.KUBE_STATE_METRICS[0],
    "kube-state-metrics",
    look=f"`kubectl -n {wellknown.MONITORING_NAMESPACE} get pods` (kube-prometheus-stack-kube-state-metrics)",
)
TF_SERVING = Source(
    "TF Serving",
    obs.TF_SERVING_METRICS[0],
    f".*{obs.SERVING_MONITOR}",
    by="model_name",
    look=f"the serving pods' `{wellknown.TF_SERVING_METRICS_PATH}` on their REST port (their monitoring config); the "
    "`serving` check sends the predict calls this counter counts",
)
KUEUE = Source(
    "Kueue",
    obs.KUEUE_METRICS[0],
    ".*kueue.*",
    look=f"`kubectl -n {wellknown.KUEUE_NAMESPACE} get servicemonitor,svc,pods`: with the in-cluster Prometheus the "
    "chart's ServiceMonitor and Prometheus's access to Kueue's HTTPS metrics port; with AMP the plain-HTTP relay "
    f"`{queue_manifests.RELAY_NAME}` (Service `{queue_manifests.RELAY_SERVICE}`) and its log",
)
AUTOSCALER = Source(
    "cluster-autoscaler",
    obs.AUTOSCALER_METRICS[0],
    # The name itself (letters and hyphens: a regex matching only itself). Not `re.escape`d: its `\-` would be an
    # unknown escape inside the PromQL string of AMP's `up{job=~"..."}` and fail the query.
    obs.AUTOSCALER_METRICS_JOB,
    look=f"`kubectl -n {wellknown.CLUSTER_AUTOSCALER_NAMESPACE} get servicemonitor,svc,pods "
    f"-l app.kubernetes.io/instance={wellknown.CLUSTER_AUTOSCALER_RELEASE}` (Service "
    f"`{wellknown.CLUSTER_AUTOSCALER_SERVICE}`, port {wellknown.CLUSTER_AUTOSCALER_METRICS_PORT_NAME} -> "
    f"{wellknown.CLUSTER_AUTOSCALER_METRICS_PORT}) and the autoscaler's log",
)


def sources(expect: Expectations) -> tuple[list[Source], list[str]]:
    """The sources this stack's store should hold, and a line for each one left out and why.

    The same for both Prometheus stores: the AMP collector scrapes Kueue through the plain-HTTP relay
    (`manifests/queue.py` `metrics_relay_objects`, job `kueue-controller-manager-metrics-service` as in-cluster),
    and the cluster-autoscaler's plain-HTTP Service directly (the same `job` as its ServiceMonitor's). The
    autoscaler's `cluster_autoscaler_nodes_count` is set on every loop, so it arrives on an idle cluster too.
    """
    found, left_out = [KUBE_STATE], []
    if expect.gpu_groups and expect.dcgm_exporter:
        found.insert(0, DCGM)
    elif expect.gpu_groups:
        left_out.append("DCGM: observability.dcgmExporter is off")
    if expect.variants:
        found.append(TF_SERVING)
    if expect.training:
        found.append(KUEUE)
    if expect.autoscaler:
        found.append(AUTOSCALER)
    return found, left_out


@dataclass
class Found:
    """What one look at the store found."""

    seen: dict[str, str] = field(default_factory=dict)
    """Source -> what arrived (`3 series`, `models mnist, resnet`, `2 GPU(s) on gpu-0`)."""
    missing: dict[str, list[str]] = field(default_factory=dict)
    """Source -> what is missing of it ([''] for the whole source, else the GPU nodes without samples)."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Source -> why it was not looked for this time (no GPU node up)."""


def dcgm_nodes(
    series: Sequence[Mapping[str, Any]], exporter_ips: Mapping[str, str], nodes: Sequence[str]
) -> dict[str, int]:
    """GPU series per node name.

    A series' node: its `node` label (the managed collector's relabelling), else `kubernetes_node`, else the
    node of the exporter pod whose IP is its `instance` (`<pod IP>:<port>`, what endpoint discovery gives the
    in-cluster ServiceMonitor's targets), else the exporter's host label when that is a node's name: `Hostname`
    up to dcgm-exporter 4.8.2, `hostname` after (NVIDIA/dcgm-exporter d5e5f51).
    """
    known = set(nodes)
    counts: dict[str, int] = {}
    for item in series:
        labels = item.get("metric") or {}
        host = str(labels.get("instance", "")).rsplit(":", 1)[0].strip("[]")
        where = labels.get("node") or labels.get("kubernetes_node") or exporter_ips.get(host)
        hostname = labels.get("Hostname") or labels.get("hostname")
        if not where and hostname in known:
            where = hostname
        if where:
            counts[str(where)] = counts.get(str(where), 0) + 1
    return counts


def look(
    query: Query,
    wanted: Sequence[Source],
    gpu_nodes: Sequence[str],
    exporter_ips: Mapping[str, str],
    no_gpu_reason: str,
) -> Found:
    """Query the store once for every source; `QueryError` propagates (the store itself failed)."""
    found = Found()
    for source in wanted:
        if source is DCGM and not gpu_nodes:
            found.skipped[source.name] = no_gpu_reason
            continue
        result = query(source.query)
        if source is DCGM:
            per_node = dcgm_nodes(result, exporter_ips, gpu_nodes)
            blind = [n for n in gpu_nodes if not per_node.get(n)]
            if blind:
                found.missing[source.name] = blind
            covered = [f"{per_node[n]} GPU(s) on {n}" for n in gpu_nodes if per_node.get(n)]
            if covered:
                found.seen[source.name] = ", ".join(covered)
        elif not result:
            found.missing[source.name] = [""]
        elif source.by:
            values = sorted({str((r.get("metric") or {}).get(source.by, "?")) for r in result})
            found.seen[source.name] = f"{source.by} {', '.join(values)}"
        else:
            count = sum(int(float(r.get("value", [0, "0"])[1])) for r in result)
            found.seen[source.name] = f"{count} series"
    return found


def missing_lines(found: Found, by_name: Mapping[str, Source]) -> list[str]:
    """One phrase per missing source: `no NAME from GPU node(s) gpu-0 (DCGM)`, `no NAME samples (SOURCE)`."""
    lines = []
    for name, what in found.missing.items():
        source = by_name[name]
        if what == [""]:
            lines.append(f"no {source.metric} samples ({name})")
        else:
            lines.append(f"no {source.metric} from GPU node(s) {', '.join(what)} ({name})")
    return lines


# --- what the store says of the targets --------------------------------------------------------------------
def target_lines(targets: Sequence[Mapping[str, Any]], source: Source, hosts: Sequence[str] = ()) -> list[str]:
    """Prometheus's active targets of a source (`/api/v1/targets`): `instance up|down|unknown (last error: ...)`.

    `hosts`: only the targets on these IPs (a GPU node's exporter), when given.
    """
    pattern = re.compile(source.job)
    lines = []
    for target in targets:
        labels = target.get("labels") or {}
        if not pattern.fullmatch(str(labels.get("job", ""))):
            continue
        instance = str(labels.get("instance", target.get("scrapeUrl", "?")))
        if hosts and instance.rsplit(":", 1)[0].strip("[]") not in hosts:
            continue
        error = str(target.get("lastError") or "")
        lines.append(f"{instance} {target.get('health', 'unknown')}" + (f" (last error: {error})" if error else ""))
    return lines


def up_lines(result: Sequence[Mapping[str, Any]]) -> list[str]:
    """`up` series of a job, one phrase each: `<instance> up=1` (AMP's only word on a target)."""
    return [f"{(r.get('metric') or {}).get('instance', '?')} up={(r.get('value') or [0, '?'])[1]}" for r in result]


# --- the check's loop, for either store --------------------------------------------------------------------
POLL_S: Final = 15.0
"""Between looks at the store: half the scrape interval (30 s, `observability.dcgm_service_monitor_values`)."""
NO_GPU_NODE: Final = (
    "no Ready GPU node now (the GPU probes did not run, or their node has scaled down): DCGM samples not looked for"
)

Diagnose = Callable[[Found, Mapping[str, Source], Mapping[str, str]], list[str]]
"""(what was found, sources by name, exporter pod IP -> node) -> one line per missing part: its target's state."""


def gpu_node_names(ctx: Context) -> list[str]:
    """The Ready nodes of the stack's GPU groups now."""
    groups = nodes_by_group(ctx.cluster.list_nodes())
    return [str(n["metadata"]["name"]) for g in ctx.expect.gpu_groups for n in groups.get(g.name, []) if is_ready(n)]


def exporter_ips(ctx: Context) -> dict[str, str]:
    """Pod IP -> node of every DCGM exporter pod (the in-cluster targets' `instance` is `<pod IP>:9400`)."""
    found = {}
    for pod in ctx.cluster.list_pods(wellknown.NVIDIA_NAMESPACE):
        ip, node = (pod.get("status") or {}).get("podIP"), (pod.get("spec") or {}).get("nodeName")
        if "dcgm-exporter" in pod["metadata"]["name"] and ip and node:
            found[str(ip)] = str(node)
    return found


def arriving(
    ctx: Context,
    query: Query,
    *,
    store: str,
    diagnose: Diagnose,
    cause: str,
    fix: str,
) -> Outcome:
    """Look until every source has samples or the check's time is up (then fail naming what is missing).

    Polls every `POLL_S` (a node the GPU probe just started needs its exporter running and a scrape or two).
    The last look before the deadline decides; what is missing then is diagnosed from the store's view of its
    targets.
    """
    wanted, left_out = sources(ctx.expect)
    by_name = {s.name: s for s in wanted}
    start = ctx.clock()
    while True:
        gpu, ips = (gpu_node_names(ctx), exporter_ips(ctx)) if DCGM in wanted else ([], {})
        found = look(query, wanted, gpu, ips, NO_GPU_NODE)
        lines = missing_lines(found, by_name)
        if not lines:
            seen = "; ".join(f"{name}: {what}" for name, what in found.seen.items())
            notes = [f"{name}: {why}" for name, why in found.skipped.items()] + left_out
            return passed(
                f"{store} holds samples of {seen}" + (f". Not looked for: {'; '.join(notes)}" if notes else ""),
                timings={"samplesSeenAfter": round(ctx.clock() - start, 1)},
                seen=found.seen,
                notLookedFor=notes,
            )
        if ctx.remaining() <= POLL_S:
            break
        ctx.progress(f"waiting for {'; '.join(lines)}")
        ctx.wait(POLL_S)
    targets = diagnose(found, by_name, ips)
    raise CheckFailed(
        f"{'; '.join(lines)} after {ctx.clock() - start:.0f} s"
        + (f". Targets: {'; '.join(targets)}" if targets else ""),
        cause,
        "; ".join([*(by_name[name].look for name in found.missing), fix]),
        details={"seen": found.seen, "missing": found.missing, "targets": targets, "notLookedFor": left_out},
    )
