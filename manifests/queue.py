"""The training queue: Kueue objects (kueue.x-k8s.io/v1beta2) and the Kueue chart's values. Pure dicts.

Why a queue: without one, a run whose pods only partly fit starts the pods that fit and leaves the rest
Pending, and the started workers hold GPU nodes while they wait for the others in TensorFlow's collective
setup; two runs submitted together can each hold half the GPUs and both wait forever. Kueue admits a run
only when quota for all its pods is free (one Workload per JobSet, one PodSet per replicatedJob), and with
the ProvisioningRequest admission check only after the cluster-autoscaler has found one node group that
can hold all its GPU pods and scaled it up in one step.

Shape, derived from the stack (components/queue.py computes the numbers):
- a ResourceFlavor per node group training may use, matching the group's own `gpuplane.io/node-group`
  label (the label our pods' affinity selects on, and that the group advertises for scale from zero) and
  listing its NoSchedule/NoExecute taints, so a PodSet only gets a flavor whose taints it tolerates;
- one ClusterQueue for the workload namespace: one resource group covering cpu, memory and the GPU
  resources, each flavor's quota what its group holds at maxSize (after the kubelet and DaemonSet
  reservations the fit check uses); GPU flavors carry the ProvisioningRequest check when it is enabled;
- a LocalQueue in the namespace (the name runs carry in the `kueue.x-k8s.io/queue-name` label).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

import yaml

from gpuplane.manifests import versions, wellknown, workload_security

QUEUE_LABEL: Final = "kueue.x-k8s.io/queue-name"
# The label Kueue puts on a job's Workload (pkg/controller/constants/constants.go, JobUIDLabel).
JOB_UID_LABEL: Final = "kueue.x-k8s.io/job-uid"
LOCAL_QUEUE: Final = "training"
ADMISSION_CHECK: Final = "gpu-provisioning"
FLAVOR_PREFIX: Final = "group-"
MANAGED_BY: Final = {"app.kubernetes.io/managed-by": "gpuplane"}
FLAVOR_FUNGIBILITY: Final = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"}
# A failed ProvisioningRequest (the autoscaler could not add the run's GPU nodes) is retried while its attempt
# number is at most `backoffLimitCount`; the next failure rejects the check and Kueue deactivates the run
# (`spec.active: false`; kueue pkg/controller/admissionchecks/provisioning/controller.go and
# pkg/controller/core/workload_controller.go at v0.19.2). Retry n waits base x 2^(n-1) seconds, capped at the
# maximum (pkg/workload/admissionchecks.go, UpdateAdmissionCheckRequeueState). 5 from 60 s: 6 requests over
# about 31 minutes of backoff (60, 120, 240, 480, 960 s), long enough to ride out a GPU shortage of tens of
# minutes in the group's AZs; Kueue's default 3 gives up after 7. Waiting is cheap: while it waits out a
# backoff the run is evicted and holds no quota, so other runs are admitted meanwhile.
PROVISIONING_RETRY_LIMIT: Final = 5
PROVISIONING_BACKOFF_BASE_SECONDS: Final = 60
PROVISIONING_BACKOFF_MAX_SECONDS: Final = 1800
# Kueue's metrics: HTTPS with its own certificate and authn/authz on every request, on this port of the chart's
# Service `<release>-controller-manager-metrics-service` (release `kueue`; charts/kueue/templates/manager/
# auth_proxy_service.yaml and values.yaml `metricsService` at v0.19.2).
KUEUE_METRICS_PORT: Final = 8443
KUEUE_METRICS_SERVICE: Final = "kueue-controller-manager-metrics-service"
# The `job` label of Kueue's series in either store: the in-cluster Prometheus names a ServiceMonitor's job after
# the Service, and the managed collector's `kueue` job writes the same value, so queries never depend on the store.
KUEUE_METRICS_JOB: Final = KUEUE_METRICS_SERVICE
# The plain-HTTP relay of `observability.metrics: managedPrometheus` (`metrics_relay_objects`).
RELAY_NAME: Final = "kueue-metrics-relay"
RELAY_SERVICE: Final = "kueue-metrics-http"
RELAY_PORT: Final = 8080
RELAY_PORT_NAME: Final = "http"
RELAY_SCRIPT: Final = "gpuplane-kueue-metrics-relay.py"
RELAY_LABELS: Final = {"app.kubernetes.io/name": RELAY_NAME, "app.kubernetes.io/part-of": "kueue"}


@dataclass(frozen=True)
class Flavor:
    """One node group as Kueue sees it: the label that selects it, its taints, what it holds at maxSize."""

    group: str
    node_labels: Mapping[str, str]
    taints: tuple[Mapping[str, str], ...]
    cpu_millis: int
    memory_bytes: int
    gpus: int = 0
    gpu_resource: str | None = None
    efa: int = 0
    """EFA interfaces the group holds at maxSize (`vpc.amazonaws.com/efa`); 0 without EFA."""

    @property
    def name(self) -> str:
        """`group-<node group>`: ResourceFlavor names share the cluster with other tenants' flavors."""
        return f"{FLAVOR_PREFIX}{self.group}"


