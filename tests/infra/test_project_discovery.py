"""Render finds the project like the Pulumi CLI: nearest Pulumi.yaml upward, its stackConfigDir and config."""

from __future__ import annotations

import json
import shutil
import typing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplane.infra import config, options
from gpuplane.infra.cli import app
from tests import shipped

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's Pulumi.yaml (stackConfigDir: stacks) and stacks/, with no code."""
    return shipped.make_project(tmp_path)


def test_render_from_a_subfolder_finds_the_nearest_pulumi_yaml(project, monkeypatch):
    # Changed on purpose: the default output is the project's build/<stack>, whatever the current
    # folder; it used to be ./build/<stack> under the current folder (deep/er/build/dev).
    (project / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(project / "deep" / "er")
    result = runner.invoke(app, ["render", "org/gpuplane/dev", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads((project / "build" / "dev" / "plan.json").read_text())
    assert plan["stack"] == "dev"
    assert list((project / "deep" / "er").iterdir()) == []


def test_project_level_config_is_under_the_stack_file(project, monkeypatch):
    stack = project / "stacks" / "Pulumi.dev.yaml"
    stack.write_text(stack.read_text().replace("aws:region: us-west-2", ""))
    text = (project / "Pulumi.yaml").read_text()
    (project / "Pulumi.yaml").write_text(text + "config:\n  aws:region: eu-west-1\n")
    found = config.find_project(project)
    assert found is not None and found.config == {"aws:region": "eu-west-1"}
    loaded = config.load("dev", found.stacks_dir, found.name, found.config)
    assert loaded.region == "eu-west-1"


def test_pulumi_yaml_schema_defaults_are_project_namespace(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text(
        "name: team\nmain: src/\nstackConfigDir: cfg\nconfig:\n  adminCidr: {type: string, default: 10.0.0.0/8}\n"
    )
    found = config.find_project(tmp_path)
    assert found is not None
    assert (found.name, found.stacks_dir, found.main) == ("team", tmp_path / "cfg", tmp_path / "src")
    assert found.config == {"team:adminCidr": "10.0.0.0/8"}


def test_no_project_found_is_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["render", "dev"])
    assert result.exit_code == 2
    assert "no Pulumi.yaml" in " ".join(result.output.split())
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["train", "dev", "mnist", "--plan"], "--project"),
        (["train", "dev", "mnist", "--plan"], "--stacks-dir"),
        (["train", "dev", "mnist", "--plan"], "--kubeconfig"),
        (["render", "dev"], "--out"),
        (["compare", "dev", "--model", "mobilenet", "--plan"], "--inputs"),
        (["verify", "dev", "--plan"], "--out"),
    ],
)
def test_a_path_the_system_cannot_look_up_is_refused_naming_the_option(project, monkeypatch, command, option):
    # A name longer than the file system allows made `is_file()`/`is_dir()` raise: a traceback and exit 1.
    monkeypatch.chdir(project)
    result = runner.invoke(app, [*command, option, "y" * 300])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.replace("\u2502", " ").split())  # the usage error's box, its sides removed
    assert f"Invalid value for '{option}'" in text
    assert "(180 more characters): File name too long; allowed: a path the system can open" in text
    assert "Traceback" not in text and not (project / "build").exists()


def test_every_path_option_of_every_command_has_the_look_up_check():
    """A path option added later without `options.looked_up` would end in a traceback for such a path again."""
    paths = []
    for command in app.registered_commands:
        assert command.callback is not None
        for parameter, hint in typing.get_type_hints(command.callback, include_extras=True).items():
            if typing.get_origin(hint) is not typing.Annotated:
                continue
            annotation, *extras = typing.get_args(hint)
            if Path in (typing.get_args(annotation) or (annotation,)):
                paths.append(parameter)
                callbacks = [getattr(extra, "callback", None) for extra in extras]
                assert options.looked_up in callbacks, f"{command.name or command.callback.__name__}: {parameter}"
    assert len(paths) >= 20  # --project and --stacks-dir of eight commands, and the others' --out and --kubeconfig


def test_stacks_dir_overrides_the_project(project, monkeypatch, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    shutil.copy(project / "stacks" / "Pulumi.prod.yaml", other / "Pulumi.only.yaml")
    monkeypatch.chdir(project)
    result = runner.invoke(app, ["render", "only", "--stacks-dir", str(other), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["profile"] == "prod"
