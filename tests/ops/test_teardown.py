"""The janitor and the teardown hooks on a scene of tagged orphans, look-alikes and another stack's things."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import boto3
import pulumi
import pytest
from typer.testing import CliRunner

from gpuplane.components.destroy import teardown
from gpuplane.infra import config
from gpuplane.infra.aws import janitor
from gpuplane.infra.aws.session import AwsError
from gpuplane.infra.cli import app
from gpuplane.infra.mockrun import Recording

CLUSTER = "gpuplane-dev"
OWNED = {f"kubernetes.io/cluster/{CLUSTER}": "owned"}
LBC = {"elbv2.k8s.aws/cluster": CLUSTER, "service.k8s.aws/resource": "LoadBalancer", "service.k8s.aws/stack": "ml/web"}


def _tags(tags: dict[str, str]) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def _spec(kind: str, tags: dict[str, str]) -> list[dict[str, Any]]:
    return [{"ResourceType": kind, "Tags": _tags(tags)}] if tags else []


@dataclass
class Scene:
    vpc: str
    ours: dict[str, str] = field(default_factory=dict)  # id -> kind
    others: dict[str, str] = field(default_factory=dict)
    volumes: dict[str, str] = field(default_factory=dict)  # our claim volumes


def _vpc(ec2: Any, stack: str) -> tuple[str, list[str]]:
    vpc = ec2.create_vpc(
        CidrBlock="10.0.0.0/16",
        TagSpecifications=_spec("vpc", {"gpuplane:stack": stack, "gpuplane:project": "gpuplane"}),
    )["Vpc"]["VpcId"]
    subnets = [
        ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{i}.0/24", AvailabilityZone=f"us-west-2{az}")["Subnet"][
            "SubnetId"
        ]
        for i, az in enumerate("ab")
    ]
    return vpc, subnets


def build_scene() -> Scene:
    ec2, elbv2, elb = boto3.client("ec2"), boto3.client("elbv2"), boto3.client("elb")
    vpc, subnets = _vpc(ec2, "dev")
    other_vpc, other_subnets = _vpc(ec2, "prod")
    scene = Scene(vpc)

    def sg(name: str, tags: dict[str, str], in_vpc: str = vpc) -> str:
        return ec2.create_security_group(
            GroupName=name, Description=name, VpcId=in_vpc, TagSpecifications=_spec("security-group", tags)
        )["GroupId"]

    def eni(tags: dict[str, str], subnet: str = subnets[0]) -> str:
        return ec2.create_network_interface(SubnetId=subnet, TagSpecifications=_spec("network-interface", tags))[
            "NetworkInterface"
        ]["NetworkInterfaceId"]

    def alb(name: str, tags: dict[str, str], where: list[str] = subnets) -> str:
        kwargs: dict[str, Any] = {"Tags": _tags(tags)} if tags else {}
        return elbv2.create_load_balancer(Name=name, Subnets=where, **kwargs)["LoadBalancers"][0]["LoadBalancerArn"]

    def tg(name: str, tags: dict[str, str], in_vpc: str = vpc) -> str:
        kwargs: dict[str, Any] = {"Tags": _tags(tags)} if tags else {}
        return elbv2.create_target_group(Name=name, Protocol="TCP", Port=80, VpcId=in_vpc, **kwargs)["TargetGroups"][0][
            "TargetGroupArn"
        ]

    def clb(name: str, tags: dict[str, str], where: list[str] = subnets) -> str:
        elb.create_load_balancer(
            LoadBalancerName=name,
            Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 80, "InstancePort": 30080}],
            Subnets=where,
            **({"Tags": _tags(tags)} if tags else {}),
        )
        return name

    def volume(tags: dict[str, str]) -> str:
        return ec2.create_volume(AvailabilityZone="us-west-2a", Size=10, TagSpecifications=_spec("volume", tags))[
            "VolumeId"
        ]

    # ours: one of each kind, identified by each tag convention
    scene.ours[alb("k8s-ml-web-1a2b3c", LBC)] = "load-balancer"
    scene.ours[alb("a1b2c3-intree-nlb", {**OWNED, "kubernetes.io/service-name": "ml/api"})] = "load-balancer"
    scene.ours[tg("k8s-ml-web-tg", LBC)] = "target-group"
    scene.ours[clb("a9f8e7d6c5", {**OWNED, "kubernetes.io/service-name": "default/svc"})] = "classic-load-balancer"
    elb_sg = sg("k8s-elb-a9f8e7d6c5", OWNED)
    scene.ours[elb_sg] = "security-group"
    scene.ours[
        sg(f"k8s-traffic-{CLUSTER}-abc", {"elbv2.k8s.aws/cluster": CLUSTER, "elbv2.k8s.aws/resource": "backend-sg"})
    ] = "security-group"
    scene.ours[eni({"cluster.k8s.amazonaws.com/name": CLUSTER, "node.k8s.amazonaws.com/instance_id": "i-1"})] = (
        "network-interface"
    )
    scene.volumes[
        volume({"ebs.csi.aws.com/cluster": "true", **OWNED, "kubernetes.io/created-for/pvc/name": "data"})
    ] = "volume"
    scene.volumes[volume({"ebs.csi.aws.com/cluster": "true", "KubernetesCluster": CLUSTER})] = "volume"

    # a Pulumi-managed node group whose rule points at the ELB's group (the cloud provider adds such rules)
    node_sg = sg("gpuplane-dev-nodes", {"gpuplane:stack": "dev", "gpuplane:project": "gpuplane", **OWNED})
    ec2.authorize_security_group_ingress(
        GroupId=node_sg,
        IpPermissions=[
            {"IpProtocol": "tcp", "FromPort": 30080, "ToPort": 30080, "UserIdGroupPairs": [{"GroupId": elb_sg}]}
        ],
    )
    scene.others[node_sg] = "security-group"

    # look-alikes: untagged, `shared`, the controller tag alone, deletion protection, another cluster's
    scene.others[alb("k8s-untagged", {})] = "load-balancer"
    protected = alb("k8s-protected", LBC)
    elbv2.modify_load_balancer_attributes(
        LoadBalancerArn=protected, Attributes=[{"Key": "deletion_protection.enabled", "Value": "true"}]
    )
    scene.others[protected] = "load-balancer"
    scene.others[alb("prod-lb", {**LBC, "elbv2.k8s.aws/cluster": "gpuplane-prod"})] = "load-balancer"
    scene.others[tg("untagged-tg", {})] = "target-group"
    scene.others[clb("shared-clb", {f"kubernetes.io/cluster/{CLUSTER}": "shared"})] = "classic-load-balancer"
    scene.others[sg("discovery-only", {"elbv2.k8s.aws/cluster": CLUSTER})] = "security-group"
    scene.others[sg("k8s-elb-lookalike", {})] = "security-group"
    scene.others[sg("other-cluster", {"kubernetes.io/cluster/gpuplane-prod": "owned"})] = "security-group"
    scene.others[eni({})] = "network-interface"
    scene.others[eni({"cluster.k8s.amazonaws.com/name": "gpuplane-prod"})] = "network-interface"
    scene.others[volume({"ebs.csi.aws.com/cluster": "true"})] = "volume"
    scene.others[volume({**OWNED})] = "volume"
    scene.others[volume({"ebs.csi.aws.com/cluster": "true", "KubernetesCluster": "gpuplane-prod"})] = "volume"
    # our cluster's tags, but in another stack's VPC: out of scope
    scene.others[sg("k8s-elb-elsewhere", OWNED, other_vpc)] = "security-group"
    scene.others[eni({"cluster.k8s.amazonaws.com/name": CLUSTER}, other_subnets[0])] = "network-interface"
    scene.others[alb("k8s-elsewhere", LBC, other_subnets)] = "load-balancer"
    return scene


@functools.cache
def _clients(_session: object) -> tuple[Any, Any, Any]:
    """The EC2, ELBv2 and ELB clients of boto3's default session (one per test: `mock_aws` makes a new one)."""
    return boto3.client("ec2"), boto3.client("elbv2"), boto3.client("elb")