@dataclass(frozen=True)
class Queue:
    """The workload namespace's queue."""

    namespace: str
    flavors: tuple[Flavor, ...]
    provisioning: bool
    """Whether GPU flavors carry the ProvisioningRequest admission check (autoscaler with the fix)."""
    cluster_queue: str = ""
    local_queue: str = LOCAL_QUEUE
    labels: Mapping[str, str] = field(default_factory=lambda: dict(MANAGED_BY))

    @property
    def name(self) -> str:
        """The ClusterQueue's name: `<namespace>-training` (one per workload namespace)."""
        return self.cluster_queue or f"{self.namespace}-training"

    @property
    def gpu_resources(self) -> list[str]:
        """GPU resource names the flavors provide, sorted."""
        return sorted({f.gpu_resource for f in self.flavors if f.gpu_resource})

    @property
    def covered_resources(self) -> list[str]:
        """cpu, memory, the GPU resources, then EFA: what a PodSet may request (Kueue blocks undeclared ones)."""
        efa = [wellknown.EFA_RESOURCE] if any(f.efa for f in self.flavors) else []
        return ["cpu", "memory", *self.gpu_resources, *efa]

    @property
    def gpu_flavors(self) -> list[Flavor]:
        """The flavors of GPU groups."""
        return [f for f in self.flavors if f.gpus]


def _meta(name: str, queue: Queue, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(queue.labels)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def resource_flavor(flavor: Flavor, queue: Queue) -> dict[str, Any]:
    """A ResourceFlavor: Kueue admits a PodSet to it only if the PodSet's affinity and tolerations allow it.

    No `tolerations`: Kueue would add them to admitted pods, and our pods already tolerate what they may.
    """
    spec: dict[str, Any] = {"nodeLabels": dict(flavor.node_labels)}
    if flavor.taints:
        spec["nodeTaints"] = [dict(t) for t in flavor.taints]
    return {
        "apiVersion": wellknown.KUEUE_API,
        "kind": "ResourceFlavor",
        "metadata": _meta(flavor.name, queue),
        "spec": spec,
    }


def quantity_cpu(millis: int) -> str:
    """A CPU quantity in millicores (`1500m`)."""
    return f"{millis}m"


def quantity_memory(memory_bytes: int) -> str:
    """A memory quantity in whole MiB, rounded down (`6144Mi`)."""
    return f"{memory_bytes // 2**20}Mi"


def _quotas(flavor: Flavor, queue: Queue) -> list[dict[str, Any]]:
    quotas = [
        {"name": "cpu", "nominalQuota": quantity_cpu(flavor.cpu_millis)},
        {"name": "memory", "nominalQuota": quantity_memory(flavor.memory_bytes)},
    ]
    # Every flavor of a resource group lists every covered resource, in order (the CRD's rule).
    for resource in queue.gpu_resources:
        quotas.append({"name": resource, "nominalQuota": str(flavor.gpus if flavor.gpu_resource == resource else 0)})
    if wellknown.EFA_RESOURCE in queue.covered_resources:
        quotas.append({"name": wellknown.EFA_RESOURCE, "nominalQuota": str(flavor.efa)})
    return quotas


def cluster_queue(queue: Queue) -> dict[str, Any]:
    """The ClusterQueue: quotas per flavor; GPU flavors behind the ProvisioningRequest check when enabled.

    BestEffortFIFO (Kueue's default): a run that cannot be admitted yet does not hold back a smaller one
    behind it that fits; runs are otherwise taken in submission order. No cohort: nothing borrows.
    Flavor order is preference (the plan lists reserved groups first): `flavorFungibility` is Kueue's
    default written out (v1beta2 at v0.19.2, apis/kueue/v1beta2/clusterqueue_types.go): `whenCanBorrow:
    MayStopSearch` stops at the first flavor a PodSet fits, `whenCanPreempt: TryNextFlavor` moves on to the
    next flavor rather than preempt a running run on a full one.
    """
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": queue.namespace}},
        "queueingStrategy": "BestEffortFIFO",
        "flavorFungibility": dict(FLAVOR_FUNGIBILITY),
        "resourceGroups": [
            {
                "coveredResources": queue.covered_resources,
                "flavors": [{"name": f.name, "resources": _quotas(f, queue)} for f in queue.flavors],
            }
        ],
    }
    if queue.provisioning and queue.gpu_flavors:
        spec["admissionChecksStrategy"] = {
            "admissionChecks": [{"name": ADMISSION_CHECK, "onFlavors": [f.name for f in queue.gpu_flavors]}]
        }
    return {
        "apiVersion": wellknown.KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": _meta(queue.name, queue),
        "spec": spec,
    }


