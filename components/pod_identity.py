"""An IAM role for one Kubernetes ServiceAccount through EKS Pod Identity: role, inline policy, association.

Why one place: the cluster-autoscaler and the model/data imports each need exactly this trio, and the
association must wait for the inline policy, or the first pod gets credentials that cannot do anything
yet (an S3 import then fails with AccessDenied on its first try). EKS add-ons that bind their own service
account (`podIdentityAssociations`) take `addon_role`: the role and an AWS managed policy, no association.
Every role here trusts Pod Identity only for its own cluster, namespace and service account (`trust`).
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpuplane.components.control_plane import ControlPlane
from gpuplane.components.plan import iam_policies
from gpuplane.manifests import model_import


def trust(
    cluster: ControlPlane, *, namespace: str, service_account: str, parent: pulumi.Resource
) -> pulumi.Output[str]:
    """The role's trust: Pod Identity of `cluster`, for `service_account` in `namespace` only.

    The cluster's ARN is written from its derived name, its region and the account, so the role does not
    wait for the cluster (`iam_policies.pod_identity_trust` says why each condition).
    """
    identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=parent))
    return identity.account_id.apply(
        lambda account_id: iam_policies.pod_identity_trust(
            cluster.partition,
            account_id=account_id,
            region=cluster.region,
            cluster_name=cluster.eks_name,
            namespace=namespace,
            service_account=service_account,
        )
    )


def pod_identity_role(
    prefix: str,
    *,
    parent: pulumi.Resource,
    cluster: ControlPlane,
    namespace: str,
    service_account: str,
    policy: pulumi.Input[str],
    description: str,
    tags: dict[str, str],
    policy_suffix: str = "policy",
    association_suffix: str = "pod-identity",
) -> aws.eks.PodIdentityAssociation:
    """Create `<prefix>-role`, its inline `<prefix>-<policy_suffix>` and the association; return the latter.

    Depend on the returned association: it exists only once the role can do what `policy` allows.
    """
    child = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(
        f"{prefix}-role",
        assume_role_policy=trust(cluster, namespace=namespace, service_account=service_account, parent=parent),
        description=description,
        tags=tags,
        opts=child,
    )
    inline = aws.iam.RolePolicy(f"{prefix}-{policy_suffix}", role=role.id, policy=policy, opts=child)
    return aws.eks.PodIdentityAssociation(
        f"{prefix}-{association_suffix}",
        cluster_name=cluster.cluster_name,
        namespace=namespace,
        service_account=service_account,
        role_arn=role.arn,
        tags=tags,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[inline]),
    )


def addon_role(
    prefix: str,
    *,
    parent: pulumi.Resource,
    cluster: ControlPlane,
    namespace: str,
    service_account: str,
    policy: str,
    description: str,
    tags: dict[str, str],
) -> tuple[aws.iam.Role, aws.iam.RolePolicyAttachment]:
    """`<prefix>-role` trusting EKS Pod Identity, with the AWS managed policy `policy` as `<prefix>-policy`.

    For an EKS add-on whose `podIdentityAssociations` binds the role to its own service account (EKS deletes
    that association with the add-on): `namespace` is the add-on's, `service_account` the one the association
    names. The add-on depends on the returned attachment, so its first pod's credentials can already do what
    the policy allows.
    """
    child = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(
        f"{prefix}-role",
        assume_role_policy=trust(cluster, namespace=namespace, service_account=service_account, parent=parent),
        description=description,
        tags=tags,
        opts=child,
    )
    attachment = aws.iam.RolePolicyAttachment(
        f"{prefix}-policy", role=role.name, policy_arn=cluster.partition.arn(policy), opts=child
    )
    return role, attachment


def s3_import_role(
    parent: pulumi.Resource,
    name: str,
    imp: model_import.Import,
    *,
    cluster: ControlPlane,
    namespace: str,
    tags: dict[str, str],
) -> pulumi.Resource:
    """The role of a model or data import from S3: it may read only the source's bucket and prefix.

    Bound to the import's ServiceAccount in `namespace`; serving's model import and training's data import
    both take it.
    """
    bucket, key = model_import.s3_bucket_and_prefix(imp.source)
    return pod_identity_role(
        f"{name}-import",
        parent=parent,
        cluster=cluster,
        namespace=namespace,
        service_account=imp.service_account,
        policy=iam_policies.s3_read_policy(bucket, key, cluster.partition.id),
        description=f"Read {imp.source} for the {name} import",
        tags=tags,
        policy_suffix="read",
        association_suffix="identity",
    )
