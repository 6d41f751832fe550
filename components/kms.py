"""Key policies for the stack's KMS keys, written out instead of left to the default.

Why: a key created without a policy gets AWS's default (the account root may do everything), which
scanners flag (checkov CKV2_AWS_64) and which says nothing about who administers the key. The policy
here follows the shape of AWS-managed keys: the account root keeps full access (so IAM policies keep
working and the key can never become unmanageable), named key administrators may manage but not use it,
and use is granted to the AWS services that encrypt with it, by service (`kms:ViaService`) and account
(`kms:CallerAccount`), never by this stack's role ARNs. That last choice keeps a key that outlives the
stack (the EFS key, protected with the file system) free of references to roles, clusters or networks
that a `pulumi destroy --exclude-protected` would then have to keep too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

# Key management without use (terraform-aws-kms's key_administrators statement).
ADMIN_ACTIONS = (
    "kms:CancelKeyDeletion",
    "kms:Create*",
    "kms:Delete*",
    "kms:Describe*",
    "kms:Disable*",
    "kms:Enable*",
    "kms:Get*",
    "kms:List*",
    "kms:Put*",
    "kms:Revoke*",
    "kms:RotateKeyOnDemand",
    "kms:ScheduleKeyDeletion",
    "kms:TagResource",
    "kms:UntagResource",
    "kms:Update*",
)
USE_ACTIONS = (
    "kms:CreateGrant",
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:Encrypt",
    "kms:GenerateDataKey*",
    "kms:ReEncrypt*",
)


def _owner_statements(partition: str, account_id: str, administrators: Sequence[str]) -> list[dict[str, object]]:
    """Account root (full access, so IAM policies keep working) and the key administrators (manage only)."""
    statements: list[dict[str, object]] = [
        {
            "Sid": "AccountRoot",
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
            "Action": "kms:*",
            "Resource": "*",
        }
    ]
    if administrators:
        statements.append(
            {
                "Sid": "KeyAdministrators",
                "Effect": "Allow",
                "Principal": {"AWS": sorted(administrators)},
                "Action": list(ADMIN_ACTIONS),
                "Resource": "*",
            }
        )
    return statements


def key_policy(
    *,
    partition: str,
    account_id: str,
    region: str,
    administrators: Sequence[str],
    via_services: Sequence[str],
) -> str:
    """The key policy JSON: account root, `administrators` (IAM ARNs), and use through `via_services`.

    `via_services` are service names such as `eks` or `elasticfilesystem`; each becomes
    `<service>.<region>.amazonaws.com` in a `kms:ViaService` condition.
    """
    if not via_services:
        raise ValueError("a key policy needs at least one service that uses the key (via_services)")
    statements = _owner_statements(partition, account_id, administrators)
    statements.append(
        {
            "Sid": "UseThroughServices",
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": list(USE_ACTIONS),
            "Resource": "*",
            "Condition": {
                "StringEquals": {
                    "kms:CallerAccount": account_id,
                    "kms:ViaService": sorted(f"{s}.{region}.amazonaws.com" for s in via_services),
                }
            },
        }
    )
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True)


def logs_key_policy(*, partition: str, account_id: str, region: str, administrators: Sequence[str]) -> str:
    """A key policy for CloudWatch Logs log groups of this account and region.

    CloudWatch Logs calls KMS as its own service principal, not through a caller (no `kms:ViaService`),
    so the documented form applies: principal `logs.<region>.amazonaws.com`, limited by the encryption
    context to log groups of this account and region (CloudWatch Logs user guide, "Encrypt log data in
    CloudWatch Logs using AWS KMS").
    """
    statements = _owner_statements(partition, account_id, administrators)
    statements.append(
        {
            "Sid": "CloudWatchLogs",
            "Effect": "Allow",
            "Principal": {"Service": f"logs.{region}.amazonaws.com"},
            "Action": ["kms:Decrypt*", "kms:Describe*", "kms:Encrypt*", "kms:GenerateDataKey*", "kms:ReEncrypt*"],
            "Resource": "*",
            "Condition": {
                "ArnLike": {
                    "kms:EncryptionContext:aws:logs:arn": f"arn:{partition}:logs:{region}:{account_id}:log-group:*"
                }
            },
        }
    )
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True)


def topic_key_policy(*, partition: str, account_id: str, administrators: Sequence[str], publisher: str) -> str:
    """A key policy for an SNS topic that an AWS service publishes to (AMP's Alertmanager, CloudWatch alarms).

    Such a service publishes as its own principal, so SNS asks KMS on its behalf and the key must admit it:
    `kms:GenerateDataKey*` and `kms:Decrypt` for the service principal `publisher` (AMP user guide, "Giving
    Amazon Managed Service for Prometheus permission to send alert messages to your Amazon SNS topic", its SSE
    step; AWS re:Post, "CloudWatch alarm with an encrypted SNS topic"). The AWS-managed `alias/aws/sns` key cannot
    be edited to do that, which is why these topics get a key of their own. Who may publish at all is the
    topic's policy (the workspace's ARN for AMP, the account for CloudWatch); the key only lets the message be
    encrypted. Principals of the account (email, chat and pager subscriptions are SNS's own) use it through IAM.
    """
    statements = _owner_statements(partition, account_id, administrators)
    statements.append(
        {
            "Sid": "EncryptForThePublisher",
            "Effect": "Allow",
            "Principal": {"Service": publisher},
            "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
            "Resource": "*",
        }
    )
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True)


def key_policy_output(
    *,
    region: str,
    administrators: Sequence[str],
    via_services: Sequence[str] = (),
    logs: bool = False,
    publisher: str | None = None,
    opts: pulumi.InvokeOptions | None = None,
) -> pulumi.Output[str]:
    """`key_policy` (`logs_key_policy` when `logs`, `topic_key_policy` for a `publisher`) for this account.

    Two invokes, no resources: the policy names no resource of this stack.
    """
    identity = aws.get_caller_identity_output(opts=opts)
    partition = aws.get_partition_output(opts=opts)

    def build(v: list[str]) -> str:
        if logs:
            return logs_key_policy(partition=v[1], account_id=v[0], region=region, administrators=administrators)
        if publisher is not None:
            return topic_key_policy(partition=v[1], account_id=v[0], administrators=administrators, publisher=publisher)
        return key_policy(
            partition=v[1], account_id=v[0], region=region, administrators=administrators, via_services=via_services
        )

    return pulumi.Output.all(identity.account_id, partition.partition).apply(build)


def logs_key(
    name: str,
    *,
    region: str,
    administrators: Sequence[str],
    description: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> aws.kms.Key:
    """A KMS key, rotation on, for CloudWatch Logs log groups (control-plane logs, VPC flow logs)."""
    return aws.kms.Key(
        name,
        description=description,
        enable_key_rotation=True,
        deletion_window_in_days=30,
        policy=key_policy_output(region=region, administrators=administrators, logs=True),
        tags=tags,
        opts=opts,
    )


def alert_topic(
    name: str,
    *,
    topic_name: str,
    region: str,
    administrators: Sequence[str],
    publisher: str,
    description: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> aws.sns.Topic:
    """An SNS topic encrypted with a key of its own that admits the AWS service publishing to it (`publisher`).

    For the alert topics of AMP's Alertmanager and of CloudWatch alarms (`topic_key_policy` says why not
    `alias/aws/sns`). The key costs $1 a month; deleting the stack schedules it for deletion after 30 days.
    """
    key = aws.kms.Key(
        f"{name}-key",
        description=description,
        enable_key_rotation=True,
        deletion_window_in_days=30,
        policy=key_policy_output(region=region, administrators=administrators, publisher=publisher),
        tags=tags,
        opts=opts,
    )
    return aws.sns.Topic(name, name=topic_name, kms_master_key_id=key.arn, tags=tags, opts=opts)
