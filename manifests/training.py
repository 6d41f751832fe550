"""A distributed TensorFlow training run as one JobSet (kubernetes-sigs/jobset), and TensorBoard.

Why JobSet and not one Job per role: an Indexed Job has one pod template, so parameter servers without
GPUs and GPU workers need separate Jobs; tying their lifetimes together (end the run when the chief
succeeds, fail it when any role fails, one DNS domain, one TTL) is exactly what JobSet's success and
failure policies and its headless Service do. Kubeflow's newer trainer builds on it too.

Layout: one replicatedJob per role (`chief`, `worker`, `ps`; `data-import` first when declared), each
with `replicas: 1` and an Indexed Job of `count` pods, so task i of role r is the pod
`<run>-<r>-0-<i>.<run>` (JobSet names pods `<jobset>-<replicatedJob>-<jobIndex>-<podIndex>` and resolves
them through its own headless Service named like the JobSet). The runtime helper turns that into
`TF_CONFIG` (`GPUPLANE_TF_ROLE` + `JOB_COMPLETION_INDEX`).

Pure Python building plain dicts; no Pulumi import.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gpuplane.manifests import lifecycle, model_import, scheduling, tf_runtime, versions, workload_security

JOBSET_API: Final = "jobset.x-k8s.io/v1alpha2"
# JobSet spec fields of the pinned release (kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go,
# checked for v0.12: JobSetSpec, ReplicatedJob, DependsOn, Network, SuccessPolicy, FailurePolicy). Kept here so a
# test checks every field we write against the pinned API (the Job templates are validated strictly
# against the Kubernetes schemas).
JOBSET_SPEC_FIELDS: Final = frozenset(
    {
        "replicatedJobs", "network", "successPolicy", "failurePolicy", "startupPolicy", "suspend",
        "coordinator", "managedBy", "ttlSecondsAfterFinished",
    }
)  # fmt: skip
REPLICATED_JOB_FIELDS: Final = frozenset({"name", "template", "replicas", "dependsOn"})
NETWORK_FIELDS: Final = frozenset({"enableDNSHostnames", "subdomain", "publishNotReadyAddresses"})
SUCCESS_POLICY_FIELDS: Final = frozenset({"operator", "targetReplicatedJobs"})
FAILURE_POLICY_FIELDS: Final = frozenset({"maxRestarts", "rules", "restartStrategy"})
DEPENDS_ON_STATUS: Final = ("Ready", "Complete")
SUBMITTED_BY_ANNOTATION: Final = "gpuplane.io/submitted-by"
# The default deadline of every role's Job (`activeDeadlineSeconds`): a backstop, so that a run that hangs
# (a deadlocked step, a worker waiting forever for a peer that never started) fails with the Job reason
# `DeadlineExceeded` instead of holding its nodes, GPU nodes included, until someone notices. One day is
# long enough for the dev stack's runs and their wait for a scaled-from-zero node; longer runs raise it
# (`activeDeadlineSeconds`), and 0 removes it. How Kubernetes counts it (JobSet v0.12 has no deadline of
# its own, so the Job's is the one there is): from the Job's `status.startTime`, which the Job controller
# sets when the Job starts unsuspended, so time its pods spend Pending (waiting for a node) counts; a
# suspended Job's clock is stopped and starts again from zero when it resumes (batch/v1 JobSpec), and
# JobSet suspends and resumes its Jobs with the JobSet (clearing `startTime`, jobset_controller.go
# `resumeJob`, v0.12.0), so time a queue such as Kueue keeps the run suspended does not count, and each
# admission starts a full deadline. Roles that `dependsOn` the data import are created when it completes:
# the import's time is its own (`timeoutMinutes`), not the roles'.
DEFAULT_ACTIVE_DEADLINE_SECONDS: Final = 86400
RUN_SPEC_ANNOTATION: Final = "gpuplane.io/spec-hash"


@dataclass(frozen=True)
class Role:
    """One role's pods: how many, how big, where."""

    name: str
    count: int
    resources: Mapping[str, Mapping[str, str]]
    affinity: Mapping[str, Any]
    gpus: int = 0
    gpu_shared: bool = False
    gpu_memory_fraction: float | None = None
    efa: int = 0
    """EFA interfaces (`vpc.amazonaws.com/efa`) each pod requests; 0 without EFA."""


