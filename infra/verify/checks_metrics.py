"""Checks of the metrics stack and node repair: the metrics stack running, samples arriving in it, the node agent.

`metrics` sees the pods (every scraper and exporter runs where it must); `metrics-arriving` asks the
in-cluster Prometheus itself, through the API server's service proxy (`VerifyCluster.service_proxy_get`), for
samples of every source the stack should feed (`samples.sources`), and on a miss reads its targets' state.
The AMP backend's checks are in `checks_amp.py`.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlparse

from gpuplane.infra.verify import promapi, samples
from gpuplane.infra.verify.checks_control import is_ready, nodes_by_group
from gpuplane.infra.verify.cluster import condition
from gpuplane.infra.verify.expect import Expectations
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register
from gpuplane.manifests import wellknown

# Pod name prefixes of kube-prometheus-stack's parts (release `kube-prometheus-stack`): the operator's
# StatefulSets `prometheus-<name>` and `alertmanager-<name>`, and the Deployments of its subcharts.
METRICS_PODS: dict[str, str] = {
    "Prometheus": "prometheus-kube-prometheus-stack-prometheus-",
    "Alertmanager": "alertmanager-kube-prometheus-stack-alertmanager-",
    "Prometheus operator": "kube-prometheus-stack-operator-",
    "kube-state-metrics": "kube-prometheus-stack-kube-state-metrics-",
}
NODE_AGENT_PREFIX = "eks-node-monitoring-agent-"


def _running_ready(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and condition(pod, "Ready").get("status") == "True"


def _gpu_nodes(ctx: Context) -> list[dict[str, Any]]:
    groups = nodes_by_group(ctx.cluster.list_nodes())
    return [n for g in ctx.expect.gpu_groups for n in groups.get(g.name, []) if is_ready(n)]


def check_metrics(ctx: Context) -> Outcome:
    """kube-prometheus-stack's parts run, and a DCGM exporter runs on every Ready GPU node."""
    pods = [p for p in ctx.cluster.list_pods(wellknown.MONITORING_NAMESPACE) if _running_ready(p)]
    missing = [
        part for part, prefix in METRICS_PODS.items() if not any(p["metadata"]["name"].startswith(prefix) for p in pods)
    ]
    if missing:
        raise CheckFailed(
            f"no Running, Ready pod of {', '.join(missing)} in namespace {wellknown.MONITORING_NAMESPACE}",
            "the kube-prometheus-stack release did not install, or its pods cannot start (no room on the system "
            "nodes, an image pull)",
            f"`kubectl -n {wellknown.MONITORING_NAMESPACE} get pods` and `describe` the missing one; "
            "`helm -n monitoring status kube-prometheus-stack`",
        )
    gpu_nodes = _gpu_nodes(ctx) if ctx.expect.dcgm_exporter else []
    exporters = {
        (p.get("spec") or {}).get("nodeName")
        for p in ctx.cluster.list_pods(wellknown.NVIDIA_NAMESPACE)
        if "dcgm-exporter" in p["metadata"]["name"] and _running_ready(p)
    }
    blind = sorted(str(n["metadata"]["name"]) for n in gpu_nodes if n["metadata"]["name"] not in exporters)
    if blind:
        raise CheckFailed(
            f"no running DCGM exporter on GPU node(s) {blind}: no GPU metrics, no XID alert there",
            "the exporter cannot reach the node monitoring agent's host engine (port 5555 on the node), or its pod "
            "does not tolerate the node's taints",
            f"`kubectl -n {wellknown.NVIDIA_NAMESPACE} logs` of the exporter pod on that node; docs/operations.md, "
            "'One DCGM host engine per node'",
        )
    where = f"; DCGM exporter on {len(gpu_nodes)} GPU node(s)" if gpu_nodes else "; no GPU node up to check exporters"
    return passed(f"{', '.join(METRICS_PODS)} Running{where}", gpuNodes=len(gpu_nodes))


def check_node_agent(ctx: Context) -> Outcome:
    """The node monitoring agent runs on every Ready node: without it, node auto repair has no condition to act on."""
    nodes = [n for n in ctx.cluster.list_nodes() if is_ready(n)]
    covered = {
        (p.get("spec") or {}).get("nodeName")
        for p in ctx.cluster.list_pods("kube-system")
        if p["metadata"]["name"].startswith(NODE_AGENT_PREFIX) and _running_ready(p)
    }
    bare = sorted(str(n["metadata"]["name"]) for n in nodes if n["metadata"]["name"] not in covered)
    if bare:
        raise CheckFailed(
            f"no running eks-node-monitoring-agent on node(s) {bare}",
            "the add-on is not ACTIVE, or its pod crashes on these nodes; repair then never sees their conditions",
            "`kubectl -n kube-system get pods -o wide -l app.kubernetes.io/name=eks-node-monitoring-agent`; "
            "`aws eks describe-addon --addon-name eks-node-monitoring-agent`",
        )
    return passed(f"eks-node-monitoring-agent Running on all {len(nodes)} Ready node(s)", nodes=len(nodes))


def prometheus_service() -> tuple[str, str, int]:
    """(namespace, Service, port) of the stack's Prometheus, read from `wellknown.PROMETHEUS_URL`."""
    url = urlparse(wellknown.PROMETHEUS_URL)
    name, namespace = str(url.hostname).split(".")[:2]
    return namespace, name, int(url.port or 80)


