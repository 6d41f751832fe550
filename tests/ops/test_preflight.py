"""Preflight against moto: a good account passes; a missing offering and a low quota fail by name."""

from __future__ import annotations

import json

import boto3
import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.infra import config
from gpuplane.infra.aws import preflight
from gpuplane.infra.cli import app
from gpuplane.manifests import lifecycle, versions
from tests import shipped
from tests.conftest import DEV_CLUSTER, stack_config
from tests.ops.conftest import GOOD_QUOTAS, REGION, seed_amis

pytestmark = pytest.mark.usefixtures("aws")


def _run(cfg: config.StackConfig) -> dict[str, preflight.Check]:
    checks = preflight.run(cfg, boto3.session.Session(region_name=cfg.region))
    return {c.name: c for c in checks}


def test_good_setup_passes(set_quotas):
    seed_amis()
    set_quotas(GOOD_QUOTAS)
    checks = _run(config.load("dev"))
    # moto has no EKS add-ons (tests/ops/test_preflight_addons.py stubs them): those checks say they could not ask.
    addon_checks = {name: c for name, c in checks.items() if name.startswith("EKS add-on: ")}
    assert len(addon_checks) >= 5 and {c.status for c in addon_checks.values()} == {"warn"}
    # moto has no Price List API either (tests/ops/test_preflight_prices.py stubs it): a warning, never a failure.
    assert checks["prices"].status == "warn" and "pricing:GetProducts" in checks["prices"].detail
    unexpected = {name: c.status for name, c in checks.items() if c.status != "pass" and name not in addon_checks}
    assert unexpected == {"prices": "warn"}
    assert checks["credentials"].detail.startswith("account 123456789012")
    assert checks["availability zones"].detail == "us-west-2a, us-west-2b"
    assert checks["quota: All G and VT Spot Instance Requests"].detail == (
        "L-3819A6DF is 64 vCPUs; gpu need 16 at max size"
    )
    assert checks["AMI: gpu"].detail.startswith(f"AL2023_x86_64_NVIDIA {versions.DEFAULT_KUBERNETES_VERSION}: ami-")
    assert set(checks) >= {"region", "instance types: system", "instance types: gpu", "Kubernetes version", "EFS"}


def test_az_without_the_instance_type_is_named_with_working_azs(set_quotas):
    seed_amis()
    set_quotas(GOOD_QUOTAS)
    cfg = stack_config({"cluster": DEV_CLUSTER, "network": {"availabilityZones": ["us-west-2a", "us-west-2d"]}})
    checks = _run(cfg)
    gpu = checks["instance types: gpu"]
    # moto's offering data has no g5 in us-west-2d, as in the real region.
    assert gpu.status == "fail"
    assert gpu.detail == "g5.xlarge is not offered in us-west-2d; g5.2xlarge is not offered in us-west-2d"
    assert "['us-west-2a', 'us-west-2b', 'us-west-2c']" in gpu.fix
    assert checks["instance types: system"].status == "pass"


def test_low_gpu_quota_fails_with_the_quota_code(set_quotas):
    seed_amis()
    set_quotas({**GOOD_QUOTAS, "L-3819A6DF": 4.0})
    check = _run(config.load("dev"))["quota: All G and VT Spot Instance Requests"]
    assert check.status == "fail"
    assert check.detail == "L-3819A6DF is 4 vCPUs but gpu need 16 at max size"
    assert check.fix.startswith(
        "Raise quota L-3819A6DF to at least 16 vCPUs: aws service-quotas request-service-quota-increase "
        "--service-code ec2 --quota-code L-3819A6DF --desired-value 16 --region us-west-2"
    )


def test_unreadable_quota_warns_instead_of_failing():
    seed_amis()  # no quotas seeded: moto answers NoSuchResource for ec2 codes
    checks = _run(config.load("dev"))
    quota = checks["quota: All G and VT Spot Instance Requests"]
    assert quota.status == "warn"
    assert "could not read L-3819A6DF" in quota.detail


def test_missing_ami_parameter_fails(set_quotas):
    set_quotas(GOOD_QUOTAS)  # no AMI parameters
    check = _run(config.load("dev"))["AMI: gpu"]
    assert check.status == "fail"
    version = versions.DEFAULT_KUBERNETES_VERSION
    assert (
        f"/aws/service/eks/optimized-ami/{version}/amazon-linux-2023/x86_64/nvidia/recommended/image_id" in check.detail
    )


