"""Checks that run a small probe pod on CPU nodes: the runtime helper in a real cgroup, shared storage, serving.

Runtime: in a pod with a CPU limit, the helper's thread and memory settings must equal
what the node's cgroup says, under the same `restricted` settings every workload runs with (uid, read-only
root). Storage (point 4): every named volume written in one AZ and read in another. Serving (point 5): every
variant's model AVAILABLE over REST from inside the cluster.
"""

from __future__ import annotations

import math
from typing import Any, Final

from gpuplane.infra.verify import cluster as kc
from gpuplane.infra.verify import pods
from gpuplane.infra.verify.checks_control import is_ready
from gpuplane.infra.verify.expect import Expectations, GroupExpect
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register, skipped
from gpuplane.manifests import scheduling, wellknown
from gpuplane.manifests import verify as probes

# --- the runtime helper against the node's cgroup ----------------------------------------------------------


def cpu_groups(expect: Expectations) -> list[str]:
    """Untainted CPU groups: where a probe without tolerations lands."""
    return [g.name for g in expect.groups if not g.is_gpu and not g.taints]


def expected_threads(quota_cpus: float | None, usable: int) -> tuple[str, str]:
    """(intra-op, inter-op) the helper's inference rule exports; 'unset' when it exports none (docs/runtime.md)."""
    if quota_cpus is None or quota_cpus >= usable:
        return "unset", "unset"
    return str(max(1, min(math.ceil(quota_cpus), usable))), "1"


def parse_cpu_max(text: str) -> float | None:
    """CPUs of a cgroup v2 `cpu.max` (or v1 `quota period`) line; None for no limit; ValueError if unreadable."""
    parts = text.split()
    if not parts or parts[0] in ("max", "-1"):
        return None
    quota, period = int(parts[0]), int(parts[1]) if len(parts) > 1 else 100000
    return quota / period


def _runtime_pod(expect: Expectations, run_id: str, namespace: str) -> dict[str, Any]:
    return probes.runtime_pod(namespace, run_id, uid=expect.uid, gid=expect.gid, node_groups=cpu_groups(expect))


