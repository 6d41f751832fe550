"""The cluster carries its context: region, Kubernetes version, startup taints, subnets, tags, services point.

Children take `cluster=` and their own args; the keywords that passed the context by hand still work for one
minor release, warn with the new call, and refuse a value that is not the cluster's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest

from gpuplane import (
    AutoscalerArgs,
    Cluster,
    ClusterArgs,
    ClusterAutoscaler,
    GpuEnablement,
    GpuPlan,
    Network,
    NetworkArgs,
    NodeGroup,
    NodeGroupArgs,
)
from gpuplane.components.config import Taint
from gpuplane.infra import mockrun
from gpuplane.manifests import versions, wellknown

CIDRS = ClusterArgs(public_access_cidrs=["198.51.100.0/24"])
SYSTEM = NodeGroupArgs(name="system", instance_types=["t3.large"])
GPU = NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g6.xlarge"], min_size=0)
EFS_TAINT = Taint(key=wellknown.EFS_STARTUP_TAINT_KEY, effect="NoExecute")


def run(body: Callable[[], None], region: str | None = "eu-west-1") -> mockrun.Recording:
    def program() -> dict[str, Any]:
        body()
        return {}

    config = {"aws:region": region} if region else {}
    return mockrun.run(program, "team", "dev", region or "us-east-1", config)


def release(recording: mockrun.Recording, name: str) -> dict[str, Any]:
    found = [r for r in recording.by_type("kubernetes:helm.sh/v3:Release") if r.name == name]
    assert len(found) == 1, [r.name for r in recording.by_type("kubernetes:helm.sh/v3:Release")]
    return found[0].inputs


def test_children_read_region_version_and_startup_taints_from_the_cluster():
    def body() -> None:
        cluster = Cluster("eks", CIDRS, network=Network("net"), startup_taints=[EFS_TAINT], tags={"team": "a"})
        cluster.add_node_group(SYSTEM)
        cluster.add_node_group(GPU, tags={"pool": "gpu"})
        cluster.add_gpu_support()
        cluster.add_autoscaler()

    rec = run(body)
    values = release(rec, "eks-autoscaler-release")["values"]
    assert values["awsRegion"] == "eu-west-1"
    assert values["autoDiscovery"]["clusterName"] == "team-dev"  # <project>-<stack>
    assert values["extraArgs"]["startup-taint"] == wellknown.EFS_STARTUP_TAINT_KEY
    assert values["image"]["tag"] == versions.CLUSTER_AUTOSCALER_IMAGES[CIDRS.kubernetes_version]
    plugin = release(rec, "eks-gpu-stack-nvidia-device-plugin")["values"]
    assert {"key": wellknown.EFS_STARTUP_TAINT_KEY, "operator": "Exists", "effect": "NoExecute"} in plugin[
        "tolerations"
    ]
    key = rec.one("aws:kms/key:Key", "eks-secrets-key").inputs
    assert "eks.eu-west-1.amazonaws.com" in key["policy"]
    groups = {g.name: g.inputs for g in rec.by_type("aws:eks/nodeGroup:NodeGroup")}
    assert groups["eks-gpu-ng"]["tags"] == {"team": "a", "pool": "gpu"}
    assert {"key": wellknown.EFS_STARTUP_TAINT_KEY, "effect": "NO_EXECUTE", "value": ""} in groups["eks-gpu-ng"][
        "taints"
    ]
    # coredns waits for the system group only and tolerates the startup taint
    coredns = next(a for a in rec.by_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "coredns")
    assert {g.name for g in rec.by_type("aws:eks/nodeGroup:NodeGroup") if g.urn in coredns.dependencies} == {
        "eks-system-ng"
    }
    assert wellknown.EFS_STARTUP_TAINT_KEY in coredns.inputs["configurationValues"]


def test_the_old_keywords_warn_with_the_new_call_and_still_work():
    def body() -> None:
        network = Network("net", NetworkArgs(az_count=2), cluster_name="team-dev")
        cluster = Cluster("eks", CIDRS, cluster_name="team-dev", subnet_ids=network.private_subnet_ids)
        system = NodeGroup("system", SYSTEM, cluster=cluster, subnet_ids=network.private_subnet_ids, startup_taints=[])
        NodeGroup("gpu", GPU, cluster=cluster, subnet_ids=network.private_subnet_ids)
        services = [*system.node_group_resources, *cluster.add_compute_addons(system.node_group_resources)]
        version = CIDRS.kubernetes_version
        GpuEnablement(
            "gpu-stack",
            GpuPlan((SYSTEM, GPU)),
            cluster=cluster,
            kubernetes_version=version,
            dcgm_exporter=True,
            startup_taints=[],
            after=services,
        )
        ClusterAutoscaler(
            "autoscaler",
            AutoscalerArgs(),
            cluster=cluster,
            region="eu-west-1",
            kubernetes_version=version,
            startup_taints=[],
            after=services,
        )

    with pytest.warns(DeprecationWarning) as caught:
        rec = run(body)
    messages = {str(w.message) for w in caught}
    assert (
        "NodeGroup(startup_taints=...) is deprecated and goes in the next minor release: pass startup_taints to "
        in (" ".join(messages))
    )
    assert any(m.startswith("ClusterAutoscaler(region=...) is deprecated") and "cluster.region" in m for m in messages)
    assert any(m.startswith("GpuEnablement(kubernetes_version=...) is deprecated") for m in messages)
    # the warning points at the program's line, not at gpuplane's
    assert {w.filename for w in caught} == {__file__}
    assert release(rec, "autoscaler-release")["values"]["awsRegion"] == "eu-west-1"


@pytest.mark.parametrize(
    ("keyword", "value", "message"),
    [
        ("region", "us-east-1", "ClusterAutoscaler: region='us-east-1', but the cluster's is 'eu-west-1'"),
        ("kubernetes_version", "1.30", "ClusterAutoscaler: kubernetes_version='1.30', but the cluster's is"),
    ],
)
def test_an_old_keyword_that_is_not_the_cluster_s_is_refused(keyword, value, message):
    def body() -> None:
        cluster = Cluster("eks", CIDRS, network=Network("net"))
        cluster.add_node_group(SYSTEM)
        ClusterAutoscaler("autoscaler", cluster=cluster, **{keyword: value})

    with pytest.raises(ValueError, match=message), pytest.warns(DeprecationWarning):
        run(body)


def test_a_region_literal_that_is_not_the_stack_s_is_refused():
    def body() -> None:
        Cluster("eks", CIDRS, network=Network("net"), region="us-east-1")

    with pytest.raises(ValueError, match="region='us-east-1', but the stack's aws:region is 'eu-west-1'"):
        run(body)


def test_no_region_anywhere_is_named():
    def body() -> None:
        Cluster("eks", CIDRS, subnet_ids=["subnet-1"])

    with pytest.raises(ValueError, match="no region: set aws:region"):
        run(body, region=None)


def test_an_explicit_provider_needs_its_region_stated_and_the_cluster_uses_it():
    seen: dict[str, str] = {}

    def body() -> None:
        provider = aws.Provider("gov", region="us-gov-west-1")
        opts = pulumi.ResourceOptions(provider=provider)
        with pytest.raises(ValueError, match=r"created with the aws provider 'gov'.*pass region="):
            Cluster("eks", CIDRS, subnet_ids=["subnet-1"], opts=opts)
        cluster = Cluster("eks", CIDRS, subnet_ids=["subnet-1"], region="us-gov-west-1", opts=opts)
        seen["region"], seen["partition"] = cluster.region, cluster.partition.id

    rec = run(body)
    assert seen == {"region": "us-gov-west-1", "partition": "aws-us-gov"}
    policies = [r.inputs["policyArn"] for r in rec.by_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")]
    assert policies and all(p.startswith("arn:aws-us-gov:") for p in policies)


def test_cluster_services_need_a_system_group_first():
    def body() -> None:
        cluster = Cluster("eks", CIDRS, network=Network("net"))
        cluster.add_node_group(GPU)
        cluster.add_autoscaler()

    with pytest.raises(ValueError, match=r"add an untainted CPU group first, e\.g\. cluster\.add_node_group"):
        run(body)
