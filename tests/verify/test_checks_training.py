"""The training run through the queue: admission, start and completion times; failure, eviction, leftovers."""

from __future__ import annotations

import pytest

from gpuplane.infra.verify import checks_training as ct
from gpuplane.infra.verify.model import Check, CheckFailed, passed
from gpuplane.manifests import verify as probes
from tests.verify.conftest import RUN
from tests.verify.fakes import FakeCluster, healthy_nodes


def _run(dev, make_ctx, states: list[str], **kwargs):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.jobset_states = states
    ctx = make_ctx(dev, cluster, **kwargs)
    return cluster, ctx, ct.training_check(dev.training_runs[0])


def test_the_dev_stack_has_its_mnist_run(dev):
    (run,) = dev.training_runs
    assert run.workload == "mnist" and run.jobset["metadata"]["name"] == "mnist-verify"
    assert run.gpus is False  # dev's example trains on CPU
    assert run.jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "training"


def test_a_run_through_the_queue_passes_with_its_times(dev, make_ctx):
    states = ["none", "Queued", "Provisioning", "Provisioning", "Admitted", "Running", "Running", "Completed"]
    cluster, ctx, check = _run(dev, make_ctx, states)
    outcome = check(ctx)
    assert outcome.status == "pass"
    assert outcome.evidence == (
        "run mnist-verify: Submitted 0 s -> Queued 10 s -> Provisioning 20 s -> Admitted 40 s -> Running 50 s "
        "-> Completed 70 s"
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
        (["Queued", "Admitted", "Deactivated"], "Deactivated (evicted 3 time(s)", "requeue limit"),
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
    cluster.jobsets[("ml", "mnist-verify")] = {"metadata": {"name": "mnist-verify", "namespace": "ml"}}
    with pytest.raises(CheckFailed) as caught:
        check(ctx)
    assert caught.value.outcome.evidence == "a JobSet ml/mnist-verify exists already"
    assert "kubectl -n ml delete jobset mnist-verify" in caught.value.outcome.fix
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
    assert ("JobSet", "ml", "mnist-verify") in cluster.deleted
