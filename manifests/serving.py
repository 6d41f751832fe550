"""Kubernetes objects of a TensorFlow Serving workload: config, Deployments, Services, PDBs, HPAs.

Contract other tools rely on (the load test targets it): per variant a Deployment and a ClusterIP Service
named `<serving>-<variant>`, one shared Service `<serving>` over every variant; ports `grpc` 8500 and
`http` 8501; pod labels `app.kubernetes.io/name: tensorflow-serving`, `app.kubernetes.io/instance:
<serving>`, `gpuplane.io/variant: <variant>`; the model answers at REST `/v1/models/<model>`.

Why the probes look like this: TF Serving opens its ports only after the initial model load, and
`GET /v1/models/<name>` answers 200 only for a model it knows (404 otherwise), so an HTTP probe on that
path is true only once the model is loaded. Loading from EFS can take minutes, hence a startupProbe of up
to `startup_seconds`; liveness then checks the gRPC health service (`--enable_grpc_healthcheck_service`)
so a wedged server is restarted without re-reading the model on every probe.

Pure Python building plain dicts; no Pulumi import.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gpuplane.manifests import lifecycle, observability, scheduling, tf_runtime, versions, wellknown, workload_security

APP_NAME: Final = "tensorflow-serving"
LABEL_VARIANT: Final = "gpuplane.io/variant"
CONFIG_DIR: Final = "/etc/tfserving"
MODEL_ROOT: Final = "/models"
MODELS_CONFIG: Final = "models.config"
BATCHING_CONFIG: Final = "batching.config"
MONITORING_CONFIG: Final = "monitoring.config"


@dataclass(frozen=True)
class Batching:
    """Batching parameters (TF Serving `BatchingParameters` text proto)."""

    max_batch_size: int = 32
    batch_timeout_micros: int = 1000
    max_enqueued_batches: int = 100
    num_batch_threads: int | None = None


@dataclass(frozen=True)
class Variant:
    """One variant, resolved: its size, where it may run and how its GPU is shared."""

    name: str
    resources: Mapping[str, Mapping[str, str]]
    affinity: Mapping[str, Any]
    replicas: int = 1
    image: str = versions.TF_SERVING_IMAGE
    gpus: int = 0
    gpu_shared: bool = False
    gpu_memory_fraction: float | None = None
    hpa: tuple[int, int, int] | None = None
    """(minReplicas, maxReplicas, target): the target of `scale_on` (CPU utilization % for `cpu`)."""
    scale_on: str = "cpu"
    """`cpu` (an HPA) or a Prometheus signal KEDA reads (`requestsPerSecond`, `gpuUtilization`, `latencyP90Ms`)."""
    gpu_check: bool = True
    """With GPUs: the runtime helper refuses to start the server when the container cannot use its GPU."""


@dataclass(frozen=True)
class Serving:
    """A served model, resolved against the platform."""

    name: str
    namespace: str
    model_name: str
    volume: str
    model_path: str
    uid: int
    gid: int
    variants: tuple[Variant, ...]
    batching: Batching | None = None
    poll_seconds: int = 60
    startup_seconds: int = 900
    labels: Mapping[str, str] = field(default_factory=dict)

    def selector(self, variant: str | None = None) -> dict[str, str]:
        """Pod labels a Service selects: all variants, or one."""
        labels = {"app.kubernetes.io/name": APP_NAME, "app.kubernetes.io/instance": self.name}
        if variant is not None:
            labels[LABEL_VARIANT] = variant
        return labels

    @property
    def config_map_name(self) -> str:
        """The ConfigMap with the model config (and batching) files."""
        return f"{self.name}-tfserving"


def _meta(serving: Serving, name: str, variant: str | None = None) -> dict[str, Any]:
    labels = {**serving.labels, **serving.selector(variant), "app.kubernetes.io/managed-by": "gpuplane"}
    return {"name": name, "namespace": serving.namespace, "labels": labels}


def model_config(serving: Serving) -> str:
    """`--model_config_file` text proto: one model, read from the read-only volume."""
    return (
        "model_config_list {\n"
        "  config {\n"
        f'    name: "{serving.model_name}"\n'
        f'    base_path: "{MODEL_ROOT}/{serving.model_path}"\n'
        '    model_platform: "tensorflow"\n'
        "  }\n"
        "}\n"
    )


def batching_config(batching: Batching, cpu_threads: int) -> str:
    """`--batching_parameters_file` text proto; threads default to the container's CPUs, not the node's."""
    threads = batching.num_batch_threads or cpu_threads
    return (
        f"max_batch_size {{ value: {batching.max_batch_size} }}\n"
        f"batch_timeout_micros {{ value: {batching.batch_timeout_micros} }}\n"
        f"max_enqueued_batches {{ value: {batching.max_enqueued_batches} }}\n"
        f"num_batch_threads {{ value: {threads} }}\n"
    )


def _cpu_threads(variant: Variant) -> int:
    quantity = str(variant.resources["limits"]["cpu"])
    millis = float(quantity[:-1]) if quantity.endswith("m") else float(quantity) * 1000
    return max(1, int(millis // 1000))


def monitoring_config() -> str:
    """`--monitoring_config_file` text proto: TF Serving's Prometheus endpoint on the REST port.

    Off unless asked for (tensorflow_serving/config/monitoring_config.proto); on, the served model's request
    counts and latency histogram are scraped by the PodMonitor of `manifests.observability`.
    """
    return f'prometheus_config {{\n  enable: true\n  path: "{wellknown.TF_SERVING_METRICS_PATH}"\n}}\n'


def config_map(serving: Serving) -> dict[str, Any]:
    """The model config file, and the batching file when batching is on (threads: smallest variant's CPUs)."""
    data = {MODELS_CONFIG: model_config(serving), MONITORING_CONFIG: monitoring_config()}
    if serving.batching is not None:
        threads = min(_cpu_threads(v) for v in serving.variants)
        data[BATCHING_CONFIG] = batching_config(serving.batching, threads)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(serving, serving.config_map_name), "data": data}


