"""Where a training run is in the queue, from Kueue's Workload and visibility API; `gpuplane queue STACK`.

Why from the Workload: a queued JobSet is only `suspend: true` until Kueue admits it, so its own status
says nothing about why it waits. Kueue records that on the Workload it makes for the JobSet (owned by it,
label `kueue.x-k8s.io/job-uid`): conditions QuotaReserved, Admitted, PodsReady, Evicted, Requeued,
Finished (kueue apis/kueue/v1beta2/workload_types.go), the admission checks' states, the requeue count;
and the visibility API gives a pending Workload's position in its LocalQueue.

Like `train`, this module is imported by `gpuplane --help` to list its command: it imports typer and the
standard library at import, the Kubernetes client, config and rich only when the command runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer

from gpuplane.infra.options import (
    EXIT_INVALID_CONFIG,
    KubeconfigOption,
    ProjectOption,
    StackArgument,
    StacksDirOption,
    cluster_failed,
    console,
    error,
    kube_source,
    load_or_exit,
    project_or_exit,
)
from gpuplane.infra.untrusted import shown

if TYPE_CHECKING:
    from gpuplane.infra import kube

TERMINAL = ("Completed", "Failed", "Deactivated", "Gone")


@dataclass(frozen=True)
class RunState:
    """A run's state and the detail that explains it."""

    state: str  # Submitted | Queued | Provisioning | Admitted | Running | Requeued | Deactivated | Completed | Failed
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.state} ({self.detail})" if self.detail else self.state


def _conditions(workload: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(c.get("type")): c for c in (workload.get("status") or {}).get("conditions") or []}


def _true(conditions: Mapping[str, Mapping[str, Any]], kind: str) -> bool:
    return conditions.get(kind, {}).get("status") == "True"


def workload_state(
    workload: Mapping[str, Any] | None,
    pending: Sequence[Mapping[str, Any]] = (),
    jobset: Mapping[str, Any] | None = None,
) -> RunState:
    """The run's state: the JobSet's end first, then the Workload's conditions, then its queue position."""
    from gpuplane.infra import kube  # noqa: PLC0415

    if jobset is not None:
        end = kube.jobset_state(dict(jobset))
        if end in ("Completed", "Failed"):
            return RunState(end)
    if workload is None:
        return RunState("Submitted", "no Workload yet: Kueue has not seen the run")
    conditions = _conditions(workload)
    status = workload.get("status") or {}
    if _true(conditions, "Finished"):
        reason = conditions["Finished"].get("reason")
        return RunState("Failed" if reason == "Failed" else "Completed", str(conditions["Finished"].get("message", "")))
    if (workload.get("spec") or {}).get("active") is False:
        return RunState("Deactivated", deactivation_detail(workload))
    if _true(conditions, "Admitted"):
        if _true(conditions, "PodsReady"):
            return RunState("Running")
        return RunState("Admitted", "waiting for all pods to be ready")
    checks = status.get("admissionChecks") or []
    if _true(conditions, "QuotaReserved"):
        waiting = [c for c in checks if c.get("state") != "Ready"]
        detail = "; ".join(f"{c.get('name')}: {c.get('state')} {c.get('message', '')}".strip() for c in waiting)
        return RunState("Provisioning", detail or "quota reserved, admission checks pending")
    requeue = status.get("requeueState") or {}
    evicted = _true(conditions, "Evicted") or "Requeued" in conditions or bool(requeue.get("count"))
    if evicted and not _true(conditions, "Requeued"):
        # Evicted and waiting out its backoff (Requeued=False until then).
        why = conditions.get("Evicted", {}).get("reason") or conditions.get("Requeued", {}).get("reason") or "evicted"
        detail = f"evicted ({why}), requeued {requeue.get('count', 1)} time(s)"
        if requeue.get("requeueAt"):
            detail += f", back in the queue at {requeue['requeueAt']}"
        return RunState("Requeued", detail)
    name = (workload.get("metadata") or {}).get("name")
    position = next((p for p in pending if (p.get("metadata") or {}).get("name") == name), None)
    parts = [f"position {int(position.get('positionInLocalQueue', 0)) + 1} in its queue"] if position else []
    parts += [m for m in [conditions.get("QuotaReserved", {}).get("message", "")] if m]
    if evicted:
        parts.append(f"requeued {requeue.get('count', 1)} time(s)")
    return RunState("Queued", "; ".join(parts))


# Why Kueue deactivated a run: the Evicted condition's reason is `Deactivated` plus `DueTo<cause>` (kueue
# pkg/workload/patching ReasonWithCause), and before that the DeactivationTarget condition names the cause
# (pkg/controller/core/workload_controller.go at v0.19.2).
_CAUSES = {
    "AdmissionCheck": "its GPU nodes could not be provisioned: the ProvisioningRequest failed {tries} times",
    "RequeuingLimitExceeded": "its pods were not all ready in time, queue.requeueLimit times",
    "MaximumExecutionTimeExceeded": "it ran past its maximum execution time",
}


