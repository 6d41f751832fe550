"""IAM policy documents as pure functions (JSON strings), so their content is tested without Pulumi."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplane.components.facts.partition import Partition


def _document(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)}, sort_keys=True)


def service_trust(service: str, *, tag_session: bool = False) -> str:
    """Trust policy letting an AWS service (e.g. `ec2.amazonaws.com`) assume the role."""
    action: str | list[str] = ["sts:AssumeRole", "sts:TagSession"] if tag_session else "sts:AssumeRole"
    return _document({"Effect": "Allow", "Principal": {"Service": service}, "Action": action})


def eks_cluster_trust(partition: Partition) -> str:
    """Trust policy of the EKS cluster role; `sts:TagSession` is required by EKS auto mode and harmless here."""
    return service_trust(partition.service_principal("eks"), tag_session=True)


def node_trust(partition: Partition) -> str:
    """Trust policy of a node role: EC2, whose principal differs by partition (`ec2.amazonaws.com.cn`)."""
    return service_trust(partition.service_principal("ec2"))


def pod_identity_trust(partition: Partition) -> str:
    """Trust policy for EKS Pod Identity (the agent assumes the role, tagging the session with the pod's)."""
    return service_trust(partition.service_principal("pods.eks"), tag_session=True)


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