def local_queue(queue: Queue) -> dict[str, Any]:
    """The LocalQueue runs name in their `kueue.x-k8s.io/queue-name` label."""
    return {
        "apiVersion": wellknown.KUEUE_API,
        "kind": "LocalQueue",
        "metadata": _meta(queue.local_queue, queue, queue.namespace),
        "spec": {"clusterQueue": queue.name},
    }


def provisioning_request_config(queue: Queue) -> dict[str, Any]:
    """How Kueue asks the autoscaler for a run's GPU nodes: one best-effort-atomic request per admission.

    `managedResources` limits the request to PodSets that ask for GPUs: CPU-only roles (parameter servers,
    the data import) go to the CPU groups by quota alone. Retries: `PROVISIONING_RETRY_LIMIT` with backoff
    from 60 s (why: at the constants); after the last, Kueue deactivates the run and `gpuplane queue` says how
    to reactivate it.
    """
    return {
        "apiVersion": wellknown.KUEUE_API,
        "kind": "ProvisioningRequestConfig",
        "metadata": _meta(ADMISSION_CHECK, queue),
        "spec": {
            "provisioningClassName": wellknown.PROVISIONING_CLASS,
            "managedResources": queue.gpu_resources,
            "retryStrategy": {
                "backoffLimitCount": PROVISIONING_RETRY_LIMIT,
                "backoffBaseSeconds": PROVISIONING_BACKOFF_BASE_SECONDS,
                "backoffMaxSeconds": PROVISIONING_BACKOFF_MAX_SECONDS,
            },
        },
    }


def admission_check(queue: Queue) -> dict[str, Any]:
    """The AdmissionCheck run by Kueue's ProvisioningRequest controller, with the config above."""
    return {
        "apiVersion": wellknown.KUEUE_API,
        "kind": "AdmissionCheck",
        "metadata": _meta(ADMISSION_CHECK, queue),
        "spec": {
            "controllerName": wellknown.KUEUE_PROVISIONING_CONTROLLER,
            "parameters": {
                "apiGroup": wellknown.KUEUE_API.split("/")[0],
                "kind": "ProvisioningRequestConfig",
                "name": ADMISSION_CHECK,
            },
        },
    }


def objects(queue: Queue) -> list[dict[str, Any]]:
    """Every queue object, in the order they can be created (flavors and checks before the ClusterQueue)."""
    docs = [resource_flavor(f, queue) for f in queue.flavors]
    if queue.provisioning and queue.gpu_flavors:
        docs += [provisioning_request_config(queue), admission_check(queue)]
    return [*docs, cluster_queue(queue), local_queue(queue)]


