"""The pure IAM documents: who may assume a Pod Identity role, what an S3 import may read."""

from __future__ import annotations

import json

import pytest

from gpuplane.components.facts.partition import of_region
from gpuplane.components.plan import iam_policies

TRUST = {
    "account_id": "210987654321",
    "region": "cn-north-1",
    "cluster_name": "gpuplane-prod",
    "namespace": "kube-system",
    "service_account": "cluster-autoscaler",
}


def test_pod_identity_trust_admits_one_service_account_of_one_cluster():
    """The EKS user guide's shape (AssumeRole + TagSession), limited by the account and by the session's tags.

    Only keys the guide says Pod Identity's request carries: its session tags (the cluster's ARN, which holds the
    partition, region, account and name) and the account. No `aws:SourceArn`: the guide documents none for this
    principal, and a condition on a key the request lacks refuses every pod.
    """
    (statement,) = json.loads(iam_policies.pod_identity_trust(of_region("cn-north-1"), **TRUST))["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}  # the same in aws-cn
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Condition"] == {
        "StringEquals": {
            "aws:SourceAccount": "210987654321",
            "aws:RequestTag/eks-cluster-arn": "arn:aws-cn:eks:cn-north-1:210987654321:cluster/gpuplane-prod",
            "aws:RequestTag/kubernetes-namespace": "kube-system",
            "aws:RequestTag/kubernetes-service-account": "cluster-autoscaler",
        },
    }


def test_eks_cluster_trust_admits_eks_for_one_cluster_of_one_account():
    """The EKS user guide's confused-deputy trust of the cluster role, in the cluster's partition."""
    trust = iam_policies.eks_cluster_trust(
        of_region("cn-north-1"), account_id="210987654321", region="cn-north-1", cluster_name="gpuplane-prod"
    )
    (statement,) = json.loads(trust)["Statement"]
    assert statement["Principal"] == {"Service": "eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Condition"] == {
        "ArnLike": {"aws:SourceArn": "arn:aws-cn:eks:cn-north-1:210987654321:cluster/gpuplane-prod"},
        "StringEquals": {"aws:SourceAccount": "210987654321"},
    }
    with pytest.raises(ValueError, match="wildcard or a policy variable"):
        iam_policies.eks_cluster_trust(of_region("us-west-2"), account_id="1", region="us-west-2", cluster_name="a*")


@pytest.mark.parametrize("field", ["cluster_name", "namespace", "service_account"])
@pytest.mark.parametrize("bad", ["*", "a?", "${aws:username}"])
def test_pod_identity_trust_refuses_text_iam_would_read_as_a_wildcard(field, bad):
    with pytest.raises(ValueError, match="wildcard or a policy variable"):
        iam_policies.pod_identity_trust(of_region("us-west-2"), **{**TRUST, "region": "us-west-2", field: bad})


def test_cluster_arn_follows_partition_region_and_account():
    arn = iam_policies.cluster_arn(
        partition_id="aws-us-gov", region="us-gov-west-1", account_id="1" * 12, cluster_name="c"
    )
    assert arn == "arn:aws-us-gov:eks:us-gov-west-1:111111111111:cluster/c"


def test_alarms_pattern_names_the_stack_s_alarms_only():
    pattern = iam_policies.alarms_arn_pattern(
        partition_id="aws", region="eu-west-1", account_id="1" * 12, name_prefix="gpuplane-dev-"
    )
    assert pattern == "arn:aws:cloudwatch:eu-west-1:111111111111:alarm:gpuplane-dev-*"
    with pytest.raises(ValueError, match="alarm name prefix"):
        iam_policies.alarms_arn_pattern(partition_id="aws", region="eu-west-1", account_id="1" * 12, name_prefix="*")


@pytest.mark.parametrize(
    ("bucket", "key", "what"),
    [
        ("b", "*", "S3 key or prefix"),
        ("b", "models/*", "S3 key or prefix"),
        ("b", "models/v?/", "S3 key or prefix"),
        ("b", "${aws:username}/", "S3 key or prefix"),
        ("b*", "m/", "S3 bucket"),
    ],
)
def test_s3_read_policy_refuses_wildcards_a_caller_passes_directly(bucket, key, what):
    """The config refuses them first; a program that calls the builder itself gets the same refusal."""
    with pytest.raises(ValueError, match=f"{what} '.*' holds"):
        iam_policies.s3_read_policy(bucket, key)


def test_s3_read_policy_of_a_whole_bucket():
    """`s3://bucket/`: every object of the bucket, `bucket/*` (not `bucket//*`), and its listing."""
    statements = json.loads(iam_policies.s3_read_policy("team-models", ""))["Statement"]
    assert statements == [
        {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": ["arn:aws:s3:::team-models/*"]},
        {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": ["arn:aws:s3:::team-models"]},
    ]
