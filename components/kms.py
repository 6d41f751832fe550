"""Key policies for the stack's KMS keys, written out instead of left to the default.

Why: a key created without a policy gets AWS's default (the account root may do everything), which
scanners flag (checkov CKV2_AWS_64) and which says nothing about who administers the key. The policy
here follows the shape of AWS-managed keys: the account root keeps full access (so IAM policies keep
working and the key can never become unmanageable), named key administrators may manage but not use it,
and use is granted to the AWS services that encrypt with it, by service (`kms:ViaService`) and account
(`kms:CallerAccount`), never by this stack's role ARNs. That last choice keeps a key that outlives the
stack (the EFS key, protected with the file system) free of references to roles, clusters or networks
that a `pulumi destroy --exclude-protected` would then have to keep too. A service that uses a key as its
own principal (CloudWatch Logs, an SNS publisher) is admitted for its one resource only: by the encryption
context the service sets (the log group, the topic) and, for a publisher, by the source of the request.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from gpuplane.components.plan.iam_policies import plain

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


def log_group_arn(*, partition: str, account_id: str, region: str, log_group_name: str) -> str:
    """The ARN CloudWatch Logs puts in the encryption context of one log group (`...:log-group:<name>`, no `:*`)."""
    return f"arn:{partition}:logs:{region}:{account_id}:log-group:{plain('log group name', log_group_name)}"


def logs_key_policy(
    *, partition: str, account_id: str, region: str, administrators: Sequence[str], log_group_name: str
) -> str:
    """A key policy for one CloudWatch Logs log group, `log_group_name`, of this account and region.

    CloudWatch Logs calls KMS as its own service principal, not through a caller (no `kms:ViaService`),
    so the documented form applies: principal `logs.<region>.amazonaws.com`, limited by the encryption
    context `kms:EncryptionContext:aws:logs:arn` to the log group's ARN (CloudWatch Logs user guide, "Encrypt
    log data in CloudWatch Logs using AWS KMS"). Each key serves one log group, so it names that group alone:
    `log-group:*` would let any log group of the account and region be encrypted with it.
    """
    statements = _owner_statements(partition, account_id, administrators)
    group_arn = log_group_arn(partition=partition, account_id=account_id, region=region, log_group_name=log_group_name)
    statements.append(
        {
            "Sid": "CloudWatchLogs",
            "Effect": "Allow",
            "Principal": {"Service": f"logs.{region}.amazonaws.com"},
            "Action": ["kms:Decrypt*", "kms:Describe*", "kms:Encrypt*", "kms:GenerateDataKey*", "kms:ReEncrypt*"],
            "Resource": "*",
            "Condition": {"ArnEquals": {"kms:EncryptionContext:aws:logs:arn": group_arn}},
        }
    )
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True)


def topic_arn(*, partition: str, account_id: str, region: str, topic_name: str) -> str:
    """An SNS topic's ARN, written out from its name (what SNS puts in the encryption context of its messages)."""
    return f"arn:{partition}:sns:{region}:{account_id}:{plain('topic name', topic_name)}"


def topic_key_policy(
    *,
    partition: str,
    account_id: str,
    region: str,
    administrators: Sequence[str],
    publisher: str,
    topic_name: str,
    source_arn: str,
) -> str:
    """A key policy for an SNS topic that an AWS service publishes to (AMP's Alertmanager, CloudWatch alarms).

    Such a service publishes as its own principal, so SNS asks KMS on its behalf and the key must admit it:
    `kms:GenerateDataKey*` and `kms:Decrypt` for the service principal `publisher` (AMP user guide, "Giving
    Amazon Managed Service for Prometheus permission to send alert messages to your Amazon SNS topic", its SSE
    step; AWS re:Post, "CloudWatch alarm with an encrypted SNS topic"). The AWS-managed `alias/aws/sns` key cannot
    be edited to do that, which is why these topics get a key of their own. The grant holds only for messages
    of this topic (`kms:EncryptionContext:aws:sns:topicArn`, which SNS sets on every data key it asks for) sent
    by the stack's own resource (`aws:SourceArn`: the AMP workspace, or the stack's alarms), the form the SNS
    developer guide and the services that publish to encrypted topics document (e.g. GameLift's "Set up an SNS
    topic with server-side encryption"). Who may publish at all is the topic's policy (the workspace's ARN for
    AMP, the account for CloudWatch); the key only lets the message be encrypted. Principals of the account
    (email, chat and pager subscriptions are SNS's own) use it through IAM.
    """
    statements = _owner_statements(partition, account_id, administrators)
    statements.append(
        {
            "Sid": "EncryptForThePublisher",
            "Effect": "Allow",
            "Principal": {"Service": publisher},
            "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
            "Resource": "*",
            "Condition": {
                "StringEquals": {
                    "kms:EncryptionContext:aws:sns:topicArn": topic_arn(
                        partition=partition, account_id=account_id, region=region, topic_name=topic_name
                    )
                },
                "ArnLike": {"aws:SourceArn": source_arn},
            },
        }
    )
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True)


