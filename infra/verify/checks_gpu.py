"""One GPU probe per GPU group: time to the first GPU pod, and the GPU as the workloads' own images see it.

The probe asks for one allocatable unit of the group's GPU resource, so a group at zero scales up; the
times that make up "time to first GPU pod" come from the node's and the pod's own timestamps plus what the
CLI saw while polling. Inside, the serving image's helper check, then the training image's helper check and
TensorFlow's device list; the driver, compute capability, allocatable count and memory share are compared
with the plan's node labels and the driver and CUDA facts of `lifecycle.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from gpuplane.infra.verify import cluster as kc
from gpuplane.infra.verify import pods
from gpuplane.infra.verify.checks_control import nodes_by_group
from gpuplane.infra.verify.expect import Expectations, GroupExpect
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register
from gpuplane.manifests import verify as probes
from gpuplane.manifests import wellknown

HELPER_FAILURE = re.compile(r"gpuplane-entrypoint: GPU check failed for image (\S+): (.*)")
_PULLED = re.compile(r"Successfully pulled image \"?([^\" ]+)\"? in ([0-9hms.]+)")


def probe_for(group: GroupExpect) -> probes.GpuProbe:
    """The probe settings of a group: its resource, its taints, its share of the GPU."""
    return probes.GpuProbe(
        group=group.name,
        resource=group.gpu_resource,
        taints=group.taints,
        gpu_shared=group.gpu_shared,
        memory_fraction=group.memory_fraction if group.gpu_shared else None,
    )


def _go_duration(text: str) -> float:
    """'1m2.5s' -> 62.5 (the kubelet writes pull times so)."""
    total = 0.0
    for number, unit in re.findall(r"([0-9.]+)(ms|h|m|s)", text):
        total += float(number) * {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}[unit]
    return total


def pull_seconds(events: list[dict[str, Any]]) -> float | None:
    """Image pull time summed over the pod's `Pulled` events (None when every image was already there)."""
    found = [_go_duration(m.group(2)) for e in events if (m := _PULLED.search(str(e.get("message", ""))))]
    return sum(found) if found else None


def explain_helper(message: str) -> tuple[str, str]:
    """Cause and fix for the runtime helper's GPU check failure (docs/runtime.md, "GPU check")."""
    text = message.lower()
    # Most specific first: the later messages also name the device nodes they found.
    if "too old" in text:
        return (
            "the node's driver is older than the image's CUDA needs",
            "use a newer EKS NVIDIA AMI release (update the node group) or an image built for an older CUDA",
        )
    if "libcuda" in text or "driver library" in text:
        return (
            "the node's container runtime did not inject the NVIDIA driver (container toolkit not configured)",
            "use the EKS NVIDIA AMI the plan picks (amiType AL2023_x86_64_NVIDIA), not a custom one",
        )
    if "tensorflow" in text:
        return (
            "TensorFlow in the image finds no GPU although the driver is there: the image's CUDA/cuDNN do not "
            "match its TensorFlow build (docs/workloads.md, 'Images')",
            "use the training image gpuplane pins (manifests/versions.py) or one whose CUDA/cuDNN match its TF",
        )
    if "device node" in text or "/dev/nvidia" in text:
        return (
            "the GPU was not mounted into the container: the device plugin is not running on the node, or the "
            "pod got no GPU resource",
            f"`kubectl -n {wellknown.NVIDIA_NAMESPACE} get pods -o wide` on that node; the node must advertise "
            f"{wellknown.GPU_RESOURCE}",
        )
    return ("the runtime helper refused the GPU", "read the message; docs/runtime.md explains each case")


class _Timeline:
    """What the CLI sees of the pod's node while it polls: when it first advertised the GPU resource."""

    def __init__(self, ctx: Context, group: GroupExpect, before: set[str]) -> None:
        self.ctx = ctx
        self.group = group
        self.before = before
        self.allocatable_at: datetime | None = None
        self.node: dict[str, Any] = {}

    def __call__(self, pod: dict[str, Any], _elapsed: float) -> None:
        name = (pod.get("spec") or {}).get("nodeName")
        if not name or self.allocatable_at is not None:
            return
        for node in self.ctx.cluster.list_nodes():
            if node["metadata"]["name"] == name:
                self.node = node
                units = (node.get("status") or {}).get("allocatable", {}).get(self.group.gpu_resource, "0")
                if int(str(units) or "0") > 0:
                    self.allocatable_at = self.ctx.now()


