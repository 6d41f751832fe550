"""AWS-side hardening that the Terraform-plan scan asks for: key policies, the default security group."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from gpuplane.components import kms
from gpuplane.components.config import ClusterArgs
from gpuplane.infra import config as stack_config
from gpuplane.infra import render


@pytest.fixture(scope="module", params=["dev", "prod"])
def plan(request) -> dict[str, Any]:
    config = stack_config.load(request.param)
    return render.plan_document(config, render.run_stack(config))


def resources(plan: dict[str, Any], token: str) -> list[dict[str, Any]]:
    return [r for r in plan["resources"] if r["type"] == token]


def test_secrets_key_has_an_explicit_policy_without_stack_roles(plan):
    (key,) = resources(plan, "aws:kms/key:Key")
    policy = json.loads(key["inputs"]["policy"])
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    assert by_sid["AccountRoot"]["Principal"] == {"AWS": "arn:aws:iam::123456789012:root"}
    use = by_sid["UseThroughServices"]
    assert use["Condition"]["StringEquals"] == {
        "kms:CallerAccount": "123456789012",
        "kms:ViaService": ["eks.us-west-2.amazonaws.com"],
    }
    assert "kms:Decrypt" in use["Action"] and "kms:ScheduleKeyDeletion" not in use["Action"]
    assert ":role/" not in key["inputs"]["policy"], "use is granted by service, never by this stack's roles"


def test_default_security_group_is_taken_over_with_no_rules(plan):
    (sg,) = resources(plan, "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup")
    assert sg["inputs"].get("ingress", []) == [] and sg["inputs"].get("egress", []) == []
    (vpc,) = resources(plan, "aws:ec2/vpc:Vpc")
    assert vpc["urn"] in sg["dependencies"]


@pytest.mark.parametrize("admins", [[], ["arn:aws:iam::123456789012:role/kms-admin"]])
def test_key_policy_administrators_manage_but_do_not_use(admins):
    policy = json.loads(
        kms.key_policy(
            partition="aws-cn",
            account_id="210987654321",
            region="cn-north-1",
            administrators=admins,
            via_services=["elasticfilesystem"],
        )
    )
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    assert by_sid["AccountRoot"]["Principal"]["AWS"] == "arn:aws-cn:iam::210987654321:root"
    assert ("KeyAdministrators" in by_sid) == bool(admins)
    if admins:
        assert by_sid["KeyAdministrators"]["Principal"]["AWS"] == admins
        assert not {"kms:Decrypt", "kms:Encrypt"} & set(by_sid["KeyAdministrators"]["Action"])
    assert by_sid["UseThroughServices"]["Condition"]["StringEquals"]["kms:ViaService"] == [
        "elasticfilesystem.cn-north-1.amazonaws.com"
    ]


def test_key_policy_needs_a_service():
    with pytest.raises(ValueError, match="via_services"):
        kms.key_policy(partition="aws", account_id="1" * 12, region="us-east-1", administrators=[], via_services=[])


def test_kms_key_administrators_are_validated():
    with pytest.raises(ValidationError, match="not an IAM role or user ARN"):
        ClusterArgs.model_validate({"kmsKeyAdministrators": ["alice"]})