def manager_config(namespace: str, pods_ready_timeout: str, requeue_limit: int) -> dict[str, Any]:
    """Kueue's Configuration (config.kueue.x-k8s.io/v1beta2).

    The chart's defaults for health, metrics (plus the ClusterQueue resource metrics), webhook, leader election
    and client limits are repeated because the chart takes the whole file as one string. Ours: only the JobSet
    integration (the `pod` integration would make Kueue's pod webhook fail-closed for every namespace); Kueue
    manages jobs only
    in the workload namespace, and only those that name a queue; `waitForPodsReady` evicts and requeues
    an admitted run whose pods are not all ready within the timeout, at most `requeue_limit` times, then
    deactivates it (each retry boots GPU nodes again).
    """
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        # `enableClusterQueueResources`: without it Kueue never reports kueue_cluster_queue_resource_usage and
        # _nominal_quota, which the queue dashboard's "Usage vs quota" reads (pkg/cache/scheduler/cache.go at
        # v0.19.2 reports them only `if c.resourceMetricsEnabled`; the chart leaves the line commented out).
        "metrics": {"bindAddress": f":{KUEUE_METRICS_PORT}", "enableClusterQueueResources": True},
        "webhook": {"port": wellknown.KUEUE_WEBHOOK_PORT},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        "manageJobsWithoutQueueName": False,
        "managedJobsNamespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "waitForPodsReady": {
            "timeout": pods_ready_timeout,
            "blockAdmission": False,
            "requeuingStrategy": {"timestamp": "Eviction", "backoffLimitCount": requeue_limit},
        },
        "integrations": {"frameworks": [wellknown.KUEUE_JOBSET_FRAMEWORK]},
    }


