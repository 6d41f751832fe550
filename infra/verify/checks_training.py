"""A training run through the queue, per training workload (issue 30's point 5): admission, start, completion.

The run is the one `gpuplane train` would submit (`train.build`: the same JobSet, suspended with the queue
label), named `<workload>-verify` and labelled as the verify run's, and it is not written to the run ledger
(verify's runs are not the user's). Its state is read the way `gpuplane queue` reads it (`queue.workload_state`:
the JobSet's end, the Kueue Workload's conditions), and the time it first showed each state gives the wait
for admission (with the ProvisioningRequest, for a GPU run: `Provisioning`) and the run time.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from gpuplane.infra.verify.expect import Expectations, TrainingRunExpect
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register
from gpuplane.manifests import verify as probes

ORDER = ("Submitted", "Queued", "Provisioning", "Admitted", "Running", "Completed")


def run_object(run: TrainingRunExpect, run_id: str) -> dict[str, Any]:
    """The run's JobSet with the verify run's labels added (so a killed run's leftovers are found by label)."""
    jobset = copy.deepcopy(run.jobset)
    jobset["metadata"]["labels"].update(probes.labels(run_id, f"training-{run.workload}"))
    return jobset


def _timings(seen: dict[str, float]) -> dict[str, float]:
    values: dict[str, float] = {}
    admitted = seen.get("Admitted", seen.get("Running"))
    if admitted is not None:
        values["submittedToAdmitted"] = admitted
    if "Running" in seen and admitted is not None:
        values["admittedToRunning"] = seen["Running"] - admitted
    if "Completed" in seen and "Running" in seen:
        values["runningToCompleted"] = seen["Completed"] - seen["Running"]
    if "Completed" in seen:
        values["total"] = seen["Completed"]
    return {k: round(v, 1) for k, v in values.items()}


def training_check(run: TrainingRunExpect) -> Callable[[Context], Outcome]:
    """The check function for one training workload."""

    def check(ctx: Context) -> Outcome:
        from gpuplane.infra import queue as run_queue  # noqa: PLC0415
        from gpuplane.manifests import queue as queue_manifests  # noqa: PLC0415

        jobset = run_object(run, ctx.run_id)
        namespace, name = jobset["metadata"]["namespace"], jobset["metadata"]["name"]
        if ctx.cluster.get_jobset(namespace, name) is not None:
            raise CheckFailed(
                f"a JobSet {namespace}/{name} exists already",
                "an earlier `gpuplane verify` run was killed or kept (--keep) before it removed its training run",
                f"`kubectl -n {namespace} delete jobset {name}`, then run again",
            )
        ctx.create(jobset)
        started = ctx.clock()
        seen: dict[str, float] = {}
        state = run_queue.RunState("Submitted")
        while True:
            current = ctx.cluster.get_jobset(namespace, name)
            if current is None:
                state = run_queue.RunState("Gone", "the JobSet was deleted before an end was seen")
            else:
                uid = current["metadata"].get("uid")
                found = ctx.cluster.list_workloads(namespace, f"{queue_manifests.JOB_UID_LABEL}={uid}") if uid else []
                state = run_queue.workload_state(found[0] if found else None, (), current)
            seen.setdefault(state.state, ctx.clock() - started)
            ctx.progress(f"run {name}: {state}")
            if state.state in run_queue.TERMINAL:
                break
            ctx.wait(max(ctx.poll_s, 10.0))
        path = " -> ".join(f"{s} {t:.0f} s" for s, t in sorted(seen.items(), key=lambda item: item[1]))
        timings = _timings(seen)
        if state.state == "Completed":
            return passed(f"run {name}: {path}", timings=timings, states=seen)
        causes = {
            "Failed": (
                "a pod of the run failed: the trainer's own error, a GPU check that stopped a GPU pod (exit 3), or "
                "an image that does not run",
                f"`kubectl -n {namespace} logs -l jobset.sigs.k8s.io/jobset-name={name} --all-containers` "
                "(run with --keep to keep the run)",
            ),
            "Deactivated": (
                "Kueue evicted the run past its requeue limit: its pods were not all ready within "
                "waitForPodsReady's timeout (GPU nodes booting and pulling slower than it allows)",
                "raise gpuplane:queue's pods-ready timeout or pre-pull the image; `gpuplane queue STACK` shows the "
                "evictions",
            ),
            "Gone": (
                "the run was deleted by someone else, or its TTL removed it before the end was read",
                "run again; `kubectl -n NS get jobsets` while it runs",
            ),
        }
        cause, fix = causes.get(state.state, ("the run ended unexpectedly", "see `gpuplane queue STACK`"))
        raise CheckFailed(f"run {name}: {path}: {state}", cause, fix, timings=timings)

    return check


@register("training", order=40)
def training_checks(expect: Expectations) -> list[Check]:
    """One queued training run per training workload."""
    return [
        Check(
            f"training-{run.workload}",
            f"Training run of {run.workload} through the queue",
            training_check(run),
            needs=("api",),
            deadline_s=3600,
            gpu=run.gpus,
            proves="the run is admitted by the queue (its GPU nodes provisioned), its pods start and it completes",
            probes=_probes(run),
        )
        for run in expect.training_runs
    ]


def _probes(run: TrainingRunExpect) -> Callable[[Expectations, str], list[dict[str, Any]]]:
    def build(_expect: Expectations, run_id: str) -> list[dict[str, Any]]:
        return [run_object(run, run_id)]

    return build
