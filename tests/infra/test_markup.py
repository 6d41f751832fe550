"""User text is never markup: `[/x]` in every command's arguments is printed as written, and nothing crashes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplane.infra.cli import app
from tests import team_project

runner = CliRunner()
MARK = "[/x]"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """gpuplane's own program in a folder named like `team [old]`, with a training workload."""
    return team_project.own_program(tmp_path / "team [old]")


def _run(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "--project", str(project)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    text = result.output
    assert "MarkupError" not in text and "Traceback" not in text, text
    return result.exit_code, " ".join(text.split())


COMMANDS = {
    "render-stack": (["render", f"a{MARK}"], 2, f"a{MARK}"),
    "render-out": (["render", "dev", "--out", "OUT"], 0, MARK),
    "train-name": (["train", "dev", MARK], 2, MARK),
    "train-run-id": (["train", "dev", "mnist", "--run-id", f"a{MARK}"], 2, f"a{MARK}"),
    "train-kubeconfig": (["train", "dev", "mnist", "--kubeconfig", f"kc/{MARK}"], 2, f"kc/{MARK}"),
    "queue-kubeconfig": (["queue", "dev", "--kubeconfig", f"kc/{MARK}"], 2, f"kc/{MARK}"),
    "verify-kubeconfig": (["verify", "dev", "--kubeconfig", f"kc/{MARK}"], 2, f"kc/{MARK}"),
    "compare-model": (["compare", "dev", "--model", MARK, "--plan"], 2, MARK),
    "compare-kubeconfig": (
        ["compare", "dev", "--model", team_project.MODEL, "--kubeconfig", f"kc/{MARK}"],
        2,
        f"kc/{MARK}",
    ),
    "preflight-profile": (["preflight", "dev", "--profile", MARK], 1, MARK),
    "kubeconfig-profile": (["kubeconfig", "dev", "--profile", MARK], 1, MARK),
    "janitor-profile": (["janitor", "dev", "--profile", MARK], 1, MARK),
}


@pytest.mark.parametrize("case", sorted(COMMANDS))
def test_every_command_prints_user_text_literally(project, tmp_path, case, monkeypatch):
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    args, code, shown = COMMANDS[case]
    args = [a.replace("OUT", str(tmp_path / "out" / MARK)) for a in args]
    exit_code, text = _run(project, *args)
    assert exit_code == code, text
    assert shown in text, text


def test_a_project_folder_with_brackets_is_named_as_it_is(project):
    code, text = _run(project, "render", "nope")
    assert code == 2
    assert str(project / "stacks") in text, text


def test_token_prints_a_profile_with_brackets_literally(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    result = runner.invoke(app, ["token", "--cluster", MARK, "--profile", MARK, "--region", "us-west-2"])
    assert result.exit_code == 1 and MARK in result.output and "MarkupError" not in result.output, result.output
