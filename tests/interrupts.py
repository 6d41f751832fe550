"""Ctrl-C in the tests, whatever started the test run: a terminal, a background job, nohup or a CI runner.

A process started in the background (`make check &`, nohup, some CI runners) inherits SIGINT as ignored, and a
Python started that way installs no KeyboardInterrupt handler: `os.kill(pid, SIGINT)` and
`_thread.interrupt_main()` then do nothing, and a test of what Ctrl-C does sees exit 0 instead of 130. So a test
that sends Ctrl-C sets the disposition a terminal gives, itself:

- to a child process, `preexec_fn=interrupts.as_from_a_terminal` (SIGINT back to its default before the child
  starts, so a Python child installs its handler as it would in a terminal);
- in the test process, the conftest's `ctrl_c` fixture (`handled()`: Python's KeyboardInterrupt handler for the
  test, the previous disposition after it).

tests/test_interrupts.py holds every test that sends Ctrl-C to this rule.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


def as_from_a_terminal() -> None:
    """`preexec_fn` for a child that is sent SIGINT: the default disposition, as from a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def handled() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt in this process's main thread while inside, however the run was started."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