def _timings(
    pod: dict[str, Any],
    node: dict[str, Any],
    new_node: bool,
    allocatable_at: datetime | None,
    events: list[dict[str, Any]],
) -> dict[str, float]:
    created = pod["metadata"].get("creationTimestamp")
    node_created = node.get("metadata", {}).get("creationTimestamp")
    ready_at = kc.condition(node, "Ready").get("lastTransitionTime")
    scheduled_at = kc.condition(pod, "PodScheduled").get("lastTransitionTime")
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    state = (statuses[0].get("state") or {}) if statuses else {}
    started_at = (state.get("running") or state.get("terminated") or {}).get("startedAt")
    values: dict[str, float | None] = {}
    if new_node:
        values["podCreatedToNodeRegistered"] = kc.seconds_between(created, node_created)
        values["nodeRegisteredToReady"] = kc.seconds_between(node_created, ready_at)
        values["readyToGpuAllocatable"] = (
            kc.seconds_between(ready_at, allocatable_at.isoformat()) if allocatable_at else None
        )
    values["imagePull"] = pull_seconds(events)
    values["scheduledToContainerStart"] = kc.seconds_between(scheduled_at, started_at)
    values["timeToFirstGpuPod"] = kc.seconds_between(created, started_at)
    return {k: round(v, 1) for k, v in values.items() if v is not None}


def gpu_check(group: GroupExpect) -> Callable[[Context], Outcome]:
    """The check function for one GPU group."""

    def run(ctx: Context) -> Outcome:
        before = {n["metadata"]["name"] for n in nodes_by_group(ctx.cluster.list_nodes()).get(group.name, [])}
        pod = probes.gpu_pod(
            ctx.objects.ensure_namespace(),
            ctx.run_id,
            probe_for(group),
            uid=ctx.expect.uid,
            gid=ctx.expect.gid,
            deadline_s=int(max(60, ctx.deadline_s)),
        )
        timeline = _Timeline(ctx, group, before)
        done = pods.run_pod(ctx, pod, containers=("serving", "tensorflow"), watch=timeline)
        node = timeline.node or next((n for n in ctx.cluster.list_nodes() if n["metadata"]["name"] == done.node), {})
        events = ctx.cluster.pod_events(pod["metadata"]["namespace"], pod["metadata"]["name"])
        new_node = bool(done.node) and done.node not in before
        timings = _timings(done.pod, node, new_node, timeline.allocatable_at, events)
        stay = _scale_down_note(ctx.expect, group) if new_node else ""
        failure = HELPER_FAILURE.search(done.log)
        if done.phase != "Succeeded" or failure:
            if failure:
                cause, fix = explain_helper(failure.group(2))
                raise CheckFailed(f"on node {done.node}: {failure.group(0)}{stay}", cause, fix, timings=timings)
            raise CheckFailed(
                f"probe pod {done.phase} on node {done.node}: "
                f"{pods.container_failure(done.pod) or done.log[-300:]}{stay}",
                "a probe container failed; its log says why",
                f"`kubectl -n {pod['metadata']['namespace']} logs {pod['metadata']['name']} --all-containers` "
                "(run with --keep to keep the pod)",
                timings=timings,
            )
        problems, fixes = _compare(group, node, done.report)
        got = done.report
        seen = (
            f"TF {got.get('tf.version')} sees {got.get('tf.gpus')} GPU(s) ({got.get('gpu.name', '?')}, "
            f"compute capability {got.get('gpu.compute_capability', '?')}, driver {got.get('gpu.driver', '?')}); "
            f"serving image GPU check {got.get('serving.gpu_check', 'not reported')}; node {done.node}"
            + (" (new node)" if new_node else " (existing node)")
        )
        if problems:
            raise CheckFailed(
                f"{'; '.join(problems)} [{seen}]{stay}",
                "the node differs from what the plan promised",
                "; ".join(fixes),
                timings=timings,
                details=dict(done.report),
            )
        cost = {"scaleDownCostUsd": round(usd, 4)} if new_node and (usd := scale_down_cost(ctx.expect, group)) else {}
        return passed(seen + stay, timings=timings, report=dict(done.report), node=done.node, newNode=new_node, **cost)

    return run