def check_runtime(ctx: Context) -> Outcome:
    """Run the probe and compare the helper's exports with the cgroup's limits."""
    expect = ctx.expect
    done = pods.run_pod(ctx, _runtime_pod(expect, ctx.run_id, ctx.objects.ensure_namespace()))
    report = done.report
    if done.phase != "Succeeded" or "cgroup.cpu.max" not in report:
        raise CheckFailed(
            f"probe pod {done.phase} on {done.node}: {pods.container_failure(done.pod) or done.log[-300:]}",
            "the probe could not run under Pod Security restricted with the helper mounted",
            "`kubectl describe pod` of the probe (run with --keep)",
        )
    limit_cpus = scheduling.cpu_millicores(probes.RUNTIME_CPU) / 1000
    limit_bytes = scheduling.memory_bytes(probes.RUNTIME_MEMORY)
    try:
        quota = parse_cpu_max(report["cgroup.cpu.max"])
    except (ValueError, IndexError):
        quota = None
    usable = int(report.get("nproc", "0")) if report.get("nproc", "").isdigit() else 0
    intra, inter = expected_threads(quota, usable)
    seen = (
        f"cgroup v{report.get('cgroup.version')} cpu.max '{report.get('cgroup.cpu.max')}', memory.max "
        f"{report.get('cgroup.memory.max')}, {usable} usable CPUs; helper: intra-op "
        f"{report.get('env.TF_NUM_INTRAOP_THREADS')}, inter-op {report.get('env.TF_NUM_INTEROP_THREADS')}, "
        f"{report.get('env.GPUPLANE_DETECTED_CPU_MILLICORES')} millicores, "
        f"{report.get('env.GPUPLANE_DETECTED_MEMORY_BYTES')} bytes; uid:gid {report.get('id')}, root "
        f"{report.get('rootfs')}; node {done.node}"
    )
    problems, causes, fixes = [], [], []
    if quota is None or abs(quota - limit_cpus) > 0.001:
        problems.append(
            f"the cgroup's CPU limit is {report.get('cgroup.cpu.max')}, the pod's limit {probes.RUNTIME_CPU}"
        )
        causes.append("the kubelet does not enforce CPU limits as CFS quotas (cpuCFSQuota off in its config)")
        fixes.append(
            "use the EKS AMI's kubelet defaults (the plan's amiType); without quotas the helper has nothing to read"
        )
    if report.get("cgroup.memory.max") != str(limit_bytes):
        problems.append(f"the cgroup's memory.max is {report.get('cgroup.memory.max')}, the pod's limit {limit_bytes}")
        causes.append("the node's cgroup does not carry the pod's memory limit")
        fixes.append("check the node's cgroup driver (systemd, cgroup v2 on AL2023/Bottlerocket)")
    helper = {
        "TF_NUM_INTRAOP_THREADS": intra,
        "TF_NUM_INTEROP_THREADS": inter,
        "OMP_NUM_THREADS": intra,
        "MALLOC_ARENA_MAX": "2",
        "GPUPLANE_DETECTED_CPU_MILLICORES": str(round((quota or 0) * 1000)) if quota is not None else None,
        "GPUPLANE_DETECTED_MEMORY_BYTES": str(limit_bytes),
    }
    wrong = {k: v for k, v in helper.items() if v is not None and report.get(f"env.{k}") != v}
    if wrong and not problems:
        problems.append(
            "helper exports differ from the cgroup: "
            + ", ".join(f"{k}={report.get(f'env.{k}')} (expected {v})" for k, v in sorted(wrong.items()))
        )
        causes.append("the helper misread this node's cgroup layout (a path or format it does not know)")
        fixes.append(
            "report it with the probe's log (run with --keep; `kubectl logs`): docs/runtime.md lists what it reads"
        )
    if report.get("id") != f"{expect.uid}:{expect.gid}" or report.get("rootfs") != "read-only":
        problems.append(
            f"ran as {report.get('id')} with a {report.get('rootfs')} root; "
            f"expected {expect.uid}:{expect.gid} and a read-only root"
        )
        causes.append("the pod's security context was changed on admission (a mutating webhook)")
        fixes.append("check the cluster's admission webhooks (`kubectl get mutatingwebhookconfigurations`)")
    if problems:
        raise CheckFailed("; ".join(problems) + f" [{seen}]", "; ".join(causes), "; ".join(fixes), details=report)
    return passed(
        seen, timings={"podStart": round(done.seen.get("running", done.seen.get("finished", 0.0)), 1)}, report=report
    )


# --- shared storage across AZs -----------------------------------------------------------------------------


def probe_zones(expect: Expectations, nodes: list[dict[str, Any]]) -> list[str]:
    """The zones with a Ready node of an untainted CPU group (where the storage probes can land), sorted."""
    groups = set(cpu_groups(expect))
    zones = set()
    for node in nodes:
        labels = node["metadata"].get("labels") or {}
        if labels.get(wellknown.LABEL_NODE_GROUP) in groups and is_ready(node) and labels.get(probes.ZONE_LABEL):
            zones.add(labels[probes.ZONE_LABEL])
    return sorted(zones)


def _storage_objects(expect: Expectations, run_id: str, zones: list[str]) -> list[dict[str, Any]]:
    """The ingress policy for the run's pods in the workload namespace, then one probe pod per zone (two at most)."""
    return [probes.network_policy(expect.workload_namespace, run_id), *_storage_pods(expect, run_id, zones)]


def _storage_pods(expect: Expectations, run_id: str, zones: list[str]) -> list[dict[str, Any]]:
    ns, volumes = expect.workload_namespace, list(expect.volumes)
    first = probes.storage_pod(ns, run_id, volumes, zones[0], uid=expect.uid, gid=expect.gid, last=len(zones) == 1)
    if len(zones) == 1:
        return [first]
    second = probes.storage_pod(
        ns, run_id, volumes, zones[1], uid=expect.uid, gid=expect.gid, read_from=zones[0], last=True, index=1
    )
    return [first, second]


