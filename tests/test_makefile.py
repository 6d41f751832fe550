"""`make render` installs what rendering needs, `make check` what testing needs.

Read from `make -n` (what make would run) in a copy of the Makefile, so nothing is installed here.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")


def dry_run(tmp_path: Path, target: str) -> str:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    result = subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, check=True)
    return result.stdout


def test_render_installs_the_runtime_only(tmp_path):
    commands = dry_run(tmp_path, "render")
    assert "pip install -q -e .\n" in commands
    assert "[dev]" not in commands
    assert "gpuplane render dev" in commands


@pytest.mark.parametrize("target", ["lint", "typecheck", "test"])
def test_checks_install_the_test_tools(tmp_path, target):
    assert "pip install -q -e '.[dev]'" in dry_run(tmp_path, target)


def test_check_builds_the_docs_site_with_warnings_as_errors(tmp_path):
    """`make check` (and so .ci/run) builds docs/ with Sphinx; a warning or an unresolved link fails it."""
    commands = dry_run(tmp_path, "check")
    assert "pip install -q --group docs" in commands
    build = next(line for line in commands.splitlines() if line.startswith(".venv-docs/bin/sphinx-build "))
    assert build.split() == [
        ".venv-docs/bin/sphinx-build",
        "-E",
        "-W",
        "--keep-going",
        "-n",
        "-q",
        "-b",
        "html",
        "docs",
        "build/docs",
    ]


def test_test_fast_leaves_out_tensorflow_and_the_browser_and_needs_no_checkov(tmp_path):
    commands = dry_run(tmp_path, "test-fast")
    run = next(line for line in commands.splitlines() if "bin/pytest" in line)
    assert run.startswith("GPUPLANE_LEAVE_OUT_TOOLS=chromium ") and '-m "not tensorflow"' in run
    assert "-n auto --dist worksteal" in run
    assert "checkov" not in commands


@pytest.mark.parametrize("target", ["test", "test-fast"])
def test_the_tests_start_from_compiled_source(tmp_path, target):
    """Byte-code first, so that no test's Python process compiles gpuplane again (PYTHONDONTWRITEBYTECODE)."""
    lines = dry_run(tmp_path, target).splitlines()
    compile_at = next(i for i, line in enumerate(lines) if "-m compileall" in line)
    assert compile_at < next(i for i, line in enumerate(lines) if "bin/pytest" in line)
    folders = lines[compile_at].split("-q", 1)[1].split()
    # compileall skips symlinked folders: src/gpuplane's components, infra and manifests are links to these.
    assert {"components", "infra", "manifests", "src/gpuplane"} == set(folders)
    assert all((ROOT / folder).is_dir() and not (ROOT / folder).is_symlink() for folder in folders)
    assert {p.name for p in (ROOT / "src" / "gpuplane").iterdir() if p.is_symlink()} <= set(folders)


@pytest.mark.parametrize("target", ["test", "test-fast"])
def test_pytest_may_keep_its_rewritten_test_modules(tmp_path, target):
    """pytest keeps its assertion-rewritten test modules only where byte-code may be written: the run clears
    PYTHONDONTWRITEBYTECODE (an empty value is unset for Python), so a second run and each nested run reuse them."""
    run = next(line for line in dry_run(tmp_path, target).splitlines() if "bin/pytest" in line)
    words = run.split()
    assert "PYTHONDONTWRITEBYTECODE=" in words
    assert words.index("PYTHONDONTWRITEBYTECODE=") < next(i for i, w in enumerate(words) if w.endswith("bin/pytest"))