@dataclass(frozen=True)
class Training:
    """A training workload, resolved against the platform."""

    name: str
    namespace: str
    strategy: str
    image: str
    command: tuple[str, ...]
    roles: tuple[Role, ...]
    uid: int
    gid: int
    mounts: Mapping[str, str] = field(default_factory=dict)
    """volume name -> mount path."""
    ttl_seconds: int = 86400
    backoff_limit: int = 3
    active_deadline_seconds: int | None = DEFAULT_ACTIVE_DEADLINE_SECONDS
    """Each role's Job `activeDeadlineSeconds`; None or 0: no deadline."""
    max_restarts: int = 0
    data_import: model_import.Import | None = None
    port: int = tf_runtime.DEFAULT_TF_PORT
    gpu_check: bool = True
    """Roles with GPUs check that TensorFlow sees one before the program starts (the runtime helper)."""

    def spec_hash(self) -> str:
        """8 hex characters of everything that defines the run (a changed spec is a new run)."""
        doc = json.dumps(_plain(self), sort_keys=True, default=str)
        return hashlib.sha256(doc.encode()).hexdigest()[:8]

    def run_name(self, run_id: str | None = None) -> str:
        """`<name>-<run id or spec hash>`: the JobSet's name, prefix of every pod hostname."""
        return f"{self.name}-{run_id or self.spec_hash()}"


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def labels(training: Training) -> dict[str, str]:
    """Labels of every object and pod of the workload."""
    return {
        "app.kubernetes.io/name": "tensorflow-training",
        "app.kubernetes.io/instance": training.name,
        "app.kubernetes.io/managed-by": "gpuplane",
    }


def cluster(training: Training, run: str) -> tf_runtime.TFCluster:
    """The TF cluster of one run, in the JobSet layout."""
    roles = tuple((r.name, r.count) for r in training.roles)
    return tf_runtime.TFCluster(run, roles, service=run, port=training.port, jobset=True)


def efa_env(interfaces: int) -> list[dict[str, str]]:
    """Libfabric's settings for a pod with EFA devices: NCCL's OFI plugin then takes the EFA path.

    `FI_PROVIDER=efa` keeps libfabric from falling back to its TCP provider unnoticed. The pinned training
    image (the TF 2.21 DLC) has aws-ofi-nccl on its library path (docs/reserved-gpus.md, "The training image
    and NCCL"); `NCCL_DEBUG=INFO` (its /etc/nccl.conf) logs `NET/OFI` when NCCL uses it.

    `FI_EFA_USE_HUGE_PAGE=0`: the EFA provider allocates its internal buffers from normal pages. By default it
    takes 2 MiB huge pages, which a pod may use only up to its `hugepages-2Mi` request (0 without one: the
    allocation fails or the process dies at first touch), and a node has only as many as its setup reserved.
    Requesting them would need that node setup on every EFA group and `hugepages-2Mi` in the queue's covered
    resources; gpuplane takes the route AWS's samples take instead. The cost: libfabric's "small performance
    advantage" of huge-page buffers (fi_efa(7)), "a minor performance hit" in AWS's EFA cheatsheet
    (aws-samples/awsome-distributed-training, 1.architectures/efa-cheatsheet.md; both read 2026-11-28), in the
    provider's own bounce buffers, not in NCCL's GPU-direct transfers.
    """
    if not interfaces:
        return []
    return [{"name": "FI_PROVIDER", "value": "efa"}, {"name": "FI_EFA_USE_HUGE_PAGE", "value": "0"}]