# What `--second-az` adds besides the scale-down delay, for its cost statement: the node's launch and join,
# the image pull and the two storage probes (a few minutes on EKS's AMIs; the check reports the real time).
SECOND_NODE_RUN_S: Final = 300


def second_node_groups(expect: Expectations, nodes: list[dict[str, Any]]) -> list[GroupExpect]:
    """The untainted CPU groups that can take one more node (below their maxSize now)."""
    counts: dict[str, int] = {}
    for node in nodes:
        group = (node["metadata"].get("labels") or {}).get(wellknown.LABEL_NODE_GROUP, "")
        counts[group] = counts.get(group, 0) + 1
    names = set(cpu_groups(expect))
    return [g for g in expect.groups if g.name in names and counts.get(g.name, 0) < g.max_size]


def _dearest(groups: list[GroupExpect]) -> GroupExpect | None:
    priced = [g for g in groups if g.usd_per_node_hour is not None]
    return max(priced, key=lambda g: g.usd_per_node_hour or 0.0) if priced else None


def second_az_cost(expect: Expectations, groups: list[GroupExpect]) -> str:
    """What `--second-az` costs, before it runs: the dearest group that may get the node, for the run and delay."""
    group = _dearest(groups)
    minutes = (SECOND_NODE_RUN_S + expect.scale_down_unneeded_s) / 60
    if group is None:
        named = ", ".join(g.name for g in groups) or "no CPU group below its maxSize"
        return f"one more node of {named} for about {minutes:.0f} min (no price in the price table)"
    assert group.usd_per_node_hour is not None
    usd = group.usd_per_node_hour * minutes / 60
    return (
        f"one more node of group {group.name} for about {minutes:.0f} min (the check, then the autoscaler's "
        f"scale-down delay of {expect.scale_down_unneeded}): about ${usd:.2f} ({group.price_basis})"
    )


def _node_zone(node: dict[str, Any]) -> str:
    return str((node["metadata"].get("labels") or {}).get(probes.ZONE_LABEL, ""))


def second_node_plan(expect: Expectations, run_id: str) -> dict[str, Any]:
    """The `--second-az` pod as `--plan` prints it (every untainted CPU group; no node to avoid yet)."""
    return probes.second_node_pod(
        probes.probe_namespace_name(run_id),
        run_id,
        uid=expect.uid,
        gid=expect.gid,
        node_groups=cpu_groups(expect),
        avoid_nodes=[],
        deadline_s=600,
    )


def start_second_node(ctx: Context, zone: str) -> tuple[str, dict[str, Any]]:
    """Start a node in another AZ than `zone` (the placeholder pod), wait until it is Ready; (its zone, node).

    Fails the check when the autoscaler refuses (its reason, explained), or the new node is in `zone` too.
    """
    expect = ctx.expect
    nodes = ctx.cluster.list_nodes()
    groups = second_node_groups(expect, nodes)
    if not groups:
        raise CheckFailed(
            f"--second-az: every untainted CPU group ({', '.join(cpu_groups(expect)) or 'none'}) is at its maxSize",
            "no CPU group can take one more node",
            "raise a CPU group's maxSize (gpuplane:nodeGroups[].maxSize) by one, or scale it to 2 nodes by hand",
        )
    pod = probes.second_node_pod(
        ctx.objects.ensure_namespace(),
        ctx.run_id,
        uid=expect.uid,
        gid=expect.gid,
        node_groups=[g.name for g in groups],
        avoid_nodes=[n["metadata"]["name"] for n in nodes],
        deadline_s=int(max(60, ctx.deadline_s)),
    )
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    ctx.create(pod)
    started = ctx.clock()
    while True:
        current = ctx.cluster.read_pod(namespace, name) or pod
        placed = (current.get("spec") or {}).get("nodeName")
        node = next((n for n in ctx.cluster.list_nodes() if n["metadata"]["name"] == placed), None) if placed else None
        if node is not None and is_ready(node):
            break
        waiting = kc.unschedulable_message(current)
        if waiting:
            refusal = kc.scale_up_refusal(ctx.cluster.pod_events(namespace, name))
            if refusal:
                cause, fix = pods.explain_refusal(refusal)
                raise CheckFailed(f"--second-az: the cluster-autoscaler will not add a CPU node: {refusal}", cause, fix)
        ctx.progress(f"second node: {placed or 'waiting for the autoscaler'}, {ctx.clock() - started:.0f} s")
        ctx.wait()
    new_zone = _node_zone(node)
    if new_zone == zone or not new_zone:
        raise CheckFailed(
            f"--second-az: the new node {node['metadata']['name']} is in {new_zone or 'no zone'} too; RWX across "
            "AZs not proven",
            "the group's Auto Scaling group launched it in the same AZ: its subnets span one AZ, or the other AZs "
            "had no capacity for its instance types",
            "`aws autoscaling describe-auto-scaling-groups` (its AvailabilityZones and activity history); "
            "`gpuplane preflight` shows which AZs offer the types",
            details={"secondNode": node["metadata"]["name"]},
        )
    return new_zone, node


