"""The local process "cluster" of the training test and benchmark: a task never outlives whoever started it.

Each task leads a session of its own, so a signal to the starter's group does not reach it. Killed with SIGKILL
(a CI timeout, `kill -9`), the starter runs no clean-up; the tasks must still end.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SLEEPER = "import time; time.sleep(300)"

STARTER = """
import importlib.util, sys, time
from pathlib import Path
spec = importlib.util.spec_from_file_location("procs", sys.argv[1])
procs = importlib.util.module_from_spec(spec)
sys.modules["procs"] = procs
spec.loader.exec_module(procs)
if sys.argv[3] == "unguarded":
    procs._orphan_guard = lambda: ()
run = procs.start([procs.Spec("task-0", [sys.executable, "-c", sys.argv[4]], {})], Path(sys.argv[2]))
print(run.pids[0], flush=True)
time.sleep(300)
"""


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by init, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _task_of_killed_starter(tmp_path: Path, mode: str) -> tuple[int, list[bytes]]:
    """Start a starter that starts one sleeping task, SIGKILL the starter; the task's pid and its argv then."""
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(ROOT / "benchmarks" / "_procs.py"), str(tmp_path / mode), mode, SLEEPER],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert starter.stdout is not None
    pid = int(starter.stdout.readline())
    deadline = time.monotonic() + 10
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    while argv[:1] != [sys.executable.encode()] and time.monotonic() < deadline:  # setpriv execs the task
        time.sleep(0.02)
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    assert _alive(pid)
    starter.kill()
    starter.wait()
    return pid, argv


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux's setpriv (essential on Debian)")
def test_a_task_dies_with_its_killed_starter_and_runs_its_own_argv(tmp_path: Path) -> None:
    pid, argv = _task_of_killed_starter(tmp_path, "guarded")
    assert argv == [sys.executable.encode(), b"-c", SLEEPER.encode()]  # the task itself, not a wrapper
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the task outlived the starter that was killed"


def test_without_the_guard_the_task_outlives_its_killed_starter(tmp_path: Path) -> None:
    """What the guard is for: the same run without it leaves its task running (killed here by the test)."""
    pid, argv = _task_of_killed_starter(tmp_path, "unguarded")
    try:
        assert argv == [sys.executable.encode(), b"-c", SLEEPER.encode()]
        time.sleep(0.5)
        assert _alive(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
