"""Stack config rules, as the user sees them: one line naming the key, the value and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.components.config.storage import dynamic_access_point_path_length
from gpuplane.infra import config
from tests.conftest import DEV_CLUSTER


def problems(overrides: dict[str, Any], region: str = "us-west-2") -> list[str]:
    raw: dict[str, Any] = {"aws:region": region, **{f"gpuplane:{k}": v for k, v in overrides.items()}}
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    return info.value.problems


GPU = {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 1}

BAD: list[tuple[str, dict[str, Any], str]] = [
    (
        "maxIO with elastic throughput",
        {"storage": {"performanceMode": "maxIO"}},
        "gpuplane:storage.performanceMode: 'maxIO' cannot be used with throughputMode 'elastic'",
    ),
    (
        "basePath of three components",
        {"storage": {"basePath": "/a/b/c"}},
        "gpuplane:storage.basePath: '/a/b/c' has 3 components; at most 2",
    ),
    (
        "basePath too long for the driver's path",
        {"storage": {"basePath": "/" + "p" * 60, "volumes": [{"name": "scratch", "provisioning": "dynamic"}]}},
        "gpuplane:storage.basePath: '/" + "p" * 60 + "' makes the access point path of claim 'scratch' in "
        "namespace 'ml' 109 characters",
    ),
    (
        "untainted groups all at minSize 0",
        {"nodeGroups": [{"name": "system", "instanceTypes": ["m6i.large"], "minSize": 0}, GPU]},
        "gpuplane:nodeGroups: every untainted CPU group (system) has minSize 0",
    ),
    (
        "only an untainted GPU group",
        {"nodeGroups": [{**GPU, "gpuTaint": False}]},
        "gpuplane:nodeGroups: no untainted CPU group (untainted: ['gpu'])",
    ),
    (
        "api access CIDR with host bits",
        {"cluster": {**DEV_CLUSTER, "apiAccessCidrs": ["10.0.0.1/16"]}},
        "gpuplane:cluster.apiAccessCidrs: '10.0.0.1/16' is not an IPv4 network",
    ),
    (
        "api access security group",
        {"cluster": {**DEV_CLUSTER, "apiAccessSecurityGroupIds": ["sg-12"]}},
        "gpuplane:cluster.apiAccessSecurityGroupIds: 'sg-12' is not a security group id",
    ),
    (
        "upgrade policy",
        {"cluster": {**DEV_CLUSTER, "upgradePolicy": "LTS"}},
        "gpuplane:cluster.upgradePolicy:",
    ),
    (
        "existing file system id",
        {"cluster": DEV_CLUSTER, "storage": {"existingFileSystemId": "fs-xyz"}},
        "gpuplane:storage.existingFileSystemId: 'fs-xyz' is not an EFS file system id",
    ),
]


@pytest.mark.parametrize(("case", "overrides", "start"), BAD, ids=[c[0] for c in BAD])
def test_bad_input_names_key_and_value(case, overrides, start):
    overrides = {"cluster": DEV_CLUSTER, **overrides}
    found = problems(overrides)
    assert any(p.startswith(start) for p in found), found


def test_driver_path_length_counts_namespace_claim_and_unique_suffix():
    # /dynamic/ml/models-<36-char uuid>
    assert dynamic_access_point_path_length("/dynamic", "ml", "models") == len("/dynamic/ml/models-") + 36


@pytest.mark.parametrize("region", ["cn-north-1", "cn-northwest-1", "us-gov-west-1", "us-gov-east-1"])
def test_regions_of_other_partitions_are_accepted(region):
    parsed = config.parse({"aws:region": region, "gpuplane:cluster": DEV_CLUSTER}, "test")
    assert parsed.region == region


def test_a_region_of_an_unsupported_partition_is_refused():
    assert problems({"cluster": DEV_CLUSTER}, region="us-iso-east-1")[0].startswith(
        "aws:region: 'us-iso-east-1' is not a region where EKS is offered"
    )