def check_storage(ctx: Context) -> Outcome:
    """Write every volume from one AZ, read it from another; owner uid/gid; a throughput figure."""
    expect = ctx.expect
    if not expect.volumes:
        return skipped("the stack has no shared volumes (gpuplane:storage.enabled false)")
    nodes = ctx.cluster.list_nodes()
    zones = probe_zones(expect, nodes)
    if not zones:
        raise CheckFailed(
            "no Ready node of an untainted CPU group carries a topology.kubernetes.io/zone label",
            "the CPU groups have no Ready node",
            "fix the nodes check first",
        )
    second: dict[str, Any] | None = None
    if len(zones) == 1 and ctx.second_az:
        launched = ctx.clock()
        new_zone, second = start_second_node(ctx, zones[0])
        zones = [zones[0], new_zone]
        second_s = ctx.clock() - launched
    policy, *probe_pods = _storage_objects(expect, ctx.run_id, zones)
    ctx.create(policy)
    runs = [pods.run_pod(ctx, pod) for pod in probe_pods]
    problems: list[str] = []
    figures: dict[str, float] = {}
    for run, zone in zip(runs, zones, strict=False):
        if run.phase != "Succeeded":
            problems.append(f"probe in {zone} {run.phase}: {pods.container_failure(run.pod) or run.log[-200:]}")
    for volume in expect.volumes:
        key = volume.replace("-", "_")
        for run, zone in zip(runs, zones, strict=False):
            report = run.report
            if report.get(f"{key}.error") or report.get(f"{key}.wrote") != zone:
                problems.append(
                    f"{volume}: could not write from {zone} ({report.get(f'{key}.error', 'no write reported')})"
                )
            owner = report.get(f"{key}.owner")
            if owner and owner != f"{expect.uid}:{expect.gid}":
                problems.append(f"{volume}: files written from {zone} belong to {owner}, not {expect.uid}:{expect.gid}")
            write_ms = int(report.get(f"{key}.write_ms", "0") or 0)
            if write_ms:
                figures[f"{volume}.writeMiBps.{zone}"] = round(probes.THROUGHPUT_MIB / (write_ms / 1000), 1)
            read_ms = int(report.get(f"{key}.read_ms", "0") or 0)
            if read_ms:
                figures[f"{volume}.readMiBps.{zone}"] = round(probes.THROUGHPUT_MIB / (read_ms / 1000), 1)
        if len(runs) > 1:
            seen = runs[1].report.get(f"{key}.read_{zones[0].replace('-', '_')}")
            if seen != f"{ctx.run_id}-{zones[0]}":
                problems.append(f"{volume}: written in {zones[0]}, read in {zones[1]} as {seen!r}")
    note = _second_node_note(ctx, second) if second is not None else ""
    if second is not None:
        figures["secondNodeReady"] = round(second_s, 1)
    if problems:
        raise CheckFailed(
            "; ".join(problems) + note,
            "a mount target is missing in that AZ or its security group does not admit NFS (2049) from the nodes; "
            "or the access point's POSIX user is not the workloads' uid/gid",
            "`aws efs describe-mount-targets` (one per AZ of the nodes) and the access point's PosixUser against "
            "gpuplane:storage.uid/gid; `kubectl describe pod` shows mount errors",
            details={"throughput": figures},
        )
    volumes = ", ".join(expect.volumes)
    if len(zones) > 1:
        evidence = f"{volumes}: written in {zones[0]}, read in {zones[1]}, files owned by {expect.uid}:{expect.gid}"
    else:
        groups = second_node_groups(expect, nodes)
        how = (
            f"run again with --second-az to start {second_az_cost(expect, groups)}; or scale the system group to 2 "
            "nodes"
            if groups
            else "every untainted CPU group is at its maxSize: raise one's maxSize, then run again with --second-az"
        )
        evidence = (
            f"{volumes}: written and read in {zones[0]} only, files owned by {expect.uid}:{expect.gid}; RWX across "
            f"AZs NOT proven: Ready CPU nodes are in one AZ ({how})"
        )
    return passed(evidence + note, timings=figures, zones=zones)


