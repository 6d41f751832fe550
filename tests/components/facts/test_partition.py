"""Partition facts come from botocore's data: ARNs, principals, STS hosts per partition."""

from __future__ import annotations

import pytest

from gpuplane.components.facts import partition
from gpuplane.infra import config
from gpuplane.infra.aws.token import sts_endpoint
from tests.conftest import DEV_CLUSTER


@pytest.mark.parametrize(
    ("region", "pid", "ec2", "sts"),
    [
        ("us-west-2", "aws", "ec2.amazonaws.com", "https://sts.us-west-2.amazonaws.com"),
        ("cn-north-1", "aws-cn", "ec2.amazonaws.com.cn", "https://sts.cn-north-1.amazonaws.com.cn"),
        ("us-gov-west-1", "aws-us-gov", "ec2.amazonaws.com", "https://sts.us-gov-west-1.amazonaws.com"),
    ],
)
def test_partition_facts(region, pid, ec2, sts):
    found = partition.of_region(region)
    assert found.id == pid
    assert (
        found.arn("arn:aws:iam::aws:policy/AmazonEKSClusterPolicy")
        == f"arn:{pid}:iam::aws:policy/AmazonEKSClusterPolicy"
    )
    assert found.service_principal("ec2") == ec2
    assert found.service_principal("eks") == "eks.amazonaws.com"
    assert sts_endpoint(region) == sts


def test_unsupported_partitions_and_foreign_arns_are_refused():
    with pytest.raises(ValueError, match="'us-iso-east-1' is not a region of a supported AWS partition"):
        partition.of_region("us-iso-east-1")
    with pytest.raises(ValueError, match="is not an ARN of the aws partition"):
        partition.of_region("cn-north-1").arn("arn:aws-cn:iam::aws:policy/X")


def test_eks_regions_span_the_three_partitions():
    regions = partition.service_regions("eks")
    assert {"us-west-2", "cn-north-1", "cn-northwest-1", "us-gov-west-1", "us-gov-east-1"} <= regions
    assert not any(r.startswith("us-iso") for r in regions)


def test_admin_principal_of_another_partition_is_refused():
    raw = {
        "aws:region": "cn-north-1",
        "gpuplane:cluster": {**DEV_CLUSTER, "adminPrincipals": ["arn:aws:iam::123456789012:role/admin"]},
    }
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    assert info.value.problems == [
        "gpuplane:cluster.adminPrincipals[0]: 'arn:aws:iam::123456789012:role/admin' is not in the partition of "
        "cn-north-1; write it as arn:aws-cn:..."
    ]
