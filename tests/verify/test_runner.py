"""The runner: dependency order, independence, parallelism, deadlines, clean-up after success, failure and Ctrl-C."""

from __future__ import annotations

import _thread
import threading
import time
from typing import Any

import pytest

from gpuplane.infra.verify import command, model, runner
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed
from tests.verify.conftest import RUN, objects_for
from tests.verify.fakes import FakeAws, FakeCluster, Script, active_addons, healthy_nodes, report_lines


def _runner(dev, cluster: FakeCluster, **kwargs: Any) -> runner.Runner:
    return runner.Runner(
        dev, cluster, FakeAws(active_addons(dev)), RUN, objects_for(cluster, dev), poll_s=0.01, tick_s=0.01, **kwargs
    )


def _probe(ctx: Context) -> Outcome:
    """A check that creates a probe pod in the run's namespace and one in the workload namespace."""
    from gpuplane.infra.verify.pods import run_pod  # noqa: PLC0415
    from gpuplane.manifests import verify as probes  # noqa: PLC0415

    run_pod(
        ctx,
        probes.http_pod(ctx.objects.ensure_namespace(), ctx.run_id, "serving", {"a": "http://a"}, uid=10001, gid=10001),
    )
    ctx.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gv-other", "namespace": "ml"}, "spec": {}})
    return passed("probed")


def _boom(_ctx: Context) -> Outcome:
    raise CheckFailed("broken", "because", "fix it")


def test_needs_run_first_and_a_failed_need_skips_its_dependants_only(dev):
    order: list[str] = []

    def record(name: str, fail: bool = False):
        def run(_ctx: Context) -> Outcome:
            order.append(name)
            if fail:
                raise CheckFailed(f"{name} broke", "cause", "fix")
            return passed(name)

        return run

    checks = [
        Check("c", "C", record("c"), needs=("b",)),
        Check("b", "B", record("b", fail=True), needs=("a",)),
        Check("a", "A", record("a")),
        Check("d", "D", record("d"), needs=("a",)),
        Check("e", "E", record("e"), needs=("c",)),
    ]
    report = _runner(dev, FakeCluster([])).run(checks)
    assert order.index("a") < order.index("b") and order.index("a") < order.index("d")
    assert "c" not in order and "e" not in order
    status = {r.name: (r.outcome.status, r.outcome.evidence) for r in report.results}
    assert status == {
        "c": ("skipped", "needs b (fail)"),
        "b": ("fail", "b broke"),
        "a": ("pass", "a"),
        "d": ("pass", "d"),
        "e": ("skipped", "needs c (skipped)"),
    }
    assert [r.name for r in report.results] == ["c", "b", "a", "d", "e"]  # the checks' own order
    assert not report.ok and [r.name for r in report.failed] == ["b"]


def test_after_waits_for_those_checks_whatever_their_outcome_when_they_run(dev):
    order: list[str] = []
    gate = threading.Event()

    def slow(name: str, fail: bool = False):
        def run(_ctx: Context) -> Outcome:
            gate.wait(5)  # both slow checks are still running when the runner first considers `m`
            order.append(name)
            if fail:
                raise CheckFailed(f"{name} broke", "cause", "fix")
            return passed(name)

        return run

    def metrics(_ctx: Context) -> Outcome:
        order.append("m")
        return passed("m")

    checks = [
        Check("m", "M", metrics, after=("g", "s", "not-selected")),
        Check("g", "G", slow("g", fail=True)),
        Check("s", "S", slow("s")),
        Check("not-selected", "N", metrics),
    ]
    threading.Timer(0.2, gate.set).start()
    report = _runner(dev, FakeCluster([])).run(checks[:3])
    assert order[-1] == "m" and sorted(order[:2]) == ["g", "s"]  # after a failure too: `after` is no `needs`
    assert [r.outcome.status for r in report.results] == ["pass", "fail", "pass"]
    # A skipped check (--skip-gpu) is done at once: the check after it does not wait.
    order.clear()
    report = _runner(dev, FakeCluster([])).run(
        [Check("m", "M", metrics, after=("g",)), Check("g", "G", _boom, gpu=True)], skip_gpu=True
    )
    assert order == ["m"] and [r.outcome.status for r in report.results] == ["pass", "skipped"]


