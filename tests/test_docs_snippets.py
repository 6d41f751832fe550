"""Every shell and Python snippet in README.md and docs/*.md runs as written.

A fenced block tagged `sh`, `bash`, `console` or `python` is run here, offline, in a copy of the project
(Pulumi.yaml, stacks/, examples/, the runtime helper, .checkov/) with this venv's `gpuplane` and `python`
first on PATH. An HTML comment right above the fence says otherwise, and why, where a block cannot run here:

- `<!-- snippet: needs-cluster -->` / `needs-aws` / `needs-docker`: talks to a live cluster or an AWS account, or
  pulls and runs container images (no registry and no Docker here) (skipped, named);
- `<!-- snippet: ci -->`: sets up the machine (`make check` is what CI runs; it runs the tests, this one too);
- `<!-- snippet: program -->`: a Python block that is a consumer's Pulumi program: it is rendered with
  `gpuplane render --project` as a project of its own (in this process), which must exit 0;
- `<!-- snippet: check-output exit=N -->`: a `console` block whose output must match (`...` stands for any
  lines, or, inside a line, any text) and whose commands exit N;
- `<!-- snippet-setup: COMMANDS -->`: shell commands run first in the copy (e.g. the bad config an error
  sample shows);
- `<!-- snippet: stack-config stack=STACK [exit=N] -->`: a `yaml` block of stack config keys
  (`gpuplane:nodeGroups: ...`): each replaces the key of that name in the copy's `stacks/Pulumi.STACK.yaml`,
  then `gpuplane render STACK --json` (in this process) must exit N (default 0), and a node group the block lists
  must render with the instance types, capacity type and scale it gives (the GPU group walkthrough).

Blocks without a language (sample output, file trees, synopses), `json`/`mermaid` and unmarked `yaml` are not run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from gpuplane.infra.cli import app
from tests import shipped

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUN = ("sh", "bash", "console", "python")
SKIP = {
    "needs-cluster": "needs a live cluster",
    "needs-aws": "needs an AWS account",
    "needs-docker": "pulls and runs container images with Docker",
    "ci": "sets up the machine; CI runs it (.ci/run -> make check)",
}
FENCE = re.compile(r"^```(\S*)\s*$")
COMMENT = re.compile(r"<!--\s*(snippet(?:-setup)?):(.*?)-->", re.S)
TIMEOUT_S = 600


@dataclass
class Snippet:
    doc: Path
    line: int
    language: str
    body: str
    markers: list[str] = field(default_factory=list)
    setup: str = ""

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def snippets(doc: Path) -> list[Snippet]:
    """The runnable blocks of one Markdown file, with the comments written right above each."""
    lines = doc.read_text().splitlines()
    found: list[Snippet] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        above = "\n".join(lines[max(0, i - 20) : i])
        comments = []
        # Comments directly above the fence (only blank lines or other comments between them and it).
        tail = above.rstrip()
        while tail.endswith("-->") and "<!--" in tail:
            start = tail.rindex("<!--")
            comments.append(tail[start:])
            tail = tail[:start].rstrip()
        markers: list[str] = []
        setup = ""
        for comment in comments:
            for kind, text in COMMENT.findall(comment):
                if kind == "snippet-setup":
                    setup = text.strip() + "\n" + setup
                else:
                    markers += text.split()
        if match.group(1) in RUN or (match.group(1) == "yaml" and "stack-config" in markers):
            found.append(Snippet(doc, i + 1, match.group(1), "\n".join(lines[i + 1 : end]) + "\n", markers, setup))
        i = end + 1
    return found


ALL = [s for doc in DOCS for s in snippets(doc)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of what the snippets read, outside the checkout (so they write nothing into it)."""
    work = shipped.make_project(tmp_path / "project")  # the shipped stacks, pristine (tests/shipped.py)
    for folder in ("examples", ".checkov"):
        shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns("venv", "build", ".gpuplane"))
    shutil.copytree(ROOT / "manifests" / "runtime", work / "manifests" / "runtime")
    if (ROOT / ".venv-checkov").exists():
        (work / ".venv-checkov").symlink_to((ROOT / ".venv-checkov").resolve())
    return work


def environment() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "NO_COLOR": "1", "COLUMNS": "300"}