def _pod(training: Training, role: Role, run: str) -> dict[str, Any]:
    mounts = [{"name": v, "mountPath": p} for v, p in sorted(training.mounts.items())]
    container: dict[str, Any] = {
        "name": "tensorflow",
        "image": training.image,
        "imagePullPolicy": "Always",
        "command": list(training.command),
        "ports": [{"name": "tf", "containerPort": training.port, "protocol": "TCP"}],
        "env": [*workload_security.scratch_env(gpu=bool(role.gpus)), *efa_env(role.efa)],
        "resources": copy.deepcopy(dict(role.resources)),
        "securityContext": workload_security.container_security_context(),
        "volumeMounts": [*mounts, workload_security.scratch_mount()],
    }
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "securityContext": workload_security.pod_security_context(training.uid, training.gid),
        "affinity": copy.deepcopy(dict(role.affinity)),
        "containers": [container],
        "volumes": [
            *({"name": v, "persistentVolumeClaim": {"claimName": v}} for v in sorted(training.mounts)),
            workload_security.scratch_volume(size_limit="10Gi"),
        ],
    }
    if role.gpus:
        spec["tolerations"] = scheduling.gpu_tolerations()
    return tf_runtime.wrap_pod_spec(
        spec,
        gpu_shared=role.gpu_shared,
        gpu_memory_fraction=role.gpu_memory_fraction,
        tf_cluster=cluster(training, run),
        tf_role=role.name,
        # A training image has Python: the helper also asks TensorFlow itself for its GPUs.
        gpu_check=tf_runtime.GPU_CHECK_TENSORFLOW if role.gpus and training.gpu_check else None,
        min_driver=lifecycle.CUDA_MIN_DRIVER[lifecycle.TENSORFLOW_GPU_CUDA_MAJOR] if role.gpus else None,
    )


def _job_template(training: Training, pod: dict[str, Any], count: int) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels(training)},
        "spec": {
            "completionMode": "Indexed",
            "completions": count,
            "parallelism": count,
            "backoffLimit": training.backoff_limit,
            **({"activeDeadlineSeconds": training.active_deadline_seconds} if training.active_deadline_seconds else {}),
            # A preempted spot node or a drain is not the program's fault: it does not burn backoffLimit.
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
            },
            "template": {"metadata": {"labels": labels(training)}, "spec": pod},
        },
    }


def jobset(training: Training, run_id: str | None = None) -> dict[str, Any]:
    """The run's JobSet. Submitted by `gpuplane train`, never by `pulumi up` (docs/workloads.md)."""
    run = training.run_name(run_id)
    replicated: list[dict[str, Any]] = []
    waits: list[dict[str, str]] = []
    if training.data_import is not None:
        job = model_import.job(training.data_import)
        template = {"metadata": {"labels": job["metadata"]["labels"]}, "spec": job["spec"]}
        replicated.append({"name": "data-import", "replicas": 1, "template": template})
        # JobSet allows one dependsOn entry, and none on the first replicatedJob: every role waits for it.
        waits = [{"name": "data-import", "status": "Complete"}]
    for role in training.roles:
        entry: dict[str, Any] = {
            "name": role.name,
            "replicas": 1,
            "template": _job_template(training, _pod(training, role, run), role.count),
        }
        if waits:
            entry["dependsOn"] = copy.deepcopy(waits)
        replicated.append(entry)
    # parameterServer: the chief's success is the run's (ps and workers never exit); mirrored: all workers.
    target = ["chief"] if training.strategy == "parameterServer" else ["worker"]
    meta = {
        "name": run,
        "namespace": training.namespace,
        "labels": labels(training),
        "annotations": {
            SUBMITTED_BY_ANNOTATION: "gpuplane train (not a Pulumi resource)",
            RUN_SPEC_ANNOTATION: training.spec_hash(),
        },
    }
    return {
        "apiVersion": JOBSET_API,
        "kind": "JobSet",
        "metadata": meta,
        "spec": {
            "replicatedJobs": replicated,
            "network": {"enableDNSHostnames": True, "subdomain": run, "publishNotReadyAddresses": True},
            "successPolicy": {"operator": "All", "targetReplicatedJobs": target},
            "failurePolicy": {"maxRestarts": training.max_restarts},
            "ttlSecondsAfterFinished": training.ttl_seconds,
        },
    }