def exists(kind: str, ident: str) -> bool:
    ec2, elbv2, elb = _clients(boto3._get_default_session())
    if kind == "load-balancer":
        return any(lb["LoadBalancerArn"] == ident for lb in elbv2.describe_load_balancers()["LoadBalancers"])
    if kind == "target-group":
        return any(t["TargetGroupArn"] == ident for t in elbv2.describe_target_groups()["TargetGroups"])
    if kind == "classic-load-balancer":
        return any(lb["LoadBalancerName"] == ident for lb in elb.describe_load_balancers()["LoadBalancerDescriptions"])
    if kind == "security-group":
        return any(g["GroupId"] == ident for g in ec2.describe_security_groups()["SecurityGroups"])
    if kind == "network-interface":
        return any(n["NetworkInterfaceId"] == ident for n in ec2.describe_network_interfaces()["NetworkInterfaces"])
    return any(v["VolumeId"] == ident for v in ec2.describe_volumes()["Volumes"])


@pytest.fixture
def scene(aws) -> Scene:
    return build_scene()


def test_ownership_rule():
    assert teardown.ownership(OWNED, CLUSTER, "security-group") == f"kubernetes.io/cluster/{CLUSTER}=owned"
    assert teardown.ownership({f"kubernetes.io/cluster/{CLUSTER}": "shared"}, CLUSTER, "security-group") is None
    assert teardown.ownership({**OWNED, "gpuplane:stack": "dev"}, CLUSTER, "security-group") is None
    assert teardown.ownership({"elbv2.k8s.aws/cluster": CLUSTER}, CLUSTER, "security-group") is None
    assert teardown.ownership({"cluster.k8s.amazonaws.com/name": CLUSTER}, CLUSTER, "security-group") is None
    assert teardown.ownership(OWNED, CLUSTER, "volume") is None  # not the CSI driver's


