"""What a real `pulumi up` / `pulumi destroy` needs from the graph, asserted on the rendered plan.

API reachability of a private endpoint, ordering by what each thing needs (coredns, system nodes, routes),
what `pulumi destroy --exclude-protected` keeps, the upgrade policy, partitions and `deleted_with`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuplane.components.platform import Platform
from gpuplane.infra import config, render
from gpuplane.infra.mockrun import RecordedResource, Recording
from tests.conftest import stack_config

ROOT = Path(__file__).resolve().parents[2]
RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
PROVIDER = "pulumi:providers:kubernetes"
RELEASE = "kubernetes:helm.sh/v3:Release"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ADDON = "aws:eks/addon:Addon"
CLUSTER = "aws:eks/cluster:Cluster"
FS = "aws:efs/fileSystem:FileSystem"
# The data, what guards it, and (prod's customerManagedKey) the key it is encrypted with: losing the key
# loses the data, so it is kept exactly like the file system.
DATA_AND_GUARDS = {
    FS,
    "aws:efs/fileSystemPolicy:FileSystemPolicy",
    "aws:efs/backupPolicy:BackupPolicy",
    "aws:kms/key:Key",
}


def timeline() -> ModuleType:
    spec = importlib.util.spec_from_file_location("timeline", ROOT / "benchmarks" / "timeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def api_rules(rec: Recording) -> list[RecordedResource]:
    return [r for r in rec.by_type(RULE) if r.inputs.get("fromPort") == 443]


def addon(rec: Recording, name: str) -> RecordedResource:
    return next(a for a in rec.by_type(ADDON) if a.inputs["addonName"] == name)


def group(rec: Recording, name: str) -> RecordedResource:
    return next(g for g in rec.by_type(NODE_GROUP) if g.inputs["labels"]["gpuplane.io/node-group"] == name)


def closure(rec: Recording, start: list[RecordedResource]) -> set[str]:
    """What the engine keeps with `start` (TransitiveDependenciesOf: dependencies, provider, parent)."""
    seen: set[str] = set()
    todo = [r.urn for r in start]
    while todo:
        urn = todo.pop()
        if urn in seen:
            continue
        seen.add(urn)
        resource = rec.get(urn)
        todo.extend(resource.dependencies)
        if resource.provider:
            todo.append(resource.provider.rsplit("::", 1)[0])
        if resource.parent and "pulumi:pulumi:Stack" not in resource.parent:
            todo.append(resource.parent)
    return seen


# --- 1. API access for private endpoints ------------------------------------------------------------


def test_prod_admits_the_vpc_on_443_and_the_provider_waits_for_it(prod_run):
    (rule,) = api_rules(prod_run)
    cluster = prod_run.one(CLUSTER)
    assert rule.inputs["cidrIpv4"] == "10.0.0.0/16"  # the VPC: a runner inside it can finish `up`
    assert (rule.inputs["ipProtocol"], rule.inputs["toPort"]) == ("tcp", 443)
    assert rule.inputs["securityGroupId"] == cluster.outputs["vpcConfig"]["clusterSecurityGroupId"]
    assert rule.urn in prod_run.one(PROVIDER).dependencies
    assert cluster.inputs["vpcConfig"]["endpointPublicAccess"] is False


def test_dev_with_a_public_endpoint_opens_nothing_unasked(dev_run):
    assert api_rules(dev_run) == []


def test_configured_networks_and_groups_replace_the_default(run_platform):
    rec = run_platform(
        {
            "cluster": {
                "endpointPublicAccess": False,
                "apiAccessCidrs": ["192.168.10.0/24", "172.31.0.0/16"],
                "apiAccessSecurityGroupIds": ["sg-0123456789abcdef0"],
            }
        }
    )
    rules = api_rules(rec)
    assert sorted(r.inputs.get("cidrIpv4", "") for r in rules) == ["", "172.31.0.0/16", "192.168.10.0/24"]
    assert [r.inputs["referencedSecurityGroupId"] for r in rules if "referencedSecurityGroupId" in r.inputs] == [
        "sg-0123456789abcdef0"
    ]
    assert {r.urn for r in rules} <= set(rec.one(PROVIDER).dependencies)


# --- 2. Ordering -----------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["dev_run", "prod_run"])
def test_everything_that_needs_dns_waits_for_coredns_and_no_gpu_group(request, fixture):
    rec: Recording = request.getfixturevalue(fixture)
    coredns = addon(rec, "coredns")
    gpu, system = group(rec, "gpu"), group(rec, "system")
    releases = rec.by_type(RELEASE)
    assert {r.inputs["name"] for r in releases} >= {"cluster-autoscaler", "nvidia-device-plugin"}
    for release in releases:
        assert coredns.urn in release.dependencies, release.name
        assert system.urn in release.dependencies, release.name
        assert gpu.urn not in release.dependencies, release.name
    for core in (*rec.by_type(ADDON), *releases):
        assert gpu.urn not in core.dependencies, core.name
    # coredns tolerates the EFS startup taint instead of waiting for the whole EFS add-on
    assert addon(rec, "aws-efs-csi-driver").urn not in coredns.dependencies
    values = json.loads(coredns.inputs["configurationValues"])
    assert {"key": "efs.csi.aws.com/agent-not-ready", "operator": "Exists", "effect": "NoExecute"} in values[
        "tolerations"
    ]
    assert {"key": "CriticalAddonsOnly", "operator": "Exists"} in values["tolerations"]


def test_autoscaler_tolerates_the_startup_taint(dev_run):
    (release,) = [r for r in dev_run.by_type(RELEASE) if r.inputs["name"] == "cluster-autoscaler"]
    assert release.inputs["values"]["tolerations"] == [
        {"key": "efs.csi.aws.com/agent-not-ready", "operator": "Exists", "effect": "NoExecute"}
    ]


@pytest.mark.parametrize("fixture", ["dev_run", "prod_run"])
def test_node_groups_wait_for_their_routes_and_nat(request, fixture):
    rec: Recording = request.getfixturevalue(fixture)
    private_defaults = [r for r in rec.by_type("aws:ec2/route:Route") if "natGatewayId" in r.inputs]
    associations = rec.by_type("aws:ec2/routeTableAssociation:RouteTableAssociation")
    assert private_defaults and associations
    for ng in rec.by_type(NODE_GROUP):
        assert {r.urn for r in [*private_defaults, *associations]} <= set(ng.dependencies), ng.name


def test_platform_exposes_what_later_workloads_wait_for():
    assert "cluster_services_ready" in Platform.__annotations__


# --- the timeline model ----------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_create_critical_path_is_cluster_cni_one_cpu_group_and_what_follows(request, stack):
    model = timeline()
    rec = request.getfixturevalue(f"{stack}_run")
    plan = render.plan_document(stack_config_for(stack), rec)
    path = model.critical_path(plan, "create")
    slow = [
        (t, n)
        for n, t in zip(path.names(), path.types(), strict=True)
        if model.duration({"custom": True, "type": t}, "create") >= 60
    ]
    assert slow[:4] == [
        (CLUSTER, f"gpuplane-{stack}-cluster-eks"),
        (ADDON, f"gpuplane-{stack}-cluster-addon-vpc-cni"),
        (NODE_GROUP, f"gpuplane-{stack}-system-ng"),
        (ADDON, f"gpuplane-{stack}-cluster-addon-coredns"),
    ]
    # After DNS, one cluster service closes the path: the autoscaler, metrics-server where an HPA (dev's
    # serving example) needs it, or a training stack's JobSet or Kueue chart (installed side by side).
    # Nothing that waits for GPU nodes, NAT or EFS. No chart waits for kube-prometheus-stack: the ServiceMonitors
    # of Kueue and dcgm-exporter are ours, applied after it. Only the AWS managed collector follows the stack
    # (it scrapes the stack's kube-state-metrics), on a stack with AMP.
    stack_release = (RELEASE, f"gpuplane-{stack}-metrics-kube-prometheus-stack")
    assert slow[4:] in (
        [(RELEASE, f"gpuplane-{stack}-autoscaler-release")],
        [(ADDON, f"gpuplane-{stack}-addon-metrics-server")],
        [(RELEASE, f"gpuplane-{stack}-jobset")],
        [(RELEASE, f"gpuplane-{stack}-queue-kueue")],
        [stack_release],
        [stack_release, ("aws:amp/scraper:Scraper", f"gpuplane-{stack}-metrics-collector")],
    ), slow[4:]
    kueue = (RELEASE, f"gpuplane-{stack}-queue-kueue")
    dcgm = (RELEASE, f"gpuplane-{stack}-gpu-dcgm-exporter")
    assert not (stack_release in slow and (kueue in slow or dcgm in slow))
    assert not any("gpu-ng" in name or "nat" in name or "efs" in name for name in path.names())


def test_destroy_skips_objects_deleted_with_the_cluster(prod_run):
    model = timeline()
    plan = render.plan_document(stack_config_for("prod"), prod_run)
    path = model.critical_path(plan, "destroy")
    assert RELEASE not in path.types() and "kubernetes:core/v1:Namespace" not in path.types()
    assert path.types().index(NODE_GROUP) < path.types().index(CLUSTER)


# eks-node-monitoring-agent: node auto repair is on by default and acts on its conditions.
ADDONS = {
    "vpc-cni",
    "kube-proxy",
    "coredns",
    "eks-pod-identity-agent",
    "aws-efs-csi-driver",
    "eks-node-monitoring-agent",
}


# dev's default metrics backend is the in-cluster Prometheus, whose volume needs the EBS CSI driver; prod's is AMP.
@pytest.mark.parametrize(
    ("fixture", "extra"), [("dev_run", {"metrics-server", "aws-ebs-csi-driver"}), ("prod_run", set())]
)
def test_every_eks_addon_is_deleted_with_the_cluster(request, fixture, extra):
    rec: Recording = request.getfixturevalue(fixture)
    cluster = rec.one(CLUSTER)
    addons = rec.by_type(ADDON)
    assert {a.inputs["addonName"] for a in addons} == ADDONS | extra
    assert {a.inputs["addonName"]: a.deleted_with for a in addons} == dict.fromkeys(ADDONS | extra, cluster.urn)


def test_an_addon_is_still_deleted_when_its_cluster_stays(dev_run):
    # deletedWith skips the delete only while the cluster goes too: an add-on removed from the config of a
    # live cluster (here: a plan without the cluster's delete) is deleted as before.
    model = timeline()
    plan = render.plan_document(stack_config_for("dev"), dev_run)
    kept = {"stack": "dev", "resources": [r for r in plan["resources"] if r["type"] != CLUSTER]}
    for resource in kept["resources"]:
        resource["dependencies"] = [d for d in resource["dependencies"] if d != dev_run.one(CLUSTER).urn]
    costs = model.schedule(kept, "destroy").cost
    assert {costs[a.urn] for a in dev_run.by_type(ADDON)} == {30}


@pytest.mark.parametrize("fixture", ["dev_run", "prod_run"])
def test_destroy_path_is_node_groups_then_cluster_then_network(request, fixture):
    model = timeline()
    rec: Recording = request.getfixturevalue(fixture)
    plan = render.plan_document(stack_config_for(fixture.removesuffix("_run")), rec)
    path = model.critical_path(plan, "destroy")
    timing = model.schedule(plan, "destroy")
    # The slow steps on the way: one node group (every group is deleted at once), then the cluster; no add-on,
    # release or namespace.
    slow = [t for t, (_, _, secs) in zip(path.types(), path.steps, strict=True) if secs >= 60]
    assert slow == [NODE_GROUP, CLUSTER]
    assert not {ADDON, RELEASE, "kubernetes:core/v1:Namespace"} & set(path.types())
    assert all(timing.cost[a.urn] == 0 for a in rec.by_type(ADDON))
    # What destroy deletes first: the node groups, with only their own ASG tags before them.
    groups = rec.by_type(NODE_GROUP)
    first = {rec.get(u).type for u, c in timing.cost.items() if c > 0 and timing.start(u) == 0}
    assert "aws:autoscaling/tag:Tag" in first and not first & {ADDON, CLUSTER}
    assert all(timing.start(g.urn) <= 5 for g in groups)
    # What still goes in order: the cluster after every node group, the VPC after the cluster, and
    # vpc-cni's IRSA role only once every node (whose pods' addresses it releases) is gone.
    cluster = rec.one(CLUSTER)
    nodes_done = max(timing.finish[g.urn] for g in groups)
    assert timing.start(cluster.urn) >= nodes_done
    assert timing.start(rec.one("aws:ec2/vpc:Vpc").urn) >= timing.finish[cluster.urn]
    cni_role = next(r for r in rec.by_type("aws:iam/role:Role") if r.name.endswith("-vpc-cni-role"))
    assert timing.start(cni_role.urn) >= nodes_done
    phases = model.destroy_phases(plan)
    assert phases["node groups"][1] <= phases["cluster"][0] < phases["cluster"][1] <= phases["network"][1]
    assert path.total == phases["network"][1]


def test_upgrade_path_is_control_plane_add_on_system_nodes_then_coredns(dev_run):
    model = timeline()
    plan = render.plan_document(stack_config_for("dev"), dev_run)
    path = model.critical_path(plan, "upgrade")
    # metrics-server waits for coredns (it needs DNS), so it closes the path; no GPU group on it.
    assert [t for t in path.types()] == [CLUSTER, ADDON, NODE_GROUP, ADDON, ADDON]
    assert path.names()[2:] == [
        "gpuplane-dev-system-ng",
        "gpuplane-dev-cluster-addon-coredns",
        "gpuplane-dev-addon-metrics-server",
    ]
    # Only what moves at a new minor costs time: no release, namespace or IAM call on the path.
    assert path.total == 600 + 60 + path.steps[2][2] + 60 + 60


@pytest.mark.parametrize(
    ("desired", "percent", "seconds"),
    [(0, 33, 120), (1, 33, 420), (3, 33, 120 + 3 * 300), (10, 50, 120 + 2 * 300), (4, 100, 420)],
)
def test_a_node_group_upgrade_takes_a_batch_of_replacements_per_max_unavailable(desired, percent, seconds):
    model = timeline()
    group = {
        "type": NODE_GROUP,
        "custom": True,
        "inputs": {"scalingConfig": {"desiredSize": desired}, "updateConfig": {"maxUnavailablePercentage": percent}},
    }
    assert model.duration(group, "upgrade") == seconds


def test_timeline_follows_provider_and_parent_edges():
    model = timeline()
    plan: dict[str, Any] = {
        "stack": "t",
        "resources": [
            {"urn": "a", "type": CLUSTER, "custom": True, "dependencies": [], "provider": None, "parent": None},
            {"urn": "p", "type": PROVIDER, "custom": True, "dependencies": ["a"], "provider": None, "parent": None},
            {"urn": "c", "type": "x:y:Z", "custom": False, "dependencies": [], "provider": None, "parent": None},
            {"urn": "r", "type": RELEASE, "custom": True, "dependencies": [], "provider": "p::id", "parent": "c"},
        ],
    }
    assert model.critical_path(plan, "create").names() == ["a", "r"]
    assert model.critical_path(plan, "create").total == 600 + 60
    plan["resources"][3]["deletedWith"] = "a"
    assert model.critical_path(plan, "destroy").names() == ["a"]


def stack_config_for(stack: str) -> Any:
    return config.load(stack)


# --- 3. prod teardown keeps the data and nothing else ----------------------------------------------


def test_exclude_protected_keeps_only_the_data_and_its_guards(prod_run):
    protected = [r for r in prod_run.resources if r.protect]
    assert {r.type for r in protected} == DATA_AND_GUARDS
    assert all(r.retain_on_delete for r in protected)
    kept = [prod_run.get(u) for u in closure(prod_run, protected)]
    cloud = {r.type for r in kept if r.custom and not r.type.startswith("pulumi:providers:")}
    assert cloud == DATA_AND_GUARDS
    assert {r.type for r in kept if not r.custom} == {"gpuplane:index:Platform", "gpuplane:index:SharedStorage"}


def test_a_new_stack_imports_a_retained_file_system(run_platform):
    rec = run_platform({"storage": {"existingFileSystemId": "fs-0123456789abcdef0"}})
    # An imported file system keeps the key it was made with: no new data key is created for it.
    assert not [k for k in rec.by_type("aws:kms/key:Key") if k.name.endswith("-efs-key")]
    for type_ in DATA_AND_GUARDS - {"aws:kms/key:Key"}:
        resource = rec.one(type_)
        assert resource.import_id == "fs-0123456789abcdef0", type_
        assert {"tags", "tagsAll"} <= set(resource.ignore_changes)


# --- 4, 6, 8 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("extra", "support"), [({}, "STANDARD"), ({"upgradePolicy": "EXTENDED"}, "EXTENDED")])
def test_upgrade_policy_is_standard_unless_asked(run_platform, extra, support):
    rec = run_platform({"cluster": {"publicAccessCidrs": ["198.51.100.7/32"], **extra}})
    assert rec.one(CLUSTER).inputs["upgradePolicy"] == {"supportType": support}


@pytest.mark.parametrize(
    ("region", "partition", "ec2"),
    [("cn-north-1", "aws-cn", "ec2.amazonaws.com.cn"), ("us-gov-west-1", "aws-us-gov", "ec2.amazonaws.com")],
)
def test_other_partitions_render_without_commercial_arns(
    run_platform: Callable[..., Recording], region, partition, ec2
):
    rec = run_platform({"network": {"availabilityZones": [f"{region}a", f"{region}b"]}}, region=region)
    text = json.dumps([r.inputs for r in rec.resources]) + json.dumps([r.outputs for r in rec.resources])
    assert "arn:aws:" not in text
    policies = {r.inputs["policyArn"] for r in rec.by_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")}
    assert f"arn:{partition}:iam::aws:policy/AmazonEKSWorkerNodePolicy" in policies
    for association in rec.by_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation"):
        assert association.inputs["policyArn"].startswith(f"arn:{partition}:eks::aws:cluster-access-policy/")
    node_role = next(r for r in rec.by_type("aws:iam/role:Role") if "Nodes of node group" in r.inputs["description"])
    assert json.loads(node_role.inputs["assumeRolePolicy"])["Statement"][0]["Principal"] == {"Service": ec2}


@pytest.mark.parametrize(
    "type_",
    [
        "kubernetes:core/v1:Namespace",
        "kubernetes:core/v1:ConfigMap",
        RELEASE,
        "kubernetes:core/v1:PersistentVolumeClaim",
    ],
)
def test_in_cluster_objects_are_deleted_with_the_cluster(dev_run, type_):
    cluster = dev_run.one(CLUSTER)
    found = dev_run.by_type(type_)
    assert found
    assert all(r.deleted_with == cluster.urn for r in found), type_


def test_stack_config_helper_accepts_other_partitions():
    assert stack_config({"cluster": {"publicAccessCidrs": ["198.51.100.7/32"]}}, region="cn-north-1").region == (
        "cn-north-1"
    )