def _proxy_failed(exc: Exception, what: str) -> CheckFailed:
    """A service proxy call that failed, explained by its HTTP status."""
    namespace, name, port = prometheus_service()
    status = getattr(exc, "status", None)
    seen = f"{what} through the API server's service proxy failed: HTTP {status} {str(exc).splitlines()[0][:200]}"
    if status in (401, 403):
        return CheckFailed(
            seen,
            f"the kubeconfig's user may not `get` `services/proxy` in namespace {namespace}",
            "run verify as a cluster admin (`gpuplane kubeconfig`: the identity of `cluster.adminPrincipals` or the "
            f"stack's creator), or grant `get` on `services/proxy` in {namespace} (docs/verify.md)",
        )
    if status == 404:
        return CheckFailed(
            seen,
            f"no Service {namespace}/{name}: the kube-prometheus-stack release did not install its Prometheus",
            f"`kubectl -n {namespace} get svc`; `helm -n {namespace} status kube-prometheus-stack`",
        )
    return CheckFailed(
        seen,
        f"no Ready Prometheus pod behind Service {namespace}/{name}:{port}, or the control plane cannot reach the "
        "pod (the cluster security group must admit it to the pod's port)",
        f"`kubectl -n {namespace} get pods,endpoints` and the Prometheus pod's log",
    )


def _proxy_get(ctx: Context, path: str, params: dict[str, str], what: str) -> str:
    namespace, name, port = prometheus_service()
    try:
        return ctx.cluster.service_proxy_get(namespace, name, port, path, params)
    except Exception as exc:
        body = getattr(exc, "body", None)
        if getattr(exc, "status", None) in (400, 422) and body:  # Prometheus's own answer to a bad query
            return body.decode() if isinstance(body, bytes) else str(body)
        raise _proxy_failed(exc, what) from None


def prometheus_query(ctx: Context) -> samples.Query:
    """Instant queries to the in-cluster Prometheus (`/api/v1/query`) through the service proxy."""

    def query(promql: str) -> list[dict[str, Any]]:
        text = _proxy_get(ctx, "api/v1/query", {"query": promql}, f"query {promql}")
        return promapi.prometheus_answer(text)

    return query


def prometheus_targets(ctx: Context) -> samples.Diagnose:
    """What Prometheus knows of each missing source's targets (`/api/v1/targets?state=active`)."""

    def diagnose(found: samples.Found, by_name: Any, ips: Any) -> list[str]:
        try:
            doc = json.loads(_proxy_get(ctx, "api/v1/targets", {"state": "active"}, "targets"))
            targets = list((doc.get("data") or {}).get("activeTargets") or [])
        except (CheckFailed, ValueError, AttributeError) as exc:
            return [f"targets not read ({exc})"]
        lines = []
        for name, what in found.missing.items():
            source = by_name[name]
            if what == [""]:
                seen = samples.target_lines(targets, source)
                lines.append(f"{name}: {', '.join(seen) if seen else 'no active target (nothing discovered)'}")
                continue
            for node in what:
                hosts = [ip for ip, on in ips.items() if on == node]
                seen = samples.target_lines(targets, source, hosts) if hosts else []
                lines.append(
                    f"{name} on {node}: "
                    + (", ".join(seen) if seen else "no exporter target there" if hosts else "no exporter pod there")
                )
        return lines

    return diagnose


def check_metrics_arriving(ctx: Context) -> Outcome:
    """Prometheus holds samples of every source the stack should feed (DCGM per GPU node now, ...)."""
    try:
        return samples.arriving(
            ctx,
            prometheus_query(ctx),
            store="Prometheus",
            diagnose=prometheus_targets(ctx),
            cause="the target is down or failing (its last error above), or Prometheus discovered no target (a "
            "ServiceMonitor/PodMonitor missing, or one its selectors miss), or the exporter emits no such series yet",
            fix=f"Prometheus's Status > Targets (`kubectl -n {wellknown.MONITORING_NAMESPACE} port-forward "
            "svc/kube-prometheus-stack-prometheus 9090`)",
        )
    except promapi.QueryError as exc:
        raise CheckFailed(
            f"querying Prometheus failed: {exc}",
            "something other than Prometheus answered on its Service port, or Prometheus refused the query",
            f"`kubectl -n {wellknown.MONITORING_NAMESPACE} logs` of the Prometheus pod; report it if it persists",
        ) from None


def metrics_after(expect: Expectations) -> tuple[str, ...]:
    """The checks a samples check lets finish first: the GPU probes (a GPU node up) and serving (requests)."""
    return (*(f"gpu-{g.name}" for g in expect.gpu_groups), *(("serving",) if expect.variants else ()))


@register("metrics", order=80)
def metrics_checks(expect: Expectations) -> list[Check]:
    """The metrics stack where it is on; the node agent where a group repairs its nodes."""
    made = []
    if expect.metrics:
        made.append(
            Check(
                "metrics",
                "Metrics stack and GPU exporters",
                check_metrics,
                needs=("nodes",),
                deadline_s=60,
                proves="Prometheus, Alertmanager, the operator and kube-state-metrics run; a DCGM exporter on "
                "every Ready GPU node",
            )
        )
    if expect.metrics:
        made.append(
            Check(
                "metrics-arriving",
                "Metrics arriving in Prometheus",
                check_metrics_arriving,
                needs=("metrics",),
                after=metrics_after(expect),
                deadline_s=240,
                proves="Prometheus holds recent samples of each source the stack feeds it: DCGM from every Ready GPU "
                "node, kube-state-metrics, TF Serving's request counter, Kueue's pending workloads",
            )
        )
    if wellknown.ADDON_NODE_MONITORING_AGENT in expect.addons:
        made.append(
            Check(
                "node-agent",
                "Node monitoring agent (node auto repair)",
                check_node_agent,
                needs=("nodes",),
                deadline_s=60,
                proves="the agent whose conditions node auto repair acts on runs on every Ready node",
            )
        )
    return made