def _second_node_note(ctx: Context, node: dict[str, Any]) -> str:
    """The node `--second-az` started: its name, and what it costs, up to now and for the scale-down delay."""
    expect = ctx.expect
    name = node["metadata"]["name"]
    group = next(
        (g for g in expect.groups if g.name == (node["metadata"].get("labels") or {}).get(wellknown.LABEL_NODE_GROUP)),
        None,
    )
    up = kc.seconds_between(node["metadata"].get("creationTimestamp"), ctx.now().isoformat()) or 0.0
    stay = (
        f" (second node {name} in {_node_zone(node)}, started for this check: it stays up for the autoscaler's "
        f"scale-down delay ({expect.scale_down_unneeded}) after the run"
    )
    if group is None or group.usd_per_node_hour is None:
        return f"{stay}; no price for it in the price table)"
    usd = group.usd_per_node_hour * (max(up, 0.0) + expect.scale_down_unneeded_s) / 3600
    return f"{stay}; with the {max(up, 0.0) / 60:.0f} min it has run, about ${usd:.2f}: {group.price_basis})"


# --- serving -----------------------------------------------------------------------------------------------


def serving_urls(expect: Expectations) -> dict[str, str]:
    """Each variant's model-status URL inside the cluster (its own Service, REST port 8501)."""
    return {
        f"{v.serving}-{v.variant}": f"http://{v.service}.{expect.workload_namespace}.svc:8501/v1/models/{v.model}"
        for v in expect.variants
    }


def check_serving(ctx: Context) -> Outcome:
    """Every variant's model is AVAILABLE over REST and answers one predict call, asked from a pod in the cluster."""
    expect = ctx.expect
    if not expect.variants:
        return skipped("the stack declares no serving workload")
    pod = probes.http_pod(
        ctx.objects.ensure_namespace(), ctx.run_id, "serving", serving_urls(expect), uid=expect.uid, gid=expect.gid
    )
    done = pods.run_pod(ctx, pod)
    seen, not_loaded, not_predicting = [], [], []
    for name in serving_urls(expect):
        got = done.report
        state, error, predict = got.get(f"{name}.state"), got.get(f"{name}.error"), got.get(f"{name}.predict")
        if state != "AVAILABLE":
            not_loaded.append(f"{name}: {state or error or 'no answer'}")
        elif predict != "200" and not (predict or "").startswith("skipped"):
            not_predicting.append(f"{name}: predict {predict or error or 'not answered'} ({got.get(f'{name}.input')})")
        seen.append(f"{name} {state}, predict {predict} ({got.get(f'{name}.input')})")
    if not_loaded:
        raise CheckFailed(
            "; ".join(not_loaded),
            "the variant has no ready replica (a GPU variant waits for a GPU node; the model import Job has not "
            "finished) or the model failed to load",
            f"`kubectl -n {expect.workload_namespace} get deploy,pods` and the variant's log; a GPU variant on a "
            "group at zero needs the autoscaler to add a node first",
        )
    if not_predicting:
        raise CheckFailed(
            "; ".join(not_predicting),
            "the model is loaded but refuses a request shaped by its own signature (zeros, or an 8x8 PNG for an "
            "encoded-image input: a model that decodes JPEG only refuses it)",
            "read the answer above and the variant's log; `gpuplane compare` sends real images",
        )
    return passed("; ".join(seen))


