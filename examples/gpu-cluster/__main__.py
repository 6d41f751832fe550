"""A consumer program: a VPC, an EKS cluster, a GPU node group that works, built from gpuplane's components.

This is how another team uses gpuplane without its stack files: build the typed args in code (they are
validated exactly like the stack config), then compose the components. Nothing the cluster knows is passed
again: the region is the stack's `aws:region`, names derive from `<project>-<stack>`, and the node groups,
the GPU stack and the autoscaler read the cluster's subnets, tags, Kubernetes version and startup taints.
`pulumi up` in this folder deploys it; `tests/test_example.py` runs it under mocks.
"""

from __future__ import annotations

import pulumi

from gpuplane import AutoscalerArgs, Cluster, ClusterArgs, Network, NetworkArgs, NodeGroupArgs

config = pulumi.Config()
tags = {"team": "vision", "gpuplane:stack": pulumi.get_stack(), "gpuplane:project": pulumi.get_project()}

network = Network("net", NetworkArgs(cidr="10.42.0.0/16", az_count=2), tags=tags)
cluster_args = ClusterArgs(
    endpoint_public_access=True,
    public_access_cidrs=[config.get("adminCidr") or "198.51.100.0/24"],
)
cluster = Cluster("eks", cluster_args, network=network, tags=tags)
# coredns and other system pods need an untainted group; the GPU group is tainted for GPU pods only.
cluster.add_node_group(NodeGroupArgs(name="system", instance_types=["t3.large"], min_size=1, max_size=2))
gpu = cluster.add_node_group(
    NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g6.xlarge"], capacity_type="SPOT", min_size=0, max_size=4)
)
# The NVIDIA device plugin (and GPU feature discovery, the DCGM exporter): without it the GPU nodes never
# advertise nvidia.com/gpu. It reads the groups added above to decide what to install and how; it and the
# autoscaler wait for the system group and coredns only, never for a GPU node's boot.
cluster.add_gpu_support()
# The GPU group starts at zero nodes: the autoscaler starts one when a GPU pod is pending.
cluster.add_autoscaler(AutoscalerArgs(scale_down_unneeded_time="5m"))

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("region", cluster.region)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("gpuNodeGroup", gpu.node_group_name)
