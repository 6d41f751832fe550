"""Checks of the control plane and the nodes: API, Kubernetes version, node groups, add-ons, system pods.

These create nothing in the cluster: they read the API (and EKS through boto3) and compare with what the
plan made (`expect`), so each failure can name the group, the label or the add-on and what to do.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from gpuplane.infra.verify.cluster import ClusterUnreachable, condition
from gpuplane.infra.verify.expect import Expectations, GroupExpect
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register, skipped
from gpuplane.manifests import wellknown

# The chart labels its pods `app.kubernetes.io/instance: {{ .Release.Name }}` (charts/cluster-autoscaler
# templates/_helpers.tpl, "cluster-autoscaler.instance-name"); components/autoscaler.py names the release
# `cluster-autoscaler`.
AUTOSCALER_SELECTOR = "app.kubernetes.io/instance=cluster-autoscaler"


def check_api(ctx: Context) -> Outcome:
    """The API server answers, and runs the configured minor version."""
    expect = ctx.expect
    try:
        seen = ctx.cluster.server_version()
    except ClusterUnreachable as exc:
        text = str(exc)
        if any(word in text for word in ("401", "403", "Unauthorized", "Forbidden")):
            raise CheckFailed(
                f"the API server refused the credentials: {text}",
                "the identity in the kubeconfig has no EKS access entry for this cluster (or its token expired)",
                "run `gpuplane kubeconfig STACK` with the profile that created the stack, or add your role to "
                "gpuplane:cluster.adminPrincipals and run `pulumi up`",
            ) from None
        if not expect.public_endpoint:
            raise CheckFailed(
                f"the API server did not answer: {text}",
                "the cluster's endpoint is private (cluster.endpointPublicAccess is false, as prod sets it): it "
                "answers only from inside the VPC",
                "run `gpuplane verify` from a machine in the VPC (a VPN, a peered VPC, a bastion or a CI runner "
                "there, allowed by cluster.apiAccessCidrs or apiAccessSecurityGroupIds)",
            ) from None
        raise CheckFailed(
            f"the API server did not answer: {text}",
            "this machine's address is not in cluster.publicAccessCidrs, the network blocks port 443, or the "
            "cluster is not (yet) ACTIVE",
            "add your address (`curl -s https://checkip.amazonaws.com`/32) to gpuplane:cluster.publicAccessCidrs and "
            "run `pulumi up`; `aws eks describe-cluster` shows the cluster's status",
        ) from None
    if seen != expect.kubernetes_version:
        raise CheckFailed(
            f"the API server runs Kubernetes {seen}; the stack says {expect.kubernetes_version}",
            "the control plane was upgraded outside Pulumi (by hand, or by EKS at the end of standard support), "
            "or an upgrade by `pulumi up` has not finished",
            f"set gpuplane:cluster.kubernetesVersion to {seen} (or the version you want) and run `pulumi up`",
            details={"serverVersion": seen},
        )
    return passed(f"API server answers, Kubernetes {seen} as configured", serverVersion=seen)


# Nodes named one by one in evidence: enough to act on, and a cluster of 30,000 broken nodes stays readable.
LISTED = 20


def first(items: list[str], count: int = LISTED) -> list[str]:
    """The first `count` items, then how many more there are."""
    return items if len(items) <= count else [*items[:count], f"and {len(items) - count} more"]


def _taints(node: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (t.get("key", ""), t.get("value", "") or "", t.get("effect", ""))
        for t in (node.get("spec") or {}).get("taints") or []
    }


def _name(node: dict[str, Any]) -> str:
    return str(node["metadata"]["name"])


def nodes_by_group(nodes: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Nodes by the `gpuplane.io/node-group` label every group's nodes carry."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for node in nodes:
        group = (node["metadata"].get("labels") or {}).get(wellknown.LABEL_NODE_GROUP)
        if group:
            found[group].append(node)
    return found


def is_ready(node: dict[str, Any]) -> bool:
    """The node's Ready condition is True."""
    return condition(node, "Ready").get("status") == "True"


