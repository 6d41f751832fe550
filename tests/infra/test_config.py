"""Bad input: every mistake gets one line naming the key, the bad value and what is allowed."""

from __future__ import annotations

import os
from typing import Any

import pytest

from gpuplane.components.config import NodeGroupArgs, PlatformArgs
from gpuplane.infra import config
from gpuplane.manifests import lifecycle
from tests.conftest import DEV_CLUSTER

SYSTEM = {"name": "system", "instanceTypes": ["m6i.large"]}


def problems(overrides: dict[str, Any], region: Any = "us-west-2") -> list[str]:
    raw: dict[str, Any] = {f"gpuplane:{k}": v for k, v in overrides.items()}
    if region is not None:
        raw["aws:region"] = region
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    return info.value.problems


def groups(*extra: dict[str, Any]) -> dict[str, Any]:
    return {"cluster": DEV_CLUSTER, "nodeGroups": [SYSTEM, *extra]}


BAD_INPUTS: list[tuple[str, dict[str, Any], str, list[str]]] = [
    ("unknown top-level key", {"cluser": {}}, "gpuplane:cluser:", ["unknown key", "cluster", "nodeGroups"]),
    (
        "unknown nested key",
        groups({"name": "gpu", "kind": "gpu", "instanceType": "g5.xlarge"}),
        "gpuplane:nodeGroups[1].instanceType:",
        ["unknown key", "instanceTypes"],
    ),
    (
        "min greater than max",
        groups({"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 4, "maxSize": 2}),
        "gpuplane:nodeGroups[1].minSize:",
        ["4 is greater than maxSize 2"],
    ),
    (
        "desired outside range",
        groups({"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 0, "desiredSize": 5}),
        "gpuplane:nodeGroups[1].desiredSize:",
        ["5 is outside [minSize, maxSize] = [0, 3]"],
    ),
    (
        "gpu group without gpu",
        groups({"name": "gpu", "kind": "gpu", "instanceTypes": ["m6i.large"]}),
        "gpuplane:nodeGroups[1].instanceTypes:",
        ["['m6i.large'] have no GPU", "kind is 'gpu'"],
    ),
    (
        "cpu group with gpu types",
        groups({"name": "more", "instanceTypes": ["g5.xlarge"]}),
        "gpuplane:nodeGroups[1].instanceTypes:",
        ["have GPUs but kind is 'cpu'"],
    ),
    (
        "mixed architectures",
        groups({"name": "mixed", "instanceTypes": ["m6i.large", "m7g.large"]}),
        "gpuplane:nodeGroups[1].instanceTypes:",
        ["mix architectures ['arm64', 'x86_64']"],
    ),
    (
        "mixed gpu models",
        groups({"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge", "g6.xlarge"]}),
        "gpuplane:nodeGroups[1].instanceTypes:",
        ["mix GPU models or counts", "1x A10G", "1x L4"],
    ),
    (
        "mixed gpu counts",
        groups({"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge", "g5.12xlarge"]}),
        "gpuplane:nodeGroups[1].instanceTypes:",
        ["1x A10G", "4x A10G"],
    ),
    (
        "a scalar where sharing needs a mapping",
        groups({"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "sharing": {"timeSlicing": 4}}),
        "gpuplane:nodeGroups[1].sharing.timeSlicing:",
        ["expected a mapping like {replicas: 4}; keys here: replicas"],
    ),
    (
        "a string where a section needs a mapping",
        {"cluster": DEV_CLUSTER, "network": "10.0.0.0/16"},
        "gpuplane:network:",
        ["expected a mapping like {cidr: ..., availabilityZones: ...}; keys here: availabilityZones, azCount"],
    ),
    (
        "a type the data refuses",
        groups({"name": "inf", "instanceTypes": ["inf2.xlarge"]}),
        "gpuplane:nodeGroups[1].instanceTypes:",
        ["'inf2.xlarge' carries AWS Inferentia2, which gpuplane does not support"],
    ),
    (
        "instance type aws does not know",
        groups({"name": "gpu", "kind": "gpu", "instanceTypes": ["g9.huge"]}),
        "gpuplane:nodeGroups[1].instanceTypes:",
        ["'g9.huge' is not an EC2 instance type"],
    ),
    (
        "one az by count",
        {"cluster": DEV_CLUSTER, "network": {"azCount": 1}},
        "gpuplane:network.azCount:",
        ["greater than or equal to 2", "(got 1)"],
    ),
    (
        "one explicit az",
        {"cluster": DEV_CLUSTER, "network": {"availabilityZones": ["us-west-2a"]}},
        "gpuplane:network.availabilityZones:",
        ["at least 2 AZs"],
    ),
    (
        "vpc too small",
        {"cluster": DEV_CLUSTER, "network": {"cidr": "10.0.0.0/18", "azCount": 3}},
        "gpuplane:network:",
        ["VPC 10.0.0.0/18", "too small for 3 private /19"],
    ),
    (
        "vpc smaller than a subnet",
        {"cluster": DEV_CLUSTER, "network": {"cidr": "10.0.0.0/22"}},
        "gpuplane:network.privateSubnetPrefix:",
        ["/19 is not smaller than the VPC 10.0.0.0/22"],
    ),
    (
        "cidr with host bits",
        {"cluster": DEV_CLUSTER, "network": {"cidr": "10.0.0.1/16"}},
        "gpuplane:network.cidr:",
        ["'10.0.0.1/16' is not an IPv4 network"],
    ),
    (
        "service cidr overlaps vpc",
        {"cluster": {**DEV_CLUSTER, "serviceIpv4Cidr": "10.0.128.0/20"}},
        "gpuplane:cluster.serviceIpv4Cidr:",
        ["10.0.128.0/20 overlaps the VPC 10.0.0.0/16"],
    ),
    (
        "unsupported kubernetes version",
        {"cluster": {**DEV_CLUSTER, "kubernetesVersion": "1.20"}},
        "gpuplane:cluster.kubernetesVersion:",
        ["'1.20' is not a Kubernetes version EKS supports", "1.35"],
    ),
    (
        "kubernetes version as a yaml number",
        {"cluster": {**DEV_CLUSTER, "kubernetesVersion": 1.3}},
        "gpuplane:cluster.kubernetesVersion:",
        ["quoted string"],
    ),
    (
        "prod public endpoint open to the world",
        {"profile": "prod", "cluster": {"endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/0"]}},
        "gpuplane:cluster.publicAccessCidrs:",
        ["['0.0.0.0/0'] opens the prod API endpoint to the whole internet"],
    ),
    ("dev public endpoint without cidrs", {}, "gpuplane:cluster.publicAccessCidrs:", ["is empty"]),
    (
        "azs of another region",
        {"cluster": DEV_CLUSTER, "network": {"availabilityZones": ["eu-west-1a", "eu-west-1b"]}},
        "gpuplane:network.availabilityZones:",
        ["not in the stack's region us-west-2"],
    ),
    (
        "duplicate group names",
        groups({"name": "system", "instanceTypes": ["m6i.xlarge"]}),
        "gpuplane:nodeGroups:",
        ["['system'] used more than once"],
    ),
    (
        "no untainted group",
        {"cluster": DEV_CLUSTER, "nodeGroups": [{"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"]}]},
        "gpuplane:nodeGroups:",
        ["add an untainted CPU group"],
    ),
    (
        "ami type for the wrong architecture",
        groups({"name": "arm", "instanceTypes": ["m6i.large"], "amiType": "AL2023_ARM_64_STANDARD"}),
        "gpuplane:nodeGroups[1].amiType:",
        ["is for arm64 but the instance types are x86_64"],
    ),
    (
        "non-nvidia ami on a gpu group",
        groups({"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "amiType": "AL2023_x86_64_STANDARD"}),
        "gpuplane:nodeGroups[1].amiType:",
        ["use an NVIDIA AMI type", "AL2023_x86_64_NVIDIA"],
    ),
    (
        "operator mode cannot install a driver on amazon linux",
        groups(
            {
                "name": "gpu",
                "kind": "gpu",
                "instanceTypes": ["g5.xlarge"],
                "driver": "operator",
                "amiType": "AL2023_x86_64_STANDARD",
            }
        ),
        "gpuplane:nodeGroups[1].amiType:",
        ["has no NVIDIA driver"],
    ),
    (
        "capacity type spelling",
        groups({"name": "cheap", "instanceTypes": ["m6i.large"], "capacityType": "spot"}),
        "gpuplane:nodeGroups[1].capacityType:",
        ["'ON_DEMAND', 'SPOT' or 'CAPACITY_BLOCK'", "'spot'"],
    ),
    (
        "taint effect spelling",
        groups({"name": "t", "instanceTypes": ["m6i.large"], "taints": [{"key": "a", "effect": "NoScheduel"}]}),
        "gpuplane:nodeGroups[1].taints[0].effect:",
        ["'NoSchedule'", "'NoScheduel'"],
    ),
    (
        "log retention not offered by cloudwatch",
        {"cluster": {**DEV_CLUSTER, "logRetentionDays": 10}},
        "gpuplane:cluster.logRetentionDays:",
        ["10 is not a CloudWatch retention period", "14"],
    ),
    (
        "log type spelling",
        {"cluster": {**DEV_CLUSTER, "logTypes": ["audit", "controllermanager"]}},
        "gpuplane:cluster.logTypes[1]:",
        ["'controllerManager'"],
    ),
    (
        "admin principal not an arn",
        {"cluster": {**DEV_CLUSTER, "adminPrincipals": ["platform-admin"]}},
        "gpuplane:cluster.adminPrincipals:",
        ["'platform-admin' is not an IAM role or user ARN"],
    ),
    ("reserved tag", {"cluster": DEV_CLUSTER, "tags": {"gpuplane:stack": "x"}}, "gpuplane:tags:", ["is reserved"]),
    (
        "label in a reserved domain",
        groups({"name": "l", "instanceTypes": ["m6i.large"], "labels": {"node-role.kubernetes.io/gpu": "x"}}),
        "gpuplane:nodeGroups[1].labels:",
        ["reserved for Kubernetes/EKS"],
    ),
    (
        "group name with capitals",
        groups({"name": "GPU", "kind": "gpu", "instanceTypes": ["g5.xlarge"]}),
        "gpuplane:nodeGroups[1].name:",
        ["'GPU' must be 2-32 chars"],
    ),
    ("missing instance types", groups({"name": "x"}), "gpuplane:nodeGroups[1].instanceTypes:", ["is required"]),
    ("profile spelling", {"profile": "production"}, "gpuplane:profile:", ["'dev' or 'prod'"]),
]


@pytest.mark.parametrize(("case", "overrides", "key", "fragments"), BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_names_the_key_and_value(case, overrides, key, fragments):
    found = problems(overrides)
    matching = [p for p in found if p.startswith(key)]
    assert matching, f"no problem starts with {key!r}: {found}"
    for fragment in fragments:
        assert any(fragment in p for p in matching), f"{fragment!r} not in {matching}"


@pytest.mark.parametrize(
    ("region", "message"),
    [
        (None, "aws:region: is not set"),
        ("us-west-9", "aws:region: 'us-west-9' is not a region where EKS is offered"),
    ],
)
def test_region_is_required_and_real(region, message):
    assert any(p.startswith(message) for p in problems({"cluster": DEV_CLUSTER}, region=region))


def test_several_problems_are_reported_together():
    found = problems(
        {"cluster": {**DEV_CLUSTER, "kubernetesVersion": "1.2"}, "network": {"azCount": 9}}, region="mars-1"
    )
    assert len(found) == 3


def test_a_groups_own_checks_are_reported_with_its_field_errors():
    """Not one round at a time: a bad label does not hide the same group's minSize > maxSize."""
    bad = {"name": "gpu", "kind": "gpu", "instanceTypes": ["m6i.large"], "labels": {"x": "a" * 70}, "minSize": 5}
    found = problems({**groups(bad), "storage": {"volumes": [{"name": "Bad Name"}], "throughputMode": "x"}})
    joined = "\n".join(found)
    assert "gpuplane:nodeGroups[1].labels" in joined
    assert "gpuplane:nodeGroups[1].minSize: 5 is greater than maxSize 3" in joined
    # the group's other check (a CPU type in a GPU group) is found too, once the sizes are fixed
    again = problems(groups({**bad, "minSize": 1}))
    assert any("nodeGroups[1].instanceTypes" in p and "have no GPU" in p for p in again)
    # a section whose keys are all broken makes up nothing about the defaults standing in for them
    assert not any("storage" in p and "maxIO" in p for p in found)


@pytest.mark.parametrize("version", ["1.37", "1.31", "v1.36"])
def test_a_prod_sections_other_checks_see_the_prod_defaults(version):
    """A bad version on a prod stack is the one problem: prod's endpoint is private by default, so the cluster
    section checked again without the version must not report dev's "public endpoint needs CIDRs"."""
    found = problems({"profile": "prod", "cluster": {"kubernetesVersion": version}})
    assert len(found) == 1 and found[0].startswith("gpuplane:cluster.kubernetesVersion:"), found
    # a dev stack with the same bad version and no CIDRs has both problems, each its own
    dev = problems({"profile": "dev", "cluster": {"kubernetesVersion": version}})
    assert any("publicAccessCidrs" in p for p in dev) and any("kubernetesVersion" in p for p in dev)


def test_shipped_stacks_are_valid_and_profiles_apply():
    dev, prod = config.load("dev"), config.load("prod")
    assert (dev.platform.profile, prod.platform.profile) == ("dev", "prod")
    assert (dev.platform.network.zone_count, prod.platform.network.zone_count) == (2, 3)
    assert (dev.platform.network.nat_gateways, prod.platform.network.nat_gateways) == ("single", "perAz")
    assert dev.platform.cluster.endpoint_public_access and not prod.platform.cluster.endpoint_public_access
    assert prod.platform.cluster.log_types == ["api", "audit", "authenticator", "controllerManager", "scheduler"]
    assert prod.platform.cluster.log_retention_days == 90
    assert dev.cluster_name == "gpuplane-dev"


def test_profile_default_does_not_override_what_the_user_set():
    cfg = config.parse({"aws:region": "us-east-1", "gpuplane:profile": "prod", "gpuplane:network": {"azCount": 2}}, "p")
    assert cfg.platform.network.az_count == 2
    assert cfg.platform.network.nat_gateways == "perAz"


def test_engine_strings_are_decoded():
    raw = config.from_engine_strings(
        {
            "aws:region": "us-west-2",
            "gpuplane:cluster": '{"publicAccessCidrs": ["1.2.3.4/32"]}',
            "gpuplane:profile": "dev",
        }
    )
    assert config.parse(raw, "dev").platform.cluster.public_access_cidrs == ["1.2.3.4/32"]


def test_direct_callers_get_the_same_validation():
    with pytest.raises(ValueError, match="minSize: 5 is greater than maxSize 1"):
        NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g5.xlarge"], min_size=5, max_size=1)
    args = PlatformArgs.model_validate({"cluster": {"publicAccessCidrs": ["1.2.3.4/32"]}})
    assert [g.name for g in args.resolved_node_groups] == ["system", "gpu"]


def test_missing_stack_file_lists_known_stacks(tmp_path):
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    with pytest.raises(config.ConfigError, match="known stacks: dev"):
        config.load("staging", tmp_path)


STORAGE_BAD_INPUTS: list[tuple[str, dict[str, Any], str, list[str]]] = [
    (
        "volume name used twice",
        {"volumes": [{"name": "models"}, {"name": "models", "path": "/m2"}]},
        "gpuplane:storage.volumes:",
        ["['models'] used more than once"],
    ),
    (
        "provisioned throughput without a value",
        {"throughputMode": "provisioned"},
        "gpuplane:storage.provisionedThroughputMibps:",
        ["is required when throughputMode is 'provisioned'"],
    ),
    (
        "throughput value without provisioned mode",
        {"provisionedThroughputMibps": 100},
        "gpuplane:storage.provisionedThroughputMibps:",
        ["throughputMode is 'elastic'"],
    ),
    ("uid root", {"uid": 0}, "gpuplane:storage.uid:", ["0 is outside 1-4294967294"]),
    ("gid too large", {"gid": 4294967295}, "gpuplane:storage.gid:", ["4294967295 is outside 1-4294967294"]),
    (
        "overlapping static paths",
        {"volumes": [{"name": "a", "path": "/data"}, {"name": "b", "path": "/data/b"}]},
        "gpuplane:storage.volumes:",
        ["/data and /data/b overlap"],
    ),
    (
        "static path inside the dynamic base path",
        {"volumes": [{"name": "a", "path": "/dynamic/a"}]},
        "gpuplane:storage.volumes:",
        ["inside basePath /dynamic"],
    ),
    (
        "bad access point path",
        {"volumes": [{"name": "a", "path": "data"}]},
        "gpuplane:storage.volumes[0].path:",
        ["'data'"],
    ),
    ("bad size", {"volumes": [{"name": "a", "size": "lots"}]}, "gpuplane:storage.volumes[0].size:", ["'lots'"]),
    ("bad perms", {"directoryPerms": "rwx"}, "gpuplane:storage.directoryPerms:", ["'rwx' is not an octal mode"]),
]


@pytest.mark.parametrize(
    ("case", "storage", "key", "fragments"), STORAGE_BAD_INPUTS, ids=[c[0] for c in STORAGE_BAD_INPUTS]
)
def test_bad_storage_input_names_the_key(case, storage, key, fragments):
    found = problems({"cluster": DEV_CLUSTER, "storage": storage})
    matching = [p for p in found if p.startswith(key)]
    assert matching, found
    for fragment in fragments:
        assert any(fragment in p for p in matching), f"{fragment!r} not in {matching}"


@pytest.mark.parametrize("field", ["protect", "retainOnDelete"])
def test_prod_retention_off_needs_the_named_override(field):
    found = problems({"profile": "prod", "storage": {field: False}})
    assert any(p.startswith(f"gpuplane:storage.{field}:") and "allowDataLossOnProd" in p for p in found), found
    ok = config.parse(
        {
            "aws:region": "us-west-2",
            "gpuplane:profile": "prod",
            "gpuplane:storage": {field: False, "allowDataLossOnProd": True},
        },
        "prod",
    )
    assert ok.platform.storage.backups is True


def test_dev_may_switch_retention_off_and_prod_defaults_it_on():
    assert config.load("prod").platform.storage.protect is True
    assert config.load("prod").platform.storage.retain_on_delete is True
    assert config.load("dev").platform.storage.protect is False


def gpu_group(**kw: Any) -> dict[str, Any]:
    return {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], **kw}


GPU_BAD_INPUTS: list[tuple[str, dict[str, Any], str, list[str]]] = [
    (
        "time-slicing replicas below 2",
        gpu_group(sharing={"timeSlicing": {"replicas": 1}}),
        "gpuplane:nodeGroups[1].sharing.timeSlicing.replicas:",
        ["greater than or equal to 2", "(got 1)"],
    ),
    (
        "mig on a gpu without mig",
        gpu_group(driver="operator", sharing={"mig": {"profile": "all-1g.10gb"}}),
        "gpuplane:nodeGroups[1].sharing.mig:",
        ["A10G (g5.xlarge) does not support MIG", "A100"],
    ),
    (
        "mig without the operator",
        gpu_group(instanceTypes=["p4d.24xlarge"], sharing={"mig": {"profile": "all-1g.5gb"}}),
        "gpuplane:nodeGroups[1].sharing.mig:",
        ["needs driver: operator"],
    ),
    (
        "mps together with time-slicing",
        gpu_group(sharing={"timeSlicing": {"replicas": 2}, "mps": {"replicas": 2}}),
        "gpuplane:nodeGroups[1].sharing.mps:",
        ["timeSlicing and mps are both set"],
    ),
    (
        "operator on bottlerocket",
        gpu_group(driver="operator", amiType="BOTTLEROCKET_x86_64_NVIDIA"),
        "gpuplane:nodeGroups[1].driver:",
        ["'operator' does not work on Bottlerocket"],
    ),
    (
        "sharing on bottlerocket",
        gpu_group(amiType="BOTTLEROCKET_x86_64_NVIDIA", sharing={"timeSlicing": {"replicas": 2}}),
        "gpuplane:nodeGroups[1].sharing:",
        ["Bottlerocket runs its own device plugin"],
    ),
    (
        "gpu settings on a cpu group",
        {"name": "cpu2", "instanceTypes": ["m6i.large"], "sharing": {"mps": {"replicas": 2}}},
        "gpuplane:nodeGroups[1].sharing:",
        ["GPU group setting but kind is 'cpu'"],
    ),
    (
        "bad mig profile",
        gpu_group(instanceTypes=["p4d.24xlarge"], driver="operator", sharing={"mig": {"profile": "1g"}}),
        "gpuplane:nodeGroups[1].sharing.mig.profile:",
        ["'1g' is not a MIG config name"],
    ),
]


@pytest.mark.parametrize(("case", "group", "key", "fragments"), GPU_BAD_INPUTS, ids=[c[0] for c in GPU_BAD_INPUTS])
def test_bad_gpu_input_names_the_key(case, group, key, fragments):
    found = problems(groups(group))
    matching = [p for p in found if p.startswith(key)]
    assert matching, found
    for fragment in fragments:
        assert any(fragment in p for p in matching), f"{fragment!r} not in {matching}"


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"cluser": {}}, "gpuplane:cluser: unknown key (did you mean 'cluster'?); allowed keys here:"),
        (
            groups({"name": "gpu", "kind": "gpu", "instanceType": "g5.xlarge"}),
            "gpuplane:nodeGroups[1].instanceType: unknown key (did you mean 'instanceTypes'?)",
        ),
        (groups({"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarg"]}), "did you mean 'g5.xlarge'?"),
    ],
    ids=["top-level key", "nested key", "instance type"],
)
def test_a_near_miss_says_what_was_meant(overrides, expected):
    assert any(expected in p for p in problems(overrides)), problems(overrides)


