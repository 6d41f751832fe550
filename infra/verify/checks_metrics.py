"""Checks of what issue 29 builds: the metrics stack running, the exporters on the GPU nodes, the node agent.

What they can see from the API alone: the pods. Whether samples arrive in Prometheus is seen in its own UI
(`kubectl -n monitoring port-forward svc/kube-prometheus-stack-prometheus 9090`, Status > Targets): the verify
seam has no service proxy call, so "metrics arriving" stops at "every scraper and exporter runs where it must".
"""

from __future__ import annotations

from typing import Any

from gpuplane.infra.verify.checks_control import is_ready, nodes_by_group
from gpuplane.infra.verify.cluster import condition
from gpuplane.infra.verify.expect import Expectations
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register
from gpuplane.manifests import versions

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
    pods = [p for p in ctx.cluster.list_pods(versions.MONITORING_NAMESPACE) if _running_ready(p)]
    missing = [
        part for part, prefix in METRICS_PODS.items() if not any(p["metadata"]["name"].startswith(prefix) for p in pods)
    ]
    if missing:
        raise CheckFailed(
            f"no Running, Ready pod of {', '.join(missing)} in namespace {versions.MONITORING_NAMESPACE}",
            "the kube-prometheus-stack release did not install, or its pods cannot start (no room on the system "
            "nodes, an image pull)",
            f"`kubectl -n {versions.MONITORING_NAMESPACE} get pods` and `describe` the missing one; "
            "`helm -n monitoring status kube-prometheus-stack`",
        )
    gpu_nodes = _gpu_nodes(ctx) if ctx.expect.dcgm_exporter else []
    exporters = {
        (p.get("spec") or {}).get("nodeName")
        for p in ctx.cluster.list_pods(versions.NVIDIA_NAMESPACE)
        if "dcgm-exporter" in p["metadata"]["name"] and _running_ready(p)
    }
    blind = sorted(str(n["metadata"]["name"]) for n in gpu_nodes if n["metadata"]["name"] not in exporters)
    if blind:
        raise CheckFailed(
            f"no running DCGM exporter on GPU node(s) {blind}: no GPU metrics, no XID alert there",
            "the exporter cannot reach the node monitoring agent's host engine (port 5555 on the node), or its pod "
            "does not tolerate the node's taints",
            f"`kubectl -n {versions.NVIDIA_NAMESPACE} logs` of the exporter pod on that node; docs/operations.md, "
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
    if versions.ADDON_NODE_MONITORING_AGENT in expect.addons:
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
