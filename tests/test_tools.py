"""`.ci/tools`: one table of the tools tests need, a skip with the install command where one is missing, and a
failure instead where CI requires them (GPUPLANE_REQUIRE_TOOLS=1)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import tools

ROOT = Path(__file__).resolve().parents[1]
MARKED = "tests/runtime/test_helper_exec.py::test_shellcheck_clean"


def test_every_tool_a_test_names_is_in_the_table():
    used = set()
    for path in (ROOT / "tests").rglob("*.py"):
        used |= set(re.findall(r'mark\.tool\("([\w-]+)"\)', path.read_text()))
    used |= {"dash", "busybox"}  # tests/runtime/_support.py marks the shells by their command
    assert used <= set(tools.table()), used - set(tools.table())
    assert {"dash", "busybox", "shellcheck", "chromium", "go-yaml"} <= set(tools.table())


def _path_without(tmp_path: Path, missing: str) -> str:
    """A PATH with what the run needs (bash, sh, python, git, env) and not `missing`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bash", "sh", "env", "git", "cut", "tr", "xargs", "id"):
        found = shutil.which(name)
        if found and name != missing:
            (bin_dir / name).symlink_to(found)
    return f"{bin_dir}:{Path(sys.executable).parent}"


def _pytest(tmp_path: Path, *, require: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != tools.REQUIRE_ENV}
    env["PATH"] = _path_without(tmp_path, "shellcheck")
    if require:
        env[tools.REQUIRE_ENV] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", MARKED],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_missing_tool_skips_its_tests_and_the_summary_says_how_to_install_it(tmp_path):
    done = _pytest(tmp_path, require=False)
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout
    assert "tests that could not run: missing tools" in done.stdout
    assert "1 skipped without shellcheck: the POSIX lint of the runtime helper" in done.stdout
    assert f"Install them with: {tools.INSTALL}" in done.stdout


def test_ci_fails_a_test_whose_tool_is_missing(tmp_path):
    done = _pytest(tmp_path, require=True)
    assert done.returncode == 1, done.stdout
    assert "1 error" in done.stdout and "missing tool shellcheck" in done.stdout  # failed in its setup


@pytest.mark.parametrize(("flag", "code"), [("", 0), ("--require", 1)])
def test_the_script_reports_what_is_missing_and_the_command(tmp_path, flag, code):
    env = {"PATH": _path_without(tmp_path, "shellcheck")}
    done = subprocess.run(
        ["bash", str(ROOT / ".ci" / "tools"), *([flag] if flag else [])],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == code, done.stdout + done.stderr
    text = done.stdout + done.stderr
    assert "shellcheck" in text and "sudo .ci/tools --install" in text
