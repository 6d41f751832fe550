"""The project files the real Pulumi CLI reads: what they must say for `pulumi up` to find the program."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

import yaml

import gpuplane
from gpuplane.components.node_group import NodeGroup
from gpuplane.components.platform import Platform
from tests import shipped

ROOT = Path(__file__).resolve().parent.parent


def test_pulumi_project_file():
    project = yaml.safe_load(shipped.PULUMI_YAML.read_text())
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
    # One import name: the wheel is built from src/, where gpuplane/ links the top-level folders in.
    assert pyproject["tool"]["setuptools"]["package-dir"] == {"": "src"}
    assert pyproject["tool"]["setuptools"]["packages"]["find"]["include"] == ["gpuplane*"]
    for folder in ("components", "manifests", "infra"):
        link = ROOT / "src" / "gpuplane" / folder
        assert link.is_symlink() and link.resolve() == (ROOT / folder).resolve()
    assert pyproject["project"]["scripts"]["gpuplane"] == "gpuplane.infra.cli:main"
    for dep in pyproject["project"]["dependencies"]:
        assert "==" in dep, f"unpinned dependency {dep}"


def test_stack_files_exist_for_both_shipped_stacks():
    for stack in ("dev", "prod"):
        config = yaml.safe_load((shipped.STACKS / f"Pulumi.{stack}.yaml").read_text())["config"]
        assert config["gpuplane:profile"] == stack
        assert config["aws:region"]


def test_public_api_is_one_import_name():
    assert gpuplane.Platform is Platform
    assert gpuplane.NodeGroup is NodeGroup
    assert gpuplane.TfServing.__module__ == "gpuplane.components.serving"
    assert gpuplane.TfTraining.__module__ == "gpuplane.components.training"
    for name in gpuplane.__all__:
        assert getattr(gpuplane, name) is not None


def test_no_generic_top_level_imports_anywhere():
    """`import gpuplane...` is the only import path in code, tests, docs and examples."""
    bad = re.compile(r"^\s*(from|import) (components|manifests|infra)\b", re.M)
    paths = []
    for folder, subfolders, files in os.walk(ROOT):
        # Not into what the user owns (stacks/, build/: the tests never read them) or tool folders.
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d not in {"build", "src", "stacks"}]
        paths += [Path(folder) / name for name in files if Path(name).suffix in {".py", ".md"}]
    offenders = [str(p.relative_to(ROOT)) for p in paths if bad.search(p.read_text(errors="replace"))]
    assert offenders == []