def test_a_huge_value_is_quoted_by_its_start_only():
    (found,) = [p for p in problems({"bogus": "x" * 900_000}) if p.startswith("gpuplane:bogus:")]
    assert found.endswith("(got '" + "x" * 59 + "… (899942 more characters))")  # its repr's first 60 characters
    assert len(found) < 1000


def test_a_missing_stack_names_the_near_one(tmp_path):
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    with pytest.raises(config.ConfigError) as info:
        config.load("dve", tmp_path)
    assert info.value.problems[0].endswith("known stacks: dev; did you mean 'dev'?")


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda p: p.symlink_to("/dev/zero"), "a device"),
        (lambda p: p.mkdir(), "a folder"),
        (os.mkfifo, "a pipe"),
        (lambda p: p.symlink_to("gone.yaml"), "a link to gone.yaml, which does not exist"),
    ],
)
def test_a_stack_file_that_is_not_a_file_is_named_as_what_it_is(tmp_path, make, what):
    """Never read (a device never ends, a pipe blocks), never listed among the known stacks."""
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    make(tmp_path / "Pulumi.odd.yaml")
    with pytest.raises(config.ConfigError) as info:
        config.load("odd", tmp_path)
    assert info.value.problems == [f"stack 'odd': {tmp_path / 'Pulumi.odd.yaml'} is {what}; allowed: a YAML file"]
    with pytest.raises(config.ConfigError) as info:
        config.load("od", tmp_path)
    assert info.value.problems[0].endswith("known stacks: dev")


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_stacks_folder_that_is_not_one_says_so(tmp_path, kind):
    folder = tmp_path / "stacks"
    if kind == "file":
        folder.write_text("config: {}\n")
    with pytest.raises(config.ConfigError) as info:
        config.load("dev", folder)
    state = "is not a folder" if kind == "file" else "does not exist"
    assert info.value.problems == [
        f"stack 'dev': the stacks folder {folder} {state}; allowed: a folder of Pulumi.<stack>.yaml"
    ]


def test_a_bad_gpuplane_today_is_the_environments_fault_not_a_keys(monkeypatch):
    monkeypatch.setenv(lifecycle.TODAY_ENV, "tomorrow")
    with pytest.raises(config.ConfigError) as info:
        config.load("dev")
    assert info.value.problems == [
        "GPUPLANE_TODAY='tomorrow' is not a date like 2026-11-24; allowed: YYYY-MM-DD, or unset it to judge by "
        "today's date"
    ]
