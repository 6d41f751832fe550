"""Tests of Ctrl-C pass however the run was started (tests/interrupts.py): from a terminal, a background job,
nohup or CI, where SIGINT arrives ignored."""

from __future__ import annotations

import _thread
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests import interrupts

ROOT = Path(__file__).resolve().parents[1]
SENDS_CTRL_C = re.compile(r"interrupt_main\(|signal\.SIGINT\b")
PRINT_DISPOSITION = (
    "import signal; h = signal.getsignal(signal.SIGINT); "
    "print('ignored' if h == signal.SIG_IGN else 'KeyboardInterrupt' if h is signal.default_int_handler else h)"
)


@pytest.fixture
def started_in_the_background() -> Iterator[None]:
    """This process as `nohup` or `make check &` leaves it: SIGINT ignored."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _child_disposition(preexec_fn: Callable[[], None] | None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PRINT_DISPOSITION], capture_output=True, text=True, check=True, preexec_fn=preexec_fn
    )
    return done.stdout.strip()


def test_a_child_gets_sigint_as_from_a_terminal(started_in_the_background):
    assert _child_disposition(None) == "ignored"  # what a test that forgets it would send Ctrl-C to
    assert _child_disposition(interrupts.as_from_a_terminal) == "KeyboardInterrupt"


def test_ctrl_c_raises_in_this_process_when_handled(started_in_the_background):
    _thread.interrupt_main()  # ignored, as in a background job: nothing happens
    time.sleep(0.05)
    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        _thread.interrupt_main()
        time.sleep(5)
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # restored


def test_every_test_that_sends_ctrl_c_sets_the_disposition_itself():
    own = {Path(interrupts.__file__).resolve(), Path(__file__).resolve()}
    senders = {
        str(path.relative_to(ROOT)): path.read_text()
        for path in (ROOT / "tests").rglob("*.py")
        if path.resolve() not in own and SENDS_CTRL_C.search(path.read_text())
    }
    assert "tests/infra/test_exit_codes.py" in senders and "tests/verify/test_runner.py" in senders
    careless = [path for path, text in senders.items() if not re.search(r"\bctrl_c\b|as_from_a_terminal", text)]
    assert careless == []