def _compare(group: GroupExpect, node: dict[str, Any], report: dict[str, str]) -> tuple[list[str], list[str]]:
    problems: list[str] = []
    fixes: list[str] = []
    if report.get("serving.gpu_check") != "passed":
        problems.append("the serving image's GPU check did not report success")
        fixes.append("read the init container `serving`'s log")
    if int(report.get("tf.gpus", "0") or "0") < 1:
        problems.append("TensorFlow in the training image lists no GPU")
        fixes.append("see docs/workloads.md, 'Images': the image's CUDA/cuDNN must match its TensorFlow")
    cc = report.get("gpu.compute_capability")
    if group.compute_capability is not None and cc and int(cc) != group.compute_capability:
        problems.append(f"compute capability {cc}, the plan labels {group.compute_capability}")
        fixes.append("an instance type with another GPU joined the group; check its instanceTypes and the catalog")
    driver = report.get("gpu.driver", "")
    major = int(driver.split(".")[0]) if driver[:1].isdigit() else None
    if group.driver_major is not None and major is not None and major != group.driver_major:
        problems.append(f"driver {driver}, the plan labels driver major {group.driver_major}")
        fixes.append("the AMI release ships another driver than lifecycle.AMI_DRIVER_MAJOR records: update it")
    labels = node.get("metadata", {}).get("labels") or {}
    for key in (wellknown.LABEL_GPUPLANE_CUDA_DRIVER_MAJOR, wellknown.LABEL_GPU_COMPUTE_CAPABILITY):
        if key in group.labels and labels and labels.get(key) != group.labels[key]:
            problems.append(f"node label {key}={labels.get(key)}, plan {group.labels[key]}")
            fixes.append("run `pulumi up` to restore the group's labels")
    units = (node.get("status") or {}).get("allocatable", {}).get(group.gpu_resource)
    if node and str(units) != str(group.gpu_units):
        problems.append(f"node advertises {units} {group.gpu_resource}, the plan promises {group.gpu_units}")
        fixes.append(
            "the device plugin's config for the group (sharing replicas, MIG profile) is not the one the plan set; "
            f"`kubectl -n {wellknown.NVIDIA_NAMESPACE} get cm` and the node label "
            f"{wellknown.LABEL_DEVICE_PLUGIN_CONFIG}"
        )
    if group.gpu_shared:
        fraction = report.get(f"env.{'GPUPLANE_GPU_MEMORY_FRACTION'}")
        if fraction != repr(float(group.memory_fraction)):
            problems.append(f"memory fraction {fraction}, the plan promises {group.memory_fraction}")
            fixes.append("the probe's wrap differs from the workloads': report it as a gpuplane bug")
    return problems, fixes


def scale_down_cost(expect: Expectations, group: GroupExpect) -> float | None:
    """USD of one of the group's nodes kept up for the autoscaler's scale-down delay (None: no price known)."""
    if group.usd_per_node_hour is None:
        return None
    return group.usd_per_node_hour * expect.scale_down_unneeded_s / 3600


def _scale_down_note(expect: Expectations, group: GroupExpect) -> str:
    """What the node the probe started costs after it: the scale-down delay at the group's price per hour.

    The price is the cost estimate's (`expect.from_config` prices one node with `cost.group_line`), labelled
    as it labels it: a spot group at its on-demand ceiling, another region's price named as such.
    """
    kind = {"SPOT": "spot", "ON_DEMAND": "on-demand", "CAPACITY_BLOCK": "from its Capacity Block"}.get(
        group.capacity_type, group.capacity_type
    )
    types = "/".join(group.instance_types) or "GPU instance"
    stay = (
        f". The new node stays up for the autoscaler's scale-down delay ({expect.scale_down_unneeded}) after the "
        f"probe: that long of one {types} ({kind})"
    )
    usd = scale_down_cost(expect, group)
    if usd is None:
        return f"{stay} is this check's cost ({group.price_basis or 'no price in the price table'})"
    if group.capacity_type == "CAPACITY_BLOCK":
        return (
            f"{stay} uses block time already paid for (${usd:.2f} at the on-demand rate: {group.price_basis}; a "
            "Capacity Block is paid up front)"
        )
    bound = "at most " if group.capacity_type == "SPOT" else ""
    return f"{stay} costs {bound}${usd:.2f} ({group.price_basis})"


def _gpu_probes(group: GroupExpect) -> Callable[[Expectations, str], list[dict[str, Any]]]:
    def build(expect: Expectations, run_id: str) -> list[dict[str, Any]]:
        namespace = probes.probe_namespace_name(run_id)
        return [probes.gpu_pod(namespace, run_id, probe_for(group), uid=expect.uid, gid=expect.gid)]

    return build


@register("gpu", order=20)
def gpu_checks(expect: Expectations) -> list[Check]:
    """One probe per GPU group."""
    return [
        Check(
            f"gpu-{group.name}",
            f"GPU probe on group {group.name}",
            gpu_check(group),
            needs=("api",),
            deadline_s=1500,
            gpu=True,
            proves="a pod asking for one GPU unit gets a node (from zero if need be) and both images use the GPU",
            probes=_gpu_probes(group),
        )
        for group in expect.gpu_groups
    ]