def tensorboard_urls(expect: Expectations) -> dict[str, str]:
    """Each TensorBoard's page inside the cluster (`<training>-tensorboard`, port 6006: manifests/training.py)."""
    return {name: f"http://{name}.{expect.workload_namespace}.svc:6006/" for name in expect.tensorboards}


def check_tensorboard(ctx: Context) -> Outcome:
    """Every training workload's TensorBoard answers its page with 200, asked from a pod in the cluster."""
    expect = ctx.expect
    if not expect.tensorboards:
        return skipped("no training workload declares a TensorBoard")
    urls = tensorboard_urls(expect)
    pod = probes.http_pod(
        ctx.objects.ensure_namespace(), ctx.run_id, "tensorboard", urls, uid=expect.uid, gid=expect.gid
    )
    done = pods.run_pod(ctx, pod)
    seen = [
        f"{name} {done.report.get(f'{name}.status') or done.report.get(f'{name}.error') or 'no answer'}"
        for name in urls
    ]
    bad = [line for line, name in zip(seen, urls, strict=True) if done.report.get(f"{name}.status") != "200"]
    if bad:
        raise CheckFailed(
            "; ".join(bad),
            "TensorBoard's pod is not ready (the logs volume did not mount, the image did not pull) or its Service "
            "has no endpoint",
            f"`kubectl -n {expect.workload_namespace} get deploy,pods -l app.kubernetes.io/name=tensorboard` and "
            "the pod's events",
        )
    return passed("; ".join(seen) + " (HTTP status of its page)")


@register("pods", order=30)
def pod_checks(expect: Expectations) -> list[Check]:
    """Runtime helper, storage and serving."""

    def storage_probes(e: Expectations, run: str) -> list[dict[str, Any]]:
        zones = list(e.zones[:2]) or [f"{e.region}a", f"{e.region}b"]
        return _storage_objects(e, run, zones) if e.volumes else []

    def serving_probes(e: Expectations, run: str) -> list[dict[str, Any]]:
        if not e.variants:
            return []
        namespace = probes.probe_namespace_name(run)
        return [probes.http_pod(namespace, run, "serving", serving_urls(e), uid=e.uid, gid=e.gid)]

    def tensorboard_probes(e: Expectations, run: str) -> list[dict[str, Any]]:
        if not e.tensorboards:
            return []
        namespace = probes.probe_namespace_name(run)
        return [probes.http_pod(namespace, run, "tensorboard", tensorboard_urls(e), uid=e.uid, gid=e.gid)]

    return [
        Check(
            "runtime",
            "Runtime helper against the node's cgroup",
            check_runtime,
            needs=("api",),
            deadline_s=300,
            proves="the helper's thread and memory settings equal what a real node's cgroup says",
            probes=lambda e, run: [_runtime_pod(e, run, probes.probe_namespace_name(run))],
        ),
        Check(
            "storage",
            "Shared volumes across AZs",
            check_storage,
            needs=("api",),
            deadline_s=600,
            proves="each named volume written in one AZ reads back in another, owned by the workload uid/gid",
            probes=storage_probes,
        ),
        Check(
            "serving",
            "Serving variants AVAILABLE",
            check_serving,
            needs=("api",),
            deadline_s=180,
            proves="every serving variant's model is AVAILABLE over REST inside the cluster",
            probes=serving_probes,
        ),
        Check(
            "tensorboard",
            "TensorBoard answering",
            check_tensorboard,
            needs=("api",),
            deadline_s=180,
            proves="every training workload's TensorBoard serves its page inside the cluster",
            probes=tensorboard_probes,
        ),
    ]
