"""Kubernetes objects for `gpuplane compare`: the load-test Job, its ConfigMap and the inputs uploader pod.

Why a Job inside the cluster: the latency a team cares about is the cluster's network path to the
Service, not a port-forward through the API server. Why these choices:
- the pinned `tensorflow/tensorflow` CPU image already has Python, NumPy and `tf.image`, so nothing is
  built or installed at run time; the client code and its config ride in a ConfigMap;
- the Pod Security `restricted` level like every workload of ours: numeric non-root uid, no privilege
  escalation, all capabilities dropped, RuntimeDefault seccomp, read-only root with an emptyDir for /tmp;
- CPU and memory limits, so the client's own CPU use can be judged against a known ceiling;
- required pod anti-affinity against the serving pods it measures, so the client never steals their CPU;
- `ttlSecondsAfterFinished` cleans the Job up, late enough for the CLI to read its log first.

Pure Python building plain dicts; no Pulumi import.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any, Final

from gpuplane.manifests import versions

CLIENT_FILE: Final = "client.py"
CONFIG_FILE: Final = "config.json"
MOUNT_PATH: Final = "/opt/gpuplane-compare"
DATASETS_MOUNT: Final = "/datasets"
LOGS_MOUNT: Final = "/logs"
# Where a run's uploaded inputs and raw results live on the `datasets` and `logs` volumes.
RUNS_SUBDIR: Final = "gpuplane-compare"
APP_NAME: Final = "gpuplane-compare"
SERVING_APP: Final = "tensorflow-serving"
# The serving containers' REST port (the serving contract: port `http` 8501; the Service maps it 1:1).
SERVING_REST_PORT: Final = 8501
# The uid the client runs as when the stack's own workload uid is not above 10000 (checkov CKV_K8S_40
# asks for a high uid so that it cannot collide with a host account). EFS access points act as their own
# POSIX user for every NFS call, so this uid does not have to match theirs to write to `logs`.
DEFAULT_UID: Final = 10001
# Seconds the finished Job (and its log) stays for the CLI to read; then Kubernetes deletes it.
TTL_AFTER_FINISHED_S: Final = 3600
# Fits the smallest CPU node the shipped stacks use (m6i.large: about 1.9 allocatable CPUs, 6.5 GiB).
DEFAULT_CPU: Final = "1500m"
DEFAULT_MEMORY: Final = "3Gi"

_RUN_ID = re.compile(r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$")


def client_source() -> str:
    """The client's code, read from the installed package (the one copy there is)."""
    return resources.files("gpuplane.manifests").joinpath("loadtest", CLIENT_FILE).read_text(encoding="utf-8")


def job_name(run_id: str) -> str:
    """The Job's (and ConfigMap's) name for a run."""
    return f"{APP_NAME}-{run_id}"


def _labels(run_id: str, component: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": APP_NAME,
        "app.kubernetes.io/instance": run_id,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": "gpuplane",
    }


def _check_run_id(run_id: str) -> None:
    if not _RUN_ID.match(run_id):
        raise ValueError(f"run id '{run_id}' must be a DNS label of at most 40 characters (lowercase, digits, '-')")


def configmap(namespace: str, run_id: str, config: dict[str, Any]) -> dict[str, Any]:
    """The ConfigMap with the client code and this run's config (variants' URLs, sizes, formats, ...)."""
    _check_run_id(run_id)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": job_name(run_id), "namespace": namespace, "labels": _labels(run_id, "load-test")},
        "data": {CLIENT_FILE: client_source(), CONFIG_FILE: json.dumps(config, indent=2, sort_keys=True)},
    }


def _security_context() -> dict[str, Any]:
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _pod_security(uid: int, gid: int) -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": gid,
        "fsGroup": gid,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _resources(cpu: str, memory: str) -> dict[str, Any]:
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}


def _anti_affinity(servings: list[str]) -> dict[str, Any]:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "app.kubernetes.io/name", "operator": "In", "values": [SERVING_APP]},
                            {"key": "app.kubernetes.io/instance", "operator": "In", "values": sorted(servings)},
                        ]
                    },
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }


# checkov checks that do not fit a one-shot client in a public image; the reason travels with the object.
_CHECKOV_SKIPS: Final = (
    ("CKV_K8S_43", "the tensorflow/tensorflow tag is pinned in manifests/versions.py; digests differ per arch"),
    ("CKV_K8S_15", "IfNotPresent on a pinned tag is the cheapest correct pull for a one-shot Job"),
    ("CKV_K8S_8", "a one-shot client has no port to probe; the Job's own status is its liveness"),
    ("CKV_K8S_9", "a one-shot client serves nothing; readiness does not apply"),
    ("CKV_K8S_21", "runs in the stack's workload namespace, which the caller names"),
)


def _annotations() -> dict[str, str]:
    return {f"checkov.io/skip{i}": f"{check}={why}" for i, (check, why) in enumerate(_CHECKOV_SKIPS, start=1)}


