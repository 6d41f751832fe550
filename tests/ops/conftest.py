"""Fixtures for the boto3 operations: fake credentials, moto, and what moto lacks, seeded.

moto implements neither the public SSM parameters under `/aws/service/eks/...` and
`/aws/service/bottlerocket/...` (and refuses to store names under `/aws`), nor EC2 service quotas
(its service-quotas backend knows only `vpc`). `seed_amis` writes the AMI parameters straight into moto's
SSM backend and `set_quotas` answers `GetServiceQuota` for the EC2 codes; both act on the in-process
backends, which the decorator and `ThreadedMotoServer` share.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from moto import mock_aws
from moto.servicequotas.models import ServiceQuotasBackend
from moto.ssm.models import Parameter, ssm_backends

from gpuplane.infra import config, mockrun, render
from gpuplane.infra.aws.preflight import ami_parameter
from gpuplane.manifests import versions, wellknown
from tests import shipped

REGION = "us-west-2"
DEFAULT_ACCOUNT_ID = "123456789012"  # moto's account
# Enough for the dev stack: system m6i.large x3 = 6 vCPUs, gpu g5.2xlarge x2 spot = 16 vCPUs.
GOOD_QUOTAS = {"L-1216C47A": 32.0, "L-34B43A08": 32.0, "L-DB2E81BA": 64.0, "L-3819A6DF": 64.0}


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials in one region; nothing can reach a real account or the instance metadata."""
    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "KUBERNETES_EXEC_INFO"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    # moto's EC2 otherwise makes thousands of public AMIs (each with a snapshot and random ids) in every region
    # it opens; nothing here describes images (the AMI checks read SSM parameters, seeded by `seed_amis`).
    monkeypatch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")


# The address a user puts in place of the dev stack's documentation range before deploying (README, deploy
# steps): preflight refuses ranges nobody can reach the endpoint from (components/facts/addresses.py).
DEPLOYED_CIDR = "52.94.76.10/32"


@pytest.fixture(autouse=True)
def deployable_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped project as a user deploys it: dev's documentation CIDR replaced by their address.

    `config.load("dev")` and `gpuplane preflight dev` (run from here) read it; the shipped copy is untouched.
    """
    root = shipped.make_project(tmp_path / "deployable")
    dev = root / "stacks" / "Pulumi.dev.yaml"
    dev.write_text(dev.read_text().replace("- 203.0.113.0/24", f"- {DEPLOYED_CIDR}"))
    monkeypatch.setattr(config, "STACKS_DIR", root / "stacks")
    monkeypatch.chdir(root)
    return root


@pytest.fixture(scope="module")
def one_render_per_config() -> Iterator[None]:
    """Each stack config rendered once in the module that asks, however many preflight runs or renders read it.

    Why: preflight's `default versions` check, like `gpuplane render`, runs the whole program under mocks
    (seconds each), and a module may run preflight on the same config again and again, each time against
    another account. A render depends on the config alone (its raw keys, stack, project and region), never on
    the account moto plays, so sharing it changes no check.
    """
    renders: dict[tuple[str, str, str, str], mockrun.Recording] = {}
    original = render.run_stack

    def once(cfg: config.StackConfig) -> mockrun.Recording:
        key = (cfg.project, cfg.stack, cfg.region, json.dumps(cfg.raw, sort_keys=True, default=str))
        if key not in renders:
            renders[key] = original(cfg)
        return renders[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render, "run_stack", once)
        yield


@pytest.fixture
def aws() -> Iterator[None]:
    """moto for the test's duration."""
    with mock_aws():
        yield


def seed_amis(region: str = REGION, kubernetes_version: str = versions.DEFAULT_KUBERNETES_VERSION) -> None:
    """Put every supported AMI type's public parameter into moto's SSM (moto ships none for EKS)."""
    backend = ssm_backends[DEFAULT_ACCOUNT_ID][region]
    for index, ami_type in enumerate(sorted(wellknown.AMI_TYPES)):
        name = ami_parameter(ami_type, kubernetes_version)
        backend._parameters[name].append(
            Parameter(  # type: ignore[abstract]
                account_id=DEFAULT_ACCOUNT_ID,
                name=name,
                value=f"ami-0{index:016x}",
                parameter_type="String",
                description=None,
                allowed_pattern=None,
                keyid=None,
                last_modified_date=datetime.now(UTC),
                version=1,
                data_type="aws:ec2:image",
            )
        )


@pytest.fixture
def set_quotas(monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, float]], None]:
    """Answer GetServiceQuota for EC2 codes with the given values (moto has no EC2 quotas)."""

    def _set(values: dict[str, float]) -> None:
        original = ServiceQuotasBackend.get_service_quota

        def get_service_quota(self: Any, service_code: str, quota_code: str) -> dict[str, Any]:
            if service_code == "ec2" and quota_code in values:
                return {
                    "ServiceCode": "ec2",
                    "QuotaCode": quota_code,
                    "QuotaName": quota_code,
                    "Value": values[quota_code],
                }
            return original(self, service_code, quota_code)

        monkeypatch.setattr(ServiceQuotasBackend, "get_service_quota", get_service_quota)

    return _set
