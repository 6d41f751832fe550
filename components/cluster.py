"""Cluster component: the EKS control plane and what it needs before any node joins."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpuplane.components import iam_policies, kms, teardown
from gpuplane.components.config import ClusterArgs
from gpuplane.components.kubeconfig import build_kubeconfig
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
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`delete_claim_volumes`: let the teardown hook delete detached EBS volumes left by claims (dev)."""
        super().__init__("gpuplane:index:Cluster", name, None, opts)
        tags = dict(tags or {})
        child = pulumi.ResourceOptions(parent=self)
        self._prefix = name
        self._tags = tags
        self.eks_name = cluster_name
        # Read by other components for their own KMS key policies (plain values, no dependency on us).
        self.region = region
        self.kms_key_administrators = list(args.kms_key_administrators)

        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=iam_policies.eks_cluster_trust(),
            description=f"EKS control plane role of {cluster_name}",
            tags=tags,
            opts=child,
        )
        role_policy = aws.iam.RolePolicyAttachment(
            f"{name}-role-eks", role=role.name, policy_arn=versions.POLICY_EKS_CLUSTER, opts=child
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
            tags=tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[role_policy, log_group],
                hooks=teardown.cluster_hooks(cluster_name, include_volumes=delete_claim_volumes),
            ),
        )
        self._cluster = cluster

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
                    policy_arn=versions.ACCESS_POLICY_CLUSTER_ADMIN,
                    access_scope={"type": "cluster"},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]),
                )
            )

        issuer = cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer or "")  # type: ignore[index]
        oidc = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc", url=issuer, client_id_lists=["sts.amazonaws.com"], tags=tags, opts=child
        )

        # vpc-cni gets its IAM policy through IRSA instead of the node role, so nodes hold only what
        # they need themselves (EKS best practices, "IAM roles for the VPC CNI").
        cni_role = aws.iam.Role(
            f"{name}-vpc-cni-role",
            assume_role_policy=pulumi.Output.all(oidc.arn, issuer).apply(
                lambda a: iam_policies.irsa_trust(a[0], a[1], "kube-system", "aws-node")
            ),
            description=f"VPC CNI (aws-node) of {cluster_name}",
            tags=tags,
            opts=child,
        )
        cni_policy = aws.iam.RolePolicyAttachment(
            f"{name}-vpc-cni-policy", role=cni_role.name, policy_arn=versions.POLICY_EKS_CNI, opts=child
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
                lambda a: build_kubeconfig(a[0], a[1], a[2], region)
            )
        )
        self.oidc_provider_arn = oidc.arn
        self.oidc_issuer = issuer
        self.cluster_security_group_id = cluster.vpc_config.apply(lambda v: v.cluster_security_group_id or "")
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # Objects are applied only after the admin access entries exist, or the first apply is denied.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*access, *self.before_compute]),
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

    def _addon(
        self,
        addon_name: str,
        service_account_role_arn: pulumi.Input[str] | None = None,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> aws.eks.Addon:
        return aws.eks.Addon(
            f"{self._prefix}-addon-{addon_name}",
            cluster_name=self._cluster.name,
            addon_name=addon_name,
            service_account_role_arn=service_account_role_arn,
            # EKS owns these add-ons: take over fields a previous manual install set.
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(depends_on)),
        )

    def add_compute_addons(self, node_groups: Sequence[pulumi.Resource]) -> list[aws.eks.Addon]:
        """Add the add-ons that need running nodes (coredns), after the given node groups.

        Created before any node exists, coredns stays degraded and its EKS add-on creation times out.
        """
        return [self._addon(versions.ADDON_COREDNS, depends_on=node_groups)]
