"""A program of one's own renders like the project's: its training runs listed, its warnings in its own words.

The program here is a copy of gpuplane's own (`infra/__main__.py` and the dev stack) in a project of its own,
which `gpuplane render` runs as a file (`write_program`), as it would a team's copy run by an installed
gpuplane.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner, Result

from gpuplane.infra.cli import app
from tests import shipped

ROOT = Path(__file__).resolve().parents[2]


def render(*args: str) -> Result:
    """`gpuplane render ... --json` in this process: what is asserted is the render, not a process's start."""
    return CliRunner().invoke(app, ["render", *args, "--json"])


def test_a_copy_of_the_project_lists_and_checks_its_training_runs(tmp_path):
    project = tmp_path / "team"
    (project / "program").mkdir(parents=True)
    shutil.copy(ROOT / "infra" / "__main__.py", project / "program" / "__main__.py")
    shutil.copytree(shipped.STACKS, project / "stacks")
    (project / "Pulumi.yaml").write_text("name: gpuplane\nruntime: python\nmain: program/\nstackConfigDir: stacks\n")
    own, copy = tmp_path / "own", tmp_path / "copy"
    mine = render("dev", "--out", str(own))
    assert mine.exit_code == 0, mine.output
    result = render("--project", str(project), "dev", "--out", str(copy))
    assert result.exit_code == 0, result.output
    runs = sorted(p.name for p in (copy / "manifests" / "runs").iterdir())
    assert runs and runs == sorted(p.name for p in (own / "manifests" / "runs").iterdir())
    for name in runs:
        assert (copy / "manifests" / "runs" / name).read_text() == (own / "manifests" / "runs" / name).read_text()
    # the summary lists them (name, roles, GPUs) as it does the project's
    assert json.loads(result.stdout)["trainingRuns"] == json.loads(mine.stdout)["trainingRuns"] != []


def test_a_program_s_cluster_warning_names_its_line_not_gpuplane_s_key(tmp_path):
    out = tmp_path / "out"
    result = render("--project", str(ROOT / "examples" / "gpu-cluster"), "dev", "--out", str(out))
    assert result.exit_code == 0, result.output
    warnings = json.loads(result.stdout)["warnings"]
    cidr = [w for w in warnings if "publicAccessCidrs" in w or "public_access_cidrs" in w]
    assert len(cidr) == 1
    assert cidr[0].startswith("__main__.py line ")
    assert ": ClusterArgs.public_access_cidrs[0]: 198.51.100.0/24 is no internet address" in cidr[0]
    assert "gpuplane:cluster" not in cidr[0]


def test_a_program_s_bad_stack_config_names_the_file_like_the_project_s(tmp_path):
    project = tmp_path / "team"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text("name: team\nruntime: python\nstackConfigDir: stacks\n")
    (project / "__main__.py").write_text("import pulumi\n")
    (project / "stacks" / "Pulumi.dev.yaml").write_text("config:\n  aws:region: mars-1\n")
    result = render("--project", str(project), "dev", "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert "  - stacks/Pulumi.dev.yaml: aws:region: 'mars-1' is not a region where EKS is offered; allowed: " in (
        result.stderr
    )
    assert "us-west-2" in result.stderr
    assert result.stderr.rstrip().endswith("Nothing was rendered.")
    assert not (tmp_path / "out").exists()