def job_templates_as_jobs(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each replicatedJob's template as a standalone batch/v1 Job, for strict schema validation."""
    jobs = []
    for rjob in obj["spec"]["replicatedJobs"]:
        template = rjob["template"]
        meta = {**template.get("metadata", {}), "name": f"{obj['metadata']['name']}-{rjob['name']}-0"}
        jobs.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": template["spec"]})
    return jobs


def unknown_jobset_fields(obj: Mapping[str, Any]) -> list[str]:
    """Fields we wrote that the pinned JobSet API does not have (its CRD would drop or reject them)."""
    spec = obj["spec"]
    found = [f"spec.{k}" for k in spec if k not in JOBSET_SPEC_FIELDS]
    found += [f"spec.network.{k}" for k in spec.get("network", {}) if k not in NETWORK_FIELDS]
    found += [f"spec.successPolicy.{k}" for k in spec.get("successPolicy", {}) if k not in SUCCESS_POLICY_FIELDS]
    found += [f"spec.failurePolicy.{k}" for k in spec.get("failurePolicy", {}) if k not in FAILURE_POLICY_FIELDS]
    names = [r["name"] for r in spec.get("replicatedJobs", [])]
    for index, rjob in enumerate(spec.get("replicatedJobs", [])):
        found += [f"spec.replicatedJobs[{index}].{k}" for k in rjob if k not in REPLICATED_JOB_FIELDS]
        deps = rjob.get("dependsOn", [])
        if deps and (index == 0 or len(deps) > 1):
            found.append(f"spec.replicatedJobs[{index}].dependsOn: the first job has none, the others at most one")
        for dep in deps:
            if dep.get("status") not in DEPENDS_ON_STATUS or dep.get("name") not in names[:index]:
                found.append(f"spec.replicatedJobs[{index}].dependsOn: {dep}")
    return found


def tensorboard(training: Training, logs_volume: str, logs_path: str) -> list[dict[str, Any]]:
    """A TensorBoard Deployment and ClusterIP Service reading the logs volume (read-only)."""
    name = f"{training.name}-tensorboard"
    selector = {"app.kubernetes.io/name": "tensorboard", "app.kubernetes.io/instance": training.name}
    meta = {
        "name": name,
        "namespace": training.namespace,
        "labels": {**selector, "app.kubernetes.io/managed-by": "gpuplane"},
    }
    container = {
        "name": "tensorboard",
        "image": versions.TENSORBOARD_IMAGE,
        "imagePullPolicy": "Always",
        "command": ["tensorboard", f"--logdir=/logs/{logs_path}", "--bind_all", "--port=6006"],
        "env": workload_security.scratch_env(),
        "ports": [{"name": "http", "containerPort": 6006, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "100m", "memory": "512Mi"}, "limits": {"cpu": "1", "memory": "2Gi"}},
        "securityContext": workload_security.container_security_context(),
        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 10},
        "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 30, "failureThreshold": 5},
        "volumeMounts": [{"name": "logs", "mountPath": "/logs", "readOnly": True}, workload_security.scratch_mount()],
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {**meta, "annotations": {**workload_security.DIGEST_SKIP, **workload_security.SKIP_AWAIT}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": selector},
                "spec": {
                    "automountServiceAccountToken": False,
                    "securityContext": workload_security.pod_security_context(training.uid, training.gid),
                    "containers": [container],
                    "volumes": [
                        {"name": "logs", "persistentVolumeClaim": {"claimName": logs_volume, "readOnly": True}},
                        workload_security.scratch_volume(),
                    ],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {**meta, "annotations": dict(workload_security.SKIP_AWAIT)},
        "spec": {
            "type": "ClusterIP",
            "selector": selector,
            "ports": [{"name": "http", "port": 6006, "targetPort": "http"}],
        },
    }
    policy = workload_security.network_policy(name, training.namespace, selector, [6006])
    return [policy, deployment, service]


def ingress(training: Training, ingress_class: str) -> dict[str, Any]:
    """An Ingress to TensorBoard, only when the stack names an IngressClass (no controller is installed)."""
    name = f"{training.name}-tensorboard"
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "name": name,
            "namespace": training.namespace,
            "labels": {"app.kubernetes.io/managed-by": "gpuplane"},
        },
        "spec": {
            "ingressClassName": ingress_class,
            "rules": [
                {
                    "http": {
                        "paths": [
                            {
                                "path": f"/{training.name}",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": name, "port": {"name": "http"}}},
                            }
                        ]
                    }
                }
            ],
        },
    }


def role_names(roles: Sequence[Role]) -> list[str]:
    """Names, for messages."""
    return [r.name for r in roles]
