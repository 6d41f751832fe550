"""Every option's placeholder in `--help` says what to write, never a Python type such as `<list[str]>`."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from gpuplane.infra.cli import app

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_the_app_has_its_commands() -> None:
    assert {"render", "verify", "compare", "token", "preflight"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_no_option_shows_a_python_container_type(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert not re.findall(r"<(?:list|dict|tuple|set)\[[^>]*\]>", result.output)
