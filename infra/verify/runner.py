"""Run the checks: dependency order, independent ones in parallel, a deadline each, clean-up whatever happens.

Why threads: the checks wait on the cluster (a GPU node takes minutes), not on the CPU, and independent ones
(the GPU probe of each group, storage, the add-ons) should wait together so a full run takes as long as its
slowest check. One failing check never hides another: a check runs unless a check it `needs` did not pass,
and then it is reported as skipped, naming that need. A check also waits for the selected checks it runs
`after` (their outcome does not matter). Ctrl-C stops every check at its next poll, removes
what the run created (unless `--keep`) and returns what finished, marked interrupted.

Why daemon threads, not a thread pool: a check stuck in a network call is abandoned after its deadline and
grace, and nothing may wait for it afterwards; `concurrent.futures` joins its workers when the interpreter
exits, so one stalled read would keep the process alive after the report. The clean-up runs under its own
deadline too, and a second Ctrl-C stops waiting for it: the report then lists what may be left.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpuplane.infra.verify import model
from gpuplane.infra.verify.model import (
    Cancelled,
    Check,
    CheckFailed,
    Context,
    Deadline,
    Objects,
    Outcome,
    skipped,
)

if TYPE_CHECKING:
    from gpuplane.infra.verify.aws import VerifyAws
    from gpuplane.infra.verify.cluster import VerifyCluster
    from gpuplane.infra.verify.expect import Expectations

# How long past its deadline the runner waits for a check that does not return (a call stuck in the
# network) before reporting it failed and moving on; and how long Ctrl-C waits for checks to stop.
GRACE_S = 15.0
# How long the clean-up may take (each delete has its request timeout; a stalled one must not hold the run).
CLEANUP_S = 120.0


@dataclass
class Result:
    """One check's outcome with its name, what it proves, and how long it took."""

    name: str
    title: str
    outcome: Outcome
    duration_s: float = 0.0
    proves: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (report.json, `--json`)."""
        o = self.outcome
        return {
            "name": self.name,
            "title": self.title,
            "status": o.status,
            "evidence": o.evidence,
            "cause": o.cause,
            "fix": o.fix,
            "timings": dict(o.timings),
            "details": dict(o.details),
            "durationS": round(self.duration_s, 1),
            "proves": self.proves,
        }


@dataclass
class RunReport:
    """A whole run: every result in check order, the clean-up, whether it was interrupted."""

    stack: str
    run_id: str
    cluster: str
    region: str
    started_at: str
    results: list[Result] = field(default_factory=list)
    duration_s: float = 0.0
    interrupted: bool = False
    kept: list[str] = field(default_factory=list)
    cleanup_problems: list[str] = field(default_factory=list)
    """Every object that may be left behind by accident, with why (a failed delete, no time, no answer)."""
    remove: list[str] = field(default_factory=list)
    """The commands that remove what was kept or left behind."""

    @property
    def failed(self) -> list[Result]:
        """The failed checks."""
        return [r for r in self.results if r.outcome.status == "fail"]

    @property
    def ok(self) -> bool:
        """No check failed, nothing was left behind by accident, not interrupted."""
        return not self.failed and not self.cleanup_problems and not self.interrupted


def select(checks: Sequence[Check], only: Sequence[str]) -> list[Check]:
    """The checks named in `only` plus everything they need; all when `only` is empty.

    A name may be a family: `gpu` selects every `gpu-<group>`. ValueError names what is unknown and what exists.
    """
    if not only:
        return list(checks)
    by_name = {c.name: c for c in checks}
    wanted: set[str] = set()
    unknown = []
    for name in only:
        family = [c.name for c in checks if c.name.startswith(f"{name}-")]
        if name in by_name:
            wanted.add(name)
        elif family:
            wanted.update(family)
        else:
            unknown.append(name)
    if unknown:
        raise ValueError(f"--only: unknown checks {unknown}; this stack's checks: {', '.join(by_name)}")
    stack = list(wanted)
    while stack:
        for need in by_name[stack.pop()].needs:
            if need not in wanted:
                wanted.add(need)
                stack.append(need)
    return [c for c in checks if c.name in wanted]


def execute(check: Check, ctx: Context, last_seen: Callable[[], str | None]) -> Outcome:
    """Run one check, turning every way it can end into an outcome."""
    try:
        return check.run(ctx)
    except CheckFailed as exc:
        return exc.outcome
    except Deadline:
        seen = last_seen()
        return Outcome(
            "fail",
            f"no result within {check.deadline_s:.0f} s" + (f"; last seen: {seen}" if seen else ""),
            "the probe is still waiting (a node that does not come, an image that pulls slowly, a volume that does "
            "not mount)",
            "run again with --keep and `kubectl describe` the probe pod in the run's namespace",
        )
    except Cancelled:
        return skipped("interrupted")
    except Exception as exc:  # an API call failed: one check's failure must not stop the others
        return Outcome(
            "fail",
            f"{type(exc).__name__}: {str(exc).splitlines()[0][:400] if str(exc) else ''}",
            "an API call failed (permissions, throttling, the network) or the check met an answer it does not know",
            "run again; if it persists, report it with this message",
        )


def _until_cancelled(cancel: threading.Event) -> Callable[[float], None]:
    """A real-time sleep that ends early once `cancel` is set (Ctrl-C): the check's next `tick` then stops it."""

    def sleep(seconds: float) -> None:
        cancel.wait(seconds)

    return sleep


