"""What reaches a terminal: text gpuplane did not write is made harmless, tables fit the terminal's width
without breaking a word, and `--help` says what is true."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rich.table import Table
from typer.testing import CliRunner

from gpuplane.infra import options, untrusted
from gpuplane.infra import render as renderer
from gpuplane.infra.cli import app
from gpuplane.infra.config import load
from gpuplane.infra.verify import report
from gpuplane.infra.verify.model import Outcome
from gpuplane.infra.verify.runner import Result, RunReport
from tests import shipped

runner = CliRunner()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("\x1b[2J clear", "\\x1b[2J clear"),
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
        ("a\rb", "a\\x0db"),
        ("\x9b31m", "\\x9b31m"),
        ("admin\u202etxt.exe", "admin\\u202etxt.exe"),
        ("line\nnext\ttab", "line\nnext\ttab"),
        ("plain [bold]text[/]", "plain [bold]text[/]"),
    ],
)
def test_control_characters_are_shown_not_sent(text, expected):
    assert untrusted.shown(text) == expected


def test_one_line_shows_newlines_too_and_a_long_text_is_cut_saying_how_much():
    assert untrusted.shown("a\nb\tc", one_line=True) == "a\\x0ab\\x09c"
    assert untrusted.shown("x" * 10_000, 100) == "x" * 100 + "… (9900 more characters)"
    assert untrusted.shown("\x1b" * 5, 2) == "\\x1b\\x1b… (3 more characters)"  # an escape is never split


def test_error_lines_show_a_servers_escapes(capsys):
    options.error("the API answered \x1b]0;owned\x07 and " + "y" * 5000)
    err = capsys.readouterr().err
    assert "\x1b]0" not in err and "\\x1b]0;owned\\x07" in err
    assert "… (3000 more characters)" in " ".join(err.split()) or "more characters" in err


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


def _tokens(table: Table) -> list[str]:
    found = []
    for column in table.columns:
        for cell in [column.header, *column.cells]:
            found += str(getattr(cell, "plain", cell)).split()
    return found


def _printed(renderable: Any, width: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    options.console(stderr=False, wide=True).print(renderable)
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def dev_tables() -> list[Table]:
    config = load("dev", shipped.STACKS)
    recording = renderer.run_stack(config)
    facts = renderer.summary(config, recording)
    return [renderer.summary_table(config, recording), renderer.workloads_table(facts)]


@pytest.mark.parametrize("width", [80, 100, 200])
def test_the_render_summary_fits_the_terminal_without_breaking_a_word(dev_tables, width, monkeypatch, capsys):
    for table in dev_tables:
        tokens = _tokens(table)
        out = _printed(table, width, monkeypatch, capsys)
        assert max(len(line) for line in _lines(out)) <= width
        words = {w.rstrip(",:") for w in re.split(r"[\s│┃|]+", out)}
        broken = [t for t in tokens if len(t) < width - 4 and t.rstrip(",:") not in words]
        assert not broken, (width, broken, out)
    assert "AL2023_x86_64_NVIDIA" in _tokens(dev_tables[0])  # the word that used to break


def test_a_wide_terminal_gets_a_table_and_a_narrow_one_blocks(dev_tables, monkeypatch, capsys):
    wide = _printed(dev_tables[0], 200, monkeypatch, capsys)
    assert "┃ node " in wide and "│ AL2023_x86_64_NVIDIA " in wide
    narrow = _printed(dev_tables[0], 80, monkeypatch, capsys)
    assert "node group: gpu\n" in narrow and "  AMI type: AL2023_x86_64_NVIDIA\n" in narrow


@pytest.mark.parametrize("width", [80, 100, 200])
def test_the_verify_table_is_bounded_and_fits(width, monkeypatch, capsys):
    evidence = "; ".join(f"ip-10-0-{i}.ec2.internal (system): \x1b[2Jnot ready" for i in range(3000))
    result = RunReport(
        "dev",
        "20261126-100000-abcdef",
        "gpuplane-dev",
        "us-west-2",
        "2026-11-26T10:00:00+00:00",
        results=[Result("nodes", "Nodes", Outcome("fail", evidence, "the kubelet", "look"), 3.0)],
    )
    out = _printed(report.table(result), width, monkeypatch, capsys)
    assert max(len(line) for line in _lines(out)) <= width
    assert "\x1b" not in out
    assert "\\x1b[2Jnot" in out and "more" in out and "characters)" in out
    assert len(out) < 20 * width * 10


def test_help_shows_no_type_for_flags_and_token_names_no_stack():
    done = runner.invoke(app, ["verify", "--help"], env={"COLUMNS": "120"})
    assert done.exit_code == 0
    assert "<bool>" not in done.output and "--skip-gpu" in done.output
    token = " ".join(runner.invoke(app, ["token", "--help"], env={"COLUMNS": "120"}).output.split())
    assert "stack" not in token.lower()
    assert "AWS_PROFILE" in token and "AWS_DEFAULT_REGION" in token