def reactivate_command(namespace: str, name: str) -> str:
    """The kubectl line that puts a deactivated Workload back in the queue (Kueue reads `spec.active`)."""
    return (
        f'kubectl -n {namespace} patch workloads.kueue.x-k8s.io {name} --type=merge -p \'{{"spec":{{"active":true}}}}\''
    )


def deactivation_detail(workload: Mapping[str, Any]) -> str:
    """Why the run was deactivated (Kueue's own words with them) and the two ways back.

    Reactivating keeps the run and its place: Kueue requeues it, and with the admission check reset (its
    ProvisioningRequests deleted on eviction, `CleanupProvisioningRequestsOnEviction`, on by default in 0.19)
    the run gets the full number of provisioning tries again. `--rerun` deletes it and submits a new one.
    """
    from gpuplane.manifests import queue as queue_manifests  # noqa: PLC0415

    conditions = _conditions(workload)
    evicted = conditions.get("Evicted", {})
    target = conditions.get("DeactivationTarget", {})
    reason = str(evicted.get("reason") or "") if _true(conditions, "Evicted") else ""
    cause = reason.removeprefix("Deactivated").removeprefix("DueTo") if reason.startswith("Deactivated") else ""
    cause = cause or str(target.get("reason") or "")
    why = _CAUSES.get(cause, "spec.active was set to false" if not cause else f"Kueue: {cause}")
    why = why.format(tries=queue_manifests.PROVISIONING_RETRY_LIMIT + 1)
    said = str(evicted.get("message") or target.get("message") or "")
    meta = workload.get("metadata") or {}
    fix = reactivate_command(str(meta.get("namespace") or "<namespace>"), str(meta.get("name") or "<workload>"))
    return f"{why}{f' ({said})' if said else ''}; reactivate it: {fix}; or `gpuplane train --rerun` submits it anew"


