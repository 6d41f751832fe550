"""Network component: the VPC, its subnets per AZ, internet and NAT gateways, routes and EKS tags."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from gpuplane.components.config import NetworkArgs
from gpuplane.components.destroy import teardown
from gpuplane.components.facts.subnets import plan_subnets
from gpuplane.components.flow_logs import FlowLogs


class Network(pulumi.ComponentResource):
    """A VPC with one private and one public subnet in each chosen availability zone.

    Private subnets carry the nodes and pods and reach the internet through NAT (one gateway, or one per
    AZ so losing an AZ does not cut the others off). Subnets carry the discovery tags the EKS control
    plane and the AWS load balancer controller look for.
    """

    vpc_id: pulumi.Output[str]
    private_subnet_ids: pulumi.Output[list[str]]
    private_subnets: list[pulumi.Output[str]]
    """One private subnet id per AZ, in AZ order: for resources made once per AZ (EFS mount targets)."""
    public_subnet_ids: pulumi.Output[list[str]]
    private_routes: list[pulumi.Resource]
    """The routes nodes need to reach ECR and the endpoint: private defaults via NAT, the public ones NAT uses."""
    availability_zones: pulumi.Output[list[str]]
    cidr: str
    """The VPC's IPv4 CIDR (`NetworkArgs.cidr`): what a private-only API endpoint admits by default."""

    def __init__(
        self,
        name: str,
        args: NetworkArgs | None = None,
        *,
        cluster_name: str | None = None,
        tags: dict[str, str] | None = None,
        delete_claim_volumes: bool = False,
        region: str | None = None,
        kms_key_administrators: Sequence[str] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`args`: the VPC's settings (default `NetworkArgs()`).

        `cluster_name`: the EKS cluster the subnets are tagged for (default `<project>-<stack>`, the `Cluster`'s
        default too).
        `delete_claim_volumes`: let the teardown hook delete detached EBS volumes left by claims (dev).
        `region` and `kms_key_administrators` are for the flow logs' key (`args.flow_logs`); the region defaults
        to the stack's `aws:region`.
        """
        args = args or NetworkArgs()
        cluster_name = cluster_name or f"{pulumi.get_project()}-{pulumi.get_stack()}"
        region = region or pulumi.Config("aws").get("region")
        super().__init__("gpuplane:index:Network", name, None, opts)
        self.cidr = args.cidr
        tags = dict(tags or {})
        self._name, self._cluster_name, self._tags = name, cluster_name, tags
        self._efa_security_group: aws.ec2.SecurityGroup | None = None
        child = pulumi.ResourceOptions(parent=self)
        # Deletes that Kubernetes' leftovers would block first wait for the cluster, then clean (teardown.py).
        guarded = pulumi.ResourceOptions(
            parent=self, hooks=teardown.network_hooks(cluster_name, include_volumes=delete_claim_volumes)
        )
        cluster_tag = {f"kubernetes.io/cluster/{cluster_name}": "shared"}

        if args.availability_zones:
            azs: pulumi.Output[list[str]] = pulumi.Output.from_input(list(args.availability_zones))
        else:
            available = aws.get_availability_zones_output(
                state="available",
                filters=[{"name": "opt-in-status", "values": ["opt-in-not-required"]}],
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            count = args.az_count

            def _pick(names: list[str]) -> list[str]:
                if len(names) < count:
                    raise ValueError(f"network.azCount is {count} but the region offers only {len(names)} AZs: {names}")
                return sorted(names)[:count]

            azs = available.names.apply(_pick)

        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.cidr,
            enable_dns_hostnames=True,  # EKS nodes register by private DNS name
            enable_dns_support=True,
            tags={**tags, "Name": f"{cluster_name}-vpc"},
            opts=guarded,
        )
        # Take over the VPC's default security group and leave it with no rules (terraform-aws-vpc's
        # `manage_default_security_group`): AWS creates it open to itself, and anything launched without a
        # group lands in it. Nothing of ours uses it; deleting the resource only stops managing it.
        aws.ec2.DefaultSecurityGroup(
            f"{name}-default-sg",
            vpc_id=vpc.id,
            ingress=[],
            egress=[],
            tags={**tags, "Name": f"{cluster_name}-default-closed"},
            opts=child,
        )
        if args.flow_logs:
            if region is None:
                raise ValueError("network.flowLogs needs the region: set aws:region, or pass region= to Network")
            FlowLogs(
                f"{name}-flow-logs",
                vpc_id=vpc.id,
                log_group_name=f"/aws/vpc/{cluster_name}/flow-logs",
                region=region,
                retention_days=args.flow_log_retention_days,
                key_administrators=kms_key_administrators,
                tags=tags,
                opts=child,
            )
        igw = aws.ec2.InternetGateway(
            f"{name}-igw", vpc_id=vpc.id, tags={**tags, "Name": f"{cluster_name}-igw"}, opts=guarded
        )
        public_rt = aws.ec2.RouteTable(
            f"{name}-public-rt", vpc_id=vpc.id, tags={**tags, "Name": f"{cluster_name}-public"}, opts=child
        )
        public_default = aws.ec2.Route(
            f"{name}-public-default",
            route_table_id=public_rt.id,
            destination_cidr_block="0.0.0.0/0",
            gateway_id=igw.id,
            opts=child,
        )

        # The plan is pure and keyed by AZ position, so it is known before the AZ names are.
        positions = [f"az{i}" for i in range(args.zone_count)]
        plan = plan_subnets(args.cidr, positions, args.private_subnet_prefix, args.public_subnet_prefix)
        private_ids: list[pulumi.Output[str]] = []
        public_ids: list[pulumi.Output[str]] = []
        nats: list[aws.ec2.NatGateway] = []
        # NAT traffic leaves through the public subnets' route to the internet gateway: nodes need it too.
        private_routes: list[pulumi.Resource] = [public_default]
        for index, position in enumerate(positions):
            az = azs.apply(functools.partial(_nth, index))
            public_cidr = next(p.cidr for p in plan if p.az == position and p.tier == "public")
            private_cidr = next(p.cidr for p in plan if p.az == position and p.tier == "private")
            public = aws.ec2.Subnet(
                f"{name}-public-{index}",
                vpc_id=vpc.id,
                cidr_block=public_cidr,
                availability_zone=az,
                map_public_ip_on_launch=False,  # only NAT gateways and load balancers live here
                tags={
                    **tags,
                    **cluster_tag,
                    "kubernetes.io/role/elb": "1",
                    "Name": f"{cluster_name}-public-{index}",
                },
                opts=guarded,
            )
            private_routes.append(
                aws.ec2.RouteTableAssociation(
                    f"{name}-public-{index}-rta", subnet_id=public.id, route_table_id=public_rt.id, opts=child
                )
            )
            public_ids.append(public.id)
            if args.nat_gateways == "perAz" or index == 0:
                eip = aws.ec2.Eip(
                    f"{name}-nat-eip-{index}",
                    domain="vpc",
                    tags={**tags, "Name": f"{cluster_name}-nat-{index}"},
                    opts=child,
                )
                nats.append(
                    aws.ec2.NatGateway(
                        f"{name}-nat-{index}",
                        allocation_id=eip.id,
                        subnet_id=public.id,
                        tags={**tags, "Name": f"{cluster_name}-nat-{index}"},
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
                    )
                )
            private = aws.ec2.Subnet(
                f"{name}-private-{index}",
                vpc_id=vpc.id,
                cidr_block=private_cidr,
                availability_zone=az,
                tags={
                    **tags,
                    **cluster_tag,
                    "kubernetes.io/role/internal-elb": "1",
                    "Name": f"{cluster_name}-private-{index}",
                },
                opts=guarded,
            )
            private_rt = aws.ec2.RouteTable(
                f"{name}-private-rt-{index}",
                vpc_id=vpc.id,
                tags={**tags, "Name": f"{cluster_name}-private-{index}"},
                opts=child,
            )
            default_route = aws.ec2.Route(
                f"{name}-private-{index}-default",
                route_table_id=private_rt.id,
                destination_cidr_block="0.0.0.0/0",
                nat_gateway_id=nats[-1].id,
                opts=child,
            )
            association = aws.ec2.RouteTableAssociation(
                f"{name}-private-{index}-rta", subnet_id=private.id, route_table_id=private_rt.id, opts=child
            )
            private_routes.extend([default_route, association])
            private_ids.append(private.id)

        self.vpc_id = vpc.id
        self.private_subnets = private_ids
        self.private_routes = private_routes
        self.private_subnet_ids = pulumi.Output.all(*private_ids).apply(list)
        self.public_subnet_ids = pulumi.Output.all(*public_ids).apply(list)
        self.availability_zones = azs
        self.register_outputs(
            {
                "vpcId": self.vpc_id,
                "privateSubnetIds": self.private_subnet_ids,
                "publicSubnetIds": self.public_subnet_ids,
                "availabilityZones": self.availability_zones,
            }
        )

    def efa_security_group(self) -> aws.ec2.SecurityGroup:
        """The security group of the stack's EFA interfaces, made on first use (issue 31).

        EFA's OS-bypass traffic must be allowed both ways between the interfaces of a run's nodes: all
        protocols in and out, to and from this group itself (EFA user guide, "Prepare an EFA-enabled
        security group"; terraform-aws-eks' `enable_efa_support` makes the same self-referencing pair).
        It comes on top of the cluster security group, which every interface keeps.
        """
        if self._efa_security_group is None:
            child = pulumi.ResourceOptions(parent=self)
            group = aws.ec2.SecurityGroup(
                f"{self._name}-efa-sg",
                vpc_id=self.vpc_id,
                description=f"EFA traffic between the EFA nodes of {self._cluster_name}",
                tags={**self._tags, "Name": f"{self._cluster_name}-efa"},
                opts=child,
            )
            aws.vpc.SecurityGroupIngressRule(
                f"{self._name}-efa-in",
                security_group_id=group.id,
                referenced_security_group_id=group.id,
                ip_protocol="-1",
                description="EFA: all traffic from the stack's EFA interfaces",
                opts=child,
            )
            aws.vpc.SecurityGroupEgressRule(
                f"{self._name}-efa-out",
                security_group_id=group.id,
                referenced_security_group_id=group.id,
                ip_protocol="-1",
                description="EFA: all traffic to the stack's EFA interfaces",
                opts=child,
            )
            self._efa_security_group = group
        return self._efa_security_group


def _nth(index: int, names: list[str]) -> str:
    return names[index]
