"""VPC flow logs to CloudWatch Logs, encrypted with a key of the stack: who talked to whom, for audits.

Why: without flow logs an incident in the VPC leaves no network record (checkov CKV2_AWS_11,
terraform-aws-vpc's `enable_flow_log`). The delivery role trusts only the flow-logs service acting for
this account's flow logs (the confused-deputy conditions the VPC user guide recommends), and may write
only to its own log group.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from gpuplane.components import kms


def delivery_trust(partition: str, account_id: str, region: str) -> str:
    """Trust policy of the delivery role: vpc-flow-logs.amazonaws.com, for this account's flow logs only."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "vpc-flow-logs.amazonaws.com"},
                    "Action": "sts:AssumeRole",
                    "Condition": {
                        "StringEquals": {"aws:SourceAccount": account_id},
                        "ArnLike": {"aws:SourceArn": f"arn:{partition}:ec2:{region}:{account_id}:vpc-flow-log/*"},
                    },
                }
            ],
        },
        sort_keys=True,
    )


def delivery_policy(log_group_arn: str) -> str:
    """What the delivery role may do: create streams in and write to its own log group."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "WriteOwnLogGroup",
                    "Effect": "Allow",
                    "Action": [
                        "logs:CreateLogStream",
                        "logs:DescribeLogGroups",
                        "logs:DescribeLogStreams",
                        "logs:PutLogEvents",
                    ],
                    "Resource": [log_group_arn, f"{log_group_arn}:*"],
                }
            ],
        },
        sort_keys=True,
    )


class FlowLogs(pulumi.ComponentResource):
    """Flow logs of one VPC (all traffic, 1-minute aggregation) into a KMS-encrypted log group."""

    log_group_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        vpc_id: pulumi.Input[str],
        log_group_name: str,
        region: str,
        retention_days: int,
        key_administrators: Sequence[str] = (),
        tags: dict[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpuplane:index:FlowLogs", name, None, opts)
        tags = dict(tags or {})
        child = pulumi.ResourceOptions(parent=self)
        identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self))

        key = kms.logs_key(
            f"{name}-key",
            region=region,
            administrators=key_administrators,
            log_group_name=log_group_name,
            description=f"VPC flow logs {log_group_name}",
            tags=tags,
            opts=child,
        )
        group = aws.cloudwatch.LogGroup(
            f"{name}-group",
            name=log_group_name,
            retention_in_days=retention_days,
            kms_key_id=key.arn,
            tags=tags,
            opts=child,
        )
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=pulumi.Output.all(partition.partition, identity.account_id).apply(
                lambda v: delivery_trust(v[0], v[1], region)
            ),
            description=f"Delivers VPC flow logs to {log_group_name}",
            tags=tags,
            opts=child,
        )
        # The ARN written out (not the group's `arn` output) so the policy reads the same in a preview.
        group_arn = pulumi.Output.all(partition.partition, identity.account_id, group.name).apply(
            lambda v: f"arn:{v[0]}:logs:{region}:{v[1]}:log-group:{v[2]}"
        )
        policy = aws.iam.RolePolicy(f"{name}-policy", role=role.id, policy=group_arn.apply(delivery_policy), opts=child)
        aws.ec2.FlowLog(
            f"{name}-flow-log",
            vpc_id=vpc_id,
            traffic_type="ALL",
            log_destination_type="cloud-watch-logs",
            log_destination=group.arn,
            iam_role_arn=role.arn,
            max_aggregation_interval=60,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
        )
        self.log_group_name = group.name
        self.register_outputs({"logGroupName": group.name})
