"""IAM policy documents as pure functions (JSON strings), so their content is tested without Pulumi."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gpuplane.components.facts import iam

if TYPE_CHECKING:
    from gpuplane.components.facts.partition import Partition


def _document(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)}, sort_keys=True)


def service_trust(service: str, *, tag_session: bool = False) -> str:
    """Trust policy letting an AWS service (e.g. `ec2.amazonaws.com`) assume the role."""
    action: str | list[str] = ["sts:AssumeRole", "sts:TagSession"] if tag_session else "sts:AssumeRole"
    return _document({"Effect": "Allow", "Principal": {"Service": service}, "Action": action})


def eks_cluster_trust(partition: Partition, *, account_id: str, region: str, cluster_name: str) -> str:
    """Trust policy of the EKS cluster role: EKS may assume it for this cluster of this account only.

    Without conditions any EKS cluster whose creator may pass the role (`iam:PassRole`) runs with its rights:
    the confused deputy of the EKS user guide's "Amazon EKS cluster role cross-service confused deputy
    prevention", whose trust this is (`aws:SourceArn` = the cluster's ARN with `ArnLike`, `aws:SourceAccount`).
    The ARN is written from the cluster's derived name, so the role need not wait for the cluster.
    `sts:TagSession` is required by EKS auto mode and harmless here.
    """
    arn = cluster_arn(partition_id=partition.id, region=region, account_id=account_id, cluster_name=cluster_name)
    return _document(
        {
            "Effect": "Allow",
            "Principal": {"Service": partition.service_principal("eks")},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Condition": {"ArnLike": {"aws:SourceArn": arn}, "StringEquals": {"aws:SourceAccount": account_id}},
        }
    )


def node_trust(partition: Partition) -> str:
    """Trust policy of a node role: EC2, whose principal differs by partition (`ec2.amazonaws.com.cn`)."""
    return service_trust(partition.service_principal("ec2"))


def plain(what: str, value: str) -> str:
    """`value`, or ValueError when IAM would read part of it as a wildcard or a policy variable.

    Every name and path that goes into an ARN or a condition value here passes through it: text a user wrote
    never widens a grant (`facts.iam`).
    """
    found = iam.special_in(value)
    if found:
        raise ValueError(
            f"{what} '{value}' holds {', '.join(repr(c) for c in found)}, which IAM reads as a wildcard or a "
            "policy variable; a policy names it only as plain text"
        )
    return value


def cluster_arn(*, partition_id: str, region: str, account_id: str, cluster_name: str) -> str:
    """The EKS cluster's ARN, written out before the cluster exists (its name is derived, not read back)."""
    return f"arn:{partition_id}:eks:{region}:{account_id}:cluster/{plain('cluster name', cluster_name)}"


def alarms_arn_pattern(*, partition_id: str, region: str, account_id: str, name_prefix: str) -> str:
    """The ARNs of the CloudWatch alarms whose names start with `name_prefix` (for an `ArnLike` condition).

    The stack's alarms are all named `<cluster name>-<alarm>`, so `<cluster name>-` and the `*` after it
    admit them and no other alarm of the account.
    """
    return f"arn:{partition_id}:cloudwatch:{region}:{account_id}:alarm:{plain('alarm name prefix', name_prefix)}*"


def pod_identity_trust(
    partition: Partition,
    *,
    account_id: str,
    region: str,
    cluster_name: str,
    namespace: str,
    service_account: str,
) -> str:
    """Trust policy for EKS Pod Identity: only this cluster's pods of one service account may assume the role.

    Without conditions the principal `pods.eks.amazonaws.com` lets any Pod Identity association of the account
    bind the role: whoever may pass it (`iam:PassRole`) gives its rights to a pod of any cluster, namespace and
    service account. EKS Pod Identity calls `AssumeRole` with `TagSession` (both allowed, as the EKS user guide's
    "Create IAM role with trust policy required by EKS Pod Identity" shows) and tags the session with the
    cluster's ARN, its name, and the pod's namespace and service account (the guide's "List of session tags
    added by EKS Pod Identity"); the trust requires the cluster's ARN and the one service account
    (`aws:RequestTag/...`, evaluated on both actions of the call), and the account (`aws:SourceAccount`).

    The cluster is pinned by its session tag, not by `aws:SourceArn`: the guide's conditions for this principal
    are the session tags, and it documents no `aws:SourceArn` for it (its confused-deputy page names the cluster
    role's trust only); a condition on a key the request might not carry would be false, and every Pod Identity
    role refused. The tag's ARN names the partition, region, account and cluster, so a same-named cluster
    elsewhere does not match.
    `region` is the cluster's region.
    """
    arn = cluster_arn(partition_id=partition.id, region=region, account_id=account_id, cluster_name=cluster_name)
    return _document(
        {
            "Sid": "EksPodIdentityOfOneServiceAccount",
            "Effect": "Allow",
            "Principal": {"Service": partition.service_principal("pods.eks")},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Condition": {
                "StringEquals": {
                    "aws:SourceAccount": account_id,
                    "aws:RequestTag/eks-cluster-arn": arn,
                    "aws:RequestTag/kubernetes-namespace": plain("namespace", namespace),
                    "aws:RequestTag/kubernetes-service-account": plain("service account", service_account),
                },
            },
        }
    )