def kueue_values(
    namespace: str,
    *,
    pods_ready_timeout: str,
    requeue_limit: int,
    startup_taints: Sequence[str] = (),
    metrics: str = "none",
) -> dict[str, Any]:
    """Values of the Kueue chart: the released image, our manager config, nothing optional switched on.

    The controller runs non-root with a read-only root and no capabilities (the chart's securityContext),
    which `restricted` admits. It runs on the pod network (no hostNetwork): the API server reaches the
    webhook (9443) and the visibility API (8082) through the cluster security group that every node has.
    It mounts no EFS, so it tolerates the EFS driver's startup taint like the autoscaler.

    `metrics`: the store (`observability.metrics`). `prometheus` (in the cluster): a ServiceMonitor of ours
    (`observability.kueue_service_monitor`, the chart's endpoint, applied after the stack) scrapes the
    controller's HTTPS metrics port (8443) with Prometheus's service-account token and its self-signed
    certificate unchecked; kube-prometheus-stack's Prometheus may `get` the `/metrics` URL, which Kueue's
    authorizer asks for. The chart's own (`enablePrometheus`) stays off: it would make this release wait for the
    stack's CRDs.
    `managedPrometheus`: no ServiceMonitor (nothing would read it); the collector scrapes the plain-HTTP relay
    instead (`metrics_relay_objects`). Kueue's own HTTPS listener is the same in both cases: v0.19.2 has only that
    one (cmd/kueue/main.go hard-codes `SecureServing: true`), so nothing else (the ServiceMonitor, `gpuplane queue`,
    which reads the API and the visibility API, never metrics) depends on which store reads it.
    """
    return {
        "controllerManager": {
            "manager": {
                "image": {
                    "repository": wellknown.KUEUE_IMAGE_REPOSITORY,
                    "tag": versions.KUEUE_IMAGE_TAG,
                    "pullPolicy": "IfNotPresent",
                }
            },
            "tolerations": [{"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints],
        },
        "managerConfig": {
            "controllerManagerConfigYaml": yaml.safe_dump(
                manager_config(namespace, pods_ready_timeout, requeue_limit), sort_keys=False
            )
        },
        "enablePrometheus": False,
        "enableCertManager": False,
        "enableKueueViz": False,
    }


def relay_script() -> str:
    """The relay's source, read from the installed package (`runtime/gpuplane-kueue-metrics-relay.py`)."""
    return resources.files("gpuplane.manifests").joinpath("runtime", RELAY_SCRIPT).read_text(encoding="utf-8")


# checkov checks the relay does not fit, each with its reason on the object (as the verify probes and the load test).
_RELAY_CHECKOV_SKIPS: Final = {
    **workload_security.DIGEST_SKIP,
    "checkov.io/skip2": "CKV_K8S_38=the relay's one job is to present its own service account token to Kueue "
    "(RBAC: get /metrics only)",
    "checkov.io/skip3": "CKV_K8S_15=IfNotPresent on a pinned tag: a restarted relay needs no Docker Hub pull",
}


def _relay_meta(name: str, *, namespaced: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {**RELAY_LABELS, **MANAGED_BY}}
    if namespaced:
        meta["namespace"] = wellknown.KUEUE_NAMESPACE
    return meta


def metrics_relay_objects(*, allowed_cidrs: Sequence[str], startup_taints: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Kueue's metrics on plain HTTP inside the cluster, for the AWS managed collector (`managedPrometheus`).

    Kueue v0.19.2 cannot serve plain HTTP itself (its only metrics listener is HTTPS with authn/authz, hard-coded
    in cmd/kueue/main.go), and the collector takes no `tls_config`. So a one-replica relay (the pinned python slim
    image, the standard-library script `relay_script()`) asks Kueue's metrics Service with its own service
    account's token and answers `GET /metrics` on `RELAY_PORT` of the Service `RELAY_SERVICE`. Its account may
    `get` the non-resource URL `/metrics` and nothing else (the verb Kueue's authorizer asks the API server about).

    Who reaches the plain port: the pods' network is the cluster security group, which admits only its own members
    (the nodes, so the pods on them, the control plane's and the collector's network interfaces) and 443 from the
    API access list; nothing outside the cluster reaches it. The NetworkPolicy admits the port only from
    `allowed_cidrs` (the VPC, where the collector's interfaces are), which adds nothing to that while the VPC CNI
    does not enforce network policies (its add-on's `enableNetworkPolicy`, off in gpuplane's clusters) and keeps
    everything else out of the relay once it does. What leaks if a pod in the cluster reads the port: queue names,
    quotas and counts; never the token (the relay forwards nothing of the request).
    """
    upstream = f"https://{KUEUE_METRICS_SERVICE}.{wellknown.KUEUE_NAMESPACE}.svc:{KUEUE_METRICS_PORT}/metrics"
    script_volume = "relay"
    reader = f"gpuplane-{RELAY_NAME}"
    pod_security = workload_security.pod_security_context(
        workload_security.MIN_WORKLOAD_UID, workload_security.MIN_WORKLOAD_UID
    )
    container = {
        "name": "relay",
        "image": versions.PYTHON_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "command": ["python3", f"/relay/{RELAY_SCRIPT}"],
        "env": [
            {"name": "RELAY_UPSTREAM", "value": upstream},
            {"name": "RELAY_PORT", "value": str(RELAY_PORT)},
            {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
        ],
        "ports": [{"name": RELAY_PORT_NAME, "containerPort": RELAY_PORT, "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": RELAY_PORT_NAME}, "periodSeconds": 10},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": RELAY_PORT_NAME}, "periodSeconds": 20},
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}},
        "securityContext": workload_security.container_security_context(),
        "volumeMounts": [{"name": script_volume, "mountPath": "/relay", "readOnly": True}],
    }
    pod: dict[str, Any] = {
        "serviceAccountName": RELAY_NAME,
        "securityContext": pod_security,
        "containers": [container],
        "volumes": [{"name": script_volume, "configMap": {"name": RELAY_NAME}}],
    }
    if startup_taints:
        # It mounts no EFS: it need not wait for the EFS driver's node agent (like Kueue itself).
        pod["tolerations"] = [{"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints]
    policy = workload_security.network_policy(RELAY_NAME, wellknown.KUEUE_NAMESPACE, dict(RELAY_LABELS), [RELAY_PORT])
    policy["metadata"]["labels"].update(RELAY_LABELS)
    policy["spec"]["ingress"][0]["from"] = [{"ipBlock": {"cidr": cidr}} for cidr in allowed_cidrs]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _relay_meta(RELAY_NAME)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": _relay_meta(reader, namespaced=False),
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _relay_meta(reader, namespaced=False),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": reader},
            "subjects": [{"kind": "ServiceAccount", "name": RELAY_NAME, "namespace": wellknown.KUEUE_NAMESPACE}],
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _relay_meta(RELAY_NAME),
            "data": {RELAY_SCRIPT: relay_script()},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {**_relay_meta(RELAY_NAME), "annotations": dict(_RELAY_CHECKOV_SKIPS)},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": dict(RELAY_LABELS)},
                "template": {"metadata": {"labels": dict(RELAY_LABELS)}, "spec": pod},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _relay_meta(RELAY_SERVICE),
            "spec": {
                "selector": dict(RELAY_LABELS),
                "ports": [
                    {"name": RELAY_PORT_NAME, "port": RELAY_PORT, "targetPort": RELAY_PORT_NAME, "protocol": "TCP"}
                ],
            },
        },
        policy,
    ]


def queued(jobset: Mapping[str, Any], local_queue_name: str = LOCAL_QUEUE) -> dict[str, Any]:
    """The run as submitted through the queue: labelled with its LocalQueue and created suspended.

    Kueue's webhook would suspend it anyway; creating it suspended means no pod starts even in the moment
    before the webhook answers, and the plan shows what the cluster will hold.
    """
    doc = copy.deepcopy(dict(jobset))
    doc["metadata"].setdefault("labels", {})[QUEUE_LABEL] = local_queue_name
    doc["spec"]["suspend"] = True
    return doc


# --- The ProvisioningRequest CRD, shipped in the package ---------------------------------------------------------
# Not in the autoscaler's chart: upstream keeps it in git. One copy per Kubernetes minor, at the tag of the
# autoscaler image pinned for that minor (scripts/vendor_provisioning_crd.py writes them), applied from the
# package so that `pulumi up` fetches nothing and render and the tests see the exact object.
CRD_DIR: Final = "crds"
_CRD_SOURCE_PREFIX: Final = "# Source: kubernetes/autoscaler tag "


def provisioning_crd_file(kubernetes_version: str) -> str:
    """The file name of the ProvisioningRequest CRD for a Kubernetes minor (under `manifests/crds/`)."""
    return f"provisioningrequests-{kubernetes_version}.yaml"


def crd_header(*, tag: str, commit: str, released: str, path: str, copied: str) -> str:
    """The comment that opens a copied CRD file: where it comes from, at which tag, when it was copied."""
    return (
        f"{_CRD_SOURCE_PREFIX}{tag} ({commit}, {released}), {path}\n"
        f"# Copied {copied} by scripts/vendor_provisioning_crd.py, unchanged below this header. Apache License 2.0.\n"
    )


def provisioning_crd_text(kubernetes_version: str) -> str:
    """The shipped CRD file for a minor, header included; ValueError for a minor without one."""
    name = provisioning_crd_file(kubernetes_version)
    path = resources.files("gpuplane.manifests").joinpath(CRD_DIR, name)
    if not path.is_file():
        raise ValueError(
            f"no ProvisioningRequest CRD shipped for Kubernetes {kubernetes_version} ({CRD_DIR}/{name}); "
            f"minors with one: {', '.join(sorted(versions.CLUSTER_AUTOSCALER_IMAGES))}"
        )
    return path.read_text(encoding="utf-8")


def provisioning_crd_tag(kubernetes_version: str) -> str:
    """The autoscaler tag the shipped CRD of a minor was copied from (its header)."""
    first = provisioning_crd_text(kubernetes_version).splitlines()[0]
    if not first.startswith(_CRD_SOURCE_PREFIX):
        raise ValueError(f"{provisioning_crd_file(kubernetes_version)} does not start with its source line")
    return first.removeprefix(_CRD_SOURCE_PREFIX).split(" ", 1)[0]


def provisioning_request_crd(kubernetes_version: str) -> dict[str, Any]:
    """The ProvisioningRequest CRD (apiextensions.k8s.io/v1) the cluster-autoscaler of this minor reads.

    Each caller gets a copy of its own of the file parsed once per process: every render asks for it, and
    parsing its tens of KB of YAML again took longer than the rest of the queue's objects together.
    """
    return copy.deepcopy(_parsed_crd(kubernetes_version))


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _parsed_crd(kubernetes_version: str) -> dict[str, Any]:
    """The shipped CRD file of a minor, parsed (with libyaml's parser where PyYAML has it: same documents)."""
    doc: dict[str, Any] = yaml.load(provisioning_crd_text(kubernetes_version), Loader=_SAFE_LOADER)
    return doc