def job(
    namespace: str,
    run_id: str,
    *,
    servings: list[str],
    uid: int,
    gid: int,
    active_deadline_s: int,
    with_inputs: bool,
    cpu: str = DEFAULT_CPU,
    memory: str = DEFAULT_MEMORY,
    image: str = versions.TENSORFLOW_CPU_IMAGE,
) -> dict[str, Any]:
    """The load-test Job: one pod, no retries, the client from the ConfigMap, results on `logs`.

    Args:
        namespace: the stack's workload namespace, where the serving variants and the volumes' claims are.
        run_id: a DNS label naming this run (Job, ConfigMap, raw-data directory).
        servings: the serving workloads whose pods this one must not share a node with.
        uid: numeric uid (> 10000) to run as.
        gid: its group (also the fsGroup).
        active_deadline_s: a hard stop for the whole run (readiness wait, every cell, margins).
        with_inputs: mount `datasets` (read-only) because the inputs were uploaded there.
        cpu: the client's CPU request = limit (default 1500m), the ceiling its saturation is judged against.
        memory: the client's memory request = limit (default 3Gi).
        image: the pinned `tensorflow/tensorflow` CPU image.

    """
    _check_run_id(run_id)
    if uid <= 10000:
        raise ValueError(f"uid {uid} must be above 10000 (a high, numeric non-root uid)")
    if active_deadline_s < 1:
        raise ValueError(f"active_deadline_s {active_deadline_s} must be at least 1")
    volumes: list[dict[str, Any]] = [
        {"name": "client", "configMap": {"name": job_name(run_id)}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "logs", "persistentVolumeClaim": {"claimName": "logs"}},
    ]
    mounts: list[dict[str, Any]] = [
        {"name": "client", "mountPath": MOUNT_PATH, "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
        {"name": "logs", "mountPath": LOGS_MOUNT},
    ]
    if with_inputs:
        volumes.append({"name": "datasets", "persistentVolumeClaim": {"claimName": "datasets", "readOnly": True}})
        mounts.append({"name": "datasets", "mountPath": DATASETS_MOUNT, "readOnly": True})
    container = {
        "name": "client",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["python3", f"{MOUNT_PATH}/{CLIENT_FILE}", f"{MOUNT_PATH}/{CONFIG_FILE}"],
        "env": [
            {"name": "HOME", "value": "/tmp"},
            {"name": "TF_CPP_MIN_LOG_LEVEL", "value": "2"},
            {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
        ],
        "resources": _resources(cpu, memory),
        "securityContext": _security_context(),
        "volumeMounts": mounts,
    }
    labels = _labels(run_id, "load-test")
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(run_id),
            "namespace": namespace,
            "labels": labels,
            "annotations": _annotations(),
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": active_deadline_s,
            "ttlSecondsAfterFinished": TTL_AFTER_FINISHED_S,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "securityContext": _pod_security(uid, gid),
                    "affinity": _anti_affinity(servings),
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }


def network_policy(namespace: str, run_id: str, *, servings: list[str]) -> dict[str, Any]:
    """Ingress: nothing. Egress: the serving pods' REST port and cluster DNS, nothing else.

    The client needs to reach the variants it measures and to resolve their Service names; the uploader
    needs no network at all (exec reaches it through the kubelet, not the pod network). EKS enforces this
    when the VPC CNI's network policy agent is on (`enableNetworkPolicy`); elsewhere it documents intent.
    """
    _check_run_id(run_id)
    dns_ports = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": job_name(run_id), "namespace": namespace, "labels": _labels(run_id, "load-test")},
        "spec": {
            "podSelector": {"matchLabels": {"app.kubernetes.io/instance": run_id, "app.kubernetes.io/name": APP_NAME}},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [],
            "egress": [
                {
                    "to": [
                        {
                            "podSelector": {
                                "matchExpressions": [
                                    {"key": "app.kubernetes.io/name", "operator": "In", "values": [SERVING_APP]},
                                    {"key": "app.kubernetes.io/instance", "operator": "In", "values": sorted(servings)},
                                ]
                            }
                        }
                    ],
                    "ports": [{"protocol": "TCP", "port": SERVING_REST_PORT}],
                },
                {
                    "to": [
                        {
                            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                        }
                    ],
                    "ports": dns_ports,
                },
            ],
        },
    }


def uploader_pod(
    namespace: str, run_id: str, *, uid: int, gid: int, image: str = versions.TENSORFLOW_CPU_IMAGE
) -> dict[str, Any]:
    """A short-lived pod that mounts `datasets` read-write so the CLI can stream inputs in with `tar`.

    Why a pod and exec, not a ConfigMap: a ConfigMap holds at most 1 MiB, and a handful of photos, let
    alone 4096 px PNGs, is more. The pod sleeps (bounded by activeDeadlineSeconds, so a CLI that dies
    leaves nothing running for long) while the CLI writes a tar stream to `tar -x` over the exec API.
    """
    _check_run_id(run_id)
    if uid <= 10000:
        raise ValueError(f"uid {uid} must be above 10000 (a high, numeric non-root uid)")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job_name(run_id)}-upload",
            "namespace": namespace,
            "labels": _labels(run_id, "upload"),
            "annotations": _annotations(),
        },
        "spec": {
            "restartPolicy": "Never",
            "activeDeadlineSeconds": 900,
            "automountServiceAccountToken": False,
            "securityContext": _pod_security(uid, gid),
            "containers": [
                {
                    "name": "upload",
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "command": ["sleep", "900"],
                    "env": [{"name": "HOME", "value": "/tmp"}],  # the image's HOME is read-only here
                    "resources": _resources("250m", "256Mi"),
                    "securityContext": _security_context(),
                    "volumeMounts": [
                        {"name": "datasets", "mountPath": DATASETS_MOUNT},
                        {"name": "tmp", "mountPath": "/tmp"},
                    ],
                }
            ],
            "volumes": [
                {"name": "datasets", "persistentVolumeClaim": {"claimName": "datasets"}},
                {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
            ],
        },
    }
