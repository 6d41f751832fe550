"""One table of exit codes for every command (docs/commands.md, "Exit codes").

0 done, 1 failed, 2 invalid input, 130 Ctrl-C.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplane.infra import options
from gpuplane.infra.cli import app
from tests import interrupts, team_project

runner = CliRunner()


def test_the_table_is_the_docs():
    assert (options.EXIT_OK, options.EXIT_FAILED, options.EXIT_INVALID_INPUT, options.EXIT_INTERRUPTED) == (
        0,
        1,
        2,
        130,
    )
    readme = (Path(__file__).resolve().parents[2] / "docs" / "commands.md").read_text()
    for code in ("| 0 | done |", "| 1 | the operation failed", "| 2 | invalid input", "| 130 | interrupted"):
        assert code in readme


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = team_project.own_program(tmp_path / "team")
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{_closed_port()}'}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\n"
    )
    return root


CASES = {
    # the operation failed: the cluster
    "train-unreachable": (["train", "dev", "mnist", "--kubeconfig", "KC"], 1),
    "queue-unreachable": (["queue", "dev", "--kubeconfig", "KC"], 1),
    "compare-unreachable": (["compare", "dev", "--model", team_project.MODEL, "--kubeconfig", "KC"], 1),
    # invalid input: config, arguments, a path the user named or must create first
    "render-unknown-stack": (["render", "nope"], 2),
    "train-unknown-workload": (["train", "dev", "nope", "--plan"], 2),
    "train-no-kubeconfig": (["train", "dev", "mnist"], 2),
    "queue-no-kubeconfig": (["queue", "dev"], 2),
    "compare-no-kubeconfig": (["compare", "dev", "--model", team_project.MODEL], 2),
    "verify-no-kubeconfig": (["verify", "dev"], 2),
    "verify-unreachable": (["verify", "dev", "--kubeconfig", "KC"], 1),
    "compare-bad-size": (["compare", "dev", "--model", team_project.MODEL, "--sizes", "1", "--plan"], 2),
    "kubeconfig-unknown-stack": (["kubeconfig", "nope"], 2),
    "preflight-unknown-stack": (["preflight", "nope"], 2),
    "janitor-unknown-stack": (["janitor", "nope"], 2),
    "unknown-option": (["render", "dev", "--nope"], 2),
    # done
    "train-plan": (["train", "dev", "mnist", "--plan"], 0),
    "compare-plan": (["compare", "dev", "--model", team_project.MODEL, "--plan"], 0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_command_exits_with_the_tables_code(project, tmp_path, case):
    args, code = CASES[case]
    args = [str(tmp_path / "kc") if a == "KC" else a for a in args]
    result = runner.invoke(app, [*args, "--project", str(project)])
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


def test_ctrl_c_is_130_and_a_command_unwinds(tmp_path):
    marker = tmp_path / "unwound"
    script = textwrap.dedent(
        f"""
        import os, signal, sys, time
        from gpuplane.infra import cli

        @cli.app.command()
        def nap() -> None:
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(30)
            finally:
                open({str(marker)!r}, "w").close()

        sys.argv = ["gpuplane", "nap"]
        cli.main()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=interrupts.as_from_a_terminal,  # SIGINT as from a terminal, even under nohup (tests/interrupts.py)
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "Aborted" not in done.stderr
    assert marker.exists()
