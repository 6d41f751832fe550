"""`.ci/tools`: one table of the tools tests need, a skip with the install command where one is missing, and a
failure instead where CI requires them (GPUPLANE_REQUIRE_TOOLS=1)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import tools
from tests.conftest import once_per_session

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


# The three ways a test meets a missing tool, run together in one nested pytest per mode (a nested run's start,
# pytest's and the conftest's imports, is most of its time): its marker, the helper that starts the tool (the test
# is not marked), and a bare launch in a file outside tests/ that only the conftest's guard catches.
NESTED = {"marked": MARKED.split("::")[1], UNMARKED: UNMARKED.split("::")[1], "BARE": "test_bare_launch"}
MISSING = {"marked": "shellcheck", UNMARKED: "chromium", "BARE": "shellcheck"}


@dataclass
class Nested:
    done: subprocess.CompletedProcess[str]
    outcomes: dict[str, tuple[str, str]]  # NESTED key: (skipped | failure | error | passed, its message and text)


def _pytest(tmp_path: Path, *, require: bool) -> Nested:
    """MARKED, UNMARKED and BARE in one pytest run with neither shellcheck nor a browser on PATH."""
    # The nested run decides for itself: neither this run's CI requirement nor the tools `make test-fast` leaves
    # out (GPUPLANE_LEAVE_OUT_TOOLS=chromium would skip the browser case before its launcher looks for it).
    env = {k: v for k, v in os.environ.items() if k not in (tools.REQUIRE_ENV, tools.LEAVE_OUT_ENV)}
    env["PATH"] = _path_without(tmp_path, "shellcheck")
    if require:
        env[tools.REQUIRE_ENV] = "1"
    (tmp_path / "bare").mkdir()
    bare = tmp_path / "bare" / "test_bare.py"
    bare.write_text(BARE)
    junit = tmp_path / "junit.xml"
    # The file outside tests/ gets the conftests as plugins, so the ones under tests/ are loaded that way too
    # (--noconftest): one module registered twice is an error.
    plugins = ["--noconftest", "-p", "tests.conftest", "-p", "tests.verify.conftest"]
    pytest_run = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", f"--junitxml={junit}"]
    done = subprocess.run(
        [*pytest_run, *plugins, MARKED, UNMARKED, str(bare)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    outcomes = {}
    by_name = {name: key for key, name in NESTED.items()}
    for case in ET.parse(junit).iter("testcase"):
        found = [(child.tag, f"{child.get('message', '')}\n{child.text or ''}") for child in case]
        outcome = found[0] if found else ("passed", "")
        outcomes[by_name[case.get("name", "")]] = outcome
    assert set(outcomes) == set(NESTED), done.stdout
    return Nested(done, outcomes)


# Once per session, across the xdist workers too: the tests that read a run may land on different workers, and a
# module fixture would start the nested run again in each (up to three runs of each mode, 2-3 CPU s each).
@pytest.fixture(scope="session")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Nested:
    return once_per_session(
        tmp_path_factory, "tools-local-run", lambda: _pytest(tmp_path_factory.mktemp("local"), require=False)
    )


@pytest.fixture(scope="session")
def ci_run(tmp_path_factory: pytest.TempPathFactory) -> Nested:
    return once_per_session(
        tmp_path_factory, "tools-ci-run", lambda: _pytest(tmp_path_factory.mktemp("ci"), require=True)
    )


def test_a_missing_tool_skips_its_tests_and_the_summary_says_how_to_install_it(local_run):
    done = local_run.done
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1].startswith("3 skipped in ")
    kind, message = local_run.outcomes["marked"]
    assert kind == "skipped" and "missing tool shellcheck" in message, message
    assert "tests that could not run: missing tools" in done.stdout
    # the marked test and the bare launch
    assert "2 skipped without shellcheck: the POSIX lint of the runtime helper" in done.stdout
    assert "1 skipped without chromium: " in done.stdout
    assert f"Install them with: {tools.INSTALL}" in done.stdout


def test_ci_fails_a_test_whose_tool_is_missing(ci_run):
    done = ci_run.done
    assert done.returncode == 1, done.stdout
    kind, message = ci_run.outcomes["marked"]
    assert kind == "error" and "missing tool shellcheck" in message, message  # failed in its setup
    assert "1 error" in done.stdout.splitlines()[-1]


@pytest.mark.parametrize("test", [UNMARKED, "BARE"])
def test_a_test_without_a_marker_skips_too_and_fails_in_ci(local_run, ci_run, test):
    missing = MISSING[test]
    kind, message = local_run.outcomes[test]
    assert kind == "skipped" and f"missing tool {missing}" in message, message
    kind, message = ci_run.outcomes[test]
    assert kind == "failure", (kind, message)
    assert f"missing tool {missing}" in message and "requires every tool" in message, message


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