def _group_problems(group: GroupExpect, nodes: list[dict[str, Any]]) -> list[str]:
    problems = []
    for node in nodes:
        labels = node["metadata"].get("labels") or {}
        wrong = {k: v for k, v in group.labels.items() if labels.get(k) != v}
        if wrong:
            shown = ", ".join(f"{k}={v} (node: {labels.get(k, 'missing')})" for k, v in sorted(wrong.items()))
            problems.append(f"{_name(node)} lacks labels {shown}")
        missing = [t for t in group.taints if t not in _taints(node)]
        if missing:
            problems.append(f"{_name(node)} lacks taints {', '.join(f'{k}={v}:{e}' for k, v, e in missing)}")
    return problems


def check_nodes(ctx: Context) -> Outcome:
    """Every group has its minimum of Ready nodes, with the labels and taints the plan gave them."""
    expect = ctx.expect
    grouped = nodes_by_group(ctx.cluster.list_nodes())
    summary, not_ready, short, wrong = [], [], [], []
    for group in expect.groups:
        nodes = grouped.get(group.name, [])
        ready = [n for n in nodes if is_ready(n)]
        for node in nodes:
            if not is_ready(node):
                message = condition(node, "Ready").get("message") or "no Ready condition"
                not_ready.append(f"{_name(node)} ({group.name}): {message}")
        if len(ready) < group.min_size:
            short.append(f"{group.name}: {len(ready)} Ready of minSize {group.min_size}")
        wrong += _group_problems(group, ready)
        zero = " (scales from zero)" if not nodes and group.min_size == 0 else ""
        summary.append(f"{group.name}: {len(ready)}/{len(nodes)} Ready (min {group.min_size}){zero}")
    unknown = sorted(set(grouped) - {g.name for g in expect.groups})
    evidence = "; ".join(summary) + (f"; nodes of groups not in the stack: {unknown}" if unknown else "")
    if short or not_ready:
        raise CheckFailed(
            "; ".join(short + first(not_ready)) + f" [{evidence}]",
            "nodes did not join or are unhealthy: the node role lacks its EKS access entry, the subnets have no "
            "route to the API/registries (NAT), the launch failed (capacity, quota), or the kubelet is failing",
            "`aws eks describe-nodegroup` shows the group's health issues; `kubectl describe node` the kubelet's "
            "conditions; the Auto Scaling group's activity history shows failed launches",
        )
    if wrong:
        raise CheckFailed(
            "; ".join(first(wrong)),
            "the nodes were changed after they joined (labels or taints edited by hand), or the node group was "
            "updated outside Pulumi",
            "run `pulumi up` to restore the group's labels and taints, then replace the nodes "
            "(`kubectl drain` + terminate) so new ones join with them",
        )
    return passed(evidence)


def check_addons(ctx: Context) -> Outcome:
    """Every EKS add-on the stack installs is ACTIVE, at the version EKS reports."""
    if ctx.aws is None:
        return skipped("no AWS session: add-ons not checked")
    expect = ctx.expect
    try:
        found = ctx.aws.addons(expect.cluster_name)
    except Exception as exc:  # AwsError (credentials, region) or a botocore error
        fix = getattr(exc, "fix", "") or "check the stack's AWS identity with `gpuplane preflight STACK`"
        raise CheckFailed(
            f"EKS did not answer about the add-ons: {getattr(exc, 'message', None) or exc}",
            "no AWS credentials for the stack's identity, or it may not call eks:ListAddons/DescribeAddon",
            fix,
        ) from None
    missing = [name for name in expect.addons if name not in found]
    unhealthy = []
    for name in expect.addons:
        addon = found.get(name)
        if addon is not None and addon.get("status") != "ACTIVE":
            issues = [f"{i.get('code')}: {i.get('message')}" for i in (addon.get("health") or {}).get("issues") or []]
            unhealthy.append(f"{name} {addon.get('status')}" + (f" ({'; '.join(issues)})" if issues else ""))
    evidence = ", ".join(
        f"{n} {found[n].get('addonVersion')} {found[n].get('status')}" for n in expect.addons if n in found
    )
    if missing:
        raise CheckFailed(
            f"add-ons missing: {', '.join(missing)}" + (f" [{evidence}]" if evidence else ""),
            "the add-on was deleted outside Pulumi, or `pulumi up` stopped before creating it",
            "run `pulumi up` again; `pulumi stack --show-urns` shows whether Pulumi still tracks it",
        )
    if unhealthy:
        raise CheckFailed(
            f"add-ons not ACTIVE: {', '.join(unhealthy)}",
            "the add-on's pods cannot run (no node for them yet, a missing IAM role/Pod Identity association) or "
            "EKS reports a configuration conflict",
            "`aws eks describe-addon --cluster-name CLUSTER --addon-name NAME` shows the health issues; for a "
            "conflict, `pulumi up` with resolveConflictsOnUpdate OVERWRITE (gpuplane's default) fixes it",
        )
    return passed(evidence or "no add-ons expected", addons={n: found[n].get("addonVersion") for n in expect.addons})


