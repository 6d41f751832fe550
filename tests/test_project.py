"""The project files the real Pulumi CLI reads: what they must say for `pulumi up` to find the program."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_pulumi_project_file():
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert project["name"] == "gpuplane"
    assert project["main"] == "infra/"
    assert project["stackConfigDir"] == "stacks"
    assert project["runtime"]["name"] == "python"
    venv = project["runtime"]["options"]["virtualenv"]
    assert venv == ".venv"
    assert (ROOT / "infra" / "__main__.py").is_file()
    # The venv Pulumi creates installs requirements.txt: it must install this project.
    assert "-e ." in (ROOT / "requirements.txt").read_text().splitlines()


def test_distribution_packages_and_console_script():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["name"] == "gpuplane"
    assert set(pyproject["tool"]["setuptools"]["packages"]) == {"components", "manifests", "infra"}
    assert pyproject["project"]["scripts"]["gpuplane"] == "infra.cli:app"
    for dep in pyproject["project"]["dependencies"]:
        assert "==" in dep, f"unpinned dependency {dep}"


def test_stack_files_exist_for_both_shipped_stacks():
    for stack in ("dev", "prod"):
        config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
        assert config["gpuplane:profile"] == stack
        assert config["aws:region"]
