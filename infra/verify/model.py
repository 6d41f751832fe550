"""A check, what it returns, and the context it runs in: the vocabulary every verify check shares.

Why a registry of factories: the checks a stack gets depend on the stack (one GPU probe per GPU group, a
serving check only where serving is declared), and later issues add their own checks (metrics arriving, the
node agent, reservations, EFA) without editing this package: they call `register` with a factory.

Deadlines are cooperative: every wait goes through `Context.wait`/`Context.tick`, which raise `Deadline`
when the check's time is up and `Cancelled` on Ctrl-C, so a check fails instead of hanging; the runner also
stops waiting for a check that does not return (a call stuck in the network) a little after its deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from gpuplane.infra.verify.aws import VerifyAws
    from gpuplane.infra.verify.cluster import VerifyCluster
    from gpuplane.infra.verify.expect import Expectations

Status = Literal["pass", "fail", "skipped"]
STATUSES: tuple[Status, ...] = ("pass", "fail", "skipped")


@dataclass(frozen=True)
class Outcome:
    """What a check found: a status, one line of evidence, and on failure the likely cause and the fix."""

    status: Status
    evidence: str
    cause: str = ""
    fix: str = ""
    timings: Mapping[str, float] = field(default_factory=dict)
    """Named durations in seconds (e.g. `nodeLaunchToReady`), for the report's timing columns."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """Everything else worth keeping in the JSON (versions seen, per-node findings...)."""


def passed(evidence: str, *, timings: Mapping[str, float] | None = None, **details: Any) -> Outcome:
    """A pass with its evidence."""
    return Outcome("pass", evidence, timings=dict(timings or {}), details=details)


def skipped(reason: str, **details: Any) -> Outcome:
    """Not run, and why (the reason is the evidence)."""
    return Outcome("skipped", reason, details=details)


class CheckFailed(Exception):
    """Raised by a check: what was seen, why that likely is, and what to do about it."""

    def __init__(
        self,
        evidence: str,
        cause: str,
        fix: str,
        *,
        timings: Mapping[str, float] | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(evidence)
        self.outcome = Outcome("fail", evidence, cause, fix, dict(timings or {}), dict(details or {}))


class Deadline(Exception):
    """The check's time is up."""


class Cancelled(Exception):
    """The run was interrupted (Ctrl-C)."""


@dataclass(frozen=True)
class Check:
    """One named check: what it proves, what it needs first, how long it may take, and how it runs."""

    name: str
    title: str
    run: Callable[[Context], Outcome]
    needs: tuple[str, ...] = ()
    """Checks that must pass first (a failed or skipped need skips this one, saying which)."""
    after: tuple[str, ...] = ()
    """Checks to let finish first, whatever their outcome, when they run too (not added by `--only`): the
    metrics check waits for the GPU probes, whose node it then expects samples from."""
    deadline_s: float = 120.0
    gpu: bool = False
    """Starts a GPU node or uses a GPU: skipped with `--skip-gpu`."""
    proves: str = ""
    probes: Callable[[Expectations, str], list[dict[str, Any]]] | None = None
    """The objects it would create for run id `str`, for `--plan` (None: it creates nothing)."""


CheckFactory = Callable[["Expectations"], list[Check]]
_FACTORIES: dict[str, tuple[int, CheckFactory]] = {}


def register(name: str, *, order: int = 50) -> Callable[[CheckFactory], CheckFactory]:
    """Decorator: add a factory of checks under `name` (registering a name again replaces it).

    `order` places its checks in the report (and the runner's start order), whatever the import order:
    the control plane first (10), then GPUs (20), pods (30), training (40), then the rest (90).
    """

    def add(factory: CheckFactory) -> CheckFactory:
        _FACTORIES[name] = (order, factory)
        return factory

    return add


def factories() -> list[tuple[str, CheckFactory]]:
    """The registered factories, by their order, then name."""
    return [(name, factory) for name, (_order, factory) in sorted(_FACTORIES.items(), key=lambda i: (i[1][0], i[0]))]


def checks_for(expect: Expectations) -> list[Check]:
    """Every registered check for this stack; ValueError on a duplicate name or an unknown need."""
    found: list[Check] = []
    for _, factory in factories():
        found.extend(factory(expect))
    names = [c.name for c in found]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"verify checks registered twice: {duplicates}")
    for check in found:
        unknown = [n for n in check.needs if n not in names]
        if unknown:
            raise ValueError(f"verify check '{check.name}' needs unknown checks {unknown}")
        unknown = [n for n in check.after if n not in names]
        if unknown:
            raise ValueError(f"verify check '{check.name}' runs after unknown checks {unknown}")
    return found


