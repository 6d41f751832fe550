"""A consumer program: a VPC, an EKS cluster and one GPU node group, built from gpuplane's components.

This is how another team uses gpuplane without its stack files: build the typed args in code (they are
validated exactly like the stack config), then compose the components. `pulumi up` in this folder
deploys it; `tests/test_example.py` runs it under mocks.
"""

from __future__ import annotations

import pulumi

from gpuplane import Cluster, ClusterArgs, Network, NetworkArgs, NodeGroup, NodeGroupArgs

config = pulumi.Config()
region = pulumi.Config("aws").get("region") or "us-east-1"
name = f"{pulumi.get_project()}-{pulumi.get_stack()}"
tags = {"team": "vision", "gpuplane:stack": pulumi.get_stack(), "gpuplane:project": pulumi.get_project()}

network = Network("net", NetworkArgs(cidr="10.42.0.0/16", az_count=2), cluster_name=name, tags=tags)
cluster = Cluster(
    "eks",
    ClusterArgs(
        endpoint_public_access=True,
        public_access_cidrs=[config.get("adminCidr") or "198.51.100.0/24"],
    ),
    cluster_name=name,
    subnet_ids=network.private_subnet_ids,
    region=region,
    tags=tags,
)
# coredns and other system pods need an untainted group; the GPU group is tainted for GPU pods only.
system = NodeGroup(
    "system",
    NodeGroupArgs(name="system", instance_types=["t3.large"], min_size=1, max_size=2),
    cluster=cluster,
    subnet_ids=network.private_subnet_ids,
    tags=tags,
)
gpu = NodeGroup(
    "gpu",
    NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g6.xlarge"], capacity_type="SPOT", min_size=0, max_size=4),
    cluster=cluster,
    subnet_ids=network.private_subnet_ids,
    tags=tags,
)
# coredns waits for the untainted system group only: a GPU node's boot must not hold it up.
cluster.add_compute_addons(system.node_group_resources)

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("gpuNodeGroup", gpu.node_group_name)
