"""The stack's AWS identity (`aws:profile`, `aws:assumeRoles`) reaches every command that calls AWS.

Two identities in two moto accounts: the default credentials live in moto's account 123456789012, the
profile `team` assumes a role in account 222222222222. The cluster exists only in the second account, so a
command that ignored the profile would not find it.
"""

from __future__ import annotations

from pathlib import Path

import boto3
import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.components.plan.kubeconfig import build_kubeconfig
from gpuplane.infra.aws.session import caller_identity, stack_session
from gpuplane.infra.cli import app
from tests import shipped

OTHER_ACCOUNT = "222222222222"
ROLE = f"arn:aws:iam::{OTHER_ACCOUNT}:role/deployer"
DEV = shipped.DEV


@pytest.fixture
def profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "aws-config"
    config.write_text(
        "[profile base]\naws_access_key_id = testing\naws_secret_access_key = testing\n\n"
        f"[profile team]\nrole_arn = {ROLE}\nsource_profile = base\nregion = us-west-2\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))


def _stack(tmp_path: Path, extra: dict[str, object]) -> Path:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    document = yaml.safe_load(DEV.read_text())
    document["config"].update(extra)
    (stacks / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))
    return stacks


def _cluster_in(session: boto3.session.Session) -> None:
    eks = session.client("eks")
    role = session.client("iam").create_role(RoleName="eks", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    eks.create_cluster(name="gpuplane-dev", roleArn=role, resourcesVpcConfig={"subnetIds": []})


def test_the_two_identities_are_different_accounts(aws, profiles):
    assert caller_identity(stack_session("us-west-2")).account == "123456789012"
    assert caller_identity(stack_session("us-west-2", "team")).account == OTHER_ACCOUNT
    assert caller_identity(stack_session("us-west-2", None, (ROLE,))).account == OTHER_ACCOUNT


@pytest.mark.parametrize(
    ("extra", "expected_args"),
    [
        ({"aws:profile": "team"}, ["--profile", "team"]),
        ({"aws:assumeRoles": [{"roleArn": ROLE}]}, ["--role-arn", ROLE]),
    ],
)
def test_kubeconfig_acts_and_writes_as_the_stack_identity(aws, profiles, tmp_path, extra, expected_args):
    _cluster_in(stack_session("us-west-2", "team"))
    stacks = _stack(tmp_path, extra)
    out = tmp_path / "kc"
    result = CliRunner().invoke(app, ["kubeconfig", "dev", "--out", str(out), "--stacks-dir", str(stacks)])
    assert result.exit_code == 0, result.output
    exec_ = yaml.safe_load(out.read_text())["users"][0]["user"]["exec"]
    assert exec_["command"] == "gpuplane"
    assert exec_["args"][-2:] == expected_args


def test_without_the_profile_the_cluster_is_not_found(aws, profiles, tmp_path):
    _cluster_in(stack_session("us-west-2", "team"))
    stacks = _stack(tmp_path, {})
    result = CliRunner().invoke(app, ["kubeconfig", "dev", "--out", str(tmp_path / "kc"), "--stacks-dir", str(stacks)])
    assert result.exit_code == 1
    assert "does not exist" in result.output


def test_the_provider_kubeconfig_carries_the_identity():
    one = yaml.safe_load(build_kubeconfig("c", "https://x", "ca", "us-west-2", profile="team", role_arns=(ROLE,)))
    exec_ = one["users"][0]["user"]["exec"]
    assert exec_["command"] == "aws"
    assert exec_["args"][-4:] == ["--profile", "team", "--role-arn", ROLE]
    chain = yaml.safe_load(build_kubeconfig("c", "https://x", "ca", "us-west-2", role_arns=(ROLE, ROLE)))
    assert chain["users"][0]["user"]["exec"]["command"] == "gpuplane"
    assert chain["users"][0]["user"]["exec"]["args"].count("--role-arn") == 2
