"""Every command finds the same project, from its root or any subfolder, and writes into it.

From the outside: a team's project in a temporary folder (tests/team_project.py), the CLI run as a user runs
it. The AWS commands (preflight, kubeconfig, janitor) are in tests/ops/test_one_project_aws.py, compare's
report in tests/compare/test_report_location.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.infra.cli import app
from tests import shipped, team_project

runner = CliRunner()
WHERE = ["", "src/deep"]  # the project's root, and a subfolder of it


@pytest.fixture
def team(tmp_path: Path) -> Path:
    return team_project.make(tmp_path / "team")


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("where", WHERE)
def test_render_runs_the_teams_program_and_writes_into_its_project(team, where, monkeypatch):
    monkeypatch.chdir(team / where)
    result = runner.invoke(app, ["render", "dev", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads((team / "build" / "dev" / "plan.json").read_text())
    assert (plan["project"], plan["stack"]) == (team_project.NAME, "dev")
    cluster = next(r for r in plan["resources"] if r["type"] == "aws:eks/cluster:Cluster")
    assert cluster["inputs"]["name"] == team_project.CLUSTER
    assert cluster["inputs"]["tags"]["team"] == "vision"  # the team's own helper module ran
    facts = json.loads(result.stdout)
    assert facts["region"] == team_project.REGION
    assert facts["availabilityZones"] == 2  # a consumer Platform counts its AZs (from its subnets)
    assert files_under(team / "src") == ["deep"]  # nothing written where the command ran


@pytest.mark.parametrize("where", WHERE)
def test_train_reads_the_projects_stack_file(team, where, monkeypatch):
    monkeypatch.chdir(team / where)
    result = runner.invoke(app, ["train", "dev", "mnist", "--plan"])
    assert result.exit_code == 0, result.output
    jobset, *queue_objects = yaml.safe_load_all(result.stdout)  # the queued run, then the queue it goes through
    assert jobset["kind"] == "JobSet" and "LocalQueue" in [o["kind"] for o in queue_objects]
    worker = next(j for j in jobset["spec"]["replicatedJobs"] if j["name"] == "worker")
    assert worker["template"]["spec"]["parallelism"] == team_project.WORKERS  # the team's 5, not the checkout's 2


@pytest.mark.parametrize("where", WHERE)
def test_compare_reads_the_projects_stack_file(team, where, monkeypatch):
    monkeypatch.chdir(team / where)
    result = runner.invoke(app, ["compare", "dev", "--model", team_project.MODEL, "--plan"])
    assert result.exit_code == 0, result.output
    objects = list(yaml.safe_load_all(result.stdout))
    settings = json.loads(next(o for o in objects if o["kind"] == "ConfigMap")["data"]["config.json"])
    assert sorted(settings["variants"]) == ["big", "cpu"]
    assert settings["model"] == team_project.MODEL


@pytest.mark.parametrize("command", [["train", "dev", "mnist", "--plan"], ["compare", "dev", "--model", "m", "--plan"]])
def test_train_and_compare_take_project_and_stacks_dir_like_render(team, tmp_path, monkeypatch, command):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    no_project = runner.invoke(app, command)
    assert no_project.exit_code == 2
    assert "no Pulumi.yaml in" in " ".join(no_project.output.split())
    (team / "deploy" / "Pulumi.dev.yaml").rename(team / "deploy" / "Pulumi.other.yaml")
    missing = runner.invoke(app, [*command, "--project", str(team)])
    assert missing.exit_code == 2
    text = " ".join(missing.output.split())
    assert f"no file {team / 'deploy' / 'Pulumi.dev.yaml'}; known stacks: other" in text
    moved = elsewhere / "stacks"
    moved.mkdir()
    (team / "deploy" / "Pulumi.other.yaml").rename(moved / "Pulumi.dev.yaml")
    found = runner.invoke(app, [*command[:-1], "--project", str(team), "--stacks-dir", "stacks", command[-1]])
    assert found.exit_code in (0, 2), found.output
    assert "no file" not in found.output


def test_render_with_project_writes_into_that_project_not_here(team, tmp_path, monkeypatch):
    here = tmp_path / "checkout"
    here.mkdir()
    (here / "Pulumi.yaml").write_text("name: gpuplane\nmain: infra/\nstackConfigDir: stacks\n")
    monkeypatch.chdir(here)
    result = runner.invoke(app, ["render", "--project", str(team), "dev", "--json"])
    assert result.exit_code == 0, result.output
    assert (team / "build" / "dev" / "plan.json").is_file()
    assert files_under(here) == ["Pulumi.yaml"]


def test_out_is_taken_as_given_relative_to_the_current_folder(team, monkeypatch):
    monkeypatch.chdir(team / "src" / "deep")
    result = runner.invoke(app, ["render", "dev", "--out", "here", "--json"])
    assert result.exit_code == 0, result.output
    assert (team / "src" / "deep" / "here" / "plan.json").is_file()
    assert not (team / "build").exists()


def test_help_says_out_is_taken_as_given():
    result = runner.invoke(app, ["render", "--help"], terminal_width=200)
    text = " ".join(result.output.replace("│", " ").split())
    assert "taken as given (relative to the current folder)" in text
    assert "Default: build/<stack> in the project, whatever the current folder" in text


# --- any program, whatever its name; its mistakes reported like config -----------------------------------


def test_a_program_named_gpuplane_runs_its_own_code(team, monkeypatch):
    pulumi_yaml = team / "Pulumi.yaml"
    pulumi_yaml.write_text(pulumi_yaml.read_text().replace(f"name: {team_project.NAME}", "name: gpuplane"))
    stack = team / "deploy" / "Pulumi.dev.yaml"
    stack.write_text(stack.read_text().replace(f"{team_project.NAME}:owner", "gpuplane:owner"))
    team_project.with_program(team, team_project.PROGRAM.replace('pulumi.Config().require("owner")', '"by-name"'))
    monkeypatch.chdir(team)
    result = runner.invoke(app, ["render", "dev", "--json"])
    # The team's program ran (not gpuplane's built-in one): its stray gpuplane:owner key is the program's
    # business, and its tags are on the cluster.
    assert result.exit_code == 0, result.output
    plan = json.loads((team / "build" / "dev" / "plan.json").read_text())
    cluster = next(r for r in plan["resources"] if r["type"] == "aws:eks/cluster:Cluster")
    assert cluster["inputs"]["tags"]["team"] == "by-name"


def test_a_missing_main_is_a_clear_error(team, monkeypatch):
    for path in sorted((team / "infra").iterdir()):
        path.unlink()
    (team / "infra").rmdir()
    monkeypatch.chdir(team)
    result = runner.invoke(app, ["render", "dev"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert f"Pulumi.yaml main: {team / 'infra'} does not exist" in text
    assert "name the project 'gpuplane'" in text
    assert "Traceback" not in result.output
    assert not (team / "build").exists()


BAD_GROUP = """\
import pulumi
from gpuplane import NodeGroupArgs

