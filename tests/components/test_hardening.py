"""AWS-side hardening that the Terraform-plan scan asks for: key policies, the default security group."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from gpuplane.components import kms
from gpuplane.components.config import ClusterArgs, NetworkArgs
from gpuplane.infra import config as stack_config
from gpuplane.infra import render


@pytest.fixture(scope="module", params=["dev", "prod"])
def plan(request) -> dict[str, Any]:
    config = stack_config.load(request.param)
    return render.plan_document(config, request.getfixturevalue(f"{request.param}_run"))


def resources(plan: dict[str, Any], token: str) -> list[dict[str, Any]]:
    return [r for r in plan["resources"] if r["type"] == token]


def named(plan: dict[str, Any], token: str, suffix: str) -> dict[str, Any]:
    (found,) = [r for r in resources(plan, token) if r["name"].endswith(suffix)]
    return found


def test_every_kms_key_has_a_policy_and_rotation(plan):
    keys = resources(plan, "aws:kms/key:Key")
    assert keys
    for key in keys:
        assert key["inputs"]["enableKeyRotation"] is True, key["name"]
        policy = json.loads(key["inputs"]["policy"])
        assert policy["Statement"][0]["Sid"] == "AccountRoot", key["name"]
        assert ":role/gpuplane" not in key["inputs"]["policy"], "never this stack's role ARNs"


def test_secrets_key_has_an_explicit_policy_without_stack_roles(plan):
    key = named(plan, "aws:kms/key:Key", "-secrets-key")
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


def test_logs_key_policy_names_one_log_group():
    policy = json.loads(
        kms.logs_key_policy(
            partition="aws-cn", account_id="2" * 12, region="cn-north-1", administrators=[], log_group_name="/a/b"
        )
    )
    logs = {s["Sid"]: s for s in policy["Statement"]}["CloudWatchLogs"]
    assert logs["Principal"] == {"Service": "logs.cn-north-1.amazonaws.com"}
    assert logs["Condition"] == {
        "ArnEquals": {"kms:EncryptionContext:aws:logs:arn": "arn:aws-cn:logs:cn-north-1:222222222222:log-group:/a/b"}
    }
    with pytest.raises(ValueError, match="log group name '/a/\\*' holds"):
        kms.logs_key_policy(
            partition="aws", account_id="2" * 12, region="us-east-1", administrators=[], log_group_name="/a/*"
        )


def test_topic_key_policy_admits_its_publisher_for_its_topic_and_source_only():
    policy = json.loads(
        kms.topic_key_policy(
            partition="aws",
            account_id="2" * 12,
            region="eu-west-1",
            administrators=[],
            publisher="aps.amazonaws.com",
            topic_name="gpuplane-prod-alerts",
            source_arn="arn:aws:aps:eu-west-1:222222222222:workspace/ws-1",
        )
    )
    publish = {s["Sid"]: s for s in policy["Statement"]}["EncryptForThePublisher"]
    assert publish["Condition"] == {
        "StringEquals": {
            "kms:EncryptionContext:aws:sns:topicArn": "arn:aws:sns:eu-west-1:222222222222:gpuplane-prod-alerts"
        },
        "ArnLike": {"aws:SourceArn": "arn:aws:aps:eu-west-1:222222222222:workspace/ws-1"},
    }


def test_key_policy_needs_a_service():
    with pytest.raises(ValueError, match="via_services"):
        kms.key_policy(partition="aws", account_id="1" * 12, region="us-east-1", administrators=[], via_services=[])


def test_kms_key_administrators_are_validated():
    with pytest.raises(ValidationError, match="not an IAM role or user ARN"):
        ClusterArgs.model_validate({"kmsKeyAdministrators": ["alice"]})


def test_control_plane_log_group_is_encrypted_with_a_logs_key(plan):
    group = named(plan, "aws:cloudwatch/logGroup:LogGroup", "-cluster-logs")
    key = named(plan, "aws:kms/key:Key", "-cluster-logs-key")
    assert key["urn"] in group["dependencies"]
    assert group["inputs"]["kmsKeyId"].startswith("arn:aws:kms:us-west-2:123456789012:key/")
    by_sid = {s["Sid"]: s for s in json.loads(key["inputs"]["policy"])["Statement"]}
    logs = by_sid["CloudWatchLogs"]
    assert logs["Principal"] == {"Service": "logs.us-west-2.amazonaws.com"}
    # Its own log group only, by the ARN CloudWatch Logs puts in the encryption context (no `log-group:*`).
    assert logs["Condition"] == {
        "ArnEquals": {
            "kms:EncryptionContext:aws:logs:arn": "arn:aws:logs:us-west-2:123456789012:log-group:"
            + group["inputs"]["name"]
        }
    }
    assert group["inputs"]["name"] == f"/aws/eks/gpuplane-{plan['stack']}/cluster"


def test_flow_logs_only_where_configured(plan):
    flow = resources(plan, "aws:ec2/flowLog:FlowLog")
    if plan["stack"] == "dev":
        assert flow == []
        assert plan["config"]["gpuplane:network"]["flowLogs"] is False
        return
    (log,) = flow
    assert (log["inputs"]["trafficType"], log["inputs"]["logDestinationType"]) == ("ALL", "cloud-watch-logs")
    group = named(plan, "aws:cloudwatch/logGroup:LogGroup", "-flow-logs-group")
    assert group["inputs"]["retentionInDays"] == plan["config"]["gpuplane:network"]["flowLogRetentionDays"] == 90
    assert group["inputs"]["kmsKeyId"].startswith("arn:aws:kms:")
    role = named(plan, "aws:iam/role:Role", "-flow-logs-role")
    trust = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "vpc-flow-logs.amazonaws.com"}
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": "123456789012"}
    policy = json.loads(named(plan, "aws:iam/rolePolicy:RolePolicy", "-flow-logs-policy")["inputs"]["policy"])
    assert all(
        r.startswith("arn:aws:logs:us-west-2:123456789012:log-group:") for r in policy["Statement"][0]["Resource"]
    )
    (vpc,) = resources(plan, "aws:ec2/vpc:Vpc")
    assert vpc["urn"] in log["dependencies"]
    # The flow logs' key serves their log group and no other.
    key = named(plan, "aws:kms/key:Key", "-flow-logs-key")
    logs = {s["Sid"]: s for s in json.loads(key["inputs"]["policy"])["Statement"]}["CloudWatchLogs"]
    assert logs["Condition"] == {
        "ArnEquals": {
            "kms:EncryptionContext:aws:logs:arn": "arn:aws:logs:us-west-2:123456789012:log-group:"
            + group["inputs"]["name"]
        }
    }


def test_efs_key_is_kept_with_the_data_and_pulls_nothing_in(plan):
    fs = named(plan, "aws:efs/fileSystem:FileSystem", "-efs")
    keys = [r for r in resources(plan, "aws:kms/key:Key") if r["name"].endswith("-efs-key")]
    if plan["stack"] == "dev":
        assert keys == [] and "kmsKeyId" not in fs["inputs"]
        return
    (key,) = keys
    assert (key["protect"], key["retainOnDelete"]) == (fs["protect"], fs["retainOnDelete"]) == (True, True)
    assert key["dependencies"] == [], "an --exclude-protected destroy keeps the key's dependencies"
    assert fs["inputs"]["kmsKeyId"].startswith("arn:aws:kms:")
    use = {s["Sid"]: s for s in json.loads(key["inputs"]["policy"])["Statement"]}["UseThroughServices"]
    assert use["Condition"]["StringEquals"]["kms:ViaService"] == ["elasticfilesystem.us-west-2.amazonaws.com"]


def test_autoscaler_scaling_is_scoped_to_this_account_and_cluster(plan):
    policy = json.loads(named(plan, "aws:iam/rolePolicy:RolePolicy", "-autoscaler-policy")["inputs"]["policy"])
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    cluster = f"gpuplane-{plan['stack']}"
    assert by_sid["ScaleOwnGroupsOnly"]["Resource"] == (
        "arn:aws:autoscaling:us-west-2:123456789012:autoScalingGroup:*:autoScalingGroupName/*"
    )
    assert by_sid["ScaleOwnGroupsOnly"]["Condition"]["StringEquals"] == {
        f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster}": "owned"
    }
    assert by_sid["DescribeOwnNodegroups"]["Resource"] == f"arn:aws:eks:us-west-2:123456789012:nodegroup/{cluster}/*/*"
    assert all(a.split(":")[1].startswith(("Describe", "Get")) for a in by_sid["Discover"]["Action"])


@pytest.mark.parametrize("key", ["flowLogRetentionDays"])
def test_flow_log_retention_is_validated(key):
    with pytest.raises(ValidationError, match="not a CloudWatch retention period"):
        NetworkArgs.model_validate({key: 42})
