"""A training run through the queue, per training workload: admission, start, completion.

The run is the one `gpuplane train` would submit (`train.build`: the same JobSet, suspended with the queue
label), named `<workload>-verify` and labelled as the verify run's, and it is not written to the run ledger
(verify's runs are not the user's). Its state is read the way `gpuplane queue` reads it (`queue.workload_state`:
the JobSet's end, the Kueue Workload's conditions), and the time it first showed each state gives the wait
for admission (with the ProvisioningRequest, for a GPU run: `Provisioning`) and the run time.

"First step logged": while the run is admitted or running, the check reads the log of the pod that reports
progress (the chief's, else the first worker's; `log_source`) through the cluster seam, with the API's
timestamps, until the first `epoch N/M:` line the example trainer prints (examples/training/mnist/train.py).
Its timestamp against the JobSet's creation gives the time to the first step, against the container's start
the trainer's own start-up (TensorFlow import, data, the first epoch).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from gpuplane.infra.verify import cluster as kc
from gpuplane.infra.verify.expect import Expectations, TrainingRunExpect
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register
from gpuplane.manifests import verify as probes

ORDER = ("Submitted", "Queued", "Provisioning", "Admitted", "Running", "Completed")

# The example trainer's progress line, once per epoch: `epoch 1/3: loss 0.4312 accuracy 0.873`
# (examples/training/mnist/train.py prints it on every task that trains; tests/verify pins the two together).
FIRST_STEP: Final = re.compile(r"^epoch (\d+)/(\d+): loss \S+")
# `timestamps=true` puts the time the runtime received each line in front of it (RFC 3339, nanoseconds).
_STAMPED: Final = re.compile(r"^(\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d)) (.*)$")
# What the example prints when it restarts from a checkpoint in its model dir (a finished run's: no epoch left).
RESUMED: Final = re.compile(r"resumed from \S+ at epoch \d+")
JOBSET_NAME_LABEL: Final = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_LABEL: Final = "jobset.sigs.k8s.io/replicatedjob-name"
JOB_INDEX_LABEL: Final = "jobset.sigs.k8s.io/job-index"
COMPLETION_INDEX: Final = "batch.kubernetes.io/job-completion-index"
TRAINER_CONTAINER: Final = "tensorflow"


def log_source(jobset: dict[str, Any]) -> str:
    """The replicated job whose first pod logs the run's progress.

    `chief` if the run has one, else the first role that trains (not the data import, not a parameter
    server, which only serves variables).
    """
    names = [str(job["name"]) for job in jobset["spec"]["replicatedJobs"]]
    if "chief" in names:
        return "chief"
    trainers = [n for n in names if n not in ("data-import", "ps")]
    return trainers[0] if trainers else names[-1]


def _first_pod(pods: list[dict[str, Any]], jobset: str, role: str) -> dict[str, Any] | None:
    """Pod 0 of job 0 of `role` (JobSet names it `<jobset>-<role>-0-0-<suffix>`)."""
    for pod in pods:
        meta = pod.get("metadata") or {}
        labels, notes = meta.get("labels") or {}, meta.get("annotations") or {}
        if labels.get(JOBSET_NAME_LABEL, jobset) != jobset or labels.get(REPLICATED_JOB_LABEL, role) != role:
            continue
        index = labels.get(COMPLETION_INDEX, notes.get(COMPLETION_INDEX))
        if labels.get(JOB_INDEX_LABEL, "0") == "0" and (
            index == "0" or (index is None and str(meta.get("name", "")).startswith(f"{jobset}-{role}-0-0-"))
        ):
            return pod
    return None


@dataclass
class FirstStep:
    """The first progress line of the run, and when it was logged."""

    pod: str
    line: str
    logged_at: str
    """The runtime's timestamp of the line (RFC 3339), '' when the log had none."""
    seen_s: float
    """Seconds after submission when the CLI first read it (the fallback when there is no timestamp)."""
    started_at: str = ""
    """The trainer container's start (the pod's status)."""