ok = NodeGroupArgs(name="system", instance_types=["m6i.large"])
gpu = NodeGroupArgs(name="gpu", kind="gpu", instance_types=["m6i.large"])
"""

BAD_SIZE = """\
from gpuplane import NodeGroupArgs, PlatformArgs

args = PlatformArgs(node_groups=[NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g5.xlarge"], min_size=-1)])
"""

BAD_SHARING = """\
from gpuplane import NodeGroupArgs

gpu = NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g6.xlarge"], sharing={"timeSlicing": 4})
"""


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        (
            BAD_GROUP,
            "__main__.py line 5: NodeGroupArgs.instanceTypes: ['m6i.large'] have no GPU but kind is 'gpu'; "
            "use GPU types (g5, g6, p5...)",
        ),
        (BAD_SIZE, "__main__.py line 3: NodeGroupArgs.min_size: -1: Input should be greater than or equal to 0"),
        # A scalar where a mapping belongs: what to write, never the args class pydantic names.
        (
            BAD_SHARING,
            "__main__.py line 3: NodeGroupArgs.sharing.timeSlicing: expected a mapping like {replicas: 4}; "
            "keys here: replicas (got 4)",
        ),
    ],
)
def test_invalid_component_arguments_are_reported_like_config(team, tmp_path, monkeypatch, program, expected):
    team_project.with_program(team, program)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["render", "--project", str(team), "dev"])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert expected in text
    assert "Cannot render stack 'dev'" in text and "Nothing was rendered." in text
    assert "Traceback" not in result.output and "pydantic" not in result.output
    assert "TimeSlicingArgs" not in result.output
    assert not (team / "build").exists()


def test_an_unknown_gpuplane_key_in_the_teams_stack_is_named_before_the_program_runs(team, monkeypatch):
    # The team's program reads `gpuplane:cluster` by name: a typo of it would be silently unread, and the render
    # would then fail on the cluster's missing publicAccessCidrs, naming neither the key nor the typo.
    stack = team / "deploy" / "Pulumi.dev.yaml"
    typo = stack.read_text().replace("  gpuplane:cluster:\n", "  gpuplane:clustr:\n")
    stack.write_text(typo + "  gpuplane:owner: x\n")
    team_project.with_program(team, "raise SystemExit('the program ran')\n")
    monkeypatch.chdir(team)
    result = runner.invoke(app, ["render", "dev"])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "deploy/Pulumi.dev.yaml: gpuplane:clustr: unknown key (did you mean 'cluster'?); allowed keys here: " in text
    assert "a setting of the program's own goes under its project's namespace, team-vision:clustr" in text
    # A key close to none is named too, without a guess.
    assert "gpuplane:owner: unknown key; allowed keys here: " in text and "team-vision:owner" in text
    assert "publicAccessCidrs" not in text.split("allowed keys here")[0]
    assert "the program ran" not in text and "Nothing was rendered." in text
    assert not (team / "build").exists()


def test_a_bug_in_the_program_itself_keeps_its_traceback(team, monkeypatch):
    team_project.with_program(team, "int('not a number')\n")
    monkeypatch.chdir(team)
    result = runner.invoke(app, ["render", "dev"])
    assert result.exit_code == 1
    assert isinstance(result.exception, ValueError)  # not dressed up as a config error


def test_stack_md_draws_the_workloads_of_a_consumer_platform(team, monkeypatch):
    monkeypatch.chdir(team)
    assert runner.invoke(app, ["render", "dev"]).exit_code == 0
    picture = (team / "build" / "dev" / "stack.md").read_text()

    def box(title: str) -> str:
        return picture.split(f'["{title}"]', 1)[1].split("    end", 1)[0]

    serving = box(f"TfServing: {team_project.CLUSTER}-serving-classify")
    assert 'Deployment classify-cpu<br/>1 replica(s), 1 CPU, 2Gi memory"' in serving
    assert 'Deployment classify-big<br/>1 replica(s), 1 CPU, 4Gi memory"' in serving
    assert 'Service classify"' in serving and "Job classify-import" in serving
    training = box(f"TfTraining: {team_project.CLUSTER}-training-mnist")
    assert "Deployment mnist-tensorboard" in training and "Service mnist-tensorboard" in training


def test_stacks_dir_without_a_project_renders_gpuplane_not_a_folder_found_here(tmp_path, monkeypatch):
    (tmp_path / "infra").mkdir()
    (tmp_path / "infra" / "__main__.py").write_text("raise SystemExit('a stray infra/ ran')\n")
    stacks = tmp_path / "mine"
    stacks.mkdir()
    (stacks / "Pulumi.dev.yaml").write_text(shipped.DEV.read_text())
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["render", "dev", "--stacks-dir", "mine", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["project"] == "gpuplane"
    assert (tmp_path / "build" / "dev" / "plan.json").is_file()


CODE_ONLY_PROGRAM = """\
import pulumi

from gpuplane import Cluster, ClusterArgs, Network, NetworkArgs, NodeGroupArgs

network = Network("net", NetworkArgs(cidr="10.42.0.0/16", az_count=2))
cluster = Cluster("eks", ClusterArgs(public_access_cidrs=[pulumi.Config().require("adminCidr")]), network=network)
cluster.add_node_group(NodeGroupArgs(name="system", instance_types=["t3.large"], min_size=1, max_size=2))
"""


@pytest.mark.parametrize(
    ("command", "nothing"),
    [
        (["verify", "dev", "--plan"], "Nothing was created."),
        (["preflight", "dev"], "Nothing was checked."),
        (["kubeconfig", "dev"], "Nothing was written."),
        (["janitor", "dev"], "Nothing was deleted."),
        (["train", "dev", "mnist", "--plan"], "Nothing was submitted."),
        (["queue", "dev"], "Nothing was read."),
        (["compare", "dev", "--model", "m", "--plan"], "Nothing was created."),
    ],
)
def test_a_program_that_sets_its_platform_in_code_is_named_not_validated_as_defaults(
    team, monkeypatch, command, nothing
):
    """A team program with its own keys only (`team-vision:adminCidr`): the commands that read the platform from
    `gpuplane:` keys cannot know it, and say so; they do not report gpuplane's defaults as the stack's errors."""
    team_project.with_program(team, CODE_ONLY_PROGRAM)
    (team / "deploy" / "Pulumi.dev.yaml").write_text(
        f"config:\n  aws:region: {team_project.REGION}\n  {team_project.NAME}:adminCidr: 198.51.100.0/24\n"
    )
    monkeypatch.chdir(team / "src" / "deep")
    result = runner.invoke(app, command, terminal_width=400)
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.split())
    assert f"Stack 'dev' holds no gpuplane settings ({team}):" in output
    assert f"project '{team_project.NAME}' deploys its own program ({team / 'infra' / '__main__.py'})" in output
    assert "sets no gpuplane:* key" in output and "`gpuplane render dev`" in output
    assert "publicAccessCidrs" not in output  # no default of gpuplane's reported as the stack's fault
    assert output.endswith(nothing)
    # render runs that program, as the message says.
    rendered = runner.invoke(app, ["render", "dev"])
    assert rendered.exit_code == 0, rendered.output


def test_gpuplanes_own_program_with_no_gpuplane_key_still_names_the_key_to_set(tmp_path, monkeypatch):
    """The message is for a project with its own program only: gpuplane's program reports the missing CIDRs."""
    root = team_project.own_program(tmp_path / "own")
    (root / "stacks" / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-west-2\n")
    monkeypatch.chdir(root)
    result = runner.invoke(app, ["verify", "dev", "--plan"], terminal_width=400)
    assert result.exit_code == 2, result.output
    assert "gpuplane:cluster.publicAccessCidrs: is empty" in result.output
    assert "holds no gpuplane settings" not in result.output
