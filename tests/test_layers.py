"""The layers of the code are contracts that import-linter checks (pyproject `[tool.importlinter]`).

`make lint` runs `lint-imports` on the project; these tests show the contracts are not vacuous: a copy of
the package with one wrong import (a lower layer reaching up, an import only under `TYPE_CHECKING`, a
loop between two siblings, Pulumi in the pure layers) breaks the contract that names the mistake.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of the installed package (the symlinked folders resolved), to break on purpose."""
    shutil.copytree(ROOT / "src" / "gpuplane", tmp_path / "gpuplane", symlinks=False)
    return tmp_path


def add_line(root: Path, module: str, line: str) -> None:
    path = root / "gpuplane" / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + "\n" + line + "\n")


def test_the_project_keeps_every_contract(package: Path):
    result = lint(package)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken", "evidence"),
    [
        # the schema reaching up into the plan: the loop issue 25 removed
        (
            "components.config.platform",
            "from gpuplane.components.plan import placement  # noqa",
            "components: resources -> destroy -> plan -> config -> facts",
            "gpuplane.components.config is not allowed to import gpuplane.components.plan",
        ),
        # an import for type checking only is still an import
        (
            "components.plan.gpu_nodes",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gpuplane.components.cluster import Cluster",
            "components: resources -> destroy -> plan -> config -> facts",
            "gpuplane.components.plan is not allowed to import gpuplane.components.cluster",
        ),
        (
            "manifests.versions",
            "from gpuplane.components.config import PlatformArgs  # noqa",
            "infra -> components -> manifests",
            "gpuplane.manifests is not allowed to import gpuplane.components",
        ),
        (
            "components.facts.catalog",
            "import pulumi  # noqa",
            "the schema, the plan, the facts and the manifests import no Pulumi and no boto3",
            "gpuplane.components.facts.catalog -> pulumi",
        ),
        (
            "components.plan.gpu_nodes",
            "from gpuplane.components.plan import training_queue  # noqa",
            "no import circles between the modules of a package",
            ".gpu_nodes -> .training_queue",
        ),
        # `gpuplane train` reaching the run through the Pulumi component instead of the plan
        (
            "infra.train",
            "from gpuplane.components.training import queued_run  # noqa",
            "the commands that only plan (train, queue) import no Pulumi",
            "gpuplane.infra.train -> gpuplane.components.training",
        ),
        # a child of the cluster importing the module of the cluster's verbs (which import the children)
        (
            "components.node_group",
            "from gpuplane.components.cluster import Cluster  # noqa",
            "no import circles between the modules of a package",
            ".cluster",
        ),
    ],
)
def test_a_wrong_import_breaks_the_contract_that_names_it(
    package: Path, module: str, line: str, broken: str, evidence: str
):
    add_line(package, module, line)
    result = lint(package)
    assert result.returncode == 1, result.stdout
    assert f"{broken} BROKEN" in result.stdout
    assert evidence in result.stdout


def test_a_new_module_outside_every_layer_is_refused(package: Path):
    """The components contract is exhaustive: a new top-level module must be placed in a layer."""
    (package / "gpuplane" / "components" / "stray.py").write_text('"""A module nobody placed."""\n')
    result = lint(package)
    assert result.returncode == 1
    assert "gpuplane.components.stray" in result.stdout
