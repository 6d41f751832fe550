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
SCRATCH_PATH: Final = "/tmp"
HOME_DIR: Final = SCRATCH_PATH
CUDA_CACHE_DIR: Final = f"{SCRATCH_PATH}/.nv/ComputeCache"
# The driver's JIT cache bound (CUDA programming guide, "CUDA environment variables": default 256 MiB,
# at most 4 GiB); 1 GiB holds TensorFlow's PTX kernels compiled for one GPU architecture.
CUDA_CACHE_MAX_BYTES: Final = 2**30
# A GPU container's scratch emptyDir: the kernel cache plus the 1 GiB every workload gets for /tmp.
GPU_SCRATCH_SIZE: Final = "2Gi"


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


def scratch_mount(path: str = SCRATCH_PATH, name: str = TMP_VOLUME) -> dict[str, Any]:
    """The container mount of `scratch_volume`."""
    return {"name": name, "mountPath": path}


def scratch_env(*, gpu: bool = False) -> list[dict[str, str]]:
    """HOME (and for a GPU container the CUDA kernel cache) inside the scratch emptyDir.

    Why: the images keep HOME at /root, read-only here and not ours, so anything that writes under `~`
    (Keras, matplotlib, pip caches) fails; and on a GPU newer than the image's compiled architectures (H100
    with the TF 2.18-2.21 builds: compute_90 PTX) the driver JIT-compiles kernels into `CUDA_CACHE_PATH`, default
    `$HOME/.nv/ComputeCache`. The cache is bounded by `CUDA_CACHE_MAXSIZE`; `GPU_SCRATCH_SIZE` leaves room.
    """
    env = [{"name": "HOME", "value": HOME_DIR}]
    if gpu:
        env += [
            {"name": "CUDA_CACHE_PATH", "value": CUDA_CACHE_DIR},
            {"name": "CUDA_CACHE_MAXSIZE", "value": str(CUDA_CACHE_MAX_BYTES)},
        ]
    return env


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


# pulumi-kubernetes waits for a Deployment to become ready, and for a Service until none of its endpoints is
# "not ready" (its await logic; a Service with no endpoints passes). A workload on a group scaled to zero (a spot
# GPU group) waits Pending until the autoscaler brings a node, which is the queue, not a failure, so `pulumi up`
# waits for neither the workload nor its Service, which would otherwise fail the `up` after 10 minutes of a pod
# that starts slowly: `kubectl -n ml rollout status deploy/<name>` does (docs/workloads.md).
SKIP_AWAIT: Final = {"pulumi.com/skipAwait": "true"}
