"""The EKS control plane and the context every other component reads from it.

`ControlPlane` is the base of the public `Cluster` (components/cluster.py), which adds the verbs that create
children (`add_node_group`, `add_gpu_support`, `add_autoscaler`). The children type their `cluster=` with this
class, so the verbs' module can import them without an import circle.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpuplane.components import kms
from gpuplane.components.addon_versions import addon_version
from gpuplane.components.config import ClusterArgs, NodeGroupArgs, NodeUpgradeOrder, Taint
from gpuplane.components.config.node_groups import blocks_scheduling
from gpuplane.components.destroy import teardown
from gpuplane.components.facts.partition import Partition, of_region
from gpuplane.components.network import Network
from gpuplane.components.plan import cross_checks, iam_policies
from gpuplane.components.plan.kubeconfig import build_kubeconfig
from gpuplane.manifests import wellknown

# gpuplane's own code: a frame here is never the line of a program of one's own.
_GPUPLANE_DIRS = tuple(Path(__file__).resolve().parent.parent / name for name in ("components", "manifests", "infra"))


def program_line() -> str | None:
    """`<file> line <n>` of the program's own line that led here, or None for gpuplane's own program.

    The program is the `__main__` module the language host (or `gpuplane render`) runs with `runpy`; gpuplane's
    own `infra/__main__.py` is not a program of one's own (its warnings name the stack config's keys), nor is a
    tool's entry point (`python -m pytest`, an installed package's `__main__`).
    """
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        caller = frame.f_back
        if (
            frame.f_globals.get("__name__") == "__main__"
            and caller is not None
            and caller.f_globals.get("__name__") == "runpy"
        ):
            path = Path(frame.f_code.co_filename).resolve()
            installed = {"site-packages", "dist-packages"} & set(path.parts)
            if installed or any(path.is_relative_to(folder) for folder in _GPUPLANE_DIRS):
                return None
            return f"{path.name} line {frame.f_lineno}"
        frame = caller
    return None


def default_cluster_name() -> str:
    """`<project>-<stack>`: physical names derive from it, so two stacks never collide in one account."""
    return f"{pulumi.get_project()}-{pulumi.get_stack()}"


def _aws_provider(opts: pulumi.ResourceOptions | None) -> pulumi.ProviderResource | None:
    """The explicit aws provider a resource created with `opts` would use (its own or its parent's)."""
    if opts is None:
        return None
    if isinstance(opts.provider, pulumi.ProviderResource) and opts.provider.package == "aws":
        return opts.provider
    providers = opts.providers
    found = providers.get("aws") if isinstance(providers, dict) else None
    if found is None and isinstance(providers, list | tuple):
        found = next((p for p in providers if p.package == "aws"), None)
    if found is None and opts.parent is not None:
        inherited: dict[str, pulumi.ProviderResource] = getattr(opts.parent, "_providers", None) or {}
        found = inherited.get("aws")
    return found


def resolve_region(
    name: str, region: str | None, opts: pulumi.ResourceOptions | None, component: str = "Cluster"
) -> str:
    """The region a cluster's resources land in: where its aws provider creates them, never a literal default.

    With the default provider that is the stack's `aws:region`; a `region=` that disagrees with it is refused
    (key policies, IAM ARNs and the autoscaler would name a region the cluster is not in). With an explicit
    provider its region is known only once deployed, so the program states it with `region=`.
    """
    configured = pulumi.Config("aws").get("region")
    provider = _aws_provider(opts)
    if provider is not None:
        if not region:
            raise ValueError(
                f"{component} '{name}': created with the aws provider '{provider._name}', whose region is known only "
                f"once deployed; pass region=<that provider's region> to {component}"
            )
        return region
    if region and configured and region != configured:
        raise ValueError(
            f"{component} '{name}': region={region!r}, but the stack's aws:region is {configured!r}, where the "
            "default aws provider creates the cluster; drop region= (the cluster reads aws:region) or create it "
            "with an aws provider of that region (opts=pulumi.ResourceOptions(provider=...))"
        )
    found = region or configured
    if not found:
        raise ValueError(
            f"{component} '{name}': no region: set aws:region in the stack config (pulumi config set aws:region "
            "us-west-2), or pass region= with an explicit aws provider"
        )
    return found


class ControlPlane(pulumi.ComponentResource):
    """An EKS cluster secured the way terraform-aws-eks v21 does it by default, and the context of its children.

    Authentication mode API with access entries (no aws-auth ConfigMap), Secrets envelope-encrypted with
    a KMS key of its own (rotation on), control-plane logs to a log group whose retention we own, the
    private endpoint always on, the public one only for listed CIDRs, an OIDC provider for IRSA, and the
    core add-ons managed by EKS. `add_compute_addons` adds the add-ons that need nodes (coredns) once
    node groups exist; `provider` is the Kubernetes provider everything after the cluster uses.

    What a child needs and the cluster knows is read from it, never passed again: `region`, `partition`,
    `kubernetes_version`, `startup_taints`, `eks_name`, `subnet_ids`, `tags`, and `services_ready` (what a
    cluster service waits for).
    """

    eks_name: str
    """The EKS cluster's name, known before it exists (it is part of tag keys)."""
    cluster_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    certificate_authority: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]
    cluster_security_group_id: pulumi.Output[str]
    provider: k8s.Provider
    resource: aws.eks.Cluster
    """The EKS cluster itself: `deleted_with` target of in-cluster objects that go away with it."""
    partition: Partition
    region: str
    """Where the cluster is: its aws provider's region (`resolve_region`); every ARN, key policy and chart
    value that names a region takes it from here."""
    kubernetes_version: str
    """The control plane's Kubernetes minor (`ClusterArgs.kubernetes_version`): namespaces' Pod Security
    version, image pins that follow the minor."""
    node_upgrade_order: NodeUpgradeOrder
    """`ClusterArgs.node_upgrade_order`: at `systemFirst` a GPU `NodeGroup` waits for the system groups added
    before it."""
    startup_taints: tuple[Taint, ...]
    """Taints every new node carries until an agent lifts them (the EFS driver's, with shared storage)."""
    subnet_ids: pulumi.Input[Sequence[str]]
    """The private subnets of the control plane's interfaces and, by default, of the nodes."""
    tags: dict[str, str]
    """Tags of every AWS resource of the cluster and its children."""
    network: Network | None
    """The network it was created in, when given: node groups take its private routes from it."""
    api_access_rules: list[pulumi.Resource]
    """Ingress rules on 443 of the cluster security group; the Kubernetes provider depends on them."""

    def __init__(
        self,
        name: str,
        args: ClusterArgs,
        *,
        network: Network | None = None,
        subnet_ids: pulumi.Input[Sequence[str]] | None = None,
        cluster_name: str | None = None,
        region: str | None = None,
        tags: dict[str, str] | None = None,
        startup_taints: Sequence[Taint] = (),
        delete_claim_volumes: bool = False,
        aws_profile: str | None = None,
        assume_roles: Sequence[str] = (),
        api_access_cidrs: Sequence[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`args`: the cluster's settings (who may reach its API: `public_access_cidrs`).

        `network`: the `Network` it runs in (its private subnets; node groups use its routes), or
        `subnet_ids`: the private subnets, for a VPC made elsewhere.
        `cluster_name`: the EKS name (default `<project>-<stack>`).
        `region`: only with an explicit aws provider in `opts` (its region); otherwise the stack's `aws:region`.
        `startup_taints`: taints new nodes carry until an agent lifts them (`Taint(key=EFS_STARTUP_TAINT_KEY,
        effect="NoExecute")` with `SharedStorage`); node groups, coredns and the cluster services take them.
        `delete_claim_volumes`: let the teardown hook delete detached EBS volumes left by claims (dev).
        `aws_profile`/`assume_roles`: the AWS identity of the program, used by the kubeconfig's token command.
        `api_access_cidrs`: networks admitted on 443 to the cluster security group (default
        `args.api_access_cidrs`, else the network's CIDR for a private-only endpoint). A private endpoint is only
        reachable through that group, so the Kubernetes provider waits for these rules.
        """
        # Everything that can be refused is, before anything is registered.
        region = resolve_region(name, region, opts)
        if subnet_ids is None:
            if network is None:
                raise ValueError(f"Cluster '{name}': pass network=<Network> or subnet_ids=<private subnet ids>")
            subnet_ids = network.private_subnet_ids
        if api_access_cidrs is None:
            if args.api_access_cidrs is not None:
                api_access_cidrs = list(args.api_access_cidrs)
            elif not args.endpoint_public_access and network is not None:
                api_access_cidrs = [network.cidr]
            else:
                api_access_cidrs = []
        cluster_name = cluster_name or default_cluster_name()
        super().__init__("gpuplane:index:Cluster", name, None, opts)
        # An API endpoint nobody can reach (a documentation or private CIDR): deploys, then locks its user out.
        # Named as the reader wrote it: the program's line (a program of one's own), or the stack config's key.
        line = program_line()
        cidrs_key = f"{line}: ClusterArgs.public_access_cidrs" if line else "gpuplane:cluster.publicAccessCidrs"
        for warning in cross_checks.cluster_warnings(args, cidrs_key):
            pulumi.log.warn(warning, resource=self)
        tags = dict(tags or {})
        child = pulumi.ResourceOptions(parent=self)
        self._prefix = name
        self._tags = tags
        self.tags = tags
        self.eks_name = cluster_name
        self.partition = partition = of_region(region)
        # Read by other components for their own KMS key policies (plain values, no dependency on us).
        self.region = region
        self.kms_key_administrators = list(args.kms_key_administrators)
        self.kubernetes_version = args.kubernetes_version
        self.node_upgrade_order = args.node_upgrade_order
        self.startup_taints = tuple(startup_taints)
        self.subnet_ids = subnet_ids
        self.network = network
        self._node_groups: list[tuple[NodeGroupArgs, list[pulumi.Resource]]] = []
        self._services: list[pulumi.Resource] | None = None

        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=aws.get_caller_identity_output(
                opts=pulumi.InvokeOutputOptions(parent=self)
            ).account_id.apply(
                lambda account_id: iam_policies.eks_cluster_trust(
                    partition, account_id=account_id, region=region, cluster_name=cluster_name
                )
            ),
            description=f"EKS control plane role of {cluster_name}",
            tags=tags,
            opts=child,
        )
        role_policy = aws.iam.RolePolicyAttachment(
            f"{name}-role-eks", role=role.name, policy_arn=partition.arn(wellknown.POLICY_EKS_CLUSTER), opts=child
        )
        key = aws.kms.Key(
            f"{name}-secrets-key",
            description=f"Envelope encryption of Kubernetes Secrets in {cluster_name}",
            enable_key_rotation=True,
            deletion_window_in_days=args.kms_deletion_window_days,
            policy=kms.key_policy_output(
                region=region, administrators=args.kms_key_administrators, via_services=["eks"]
            ),
            tags=tags,
            opts=child,
        )
        aws.kms.Alias(
            f"{name}-secrets-key-alias",
            name=f"alias/{cluster_name}-eks-secrets",
            target_key_id=key.key_id,
            opts=child,
        )
        # EKS would create this group itself, with no retention; creating it first lets us own retention
        # and delete it with the stack.
        log_group_name = f"/aws/eks/{cluster_name}/cluster"
        logs_key = (
            kms.logs_key(
                f"{name}-logs-key",
                region=region,
                administrators=args.kms_key_administrators,
                log_group_name=log_group_name,
                description=f"CloudWatch Logs of {cluster_name}'s control plane",
                tags=tags,
                opts=child,
            )
            if args.encrypt_logs
            else None
        )
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=log_group_name,
            retention_in_days=args.log_retention_days,
            kms_key_id=logs_key.arn if logs_key else None,
            tags=tags,
            opts=child,
        )

        vpc_config = aws.eks.ClusterVpcConfigArgs(
            subnet_ids=subnet_ids,
            endpoint_private_access=True,
            endpoint_public_access=args.endpoint_public_access,
            public_access_cidrs=list(args.public_access_cidrs) if args.endpoint_public_access else None,
        )
        cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=cluster_name,
            version=args.kubernetes_version,
            role_arn=role.arn,
            vpc_config=vpc_config,
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API",
                bootstrap_cluster_creator_admin_permissions=args.bootstrap_creator_admin,
            ),
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=key.arn), resources=["secrets"]
            ),
            enabled_cluster_log_types=list(args.log_types),
            kubernetes_network_config=aws.eks.ClusterKubernetesNetworkConfigArgs(
                service_ipv4_cidr=args.service_ipv4_cidr, ip_family="ipv4"
            ),
            # The core add-ons are installed below as EKS-managed add-ons instead of the self-managed copies.
            bootstrap_self_managed_addons=False,
            # EKS's default is EXTENDED: a minor past standard support would bill $0.60/h instead of $0.10/h.
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=args.upgrade_policy),
            tags=tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[role_policy, log_group],
                hooks=teardown.cluster_hooks(cluster_name, include_volumes=delete_claim_volumes),
            ),
        )
        self._cluster = cluster
        self.resource = cluster

        access: list[pulumi.Resource] = []
        for index, principal in enumerate(args.admin_principals):
            entry = aws.eks.AccessEntry(
                f"{name}-admin-{index}",
                cluster_name=cluster.name,
                principal_arn=principal,
                type="STANDARD",
                tags=tags,
                opts=child,
            )
            access.append(
                aws.eks.AccessPolicyAssociation(
                    f"{name}-admin-{index}-policy",
                    cluster_name=cluster.name,
                    principal_arn=principal,
                    policy_arn=partition.arn(wellknown.ACCESS_POLICY_CLUSTER_ADMIN),
                    access_scope={"type": "cluster"},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]),
                )
            )

        issuer = cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer or "")  # type: ignore[index]
        oidc = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc", url=issuer, client_id_lists=[partition.sts_audience], tags=tags, opts=child
        )

        # vpc-cni gets its IAM policy through IRSA instead of the node role, so nodes hold only what
        # they need themselves (EKS best practices, "IAM roles for the VPC CNI").
        cni_role = aws.iam.Role(
            f"{name}-vpc-cni-role",
            assume_role_policy=pulumi.Output.all(oidc.arn, issuer).apply(
                lambda a: iam_policies.irsa_trust(
                    a[0], a[1], "kube-system", "aws-node", audience=partition.sts_audience
                )
            ),
            description=f"VPC CNI (aws-node) of {cluster_name}",
            tags=tags,
            opts=child,
        )
        cni_policy = aws.iam.RolePolicyAttachment(
            f"{name}-vpc-cni-policy", role=cni_role.name, policy_arn=partition.arn(wellknown.POLICY_EKS_CNI), opts=child
        )
        self.before_compute: list[pulumi.Resource] = [
            self._addon(wellknown.ADDON_POD_IDENTITY_AGENT),
            self._addon(wellknown.ADDON_VPC_CNI, service_account_role_arn=cni_role.arn, depends_on=[cni_policy]),
            self._addon(wellknown.ADDON_KUBE_PROXY),
        ]

        self.cluster_name = cluster.name
        self.endpoint = cluster.endpoint
        self.certificate_authority = cluster.certificate_authority.apply(lambda ca: ca.data or "")
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(cluster.name, cluster.endpoint, self.certificate_authority).apply(
                lambda a: build_kubeconfig(a[0], a[1], a[2], region, profile=aws_profile, role_arns=tuple(assume_roles))
            )
        )
        self.oidc_provider_arn = oidc.arn
        self.oidc_issuer = issuer
        self.cluster_security_group_id = cluster.vpc_config.apply(lambda v: v.cluster_security_group_id or "")
        self.api_access_rules = self._api_access(name, api_access_cidrs, args.api_access_security_group_ids)
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # Objects are applied only after the admin access entries exist, or the first apply is denied,
            # and after the 443 rules exist, or a private-only endpoint cannot be reached at all.
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[*access, *self.before_compute, *self.api_access_rules]
            ),
        )
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "oidcProviderArn": self.oidc_provider_arn,
                "clusterSecurityGroupId": self.cluster_security_group_id,
            }
        )

    def _api_access(self, name: str, cidrs: Sequence[str], groups: Sequence[str]) -> list[pulumi.Resource]:
        """Ingress on 443 to the cluster security group (EKS user guide, "Cluster API server endpoint").

        The cluster security group is made by EKS, so its rules are separate resources here; they go with
        the group when the cluster is deleted.
        """
        sources: list[tuple[str, dict[str, str]]] = [(f"cidr-{i}", {"cidr_ipv4": c}) for i, c in enumerate(cidrs)] + [
            (f"sg-{i}", {"referenced_security_group_id": g}) for i, g in enumerate(groups)
        ]
        return [
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-api-{suffix}",
                security_group_id=self.cluster_security_group_id,
                ip_protocol="tcp",
                from_port=443,
                to_port=443,
                description="Kubernetes API from where Pulumi and kubectl run",
                tags=self._tags,
                opts=pulumi.ResourceOptions(parent=self),
                **source,
            )
            for suffix, source in sources
        ]

    def _addon(
        self,
        addon_name: str,
        service_account_role_arn: pulumi.Input[str] | None = None,
        depends_on: Sequence[pulumi.Resource] = (),
        configuration_values: dict[str, Any] | None = None,
    ) -> aws.eks.Addon:
        """An EKS-managed add-on of this cluster, deleted with it (`addon_deletion`)."""
        return aws.eks.Addon(
            f"{self._prefix}-addon-{addon_name}",
            cluster_name=self._cluster.name,
            addon_name=addon_name,
            addon_version=addon_version(addon_name, self.kubernetes_version, self),
            service_account_role_arn=service_account_role_arn,
            configuration_values=json.dumps(configuration_values, sort_keys=True) if configuration_values else None,
            # EKS owns these add-ons: take over fields a previous manual install set.
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._tags,
            opts=pulumi.ResourceOptions.merge(
                self.addon_deletion, pulumi.ResourceOptions(parent=self, depends_on=list(depends_on))
            ),
        )

    @property
    def addon_deletion(self) -> pulumi.ResourceOptions:
        """Options of every EKS add-on of this cluster, ours or another component's: deleted with the cluster.

        `pulumi destroy` then never calls DeleteAddon (about a minute each, one after another around the node
        groups); EKS removes a cluster's add-ons, and the Pod Identity associations they own, with the cluster
        (DeleteCluster needs only node groups and Fargate profiles gone first: botocore `eks` model; eksctl's
        `delete cluster` deletes node groups, add-on IAM roles and the control plane, never the add-ons,
        `pkg/actions/cluster/unowned.go`). Safe because no add-on's removal changes anything outside the cluster:
        vpc-cni, kube-proxy, coredns, the Pod Identity agent and metrics-server hold no AWS resources; vpc-cni's
        ENIs go with their nodes, its IRSA role still waits for every node group (node groups depend on the
        add-on) and stray ENIs are the teardown hooks' (`teardown.py`); the EFS CSI driver creates and deletes
        access points only for claims, which are deleted with the cluster too (their StorageClass keeps
        volumes: Retain), so removing the driver first never deleted an access point, and the file system's
        deletion is not blocked by access points (EFS DeleteFileSystem waits only for mount targets). Outside
        a destroy (an add-on removed from the config) the add-on is deleted as before.
        """
        return pulumi.ResourceOptions(deleted_with=self._cluster)

    @property
    def startup_taint_keys(self) -> list[str]:
        """The startup taints' keys: what cluster services tolerate (none of them mounts EFS)."""
        return [t.key for t in self.startup_taints]

    def record_node_group(self, args: NodeGroupArgs, node_groups: Sequence[pulumi.Resource]) -> None:
        """Called by `NodeGroup`: the cluster knows its groups (GPU plan, system groups for its services)."""
        self._node_groups.append((args, list(node_groups)))

    @property
    def node_group_args(self) -> list[NodeGroupArgs]:
        """The args of every node group added to this cluster so far, in the order they were added."""
        return [args for args, _ in self._node_groups]

    @property
    def system_nodes(self) -> list[pulumi.Resource]:
        """The managed node groups of the untainted CPU groups added so far: where cluster services run."""
        return [r for args, nodes in self._node_groups if _is_system(args) for r in nodes]

    @property
    def services_ready(self) -> list[pulumi.Resource]:
        """What anything that runs pods in the cluster waits for: the system node groups and coredns.

        The system groups are the untainted CPU groups added so far; coredns is added after them the first
        time this is read (or `add_compute_addons` was called). Never the GPU groups: a GPU node's boot must
        not hold up `pulumi up`.
        """
        if self._services is None:
            system = self.system_nodes
            if not system:
                raise ValueError(
                    f"Cluster '{self._prefix}': cluster services need a node group that runs them: add an "
                    "untainted CPU group first, e.g. cluster.add_node_group(NodeGroupArgs(name='system', "
                    "instance_types=['m6i.large']))"
                )
            self.add_compute_addons(system)
        assert self._services is not None  # set by add_compute_addons
        return list(self._services)

    def add_compute_addons(
        self, node_groups: Sequence[pulumi.Resource], *, startup_taints: Sequence[str] | None = None
    ) -> list[aws.eks.Addon]:
        """Add the add-ons that need running nodes (coredns), after the given (system) node groups.

        Created before any node exists, coredns stays degraded and its EKS add-on creation times out.
        coredns tolerates the startup taints (default: the cluster's; it mounts no EFS volume), so it need not
        wait for the agent that lifts them. Once only: `services_ready` is then these groups and coredns.
        """
        if self._services is not None:
            raise ValueError(f"Cluster '{self._prefix}': coredns is already added (add_compute_addons runs once)")
        keys = self.startup_taint_keys if startup_taints is None else list(startup_taints)
        addons = [
            self._addon(
                wellknown.ADDON_COREDNS,
                depends_on=node_groups,
                configuration_values=coredns_configuration(keys),
            )
        ]
        self._services = [*node_groups, *addons]
        return addons


def _is_system(args: NodeGroupArgs) -> bool:
    """An untainted CPU group: where cluster services run (`PlatformArgs.system_node_groups`' rule)."""
    return args.kind == "cpu" and not blocks_scheduling(args)


def coredns_configuration(startup_taints: Sequence[str]) -> dict[str, Any] | None:
    """Configuration values of the coredns add-on: its default tolerations plus the startup taints.

    The add-on's schema (`aws eks describe-addon-configuration --addon-name coredns`) has `tolerations`,
    which replaces the default list, so the defaults (CriticalAddonsOnly, control-plane) are repeated.
    """
    if not startup_taints:
        return None
    return {
        "tolerations": [
            *wellknown.COREDNS_DEFAULT_TOLERATIONS,
            *({"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints),
        ]
    }


def deprecated_keyword(component: str, keyword: str, instead: str, *, stacklevel: int = 3) -> None:
    """Warn that `keyword` is read from the cluster now (kept for one minor release), naming the new call.

    `stacklevel`: the warning points at the program's line that passed the keyword (the component's caller).
    """
    warnings.warn(
        f"{component}({keyword}=...) is deprecated and goes in the next minor release: {instead}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def deprecated_context(component: str, keyword: str, given: object, cluster_value: object) -> None:
    """A deprecated keyword whose value the cluster knows: warn, and refuse a value that is not the cluster's.

    Another region or Kubernetes minor than the cluster's deploys, then fails: a key policy for another
    region's EKS, an autoscaler that cannot find its node groups, images of another minor.
    """
    deprecated_keyword(
        component, keyword, f"drop it, the cluster's is used (cluster.{keyword} = {cluster_value!r})", stacklevel=4
    )
    if given != cluster_value:
        raise ValueError(
            f"{component}: {keyword}={given!r}, but the cluster's is {cluster_value!r}; drop {keyword}= (the "
            "cluster's is used)"
        )