@dataclass
class Runner:
    """Runs checks against one cluster for one run id."""

    expect: Expectations
    cluster: VerifyCluster
    aws: VerifyAws | None
    run_id: str
    objects: Objects
    workers: int = 6
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] | None = None
    """How a check waits between polls; None: real time, cut short by Ctrl-C, so the clean-up starts at once
    rather than after the poll interval (up to 15 s for a metrics query) a check was sleeping through."""
    progress: Callable[[str], None] = lambda _message: None
    poll_s: float = 3.0
    grace_s: float = GRACE_S
    tick_s: float = 0.2
    second_az: bool = False
    """`--second-az`, handed to every check's context."""
    cleanup_s: float = CLEANUP_S
    kubeconfig: str = ""
    """Named in the remove commands the report prints (`kubectl --kubeconfig ...`)."""
    abandoned: list[threading.Thread] = field(default_factory=list)
    """Threads left running: checks stuck past their deadline, a clean-up past its own."""
    _threads: dict[Future[Outcome], threading.Thread] = field(default_factory=dict, repr=False)

    def run(self, checks: Sequence[Check], *, skip_gpu: bool = False, keep: bool = False) -> RunReport:
        """Run `checks` (already selected) and clean up; KeyboardInterrupt ends with `interrupted` set."""
        report = RunReport(
            self.expect.stack,
            self.run_id,
            self.expect.cluster_name,
            self.expect.region,
            datetime.now(UTC).isoformat(timespec="seconds"),
        )
        start = self.clock()
        cancel = threading.Event()
        results: dict[str, Result] = {}
        try:
            self._schedule(checks, results, cancel, skip_gpu)
        except KeyboardInterrupt:
            report.interrupted = True
        cancel.set()
        try:
            if keep:
                report.kept = [model.describe(o) for o in self.objects.created]
                report.remove = self.objects.remove_commands(self.kubeconfig, self.objects.created)
            else:
                self._clean_up()
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting for the clean-up, say what may be left
            report.interrupted = True
        if not keep:
            report.cleanup_problems = self.objects.left_behind()
            report.remove = self.objects.remove_commands(self.kubeconfig)
        for check in checks:
            if check.name not in results:
                results[check.name] = Result(check.name, check.title, skipped("interrupted"), proves=check.proves)
        report.results = [results[c.name] for c in checks]
        report.duration_s = self.clock() - start
        return report

    def _schedule(
        self, checks: Sequence[Check], results: dict[str, Result], cancel: threading.Event, skip_gpu: bool
    ) -> None:
        pending = list(checks)
        selected = {c.name for c in checks}
        unordered: set[str] = set()  # `after` checks no longer waited for (they can never start)
        running: dict[Future[Outcome], tuple[Check, Context, float]] = {}
        last: dict[str, str] = {}
        try:
            while pending or running:
                for check in list(pending):
                    if len(running) >= self.workers:
                        break
                    if not all(n in results for n in check.needs):
                        continue
                    if not all(n in results for n in check.after if n in selected and n not in unordered):
                        continue
                    pending.remove(check)
                    blocked = [n for n in check.needs if results[n].outcome.status != "pass"]
                    if blocked:
                        why = ", ".join(f"{n} ({results[n].outcome.status})" for n in blocked)
                        results[check.name] = Result(
                            check.name, check.title, skipped(f"needs {why}"), proves=check.proves
                        )
                    elif skip_gpu and check.gpu:
                        results[check.name] = Result(
                            check.name, check.title, skipped("--skip-gpu"), proves=check.proves
                        )
                    else:
                        ctx = self._context(check, cancel, last)
                        running[self._start(check, ctx, functools.partial(last.get, check.name, ""))] = (
                            check,
                            ctx,
                            self.clock(),
                        )
                if not running:
                    # Nothing runs and no pending check can start: a need was never selected, or `after` orders
                    # that cannot all hold (a cycle).
                    def startable(c: Check) -> bool:
                        return all(n in results for n in c.needs) and all(
                            n in results for n in c.after if n in selected and n not in unordered
                        )

                    if pending and not any(startable(c) for c in pending):
                        stuck = [c for c in pending if not all(n in results for n in c.needs)]
                        for check in stuck:  # a need that was not selected: never runs, so neither do these
                            missing = [n for n in check.needs if n not in results]
                            results[check.name] = Result(
                                check.name,
                                check.title,
                                skipped(f"needs {', '.join(missing)}, not run"),
                                proves=check.proves,
                            )
                            pending.remove(check)
                        if not stuck:  # only `after` orders hold them: start them in list order
                            unordered.update(c.name for c in pending)
                    continue
                done, _ = wait(list(running), timeout=self.tick_s, return_when=FIRST_COMPLETED)
                for future in done:
                    check, _ctx, began = running.pop(future)
                    results[check.name] = Result(
                        check.name, check.title, future.result(), self.clock() - began, check.proves
                    )
                for future, (check, ctx, began) in list(running.items()):
                    if self.clock() > ctx.deadline + self.grace_s:
                        running.pop(future)
                        self.abandoned.append(self._threads[future])
                        seen = last.get(check.name, "")
                        results[check.name] = Result(
                            check.name,
                            check.title,
                            Outcome(
                                "fail",
                                f"did not return within {check.deadline_s:.0f} s (+{self.grace_s:.0f} s)"
                                + (f"; last seen: {seen}" if seen else ""),
                                "an API call is stuck (the network to the API server or AWS)",
                                "run again; check the connection to the cluster",
                            ),
                            self.clock() - began,
                            check.proves,
                        )
        except KeyboardInterrupt:
            cancel.set()
            finished, _ = wait(list(running), timeout=self.grace_s)
            for future in finished:
                check, _ctx, began = running[future]
                results[check.name] = Result(
                    check.name, check.title, future.result(), self.clock() - began, check.proves
                )
            self.abandoned += [self._threads[f] for f in running if f not in finished]
            raise

    def _start(self, check: Check, ctx: Context, last_seen: Callable[[], str | None]) -> Future[Outcome]:
        """Run the check in a daemon thread (never joined: one stuck in a call must not hold the exit)."""
        future: Future[Outcome] = Future()

        def work() -> None:
            try:
                future.set_result(execute(check, ctx, last_seen))
            except BaseException as exc:  # execute turns every exception into an outcome; this is a last guard
                future.set_exception(exc)

        thread = threading.Thread(target=work, name=f"verify-{check.name}", daemon=True)
        self._threads[future] = thread
        thread.start()
        return future

    def _clean_up(self) -> None:
        """Delete what the run created, within `cleanup_s` (real time: a stalled DELETE is left, not waited on)."""
        deadline = time.monotonic() + self.cleanup_s
        worker = threading.Thread(
            target=self.objects.clean_up, args=(deadline, time.monotonic), name="verify-cleanup", daemon=True
        )
        worker.start()
        self.abandoned.append(worker)  # until it ends: a second Ctrl-C may stop the wait below
        worker.join(self.cleanup_s + 1.0)
        if not worker.is_alive():
            self.abandoned.remove(worker)

    def _context(self, check: Check, cancel: threading.Event, last: dict[str, str]) -> Context:
        def progress(message: str) -> None:
            last[check.name] = message
            self.progress(f"{check.name}: {message}")

        return Context(
            expect=self.expect,
            cluster=self.cluster,
            aws=self.aws,
            run_id=self.run_id,
            objects=self.objects,
            check=check.name,
            deadline=self.clock() + check.deadline_s,
            deadline_s=check.deadline_s,
            cancel=cancel,
            clock=self.clock,
            sleep=self.sleep or _until_cancelled(cancel),
            progress=progress,
            poll_s=self.poll_s,
            second_az=self.second_az,
        )
