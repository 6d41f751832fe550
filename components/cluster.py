"""Cluster component: the EKS control plane and what it needs before any node joins."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpuplane.components import kms
from gpuplane.components.addon_versions import addon_version
from gpuplane.components.config import ClusterArgs
from gpuplane.components.destroy import teardown
from gpuplane.components.facts.partition import Partition, of_region
from gpuplane.components.plan import cross_checks, iam_policies
from gpuplane.components.plan.kubeconfig import build_kubeconfig
from gpuplane.manifests import versions


class Cluster(pulumi.ComponentResource):
    """An EKS cluster secured the way terraform-aws-eks v21 does it by default.

    Authentication mode API with access entries (no aws-auth ConfigMap), Secrets envelope-encrypted with
    a KMS key of its own (rotation on), control-plane logs to a log group whose retention we own, the
    private endpoint always on, the public one only for listed CIDRs, an OIDC provider for IRSA, and the
    core add-ons managed by EKS. `add_compute_addons` adds the add-ons that need nodes (coredns) once
    node groups exist; `provider` is the Kubernetes provider everything after the cluster uses.
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
    api_access_rules: list[pulumi.Resource]
    """Ingress rules on 443 of the cluster security group; the Kubernetes provider depends on them."""

    def __init__(
        self,
        name: str,
        args: ClusterArgs,
        *,
        cluster_name: str,
        subnet_ids: pulumi.Input[Sequence[str]],
        region: str,
        tags: dict[str, str] | None = None,
        delete_claim_volumes: bool = False,
        aws_profile: str | None = None,
        assume_roles: Sequence[str] = (),
        api_access_cidrs: Sequence[str] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`delete_claim_volumes`: let the teardown hook delete detached EBS volumes left by claims (dev).

        `aws_profile`/`assume_roles`: the AWS identity of the program, used by the kubeconfig's token command.
        `api_access_cidrs`: networks admitted on 443 to the cluster security group (resolved by the caller:
        `args.api_access_cidrs`, or the VPC CIDR for a private-only endpoint). A private endpoint is only
        reachable through that group, so the Kubernetes provider waits for these rules.
        """
        super().__init__("gpuplane:index:Cluster", name, None, opts)
        # An API endpoint nobody can reach (a documentation or private CIDR): deploys, then locks its user out.
        for warning in cross_checks.cluster_warnings(args):
            pulumi.log.warn(warning, resource=self)
        tags = dict(tags or {})
        child = pulumi.ResourceOptions(parent=self)
        self._prefix = name
        self._tags = tags
        self.eks_name = cluster_name
        self.partition = partition = of_region(region)
        # Read by other components for their own KMS key policies (plain values, no dependency on us).
        self.region = region
        self.kms_key_administrators = list(args.kms_key_administrators)
        # The minor every node group and add-on of this cluster is told (they move with it on an upgrade).
        self.kubernetes_version = args.kubernetes_version

        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=iam_policies.eks_cluster_trust(partition),
            description=f"EKS control plane role of {cluster_name}",
            tags=tags,
            opts=child,
        )
        role_policy = aws.iam.RolePolicyAttachment(
            f"{name}-role-eks", role=role.name, policy_arn=partition.arn(versions.POLICY_EKS_CLUSTER), opts=child
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
        logs_key = (
            kms.logs_key(
                f"{name}-logs-key",
                region=region,
                administrators=args.kms_key_administrators,
                description=f"CloudWatch Logs of {cluster_name}'s control plane",
                tags=tags,
                opts=child,
            )
            if args.encrypt_logs
            else None
        )
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=f"/aws/eks/{cluster_name}/cluster",
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
                    policy_arn=partition.arn(versions.ACCESS_POLICY_CLUSTER_ADMIN),
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
            f"{name}-vpc-cni-policy", role=cni_role.name, policy_arn=partition.arn(versions.POLICY_EKS_CNI), opts=child
        )
        self.before_compute: list[pulumi.Resource] = [
            self._addon(versions.ADDON_POD_IDENTITY_AGENT),
            self._addon(versions.ADDON_VPC_CNI, service_account_role_arn=cni_role.arn, depends_on=[cni_policy]),
            self._addon(versions.ADDON_KUBE_PROXY),
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

    def add_compute_addons(
        self, node_groups: Sequence[pulumi.Resource], *, startup_taints: Sequence[str] = ()
    ) -> list[aws.eks.Addon]:
        """Add the add-ons that need running nodes (coredns), after the given (system) node groups.

        Created before any node exists, coredns stays degraded and its EKS add-on creation times out.
        coredns tolerates the startup taints (it mounts no EFS volume), so it need not wait for the agent
        that lifts them.
        """
        return [
            self._addon(
                versions.ADDON_COREDNS,
                depends_on=node_groups,
                configuration_values=coredns_configuration(startup_taints),
            )
        ]


def coredns_configuration(startup_taints: Sequence[str]) -> dict[str, Any] | None:
    """Configuration values of the coredns add-on: its default tolerations plus the startup taints.

    The add-on's schema (`aws eks describe-addon-configuration --addon-name coredns`) has `tolerations`,
    which replaces the default list, so the defaults (CriticalAddonsOnly, control-plane) are repeated.
    """
    if not startup_taints:
        return None
    return {
        "tolerations": [
            *versions.COREDNS_DEFAULT_TOLERATIONS,
            *({"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints),
        ]
    }
