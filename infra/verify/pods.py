"""A probe pod's life: create it, wait for it within the check's deadline, read its report; explain a refusal.

Why apart from `cluster`: this is check logic (deadlines, what a failure means and how to fix it) on top of
the protocol; `cluster` stays the seam to the API alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpuplane.infra.verify.cluster import condition, scale_up_refusal, unschedulable_message
from gpuplane.infra.verify.model import CheckFailed, Context


@dataclass
class PodRun:
    """A finished probe pod: its last state, its report lines, when things happened (seconds from creation)."""

    pod: dict[str, Any]
    report: dict[str, str]
    log: str
    seen: dict[str, float] = field(default_factory=dict)
    """Seconds after creation when the CLI first saw: `scheduled`, `running`, `finished`."""

    @property
    def phase(self) -> str:
        """Succeeded or Failed."""
        return str((self.pod.get("status") or {}).get("phase"))

    @property
    def node(self) -> str:
        """The node it ran on."""
        return str((self.pod.get("spec") or {}).get("nodeName") or "")


def container_failure(pod: dict[str, Any]) -> str:
    """What stopped the pod's containers, in the kubelet's words ('' when nothing did)."""
    status = pod.get("status") or {}
    found = []
    for entry in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
        state = entry.get("state") or {}
        waiting, ended = state.get("waiting") or {}, state.get("terminated") or {}
        if waiting.get("reason") in (
            "ErrImagePull",
            "ImagePullBackOff",
            "CreateContainerConfigError",
            "CreateContainerError",
            "InvalidImageName",
            "CrashLoopBackOff",
        ):
            found.append(f"{entry.get('name')}: {waiting.get('reason')}: {waiting.get('message', '')}".strip())
        if ended and ended.get("exitCode", 0) != 0:
            found.append(f"{entry.get('name')}: exit {ended.get('exitCode')} ({ended.get('reason', '')})")
    if status.get("reason"):
        found.append(f"pod: {status.get('reason')}: {status.get('message', '')}")
    return "; ".join(found)


def run_pod(
    ctx: Context,
    pod: dict[str, Any],
    *,
    containers: tuple[str, ...] = ("probe",),
    watch: Callable[[dict[str, Any], float], None] | None = None,
) -> PodRun:
    """Create the probe pod and wait until it ends; its logs' report lines and what was seen when.

    A pod the scheduler cannot place fails the check at once when the cluster-autoscaler says no node will
    come (its reasons are the evidence); an image that cannot be pulled fails it at once too. Everything else
    waits, bounded by the check's deadline. `watch(pod, elapsed)` sees the pod at every poll.
    """
    from gpuplane.manifests.verify import parse_report  # noqa: PLC0415

    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    ctx.create(pod)
    started = ctx.clock()
    seen: dict[str, float] = {}
    current: dict[str, Any] = pod
    while True:
        found = ctx.cluster.read_pod(namespace, name)
        if found is not None:
            current = found
        status = current.get("status") or {}
        phase = status.get("phase") or "Pending"
        elapsed = ctx.clock() - started
        if watch is not None:
            watch(current, elapsed)
        if condition(current, "PodScheduled").get("status") == "True":
            seen.setdefault("scheduled", elapsed)
        if phase == "Running":
            seen.setdefault("running", elapsed)
        if phase in ("Succeeded", "Failed"):
            seen.setdefault("finished", elapsed)
            break
        waiting = unschedulable_message(current)
        if waiting:
            refusal = scale_up_refusal(ctx.cluster.pod_events(namespace, name))
            if refusal:
                raise _unschedulable(name, waiting, refusal)
        stuck = container_failure(current)
        if "ErrImagePull" in stuck or "ImagePullBackOff" in stuck or "InvalidImageName" in stuck:
            raise CheckFailed(
                f"pod {name}: image cannot be pulled ({stuck})",
                "the node cannot reach the registry (no NAT route or VPC endpoint), or the tag does not exist",
                "check the node's outbound route (NAT gateway) and that the image tag in "
                "gpuplane.manifests.versions exists; `kubectl describe pod` shows the pull error",
            )
        ctx.progress(f"{name}: {phase}{' (' + waiting + ')' if waiting else ''}, {elapsed:.0f} s")
        ctx.wait()
    log = "\n".join(ctx.cluster.pod_log(namespace, name, c) for c in containers)
    return PodRun(current, parse_report(log), log, seen)


def _unschedulable(name: str, waiting: str, refusal: str) -> CheckFailed:
    cause, fix = explain_refusal(refusal)
    return CheckFailed(
        f"pod {name} cannot be scheduled ({waiting}) and the cluster-autoscaler will not add a node: {refusal}",
        cause,
        fix,
    )


def explain_refusal(refusal: str) -> tuple[str, str]:
    """The likely cause and the fix for the autoscaler's `NotTriggerScaleUp` message.

    Its reasons per node group are the scheduler's predicates run against the group's node template (from
    the Auto Scaling group's tags) plus the group's own state (at max size, backoff after a failed launch).
    """
    text = refusal.lower()
    if "max node group size reached" in text:
        return (
            "the node group is already at its maxSize",
            "raise the group's maxSize (gpuplane:nodeGroups[].maxSize) or wait for running pods to finish",
        )
    if "backoff" in text or "failed to increase" in text or "insufficientinstancecapacity" in text:
        return (
            "the group's last launches failed: no spot or on-demand capacity for its instance types in its AZs, "
            "or the account's vCPU quota is used up (the autoscaler backs off after a failed scale-up)",
            "`gpuplane preflight` shows the GPU vCPU quotas and which AZs offer the types; add instance types or AZs, "
            "switch the group to ON_DEMAND, or ask for a quota increase; the Auto Scaling group's activity history "
            "names the exact error",
        )
    if "insufficient nvidia.com" in text or "insufficient" in text:
        return (
            "no node group's template advertises the GPU resource the probe asks for (the ASG's "
            "node-template tags are missing or wrong), so a new node would not fit the pod either",
            "check the ASG tags k8s.io/cluster-autoscaler/node-template/resources/... of the GPU group "
            "(`gpuplane render` lists them); re-run `pulumi up` if they were removed",
        )
    if "taint" in text or "node selector" in text or "affinity" in text:
        return (
            "no group's node template has the labels the probe selects or tolerates its taints",
            "check the ASG's node-template label/taint tags against `gpuplane render`'s plan",
        )
    return (
        "the cluster-autoscaler found no node group that can take the pod",
        "read the reasons above; `kubectl -n kube-system logs deploy/cluster-autoscaler` has the details",
    )
