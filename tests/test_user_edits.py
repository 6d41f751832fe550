"""A user's edits to the shipped stacks never break `make check` (issue 26): the tests own their fixtures.

The README's deploy steps edit `stacks/Pulumi.dev.yaml` (region, CIDR) and suggest copying it to a stack of
one's own; the tests read pristine copies (tests/shipped.py) and run in a copy of the project, so neither
changes a result. Proved on a copy of this checkout with exactly those edits.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests import shipped

ROOT = Path(__file__).resolve().parents[1]
# Tests that read the shipped stacks: each failed once the dev stack was edited as the README says, or a
# stack was added, before the tests owned their fixtures (checked on this commit with the fixture disabled).
AFFECTED = [
    "tests/infra/test_render.py::test_plan_json_follows_the_contract",
    "tests/infra/test_render.py::test_unknown_stack_exits_2",
    "tests/components/test_platform.py::test_endpoint_access_per_stack",
    "tests/ops/test_preflight.py::test_cli_json",
    "tests/components/test_hardening.py::test_control_plane_log_group_is_encrypted_with_a_logs_key",
    "tests/test_project.py",
]
SKIP = shutil.ignore_patterns(
    ".git", ".venv*", "build", ".gpuplane", ".mypy_cache", ".ruff_cache", ".cache", "__pycache__"
)


def test_edited_and_added_stack_files_change_no_test_result(tmp_path):
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT, copy, symlinks=True, ignore=SKIP)
    dev = copy / "stacks" / "Pulumi.dev.yaml"
    edited = dev.read_text().replace("aws:region: us-west-2", "aws:region: eu-central-1")
    edited = edited.replace("- 203.0.113.0/24", "- 192.0.2.10/32")
    assert edited != dev.read_text()
    dev.write_text(edited)
    (copy / "stacks" / "Pulumi.mystack.yaml").write_text(edited)
    (copy / "Pulumi.yaml").write_text((copy / "Pulumi.yaml").read_text() + "config:\n  aws:region: ap-south-1\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-x", *AFFECTED],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1]
    # The copy's own tests read the copy's gpuplane (its src/), and its pristine fixtures, not its stacks/.
    assert shipped.DEV.read_text() != edited