def find_first_step(text: str) -> tuple[str, str] | None:
    """(timestamp, line) of the first `epoch N/M:` line of a log read with timestamps ('' when unstamped)."""
    for raw in text.splitlines():
        stamped = _STAMPED.match(raw)
        stamp, line = (stamped.group(1), stamped.group(2)) if stamped else ("", raw)
        if FIRST_STEP.match(line.strip()):
            return stamp, line.strip()
    return None


class _Logs:
    """Reads the progress pod's log at each poll until the first step shows (then no more reads)."""

    def __init__(self, ctx: Context, namespace: str, name: str, role: str) -> None:
        self.ctx, self.namespace, self.name, self.role = ctx, namespace, name, role
        self.first: FirstStep | None = None
        self.pod: dict[str, Any] | None = None
        self.tail = ""
        self.resumed = ""

    def read(self, elapsed: float) -> None:
        if self.first is not None:
            return
        if self.pod is None:
            pods = self.ctx.cluster.list_pods(
                self.namespace, f"{JOBSET_NAME_LABEL}={self.name},{REPLICATED_JOB_LABEL}={self.role}"
            )
            self.pod = _first_pod(pods, self.name, self.role)
            if self.pod is None:
                return
        pod_name = self.pod["metadata"]["name"]
        text = self.ctx.cluster.pod_log(self.namespace, pod_name, TRAINER_CONTAINER, timestamps=True)
        if not text and self.ctx.cluster.read_pod(self.namespace, pod_name) is None:
            self.pod = None  # restarted by the JobSet (failurePolicy.maxRestarts): its new pod has a new name
            return
        self.tail = _unstamped_tail(text)
        self.resumed = next((m.group(0) for m in [RESUMED.search(text)] if m), "")
        found = find_first_step(text)
        if found is not None:
            current = self.ctx.cluster.read_pod(self.namespace, pod_name) or self.pod
            statuses = (current.get("status") or {}).get("containerStatuses") or []
            state = next((s.get("state") or {} for s in statuses if s.get("name") == TRAINER_CONTAINER), {})
            started = (state.get("running") or state.get("terminated") or {}).get("startedAt", "")
            self.first = FirstStep(pod_name, found[1], found[0], elapsed, str(started or ""))


def _unstamped_tail(text: str, lines: int = 2) -> str:
    """The log's last `lines` non-empty lines without their timestamps, joined (300 characters at most)."""
    kept = [(m.group(2) if (m := _STAMPED.match(raw)) else raw).strip() for raw in text.splitlines()]
    return " | ".join([line for line in kept if line][-lines:])[-300:]


def step_timings(first: FirstStep | None, submitted_at: str) -> dict[str, float]:
    """`submittedToFirstStep` (server timestamps, else the CLI's clock) and `containerStartToFirstStep`."""
    if first is None:
        return {}
    values: dict[str, float | None] = {
        "submittedToFirstStep": (kc.seconds_between(submitted_at, first.logged_at) if first.logged_at else None)
        or first.seen_s,
        "containerStartToFirstStep": kc.seconds_between(first.started_at, first.logged_at)
        if first.started_at and first.logged_at
        else None,
    }
    return {k: round(v, 1) for k, v in values.items() if v is not None}


