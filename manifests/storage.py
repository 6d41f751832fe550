"""Kubernetes objects for EFS storage: the dynamic StorageClass, and the named data volumes.

Why named volumes are static, access-point-backed PersistentVolumes by default: their directory
(`/models`, `/datasets`, `/logs`) is fixed and owned by the stack, so a recreated cluster, or another
stack that imports the file system, binds to the same data; the access point is a Pulumi resource, so a
prod stack's protection covers it; and the reclaim policy is Retain. A dynamic claim instead gets a new,
uniquely named directory from the driver each time it is created, which is right for scratch space
and per-run output, and wrong for a dataset that must outlive the claim. Both are offered per volume.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from gpuplane.manifests import wellknown

STORAGE_CLASS: Final = "efs-ap"
Provisioning = Literal["static", "dynamic"]


def storage_class(file_system_id: str, *, uid: int, gid: int, base_path: str, directory_perms: str) -> dict[str, Any]:
    """The dynamic `efs-ap` StorageClass: one access point per claim, owned by the workloads' uid/gid.

    uid/gid match the workloads' `runAsUser`/`runAsGroup`: access points enforce their identity and the
    driver ignores `fsGroup`, so a mismatch shows up as "permission denied" at the first write.
    Reclaim policy is Retain: deleting a claim must never be how data goes away.
    """
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": STORAGE_CLASS, "labels": {"app.kubernetes.io/managed-by": "gpuplane"}},
        "provisioner": wellknown.EFS_CSI_PROVISIONER,
        "reclaimPolicy": "Retain",
        "volumeBindingMode": "Immediate",
        "parameters": {
            "provisioningMode": "efs-ap",
            "fileSystemId": file_system_id,
            "directoryPerms": directory_perms,
            "uid": str(uid),
            "gid": str(gid),
            "basePath": base_path,
            "subPathPattern": "${.PVC.namespace}/${.PVC.name}",
            "ensureUniqueDirectory": "true",
        },
    }


def persistent_volume_name(namespace: str, volume: str) -> str:
    """PVs are cluster-scoped: prefix with the namespace so two workspaces never collide."""
    return f"{namespace}-{volume}"


def static_persistent_volume(
    volume: str, namespace: str, *, file_system_id: str, access_point_id: str, size: str
) -> dict[str, Any]:
    """A ReadWriteMany PV on an access point, pre-bound to its claim, kept when the claim goes."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": persistent_volume_name(namespace, volume),
            "labels": {"app.kubernetes.io/managed-by": "gpuplane", "gpuplane.io/volume": volume},
        },
        "spec": {
            "capacity": {"storage": size},  # required by Kubernetes; EFS itself is elastic
            "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "volumeMode": "Filesystem",
            "claimRef": {"namespace": namespace, "name": volume},
            "csi": {
                "driver": wellknown.EFS_CSI_PROVISIONER,
                "volumeHandle": f"{file_system_id}::{access_point_id}",
                "volumeAttributes": {"encryptInTransit": "true"},
            },
        },
    }


def persistent_volume_claim(volume: str, namespace: str, *, provisioning: Provisioning, size: str) -> dict[str, Any]:
    """The claim workloads mount by the volume's name: bound to its static PV, or provisioned by `efs-ap`."""
    spec: dict[str, Any] = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": size}}}
    if provisioning == "static":
        spec["storageClassName"] = ""
        spec["volumeName"] = persistent_volume_name(namespace, volume)
    else:
        spec["storageClassName"] = STORAGE_CLASS
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": volume,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "gpuplane", "gpuplane.io/volume": volume},
        },
        "spec": spec,
    }


def volume_mount(
    volume: str, defined: list[str], mount_path: str, *, read_only: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pod volume and container mount for a named data volume; a clear error if it is not defined."""
    if volume not in defined:
        raise ValueError(
            f"volume '{volume}' is not defined in gpuplane:storage.volumes; defined: {', '.join(defined) or 'none'}"
        )
    pod_volume = {"name": volume, "persistentVolumeClaim": {"claimName": volume, "readOnly": read_only}}
    mount = {"name": volume, "mountPath": mount_path, "readOnly": read_only}
    return pod_volume, mount
