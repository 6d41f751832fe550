"""A user's edits to the shipped stacks never break `make check`: the tests own their fixtures.

The README's deploy steps edit `stacks/Pulumi.dev.yaml` (region, CIDR) and suggest copying it to a stack of
one's own; the docs give YAML blocks to paste into it (docs/gpu-groups.md, "A second GPU group" and the others;
docs/workloads.md; docs/reserved-gpus.md) and shell lines that append to it. The tests read pristine copies
(tests/shipped.py), run in a copy of the project, and fail where they touch the checkout's `stacks/`,
`Pulumi.yaml` or `build/` (tests/checkout_guard.py). Proved here on a copy of this checkout with every one of
those edits made: the tests that read the shipped stacks pass there as they do here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests import shipped
from tests.test_docs_snippets import DOCS, FENCE

ROOT = Path(__file__).resolve().parents[1]
# Tests that read the shipped stacks: each failed once the dev stack was edited as the README or
# docs/gpu-groups.md say, or a stack was added, before the tests owned their fixtures.
AFFECTED = [
    "tests/infra/test_render.py::test_plan_json_follows_the_contract",
    "tests/infra/test_render.py::test_unknown_stack_exits_2",
    "tests/components/test_platform.py::test_endpoint_access_per_stack",
    "tests/ops/test_preflight.py::test_cli_json",
    "tests/components/test_hardening.py::test_control_plane_log_group_is_encrypted_with_a_logs_key",
    "tests/test_project.py",
    "tests/infra/test_pin_warnings.py::test_render_warns_and_still_exits_0_with_the_same_plan",
    "tests/verify/test_command.py::test_plan_prints_every_probe_without_a_cluster",
    "tests/verify/test_command.py::test_second_az_without_an_autoscaler_is_bad_input",
    "tests/verify/test_command.py::test_the_default_report_folder_is_under_dot_gpuplane",
    "tests/verify/test_command.py::test_plan_from_a_subfolder_finds_the_project",
]
# Never copied: tool folders and outputs, and what the copy gets from the fixtures instead (at its root only).
# __pycache__ is copied: the byte-code stays valid for the copies (same size and modification time), so the
# nested run does not compile gpuplane's modules again where PYTHONDONTWRITEBYTECODE is set.
GENERATED = {
    ".git",
    "build",
    "venv",
    ".gpuplane",
    ".mypy_cache",
    ".ruff_cache",
    ".cache",
    ".pytest_cache",
}
USER_OWNED = {"stacks", "Pulumi.yaml"}


def pasted_blocks() -> list[tuple[str, dict[str, Any]]]:
    """Every `yaml` block of README.md and docs/ that is stack config (namespaced keys): what users paste."""
    found = []
    for doc in DOCS:
        lines = doc.read_text().splitlines()
        for start, line in enumerate(lines):
            match = FENCE.match(line)
            if match and match.group(1) in {"yaml", "yml"}:
                end = next(j for j in range(start + 1, len(lines)) if lines[j].strip() == "```")
                block = yaml.safe_load("\n".join(lines[start + 1 : end]))
                if isinstance(block, dict) and all(str(key).startswith(("gpuplane:", "aws:")) for key in block):
                    found.append((f"{doc.relative_to(ROOT)}:{start + 1}", block))
    return found


def appended_lines() -> list[str]:
    """The docs' shell lines that append to a stack file (`snippet-setup` of the error samples)."""
    return [
        line.split("snippet-setup:", 1)[1].removesuffix("-->").strip()
        for doc in DOCS
        for line in doc.read_text().splitlines()
        if "snippet-setup:" in line and ">> stacks/" in line
    ]


def _ignore(folder: str, names: list[str]) -> set[str]:
    at_root = Path(folder) == ROOT
    return {n for n in names if n in GENERATED or n.startswith(".venv") or (at_root and n in USER_OWNED)}


def edited_checkout(copy: Path) -> str:
    """A copy of this checkout (its stacks from the fixtures, never the user's) edited as the docs say."""
    shutil.copytree(ROOT, copy, symlinks=True, ignore=_ignore)
    shipped.make_project(copy)
    dev = copy / "stacks" / "Pulumi.dev.yaml"
    edited = dev.read_text().replace("aws:region: us-west-2", "aws:region: eu-central-1")
    edited = edited.replace("- 203.0.113.0/24", "- 192.0.2.10/32")
    assert edited != dev.read_text()
    document = yaml.safe_load(edited)
    for where, block in pasted_blocks():
        document["config"].update(block)  # a later block replaces a key an earlier one set, as pasting does
        own = {"config": {**yaml.safe_load(edited)["config"], **block}}
        name = where.replace("/", "-").replace(".md:", "-")
        (copy / "stacks" / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(own, sort_keys=False))
    edited = yaml.safe_dump(document, sort_keys=False)
    dev.write_text(edited)
    (copy / "stacks" / "Pulumi.mystack.yaml").write_text(edited)
    (copy / "Pulumi.yaml").write_text((copy / "Pulumi.yaml").read_text() + "config:\n  aws:region: ap-south-1\n")
    for line in appended_lines():  # last: they leave dev invalid (a second gpuplane:nodeGroups key)
        subprocess.run(["bash", "-c", line], cwd=copy, check=True)
    return dev.read_text()


def test_the_edits_are_the_ones_the_docs_give():
    blocks = dict(pasted_blocks())
    # "A second GPU group" in docs/gpu-groups.md, found by what it holds (its line moves as the page grows).
    groups = [
        [g["name"] for g in block["gpuplane:nodeGroups"]]
        for where, block in blocks.items()
        if where.startswith("docs/gpu-groups.md:") and "gpuplane:nodeGroups" in block
    ]
    assert ["system", "gpu", "serving"] in groups
    assert sum(where.startswith("docs/gpu-groups.md") for where in blocks) >= 4
    assert any(where.startswith("docs/workloads.md") for where in blocks)
    assert any(where.startswith("docs/reserved-gpus.md") for where in blocks)
    assert appended_lines(), "the error samples' setup lines are edits too"


def test_edited_and_added_stack_files_change_no_test_result(tmp_path):
    copy = tmp_path / "checkout"
    edited = edited_checkout(copy)
    assert "serving" in edited and "eu-central-1" in edited
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST") and k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *AFFECTED],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.splitlines()[-1]
    assert int(summary.split(" passed")[0].split()[-1]) >= len(AFFECTED) and "skipped" not in summary, summary
    # The copy's own tests read the copy's gpuplane (its src/), and its pristine fixtures, not its stacks/.
    assert shipped.DEV.read_text() != edited
