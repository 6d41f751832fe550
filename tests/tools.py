"""The tools some tests need beyond Python, read from `.ci/tools` (the one table `make check` and CI share).

A test marked `@pytest.mark.tool("dash")` is skipped where the tool is missing, with the reason and the one
command that installs it; with GPUPLANE_REQUIRE_TOOLS=1 (what `.ci/run` sets after installing them) it fails
instead, so CI cannot go green with a tool's tests skipped. The conftest's summary lists what was skipped.
"""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "tools"
REQUIRE_ENV = "GPUPLANE_REQUIRE_TOOLS"
INSTALL = "sudo .ci/tools --install"
SKIP_PREFIX = "missing tool"


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