def test_prod_ami_and_quota_buckets():
    prod = config.load("prod")
    needed = preflight.vcpus_needed(prod.platform.resolved_node_groups)
    assert needed == {("standard", "ON_DEMAND"): (16, ["system"]), ("g", "ON_DEMAND"): (16, ["gpu"])}
    assert preflight.ami_parameter("BOTTLEROCKET_ARM_64_NVIDIA", "1.34") == (
        "/aws/service/bottlerocket/aws-k8s-1.34-nvidia/arm64/latest/image_id"
    )
    assert [preflight.quota_class(t) for t in ("g5.xlarge", "p5.48xlarge", "m6i.large", "inf2.xlarge")] == [
        "g",
        "p",
        "standard",
        None,
    ]


# --- the CLI ---------------------------------------------------------------------------------------------


def test_cli_table_and_exit_codes(set_quotas):
    seed_amis()
    set_quotas(GOOD_QUOTAS)
    runner = CliRunner()
    ok = runner.invoke(app, ["preflight", "dev"])
    assert ok.exit_code == 0, ok.output
    assert "preflight: stack dev (gpuplane-dev, us-west-2)" in ok.stdout
    assert "FAIL" not in ok.stdout
    set_quotas({**GOOD_QUOTAS, "L-3819A6DF": 0.0})
    bad = runner.invoke(app, ["preflight", "dev"])
    assert bad.exit_code == 1
    assert "FAIL" in bad.stdout and "L-3819A6DF is 0 vCPUs" in bad.stdout