def test_after_orders_that_form_a_cycle_still_run(dev):
    ran: list[str] = []

    def record(name: str):
        def run(_ctx: Context) -> Outcome:
            ran.append(name)
            return passed(name)

        return run

    checks = [Check("a", "A", record("a"), after=("b",)), Check("b", "B", record("b"), after=("a",))]
    report = _runner(dev, FakeCluster([])).run(checks)
    assert sorted(ran) == ["a", "b"] and all(r.outcome.status == "pass" for r in report.results)


def test_an_unknown_after_is_refused(dev):
    model._FACTORIES["test-after"] = (99, lambda _e: [Check("x", "X", _boom, after=("nope",))])
    try:
        with pytest.raises(ValueError, match=r"verify check 'x' runs after unknown checks \['nope'\]"):
            model.checks_for(dev)
    finally:
        del model._FACTORIES["test-after"]


def test_independent_checks_run_in_parallel(dev):
    both = threading.Barrier(2, timeout=5)

    def meet(_ctx: Context) -> Outcome:
        both.wait()  # only returns when the other check is running at the same time
        return passed("met")

    report = _runner(dev, FakeCluster([])).run([Check("x", "X", meet), Check("y", "Y", meet)])
    assert [r.outcome.status for r in report.results] == ["pass", "pass"]


def test_an_unexpected_error_fails_one_check_not_the_run(dev):
    def explode(_ctx: Context) -> Outcome:
        raise RuntimeError("ApiException: (500) internal error\nbody...")

    report = _runner(dev, FakeCluster([])).run([Check("x", "X", explode), Check("y", "Y", lambda _c: passed("ok"))])
    x, y = report.results
    assert x.outcome.status == "fail" and x.outcome.evidence == "RuntimeError: ApiException: (500) internal error"
    assert x.outcome.cause and x.outcome.fix
    assert y.outcome.status == "pass"


def test_skip_gpu_skips_gpu_checks_and_their_dependants(dev):
    checks = [Check("g", "G", _boom, gpu=True), Check("h", "H", lambda _c: passed("x"), needs=("g",))]
    report = _runner(dev, FakeCluster([])).run(checks, skip_gpu=True)
    assert [(r.outcome.status, r.outcome.evidence) for r in report.results] == [
        ("skipped", "--skip-gpu"),
        ("skipped", "needs g (skipped)"),
    ]


def test_a_waiting_check_fails_at_its_deadline_instead_of_hanging(dev):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-serving-"] = Script(never_ends=True, unschedulable="0/2 nodes are available")
    started = time.monotonic()
    report = _runner(dev, cluster).run([Check("serving", "S", _probe, deadline_s=0.3)])
    assert time.monotonic() - started < 5
    outcome = report.results[0].outcome
    assert outcome.status == "fail"
    assert outcome.evidence.startswith("no result within 0 s; last seen: gv-serving-")
    assert "(0/2 nodes are available)" in outcome.evidence
    assert ("Namespace", None, f"gpuplane-verify-{RUN}") in cluster.deleted  # cleaned up after the failure


def test_a_check_stuck_in_a_call_is_abandoned_after_its_deadline_and_grace(dev):
    release = threading.Event()

    def stuck(_ctx: Context) -> Outcome:
        release.wait(10)  # a network call that never returns and never polls the deadline
        return passed("late")

    started = time.monotonic()
    report = _runner(dev, FakeCluster([]), grace_s=0.2).run([Check("s", "S", stuck, deadline_s=0.2)])
    release.set()
    assert time.monotonic() - started < 5
    assert report.results[0].outcome.evidence == "did not return within 0 s (+0 s)"
    assert "stuck" in report.results[0].outcome.cause


def test_cleanup_after_success_removes_everything_newest_first(dev):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-serving-"] = Script(logs={"probe": report_lines(a__state="AVAILABLE")})
    report = _runner(dev, cluster).run([Check("p", "P", _probe)])
    assert report.ok and report.results[0].outcome.status == "pass"
    assert [(k, n) for k, _ns, n in cluster.deleted] == [
        ("Pod", "gv-other"),
        ("Pod", f"gv-serving-{RUN}"),
        ("NetworkPolicy", f"gv-deny-ingress-{RUN}"),
        ("ConfigMap", "gpuplane-runtime"),
        ("Namespace", f"gpuplane-verify-{RUN}"),
    ]
    labels = [o["metadata"]["labels"] for o in cluster.created[:4]]
    assert all(label.get("gpuplane.io/verify-run") == RUN for label in labels)