def irsa_trust(
    oidc_provider_arn: str,
    issuer_url: str,
    namespace: str,
    service_account: str,
    *,
    audience: str = "sts.amazonaws.com",
) -> str:
    """Trust policy for IAM Roles for Service Accounts: only this service account of this cluster.

    Both `sub` and `aud` are pinned, as the EKS user guide recommends; a trust on the provider alone would
    let every service account in the cluster assume the role.
    """
    host = issuer_url.removeprefix("https://")
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": oidc_provider_arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{host}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                            f"{host}:aud": audience,
                        }
                    },
                }
            ],
        },
        sort_keys=True,
    )


def efs_tls_only_policy(file_system_arn: str) -> str:
    """File-system policy: clients mount and write only through mount targets, never without TLS.

    With a file-system policy in place EFS no longer grants the implicit "everyone in the VPC" access, so
    the Allow keeps the CSI driver's (anonymous, access-point) mounts working; root access is not granted
    (root squash), which access points enforce anyway. The Deny on `aws:SecureTransport=false` is AWS's
    recommended "enforce in-transit encryption" statement.
    """
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "MountThroughMountTargets",
                    "Effect": "Allow",
                    "Principal": {"AWS": "*"},
                    "Action": ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"],
                    "Resource": file_system_arn,
                    "Condition": {"Bool": {"elasticfilesystem:AccessedViaMountTarget": "true"}},
                },
                {
                    "Sid": "DenyWithoutTLS",
                    "Effect": "Deny",
                    "Principal": {"AWS": "*"},
                    "Action": "*",
                    "Resource": file_system_arn,
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                },
            ],
        },
        sort_keys=True,
    )


def cluster_autoscaler_policy(
    cluster_name: str, *, partition: str = "aws", region: str = "*", account_id: str = "*"
) -> str:
    """The cluster-autoscaler's permissions, from its AWS cloud-provider README.

    It may read everywhere (the Describe calls take no resource), but change only the Auto Scaling groups
    tagged as owned by this cluster, in this account and region, and describe only this cluster's node
    groups: the README's recommended policy, with the resources it says may be restricted restricted
    (checkov CKV_AWS_355). `partition`, `region` and `account_id` default to wildcards for callers that
    have no account at hand; the platform passes the real ones.
    """
    asg_arn = f"arn:{partition}:autoscaling:{region}:{account_id}:autoScalingGroup:*:autoScalingGroupName/*"
    nodegroup_arn = f"arn:{partition}:eks:{region}:{account_id}:nodegroup/{cluster_name}/*/*"
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "Discover",
                    "Effect": "Allow",
                    "Action": [
                        "autoscaling:DescribeAutoScalingGroups",
                        "autoscaling:DescribeAutoScalingInstances",
                        "autoscaling:DescribeLaunchConfigurations",
                        "autoscaling:DescribeScalingActivities",
                        "autoscaling:DescribeTags",
                        "ec2:DescribeImages",
                        "ec2:DescribeInstanceTypes",
                        "ec2:DescribeLaunchTemplateVersions",
                        "ec2:GetInstanceTypesFromInstanceRequirements",
                    ],
                    "Resource": "*",
                },
                {
                    "Sid": "DescribeOwnNodegroups",
                    "Effect": "Allow",
                    "Action": ["eks:DescribeNodegroup"],
                    "Resource": nodegroup_arn,
                },
                {
                    "Sid": "ScaleOwnGroupsOnly",
                    "Effect": "Allow",
                    "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
                    "Resource": asg_arn,
                    "Condition": {
                        "StringEquals": {f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster_name}": "owned"}
                    },
                },
            ],
        },
        sort_keys=True,
    )


def amp_query_policy(workspace_arn: str) -> str:
    """Query one AMP workspace: what KEDA's prometheus trigger needs (`/api/v1/query` is `aps:QueryMetrics`)."""
    return _document(
        {
            "Effect": "Allow",
            "Action": ["aps:QueryMetrics", "aps:GetSeries", "aps:GetLabels", "aps:GetMetricMetadata"],
            "Resource": [workspace_arn],
        }
    )


def sns_publish_policy(topic_arn: str) -> str:
    """Publish to one SNS topic: what Alertmanager needs to send the stack's alerts (its `sns_configs`)."""
    return _document({"Effect": "Allow", "Action": ["sns:Publish"], "Resource": [topic_arn]})


def s3_read_policy(bucket: str, key: str, partition_id: str = "aws") -> str:
    """Read-only access to one object or one prefix (List limited to that prefix), in the stack's partition.

    `bucket` and `key` come from the user's `s3://` source and go into the ARN and the `s3:prefix` condition as
    written: a `*`, `?` or `${` there would widen the grant (`s3://models/*` would read the whole bucket and
    list every prefix), so the config refuses them and this builder does too, for a caller that skips the config.
    """
    plain("S3 bucket", bucket)
    plain("S3 key or prefix", key)
    arn = f"arn:{partition_id}:s3:::{bucket}"
    prefix = key.rstrip("/")
    if not prefix:
        # The whole bucket (`s3://bucket/`): every object (`bucket/*`, not `bucket//*`, which names keys starting
        # with '/') and the listing, whose root request may carry no `s3:prefix` for a condition to match.
        return _document(
            {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": [f"{arn}/*"]},
            {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [arn]},
        )
    objects = f"{arn}/{prefix}/*" if key.endswith("/") else f"{arn}/{key}"
    list_prefix = f"{prefix}/*" if key.endswith("/") else key
    return _document(
        {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": [objects]},
        {
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": [arn],
            "Condition": {"StringLike": {"s3:prefix": [list_prefix]}},
        },
    )