def server_args(serving: Serving) -> list[str]:
    """Flags of `tensorflow_model_server` (threads and GPU memory are added by the runtime helper)."""
    args = [
        f"--port={wellknown.TF_SERVING_GRPC_PORT}",
        f"--rest_api_port={wellknown.TF_SERVING_REST_PORT}",
        f"--model_config_file={CONFIG_DIR}/{MODELS_CONFIG}",
        f"--file_system_poll_wait_seconds={serving.poll_seconds}",
        "--enable_grpc_healthcheck_service=true",
        f"--monitoring_config_file={CONFIG_DIR}/{MONITORING_CONFIG}",
    ]
    if serving.batching is not None:
        args += ["--enable_batching=true", f"--batching_parameters_file={CONFIG_DIR}/{BATCHING_CONFIG}"]
    return args


def probes(serving: Serving) -> dict[str, Any]:
    """Startup and readiness on the loaded model's REST status; liveness on the gRPC health service."""
    status = {"httpGet": {"path": f"/v1/models/{serving.model_name}", "port": "http"}}
    period = 10
    return {
        "startupProbe": {**status, "periodSeconds": period, "failureThreshold": serving.startup_seconds // period},
        "readinessProbe": {**status, "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3},
        "livenessProbe": {
            "grpc": {"port": wellknown.TF_SERVING_GRPC_PORT},
            "periodSeconds": 20,
            "timeoutSeconds": 5,
            "failureThreshold": 3,
        },
    }


def pod_spec(serving: Serving, variant: Variant) -> dict[str, Any]:
    """The variant's pod: restricted, the model read-only, the server wrapped by the runtime helper."""
    container: dict[str, Any] = {
        "name": "serving",
        "image": variant.image,
        "imagePullPolicy": "Always",
        "args": server_args(serving),
        "ports": [
            {"name": "grpc", "containerPort": wellknown.TF_SERVING_GRPC_PORT, "protocol": "TCP"},
            {"name": "http", "containerPort": wellknown.TF_SERVING_REST_PORT, "protocol": "TCP"},
        ],
        "env": workload_security.scratch_env(gpu=bool(variant.gpus)),
        "resources": copy.deepcopy(dict(variant.resources)),
        "securityContext": workload_security.container_security_context(),
        "volumeMounts": [
            {"name": "model", "mountPath": MODEL_ROOT, "readOnly": True},
            {"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
            workload_security.scratch_mount(),
        ],
        **probes(serving),
    }
    spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "securityContext": workload_security.pod_security_context(serving.uid, serving.gid),
        "affinity": copy.deepcopy(dict(variant.affinity)),
        "terminationGracePeriodSeconds": 30,
        "containers": [container],
        "volumes": [
            {"name": "model", "persistentVolumeClaim": {"claimName": serving.volume, "readOnly": True}},
            {"name": "config", "configMap": {"name": serving.config_map_name}},
            workload_security.scratch_volume(size_limit=workload_security.GPU_SCRATCH_SIZE if variant.gpus else "1Gi"),
        ],
    }
    if variant.gpus:
        spec["tolerations"] = scheduling.gpu_tolerations()
    return tf_runtime.wrap_pod_spec(
        spec,
        commands={"serving": [wellknown.TF_SERVING_BINARY]},
        gpu_shared=variant.gpu_shared,
        gpu_memory_fraction=variant.gpu_memory_fraction,
        # No Python in tensorflow/serving: the helper checks the device nodes and the driver library.
        gpu_check=tf_runtime.GPU_CHECK_DEVICES if variant.gpus and variant.gpu_check else None,
        min_driver=lifecycle.CUDA_MIN_DRIVER[lifecycle.TF_SERVING_GPU_CUDA_MAJOR] if variant.gpus else None,
    )


def deployment(serving: Serving, variant: Variant) -> dict[str, Any]:
    """The variant's Deployment (replicas left to the HPA when it has one)."""
    spec: dict[str, Any] = {
        "selector": {"matchLabels": serving.selector(variant.name)},
        "revisionHistoryLimit": 3,
        # Never below the serving capacity during a rollout: a new pod must be Ready (model loaded) first.
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
        "template": {
            "metadata": {"labels": {**serving.labels, **serving.selector(variant.name)}},
            "spec": pod_spec(serving, variant),
        },
    }
    if variant.hpa is None:
        spec = {"replicas": variant.replicas, **spec}
    name = f"{serving.name}-{variant.name}"
    annotations = {**workload_security.DIGEST_SKIP, **workload_security.SKIP_AWAIT}
    meta = {**_meta(serving, name, variant.name), "annotations": annotations}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


def _ports() -> list[dict[str, Any]]:
    return [
        {"name": "grpc", "port": wellknown.TF_SERVING_GRPC_PORT, "targetPort": "grpc", "appProtocol": "grpc"},
        {"name": "http", "port": wellknown.TF_SERVING_REST_PORT, "targetPort": "http", "appProtocol": "http"},
    ]


def service(serving: Serving, variant: str | None = None) -> dict[str, Any]:
    """ClusterIP Service of one variant, or (variant None) the shared one over all variants."""
    name = serving.name if variant is None else f"{serving.name}-{variant}"
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {**_meta(serving, name, variant), "annotations": dict(workload_security.SKIP_AWAIT)},
        "spec": {"type": "ClusterIP", "selector": serving.selector(variant), "ports": _ports()},
    }


def pod_disruption_budget(serving: Serving, variant: Variant) -> dict[str, Any] | None:
    """At most one pod of a variant evicted at a time, when there is more than one (else a drain would block)."""
    floor = variant.hpa[0] if variant.hpa else variant.replicas
    if floor <= 1:
        return None
    name = f"{serving.name}-{variant.name}"
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _meta(serving, name, variant.name),
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": serving.selector(variant.name)}},
    }


