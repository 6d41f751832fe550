"""Cluster component: the EKS control plane, and small verbs that add what runs on it.

The control plane itself and the context it carries (region, Kubernetes version, startup taints, subnets,
tags, when cluster services may start) are `ControlPlane`'s (components/control_plane.py). The verbs here
read like AWS CDK's (`cluster.addNodegroupCapacity`): each takes the child's own args, the rest comes from
the cluster.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from gpuplane.components.autoscaler import ClusterAutoscaler
from gpuplane.components.config import AutoscalerArgs, NodeGroupArgs
from gpuplane.components.control_plane import ControlPlane, coredns_configuration, default_cluster_name
from gpuplane.components.gpu import GpuEnablement
from gpuplane.components.node_group import NodeGroup

__all__ = ["Cluster", "coredns_configuration", "default_cluster_name"]


class Cluster(ControlPlane):
    """An EKS cluster (`ControlPlane`) with verbs that add node groups, GPU support and the autoscaler.

    ```python
    cluster = Cluster("eks", ClusterArgs(), network=network)
    cluster.add_node_group(NodeGroupArgs(name="system", instance_types=["m6i.large"]))
    cluster.add_node_group(NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g6.xlarge"], min_size=0))
    cluster.add_gpu_support()   # device plugin, GPU feature discovery, DCGM exporter for the GPU groups
    cluster.add_autoscaler()    # starts GPU nodes from zero for pending GPU pods
    ```

    The children are parented to the cluster and named after it (`eks-system`, `eks-gpu-stack`,
    `eks-autoscaler`); the components themselves take the same args for a program that wants other names.
    """

    def add_node_group(
        self,
        args: NodeGroupArgs,
        *,
        subnet_ids: pulumi.Input[Sequence[str]] | None = None,
        tags: dict[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> NodeGroup:
        """A managed node group of this cluster (`NodeGroup`): in its subnets, with its tags and startup taints.

        `subnet_ids`: other subnets than the cluster's (a reservation's AZ); `tags`: added to the cluster's.
        """
        return NodeGroup(
            f"{self._prefix}-{args.name}",
            args,
            cluster=self,
            subnet_ids=subnet_ids,
            tags=tags,
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(parent=self), opts),
        )

    def add_gpu_support(
        self,
        *,
        dcgm_exporter: bool = True,
        metrics: bool = False,
        after: Sequence[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> GpuEnablement:
        """What the GPU groups added so far need (`GpuEnablement`): the NVIDIA device plugin, GFD, DCGM exporter.

        Without it a GPU node never advertises `nvidia.com/gpu`. Add it after the node groups: it reads them.
        `metrics`: the Prometheus Operator's CRDs exist (its release among `after`), so ServiceMonitors are made.
        """
        return GpuEnablement(
            f"{self._prefix}-gpu-stack",
            cluster=self,
            dcgm_exporter=dcgm_exporter,
            metrics=metrics,
            after=after,
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(parent=self), opts),
        )

    def add_autoscaler(
        self,
        args: AutoscalerArgs | None = None,
        *,
        after: Sequence[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> ClusterAutoscaler:
        """The cluster-autoscaler (`ClusterAutoscaler`): scales every node group, GPU groups from zero."""
        return ClusterAutoscaler(
            f"{self._prefix}-autoscaler",
            args,
            cluster=self,
            after=after,
            opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(parent=self), opts),
        )