def test_cleanup_after_failure_and_keep(dev):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-serving-"] = Script(phase="Failed")
    kept = _runner(dev, cluster).run([Check("p", "P", _probe)], keep=True)
    assert cluster.deleted == []
    assert kept.kept == [
        f"Namespace gpuplane-verify-{RUN}",
        f"ConfigMap gpuplane-verify-{RUN}/gpuplane-runtime",
        f"NetworkPolicy gpuplane-verify-{RUN}/gv-deny-ingress-{RUN}",
        f"Pod gpuplane-verify-{RUN}/gv-serving-{RUN}",
        "Pod ml/gv-other",
    ]


def test_cleanup_problems_are_reported_and_fail_the_run(dev):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.fail_delete.add("gv-other")
    report = _runner(dev, cluster).run([Check("p", "P", _probe)])
    assert report.results[0].outcome.status == "pass"
    assert report.cleanup_problems == ["Pod ml/gv-other: Forbidden: deletecollection denied"]
    assert not report.ok
    assert ("Namespace", None, f"gpuplane-verify-{RUN}") in cluster.deleted  # the rest still went


def test_ctrl_c_stops_the_checks_cleans_up_and_marks_the_run_interrupted(dev, ctrl_c):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-serving-"] = Script(never_ends=True)
    created = threading.Event()

    def waits(ctx: Context) -> Outcome:
        ctx.objects.ensure_namespace()
        created.set()
        while True:
            ctx.wait(0.01)

    def interrupt(_ctx: Context) -> Outcome:
        created.wait(5)
        _thread.interrupt_main()  # what Ctrl-C does: KeyboardInterrupt in the main thread
        return passed("sent")

    checks = [Check("w", "W", waits, deadline_s=60), Check("i", "I", interrupt), Check("z", "Z", _boom, needs=("w",))]
    report = _runner(dev, cluster).run(checks)
    assert report.interrupted and not report.ok
    status = {r.name: (r.outcome.status, r.outcome.evidence) for r in report.results}
    assert status["w"] == ("skipped", "interrupted")
    assert status["z"] == ("skipped", "interrupted")
    assert ("Namespace", None, f"gpuplane-verify-{RUN}") in cluster.deleted


def test_ctrl_c_wakes_a_check_sleeping_through_its_poll_interval(dev, ctrl_c):
    # Real time, as `gpuplane verify` runs: the check sleeps a minute between polls, and a Ctrl-C must not wait
    # for that sleep (nor for the grace given a check stuck in a call) before the clean-up.
    cluster = FakeCluster(healthy_nodes(dev))
    created = threading.Event()

    def waits(ctx: Context) -> Outcome:
        ctx.objects.ensure_namespace()
        created.set()
        while True:
            ctx.wait(60)

    def interrupt(_ctx: Context) -> Outcome:
        created.wait(5)
        time.sleep(0.2)  # the other check is asleep by now
        _thread.interrupt_main()
        return passed("sent")

    checks = [Check("w", "W", waits, deadline_s=120), Check("i", "I", interrupt)]
    started = time.monotonic()
    report = _runner(dev, cluster, grace_s=60).run(checks)
    assert time.monotonic() - started < 10
    assert report.interrupted
    assert {r.name: r.outcome.evidence for r in report.results}["w"] == "interrupted"  # it stopped, not abandoned
    assert ("Namespace", None, f"gpuplane-verify-{RUN}") in cluster.deleted


def test_select_adds_needs_and_expands_families(dev):
    command.load_checks()
    model_checks = model.checks_for(dev)
    names = [c.name for c in runner.select(model_checks, ["gpu"])]
    assert names == ["api", "gpu-gpu"]
    assert [c.name for c in runner.select(model_checks, ["system-pods"])] == ["api", "nodes", "system-pods"]
    with pytest.raises(ValueError, match=r"--only: unknown checks \['nope'\]; this stack's checks: api, nodes"):
        runner.select(model_checks, ["nope"])


def test_a_need_that_was_not_selected_skips_instead_of_waiting_forever(dev):
    report = _runner(dev, FakeCluster([])).run([Check("b", "B", _boom, needs=("a",))])
    assert [(r.outcome.status, r.outcome.evidence) for r in report.results] == [("skipped", "needs a, not run")]
