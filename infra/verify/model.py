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


def describe(obj: dict[str, Any]) -> str:
    """`Kind namespace/name` (`Kind name` for a cluster-wide object)."""
    meta = obj["metadata"]
    where = f"{meta.get('namespace')}/" if meta.get("namespace") else ""
    return f"{obj['kind']} {where}{meta['name']}"


def remove_command(obj: dict[str, Any], kubeconfig: str = "") -> str:
    """The kubectl command that removes `obj` (with `--kubeconfig` when the run used one of its own)."""
    meta = obj["metadata"]
    flag = f" --kubeconfig {kubeconfig}" if kubeconfig else ""
    namespace = f" -n {meta['namespace']}" if meta.get("namespace") else ""
    return f"kubectl{flag}{namespace} delete {obj['kind'].lower()} {meta['name']}"


def _answered(exc: BaseException) -> int | None:
    """The HTTP status the API server answered with, or None when there was no answer (timeout, network)."""
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) and status > 0 else None


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj["metadata"]
    return obj["kind"], str(meta.get("namespace") or ""), str(meta["name"])


class Objects:
    """What a run created, so that clean-up removes exactly that (thread-safe; the run's namespace made once).

    An object counts as the run's only once the API server answered its create with success: a 409 means
    the name is someone else's (another run, a user), and it is never deleted. A create sent but never
    answered (a timeout) may have happened: it is listed as left behind unless the run's own namespace,
    which holds it, is removed. Once clean-up has begun no create is sent, and one answered after that
    point is removed by the clean-up too (it waits for creates in flight, up to its deadline).
    """

    def __init__(
        self, cluster: VerifyCluster, namespace_doc: dict[str, Any], standing: Sequence[dict[str, Any]] = ()
    ) -> None:
        """`standing`: what the namespace holds for every probe (the helper's ConfigMap, the NetworkPolicy)."""
        self._cluster = cluster
        self._namespace_doc = namespace_doc
        self._standing = list(standing)
        self._lock = threading.Condition(threading.Lock())
        self._namespace_lock = threading.Lock()  # one check makes the namespace, the others wait for it
        self.created: list[dict[str, Any]] = []
        """Objects the API server said it created, in order."""
        self._unsure: list[dict[str, Any]] = []
        self._in_flight: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._removed: set[tuple[str, str, str]] = set()
        self._why: dict[tuple[str, str, str], str] = {}
        self._closed = False

    @property
    def namespace(self) -> str:
        """The run's own namespace."""
        return str(self._namespace_doc["metadata"]["name"])

    @property
    def closed(self) -> bool:
        """Clean-up has begun: no create is sent any more."""
        return self._closed

    def ensure_namespace(self) -> str:
        """Create the run's namespace and its standing objects the first time a check needs them."""
        with self._namespace_lock, self._lock:
            for obj in [self._namespace_doc, *self._standing]:
                if _key(obj) not in {_key(o) for o in self.created}:
                    self._create(obj)
        return self.namespace

    def create(self, obj: dict[str, Any]) -> None:
        """Create `obj`, counted as the run's once the API server says it created it.

        Raises `CheckFailed` on a 409 (the name is taken: not ours, left alone), `Cancelled` once clean-up
        has begun (nothing is sent), and the client's exception on any other failure.
        """
        if obj["metadata"].get("namespace") == self.namespace:
            self.ensure_namespace()
        with self._lock:
            self._create(obj)

    def _create(self, obj: dict[str, Any]) -> None:
        """Send the create; the caller holds the lock, released while the call waits for the server."""
        key = _key(obj)
        if self._closed:
            raise Cancelled
        self._in_flight[key] = obj
        self._lock.release()
        try:
            self._cluster.create(obj)
        except Exception as exc:
            self._lock.acquire()
            del self._in_flight[key]
            self._lock.notify_all()
            status = _answered(exc)
            if status == 409:
                raise CheckFailed(
                    f"{describe(obj)} exists already (the API server answered 409 Conflict); it is not this "
                    "run's, so it was left alone",
                    "another `gpuplane verify` run uses the name, or a run killed before its clean-up left it",
                    f"if it is a leftover, `{remove_command(obj)}`, then run again",
                ) from None
            if status is None:  # sent, never answered: it may exist
                self._unsure.append(obj)
                self._why[key] = f"its create was not answered ({type(exc).__name__}); it may exist"
            raise
        self._lock.acquire()
        del self._in_flight[key]
        self.created.append(obj)
        self._lock.notify_all()
        if self._closed:  # answered after clean-up began: clean-up removes it, the check stops here
            raise Cancelled

    def clean_up(self, deadline: float = float("inf"), clock: Callable[[], float] = time.monotonic) -> list[str]:
        """Delete what was created, newest first (the run's namespace, made first, goes last); no create after.

        Waits (until `deadline`, on `clock`) for creates in flight and removes what they made. Returns what
        was left behind, one line each (`left_behind`).
        """
        with self._lock:
            self._closed = True
        done: set[tuple[str, str, str]] = set()
        while True:
            with self._lock:
                todo = [o for o in reversed(self.created) if _key(o) not in done]
                if not todo:
                    if not self._in_flight or clock() >= deadline:
                        break
                    self._lock.wait(timeout=min(1.0, max(0.0, deadline - clock())))
                    continue
            for obj in todo:
                done.add(_key(obj))
                if clock() >= deadline:
                    self._why.setdefault(_key(obj), "clean-up ran out of time before deleting it")
                    continue
                self._delete(obj)
        return self.left_behind()

    def _delete(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        with self._lock:
            self._why[_key(obj)] = "its delete was sent and not answered before clean-up's deadline"
        try:
            self._cluster.delete(obj["kind"], meta.get("namespace"), meta["name"])
        except Exception as exc:  # clean-up reports every leftover, it does not stop at the first
            text = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            with self._lock:
                self._why[_key(obj)] = text
            return
        with self._lock:
            self._removed.add(_key(obj))
            self._why.pop(_key(obj), None)

    def left(self) -> list[dict[str, Any]]:
        """The objects that may still exist: created or maybe created, and not removed."""
        with self._lock:
            namespace_gone = _key(self._namespace_doc) in self._removed
            found = [
                o for o in [*self.created, *self._unsure, *self._in_flight.values()] if _key(o) not in self._removed
            ]
        inside = [o for o in found if namespace_gone and o["metadata"].get("namespace") == self.namespace]
        unique: dict[tuple[str, str, str], dict[str, Any]] = {}
        for obj in found:
            if obj not in inside:  # gone with the run's namespace
                unique.setdefault(_key(obj), obj)
        return list(unique.values())

    def left_behind(self) -> list[str]:
        """One line per object that may still exist: what it is and why it was not removed."""
        lines = []
        for obj in self.left():
            key = _key(obj)
            why = self._why.get(key) or (
                "its create was in flight when clean-up ended; it may exist"
                if key in self._in_flight
                else "clean-up did not get to it"
            )
            lines.append(f"{describe(obj)}: {why}")
        return lines

    def remove_commands(self, kubeconfig: str = "", objects: Sequence[dict[str, Any]] | None = None) -> list[str]:
        """Kubectl commands that remove `objects` (default: `left`); the run's namespace covers what it holds."""
        found = self.left() if objects is None else list(objects)
        whole = any(_key(o) == _key(self._namespace_doc) for o in found)
        return [
            remove_command(o, kubeconfig)
            for o in found
            if not (whole and o["kind"] != "Namespace" and o["metadata"].get("namespace") == self.namespace)
        ]


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