def _running_ready(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and condition(pod, "Ready").get("status") == "True"


def check_system_pods(ctx: Context) -> Outcome:
    """The cluster-autoscaler runs on a CPU node; the device plugin runs on every GPU node of its groups."""
    expect = ctx.expect
    nodes = ctx.cluster.list_nodes()
    group_of = {_name(n): (n["metadata"].get("labels") or {}).get(wellknown.LABEL_NODE_GROUP, "") for n in nodes}
    gpu_names = {g.name for g in expect.gpu_groups}
    lines, problems, causes, fixes = [], [], [], []
    if expect.autoscaler:
        pods = [p for p in ctx.cluster.list_pods("kube-system", AUTOSCALER_SELECTOR) if _running_ready(p)]
        if not pods:
            problems.append("no Running, Ready cluster-autoscaler pod in kube-system")
            causes.append(
                "the Helm release did not install, or its pod cannot start (image pull, its Pod Identity role)"
            )
            fixes.append("`kubectl -n kube-system describe pod -l app.kubernetes.io/instance=cluster-autoscaler`")
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName", "")
            if group_of.get(node) in gpu_names:
                problems.append(f"cluster-autoscaler runs on GPU node {node} ({group_of[node]})")
                causes.append("a GPU node that hosts the autoscaler can never be scaled down: it pays for a GPU idle")
                fixes.append("keep an untainted CPU group; delete the pod so it moves there")
            else:
                lines.append(f"cluster-autoscaler Running on {node} ({group_of.get(node) or 'no group'})")
    plugin_groups = {g.name for g in expect.gpu_groups if g.device_plugin}
    gpu_nodes = [n for n in nodes if group_of.get(_name(n)) in plugin_groups and is_ready(n)]
    if plugin_groups:
        plugin_pods = [
            p
            for p in ctx.cluster.list_pods(wellknown.NVIDIA_NAMESPACE)
            if "device-plugin" in p["metadata"]["name"] and _running_ready(p)
        ]
        covered = {(p.get("spec") or {}).get("nodeName") for p in plugin_pods}
        bare = [_name(n) for n in gpu_nodes if _name(n) not in covered]
        if bare:
            problems.append(f"no running device plugin on GPU nodes {bare}")
            causes.append(
                "the device plugin DaemonSet does not select or tolerate these nodes (labels/taints changed) or its "
                "pod crashes; without it the node advertises no nvidia.com/gpu"
            )
            fixes.append(f"`kubectl -n {wellknown.NVIDIA_NAMESPACE} get ds,pods -o wide` and the pod's logs")
        elif gpu_nodes:
            lines.append(f"device plugin Running on {len(gpu_nodes)} GPU node(s)")
        else:
            lines.append("no GPU node up now: the GPU probe checks the device plugin on the node it starts")
    if problems:
        raise CheckFailed("; ".join(problems), "; ".join(causes), "; ".join(fixes))
    return passed("; ".join(lines) or "no system pods expected (autoscaler off, no GPU group)")


@register("control-plane", order=10)
def control_plane_checks(expect: Expectations) -> list[Check]:
    """The control-plane and node-group checks."""
    return [
        Check(
            "api",
            "API server and Kubernetes version",
            check_api,
            deadline_s=30,
            proves="the API answers from here with these credentials, at the configured minor version",
        ),
        Check(
            "nodes",
            "Node groups Ready, labels and taints",
            check_nodes,
            needs=("api",),
            deadline_s=60,
            proves="every group has its minimum of Ready nodes, each with the plan's labels and taints",
        ),
        Check(
            "addons",
            "EKS add-ons ACTIVE",
            check_addons,
            deadline_s=60,
            proves="every add-on the stack installs is ACTIVE (boto3 DescribeAddon)",
        ),
        Check(
            "system-pods",
            "Cluster-autoscaler and device plugin",
            check_system_pods,
            needs=("nodes",),
            deadline_s=60,
            proves="the autoscaler runs on a CPU node; the device plugin on every GPU node that needs it",
        ),
    ]
