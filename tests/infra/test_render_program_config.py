"""A program of one's own that refuses its stack config is reported as gpuplane's own render reports it.

A team's copy of `infra/__main__.py` prints the problems and exits 2 under the engine. Rendered by
`gpuplane render --project`, the same problems come once, each prefixed with the stack file to fix, under the
render's own heading and followed by "Nothing was rendered.", and nothing is written. A program that prints
its own reasons and exits 2 gets the same framing; any other exit keeps its own output and status.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplane.infra import project as paths
from gpuplane.infra import render
from gpuplane.infra.cli import app
from gpuplane.infra.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]
STACK = """config:
  aws:region: us-west-2
  gpuplane:profile: dev
  gpuplane:cluster:
    publicAccessCidrs: ["198.51.100.0/24"]
  gpuplane:nodeGroups: 5
"""


def _project(tmp_path: Path, main: str | None = None) -> Path:
    project = tmp_path / "team"
    (project / "stacks").mkdir(parents=True)
    if main is None:
        shutil.copy(ROOT / "infra" / "__main__.py", project / "__main__.py")
    else:
        (project / "__main__.py").write_text(main)
    (project / "Pulumi.yaml").write_text("name: team\nruntime: python\nstackConfigDir: stacks\n")
    (project / "stacks" / "Pulumi.dev.yaml").write_text(STACK)
    return project


def test_a_copy_of_gpuplane_s_entry_point_reports_its_config_problems_with_the_stack_file(tmp_path, capfd):
    project = _project(tmp_path)
    with pytest.raises(ConfigError) as refused:
        render.write_program(paths.locate(project), "dev", tmp_path / "out")
    assert refused.value.problems == [
        "stacks/Pulumi.dev.yaml: gpuplane:nodeGroups: Input should be a valid list (got '5')"
    ]
    assert "Invalid gpuplane stack config" not in capfd.readouterr().err  # the program's own print is not repeated
    assert not (tmp_path / "out").exists()


def test_the_command_frames_it_like_the_project_s_own_config_errors(tmp_path):
    project = _project(tmp_path)
    result = CliRunner().invoke(app, ["render", "--project", str(project), "dev", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "  - stacks/Pulumi.dev.yaml: gpuplane:nodeGroups: Input should be a valid list" in result.output
    assert result.output.rstrip().endswith("Nothing was rendered.")
    assert not (tmp_path / "out").exists()


def test_a_program_that_prints_its_reasons_and_exits_2_gets_the_same_frame_and_its_words_verbatim(tmp_path):
    main = (
        'import sys\nprint("Bad stack:\\n  gpuplane:x: is not :smile: allowed", file=sys.stderr)\nraise SystemExit(2)\n'
    )
    project = _project(tmp_path, main)
    result = CliRunner().invoke(app, ["render", "--project", str(project), "dev", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    # Printed as written: rich's emoji codes (`:x:`, `:smile:`) are not turned into pictures.
    assert "  - stacks/Pulumi.dev.yaml: gpuplane:x: is not :smile: allowed" in result.output
    assert "Bad stack:" not in result.output
    assert result.output.rstrip().endswith("Nothing was rendered.")


def test_any_other_exit_keeps_the_program_s_output_and_status(tmp_path, capfd):
    project = _project(tmp_path, 'import sys\nprint("giving up", file=sys.stderr)\nraise SystemExit(3)\n')
    with pytest.raises(SystemExit) as ended:
        render.write_program(paths.locate(project), "dev", tmp_path / "out")
    assert ended.value.code == 3
    assert "giving up" in capfd.readouterr().err
