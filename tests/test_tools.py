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
# Not marked: the skip comes from the helper that starts the browser (tests/compare/test_report.py `_browse`).
UNMARKED = "tests/verify/test_report_and_aws.py::test_report_renders_in_headless_chromium"
# A test that starts a tool's command itself, with neither a marker nor `tools.need`: the conftest's guard skips it.
BARE = """
import subprocess


def test_bare_launch():
    subprocess.run(["shellcheck", "--version"], check=True)
"""


def _test_sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / "tests").rglob("*.py")}


def test_every_tool_a_test_names_is_in_the_table():
    used = set()
    for text in _test_sources().values():
        used |= set(re.findall(r'(?:mark\.tool|tools\.need)\("([\w-]+)"\)', text))
    used |= {"dash", "busybox"}  # tests/runtime/_support.py marks the shells by their command
    assert used <= set(tools.table()), used - set(tools.table())
    assert {"dash", "busybox", "shellcheck", "chromium", "go-yaml", "promtool", "amtool"} <= used


def test_no_test_finds_or_starts_a_tool_but_through_tools_need():
    """`shutil.which("promtool")` or `subprocess.run(["shellcheck", ...])` would bypass the skip; `need` is the way."""
    commands = "|".join(re.escape(c) for c in tools.launched_by())
    bypass = re.compile(rf"""which\(\s*["']({commands})["']|\(\s*\[\s*["']({commands})["']""")
    found = {
        f"{path}: {match.group(0)}"
        for path, text in _test_sources().items()
        if path not in {"tests/tools.py", "tests/test_tools.py"}
        for match in bypass.finditer(text)
    }
    assert found == set()
    assert bypass.search('subprocess.run(["shellcheck", "-s"])') and bypass.search('shutil.which("chromium")')


def _path_without(tmp_path: Path, missing: str) -> str:
    """A PATH with what the run needs (bash, sh, python, git, env) and not `missing`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bash", "sh", "env", "git", "cut", "tr", "xargs", "id"):
        found = shutil.which(name)
        if found and name != missing:
            (bin_dir / name).symlink_to(found)
    return f"{bin_dir}:{Path(sys.executable).parent}"


def _pytest(
    tmp_path: Path, *, require: bool, test: str = MARKED, missing: str = "shellcheck"
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != tools.REQUIRE_ENV}
    env["PATH"] = _path_without(tmp_path, missing)
    if require:
        env[tools.REQUIRE_ENV] = "1"
    plugin = [] if test.startswith("tests/") else ["-p", "tests.conftest"]
    return subprocess.run(
        # A test file outside tests/ gets the conftest as a plugin.
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *plugin, test],
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


@pytest.mark.parametrize("test", [UNMARKED, "BARE"])
def test_a_test_without_a_marker_skips_too_and_fails_in_ci(tmp_path, test):
    if test == "BARE":
        (tmp_path / "bare").mkdir()
        test = str(tmp_path / "bare" / "test_bare.py")
        Path(test).write_text(BARE)
    missing = "chromium" if test == UNMARKED else "shellcheck"
    done = _pytest(tmp_path, require=False, test=test, missing=missing)
    assert done.returncode == 0, done.stdout
    assert f"1 skipped without {missing}" in done.stdout, done.stdout
    (tmp_path / "bin").rename(tmp_path / "bin-before")
    done = _pytest(tmp_path, require=True, test=test, missing=missing)
    assert done.returncode == 1, done.stdout
    assert f"missing tool {missing}" in done.stdout and "requires every tool" in done.stdout


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
