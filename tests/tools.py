"""The tools some tests need beyond Python, read from `.ci/tools` (the one table `make check` and CI share).

Every helper that launches a tool calls `need(name)` first and runs the path it returns: where the tool is
missing the calling test is skipped, with the tool's name and the one command that installs it; with
GPUPLANE_REQUIRE_TOOLS=1 (what `.ci/run` sets after installing them) it fails instead, so CI cannot go green
with a tool's tests skipped. Because the check lives in the launcher, a test cannot forget it; the conftest
also turns a launch of a missing tool's command that bypassed `need` into the same skip (`LAUNCHED_BY`).
`@pytest.mark.tool(name)` still works (the same check before the test starts) and the conftest's summary
lists what was skipped.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "tools"
REQUIRE_ENV = "GPUPLANE_REQUIRE_TOOLS"
# Tools whose tests a run leaves out on purpose, comma-separated (`make test-fast` leaves out the browser).
LEAVE_OUT_ENV = "GPUPLANE_LEAVE_OUT_TOOLS"
INSTALL = "sudo .ci/tools --install"
SKIP_PREFIX = "missing tool"

# The commands a tool is launched by, where they are not its name (the first one found is run).
COMMANDS: dict[str, tuple[str, ...]] = {
    "chromium": ("chromium", "chromium-browser"),
    "go-yaml": ("go",),
}


def commands(name: str) -> tuple[str, ...]:
    """The commands that launch tool `name` (its name unless `COMMANDS` says otherwise)."""
    return COMMANDS.get(name, (name,))


def launched_by() -> dict[str, str]:
    """Each command of a tool of the table, to the tool's name (how the conftest knows `go` is `go-yaml`)."""
    return {command: name for name in table() for command in commands(name)}


@dataclass(frozen=True)
class Tool:
    """One row of `.ci/tools`: its name, how to find it, its Debian packages, what cannot run without it."""

    name: str
    probe: str
    packages: str
    why: str


@functools.cache
def table() -> dict[str, Tool]:
    """The rows of the `TOOLS='...'` table in `.ci/tools`."""
    text = SCRIPT.read_text()
    body = text.split("TOOLS='", 1)[1].split("'\n", 1)[0]
    found = {}
    for line in body.splitlines():
        if line.strip():
            name, rest = line.split("|", 1)
            probe, packages, why = rest.rsplit("|", 2)  # the probe may itself hold `||`
            found[name] = Tool(name, probe, packages, why)
    return found


@functools.cache
def present(name: str) -> bool:
    """Whether the tool is installed (the table's own probe, run by bash)."""
    tool = table()[name]
    done = subprocess.run(["bash", "-c", tool.probe], capture_output=True, check=False, timeout=30)
    return done.returncode == 0


def required() -> bool:
    """Whether a missing tool fails the test instead of skipping it (CI)."""
    return os.environ.get(REQUIRE_ENV) == "1"


def skip_reason(name: str) -> str:
    """The skip reason the summary groups by: `missing tool <name>: <why>`."""
    return f"{SKIP_PREFIX} {name}: {table()[name].why} (install: {INSTALL})"


def need(name: str) -> str:
    """The path of tool `name`'s command, or the calling test stops here: skipped where the tool is missing,
    failed where CI requires every tool (GPUPLANE_REQUIRE_TOOLS=1) or where `name` is not in `.ci/tools`.

    Called by the helpers that launch a tool, so a test that uses one cannot forget to say so.
    """
    if name not in table():
        pytest.fail(f"tool {name!r} is not in .ci/tools; add a row there")
    if name in os.environ.get(LEAVE_OUT_ENV, "").split(","):
        raise pytest.skip.Exception(f"{name}'s tests left out ({LEAVE_OUT_ENV})", _use_item_location=True)
    if present(name):
        found = next((path for path in map(shutil.which, commands(name)) if path), None)
        if found is not None:
            return found
    if required():
        pytest.fail(f"{skip_reason(name)}; {REQUIRE_ENV}=1 requires every tool")
    # Reported at the test, not at this line, like a skip by a marker (pytest's own keyword for that).
    raise pytest.skip.Exception(skip_reason(name), _use_item_location=True)
