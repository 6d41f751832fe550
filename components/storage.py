"""SharedStorage component: EFS in every AZ, the CSI driver, and the named ReadWriteMany volumes."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuplane.components import kms, kube_objects, pod_identity
from gpuplane.components.addon_versions import addon_version
from gpuplane.components.config import StorageArgs
from gpuplane.components.control_plane import ControlPlane
from gpuplane.components.network import Network
from gpuplane.components.plan import iam_policies
from gpuplane.components.pod_identity import addon_role
from gpuplane.manifests import storage as objects
from gpuplane.manifests import wellknown


class SharedStorage(pulumi.ComponentResource):
    """An encrypted EFS file system shared by every workload, right by construction.

    Exactly one mount target per private subnet (one per AZ: the API refuses two), a security group that
    admits NFS (TCP 2049) from the cluster's node security group only, a file-system policy that refuses
    non-TLS access, backups when asked, and the EFS CSI driver as an EKS add-on with its own IAM role.

    Teardown order comes from the dependency graph, so `pulumi destroy` succeeds in one pass: Kubernetes
    volumes go before the CSI driver (they depend on it), the driver before the nodes and cluster, mount
    targets before their security group and the file system. On prod only the data is protected and
    retained on delete: the file system and what guards it (its backup policy and file system policy). They
    depend on nothing of the cluster's, so `pulumi destroy --exclude-protected` keeps them and nothing else.
    Access points, volumes and claims are pointers to directories: the next `up` makes them again.
    `existing_file_system_id` imports a file system kept by an earlier stack instead of creating one.
    """

    file_system_id: pulumi.Output[str]
    csi_driver: aws.eks.Addon
    """The EFS CSI add-on: nodes lose their startup taint once its node agent runs."""
    security_group_id: pulumi.Output[str]
    volume_names: list[str]

    def __init__(
        self,
        name: str,
        args: StorageArgs,
        *,
        cluster: ControlPlane,
        namespace: str,
        namespace_resource: pulumi.Resource,
        network: Network | None = None,
        nodes: Sequence[pulumi.Resource] | None = None,
        tags: dict[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`cluster`: whose nodes mount the file system; `namespace`/`namespace_resource`: where the claims go.

        `network`: where the mount targets go (default: the cluster's). `nodes`: what the EFS driver waits for
        (default: the cluster's system node groups). `tags`: added to the cluster's. The cluster's nodes should
        carry the driver's startup taint (`Cluster(startup_taints=[Taint(key=EFS_STARTUP_TAINT_KEY,
        effect="NoExecute")])`), or a pod may start before its volume can mount: the program is told so.
        """
        network = network or cluster.network
        if network is None:
            raise ValueError(f"SharedStorage '{name}': pass network=<Network>: the cluster was made without one")
        nodes = cluster.system_nodes if nodes is None else nodes
        super().__init__("gpuplane:index:SharedStorage", name, None, opts)
        if wellknown.EFS_STARTUP_TAINT_KEY not in cluster.startup_taint_keys:
            pulumi.log.warn(
                f"SharedStorage '{name}': the cluster's nodes carry no {wellknown.EFS_STARTUP_TAINT_KEY} startup "
                "taint, so a pod can start before the EFS driver runs on its node and fail to mount; create the "
                f"cluster with startup_taints=[Taint(key='{wellknown.EFS_STARTUP_TAINT_KEY}', effect='NoExecute')]",
                resource=self,
            )
        tags = {**cluster.tags, **(tags or {})}
        child = pulumi.ResourceOptions(parent=self)
        keep = pulumi.ResourceOptions(parent=self, protect=args.protect, retain_on_delete=args.retain_on_delete)
        # Import, not lookup: the new stack owns the file system again (protected, retained, its backup and
        # TLS policies managed), exactly as the stack that made it did. The tags name the old stack and
        # differ, so they are ignored for the import (Pulumi refuses an import whose inputs differ).
        existing = args.existing_file_system_id

        def adopt(resource_id: str | None) -> pulumi.ResourceOptions:
            if resource_id is None:
                return keep
            return pulumi.ResourceOptions.merge(
                keep, pulumi.ResourceOptions(import_=resource_id, ignore_changes=["tags", "tagsAll"])
            )

        # The data's key is part of the data: kept exactly like the file system. Its policy names no
        # role, cluster or network of this stack (kms.py), so `--exclude-protected` keeps nothing more.
        data_key = (
            aws.kms.Key(
                f"{name}-efs-key",
                description=f"EFS file system data of {cluster.eks_name}",
                enable_key_rotation=True,
                deletion_window_in_days=30,
                policy=kms.key_policy_output(
                    region=cluster.region,
                    administrators=cluster.kms_key_administrators,
                    via_services=["elasticfilesystem"],
                ),
                tags=tags,
                opts=keep,
            )
            if args.customer_managed_key and existing is None
            else None
        )
        fs = aws.efs.FileSystem(
            f"{name}-efs",
            # No fixed creation token: the provider makes a unique one, so a replacement (a new
            # performance mode) creates the new file system before the old one goes.
            encrypted=True,  # only possible at creation
            performance_mode=args.performance_mode,
            throughput_mode=args.throughput_mode,
            provisioned_throughput_in_mibps=args.provisioned_throughput_mibps,
            kms_key_id=data_key.arn if data_key else None,
            tags={**tags, "Name": f"{cluster.eks_name}-shared"},
            # The key is fixed at creation: turning customerManagedKey on for an existing file system must
            # never replace it (that deletes the data); it keeps its key until the data is copied over.
            opts=pulumi.ResourceOptions.merge(adopt(existing), pulumi.ResourceOptions(ignore_changes=["kmsKeyId"])),
        )
        aws.efs.FileSystemPolicy(
            f"{name}-efs-policy",
            file_system_id=fs.id,
            policy=fs.arn.apply(iam_policies.efs_tls_only_policy),
            # Kept with the data: deleting it would drop TLS enforcement on a retained file system.
            # Its id is the file system's (the provider imports it by file system id).
            opts=adopt(existing),
        )
        aws.efs.BackupPolicy(
            f"{name}-efs-backup",
            file_system_id=fs.id,
            backup_policy=aws.efs.BackupPolicyBackupPolicyArgs(status="ENABLED" if args.backups else "DISABLED"),
            # Kept with the data: deleting it sets backups to DISABLED on a retained file system.
            opts=adopt(existing),
        )

        sg = aws.ec2.SecurityGroup(
            f"{name}-efs-sg",
            vpc_id=network.vpc_id,
            description=f"EFS mount targets of {cluster.eks_name}: NFS from the cluster's nodes only",
            revoke_rules_on_delete=True,
            tags={**tags, "Name": f"{cluster.eks_name}-efs"},
            opts=child,
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-efs-nfs-from-nodes",
            security_group_id=sg.id,
            referenced_security_group_id=cluster.cluster_security_group_id,
            ip_protocol="tcp",
            from_port=wellknown.NFS_PORT,
            to_port=wellknown.NFS_PORT,
            description="NFS from EKS nodes (cluster security group)",
            tags=tags,
            opts=child,
        )
        mount_targets = [
            aws.efs.MountTarget(
                f"{name}-efs-mt-{index}",
                file_system_id=fs.id,
                subnet_id=subnet_id,
                security_groups=[sg.id],
                opts=child,
            )
            for index, subnet_id in enumerate(network.private_subnets)
        ]

        driver = self._csi_driver(name, args, cluster, [*cluster.before_compute, *nodes], tags)
        self.csi_driver = driver

        # Kubernetes side. Everything depends on the driver (so it is deleted first) and on the mount
        # targets (a volume is only usable once the file system is reachable in every AZ).
        k8s_deps: list[pulumi.Resource] = [driver, *mount_targets]
        # They go with the cluster: deleting an EFS volume or claim (reclaim policy Retain) changes nothing
        # outside it, so a destroy need not delete them one by one first.
        k8s_opts = pulumi.ResourceOptions(
            parent=self, provider=cluster.provider, depends_on=k8s_deps, deleted_with=cluster.resource
        )
        sc = fs.id.apply(
            lambda fs_id: objects.storage_class(
                fs_id, uid=args.uid, gid=args.gid, base_path=args.base_path, directory_perms=args.directory_perms
            )
        )
        kube_objects.apply(
            f"{name}-sc",
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": objects.STORAGE_CLASS, "labels": {"app.kubernetes.io/managed-by": "gpuplane"}},
                "provisioner": wellknown.EFS_CSI_PROVISIONER,
                "reclaimPolicy": "Retain",
                "volumeBindingMode": "Immediate",
                "parameters": sc.apply(lambda d: d["parameters"]),
            },
            k8s_opts,
        )
        # Not protected: volumes and claims point at directories; the next `up` makes them again. Protecting
        # them would make `--exclude-protected` keep the cluster they depend on (docs/data-safety.md).
        claim_opts = pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[namespace_resource]))
        for volume in args.volumes:
            if volume.provisioning == "static":
                ap = aws.efs.AccessPoint(
                    f"{name}-ap-{volume.name}",
                    file_system_id=fs.id,
                    posix_user=aws.efs.AccessPointPosixUserArgs(uid=args.uid, gid=args.gid),
                    root_directory=aws.efs.AccessPointRootDirectoryArgs(
                        path=volume.resolved_path,
                        creation_info=aws.efs.AccessPointRootDirectoryCreationInfoArgs(
                            owner_uid=args.uid, owner_gid=args.gid, permissions=args.directory_perms
                        ),
                    ),
                    tags={**tags, "Name": f"{cluster.eks_name}-{volume.name}"},
                    # Recreatable: an access point is a path and an identity, not data; a new one for the
                    # same path finds the same files.
                    opts=child,
                )
                pv = pulumi.Output.all(fs.id, ap.id).apply(
                    functools.partial(_static_pv, volume.name, namespace, volume.size)
                )
                kube_objects.apply(
                    f"{name}-pv-{volume.name}",
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolume",
                        "metadata": {
                            "name": objects.persistent_volume_name(namespace, volume.name),
                            "labels": {"app.kubernetes.io/managed-by": "gpuplane", "gpuplane.io/volume": volume.name},
                        },
                        "spec": pv.apply(lambda d: d["spec"]),
                    },
                    claim_opts,
                )
            pvc = objects.persistent_volume_claim(
                volume.name, namespace, provisioning=volume.provisioning, size=volume.size
            )
            kube_objects.apply(f"{name}-pvc-{volume.name}", pvc, claim_opts)

        self.file_system_id = fs.id
        self.security_group_id = sg.id
        self.volume_names = args.volume_names
        self.register_outputs({"fileSystemId": fs.id, "securityGroupId": sg.id, "volumes": self.volume_names})

    def _csi_driver(
        self,
        name: str,
        args: StorageArgs,
        cluster: ControlPlane,
        after: Sequence[pulumi.Resource],
        tags: dict[str, str],
    ) -> aws.eks.Addon:
        """The `aws-efs-csi-driver` add-on, its controller's IAM role bound by Pod Identity or IRSA."""
        child = pulumi.ResourceOptions(parent=self)
        sa, ns = wellknown.EFS_CSI_CONTROLLER_SA, wellknown.EFS_CSI_NAMESPACE
        if args.csi_identity == "podIdentity":
            trust: pulumi.Input[str] = pod_identity.trust(cluster, namespace=ns, service_account=sa, parent=self)
        else:
            trust = pulumi.Output.all(cluster.oidc_provider_arn, cluster.oidc_issuer).apply(
                lambda a: iam_policies.irsa_trust(a[0], a[1], ns, sa, audience=cluster.partition.sts_audience)
            )
        role = aws.iam.Role(
            f"{name}-efs-csi-role",
            assume_role_policy=trust,
            description=f"EFS CSI controller of {cluster.eks_name}",
            tags=tags,
            opts=child,
        )
        attachment = aws.iam.RolePolicyAttachment(
            f"{name}-efs-csi-policy",
            role=role.name,
            policy_arn=cluster.partition.arn(wellknown.POLICY_EFS_CSI),
            opts=child,
        )
        identity: dict[str, Any] = (
            {
                "pod_identity_associations": [
                    aws.eks.AddonPodIdentityAssociationArgs(role_arn=role.arn, service_account=sa)
                ]
            }
            if args.csi_identity == "podIdentity"
            else {"service_account_role_arn": role.arn}
        )
        return aws.eks.Addon(
            f"{name}-addon-efs-csi",
            cluster_name=cluster.cluster_name,
            addon_name=wellknown.ADDON_EFS_CSI,
            addon_version=addon_version(wellknown.ADDON_EFS_CSI, cluster.kubernetes_version, self),
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=tags,
            # The controller is a Deployment: it needs nodes, and the pod identity agent for its credentials.
            # Deleted with the cluster, like every add-on (`Cluster.addon_deletion` says why that is safe here).
            opts=pulumi.ResourceOptions.merge(
                cluster.addon_deletion, pulumi.ResourceOptions(parent=self, depends_on=[attachment, *after])
            ),
            **identity,
        )

    def claim(self, volume: str, mount_path: str, *, read_only: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
        """Pod volume and container mount for a named volume; ValueError naming the defined ones if unknown."""
        return objects.volume_mount(volume, self.volume_names, mount_path, read_only=read_only)


def _static_pv(volume: str, namespace: str, size: str, ids: list[str]) -> dict[str, Any]:
    return objects.static_persistent_volume(volume, namespace, file_system_id=ids[0], access_point_id=ids[1], size=size)


def ebs_csi_driver(
    name: str, *, parent: pulumi.Resource, cluster: ControlPlane, after: Sequence[pulumi.Resource], tags: dict[str, str]
) -> aws.eks.Addon:
    """The `aws-ebs-csi-driver` add-on, its controller's role bound by EKS Pod Identity (AmazonEBSCSIDriverPolicy).

    Installed only when something of the stack needs an EBS volume (`plan.addons.stack_addons`: the in-cluster
    Prometheus). Pod Identity, as for the EFS driver's default and the EKS user guide's "ebs-csi" steps: the role
    trusts `pods.eks.amazonaws.com`, and the add-on's association binds it to `ebs-csi-controller-sa`. Deleted with
    the cluster like every add-on (`Cluster.addon_deletion`); the volumes it made are then the teardown hooks'
    (docs/operations.md, "Prometheus's volume").
    """
    role, attachment = addon_role(
        f"{name}-ebs-csi",
        parent=parent,
        cluster=cluster,
        namespace=wellknown.EBS_CSI_NAMESPACE,
        service_account=wellknown.EBS_CSI_CONTROLLER_SA,
        policy=wellknown.POLICY_EBS_CSI,
        description=f"EBS CSI controller of {cluster.eks_name}",
        tags=tags,
    )
    return aws.eks.Addon(
        f"{name}-addon-ebs-csi",
        cluster_name=cluster.cluster_name,
        addon_name=wellknown.ADDON_EBS_CSI,
        addon_version=addon_version(wellknown.ADDON_EBS_CSI, cluster.kubernetes_version, parent),
        resolve_conflicts_on_create="OVERWRITE",
        resolve_conflicts_on_update="OVERWRITE",
        pod_identity_associations=[
            aws.eks.AddonPodIdentityAssociationArgs(role_arn=role.arn, service_account=wellknown.EBS_CSI_CONTROLLER_SA)
        ],
        tags=tags,
        # The controller is a Deployment: it needs nodes, and the pod identity agent for its credentials.
        opts=pulumi.ResourceOptions.merge(
            cluster.addon_deletion, pulumi.ResourceOptions(parent=parent, depends_on=[attachment, *after])
        ),
    )
