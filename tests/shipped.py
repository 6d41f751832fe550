"""The shipped stacks as the tests know them: pristine copies under tests/fixtures/, never the user's files.

Why: `stacks/` and `Pulumi.yaml` at the project root are the user's to edit (the README's deploy steps set the
region and replace the CIDR in `stacks/Pulumi.dev.yaml`, and suggest copying it to a stack of one's own), and
`make check` must not depend on what they hold. The tests read these copies instead; `.ci/run` checks on a
fresh clone that they are still the files the project ships (`cmp`), so they cannot drift apart unnoticed.
The conftest runs every test in a temporary copy of this project (`PROJECT`), so a command run without
`--project` finds these stacks and writes its `build/` and `.gpuplane/` there, not into the checkout.
"""

from __future__ import annotations

from pathlib import Path

_project: list[Path] = []

FIXTURES = Path(__file__).resolve().parent / "fixtures"
STACKS = FIXTURES / "stacks"
PULUMI_YAML = FIXTURES / "Pulumi.yaml"
DEV = STACKS / "Pulumi.dev.yaml"
PROD = STACKS / "Pulumi.prod.yaml"
# The files the project ships, compared with the copies above by .ci/run (not by a test: a user's edit of
# the shipped files must not fail `make check`).
SHIPPED = {"stacks/Pulumi.dev.yaml": DEV, "stacks/Pulumi.prod.yaml": PROD, "Pulumi.yaml": PULUMI_YAML}


def project() -> Path:
    """The session's copy of the shipped project (made by the conftest): what `--project` names in a test."""
    assert _project, "no copy of the project yet: the conftest's `pristine_project` fixture makes it"
    return _project[-1]


def make_project(root: Path) -> Path:
    """A copy of the shipped project's files (Pulumi.yaml and stacks/) in `root`: gpuplane's own program."""
    (root / "stacks").mkdir(parents=True)
    (root / "Pulumi.yaml").write_text(PULUMI_YAML.read_text())
    for path in STACKS.glob("Pulumi.*.yaml"):
        (root / "stacks" / path.name).write_text(path.read_text())
    return root