# --- what a running check may do ---------------------------------------------------------------------------


class Objects:
    """What a run created, so that clean-up removes exactly that (thread-safe; the run's namespace made once)."""

    def __init__(
        self, cluster: VerifyCluster, namespace_doc: dict[str, Any], standing: Sequence[dict[str, Any]] = ()
    ) -> None:
        """`standing`: what the namespace holds for every probe (the helper's ConfigMap, the NetworkPolicy)."""
        self._cluster = cluster
        self._namespace_doc = namespace_doc
        self._standing = list(standing)
        self._lock = threading.Lock()
        self.created: list[dict[str, Any]] = []

    @property
    def namespace(self) -> str:
        """The run's own namespace."""
        return str(self._namespace_doc["metadata"]["name"])

    def ensure_namespace(self) -> str:
        """Create the run's namespace and its standing objects the first time a check needs them."""
        with self._lock:
            if not any(o["kind"] == "Namespace" for o in self.created):
                for obj in [self._namespace_doc, *self._standing]:
                    self.created.append(obj)
                    self._cluster.create(obj)
        return self.namespace

    def create(self, obj: dict[str, Any]) -> None:
        """Create `obj`, recording it first (a create that fails half-way is still cleaned up)."""
        if obj["metadata"].get("namespace") == self.namespace:
            self.ensure_namespace()
        with self._lock:
            self.created.append(obj)
        self._cluster.create(obj)

    def clean_up(self) -> list[str]:
        """Delete what was created, newest first (the run's namespace, made first, goes last).

        Returns what could not be deleted, one line each (an object already gone is fine).
        """
        problems = []
        with self._lock:
            ordered = list(reversed(self.created))
        for obj in ordered:
            meta = obj["metadata"]
            try:
                self._cluster.delete(obj["kind"], meta.get("namespace"), meta["name"])
            except Exception as exc:  # clean-up reports every leftover, it does not stop at the first
                where = f"{meta.get('namespace')}/" if meta.get("namespace") else ""
                problems.append(f"{obj['kind']} {where}{meta['name']}: {exc}")
        return problems


@dataclass
class Context:
    """What a running check gets: the promises, the cluster and AWS seams, its deadline, the run's objects."""

    expect: Expectations
    cluster: VerifyCluster
    aws: VerifyAws | None
    run_id: str
    objects: Objects
    check: str = ""
    deadline: float = float("inf")
    cancel: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    progress: Callable[[str], None] = lambda _message: None
    poll_s: float = 3.0
    deadline_s: float = 0.0
    now: Callable[[], datetime] = lambda: datetime.now(UTC)
    """Wall-clock time, for comparing with the API's timestamps."""
    second_az: bool = False
    """`--second-az`: the storage check may start a node in another AZ when the CPU nodes are in one."""

    def remaining(self) -> float:
        """Seconds left before the deadline."""
        return self.deadline - self.clock()

    def tick(self) -> None:
        """Raise `Cancelled` after Ctrl-C, `Deadline` when the check's time is up."""
        if self.cancel.is_set():
            raise Cancelled
        if self.clock() > self.deadline:
            raise Deadline

    def wait(self, seconds: float | None = None) -> None:
        """Sleep a poll interval (or `seconds`), never past the deadline; then `tick`."""
        self.tick()
        self.sleep(max(0.0, min(self.poll_s if seconds is None else seconds, self.remaining())))
        self.tick()

    def create(self, obj: dict[str, Any]) -> None:
        """Create a probe object, recorded for clean-up."""
        self.objects.create(obj)
