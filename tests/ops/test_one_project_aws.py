"""preflight, kubeconfig and janitor find the same project as render, from its root or a subfolder (moto).

And what `gpuplane kubeconfig` writes is the user's: it lives in `.gpuplane/<stack>/`, a render before or
after it neither deletes it nor is blocked by it.
"""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.infra.cli import app
from tests import team_project

pytestmark = pytest.mark.usefixtures("one_render_per_config")
runner = CliRunner()
WHERE = ["", "src/deep"]


@pytest.fixture
def team(tmp_path: Path) -> Path:
    return team_project.make(tmp_path / "team")


@pytest.fixture
def cluster(aws: None) -> str:
    """The team's cluster, live in moto (in the team's region, under the team's cluster name)."""
    iam = boto3.client("iam", region_name=team_project.REGION)
    role = iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    eks = boto3.client("eks", region_name=team_project.REGION)
    eks.create_cluster(name=team_project.CLUSTER, roleArn=role, resourcesVpcConfig={"subnetIds": []})
    return team_project.CLUSTER


@pytest.mark.parametrize("where", WHERE)
def test_kubeconfig_goes_to_the_projects_state_folder(team, cluster, where, monkeypatch):
    monkeypatch.chdir(team / where)
    result = runner.invoke(app, ["kubeconfig", "org/dev"])  # a qualified name: the same short name, dev
    assert result.exit_code == 0, result.output
    path = team / ".gpuplane" / "dev" / "kubeconfig"
    document = yaml.safe_load(path.read_text())
    assert document["current-context"] == cluster
    assert document["users"][0]["user"]["exec"]["args"][:5] == [
        "token",
        "--cluster",
        cluster,
        "--region",
        team_project.REGION,
    ]
    assert sorted(p.name for p in (team / "src").rglob("*")) == ["deep"]


@pytest.mark.parametrize("where", WHERE)
def test_preflight_reads_the_projects_stack(team, aws, where, monkeypatch):
    monkeypatch.chdir(team / where)
    result = runner.invoke(app, ["preflight", "dev", "--json"])
    assert result.exit_code in (0, 1), result.output  # moto lacks quotas and AMIs: some checks fail
    document = json.loads(result.stdout)
    assert (document["clusterName"], document["region"]) == (team_project.CLUSTER, team_project.REGION)


@pytest.mark.parametrize("where", WHERE)
def test_janitor_reads_the_projects_stack(team, aws, where, monkeypatch):
    monkeypatch.chdir(team / where)
    result = runner.invoke(app, ["janitor", "dev"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert f"janitor: stack dev ({team_project.CLUSTER}, no VPC, {team_project.REGION})" in result.output


@pytest.mark.parametrize(
    ("command", "nothing"),
    [
        (["preflight", "nope"], "Nothing was checked."),
        (["kubeconfig", "nope"], "Nothing was written."),
        (["janitor", "nope"], "Nothing was deleted."),
        (["train", "nope", "mnist", "--plan"], "Nothing was submitted."),
        (["compare", "nope", "--model", "m", "--plan"], "Nothing was created."),
        (["render", "nope"], "Nothing was rendered."),
    ],
)
def test_an_unknown_stack_names_the_projects_stacks_and_what_was_not_done(team, aws, monkeypatch, command, nothing):
    monkeypatch.chdir(team / "src" / "deep")
    result = runner.invoke(app, command, terminal_width=300)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert f"no file {team / 'deploy' / 'Pulumi.nope.yaml'}; known stacks: dev" in text
    assert text.endswith(nothing)
    assert "rendered or created" not in text


def test_a_kubeconfig_before_the_first_render_survives_every_render(team, cluster, monkeypatch):
    monkeypatch.chdir(team)
    assert runner.invoke(app, ["kubeconfig", "dev"]).exit_code == 0
    kubeconfig = team / ".gpuplane" / "dev" / "kubeconfig"
    written = kubeconfig.read_text()
    for _ in range(2):
        result = runner.invoke(app, ["render", "dev"])
        assert result.exit_code == 0, result.output
    assert kubeconfig.read_text() == written
    assert (team / "build" / "dev" / "plan.json").is_file()