def run_object(run: TrainingRunExpect, run_id: str) -> dict[str, Any]:
    """The run's JobSet with the verify run's labels added (so a killed run's leftovers are found by label)."""
    jobset = run.for_run(run_id)
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
        submitted_at = ctx.now().isoformat()
        role = log_source(jobset)
        logs = _Logs(ctx, namespace, name, role)
        seen: dict[str, float] = {}
        state = run_queue.RunState("Submitted")
        while True:
            current = ctx.cluster.get_jobset(namespace, name)
            if current is None:
                state = run_queue.RunState("Gone", "the JobSet was deleted before an end was seen")
            else:
                submitted_at = current["metadata"].get("creationTimestamp") or submitted_at
                uid = current["metadata"].get("uid")
                found = ctx.cluster.list_workloads(namespace, f"{queue_manifests.JOB_UID_LABEL}={uid}") if uid else []
                state = run_queue.workload_state(found[0] if found else None, (), current)
            elapsed = ctx.clock() - started
            seen.setdefault(state.state, elapsed)
            if state.state in ("Admitted", "Running", "Completed", "Failed"):
                logs.read(elapsed)
            step = ""
            if logs.first is not None:
                step = f", first step logged at {logs.first.seen_s:.0f} s"
            elif state.state in ("Admitted", "Running"):
                step = ", no step logged yet"
            ctx.progress(f"run {name}: {state}{step}")
            if state.state in run_queue.TERMINAL:
                break
            ctx.wait(max(ctx.poll_s, 10.0))
        path = " -> ".join(f"{s} {t:.0f} s" for s, t in sorted(seen.items(), key=lambda item: item[1]))
        timings = {**_timings(seen), **step_timings(logs.first, submitted_at)}
        where = logs.pod["metadata"]["name"] if logs.pod else f"{role} 0"
        if logs.first is not None:
            step_line = (
                f"; first step logged by {where} after {timings['submittedToFirstStep']:.0f} s: '{logs.first.line}'"
            )
        else:
            step_line = f"; no first step logged by {where}" + (f" (its log ends: {logs.tail})" if logs.tail else "")
        if state.state == "Completed":
            if logs.first is None:  # a measurement missing, not a failure: the run itself did complete
                step_line = f"; no first step logged by {where}" + (
                    f": it resumed from a finished run's checkpoint ('{logs.resumed}'), nothing was left to train"
                    if logs.resumed
                    else ": no `epoch N/M:` line, the example trainer's (a trainer of your own prints its own)"
                )
                return passed(f"run {name}: {path}{step_line}", timings=timings, states=seen, firstStep=None)
            return passed(
                f"run {name}: {path}{step_line}",
                timings=timings,
                states=seen,
                firstStep={"pod": logs.first.pod, "line": logs.first.line, "loggedAt": logs.first.logged_at},
            )
        causes = {
            "Failed": (
                "a pod of the run failed: the trainer's own error, a GPU check that stopped a GPU pod (exit 3), or "
                "an image that does not run",
                f"`kubectl -n {namespace} logs -l jobset.sigs.k8s.io/jobset-name={name} --all-containers` "
                "(run with --keep to keep the run)",
            ),
            # Kueue deactivates a run for one of three causes; the state line above names which, in Kueue's words.
            "Deactivated": (
                "Kueue gave up on the run, for the cause named above: its GPU nodes could not be provisioned (the "
                "ProvisioningRequest failed every try), its pods were not all ready within the pods-ready timeout "
                "queue.requeueLimit times, or it ran past its maximum execution time",
                "provisioning: `gpuplane preflight STACK` (quotas, capacity of the group's instance types) or more "
                "instance types in the group; readiness: raise gpuplane:queue's pods-ready timeout or pre-pull the "
                "image; then the command above requeues the run",
            ),
            "Gone": (
                "the run was deleted by someone else, or its TTL removed it before the end was read",
                "run again; `kubectl -n NS get jobsets` while it runs",
            ),
        }
        cause, fix = causes.get(state.state, ("the run ended unexpectedly", "see `gpuplane queue STACK`"))
        raise CheckFailed(f"run {name}: {path}: {state}{step_line}", cause, fix, timings=timings)

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
            proves="the run is admitted by the queue (its GPU nodes provisioned), its pods start, it logs its first "
            "step and it completes",
            probes=_probes(run),
        )
        for run in expect.training_runs
    ]


def _probes(run: TrainingRunExpect) -> Callable[[Expectations, str], list[dict[str, Any]]]:
    def build(_expect: Expectations, run_id: str) -> list[dict[str, Any]]:
        return [run_object(run, run_id)]

    return build