def test_cli_json(set_quotas):
    seed_amis()
    set_quotas({**GOOD_QUOTAS, "L-1216C47A": 2.0})
    result = CliRunner().invoke(app, ["preflight", "dev", "--json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False and document["region"] == REGION
    failed = [c for c in document["checks"] if c["status"] == "fail"]
    assert [c["name"] for c in failed] == ["quota: Running On-Demand Standard instances"]
    assert set(failed[0]) == {"name", "status", "detail", "fix"}


def test_cli_without_credentials_prints_no_traceback(monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    for args in (["preflight", "dev"], ["preflight", "dev", "--json"], ["token", "--cluster", "x"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1, (args, result.output)
        assert "no AWS credentials" in result.output
        assert "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_cli_invalid_config_exits_2(tmp_path):
    (tmp_path / "Pulumi.bad.yaml").write_text("config:\n  aws:region: us-west-2\n  gpuplane:profile: nope\n")
    result = CliRunner().invoke(app, ["preflight", "bad", "--stacks-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "gpuplane:profile" in result.output


@pytest.mark.parametrize(
    ("caller", "expected"),
    [
        (
            "arn:aws:sts::123456789012:assumed-role/platform-admin/alice",
            "arn:aws:iam::123456789012:role/platform-admin",
        ),
        ("arn:aws:iam::123456789012:user/bob", "arn:aws:iam::123456789012:user/bob"),
    ],
)
def test_principal_of_the_caller(caller, expected):
    assert preflight.principal_of(caller) == expected


def test_caller_in_admin_principals_fails_while_eks_makes_its_entry():
    prod = config.load("prod")  # adminPrincipals: arn:aws:iam::123456789012:role/platform-admin
    caller = "arn:aws:sts::123456789012:assumed-role/platform-admin/ci-run"
    check = preflight.access_entries(prod, caller)
    assert check.status == "fail"
    assert "arn:aws:iam::123456789012:role/platform-admin runs `pulumi up`" in check.detail
    assert "bootstrapCreatorAdmin: false" in check.fix
    other = preflight.access_entries(prod, "arn:aws:sts::123456789012:assumed-role/deployer/ci-run")
    assert other.status == "pass"
    off = stack_config(
        {
            "profile": "prod",
            "cluster": {
                "bootstrapCreatorAdmin": False,
                "adminPrincipals": ["arn:aws:iam::123456789012:role/platform-admin"],
            },
        }
    )
    assert preflight.access_entries(off, caller).status == "pass"


def test_role_paths_do_not_hide_the_collision():
    cfg = stack_config(
        {"cluster": {**DEV_CLUSTER, "adminPrincipals": ["arn:aws:iam::123456789012:role/teams/ml/admin"]}}
    )
    caller = "arn:aws:sts::123456789012:assumed-role/admin/session"
    assert preflight.access_entries(cfg, caller).status == "fail"


# --- what a real `pulumi up` needs: Pulumi CLI version, private endpoint reachability, version drift----------------


def _fake_pulumi(tmp_path, monkeypatch, version: str) -> None:
    script = tmp_path / "pulumi"
    script.write_text(f'#!/bin/sh\n[ "$1" = version ] && echo "{version}" && exit 0\nexit 1\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")


@pytest.mark.parametrize(
    ("version", "status"), [("v3.181.0", "fail"), ("v3.182.0", "pass"), ("v3.210.1", "pass"), ("garbage", "fail")]
)
def test_pulumi_cli_version_is_checked_when_on_path(tmp_path, monkeypatch, version, status):
    _fake_pulumi(tmp_path, monkeypatch, version)
    check = preflight.pulumi_cli()
    assert check.status == status, check.detail
    if status == "fail" and version != "garbage":
        assert check.detail == (
            f"Pulumi CLI {version} is older than 3.182.0 (resource hooks, `pulumi destroy --run-program`)"
        )
        assert "3.182.0 or newer" in check.fix


def test_pulumi_cli_absent_is_not_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    check = preflight.pulumi_cli()
    assert (check.status, check.detail) == (
        "pass",
        "not on PATH here; `pulumi up` needs >= 3.182.0 (Pulumi.yaml enforces it)",
    )


def test_old_pulumi_fails_the_whole_preflight_run(tmp_path, monkeypatch, set_quotas):
    seed_amis()
    set_quotas(GOOD_QUOTAS)
    _fake_pulumi(tmp_path, monkeypatch, "v3.150.0")
    assert _run(config.load("dev"))["Pulumi CLI"].status == "fail"


@pytest.mark.parametrize(
    ("cluster", "addresses", "status"),
    [
        ({}, ["10.0.3.7"], "pass"),  # a runner inside the prod VPC
        ({}, ["192.168.1.20"], "warn"),  # a laptop outside it
        ({"apiAccessCidrs": ["192.168.1.0/24"]}, ["192.168.1.20"], "pass"),  # over a VPN range
        ({"apiAccessCidrs": []}, ["10.0.3.7"], "warn"),  # nothing admitted at all
    ],
)
def test_private_endpoint_reachability(cluster, addresses, status):
    cfg = stack_config({"profile": "prod", "cluster": cluster})
    check = preflight.api_reachability(cfg, addresses)
    assert check.status == status, check.detail
    if status == "warn":
        assert "none of this machine's addresses" in check.detail
        assert "cluster.apiAccessCidrs" in check.fix


def test_public_endpoint_reachability_passes():
    cfg = stack_config({"cluster": {"publicAccessCidrs": ["52.94.76.10/32"]}})
    assert preflight.api_reachability(cfg, []).status == "pass"


def test_local_addresses_are_ipv4_and_not_loopback():
    for address in preflight.local_addresses():
        assert not address.startswith("127.")
        assert address.count(".") == 3


def test_version_drift_after_eks_upgraded_the_cluster():
    cfg = stack_config({"cluster": {**DEV_CLUSTER, "kubernetesVersion": "1.35"}})
    session = boto3.session.Session(region_name=cfg.region)
    assert preflight.version_drift(cfg, session).status == "pass"
    iam = session.client("iam")
    role = iam.create_role(RoleName="eks", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    session.client("eks").create_cluster(
        name=cfg.cluster_name, version="1.36", roleArn=role, resourcesVpcConfig={"subnetIds": []}
    )
    check = preflight.version_drift(cfg, session)
    assert check.status == "warn"
    assert "runs 1.36 but cluster.kubernetesVersion pins 1.35" in check.detail
    assert check.fix == 'Set cluster.kubernetesVersion: "1.36" in the stack file (EKS never downgrades)'


def test_a_cluster_older_than_the_stack_is_an_upgrade_not_drift():
    cfg = config.load("dev")
    session = boto3.session.Session(region_name=cfg.region)
    role = session.client("iam").create_role(RoleName="eks", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    session.client("eks").create_cluster(
        name=cfg.cluster_name, version="1.35", roleArn=role, resourcesVpcConfig={"subnetIds": []}
    )
    check = preflight.version_drift(cfg, session)
    assert (check.status, check.detail) == (
        "pass",
        f"cluster {cfg.cluster_name} runs 1.35: the stack upgrades it to {versions.DEFAULT_KUBERNETES_VERSION}",
    )


def test_pulumi_yaml_requires_the_same_minimum_as_preflight():
    project = yaml.safe_load(shipped.PULUMI_YAML.read_text())
    assert project["requiredPulumiVersion"] == f">={lifecycle.PULUMI_CLI_MIN_VERSION}"


@pytest.mark.parametrize(
    ("cidrs", "status"),
    [
        (["203.0.113.0/24"], "fail"),
        (["192.168.0.0/16"], "fail"),
        (["8.8.8.8/32", "127.0.0.1/32"], "fail"),
        (["8.8.8.8/32"], "pass"),
    ],
)
def test_preflight_refuses_a_public_endpoint_nobody_can_reach(cidrs, status):
    cfg = stack_config({"cluster": {"publicAccessCidrs": cidrs}})
    check = preflight.api_reachability(cfg, ["10.0.0.5"])
    assert check.status == status, check
    if status == "fail":
        assert "nobody can reach the API" in check.detail and "curl -s ifconfig.me" in check.fix