def test_dry_run_deletes_nothing(scene):
    before = {**scene.ours, **scene.volumes, **scene.others}
    result = CliRunner().invoke(app, ["janitor", "dev"])
    assert result.exit_code == 0, result.output
    assert "Dry run: nothing deleted. 9 to delete" in result.output
    assert all(exists(kind, ident) for ident, kind in before.items())


def test_janitor_deletes_ours_and_nothing_else(scene):
    result = CliRunner().invoke(app, ["janitor", "dev", "--delete", "--yes"])
    assert result.exit_code == 0, result.output
    assert [ident for ident, kind in {**scene.ours, **scene.volumes}.items() if exists(kind, ident)] == []
    assert [ident for ident, kind in scene.others.items() if not exists(kind, ident)] == []
    node = next(
        g
        for g in boto3.client("ec2").describe_security_groups()["SecurityGroups"]
        if g["GroupName"] == "gpuplane-dev-nodes"
    )
    assert node["IpPermissions"] == []  # only the rule that pointed at the deleted ELB group went
    again = CliRunner().invoke(app, ["janitor", "dev", "--delete", "--yes"])
    assert again.exit_code == 0 and "Nothing to delete." in again.output


def test_janitor_without_yes_and_without_a_terminal_deletes_nothing(scene):
    result = CliRunner().invoke(app, ["janitor", "dev", "--delete"], input="")
    assert result.exit_code == 1
    assert "no --yes and no terminal" in result.output
    assert all(exists(kind, ident) for ident, kind in scene.ours.items())


def test_janitor_refuses_while_the_cluster_runs(scene):
    role = boto3.client("iam").create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    boto3.client("eks").create_cluster(name=CLUSTER, roleArn=role, resourcesVpcConfig={"subnetIds": []})
    result = CliRunner().invoke(app, ["janitor", "dev", "--delete", "--yes"])
    assert result.exit_code == 1
    assert f"EKS cluster {CLUSTER} is ACTIVE" in result.output
    assert all(exists(kind, ident) for ident, kind in scene.ours.items())


def test_prod_never_includes_volumes(aws):
    cfg = config.load("prod")
    with pytest.raises(AwsError, match="never in scope for a prod stack"):
        janitor.plan(cfg, boto3.session.Session(), include_volumes=True)
    result = CliRunner().invoke(app, ["janitor", "prod", "--volumes"])
    assert result.exit_code == 1 and "Traceback" not in result.output


# --- the hooks ---------------------------------------------------------------------------------------------


def test_hooks_are_bound_where_deletes_would_fail(dev_run: Recording):
    bound = {(r.type, r.name): r.hooks for r in dev_run.resources if r.hooks}
    network_hook = {"before_delete": ["gpuplane-dev-k8s-orphans-before-network"]}
    assert bound == {
        ("aws:eks/cluster:Cluster", "gpuplane-dev-cluster-eks"): {
            "after_delete": ["gpuplane-dev-k8s-orphans-after-cluster"]
        },
        ("aws:ec2/vpc:Vpc", "gpuplane-dev-network-vpc"): network_hook,
        ("aws:ec2/internetGateway:InternetGateway", "gpuplane-dev-network-igw"): network_hook,
        **{
            ("aws:ec2/subnet:Subnet", f"gpuplane-dev-network-{tier}-{i}"): network_hook
            for tier in ("public", "private")
            for i in (0, 1)
        },
    }


def _args(type_: str, outputs: dict[str, Any], id_: str = "x") -> pulumi.ResourceHookArgs:
    return pulumi.ResourceHookArgs(
        urn=f"urn:pulumi:dev::gpuplane::{type_}::n", id=id_, name="n", type=type_, old_outputs=outputs
    )


