"""A consumer program: a VPC, an EKS cluster, a GPU node group that works, built from gpuplane's components.

This is how another team uses gpuplane without its stack files: build the typed args in code (they are
validated exactly like the stack config), then compose the components. `pulumi up` in this folder
deploys it; `tests/test_example.py` runs it under mocks.
"""

from __future__ import annotations

import pulumi

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

config = pulumi.Config()
region = pulumi.Config("aws").get("region") or "us-east-1"
name = f"{pulumi.get_project()}-{pulumi.get_stack()}"
tags = {"team": "vision", "gpuplane:stack": pulumi.get_stack(), "gpuplane:project": pulumi.get_project()}

network = Network("net", NetworkArgs(cidr="10.42.0.0/16", az_count=2), cluster_name=name, tags=tags)
cluster_args = ClusterArgs(
    endpoint_public_access=True,
    public_access_cidrs=[config.get("adminCidr") or "198.51.100.0/24"],
)
cluster = Cluster(
    "eks",
    cluster_args,
    cluster_name=name,
    subnet_ids=network.private_subnet_ids,
    region=region,
    tags=tags,
)
# coredns and other system pods need an untainted group; the GPU group is tainted for GPU pods only.
system_args = NodeGroupArgs(name="system", instance_types=["t3.large"], min_size=1, max_size=2)
system = NodeGroup(
    "system",
    system_args,
    cluster=cluster,
    subnet_ids=network.private_subnet_ids,
    tags=tags,
)
gpu_args = NodeGroupArgs(
    name="gpu", kind="gpu", instance_types=["g6.xlarge"], capacity_type="SPOT", min_size=0, max_size=4
)
gpu = NodeGroup("gpu", gpu_args, cluster=cluster, subnet_ids=network.private_subnet_ids, tags=tags)
# coredns waits for the untainted system group only: a GPU node's boot must not hold it up.
coredns = cluster.add_compute_addons(system.node_group_resources)
services = [*system.node_group_resources, *coredns]
# The NVIDIA device plugin (and GPU feature discovery, the DCGM exporter): without it the GPU nodes never
# advertise nvidia.com/gpu. GpuPlan reads the groups to decide what to install and how.
GpuEnablement(
    "gpu-stack",
    GpuPlan((system_args, gpu_args)),
    cluster=cluster,
    kubernetes_version=cluster_args.kubernetes_version,
    dcgm_exporter=True,
    startup_taints=[],
    after=services,
)
# The GPU group starts at zero nodes: the autoscaler starts one when a GPU pod is pending.
ClusterAutoscaler(
    "autoscaler",
    AutoscalerArgs(),
    cluster=cluster,
    region=region,
    kubernetes_version=cluster_args.kubernetes_version,
    startup_taints=[],
    after=services,
    tags=tags,
)

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("gpuNodeGroup", gpu.node_group_name)