def horizontal_pod_autoscaler(serving: Serving, variant: Variant) -> dict[str, Any] | None:
    """autoscaling/v2 HPA on average CPU utilization (of requests), when the variant scales on CPU."""
    if variant.hpa is None or variant.scale_on != "cpu":
        return None
    low, high, target = variant.hpa
    name = f"{serving.name}-{variant.name}"
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": _meta(serving, name, variant.name),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": low,
            "maxReplicas": high,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}},
                }
            ],
        },
    }


@dataclass(frozen=True)
class MetricStore:
    """Where KEDA's `prometheus` trigger queries: the in-cluster Prometheus, or an AMP workspace with SigV4.

    `server_address` may be a Pulumi output (the workspace's query URL). With `aws_region`, the trigger signs its
    queries (`awsRegion`, KEDA's prometheus scaler, kedacore/keda PR 5373) with the credentials of the
    ClusterTriggerAuthentication `wellknown.KEDA_AMP_AUTH` (`podIdentity.provider: aws`, `identityOwner: keda`: the
    operator's own Pod Identity role).
    """

    server_address: Any = wellknown.PROMETHEUS_URL
    aws_region: str | None = None


IN_CLUSTER: Final = MetricStore()


def scaled_object(serving: Serving, variant: Variant, store: MetricStore = IN_CLUSTER) -> dict[str, Any] | None:
    """A KEDA ScaledObject on the variant's Prometheus signal, when it scales on one (KEDA makes the HPA).

    Never below one replica: a server at zero emits no metric, so nothing would wake it.
    """
    if variant.hpa is None or variant.scale_on == "cpu":
        return None
    low, high, target = variant.hpa
    query, metric_type = observability.scaling_query(variant.scale_on, serving.namespace, serving.name, variant.name)
    name = f"{serving.name}-{variant.name}"
    return {
        "apiVersion": wellknown.KEDA_API,
        "kind": "ScaledObject",
        "metadata": _meta(serving, name, variant.name),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicaCount": max(1, low),
            "maxReplicaCount": high,
            "triggers": [
                {
                    "type": "prometheus",
                    "metricType": metric_type,
                    "metadata": {
                        "serverAddress": store.server_address,
                        "query": query,
                        "threshold": str(target),
                        **({"awsRegion": store.aws_region} if store.aws_region else {}),
                    },
                    **(
                        {"authenticationRef": {"name": wellknown.KEDA_AMP_AUTH, "kind": "ClusterTriggerAuthentication"}}
                        if store.aws_region
                        else {}
                    ),
                }
            ],
        },
    }


def objects(serving: Serving, store: MetricStore = IN_CLUSTER) -> list[dict[str, Any]]:
    """Every object of the workload, in apply order."""
    ports = [wellknown.TF_SERVING_GRPC_PORT, wellknown.TF_SERVING_REST_PORT]
    policy = workload_security.network_policy(serving.name, serving.namespace, serving.selector(), ports)
    result = [config_map(serving), policy, service(serving)]
    for variant in serving.variants:
        result += [deployment(serving, variant), service(serving, variant.name)]
        result += [
            o
            for o in (
                pod_disruption_budget(serving, variant),
                horizontal_pod_autoscaler(serving, variant),
                scaled_object(serving, variant, store),
            )
            if o
        ]
    return result


def variant_names(variants: Sequence[Variant]) -> list[str]:
    """Names, for messages."""
    return [v.name for v in variants]