def shell(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        check=False,
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def render(project: Path, *args: str) -> Result:
    """`gpuplane render --project PROJECT ARGS` in this process, for the renders the runner itself asks for (a
    program block's, a stack-config block's): the blocks' own commands run in a shell, as written."""
    return CliRunner().invoke(app, ["render", "--project", str(project), *args])


def matches(expected: list[str], actual: list[str]) -> bool:
    """`expected` lines against `actual`: a line `...` stands for any lines, `...` in a line for any text."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head.strip() == "...":
        return any(matches(rest, actual[k:]) for k in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(part) for part in head.rstrip().split("..."))
    return re.fullmatch(pattern, actual[0].rstrip()) is not None and matches(rest, actual[1:])


def run_console(snippet: Snippet, cwd: Path) -> None:
    check = "check-output" in snippet.markers
    want_exit = int(marker_value(snippet, "exit", "0"))
    lines = snippet.body.splitlines()
    commands = [(k, line[2:]) for k, line in enumerate(lines) if line.startswith("$ ")]
    assert commands, f"{snippet.id}: a console block needs `$ ` command lines"
    for index, (k, command) in enumerate(commands):
        stop = commands[index + 1][0] if index + 1 < len(commands) else len(lines)
        result = shell(command, cwd)
        assert result.returncode == want_exit, f"{snippet.id}: `{command}` exited {result.returncode}\n{result.stderr}"
        if check:
            output = (result.stdout + result.stderr).splitlines()
            expected = lines[k + 1 : stop]
            assert matches(expected, output), f"{snippet.id}: `{command}` printed:\n" + "\n".join(output)


def run_program(snippet: Snippet, cwd: Path) -> None:
    program = cwd / "snippet-program"
    (program / "stacks").mkdir(parents=True)
    (program / "Pulumi.yaml").write_text("name: snippet\nruntime: python\nstackConfigDir: stacks\n")
    (program / "stacks" / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (program / "__main__.py").write_text(snippet.body)
    result = render(program, "dev", "--json")
    assert result.exit_code == 0, f"{snippet.id}: the program does not render:\n{result.output}"
    assert (program / "build" / "dev" / "plan.json").is_file()
    # A documented program is a working one: its GPU groups get a device plugin and an autoscaler.
    assert json.loads(result.stdout)["wiring"] == [], f"{snippet.id}: render warns about the program's GPU groups"


def marker_value(snippet: Snippet, name: str, default: str) -> str:
    """`name=value` among the snippet's markers (`exit=2`, `stack=dev`), else `default`."""
    return next((m.split("=", 1)[1] for m in snippet.markers if m.startswith(f"{name}=")), default)


# What the render summary (`--json`) reports of a node group, by the config key that sets it.
GROUP_SUMMARY_KEYS = ("instanceTypes", "capacityType", "minSize", "maxSize")


def run_stack_config(snippet: Snippet, cwd: Path) -> None:
    """Put the block's keys into the stack file, render, and compare the node groups it lists with the render."""
    stack = marker_value(snippet, "stack", "dev")
    want_exit = int(marker_value(snippet, "exit", "0"))
    keys = yaml.safe_load(snippet.body)
    assert isinstance(keys, dict) and keys, f"{snippet.id}: a stack-config block is a mapping of config keys"
    assert all(":" in key for key in keys), f"{snippet.id}: config keys are namespaced (gpuplane:...): {list(keys)}"
    stack_file = cwd / "stacks" / f"Pulumi.{stack}.yaml"
    document = yaml.safe_load(stack_file.read_text())
    document["config"].update(keys)
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False))
    result = render(cwd, stack, "--json")
    assert result.exit_code == want_exit, f"{snippet.id}: render exited {result.exit_code}\n{result.output}"
    if want_exit != 0:
        return
    rendered = {group["name"]: group for group in json.loads(result.stdout)["nodeGroups"]}
    for group in keys.get("gpuplane:nodeGroups", []):
        assert group["name"] in rendered, f"{snippet.id}: group {group['name']} is not in the render"
        for key in GROUP_SUMMARY_KEYS:
            if key in group:
                assert rendered[group["name"]][key] == group[key], f"{snippet.id}: {group['name']}.{key}"
    assert set(rendered) == {g["name"] for g in keys.get("gpuplane:nodeGroups", [])} or (
        "gpuplane:nodeGroups" not in keys
    ), f"{snippet.id}: the render has other groups than the block lists: {sorted(rendered)}"


@pytest.mark.parametrize("snippet", ALL, ids=[s.id for s in ALL])
def test_snippet_runs_as_written(snippet: Snippet, project: Path) -> None:
    for marker, why in SKIP.items():
        if marker in snippet.markers:
            pytest.skip(f"{snippet.id}: {why} (marked `snippet: {marker}`)")
    if ".venv-checkov/" in snippet.body and not (project / ".venv-checkov").exists():
        pytest.skip("checkov's venv is not built (make .venv-checkov/bin/checkov)")
    if snippet.setup:
        prepared = shell(snippet.setup, project)
        assert prepared.returncode == 0, f"{snippet.id}: setup failed:\n{prepared.stderr}"
    if snippet.language == "yaml":
        run_stack_config(snippet, project)
    elif snippet.language == "console":
        run_console(snippet, project)
    elif snippet.language == "python" and "program" in snippet.markers:
        run_program(snippet, project)
    elif snippet.language == "python":
        result = subprocess.run(
            [sys.executable, "-c", snippet.body],
            check=False,
            cwd=project,
            env=environment(),
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, f"{snippet.id}:\n{result.stderr}"
    else:
        result = shell(snippet.body, project)
        assert result.returncode == 0, f"{snippet.id} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"


def test_the_runner_finds_the_blocks_and_their_marks():
    readme = {s.line: s for s in ALL if s.doc.name == "README.md"}
    assert any(s.language == "python" and "program" in s.markers for s in readme.values())
    assert any("needs-cluster" in s.markers for s in ALL)
    assert len(ALL) >= 8
    # The GPU group walkthrough's YAML is rendered, each block.
    walkthrough = [s for s in ALL if s.doc.name == "gpu-groups.md" and s.language == "yaml"]
    assert len(walkthrough) >= 4
    assert all("stack-config" in s.markers for s in walkthrough)


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a ... z"], ["a to z"], True),
        (["a", "d"], ["a", "b", "d"], False),
        (["x"], ["y"], False),
    ],
)
def test_output_matching(expected, actual, ok):
    assert matches(expected, actual) is ok