def test_network_hook_cleans_once_the_cluster_is_gone(scene):
    logs: list[str] = []
    subnet_outputs = {"vpcId": scene.vpc, "arn": "arn:aws:ec2:us-west-2:123456789012:subnet/subnet-1"}
    teardown.run_hook(
        _args("aws:ec2/subnet:Subnet", subnet_outputs),
        CLUSTER,
        wait_for_cluster=True,
        include_volumes=False,
        log=logs.append,
    )
    assert [i for i, kind in scene.ours.items() if exists(kind, i)] == []
    assert all(exists(kind, i) for i, kind in {**scene.others, **scene.volumes}.items())  # volumes stay by default
    assert any("keeping volume" in line for line in logs)


def test_cluster_hook_reads_the_vpc_from_the_cluster_outputs(scene):
    outputs = {"vpcConfig": {"vpcId": scene.vpc}, "arn": f"arn:aws:eks:us-west-2:123456789012:cluster/{CLUSTER}"}
    teardown.run_hook(
        _args("aws:eks/cluster:Cluster", outputs), CLUSTER, wait_for_cluster=False, include_volumes=True, log=print
    )
    assert [i for i, kind in {**scene.ours, **scene.volumes}.items() if exists(kind, i)] == []


def test_hook_waits_for_a_cluster_being_deleted_and_leaves_a_live_one_alone(aws):
    states = iter(["ACTIVE", "DELETING", None])

    class FakeEks:
        status = "ACTIVE"

        def describe_cluster(self, name: str) -> dict[str, Any]:
            state = next(states, None)
            if state is None:
                raise boto3.client("eks").exceptions.ResourceNotFoundException(
                    {"Error": {"Code": "ResourceNotFoundException", "Message": "gone"}}, "DescribeCluster"
                )
            return {"cluster": {"status": state}}

        def get_paginator(self, _op: str) -> Any:
            class P:
                def paginate(self, **_: Any) -> list[dict[str, Any]]:
                    return [{"nodegroups": []}]

            return P()

    clock = [0.0]
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        clock[0] += s

    assert teardown.await_cluster_gone(lambda _s: FakeEks(), CLUSTER, sleep=sleep, clock=lambda: clock[0]) is True
    assert sleeps  # it waited

    class LiveEks(FakeEks):
        def describe_cluster(self, name: str) -> dict[str, Any]:
            return {"cluster": {"status": "ACTIVE"}}

        def get_paginator(self, _op: str) -> Any:
            class P:
                def paginate(self, **_: Any) -> list[dict[str, Any]]:
                    return [{"nodegroups": ["gpu"]}]

            return P()

        def describe_nodegroup(self, **_: Any) -> dict[str, Any]:
            return {"nodegroup": {"status": "ACTIVE"}}

    clock[0] = 0.0
    assert (
        teardown.await_cluster_gone(lambda _s: LiveEks(), CLUSTER, grace_s=60, sleep=sleep, clock=lambda: clock[0])
        is False
    )


def test_already_deleted_halfway_counts_as_done(scene):
    scope = teardown.Scope(CLUSTER, scene.vpc)
    clients = teardown.default_clients("us-west-2")
    findings = teardown.find_orphans(clients, scope)
    halfway = [o for o in findings.orphans if o.kind in ("security-group", "network-interface")]
    teardown.remove_orphans(clients, scope, halfway)
    outcome = teardown.remove_orphans(clients, scope, findings.orphans)
    assert outcome.remaining == []
    assert set(outcome.already_gone) == set(halfway)
    assert [i for i, kind in scene.ours.items() if exists(kind, i)] == []


@pytest.mark.parametrize(("profile", "deletes_volumes"), [("dev", True), ("prod", False)])
def test_platform_lets_the_hooks_delete_claim_volumes_on_dev_only(monkeypatch, run_platform, profile, deletes_volumes):
    seen: list[tuple[str, bool]] = []
    for name in ("cluster_hooks", "network_hooks"):
        original = getattr(teardown, name)

        def record(cluster_name, *, include_volumes=False, _original=original, _name=name):
            seen.append((_name, include_volumes))
            return _original(cluster_name, include_volumes=include_volumes)

        monkeypatch.setattr(teardown, name, record)
    overrides = {"profile": profile}
    if profile == "prod":
        overrides["cluster"] = {"endpointPublicAccess": False}
    run_platform(overrides)
    assert {kind for kind, _ in seen} == {"cluster_hooks", "network_hooks"}
    assert {flag for _, flag in seen} == {deletes_volumes}
