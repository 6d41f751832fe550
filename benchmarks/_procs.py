"""A local "cluster" of processes: start each with its own log, wait with one deadline, stop them all.

Why shared: the training-threads benchmark (`benchmarks/threads_training.py`) and the multi-process
training test (`tests/runtime/_training_run.py`) both run one TensorFlow process per task of a run on
this machine. The loop that starts them, waits for some of them within a deadline and kills every
process group at the end (a task that hangs must not outlive the run) is the same; it lives here once.
The test loads this file by path, the benchmark imports it beside itself.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


def _orphan_guard() -> tuple[str, ...]:
    """The argv prefix that makes a task die with the process that started it, killed or not.

    Why: each task leads a session of its own (so `stop` can kill its whole group), which also takes it out
    of reach of whatever kills the starter: a test worker killed by a CI timeout, or a benchmark killed with
    `kill -9`, left its TensorFlow tasks running, waiting on their peers for ever. util-linux's `setpriv
    --pdeathsig KILL` asks the kernel for SIGKILL when the parent dies and then execs the task (same pid, same
    argv after it). The kernel watches the thread that forked, not the process: start a run from a thread that
    lives as long as the run (the test and the benchmark start it from their main thread). util-linux is
    essential on Debian; where `setpriv` is absent, tasks start as before.
    """
    setpriv = shutil.which("setpriv")
    return (setpriv, "--pdeathsig", "KILL", "--") if setpriv else ()


def free_ports(count: int) -> list[int]:
    """Ports nobody listens on now (bound to port 0 on loopback, then released)."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass(frozen=True)
class Spec:
    """One process to start: a label that names it (`chief-0`), its argv and its whole environment."""

    label: str
    argv: Sequence[str]
    env: Mapping[str, str]


@dataclass
class Proc:
    """A started process and the file its output goes to."""

    label: str
    popen: subprocess.Popen[bytes]
    log: Path


@dataclass
class Procs:
    """The started processes of one run."""

    procs: list[Proc]

    def _one(self, label: str) -> Proc:
        for proc in self.procs:
            if proc.label == label:
                return proc
        raise KeyError(label)

    def wait(self, labels: Sequence[str], timeout: float) -> bool:
        """Wait until every process of `labels` has exited; False when `timeout` seconds pass first."""
        deadline = time.monotonic() + timeout
        for proc in self.procs:
            if proc.label in labels:
                try:
                    proc.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    return False
        return True

    def log(self, label: str) -> str:
        """What the process printed so far (stdout and stderr together)."""
        return self._one(label).log.read_text(errors="replace")

    def exit_code(self, label: str) -> int | None:
        """Its exit code, or None while it runs."""
        return self._one(label).popen.poll()

    @property
    def pids(self) -> list[int]:
        return [proc.popen.pid for proc in self.procs]

    def stop(self) -> None:
        """Kill every process group of the run (each process leads its own session) and reap them."""
        for proc in self.procs:
            if proc.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):  # it exited between poll and kill
                    os.killpg(proc.popen.pid, signal.SIGKILL)
        for proc in self.procs:
            proc.popen.wait()


def start(specs: Sequence[Spec], logs: Path) -> Procs:
    """Start every spec in a session of its own, output to `logs/<label>.log`; on any failure stop those started."""
    logs.mkdir(parents=True, exist_ok=True)
    guard = _orphan_guard()
    started: list[Proc] = []
    try:
        for spec in specs:
            log = logs / f"{spec.label}.log"
            with log.open("wb") as out:
                popen = subprocess.Popen(
                    [*guard, *spec.argv],
                    env=dict(spec.env),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            started.append(Proc(spec.label, popen, log))
    except BaseException:
        Procs(started).stop()
        raise
    return Procs(started)
