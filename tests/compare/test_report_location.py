"""A compare report is the user's: it lands in the project's `.gpuplane/<stack>/compare/<run id>/`, whatever
the current folder, and no render deletes it. The cluster is a fake `kube.JobRunner`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpuplane.infra import kube
from gpuplane.infra.cli import app
from tests import team_project

runner = CliRunner()


@pytest.fixture
def team(tmp_path: Path) -> Path:
    root = team_project.make(tmp_path / "team")
    state = root / ".gpuplane" / "dev"
    state.mkdir(parents=True)
    (state / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")
    return root


def test_report_lands_in_the_projects_state_folder_and_survives_renders(team, summary, monkeypatch):
    summary = {**summary, "model": team_project.MODEL, "variants": ["cpu", "big"]}
    seen: list[Path] = []

    class FakeRunner:
        def __init__(self, source: kube.Source) -> None:
            seen.append(source.path)

        def prepare(self, run: Any) -> None:
            pass

        def run_job(self, run: Any, progress: Any) -> str:
            return "GPUPLANE-COMPARE-SUMMARY " + json.dumps(summary) + "\n"

    monkeypatch.setattr(kube, "JobRunner", FakeRunner)
    monkeypatch.chdir(team / "src" / "deep")
    result = runner.invoke(app, ["compare", "dev", "--model", team_project.MODEL], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert seen == [team / ".gpuplane" / "dev" / "kubeconfig"]
    (run,) = (team / ".gpuplane" / "dev" / "compare").iterdir()
    # The project's .gpuplane/ is private: every folder down to the report 0700.
    for folder in (team / ".gpuplane", team / ".gpuplane" / "dev", run.parent, run):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    report = run / "report.json"
    written = report.read_text()
    assert json.loads(written)["summary"]["model"] == team_project.MODEL
    assert sorted(p.name for p in (team / "src").rglob("*")) == ["deep"]
    for _ in range(2):
        assert runner.invoke(app, ["render", "dev"]).exit_code == 0
    assert report.read_text() == written
    assert (run / "report.html").is_file()
