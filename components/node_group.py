"""NodeGroup component: one EKS managed node group (CPU or GPU) with its launch template and node role."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuplane.components.config import NodeGroupArgs, Taint
from gpuplane.components.control_plane import ControlPlane, deprecated_keyword
from gpuplane.components.plan import capacity, iam_policies, upgrade
from gpuplane.components.plan.gpu_nodes import GpuPlan
from gpuplane.components.plan.node_repair import repair_config
from gpuplane.components.plan.node_template import autoscaler_tags, eks_taints, eks_writes_too, node_labels
from gpuplane.components.plan.upgrade import node_version, waits_for_system_groups
from gpuplane.manifests import wellknown


class NodeGroup(pulumi.ComponentResource):
    """A managed node group whose nodes are locked down and whose scaling the autoscaler understands.

    The launch template requires IMDSv2 with a hop limit of 1 (pods cannot reach the node's instance
    credentials; they use Pod Identity or IRSA) and gives an encrypted gp3 root volume. The AMI type
    follows the instance types (NVIDIA AMI for GPU groups, ARM for Graviton). The node role has only the
    two policies a node needs itself: joining the cluster and pulling images.
    """

    node_group_name: pulumi.Output[str]
    node_group_resources: list[pulumi.Resource]
    """The managed node group itself, for `depends_on` of things that need nodes (not the whole component)."""
    role_arn: pulumi.Output[str]
    autoscaling_group_name: pulumi.Output[str]
    args: NodeGroupArgs
    """The group's own args, as validated (the cluster's GPU plan reads them)."""

    def __init__(
        self,
        name: str,
        args: NodeGroupArgs,
        *,
        cluster: ControlPlane,
        subnet_ids: pulumi.Input[Sequence[str]] | None = None,
        tags: dict[str, str] | None = None,
        startup_taints: Sequence[Taint] | None = None,
        gpu_operator: bool | None = None,
        routes: Sequence[pulumi.Resource] | None = None,
        efa_security_group_ids: Sequence[pulumi.Input[str]] | None = None,
        after: Sequence[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`cluster`: the cluster the nodes join; its subnets, tags and startup taints are the group's.

        `subnet_ids`: other subnets than the cluster's: for a reserved group, only its reservation's AZ
        (plan/capacity.py `subnet_positions`).
        `tags`: added to the cluster's.
        `gpu_operator`: the NVIDIA GPU Operator manages the cluster's GPU nodes (default: some group of the
        cluster, this one included, has `driver: operator`).
        `routes`: what the nodes' subnets need to reach ECR and the API (default: the private routes of the
        cluster's `network`).
        `efa_security_group_ids`: an EFA group's interfaces carry these (default with the cluster's `network`:
        the cluster security group and the network's EFA group); required when `args.efa`.
        `startup_taints`: deprecated, the cluster's (`Cluster(startup_taints=...)`).
        `after`: what the group waits for besides the pre-node add-ons and, for a GPU group of a cluster at
        `nodeUpgradeOrder: systemFirst`, the system groups added to the cluster before it (default: nothing
        more). At `parallel` (the default) every group is created, deleted and moved to a new minor beside the
        others, as terraform-aws-eks and EKS Blueprints do; `systemFirst` is EKS's upgrade order and costs a
        node group's create on every `pulumi up` of a new stack and its delete on every destroy
        (`ClusterArgs.node_upgrade_order`).
        """
        if after is None:
            after = []
        system_first: list[pulumi.Resource] = []
        if waits_for_system_groups(args, cluster.node_upgrade_order):
            system_first = cluster.system_nodes
            if not system_first:
                raise ValueError(
                    f"node group '{args.name}' is a GPU group and cluster.nodeUpgradeOrder is 'systemFirst': "
                    "add the system groups (untainted CPU groups) to the cluster before it, or set "
                    "nodeUpgradeOrder: parallel"
                )
        if startup_taints is None:
            startup_taints = cluster.startup_taints
        else:
            deprecated_keyword(
                "NodeGroup", "startup_taints", "pass startup_taints to Cluster(...); its groups take them"
            )
        if gpu_operator is None:
            gpu_operator = GpuPlan((*cluster.node_group_args, args)).operator
        network = cluster.network
        if routes is None:
            routes = network.private_routes if network is not None else []
        if efa_security_group_ids is None:
            efa_security_group_ids = (
                [cluster.cluster_security_group_id, network.efa_security_group().id]
                if args.efa and network is not None
                else []
            )
        if subnet_ids is None:
            subnet_ids = cluster.subnet_ids
        super().__init__("gpuplane:index:NodeGroup", name, None, opts)
        tags = {**cluster.tags, **(tags or {})}
        self.args = args
        child = pulumi.ResourceOptions(parent=self)
        ami_type = args.resolved_ami_type

        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=iam_policies.node_trust(cluster.partition),
            description=f"Nodes of node group {args.name}",
            tags=tags,
            opts=child,
        )
        attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-role-{suffix}", role=role.name, policy_arn=cluster.partition.arn(arn), opts=child
            )
            for suffix, arn in (
                ("worker", wellknown.POLICY_EKS_WORKER_NODE),
                ("ecr", wellknown.POLICY_ECR_PULL_ONLY),
            )
        ]

        # Bottlerocket boots from a small OS volume (/dev/xvda); images and containers live on /dev/xvdb.
        device = "/dev/xvdb" if ami_type.startswith("BOTTLEROCKET") else "/dev/xvda"
        instance_tags = {**tags, "Name": f"{args.name}"}
        if args.efa and not efa_security_group_ids:
            raise ValueError(f"node group '{args.name}' has efa: true: pass efa_security_group_ids to NodeGroup")
        template = aws.ec2.LaunchTemplate(
            f"{name}-lt",
            description=f"Nodes of node group {args.name}",
            metadata_options={
                "http_endpoint": "enabled",
                "http_tokens": "required",
                "http_put_response_hop_limit": 1,
            },
            block_device_mappings=[
                {
                    "device_name": device,
                    "ebs": {
                        "volume_size": args.resolved_disk_size_gib,
                        "volume_type": "gp3",
                        "encrypted": "true",
                        "delete_on_termination": "true",
                    },
                }
            ],
            tag_specifications=[
                {"resource_type": "instance", "tags": instance_tags},
                {"resource_type": "volume", "tags": instance_tags},
            ],
            update_default_version=True,
            tags=tags,
            **self._reserved_capacity_and_efa(name, args, efa_security_group_ids, tags, cluster.eks_name),
            opts=child,
        )

        # The cluster's minor and the AMI release AWS recommends for it: a new kubernetesVersion moves the nodes.
        node = node_version(args, cluster.kubernetes_version)
        group = aws.eks.NodeGroup(
            f"{name}-ng",
            cluster_name=cluster.cluster_name,
            version=node.version,
            release_version=aws.ssm.get_parameter_output(
                name=node.release_parameter, opts=pulumi.InvokeOutputOptions(parent=self)
            ).value,
            # A prefix, not a fixed name: changing instance types, capacity or AMI type replaces a managed
            # node group, and with a generated name the new group is up before the old one is deleted.
            node_group_name_prefix=f"{args.name}-",
            node_role_arn=role.arn,
            subnet_ids=subnet_ids,
            instance_types=capacity.node_group_instance_types(args),
            ami_type=ami_type,
            capacity_type=args.capacity_type,
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=args.min_size, max_size=args.max_size, desired_size=args.resolved_desired_size
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(
                max_unavailable_percentage=args.max_unavailable_percentage,
                update_strategy=upgrade.update_strategy(args),
            ),
            # EKS replaces (or reboots) nodes on the conditions the node monitoring agent reports: a GPU that
            # fell off the bus leaves a node that still looks Ready (components.plan.node_repair).
            node_repair_config=_repair_args(args),
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            labels=node_labels(args, gpu_operator=gpu_operator),
            # Startup taints (removed by an agent once it runs on the node) are not part of the autoscaler's
            # node template: a template with them would make every pending pod look unschedulable.
            taints=[aws.eks.NodeGroupTaintArgs(**taint) for taint in eks_taints(args, startup_taints)],
            tags=tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                # vpc-cni and the pod identity agent must be on the cluster before a node joins, and the
                # private routes must exist or nodes cannot pull images or reach the endpoint, and never join.
                # At `systemFirst` a GPU group also waits for the system groups (EKS's upgrade order).
                depends_on=[*attachments, *cluster.before_compute, *routes, *system_first, *after],
                # The cluster-autoscaler owns the size once the group exists.
                ignore_changes=["scalingConfig.desiredSize"],
                custom_timeouts=pulumi.CustomTimeouts(update=f"{upgrade.update_timeout_minutes(args)}m"),
            ),
        )
        asg_name = group.resources.apply(lambda r: r[0].autoscaling_groups[0].name)  # type: ignore[index]
        for key, value in autoscaler_tags(args, cluster.eks_name, gpu_operator=gpu_operator).items():
            aws.autoscaling.Tag(
                f"{name}-asg-tag-{_slug(key)}",
                autoscaling_group_name=asg_name,
                tag={"key": key, "value": value, "propagate_at_launch": False},
                # A discovery tag EKS writes too: removing ours must leave EKS's (`eks_writes_too`).
                opts=pulumi.ResourceOptions(
                    parent=self, retain_on_delete=eks_writes_too(key, cluster.eks_name) or None
                ),
            )

        self.node_group_name = group.node_group_name
        self.node_group_resources = [group]
        cluster.record_node_group(args, self.node_group_resources)
        self.role_arn = role.arn
        self.autoscaling_group_name = asg_name
        self.register_outputs(
            {
                "nodeGroupName": self.node_group_name,
                "roleArn": self.role_arn,
                "autoscalingGroupName": asg_name,
            }
        )

    def _reserved_capacity_and_efa(
        self,
        name: str,
        args: NodeGroupArgs,
        security_group_ids: Sequence[pulumi.Input[str]],
        tags: dict[str, str],
        cluster_name: str,
    ) -> dict[str, Any]:
        """Launch template arguments of reserved capacity and EFA: empty for a plain group.

        The market options and reservation target come from plan/capacity.py; EFA adds one interface per
        network card, and, when `resolved_placement_group`, a cluster placement group of the group's own
        (nodes close together on the network; off by default with a reservation target, which a placement
        group the reservation was not made in cannot use).
        """
        extra: dict[str, Any] = dict(capacity.launch_template_capacity(args))
        interfaces = capacity.efa_network_interfaces(args, security_group_ids)
        if interfaces:
            extra["network_interfaces"] = interfaces
        if args.resolved_placement_group:
            group = aws.ec2.PlacementGroup(
                f"{name}-pg",
                name=f"{cluster_name}-{args.name}",
                strategy="cluster",
                tags={**tags, "Name": args.name},
                opts=pulumi.ResourceOptions(parent=self),
            )
            extra["placement"] = {"group_name": group.name}
        return extra


def _repair_args(args: NodeGroupArgs) -> aws.eks.NodeGroupNodeRepairConfigArgs:
    """The plan's repair config as the typed pulumi_aws args (a wrong argument name fails here, not in AWS)."""
    config = dict(repair_config(args))
    overrides = [
        aws.eks.NodeGroupNodeRepairConfigNodeRepairConfigOverrideArgs(**o)
        for o in config.pop("node_repair_config_overrides", [])
    ]
    return aws.eks.NodeGroupNodeRepairConfigArgs(**config, node_repair_config_overrides=overrides or None)


def _slug(key: str) -> str:
    """A resource-name-safe, readable form of a tag key."""
    tail = key.removeprefix(f"{wellknown.CA_TAG_PREFIX}/")
    return "".join(c if c.isalnum() else "-" for c in tail).strip("-")
