"""benchmarks/tfvenv.py: when the TensorFlow venv counts as made, and what a failure to make it says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.test_helper_tensorflow import tfvenv

ROOT = Path(__file__).resolve().parents[1]


def fake_venv(tmp_path: Path, marker: str | None) -> Path:
    """A venv whose python is this one (which has no TensorFlow), with or without the made-marker."""
    venv = tmp_path / "tfvenv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    if marker is not None:
        (venv / tfvenv.MARKER).write_text(marker)
    return venv


def test_a_venv_without_a_python_is_not_ready(tmp_path: Path) -> None:
    assert not tfvenv.ready(tmp_path / "none")


def test_the_marker_of_the_pinned_version_makes_it_ready_without_importing(tmp_path: Path) -> None:
    assert tfvenv.ready(fake_venv(tmp_path, f"{tfvenv.TF_VERSION}\n"))


def test_an_older_marker_falls_back_to_importing_tensorflow(tmp_path: Path) -> None:
    """A venv of another TensorFlow (the pin moved) is made again: this python cannot import TensorFlow."""
    venv = fake_venv(tmp_path, "2.0.0\n")
    assert not tfvenv.ready(venv)
    assert (venv / tfvenv.MARKER).read_text() == "2.0.0\n"  # not rewritten by a failed probe


def test_a_venv_that_cannot_be_made_raises_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(tfvenv.TFVenvError, match="cannot create a venv for TensorFlow"):
        tfvenv.ensure(tmp_path / "tfvenv", base_python="/bin/false")
    assert (tmp_path / "tfvenv.lock").exists()  # made under the lock the parallel test workers share


def test_the_command_line_prints_the_python_or_says_why_not(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path, tfvenv.TF_VERSION)
    script = ROOT / "benchmarks" / "tfvenv.py"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(script), str(venv)], capture_output=True, text=True, env=env, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, str(venv / "bin" / "python"))


def test_the_command_line_says_why_not_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    why = f"pip cannot install tensorflow-cpu=={tfvenv.TF_VERSION} here: No matching distribution"

    def fail(venv: Path) -> Path:
        raise tfvenv.TFVenvError(why)

    monkeypatch.setattr(tfvenv, "ensure", fail)
    assert tfvenv.main([str(tmp_path / "v")]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == f"benchmarks/tfvenv.py: {why}\n"