def find_workload(api: kube.KubeApi, jobset: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JobSet's Workload (by the job-uid label Kueue sets), or None before Kueue has made it."""
    from gpuplane.manifests import queue as queue_manifests  # noqa: PLC0415

    meta = jobset["metadata"]
    uid = meta.get("uid")
    if not uid:
        return None
    found = api.list_workloads(meta["namespace"], f"{queue_manifests.JOB_UID_LABEL}={uid}")
    return found[0] if found else None


def run_state(api: kube.KubeApi, jobset: Mapping[str, Any]) -> RunState:
    """The state of a submitted run, read from the cluster."""
    from gpuplane.manifests import queue as queue_manifests  # noqa: PLC0415

    workload = find_workload(api, jobset)
    pending: list[dict[str, Any]] = []
    if workload is not None and not _true(_conditions(workload), "QuotaReserved"):
        queue_name = (jobset["metadata"].get("labels") or {}).get(queue_manifests.QUEUE_LABEL)
        if queue_name:
            pending = api.pending_workloads(jobset["metadata"]["namespace"], queue_name)
    return workload_state(workload, pending, jobset)


def gpu_requests(workload: Mapping[str, Any]) -> int:
    """GPUs the Workload asks for: each PodSet's count times its containers' GPU limits."""
    total = 0
    for podset in (workload.get("spec") or {}).get("podSets") or []:
        per_pod = 0
        for container in ((podset.get("template") or {}).get("spec") or {}).get("containers") or []:
            limits = (container.get("resources") or {}).get("limits") or {}
            per_pod += sum(int(v) for k, v in limits.items() if str(k).startswith("nvidia.com/"))
        total += per_pod * int(podset.get("count", 1))
    return total


def queue_rows(
    api: kube.KubeApi, namespace: str, local_queue: str, workloads: Sequence[Mapping[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """One row per Workload of the LocalQueue not yet finished: run, state, GPUs, position.

    `workloads`: the namespace's Workloads when the caller already listed them (else they are listed).
    """
    pending = api.pending_workloads(namespace, local_queue)
    rows = []
    for workload in api.list_workloads(namespace) if workloads is None else workloads:
        if (workload.get("spec") or {}).get("queueName") != local_queue:
            continue
        state = workload_state(workload, pending)
        if state.state in ("Completed", "Failed"):
            continue
        owners = (workload.get("metadata") or {}).get("ownerReferences") or []
        run = next((o.get("name") for o in owners if o.get("kind") == "JobSet"), workload["metadata"]["name"])
        rows.append({"run": run, "state": state.state, "detail": state.detail, "gpus": gpu_requests(workload)})
    order = {"Running": 0, "Admitted": 1, "Provisioning": 2, "Requeued": 3, "Queued": 4, "Deactivated": 5}
    return sorted(rows, key=lambda r: (order.get(r["state"], 9), r["detail"], r["run"]))


@dataclass(frozen=True)
class FlavorUsage:
    """One GPU flavor of the queue: its group's kind of capacity, GPUs admitted runs hold, its quota."""

    flavor: str
    capacity: str
    used: int
    quota: int


def flavor_usage(workloads: Sequence[Mapping[str, Any]], flavors: Sequence[tuple[str, str, int]]) -> list[FlavorUsage]:
    """GPUs in use per flavor (issue 31), from admitted Workloads' `status.admission.podSetAssignments`.

    Kueue assigns a flavor per PodSet and resource (`flavors`) and records what the PodSet's pods hold
    (`resourceUsage`; kueue apis/kueue/v1beta2/workload_types.go, PodSetAssignment, at v0.19.2).
    `flavors`: (name, capacity kind, GPU quota) in the queue's order, reserved first. Finished runs hold
    nothing.
    """
    used: dict[str, int] = {}
    for workload in workloads:
        if _true(_conditions(workload), "Finished"):
            continue
        admission = (workload.get("status") or {}).get("admission") or {}
        for assignment in admission.get("podSetAssignments") or []:
            assigned = assignment.get("flavors") or {}
            for resource, quantity in (assignment.get("resourceUsage") or {}).items():
                if str(resource).startswith("nvidia.com/") and resource in assigned:
                    used[assigned[resource]] = used.get(assigned[resource], 0) + int(quantity)
    return [FlavorUsage(name, kind, used.get(name, 0), quota) for name, kind, quota in flavors]


def _flavor_table(config: Any, workloads: Sequence[Mapping[str, Any]]) -> Any:
    """GPU use per flavor, in the order the queue tries them (reserved, on-demand, spot)."""
    from rich.table import Table  # noqa: PLC0415

    from gpuplane.components.plan import capacity  # noqa: PLC0415
    from gpuplane.components.plan.training_queue import queue_spec  # noqa: PLC0415

    platform = config.platform
    spec = queue_spec(
        platform.workload_namespace,
        platform.resolved_node_groups,
        platform.queue,
        kubernetes_version=platform.cluster.kubernetes_version,
        autoscaler=platform.autoscaler.enabled,
    )
    kinds = {g.name: capacity.capacity_kind(g) for g in platform.resolved_node_groups}
    usage = flavor_usage(
        workloads,
        [(f.name, kinds[f.group], f.gpus) for f in spec.gpu_flavors],
    )
    table = Table(title="GPUs per flavor (tried in this order)")
    for column in ("flavor", "capacity", "GPUs in use", "quota"):
        table.add_column(column)
    for row in usage:
        table.add_row(row.flavor, row.capacity, str(row.used), str(row.quota))
    return table


def register(app: typer.Typer) -> None:
    """Add the `queue` command to the gpuplane CLI."""

    @app.command()
    def queue(
        stack: StackArgument,
        kubeconfig: KubeconfigOption = None,
        stacks_dir: StacksDirOption = None,
        project_dir: ProjectOption = None,
    ) -> None:
        """Show the training runs queued and running in STACK's queue, with their GPU requests."""
        from rich.table import Table  # noqa: PLC0415

        from gpuplane.infra import kube  # noqa: PLC0415
        from gpuplane.manifests import queue as queue_manifests  # noqa: PLC0415
        from gpuplane.manifests import versions  # noqa: PLC0415

        nothing = "Nothing was read."
        project = project_or_exit(project_dir, stacks_dir, nothing=nothing)
        config = load_or_exit(stack, project, nothing=nothing)
        if not config.platform.training:
            error(f"stack '{stack}' declares no training (gpuplane:training): it has no queue")
            raise typer.Exit(EXIT_INVALID_CONFIG)
        try:
            api = kube.ClusterApi(kube_source(kubeconfig, project, stack, config))
        except kube.KubeError as exc:
            raise cluster_failed(exc, None, nothing=nothing) from None
        namespace = config.platform.workload_namespace
        try:
            workloads = api.list_workloads(namespace)
            rows = queue_rows(api, namespace, queue_manifests.LOCAL_QUEUE, workloads)
        except Exception as exc:
            raise cluster_failed(exc, getattr(api, "connection", None)) from None
        table = Table(title=f"queue {namespace}/{queue_manifests.LOCAL_QUEUE} (Kueue {versions.KUEUE_IMAGE_TAG})")
        for column in ("run", "state", "GPUs", "detail"):
            table.add_column(column)
        for row in rows:
            table.add_row(*(shown(str(row[k]), 600) for k in ("run", "state", "gpus", "detail")))  # the cluster's words
        out = console(stderr=False, wide=True)
        out.print(table if rows else "nothing queued or running")
        out.print(_flavor_table(config, workloads))
