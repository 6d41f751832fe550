"""The `restricted` Pod Security settings every gpuplane workload pod carries, built in one place.

Why one builder: a namespace that enforces `restricted` refuses a pod that misses a single field, and
the official images (`tensorflow/serving` has no USER: root by default) give nothing for free. The pod
runs as the numeric uid/gid the EFS access points enforce (so files on the share belong to it), with a
read-only root file system; the only writable places are the emptyDirs named here.
"""

from __future__ import annotations

from typing import Any, Final

# Pod Security "restricted" forbids uid 0; above 10000 keeps clear of users baked into images
# (checkov CKV_K8S_40 asks for the same).
MIN_WORKLOAD_UID: Final = 10001
TMP_VOLUME: Final = "tmp"


def pod_security_context(uid: int, gid: int) -> dict[str, Any]:
    """Pod-level context: numeric non-root user and group, RuntimeDefault seccomp."""
    if uid < MIN_WORKLOAD_UID or gid < MIN_WORKLOAD_UID:
        raise ValueError(f"workload uid/gid {uid}/{gid} must be at least {MIN_WORKLOAD_UID}")
    return {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": gid,
        "fsGroup": gid,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def container_security_context() -> dict[str, Any]:
    """Container-level context: no escalation, no capabilities, read-only root."""
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def scratch_volume(name: str = TMP_VOLUME, size_limit: str = "1Gi") -> dict[str, Any]:
    """An emptyDir for the paths a process must write (e.g. /tmp) under a read-only root.

    The size limit keeps a runaway writer from filling the node's disk and evicting neighbours.
    """
    return {"name": name, "emptyDir": {"sizeLimit": size_limit}}


def scratch_mount(path: str = "/tmp", name: str = TMP_VOLUME) -> dict[str, Any]:
    """The container mount of `scratch_volume`."""
    return {"name": name, "mountPath": path}


# checkov asks for images by digest (CKV_K8S_43). Our images are pinned by exact version tag in
# `manifests.versions` (a digest cannot be resolved offline, where render runs); a stack may pin a digest
# with a variant's `image`. The skip is annotated on the object, with this reason, for reviewers to see.
DIGEST_SKIP: Final = {
    "checkov.io/skip1": "CKV_K8S_43=images are pinned by exact version tag in gpuplane.manifests.versions; "
    "set a variant's image to repo@sha256:... to pin a digest"
}


def network_policy(name: str, namespace: str, selector: dict[str, str], ports: list[int]) -> dict[str, Any]:
    """Ingress to the selected pods only on `ports` (none: no ingress at all); egress is left open.

    Enforced where the cluster runs a network policy engine (VPC CNI with network policy enabled);
    elsewhere it documents intent and costs nothing.
    """
    spec: dict[str, Any] = {"podSelector": {"matchLabels": dict(selector)}, "policyTypes": ["Ingress"]}
    if ports:
        spec["ingress"] = [{"ports": [{"protocol": "TCP", "port": port} for port in ports]}]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": "gpuplane"}},
        "spec": spec,
    }


# pulumi-kubernetes waits for a Deployment to become ready. A workload on a group scaled to zero (a spot
# GPU group) waits Pending until the autoscaler brings a node, which is the queue, not a failure, so
# `pulumi up` does not wait for it: `kubectl -n ml rollout status deploy/<name>` does (docs/workloads.md).
SKIP_AWAIT: Final = {"pulumi.com/skipAwait": "true"}