def key_policy_output(
    *,
    region: str,
    administrators: Sequence[str],
    via_services: Sequence[str] = (),
    log_group_name: str | None = None,
    topic: tuple[str, str, pulumi.Input[str]] | None = None,
    opts: pulumi.InvokeOptions | None = None,
) -> pulumi.Output[str]:
    """`key_policy` for this account; `logs_key_policy` for a `log_group_name`; `topic_key_policy` for a `topic`.

    `topic` is (publisher's service principal, topic name, the publishing resource's ARN or ARN pattern).
    Two invokes, no resources: the policy refers to no resource of this stack, except a topic key to the
    resource that publishes (the AMP workspace), which goes with the stack as the topic does.
    """
    identity = aws.get_caller_identity_output(opts=opts)
    partition = aws.get_partition_output(opts=opts)
    source_arn: pulumi.Input[str] = topic[2] if topic is not None else ""

    def build(v: list[str]) -> str:
        account_id, partition_id, source = v
        if log_group_name is not None:
            return logs_key_policy(
                partition=partition_id,
                account_id=account_id,
                region=region,
                administrators=administrators,
                log_group_name=log_group_name,
            )
        if topic is not None:
            return topic_key_policy(
                partition=partition_id,
                account_id=account_id,
                region=region,
                administrators=administrators,
                publisher=topic[0],
                topic_name=topic[1],
                source_arn=source,
            )
        return key_policy(
            partition=partition_id,
            account_id=account_id,
            region=region,
            administrators=administrators,
            via_services=via_services,
        )

    return pulumi.Output.all(identity.account_id, partition.partition, source_arn).apply(build)


def logs_key(
    name: str,
    *,
    region: str,
    administrators: Sequence[str],
    log_group_name: str,
    description: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> aws.kms.Key:
    """A KMS key, rotation on, for one CloudWatch Logs log group (control-plane logs, VPC flow logs)."""
    return aws.kms.Key(
        name,
        description=description,
        enable_key_rotation=True,
        deletion_window_in_days=30,
        policy=key_policy_output(region=region, administrators=administrators, log_group_name=log_group_name),
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
    source_arn: pulumi.Input[str],
    description: str,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> aws.sns.Topic:
    """An SNS topic encrypted with a key of its own that admits the AWS service publishing to it (`publisher`).

    For the alert topics of AMP's Alertmanager and of CloudWatch alarms (`topic_key_policy` says why not
    `alias/aws/sns`). `source_arn`: the resource that publishes (the AMP workspace, or an ARN pattern of the
    stack's alarms); the key admits `publisher` only on its behalf and only for this topic. The key costs $1 a
    month; deleting the stack schedules it for deletion after 30 days.
    """
    key = aws.kms.Key(
        f"{name}-key",
        description=description,
        enable_key_rotation=True,
        deletion_window_in_days=30,
        policy=key_policy_output(
            region=region, administrators=administrators, topic=(publisher, topic_name, source_arn)
        ),
        tags=tags,
        opts=opts,
    )
    return aws.sns.Topic(name, name=topic_name, kms_master_key_id=key.arn, tags=tags, opts=opts)
