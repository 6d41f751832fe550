"""The training run through the queue: admission, start and completion times; failure, eviction, leftovers."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest

from gpuplane.infra.verify import checks_training as ct
from gpuplane.infra.verify.model import Check, CheckFailed, passed
from gpuplane.manifests import verify as probes
from tests.verify.conftest import RUN
from tests.verify.fakes import ROOT, FakeCluster, Script, healthy_nodes

TRAINER = ROOT / "examples" / "training" / "mnist" / "train.py"
CHIEF_LOG = "\n".join(
    [
        "2026-11-26T10:00:50.000000001Z chief:0 parameterServer TensorFlow 2.20.0 Keras 3.10.0",
        "2026-11-26T10:00:52.5Z chief:0 connected to 2 workers and 1 ps",
        "2026-11-26T10:01:05.250000000Z epoch 1/3: loss 0.4312 accuracy 0.873",
        "2026-11-26T10:01:15Z epoch 2/3: loss 0.2101 accuracy 0.941",
    ]
)


def run_pod(role: str, index: int = 0, *, started: str = "2026-11-26T10:00:45Z") -> dict[str, Any]:
    """A pod of the verify run as JobSet and the Job controller label it."""
    return {
        "metadata": {
            "name": f"mnist-verify-abcdef-{role}-0-{index}-x7k2p",
            "namespace": "ml",
            "labels": {
                ct.JOBSET_NAME_LABEL: "mnist-verify-abcdef",
                ct.REPLICATED_JOB_LABEL: role,
                ct.JOB_INDEX_LABEL: "0",
                ct.COMPLETION_INDEX: str(index),
            },
        },
        "status": {
            "phase": "Running",
            "containerStatuses": [{"name": "tensorflow", "state": {"running": {"startedAt": started}}}],
        },
    }


def _run(dev, make_ctx, states: list[str], **kwargs):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.jobset_states = states
    ctx = make_ctx(dev, cluster, **kwargs)
    return cluster, ctx, ct.training_check(dev.training_runs[0])


def test_the_dev_stack_has_its_mnist_run(dev):
    (run,) = dev.training_runs
    assert run.workload == "mnist" and run.jobset["metadata"]["name"] == "mnist-verify-000000"
    assert run.gpus is False  # dev's example trains on CPU
    assert run.jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "training"


def test_a_run_through_the_queue_passes_with_its_times(dev, make_ctx):
    states = ["none", "Queued", "Provisioning", "Provisioning", "Admitted", "Running", "Running", "Completed"]
    cluster, ctx, check = _run(dev, make_ctx, states)
    outcome = check(ctx)
    assert outcome.status == "pass"
    assert outcome.evidence == (
        "run mnist-verify-abcdef: Submitted 0 s -> Queued 10 s -> Provisioning 20 s -> Admitted 40 s -> Running 50 s "
        "-> Completed 70 s; no first step logged by chief 0: no `epoch N/M:` line, the example trainer's (a "
        "trainer of your own prints its own)"
    )
    assert dict(outcome.timings) == {
        "submittedToAdmitted": 40.0,
        "admittedToRunning": 10.0,
        "runningToCompleted": 20.0,
        "total": 70.0,
    }
    jobset = next(o for o in cluster.created if o["kind"] == "JobSet")
    assert jobset["metadata"]["labels"][probes.RUN_LABEL] == RUN
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "training"
    assert jobset["spec"]["suspend"] is True  # submitted suspended, admitted by Kueue


@pytest.mark.parametrize(
    ("states", "end", "cause"),
    [
        (["Queued", "Admitted", "Running", "Failed"], "Failed", "a pod of the run failed"),
        (["Queued", "Admitted", "Deactivated"], "Deactivated (its pods were not all ready in time", "requeueLimit"),
        (
            ["Queued", "Provisioning", "DeactivatedAdmissionCheck"],
            "Deactivated (its GPU nodes could not be provisioned: the ProvisioningRequest failed",
            "could not be provisioned",
        ),
        (["Queued", "gone"], "Gone (the JobSet was deleted before an end was seen)", "deleted by someone else"),
    ],
)
def test_a_run_that_does_not_complete_fails_with_its_end(dev, make_ctx, states, end, cause):
    _cluster, ctx, check = _run(dev, make_ctx, states)
    with pytest.raises(CheckFailed) as caught:
        check(ctx)
    outcome = caught.value.outcome
    assert f": {end}" in outcome.evidence
    assert cause in outcome.cause and outcome.fix


def test_a_leftover_run_is_named_not_replaced(dev, make_ctx):
    cluster, ctx, check = _run(dev, make_ctx, [])
    cluster.jobsets[("ml", "mnist-verify-abcdef")] = {"metadata": {"name": "mnist-verify-abcdef", "namespace": "ml"}}
    with pytest.raises(CheckFailed) as caught:
        check(ctx)
    assert caught.value.outcome.evidence == "a JobSet ml/mnist-verify-abcdef exists already"
    assert "kubectl -n ml delete jobset mnist-verify-abcdef" in caught.value.outcome.fix
    assert not [o for o in cluster.created if o["kind"] == "JobSet"]


def test_the_run_is_cleaned_up_with_the_rest(dev):
    from gpuplane.infra.verify import runner  # noqa: PLC0415
    from tests.verify.conftest import objects_for  # noqa: PLC0415
    from tests.verify.fakes import FakeAws  # noqa: PLC0415

    cluster = FakeCluster(healthy_nodes(dev))
    cluster.jobset_states = ["Queued", "Running", "Completed"]
    the_runner = runner.Runner(dev, cluster, FakeAws(), RUN, objects_for(cluster, dev), poll_s=0.0, tick_s=0.01)
    the_runner.sleep = lambda _s: None
    api = Check("api", "API", lambda _ctx: passed("answers"))
    report = the_runner.run([api, *ct.training_checks(dev)])
    assert [r.outcome.status for r in report.results] == ["pass", "pass"]
    assert ("JobSet", "ml", "mnist-verify-abcdef") in cluster.deleted


def _with_pods(cluster: FakeCluster, chief_log: str, worker_log: str = "epoch 1/3: loss 9.9 accuracy 0.1") -> None:
    cluster.run_pods = [run_pod("ps"), run_pod("worker", 1), run_pod("worker", 0), run_pod("chief")]
    cluster.scripts["mnist-verify-abcdef-chief-0-0-"] = Script(logs={"tensorflow": chief_log})
    cluster.scripts["mnist-verify-abcdef-worker-"] = Script(logs={"tensorflow": worker_log})


def test_the_first_step_is_timed_from_the_chiefs_log_with_the_apis_timestamps(dev, make_ctx):
    cluster, ctx, check = _run(dev, make_ctx, ["Queued", "Admitted", "Running", "Running", "Completed"])
    _with_pods(cluster, CHIEF_LOG)
    outcome = check(ctx)
    assert outcome.status == "pass"
    assert outcome.evidence.endswith(
        "Completed 40 s; first step logged by mnist-verify-abcdef-chief-0-0-x7k2p after 65 s: "
        "'epoch 1/3: loss 0.4312 accuracy 0.873'"
    )
    # 10:01:05.25 against the JobSet's creation (10:00:00) and the container's start (10:00:45).
    assert outcome.timings["submittedToFirstStep"] == 65.2
    assert outcome.timings["containerStartToFirstStep"] == 20.2
    assert outcome.details["firstStep"] == {
        "pod": "mnist-verify-abcdef-chief-0-0-x7k2p",
        "line": "epoch 1/3: loss 0.4312 accuracy 0.873",
        "loggedAt": "2026-11-26T10:01:05.250000000Z",
    }
    # Only the chief's trainer container was read, with timestamps, and no more once the step was seen.
    assert cluster.log_reads == [("mnist-verify-abcdef-chief-0-0-x7k2p", "tensorflow", True)]


def test_without_timestamps_the_first_step_is_when_the_cli_saw_it(dev, make_ctx):
    cluster, ctx, check = _run(dev, make_ctx, ["Queued", "Admitted", "Running", "Running", "Completed"])
    _with_pods(cluster, "chief:0 parameterServer\n\n")
    states = iter(["chief:0 parameterServer", "chief:0 parameterServer\nepoch 1/3: loss 0.5 accuracy 0.8"])
    original = cluster.pod_log

    def growing(namespace: str, name: str, container: str, *, timestamps: bool = False) -> str:
        original(namespace, name, container, timestamps=timestamps)
        return next(states, "chief:0 parameterServer\nepoch 1/3: loss 0.5 accuracy 0.8")

    cluster.pod_log = growing
    outcome = check(ctx)
    assert outcome.timings["submittedToFirstStep"] == 20.0  # the third poll: 0, 10, 20 s
    assert "containerStartToFirstStep" not in outcome.timings


def test_a_run_resumed_from_a_finished_checkpoint_passes_and_says_why_no_step_was_timed(dev, make_ctx):
    cluster, ctx, check = _run(dev, make_ctx, ["Queued", "Running", "Completed"])
    _with_pods(
        cluster,
        "2026-11-26T10:00:50Z chief:0 parameterServer TensorFlow 2.20.0 Keras 3.10.0\n"
        "2026-11-26T10:00:51Z resumed from /logs/mnist/checkpoints/ckpt-3 at epoch 3\n"
        '2026-11-26T10:00:55Z FINAL {"test_accuracy": 0.97}',
    )
    outcome = check(ctx)
    assert outcome.status == "pass"
    assert outcome.evidence.endswith(
        "no first step logged by mnist-verify-abcdef-chief-0-0-x7k2p: it resumed from a finished run's checkpoint "
        "('resumed from /logs/mnist/checkpoints/ckpt-3 at epoch 3'), nothing was left to train"
    )
    assert "submittedToFirstStep" not in outcome.timings and outcome.details["firstStep"] is None


def test_a_failed_run_shows_the_end_of_the_chiefs_log(dev, make_ctx):
    cluster, ctx, check = _run(dev, make_ctx, ["Queued", "Admitted", "Running", "Failed"])
    _with_pods(
        cluster,
        "2026-11-26T10:00:50Z chief:0 parameterServer TensorFlow 2.20.0 Keras 3.10.0\n"
        "2026-11-26T10:00:51Z FileNotFoundError: /data/mnist/mnist.npz\n",
    )
    with pytest.raises(CheckFailed) as caught:
        check(ctx)
    outcome = caught.value.outcome
    assert outcome.evidence.endswith(
        ": Failed; no first step logged by mnist-verify-abcdef-chief-0-0-x7k2p (its log ends: chief:0 parameterServer "
        "TensorFlow 2.20.0 Keras 3.10.0 | FileNotFoundError: /data/mnist/mnist.npz)"
    )
    assert "a pod of the run failed" in outcome.cause


def test_the_progress_says_when_no_step_is_logged_yet(dev, make_ctx):
    cluster, ctx, check = _run(dev, make_ctx, ["Queued", "Running", "Running", "Completed"])
    _with_pods(cluster, "2026-11-26T10:00:50Z chief:0 parameterServer TensorFlow 2.20.0 Keras 3.10.0")
    said: list[str] = []
    ctx.progress = said.append
    check(ctx)
    assert said[1] == "run mnist-verify-abcdef: Running, no step logged yet"


@pytest.mark.parametrize(
    ("roles", "source"),
    [
        (["chief", "worker", "ps"], "chief"),
        (["data-import", "ps", "worker"], "worker"),
        (["worker"], "worker"),
        (["data-import", "chief", "worker"], "chief"),
    ],
)
def test_the_log_that_shows_progress(roles, source):
    assert ct.log_source({"spec": {"replicatedJobs": [{"name": r} for r in roles]}}) == source


def test_the_first_pod_is_found_by_its_index_label_or_its_name():
    labelled = run_pod("worker", 0)
    named = run_pod("worker", 0)
    del named["metadata"]["labels"][ct.COMPLETION_INDEX]
    other = run_pod("worker", 1)
    assert ct._first_pod([other, labelled], "mnist-verify-abcdef", "worker") is labelled
    assert ct._first_pod([other, named], "mnist-verify-abcdef", "worker") is named
    assert ct._first_pod([other, run_pod("chief")], "mnist-verify-abcdef", "worker") is None


def test_the_pattern_matches_what_the_example_trainer_prints():
    """The check's patterns against the example's own f-strings (train.py), so the two cannot drift apart."""
    source = TRAINER.read_text(encoding="utf-8")
    epoch = re.search(r'print\((f"epoch [^"]+")', source)
    resumed = re.search(r'print\((f"resumed from [^"]+")', source)
    assert epoch and resumed
    values = {"epoch": 0, "args": SimpleNamespace(epochs=3), "loss": 0.43121, "accuracy": 0.8731}
    line = eval(epoch.group(1), {}, values)
    assert line == "epoch 1/3: loss 0.4312 accuracy 0.873"
    assert ct.find_first_step(f"2026-11-26T10:01:05Z {line}") == ("2026-11-26T10:01:05Z", line)
    again = eval(resumed.group(1), {}, {"latest": "/logs/mnist/checkpoints/ckpt-3", "first_epoch": 3})
    assert ct.RESUMED.search(again)
    assert ct.find_first_step("chief:0 parameterServer\nresumed from x at epoch 3") is None


def test_a_restarted_run_is_followed_to_its_new_pod(dev, make_ctx):
    cluster, ctx, check = _run(dev, make_ctx, ["Queued", "Running", "Running", "Running", "Completed"])
    _with_pods(cluster, "")
    first_chief = cluster.run_pods[-1]
    original = cluster.list_workloads

    def restart_after_first_read(namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        if cluster.log_reads and first_chief in cluster.run_pods:  # the JobSet recreated the run's pods
            cluster.run_pods.remove(first_chief)
            again = run_pod("chief")
            again["metadata"]["name"] = "mnist-verify-abcdef-chief-0-0-r2d2x"
            cluster.run_pods.append(again)
            cluster.scripts["mnist-verify-abcdef-chief-0-0-r2d2x"] = Script(logs={"tensorflow": CHIEF_LOG})
        return original(namespace, label_selector)

    cluster.list_workloads = restart_after_first_read
    outcome = check(ctx)
    assert "first step logged by mnist-verify-abcdef-chief-0-0-r2d2x after 65 s" in outcome.evidence
    assert [name for name, _c, _t in cluster.log_reads] == [
        "mnist-verify-abcdef-chief-0-0-x7k2p",
        "mnist-verify-abcdef-chief-0-0-x7k2p",
        "mnist-verify-abcdef-chief-0-0-r2d2x",
    ]
