"""Platform component: the whole gpuplane stack (network, cluster, node groups) from one typed args object."""

from __future__ import annotations

import pulumi

from gpuplane.components.autoscaler import ClusterAutoscaler
from gpuplane.components.cluster import Cluster
from gpuplane.components.config import PlatformArgs, Taint
from gpuplane.components.gpu import GpuEnablement
from gpuplane.components.gpu_plan import GpuPlan
from gpuplane.components.network import Network
from gpuplane.components.node_group import NodeGroup
from gpuplane.components.storage import SharedStorage
from gpuplane.components.workspace import Workspace
from gpuplane.manifests import versions


class Platform(pulumi.ComponentResource):
    """A GPU-ready EKS platform: what one `pulumi up` of a gpuplane stack creates.

    Children are created in the order AWS needs: the network, the control plane and its pre-node
    add-ons, the node groups, then the add-ons that need nodes. Every AWS resource carries the
    `gpuplane:project` and `gpuplane:stack` tags that the teardown tools key on.
    """

    network: Network
    cluster: Cluster
    node_groups: dict[str, NodeGroup]
    workspace: Workspace

    def __init__(
        self,
        name: str,
        args: PlatformArgs,
        *,
        region: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpuplane:index:Platform", name, None, opts)
        project, stack = pulumi.get_project(), pulumi.get_stack()
        cluster_name = args.cluster_name or f"{project}-{stack}"
        tags = {"gpuplane:project": project, "gpuplane:stack": stack, **args.tags}
        child = pulumi.ResourceOptions(parent=self)

        # Volumes left by claims hold data: the teardown hooks may delete them on dev, never on prod.
        disposable = args.profile != "prod"
        self.network = Network(
            f"{name}-network",
            args.network,
            cluster_name=cluster_name,
            tags=tags,
            delete_claim_volumes=disposable,
            region=region,
            kms_key_administrators=args.cluster.kms_key_administrators,
            opts=child,
        )
        self.cluster = Cluster(
            f"{name}-cluster",
            args.cluster,
            cluster_name=cluster_name,
            subnet_ids=self.network.private_subnet_ids,
            region=region,
            tags=tags,
            delete_claim_volumes=disposable,
            opts=child,
        )
        # New nodes carry the EFS driver's startup taint until its node agent runs there.
        startup = [Taint(key=versions.EFS_STARTUP_TAINT_KEY, effect="NoExecute")] if args.storage.enabled else []
        self.gpu_plan = GpuPlan(tuple(args.resolved_node_groups))
        self.node_groups = {
            group.name: NodeGroup(
                f"{name}-{group.name}",
                group,
                cluster=self.cluster,
                subnet_ids=self.network.private_subnet_ids,
                tags=tags,
                startup_taints=startup,
                gpu_operator=self.gpu_plan.operator,
                opts=child,
            )
            for group in args.resolved_node_groups
        }
        nodes = [resource for group in self.node_groups.values() for resource in group.node_group_resources]
        self.workspace = Workspace(
            f"{name}-workspace",
            namespace_name=args.workload_namespace,
            cluster=self.cluster,
            kubernetes_version=args.cluster.kubernetes_version,
            opts=child,
        )
        self.storage: SharedStorage | None = None
        if args.storage.enabled:
            self.storage = SharedStorage(
                f"{name}-storage",
                args.storage,
                network=self.network,
                cluster=self.cluster,
                namespace=args.workload_namespace,
                namespace_resource=self.workspace.namespace_resource,
                nodes=nodes,
                tags=tags,
                opts=child,
            )
        # Pods that must become Ready (chart Deployments, DaemonSets on tainted nodes) wait for the EFS
        # driver too: until its node agent runs, every node still carries the startup taint.
        schedulable: list[pulumi.Resource] = [*nodes, *([self.storage.csi_driver] if self.storage else [])]
        self.cluster.add_compute_addons(schedulable)
        startup_keys = [t.key for t in startup]
        self.gpu: GpuEnablement | None = None
        if self.gpu_plan.gpu_groups:
            self.gpu = GpuEnablement(
                f"{name}-gpu",
                self.gpu_plan,
                cluster=self.cluster,
                kubernetes_version=args.cluster.kubernetes_version,
                dcgm_exporter=args.observability.dcgm_exporter,
                startup_taints=startup_keys,
                nodes=schedulable,
                opts=child,
            )
        self.autoscaler: ClusterAutoscaler | None = None
        if args.autoscaler.enabled:
            self.autoscaler = ClusterAutoscaler(
                f"{name}-autoscaler",
                args.autoscaler,
                cluster=self.cluster,
                region=region,
                kubernetes_version=args.cluster.kubernetes_version,
                startup_taints=startup_keys,
                nodes=schedulable,
                tags=tags,
                opts=child,
            )
        self.register_outputs(
            {
                "clusterName": self.cluster.cluster_name,
                "vpcId": self.network.vpc_id,
                "nodeGroups": {k: v.node_group_name for k, v in self.node_groups.items()},
            }
        )
