"""Metrics, alert rules and dashboards: the Prometheus stack's values and the objects it reads, as plain dicts.

What it answers: "how busy are my GPUs, per run and per model?", "why did this run wait?", "why is this node
failing my pods?". The store is the Prometheus of kube-prometheus-stack (versions.py); the exporters are
dcgm-exporter (per GPU, with the `pod`/`namespace` of the pod holding it), TF Serving's own endpoint, Kueue's,
the cluster-autoscaler's and kube-state-metrics (node conditions, pod labels for joins).

Every metric name the rules and dashboards query is in `KNOWN_METRICS`, with where it comes from; a test reads
each expression back and fails on a name not listed, and promtool parses every expression.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Final

import yaml

from gpuplane.manifests import queue, wellknown

# --- metric names, by exporter (the exporters' docs) ------------------------------------------------
DCGM_METRICS: Final = (
    "DCGM_FI_DEV_GPU_UTIL",  # percent of time a kernel ran
    "DCGM_FI_DEV_FB_USED",  # framebuffer MiB used
    "DCGM_FI_DEV_FB_FREE",  # framebuffer MiB free
    "DCGM_FI_DEV_XID_ERRORS",  # the last XID seen (0: none), labelled `err_code`: the dashboard's "last XID"
    # XIDs counted in the exporter's window (5 minutes by default), one series per code, labelled `xid`, and 0
    # without `xid` when there was none (DCGM_ADDED_COUNTERS): the XID alerts, which see each XID, repeats too
    "DCGM_EXP_XID_ERRORS_COUNT",
    "DCGM_FI_DEV_GPU_TEMP",  # degrees C
    "DCGM_FI_DEV_THERMAL_VIOLATION",  # ns throttled by heat (DCGM_ADDED_COUNTERS)
    "DCGM_FI_DEV_POWER_VIOLATION",  # ns throttled by the power cap (DCGM_ADDED_COUNTERS)
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",  # uncorrectable ECC errors since the driver loaded (DCGM_ADDED_COUNTERS)
    "DCGM_FI_DEV_ROW_REMAP_FAILURE",  # 1: a failing memory row could not be remapped
)
TF_SERVING_METRICS: Final = (
    ":tensorflow:serving:request_count",  # {model_name, status}
    ":tensorflow:serving:request_latency_bucket",  # microseconds histogram
)
KUEUE_METRICS: Final = (
    "kueue_pending_workloads",  # {cluster_queue, status: active|inadmissible}
    "kueue_reserving_active_workloads",  # {cluster_queue}: quota reserved, admitted or not
    "kueue_admitted_active_workloads",  # {cluster_queue}: admitted (its admission checks passed)
    "kueue_admission_wait_time_seconds_bucket",
    "kueue_cluster_queue_resource_usage",  # {cluster_queue, flavor, resource}
    "kueue_cluster_queue_nominal_quota",
)
KUBE_STATE_METRICS: Final = (
    "kube_node_status_condition",  # every node condition, the agent's AcceleratedHardwareReady included
    "kube_node_status_capacity",  # {resource: nvidia_com_gpu}
    "kube_pod_labels",  # the pod labels allowed by `metricLabelsAllowlist`
)
# The cluster-autoscaler's (cluster-autoscaler/metrics/metrics.go, namespace `cluster_autoscaler`; every name below
# is registered at cluster-autoscaler-1.32.7, 1.35.2 and 1.36.1, the pinned images' range, read 2026-11-26).
# What "why did this run wait?" needs beyond Kueue: pods no node fits, nodes added, and scale-ups that failed.
AUTOSCALER_METRICS: Final = (
    # {state: ready|unready|notStarted|unregistered|longUnregistered}; set on every loop, an unhealthy or empty
    # cluster's included (core/utils/utils.go UpdateClusterStateMetrics; processors/actionablecluster), so it is
    # the one `gpuplane verify` looks for.
    "cluster_autoscaler_nodes_count",
    "cluster_autoscaler_unschedulable_pods_count",  # {type: unschedulable|scheduler_unprocessed}
    "cluster_autoscaler_scaled_up_nodes_total",  # counter, no labels
    # {reason: cloudProviderError|apiCallError|timeout}; from 1.36 also {gpu_resource_name, gpu_name, dra_drivers}
    "cluster_autoscaler_failed_scale_ups_total",
    # {reason, gpu_resource_name, gpu_name}; deprecated in 1.36.0 (metrics.go: `DeprecatedVersion`), so hidden
    # from a later minor: the rules read it `or` the GPU labels of the one above (`failed_gpu_scale_ups`).
    "cluster_autoscaler_failed_gpu_scale_ups_total",
    # {node_group (the ASG's name), reason}; only with `--emit-per-nodegroup-metrics` (RegisterAll), which
    # components/autoscaler.py sets whenever a store reads the autoscaler.
    "cluster_autoscaler_node_group_backoff_status",
    # {node_group}; the same flag: its size the autoscaler asked for, and its maxSize.
    "cluster_autoscaler_node_group_target_count",
    "cluster_autoscaler_node_group_max_count",
)
PROMETHEUS_METRICS: Final = ("up",)


def failed_gpu_scale_ups(window: str) -> str:
    """Failed GPU scale-ups in `window`, by GPU and reason, from every pinned cluster-autoscaler and the next ones.

    Up to 1.35 only `failed_gpu_scale_ups_total` names the GPU; 1.36 adds the GPU labels to
    `failed_scale_ups_total` and deprecates the GPU counter (metrics.go at cluster-autoscaler-1.36.1), which a
    later minor hides. Summed to the same labels, `or` keeps the left side where both count the same failure
    (1.36), so nothing is counted twice; a failure without a GPU (`gpu_name` empty or absent) is not one.
    """
    by = "sum by (gpu_name, reason)"
    return (
        f"({by} (increase(cluster_autoscaler_failed_gpu_scale_ups_total[{window}])) or "
        f'{by} (increase(cluster_autoscaler_failed_scale_ups_total{{gpu_name!=""}}[{window}])))'
    )


KNOWN_METRICS: Final = frozenset(
    DCGM_METRICS + TF_SERVING_METRICS + KUEUE_METRICS + KUBE_STATE_METRICS + AUTOSCALER_METRICS + PROMETHEUS_METRICS
)

# Pod labels kube-state-metrics copies onto `kube_pod_labels` (as `label_<name>` with `.`/`/`/`-` as `_`): the
# served model and its variant, and the training run's JobSet; with them "GPU use per run / per model" is one
# join of dcgm-exporter's `pod` label.
POD_LABELS_FOR_JOINS: Final = (
    "app.kubernetes.io/instance",
    "gpuplane.io/variant",
    "jobset.sigs.k8s.io/jobset-name",
)

# The exporter's Service names the scrape job: `dcgm-exporter` (its chart, release `dcgm-exporter`) or
# `nvidia-dcgm-exporter` (the GPU Operator's).
DCGM_JOB_RE: Final = ".*dcgm-exporter"
SERVING_MONITOR: Final = "tensorflow-serving"
# The `job` label of the autoscaler's series in either store: the in-cluster Prometheus names a ServiceMonitor's
# job after the Service it selects (the chart's), and the managed collector's job writes the same value.
AUTOSCALER_METRICS_JOB: Final = wellknown.CLUSTER_AUTOSCALER_SERVICE
AUTOSCALER_DROPPED_RE: Final = "cluster_autoscaler_function_duration_(seconds_bucket|quantile_seconds)"


@dataclass(frozen=True)
class AlertBounds:
    """The configured bounds the alert rules compare against."""

    serving_p99_ms: int = 500
    queue_wait_minutes: int = 30
    gpu_memory_percent: int = 95


ALERTMANAGER_SA: Final = "gpuplane-alertmanager"

# --- Prometheus's volume (`observability.metrics: prometheus`) ------------------------------------------------
# Prometheus's own sizing rule (prometheus.io/docs/prometheus/latest/storage, "Operational aspects"):
# needed_disk_space = retention_time_seconds * ingested_samples_per_second * bytes_per_sample, with 1-2 bytes a
# sample. Assumed here: `PROMETHEUS_EXPECTED_SERIES` active series scraped every 30 s (kube-prometheus-stack's
# interval): kubelet/cAdvisor, node-exporter, kube-state-metrics, the API server and CoreDNS of a cluster of about
# ten nodes, plus DCGM's default counters per GPU, TF Serving and Kueue; the upper 2 bytes a sample; and twice that
# for the write-ahead log and compaction, which writes a new block beside the ones it replaces. 7 days:
# 604,800 s x 3,333 samples/s x 2 B = 4.0 GB (3.75 GiB), x 2 = 7.5 GiB, so the floor `PROMETHEUS_MIN_VOLUME_GIB`
# (10 GiB); 30 days: 33 GiB. `retentionSize` (80 % of the volume) makes Prometheus drop its oldest blocks before
# the disk fills if the cluster has more series than assumed.
PROMETHEUS_EXPECTED_SERIES: Final = 100_000
PROMETHEUS_SCRAPE_INTERVAL_S: Final = 30
PROMETHEUS_BYTES_PER_SAMPLE: Final = 2
PROMETHEUS_VOLUME_HEADROOM: Final = 2
PROMETHEUS_MIN_VOLUME_GIB: Final = 10
PROMETHEUS_MAX_VOLUME_GIB: Final = 16384  # a gp3 volume's largest size (EBS user guide, "volume types")
PROMETHEUS_RETENTION_SIZE_SHARE: Final = 0.8
PROMETHEUS_STORAGE_CLASS: Final = "gpuplane-prometheus-gp3"


DEFAULT_RETENTION: Final = "7d"
"""`observability.retention`'s default: how long the in-cluster Prometheus keeps samples."""


def prometheus_volume_gib(retention: str) -> int:
    """The volume Prometheus needs for `retention` at the assumed series count (the arithmetic above), in GiB."""
    samples_per_second = PROMETHEUS_EXPECTED_SERIES / PROMETHEUS_SCRAPE_INTERVAL_S
    needed = _seconds(retention) * samples_per_second * PROMETHEUS_BYTES_PER_SAMPLE * PROMETHEUS_VOLUME_HEADROOM
    return min(PROMETHEUS_MAX_VOLUME_GIB, max(PROMETHEUS_MIN_VOLUME_GIB, math.ceil(needed / 2**30)))


def prometheus_storage_class(cluster_name: str) -> dict[str, Any]:
    """The StorageClass of Prometheus's volume: encrypted gp3 from the EBS CSI driver, created where the pod lands.

    `WaitForFirstConsumer`: the volume is made in the zone of the node the scheduler picked (an EBS volume lives in
    one zone). Encrypted with the account's default EBS key (no `kmsKeyId`: `aws/ebs`, or the key the account set as
    its EBS default), which the driver's AmazonEBSCSIDriverPolicy may use; a key of the stack's own would add $1 a
    month and key-policy grants for the driver's role, for metrics that the stack may rebuild. `reclaimPolicy:
    Delete`: deleting the claim deletes the volume, while the driver runs. The tag `KubernetesCluster: <cluster>`
    (the driver's `tagSpecification_N` parameter, aws-ebs-csi-driver docs/tagging.md) is what the teardown hooks and
    the janitor look for, with the driver's own `ebs.csi.aws.com/cluster: true`, to find the volume once `pulumi
    destroy` has deleted the cluster without ever deleting the claim. Not `kubernetes.io/cluster/<cluster>`: the
    driver refuses StorageClass tags under `kubernetes.io` (pkg/driver/validation.go `validateExtraTags`, 429e202,
    2026-08-19: a CreateVolume with one fails as InvalidArgument). Expansion allowed: a larger `storageGib` later is
    applied by resizing the claim (docs/operations.md).
    """
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": PROMETHEUS_STORAGE_CLASS, "labels": {"app.kubernetes.io/managed-by": "gpuplane"}},
        "provisioner": wellknown.EBS_CSI_PROVISIONER,
        "parameters": {
            "type": "gp3",
            "encrypted": "true",
            "csi.storage.k8s.io/fstype": "ext4",
            "tagSpecification_1": f"KubernetesCluster={cluster_name}",
        },
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    }


def prometheus_storage_spec(volume_gib: int) -> dict[str, Any]:
    """kube-prometheus-stack's `prometheus.prometheusSpec.storageSpec`: one claim per replica, from the class above."""
    return {
        "volumeClaimTemplate": {
            "spec": {
                "storageClassName": PROMETHEUS_STORAGE_CLASS,
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": f"{volume_gib}Gi"}},
            }
        }
    }


def alertmanager_config(topic_arn: Any, region: str) -> dict[str, Any]:
    """Alertmanager's route and receivers: every alert to one SNS topic, signed with the pod's AWS credentials.

    `sns_configs` with `sigv4` takes the credentials of the default chain, which EKS Pod Identity fills
    (Alertmanager's service account `ALERTMANAGER_SA` has a role that may publish to the topic and nothing else).
    The chart's Watchdog alert (always firing, a dead man's switch) goes nowhere. `topic_arn` may be a Pulumi
    output: values are resolved by the engine.
    """
    return {
        "route": {
            "group_by": ["alertname", "namespace"],
            "group_wait": "30s",
            "group_interval": "5m",
            "repeat_interval": "12h",
            "receiver": "sns",
            "routes": [{"receiver": "null", "matchers": ['alertname = "Watchdog"']}],
        },
        "receivers": [
            {"name": "null"},
            {
                "name": "sns",
                "sns_configs": [
                    {
                        "topic_arn": topic_arn,
                        "sigv4": {"region": region},
                        "subject": "[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}",
                        "send_resolved": True,
                    }
                ],
            },
        ],
    }


def stack_values(
    *,
    retention: str,
    grafana: bool,
    tolerations: list[dict[str, str]],
    alerts: dict[str, Any] | None = None,
    volume_gib: int | None = None,
) -> dict[str, Any]:
    """Values of kube-prometheus-stack: read every ServiceMonitor, PodMonitor and rule, not only the release's.

    The `*SelectorNilUsesHelmValues: false` switches make Prometheus read the objects of other charts (the
    dcgm-exporter's ServiceMonitor, Kueue's, ours) without each carrying this release's label.
    `volume_gib`: Prometheus keeps its data on an EBS volume of this size (`prometheus_storage_spec`, the class
    `prometheus_storage_class`), so it survives its pod; Prometheus does not support NFS (EFS) for its TSDB
    (Prometheus docs, "Storage"). `retention` bounds its age and `retentionSize` (80 % of the volume) its size,
    whichever comes first. None: an emptyDir (a restart starts an empty store; only for a Prometheus that is not
    the stack's store).
    `alerts`: Alertmanager's route and receivers (`alertmanager_config`), merged over the chart's default config.
    """
    storage: dict[str, Any] = {}
    if volume_gib is not None:
        storage = {
            "storageSpec": prometheus_storage_spec(volume_gib),
            "retentionSize": f"{math.floor(volume_gib * PROMETHEUS_RETENTION_SIZE_SHARE)}GiB",
        }
    return {
        "crds": {"enabled": True},
        "prometheus": {
            "prometheusSpec": {
                "retention": retention,
                **storage,
                "serviceMonitorSelectorNilUsesHelmValues": False,
                "podMonitorSelectorNilUsesHelmValues": False,
                "ruleSelectorNilUsesHelmValues": False,
                "tolerations": tolerations,
                "resources": {"requests": {"cpu": "200m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
            }
        },
        "alertmanager": {
            "alertmanagerSpec": {"tolerations": tolerations},
            "serviceAccount": {"create": True, "name": ALERTMANAGER_SA},
            **({"config": alerts} if alerts else {}),
        },
        "prometheusOperator": {"tolerations": tolerations},
        "kube-state-metrics": {
            "metricLabelsAllowlist": [f"pods=[{','.join(POD_LABELS_FOR_JOINS)}]"],
            "tolerations": tolerations,
        },
        # node-exporter runs on every node, GPU nodes included (its chart tolerates every NoSchedule taint).
        # Off, Helm drops the Grafana subchart and every value under it: only the switch is written.
        "grafana": {
            "enabled": True,
            "tolerations": tolerations,
            "sidecar": {"dashboards": {"enabled": True, "label": wellknown.GRAFANA_DASHBOARD_LABEL, "labelValue": "1"}},
        }
        if grafana
        else {"enabled": False},
        # EKS runs the control plane: there is nothing of it to scrape from inside the cluster.
        "kubeControllerManager": {"enabled": False},
        "kubeScheduler": {"enabled": False},
        "kubeEtcd": {"enabled": False},
        "kubeProxy": {"enabled": False},
    }


# --- dcgm-exporter: what it exports, how it reaches DCGM, how its series are labelled -----------------------------
# The counters the exporter reads, as its CSV (`DCGM field, Prometheus type, help`). The first block is the
# exporter's own default list (NVIDIA/dcgm-exporter tag 4.5.3-4.8.2, etc/default-counters.csv, every line that is
# not commented out, read 2026-11-28); the second is what gpuplane turns on beyond it, because the alert rules read
# it: upstream ships these lines commented out (the same file, lines 30-31 and 51-53).
DCGM_DEFAULT_COUNTERS: Final = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes."),
    ("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    ("DCGM_FI_DRIVER_VERSION", "label", "Driver Version"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active."),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus in bytes per second."),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus in bytes per second."),
)
DCGM_ADDED_COUNTERS: Final = (
    ("DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in ns)."),
    ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in ns)."),
    ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."),
    ("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors."),
    # Upstream's line 40, as it writes it; with it in the list the exporter starts its XID collector
    # (internal/pkg/collector/xid_collector.go: IsDCGMExpXIDErrorsCountEnabled), which counts the XID samples DCGM
    # recorded in the last `--xid-count-window-size` ms (default 5 minutes; expcollector.go, GetValuesSince).
    ("DCGM_EXP_XID_ERRORS_COUNT", "counter", "reported XIDs during last window"),
)
# The ConfigMap the GPU Operator reads the CSV from (`dcgmExporter.config`); its chart makes it from `data` under
# the key `dcgm-metrics.csv` (deployments/gpu-operator/templates/dcgm_exporter_config.yaml at v26.7.0).
DCGM_COUNTERS_CONFIG_MAP: Final = "gpuplane-dcgm-counters"


def dcgm_counters_csv() -> str:
    """The exporter's counters file: upstream's default list and the counters the alert rules need beyond it."""
    lines = ["# DCGM field, Prometheus metric type, help message (written by gpuplane)"]
    lines += [f"{field}, {kind}, {help_}" for field, kind, help_ in DCGM_DEFAULT_COUNTERS + DCGM_ADDED_COUNTERS]
    return "\n".join(lines) + "\n"


def dcgm_counters_values(*, operator: bool) -> dict[str, Any]:
    """The counters, as the dcgm-exporter chart or the GPU Operator takes a whole counters list.

    The chart (4.8.2, templates/metrics-configmap.yaml): `customMetrics` becomes its ConfigMap
    `exporter-metrics-config-map`, mounted over /etc/dcgm-exporter/default-counters.csv, the file its default
    `arguments` (`-f`) name; the list replaces the default, it does not add to it, hence the whole list above.
    The operator (v26.7.0): `dcgmExporter.config.name` is the ConfigMap the ClusterPolicy names; with `create`
    and `data` its chart makes it in its own namespace, and the operator mounts its `dcgm-metrics.csv` and sets
    `DCGM_EXPORTER_COLLECTORS` to it (controllers/object_controls.go, "mount configmap for custom metrics").
    """
    if operator:
        return {"config": {"name": DCGM_COUNTERS_CONFIG_MAP, "create": True, "data": dcgm_counters_csv()}}
    return {"customMetrics": dcgm_counters_csv()}


def dcgm_exporter_metrics_values(*, remote_hostengine: bool, operator: bool = False) -> dict[str, Any]:
    """What the dcgm-exporter chart (or the GPU Operator's `dcgmExporter`) adds when metrics are collected.

    `serviceMonitor.enabled` is always written, on or off: GPU Operator v26.7 turns it on by default, and a
    ServiceMonitor without the Prometheus operator's CRD fails the install. `honorLabels` keeps the `pod` and
    `namespace` of the workload holding the GPU, which the exporter attaches, instead of the exporter's own.

    `remote_hostengine`: one DCGM host engine per node. The EKS node monitoring agent runs NVIDIA's
    `nv-hostengine` on every GPU node (its `dcgm-server`, hostPort 5555); two engines on one node fail DCGM's
    profiling metrics (NVIDIA/DCGM#56), so the exporter then connects to the agent's engine
    (`DCGM_REMOTE_HOSTENGINE_INFO`, dcgm-exporter's `-r` flag) instead of starting its own. The chart takes any
    container env, so the address is the node's IP from the downward API. The operator's ClusterPolicy does not:
    its CRD (v26.7.0) admits only `name` and `value` in `dcgmExporter.env` and the API server drops a `valueFrom`,
    which would leave `:5555`. The operator's own way to reach an engine on the node is `localhost:<port>` with
    the exporter on the host's network (object_controls.go: a `DCGM_REMOTE_HOSTENGINE_INFO` starting with
    `localhost` turns `hostNetwork` on; written here too, not left to that prefix rule); the CNI's portmap
    plugin carries localhost traffic to a hostPort (its SNAT chain for packets from localhost).
    """
    env: list[dict[str, Any]] = []
    port = wellknown.DCGM_HOSTENGINE_PORT
    if remote_hostengine and operator:
        return {"env": [{"name": "DCGM_REMOTE_HOSTENGINE_INFO", "value": f"localhost:{port}"}], "hostNetwork": True}
    if remote_hostengine:
        env = [
            {"name": "NODE_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
            {"name": "DCGM_REMOTE_HOSTENGINE_INFO", "value": f"$(NODE_IP):{port}"},
        ]
    return {"env": env}


# The node a GPU is in, as the `node` label on both backends: the managed collector's job and the ServiceMonitor
# both copy the exporter pod's node name. Rules and dashboards use it, never the exporter's own host label, which
# is `Hostname` up to 4.8.2 and `hostname` after (NVIDIA/dcgm-exporter d5e5f51, #655, 2026-05-12).
_DCGM_NODE_RELABEL: Final = {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"}
# The Prometheus operator gives every target the `namespace`, `pod` and `container` of the exporter's own pod;
# with `honorLabels` the exporter's labels (the workload holding the GPU) win where it writes them, but a GPU no
# pod holds would keep the exporter's. The managed collector's job adds none, so the ServiceMonitor drops them:
# on both backends `namespace`/`pod`/`container` name the workload on the GPU, or are absent.
_DCGM_TARGET_LABELS_DROPPED: Final = {"action": "labeldrop", "regex": "namespace|pod|container"}


def dcgm_scrape_settings() -> dict[str, Any]:
    """How the in-cluster Prometheus scrapes dcgm-exporter, whichever object asks it to (one place for both).

    The chart's or the GPU Operator's `serviceMonitor` values and our own ServiceMonitor of the chart's Service
    must label the series alike: the alert rules and dashboards group by `node` and name the workload by
    `namespace`/`pod`. Without the relabelings the operator's target labels give `pod` (the Service's endpoints
    are pods) and no `node` at all: every GPU alert would name an empty node.
    """
    return {
        "honorLabels": True,
        "interval": f"{PROMETHEUS_SCRAPE_INTERVAL_S}s",
        "relabelings": [dict(_DCGM_NODE_RELABEL), dict(_DCGM_TARGET_LABELS_DROPPED)],
    }


def dcgm_service_monitor_values(enabled: bool) -> dict[str, Any]:
    """The `serviceMonitor` block of the dcgm-exporter chart and of the GPU Operator's `dcgmExporter`.

    Always written: the dcgm-exporter chart's own default is `enabled: true` (deployment/values.yaml at chart
    4.6.0 and 4.8.2, NVIDIA/dcgm-exporter d5e5f51, 2026-05-12), as is GPU Operator v26.7's. Its default counters
    (etc/default-counters.csv, same versions) hold every DCGM metric in `DCGM_METRICS` but the ones
    `DCGM_ADDED_COUNTERS` turns on. The exporter reads `DCGM_REMOTE_HOSTENGINE_INFO` as its `-r` flag
    (pkg/cmd/app.go, urfave/cli v2.27 marks a flag set from its environment variable as set, so `UseRemoteHE`
    follows). `relabelings` (the chart's templates/service-monitor.yaml and the ClusterPolicy CRD both take them):
    the `node` label and the workload's `namespace`/`pod`, as the managed collector writes them.
    """
    if not enabled:
        # Off, the chart reads none of the monitor's other keys: only the switch is written.
        return {"enabled": False}
    return {"enabled": True, **dcgm_scrape_settings()}


def kueue_service_monitor() -> dict[str, Any]:
    """Kueue's ServiceMonitor, ours rather than its chart's, so that Kueue's release need not wait for the stack.

    With `enablePrometheus` the Kueue chart renders this object itself (charts/kueue/templates/prometheus/
    monitor.yaml at v0.19.2), so its release would need the ServiceMonitor CRD and wait for kube-prometheus-stack's
    release and its Deployments: a minute on every create, and nothing in Kueue needs Prometheus to run. The chart's
    stays off (`queue.kueue_values`) and this one, the chart's endpoint (HTTPS port `https`, the scraper's
    service-account token, the controller's self-signed certificate unchecked as the chart's default
    `metrics.serviceMonitor.tlsConfig` has it), is applied after the stack (components/observability.py). It lives
    in `monitoring` (there before Kueue's namespace) and selects the metrics Service by the chart's labels
    (`kueue.metricsService.labels`) in Kueue's namespace.
    """
    return {
        "apiVersion": wellknown.MONITORING_API,
        "kind": "ServiceMonitor",
        "metadata": {
            "name": "kueue",
            "namespace": wellknown.MONITORING_NAMESPACE,
            "labels": {"app.kubernetes.io/managed-by": "gpuplane"},
        },
        "spec": {
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/name": "kueue",
                    "app.kubernetes.io/instance": "kueue",
                    "app.kubernetes.io/component": "metrics-service",
                }
            },
            "namespaceSelector": {"matchNames": [wellknown.KUEUE_NAMESPACE]},
            "endpoints": [
                {
                    "port": "https",
                    "path": "/metrics",
                    "scheme": "https",
                    "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
                    "tlsConfig": {"insecureSkipVerify": True},
                    "interval": f"{PROMETHEUS_SCRAPE_INTERVAL_S}s",
                }
            ],
        },
    }


def dcgm_service_monitor() -> dict[str, Any]:
    """dcgm-exporter's ServiceMonitor, ours rather than its chart's, so that the exporter need not wait for the stack.

    The chart's (deployment/templates/service-monitor.yaml, NVIDIA/dcgm-exporter) needs the ServiceMonitor CRD at
    install, which put the exporter behind kube-prometheus-stack's release. The chart's stays off
    (`dcgm_service_monitor_values(False)`) and this one, the same endpoint (port `metrics`) with the same scrape
    settings (`dcgm_scrape_settings`: `honorLabels`, every 30 s, the `node` and workload relabelings), is applied
    after the stack. It selects the chart's Service by its selector labels (release `dcgm-exporter`) in the GPU
    namespace.
    """
    return {
        "apiVersion": wellknown.MONITORING_API,
        "kind": "ServiceMonitor",
        "metadata": {
            "name": "dcgm-exporter",
            "namespace": wellknown.MONITORING_NAMESPACE,
            "labels": {"app.kubernetes.io/managed-by": "gpuplane"},
        },
        "spec": {
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/name": "dcgm-exporter",
                    "app.kubernetes.io/instance": "dcgm-exporter",
                }
            },
            "namespaceSelector": {"matchNames": [wellknown.NVIDIA_NAMESPACE]},
            "endpoints": [{"port": "metrics", "path": "/metrics", **dcgm_scrape_settings()}],
        },
    }


def autoscaler_service_monitor() -> dict[str, Any]:
    """The autoscaler's ServiceMonitor, ours rather than its chart's: the autoscaler must not wait for the stack.

    The chart (9.59.0, kubernetes/autoscaler charts/cluster-autoscaler templates/servicemonitor.yaml, read
    2026-11-26) can make this object (`serviceMonitor.enabled`), but then its release needs the ServiceMonitor CRD
    and so waits for kube-prometheus-stack's release, which waits for the stack's Deployments to be Ready (a
    `helm.v3.Release` awaits every resource unless `skip_await`, pulumi_kubernetes 4.x's docstring). On a
    new cluster whose system nodes are full, those pods wait for a node only the autoscaler adds: a deadlock.
    So the chart's stays off (`autoscaler_values`) and this one, the same as the chart would render, is applied
    after the stack's release (components/observability.py). It selects the chart's Service by the labels the
    chart gives it (`_helpers.tpl` "cluster-autoscaler.instance-name": release, `<cloudProvider>-cluster-autoscaler`)
    in kube-system, on its port `http` (8085), every 30 s like the other targets; the job is the Service's name
    (`AUTOSCALER_METRICS_JOB`), as with the managed collector.
    """
    return {
        "apiVersion": wellknown.MONITORING_API,
        "kind": "ServiceMonitor",
        "metadata": {
            "name": wellknown.CLUSTER_AUTOSCALER_RELEASE,
            "namespace": wellknown.CLUSTER_AUTOSCALER_NAMESPACE,
            "labels": {"app.kubernetes.io/managed-by": "gpuplane"},
        },
        "spec": {
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/instance": wellknown.CLUSTER_AUTOSCALER_RELEASE,
                    "app.kubernetes.io/name": "aws-cluster-autoscaler",
                }
            },
            "namespaceSelector": {"matchNames": [wellknown.CLUSTER_AUTOSCALER_NAMESPACE]},
            "endpoints": [
                {
                    "port": wellknown.CLUSTER_AUTOSCALER_METRICS_PORT_NAME,
                    "path": "/metrics",
                    "interval": f"{PROMETHEUS_SCRAPE_INTERVAL_S}s",
                }
            ],
        },
    }


def serving_pod_monitor(namespace: str) -> dict[str, Any]:
    """A PodMonitor over every TF Serving pod of the namespace: its metrics endpoint on the REST port.

    The variant's pod label becomes a `variant` label, so a CPU and a GPU variant of one model sit side by side.
    """
    return {
        "apiVersion": wellknown.MONITORING_API,
        "kind": "PodMonitor",
        "metadata": {
            "name": SERVING_MONITOR,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "gpuplane"},
        },
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": "tensorflow-serving"}},
            "podMetricsEndpoints": [
                {
                    "port": "http",
                    "path": wellknown.TF_SERVING_METRICS_PATH,
                    "interval": "30s",
                    "relabelings": [
                        {"sourceLabels": ["__meta_kubernetes_pod_label_gpuplane_io_variant"], "targetLabel": "variant"},
                        {
                            "sourceLabels": ["__meta_kubernetes_pod_label_app_kubernetes_io_instance"],
                            "targetLabel": "serving",
                        },
                    ],
                }
            ],
        },
    }


# --- what a serving variant scales on -------------------------------------------------------------------------
def scaling_query(metric: str, namespace: str, serving: str, variant: str) -> tuple[str, str]:
    """(PromQL, KEDA metricType) of one variant's scaling signal.

    `AverageValue` (requests per second, GPU percent): the query is the variant's total and KEDA's HPA divides
    it by the replicas, so the target is per replica. `Value` (p90 latency): the query is already the variant's
    own, and the HPA scales in proportion to how far it is above the target.
    """
    pods = f'namespace="{namespace}",serving="{serving}",variant="{variant}"'
    if metric == "requestsPerSecond":
        return f"sum(rate(:tensorflow:serving:request_count{{{pods}}}[2m]))", "AverageValue"
    if metric == "latencyP90Ms":
        return (
            f"histogram_quantile(0.9, sum by (le) (rate(:tensorflow:serving:request_latency_bucket{{{pods}}}[2m]))) "
            "/ 1000",
            "Value",
        )
    if metric == "gpuUtilization":
        owner = (
            f'kube_pod_labels{{namespace="{namespace}",label_app_kubernetes_io_instance="{serving}",'
            f'label_gpuplane_io_variant="{variant}"}}'
        )
        return (
            f'sum(DCGM_FI_DEV_GPU_UTIL{{namespace="{namespace}"}} * on (namespace, pod) group_left () {owner})',
            "AverageValue",
        )
    raise ValueError(f"metric '{metric}' is not one of requestsPerSecond, latencyP90Ms, gpuUtilization")


# --- alert rules ---------------------------------------------------------------------------------------------
_GPU_NODE = 'kube_node_status_capacity{resource="nvidia_com_gpu"} > 0'


@dataclass(frozen=True)
class XidClass:
    """A class of XIDs: who acts on them, and how loudly the alert asks."""

    alert: str
    severity: str
    xids: tuple[int, ...]
    what: str
    runbook: str


# XIDs by what they ask of a person, from NVIDIA's XID catalog ("Analyzing Xid Errors with the Xid Catalog",
# docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, its "Resolution Bucket (Immediate Action)" column
# for Ampere and newer, read 2026-11-28) and the EKS node monitoring agent's list of the XIDs it turns into the
# `AcceleratedHardwareReady` condition (reasons `NvidiaXID<n>Error`, EKS user guide "node health", read
# 2026-11-28), which is what starts a repair:
# - the node's class: the agent's list. The GPU must be reset, the node rebooted or replaced (catalog: RESET_GPU,
#   RESTART_BM, CONTACT_SUPPORT): the node's runs are lost until then. Critical. DCGM cannot report XIDs 79, 119
#   and 120 (NVIDIA/DCGM#162): for those `GpuNodeHardwareUnhealthy`, the agent's condition, is the signal.
# - the application's class: the fault is in the run's own kernels or follows from killing it (catalog:
#   RESTART_APP or IGNORE): 8 (GPU stopped processing), 13 (graphics engine exception), 31 (GPU memory page
#   fault), 43 (channel reset after a fault), 45 (preemptive cleanup after earlier errors), 94 (contained ECC
#   error: the process that touched the memory is stopped, the GPU goes on). Its owner retries or fixes it. Warning.
# - any other XID: a warning that names it, so a new one is read in the catalog rather than paged on.
XID_CLASSES: Final = (
    XidClass(
        "GpuXidNeedsNodeRepair",
        "critical",
        (46, 48, 54, 62, 63, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151, 155, 156, 158),
        "the GPU must be reset or the node replaced",
        "cordon and drain the node; with nodeGroups[].repair EKS replaces it after the agent's condition has held "
        "10 minutes, otherwise terminate the instance; docs/operations.md, 'A node fails'",
    ),
    XidClass(
        "GpuXidApplicationFault",
        "warning",
        (8, 13, 31, 43, 45, 94),
        "a fault of the run's own kernels",
        "the run's owner reads its log (kubectl logs) and retries or fixes the run; the node is healthy",
    ),
)
XID_WINDOW: Final = "30m"
"""How long an XID alert holds after the exporter's window lets go of the XID: an XID is an event. The exporter's
last-XID gauge cannot tell a second XID of the same code from the first (it keeps the value; NVIDIA/DCGM#277,
dcgm-exporter#500), so the alerts read its windowed count, which does: each XID raises it for the exporter's window
(5 minutes), and the alert holds `XID_WINDOW` past that."""

# Temperature: a fixed margin, stated as such, not a per-model table: 85 C is below the slowdown temperature of
# the data-center GPUs EKS offers (nvidia-smi -q, "GPU Slowdown Temp"), so the alert comes before the GPU slows;
# `GpuThermalThrottling` reads the throttling itself, whatever the model's limit.
GPU_TEMPERATURE_WARN_C: Final = 85
GPU_THERMAL_THROTTLE_SHARE: Final = 0.1
"""Throttled for more than this share of the time (DCGM's thermal violation counter, ns per s) is an alert."""
_GPU_KEY: Final = "node, gpu, UUID"
_GPU_WORKLOAD_KEY: Final = f"{_GPU_KEY}, namespace, pod"


def _xid_expr(codes: str, *, matcher: str = "=~") -> str:
    """The GPUs that had an XID whose code matches, within `XID_WINDOW` of the exporter's, by GPU and code (`err_code`).

    `DCGM_EXP_XID_ERRORS_COUNT{xid="<code>"}` is the number of XIDs of that code DCGM recorded on the GPU in the
    exporter's window (5 minutes; internal/pkg/collector/expcollector.go at 4.5.3-4.8.2); it is there while the
    window holds one, and a GPU without any has one series of 0 and no `xid`. So an alert starts at each XID, a
    repeat of the same code included, and resolves `XID_WINDOW` after the XID leaves the exporter's window (about 35
    minutes after it). The alert is the GPU's, never a pod's: the exporter's pod mapper labels each scrape with
    whoever holds the GPU then, and a run that replaced the faulting one within the window would be blamed as well
    (and a node's XID page twice). The code is named `err_code`, as on the dashboard's last-XID gauge.
    """
    counted = f'DCGM_EXP_XID_ERRORS_COUNT{{xid{matcher}"{codes}",xid!="",xid!="0"}}'
    return (
        f"max by ({_GPU_KEY}, err_code) "
        f'(label_replace(max_over_time({counted}[{XID_WINDOW}]), "err_code", "$1", "xid", "(.+)")) > 0'
    )


def alert_rule_groups(bounds: AlertBounds) -> list[dict[str, Any]]:
    """The alert rules, as the `groups` of a Prometheus rule file (also the spec of a PrometheusRule).

    GPU rules aggregate `by` the GPU (`node`, `gpu`, `UUID`) and, where a run is concerned, its `namespace`/`pod`:
    their labels are the same on either backend and whatever the exporter calls its host label.
    """

    def alert(name: str, expr: str, for_: str, severity: str, summary: str, fix: str) -> dict[str, Any]:  # noqa: PLR0917
        rule: dict[str, Any] = {
            "alert": name,
            "expr": expr,
            "labels": {"severity": severity},
            "annotations": {"summary": summary, "runbook": fix},
        }
        if for_ != "0m":
            rule["for"] = for_
        return rule

    known = "|".join(str(x) for c in XID_CLASSES for x in c.xids)
    where = "GPU {{ $labels.gpu }} on {{ $labels.node }}"
    xids = [
        alert(
            c.alert,
            _xid_expr("|".join(str(x) for x in c.xids)),
            "1m",
            c.severity,
            f"{where} reported XID {{{{ $labels.err_code }}}}: {c.what}"
            + (
                " (the run on that GPU then: the GPU dashboard's per-run use, or kubectl get pods -A "
                "--field-selector spec.nodeName={{ $labels.node }})"
                if c.severity == "warning"
                else ""
            ),
            c.runbook,
        )
        for c in XID_CLASSES
    ]
    xids.append(
        alert(
            "GpuXidOther",
            _xid_expr(known, matcher="!~"),
            "1m",
            "warning",
            f"{where} reported XID {{{{ $labels.err_code }}}}, which gpuplane does not classify",
            "read the XID in NVIDIA's XID catalog (its immediate action) and the node's kernel log; "
            "docs/operations.md, 'A node fails'",
        )
    )
    gpu = [
        *xids,
        alert(
            "GpuTemperatureHigh",
            f"max by ({_GPU_KEY}) (DCGM_FI_DEV_GPU_TEMP) > {GPU_TEMPERATURE_WARN_C}",
            "15m",
            "warning",
            f"{where} has been above {GPU_TEMPERATURE_WARN_C} C for 15 minutes ({{{{ $value }}}} C)",
            "the instance's cooling is AWS's: if one GPU alone runs hot, or it also throttles, replace the node "
            "(terminate the instance); the GPU dashboard shows temperature and throttling per GPU",
        ),
        alert(
            "GpuThermalThrottling",
            f"max by ({_GPU_KEY}) (rate(DCGM_FI_DEV_THERMAL_VIOLATION[5m])) / 1e9 > {GPU_THERMAL_THROTTLE_SHARE}",
            "15m",
            "warning",
            f"{where} is slowed by heat {{{{ $value | humanizePercentage }}}} of the time: its runs are slower",
            "replace the node (terminate the instance) if it persists; a run spread over GPUs waits for the slowest",
        ),
        alert(
            "GpuDoubleBitEccError",
            f"max by ({_GPU_KEY}) (increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[{XID_WINDOW}])) > 0",
            "1m",
            "critical",
            f"{where} had an uncorrectable (double-bit) ECC error: the run on it failed, the GPU needs a reset",
            "cordon and drain the node; the node monitoring agent reports NvidiaDoubleBitError and EKS repair "
            "replaces it (nodeGroups[].repair), otherwise terminate the instance",
        ),
        alert(
            "GpuRowRemapFailed",
            f"max by ({_GPU_KEY}) (DCGM_FI_DEV_ROW_REMAP_FAILURE) > 0",
            "5m",
            "critical",
            f"{where} could not remap a failing memory row: the GPU must be replaced",
            "cordon and drain the node and terminate the instance (AWS replaces the hardware); repair does it when on",
        ),
        alert(
            "GpuMemoryNearFull",
            f"max by ({_GPU_WORKLOAD_KEY}) "
            f"(100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)) > {bounds.gpu_memory_percent}",
            "10m",
            "warning",
            "GPU {{ $labels.gpu }} of pod {{ $labels.namespace }}/{{ $labels.pod }} is {{ $value | humanize }}% full",
            "TensorFlow takes all GPU memory unless told otherwise; the runtime helper sets memory growth",
        ),
        alert(
            "GpuNodeNotReady",
            f'kube_node_status_condition{{condition="Ready",status="true"}} == 0 and on (node) ({_GPU_NODE})',
            "5m",
            "critical",
            "GPU node {{ $labels.node }} is not Ready",
            "kubectl describe node; EKS repairs it when nodeGroups[].repair is on",
        ),
        alert(
            "GpuNodeHardwareUnhealthy",
            'kube_node_status_condition{condition="AcceleratedHardwareReady",status="false"} == 1',
            "1m",
            "critical",
            "GPU node {{ $labels.node }}: the node monitoring agent reports its GPUs unhealthy (repair follows)",
            "kubectl get node -o yaml: the condition's reason says which fault; EKS replaces the node after 10 minutes",
        ),
        alert(
            "DcgmExporterDown",
            f'up{{job=~"{DCGM_JOB_RE}"}} == 0',
            "5m",
            "warning",
            "dcgm-exporter on {{ $labels.instance }} is not answering: GPU metrics and XID alerts are blind there",
            "kubectl -n nvidia-gpu logs ds/dcgm-exporter",
        ),
        # A failed scale-up puts its node group in back-off (5 minutes first, then longer) and the autoscaler
        # tries again: failures in every 15-minute window for 15 minutes mean GPU runs wait on capacity, not on
        # a slow node. One failure followed by a good scale-up stays quiet.
        alert(
            "GpuScaleUpFailing",
            f"{failed_gpu_scale_ups('15m')} > 0",
            "15m",
            "warning",
            "GPU scale-ups of {{ $labels.gpu_name }} keep failing ({{ $labels.reason }}): runs wait for nodes",
            "the node group's Auto Scaling activity (capacity, quota: gpuplane capacity) and the autoscaler's log; "
            "the queue dashboard names the node group in back-off",
        ),
    ]
    serving = [
        alert(
            "ServingLatencyP99High",
            "histogram_quantile(0.99, sum by (namespace, serving, variant, model_name, le) "
            "(rate(:tensorflow:serving:request_latency_bucket[5m]))) / 1000 > "
            f"{bounds.serving_p99_ms}",
            "10m",
            "warning",
            "{{ $labels.serving }}/{{ $labels.variant }} p99 latency is {{ $value | humanize }} ms",
            "more replicas (autoscaling), batching, or the GPU variant; the serving dashboard compares variants",
        ),
    ]
    # Every way a training run waits, one alert each, so the alert says which: in line behind other runs
    # (`active`), refused by its queue's quota (`inadmissible`: with BestEffortFIFO Kueue moves a run that does not
    # fit aside and retries it when quota frees), or holding quota while its ProvisioningRequest waits for GPU nodes
    # (reserving but not admitted; it is not pending at all then). Kueue v0.19.2 pkg/metrics/metrics.go: every
    # one per `cluster_queue` (and `replica_role`, summed away).
    minutes = bounds.queue_wait_minutes
    queue = [
        alert(
            "TrainingRunsWaiting",
            'sum by (cluster_queue) (kueue_pending_workloads{status="active"}) > 0',
            f"{minutes}m",
            "warning",
            f"{{{{ $value }}}} runs have waited in line in queue {{{{ $labels.cluster_queue }}}} for {minutes} minutes "
            "without a break: other runs hold the GPUs",
            "gpuplane queue shows the runs ahead; more quota or a larger maxSize lets more run at once",
        ),
        alert(
            "TrainingRunsOverQuota",
            'sum by (cluster_queue) (kueue_pending_workloads{status="inadmissible"}) > 0',
            f"{minutes}m",
            "warning",
            f"{{{{ $value }}}} runs in queue {{{{ $labels.cluster_queue }}}} do not fit its quota and have waited "
            f"{minutes} minutes",
            "gpuplane queue names the quota each run asks beyond; raise the queue's quota or shrink the run",
        ),
        alert(
            "TrainingRunsWaitingForNodes",
            "sum by (cluster_queue) (kueue_reserving_active_workloads) - (sum by (cluster_queue) "
            "(kueue_admitted_active_workloads) or 0 * sum by (cluster_queue) (kueue_reserving_active_workloads)) > 0",
            f"{minutes}m",
            "warning",
            f"{{{{ $value }}}} runs in queue {{{{ $labels.cluster_queue }}}} hold their quota and have waited "
            f"{minutes} minutes for GPU nodes (provisioning)",
            "kubectl get provisioningrequests -A; the queue dashboard shows failed scale-ups, back-off and node "
            "groups at their maxSize",
        ),
        alert(
            "NodeGroupAtMaxSize",
            "max by (node_group) (cluster_autoscaler_node_group_target_count) "
            ">= max by (node_group) (cluster_autoscaler_node_group_max_count) "
            'and on () (sum(cluster_autoscaler_unschedulable_pods_count{type="unschedulable"}) > 0)',
            "15m",
            "warning",
            "node group {{ $labels.node_group }} is at its maxSize while pods wait for a node: runs wait",
            "raise nodeGroups[].maxSize (and the queue's quota with it) or wait for runs to finish",
        ),
    ]
    return [
        {"name": "gpuplane-gpu", "rules": gpu},
        {"name": "gpuplane-serving", "rules": serving},
        {"name": "gpuplane-queue", "rules": queue},
    ]


def prometheus_rule(name: str, namespace: str, groups: list[dict[str, Any]]) -> dict[str, Any]:
    """The rule groups as a PrometheusRule object the operator loads."""
    return {
        "apiVersion": wellknown.MONITORING_API,
        "kind": "PrometheusRule",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": "gpuplane"}},
        "spec": {"groups": groups},
    }


# --- dashboards ----------------------------------------------------------------------------------------------
_DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def _panel(index: int, title: str, exprs: list[tuple[str, str]], unit: str) -> dict[str, Any]:
    return {
        "id": index + 1,
        "type": "timeseries",
        "title": title,
        "datasource": _DATASOURCE,
        "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": 8 * (index // 2)},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [
            {"refId": chr(ord("A") + i), "datasource": _DATASOURCE, "expr": expr, "legendFormat": legend}
            for i, (expr, legend) in enumerate(exprs)
        ],
    }


def _dashboard(uid: str, title: str, panels: list[tuple[str, list[tuple[str, str]], str]]) -> dict[str, Any]:
    """A Grafana dashboard whose data source is a variable: importable into any Grafana (Amazon Managed too)."""
    return {
        "uid": uid,
        "title": title,
        "tags": ["gpuplane"],
        "schemaVersion": 39,
        "editable": True,
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [{"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"}]
        },
        "panels": [_panel(i, t, e, u) for i, (t, e, u) in enumerate(panels)],
    }


_RUN_JOIN = (
    " * on (namespace, pod) group_left (label_jobset_sigs_k8s_io_jobset_name) "
    'kube_pod_labels{label_jobset_sigs_k8s_io_jobset_name!=""}'
)
_MODEL_JOIN = (
    " * on (namespace, pod) group_left (label_app_kubernetes_io_instance, label_gpuplane_io_variant) "
    'kube_pod_labels{label_gpuplane_io_variant!=""}'
)


def dashboards() -> dict[str, dict[str, Any]]:
    """The GPU, serving and queue dashboards, by file name."""
    latency = (
        "histogram_quantile({q}, sum by (serving, variant, le) "
        "(rate(:tensorflow:serving:request_latency_bucket[5m]))) / 1000"
    )
    gpu = _dashboard(
        "gpuplane-gpus",
        "gpuplane / GPUs",
        [
            ("GPU utilization per node and GPU", [("DCGM_FI_DEV_GPU_UTIL", "{{node}} gpu {{gpu}}")], "percent"),
            (
                "GPU memory used",
                [
                    (
                        "100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)",
                        "{{node}} gpu {{gpu}}",
                    )
                ],
                "percent",
            ),
            (
                "GPU utilization per training run",
                [
                    (
                        f"avg by (label_jobset_sigs_k8s_io_jobset_name) (DCGM_FI_DEV_GPU_UTIL{_RUN_JOIN})",
                        "{{label_jobset_sigs_k8s_io_jobset_name}}",
                    )
                ],
                "percent",
            ),
            (
                "GPU utilization per served model and variant",
                [
                    (
                        "avg by (label_app_kubernetes_io_instance, label_gpuplane_io_variant) "
                        f"(DCGM_FI_DEV_GPU_UTIL{_MODEL_JOIN})",
                        "{{label_app_kubernetes_io_instance}}/{{label_gpuplane_io_variant}}",
                    )
                ],
                "percent",
            ),
            (
                "Last XID per GPU (the code; none: no XID since the exporter started)",
                [
                    (
                        'max by (node, gpu, err_code) (DCGM_FI_DEV_XID_ERRORS{err_code!="0"})',
                        "{{node}} gpu {{gpu}} XID {{err_code}}",
                    )
                ],
                "none",
            ),
            (
                "GPU temperature (C) and share of time throttled by heat or power",
                [
                    ("max by (node, gpu) (DCGM_FI_DEV_GPU_TEMP)", "{{node}} gpu {{gpu}} C"),
                    (
                        "max by (node, gpu) (rate(DCGM_FI_DEV_THERMAL_VIOLATION[5m])) / 1e9 * 100",
                        "{{node}} gpu {{gpu}} % thermal",
                    ),
                    (
                        "max by (node, gpu) (rate(DCGM_FI_DEV_POWER_VIOLATION[5m])) / 1e9 * 100",
                        "{{node}} gpu {{gpu}} % power",
                    ),
                ],
                "none",
            ),
            (
                "GPU memory faults: uncorrectable ECC errors (30 min) and failed row remaps",
                [
                    (
                        f"max by (node, gpu) (increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[{XID_WINDOW}]))",
                        "{{node}} gpu {{gpu}} DBE",
                    ),
                    ("max by (node, gpu) (DCGM_FI_DEV_ROW_REMAP_FAILURE) > 0", "{{node}} gpu {{gpu}} remap failed"),
                ],
                "none",
            ),
            (
                "GPU nodes with unhealthy hardware (node monitoring agent)",
                [('kube_node_status_condition{condition="AcceleratedHardwareReady",status="false"} == 1', "{{node}}")],
                "none",
            ),
        ],
    )
    serving = _dashboard(
        "gpuplane-serving",
        "gpuplane / Serving",
        [
            (
                "Requests per second, per variant (CPU and GPU side by side)",
                [
                    (
                        "sum by (serving, variant) (rate(:tensorflow:serving:request_count[5m]))",
                        "{{serving}}/{{variant}}",
                    )
                ],
                "reqps",
            ),
            (
                "Errors per second",
                [
                    (
                        'sum by (serving, variant) (rate(:tensorflow:serving:request_count{status!="OK"}[5m]))',
                        "{{serving}}/{{variant}}",
                    )
                ],
                "reqps",
            ),
            (
                "Latency p50 / p90 / p99 per variant",
                [(latency.format(q=q), f"{{{{serving}}}}/{{{{variant}}}} p{int(q * 100)}") for q in (0.5, 0.9, 0.99)],
                "ms",
            ),
        ],
    )
    queue = _dashboard(
        "gpuplane-queue",
        "gpuplane / Training queue",
        [
            (
                "Runs waiting, per queue",
                [("sum by (cluster_queue, status) (kueue_pending_workloads)", "{{cluster_queue}} {{status}}")],
                "none",
            ),
            (
                "Runs holding quota while they wait for GPU nodes (provisioning)",
                [
                    (
                        "sum by (cluster_queue) (kueue_reserving_active_workloads) - "
                        "sum by (cluster_queue) (kueue_admitted_active_workloads)",
                        "{{cluster_queue}}",
                    )
                ],
                "none",
            ),
            (
                "Admission wait p90",
                [
                    (
                        "histogram_quantile(0.9, sum by (cluster_queue, le) "
                        "(rate(kueue_admission_wait_time_seconds_bucket[30m])))",
                        "{{cluster_queue}}",
                    )
                ],
                "s",
            ),
            (
                "Usage vs quota",
                [
                    (
                        "sum by (cluster_queue, resource) (kueue_cluster_queue_resource_usage)",
                        "{{cluster_queue}} {{resource}} used",
                    ),
                    (
                        "sum by (cluster_queue, resource) (kueue_cluster_queue_nominal_quota)",
                        "{{cluster_queue}} {{resource}} quota",
                    ),
                ],
                "none",
            ),
            # Why a run waits once Kueue admitted it: its pods wait for a node (the autoscaler's view).
            (
                "Pods waiting for a node (cluster-autoscaler)",
                [("sum by (type) (cluster_autoscaler_unschedulable_pods_count)", "{{type}}")],
                "none",
            ),
            (
                "Nodes added and failed scale-ups (30 min)",
                [
                    ("sum(increase(cluster_autoscaler_scaled_up_nodes_total[30m]))", "nodes added"),
                    (
                        "sum by (reason) (increase(cluster_autoscaler_failed_scale_ups_total[30m]))",
                        "failed: {{reason}}",
                    ),
                    (
                        failed_gpu_scale_ups("30m"),
                        "GPU {{gpu_name}} failed: {{reason}}",
                    ),
                ],
                "none",
            ),
            (
                "Node groups in back-off after a failed scale-up",
                [
                    (
                        "max by (node_group, reason) (cluster_autoscaler_node_group_backoff_status) == 1",
                        "{{node_group}}: {{reason}}",
                    )
                ],
                "none",
            ),
            (
                "Node groups: size asked for and maxSize",
                [
                    ("max by (node_group) (cluster_autoscaler_node_group_target_count)", "{{node_group}} target"),
                    ("max by (node_group) (cluster_autoscaler_node_group_max_count)", "{{node_group}} max"),
                ],
                "none",
            ),
        ],
    )
    return {"gpuplane-gpus.json": gpu, "gpuplane-serving.json": serving, "gpuplane-queue.json": queue}


def dashboard_expressions(dashboard: dict[str, Any]) -> list[str]:
    """Every PromQL expression of a dashboard (for the tests that parse them and check their metric names)."""
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def dashboard_config_map(file_name: str, dashboard: dict[str, Any], namespace: str) -> dict[str, Any]:
    """A ConfigMap Grafana's sidecar loads (label `grafana_dashboard: "1"`)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": file_name.removesuffix(".json"),
            "namespace": namespace,
            "labels": {wellknown.GRAFANA_DASHBOARD_LABEL: "1", "app.kubernetes.io/managed-by": "gpuplane"},
        },
        "data": {file_name: json.dumps(dashboard, indent=2, sort_keys=True)},
    }


# --- Amazon Managed Service for Prometheus (`observability.metrics: managedPrometheus`) -------------------------
# The AWS managed collector (`aws.amp.Scraper`) scrapes in-cluster targets through ENIs in the cluster's subnets.
# Its documented limits (AMP user guide, "Ingest metrics with AWS managed collectors" / scraper configuration,
# checked by `collector_problems`): targets found with `kubernetes_sd_configs` only,
# a scrape interval of at least 30 s, bearer auth from the service account token only (no `tls_config`). Kueue
# serves its metrics only on HTTPS with a self-made certificate and authn/authz (v0.19.2 has no plain listener),
# so the collector scrapes a plain-HTTP relay in Kueue's namespace instead (manifests/queue.py,
# `metrics_relay_objects`), and the queue dashboard and the queue-wait alert work with this backend too.
COLLECTOR_MIN_INTERVAL_S: Final = 30
COLLECTOR_JOB_KEYS: Final = frozenset(
    {
        "job_name",
        "scrape_interval",
        "scrape_timeout",
        "metrics_path",
        "scheme",
        "honor_labels",
        "honor_timestamps",
        "kubernetes_sd_configs",
        "relabel_configs",
        "metric_relabel_configs",
        "bearer_token_file",
        "authorization",
    }
)
COLLECTOR_GLOBAL_KEYS: Final = frozenset({"scrape_interval", "scrape_timeout", "external_labels"})
# No access entry or RBAC of ours for the collector: on a cluster whose authentication mode is `API` or
# `API_AND_CONFIG_MAP` (ours), a scraper created through the API gets its access entry and policy from AMP itself
# (AMP user guide, AMP-collector-how-to, "Configure Amazon EKS for scraper access with access entries"); one of
# ours for the same role would collide with it.
COLLECTOR_TOKEN_FILE: Final = "/var/run/secrets/kubernetes.io/serviceaccount/token"
_KSM_SERVICE: Final = "kube-prometheus-stack-kube-state-metrics"


def _seconds(duration: str) -> float:
    """Seconds of a Prometheus duration such as `30s`, `1m` or `1m30s`."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    parts = re.findall(r"([0-9]+)(ms|s|m|h|d|w|y)", duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        raise ValueError(f"'{duration}' is not a Prometheus duration")
    return sum(int(n) * units[u] for n, u in parts)


def managed_scrape_config(workload_namespace: str | None) -> dict[str, Any]:
    """The managed collector's scrape configuration: dcgm-exporter, kube-state-metrics, Kueue, autoscaler, TF Serving.

    Plain HTTP targets found through the Kubernetes API, every 30 s (the collector's minimum). The job names
    and the `serving`/`variant` labels match what the in-cluster Prometheus produces (its ServiceMonitor and
    PodMonitor), so the same alert rules, dashboards and scaling queries read either store. `workload_namespace`:
    where TF Serving runs, when the stack serves models. Kueue's job reads its relay's Service in Kueue's
    namespace (the relay exists when training does; without it the job finds no target and costs nothing) and
    writes the `job` label the in-cluster ServiceMonitor would (`queue.KUEUE_METRICS_JOB`); so does the
    autoscaler's (`AUTOSCALER_METRICS_JOB`, its chart's Service in kube-system).
    """
    jobs: list[dict[str, Any]] = [
        {
            "job_name": "dcgm-exporter",
            "honor_labels": True,  # keep the pod/namespace of the workload holding the GPU (as the ServiceMonitor)
            "kubernetes_sd_configs": [{"role": "endpoints"}],
            "relabel_configs": [
                {"source_labels": ["__meta_kubernetes_service_name"], "regex": DCGM_JOB_RE, "action": "keep"},
                {
                    "source_labels": ["__meta_kubernetes_endpoint_port_number"],
                    "regex": str(wellknown.DCGM_EXPORTER_PORT),
                    "action": "keep",
                },
                {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "job"},
                {"source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": "node"},
            ],
        },
        {
            "job_name": "kube-state-metrics",
            "honor_labels": True,
            "kubernetes_sd_configs": [{"role": "endpoints", "namespaces": {"names": [wellknown.MONITORING_NAMESPACE]}}],
            "relabel_configs": [
                {"source_labels": ["__meta_kubernetes_service_name"], "regex": _KSM_SERVICE, "action": "keep"},
                {"source_labels": ["__meta_kubernetes_endpoint_port_name"], "regex": "http", "action": "keep"},
            ],
        },
        {
            "job_name": "kueue",
            "kubernetes_sd_configs": [{"role": "endpoints", "namespaces": {"names": [wellknown.KUEUE_NAMESPACE]}}],
            "relabel_configs": [
                {"source_labels": ["__meta_kubernetes_service_name"], "regex": queue.RELAY_SERVICE, "action": "keep"},
                {
                    "source_labels": ["__meta_kubernetes_endpoint_port_name"],
                    "regex": queue.RELAY_PORT_NAME,
                    "action": "keep",
                },
                {"target_label": "job", "replacement": queue.KUEUE_METRICS_JOB},
            ],
        },
        {
            # The chart's Service in front of the autoscaler: plain HTTP, no authentication (wellknown.py,
            # CLUSTER_AUTOSCALER_SERVICE), so the collector reads it directly. Without the autoscaler the job
            # finds no target and costs nothing.
            "job_name": "cluster-autoscaler",
            "kubernetes_sd_configs": [
                {"role": "endpoints", "namespaces": {"names": [wellknown.CLUSTER_AUTOSCALER_NAMESPACE]}}
            ],
            "relabel_configs": [
                {
                    "source_labels": ["__meta_kubernetes_service_name"],
                    "regex": wellknown.CLUSTER_AUTOSCALER_SERVICE,
                    "action": "keep",
                },
                {
                    "source_labels": ["__meta_kubernetes_endpoint_port_name"],
                    "regex": wellknown.CLUSTER_AUTOSCALER_METRICS_PORT_NAME,
                    "action": "keep",
                },
                {"target_label": "job", "replacement": AUTOSCALER_METRICS_JOB},
            ],
            # Its loop-timing histogram and summary (`function_duration_seconds`: 30 buckets for each of up to 18
            # parts of the loop, metrics.go at 1.35.2) are most of its ~700 series and nothing here reads them:
            # dropped before AMP bills their samples (~20/s). The in-cluster Prometheus keeps them.
            "metric_relabel_configs": [
                {"source_labels": ["__name__"], "regex": AUTOSCALER_DROPPED_RE, "action": "drop"},
            ],
        },
    ]
    if workload_namespace is not None:
        jobs.append(
            {
                "job_name": SERVING_MONITOR,
                "metrics_path": wellknown.TF_SERVING_METRICS_PATH,
                "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [workload_namespace]}}],
                "relabel_configs": [
                    {
                        "source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name"],
                        "regex": "tensorflow-serving",
                        "action": "keep",
                    },
                    {"source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": "http", "action": "keep"},
                    {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
                    {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
                    {"source_labels": ["__meta_kubernetes_pod_label_gpuplane_io_variant"], "target_label": "variant"},
                    {
                        "source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_instance"],
                        "target_label": "serving",
                    },
                ],
            }
        )
    interval = f"{COLLECTOR_MIN_INTERVAL_S}s"
    return {"global": {"scrape_interval": interval, "scrape_timeout": "10s"}, "scrape_configs": jobs}


def collector_problems(config: dict[str, Any]) -> list[str]:
    """What in a scrape configuration the AWS managed collector does not take (empty: none).

    The AMP user guide (AMP-collector-how-to, "Scraper configuration", read 2026-11-26) lists what it takes:
    `kubernetes_sd_configs` the only discovery, a scrape interval of at least 30 s, and authorization only
    `Bearer` from the service account's token file. Checked here, stricter where gpuplane needs no more: top-level
    keys (`global`, `scrape_configs`), global keys, each job's keys (no `static_configs`, whose targets would have
    to be IP addresses, no other `*_sd_configs`, no `tls_config`, no basic auth), at least one
    `kubernetes_sd_configs` per job, the intervals, and the token file.
    """
    problems = [
        f"top-level key '{k}' is not taken by the collector" for k in config if k not in {"global", "scrape_configs"}
    ]
    glob = config.get("global", {})
    problems += [f"global.{k} is not taken by the collector" for k in glob if k not in COLLECTOR_GLOBAL_KEYS]
    intervals = [("global.scrape_interval", glob.get("scrape_interval", "1m"))]
    for i, job in enumerate(config.get("scrape_configs", [])):
        where = f"scrape_configs[{i}] ({job.get('job_name')})"
        problems += [f"{where}.{k} is not taken by the collector" for k in job if k not in COLLECTOR_JOB_KEYS]
        if not job.get("kubernetes_sd_configs"):
            problems.append(f"{where} finds no targets with kubernetes_sd_configs (the only discovery it takes)")
        token = job.get("bearer_token_file", job.get("authorization", {}).get("credentials_file", COLLECTOR_TOKEN_FILE))
        if token != COLLECTOR_TOKEN_FILE:
            problems.append(f"{where}: the bearer token must be {COLLECTOR_TOKEN_FILE}, not '{token}'")
        if job.get("authorization", {}).get("type", "Bearer") != "Bearer":
            problems.append(f"{where}.authorization.type must be Bearer (the only one the collector takes)")
        if "scrape_interval" in job:
            intervals.append((f"{where}.scrape_interval", job["scrape_interval"]))
    problems += [
        f"{key} is {value}; the collector scrapes at most every {COLLECTOR_MIN_INTERVAL_S}s"
        for key, value in intervals
        if _seconds(value) < COLLECTOR_MIN_INTERVAL_S
    ]
    return problems


def to_yaml(doc: dict[str, Any]) -> str:
    """A YAML document, keys in the order written (what the collector, AMP's rule API and the render read)."""
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def amp_alertmanager_definition(topic_arn: str, region: str) -> str:
    """AMP's Alertmanager definition: `alertmanager_config` (a YAML string) holding the same route and receivers.

    AMP's Alertmanager sends to SNS only, signed by the service itself (the topic's policy lets
    `aps.amazonaws.com` publish), so the receiver is the same `sns_configs` with `sigv4.region`.
    """
    return to_yaml({"alertmanager_config": to_yaml(alertmanager_config(topic_arn, region))})


def managed_stack_values(*, tolerations: list[dict[str, str]]) -> dict[str, Any]:
    """kube-prometheus-stack with only what the managed collector scrapes: kube-state-metrics (and the CRDs).

    Prometheus, Alertmanager and Grafana are AMP's (or the user's Grafana's); node-exporter is off (nothing
    queries it). The CRDs stay: the dcgm-exporter and Kueue charts create ServiceMonitors whatever the backend.
    """
    values = stack_values(retention="1d", grafana=False, tolerations=tolerations)
    values["prometheus"] = {"enabled": False}
    values["alertmanager"] = {"enabled": False}
    values["nodeExporter"] = {"enabled": False}
    values["defaultRules"] = {"create": False}
    return values


def amp_query_address(prometheus_endpoint: str) -> str:
    """KEDA's `serverAddress` for a workspace: its endpoint without the trailing `/` (KEDA appends `/api/v1/query`).

    `aws.amp.Workspace.prometheus_endpoint` is `https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>/`;
    KEDA's AMP end-to-end test uses the same URL without the slash.
    """
    return prometheus_endpoint.rstrip("/")


def keda_amp_trigger_auth() -> dict[str, Any]:
    """The ClusterTriggerAuthentication for AMP: the KEDA operator's own AWS credentials (EKS Pod Identity).

    `podIdentity.provider: aws` with `identityOwner: keda` (the CRD's enum: keda | workload; keda/templates/crds/
    crd-clustertriggerauthentications.yaml at chart 2.20.2): the operator's default credential chain, which Pod
    Identity fills for its service account `wellknown.KEDA_OPERATOR_SA`. Cluster-scoped, so every serving namespace
    names the same one.
    """
    return {
        "apiVersion": wellknown.KEDA_API,
        "kind": "ClusterTriggerAuthentication",
        "metadata": {"name": wellknown.KEDA_AMP_AUTH, "labels": {"app.kubernetes.io/managed-by": "gpuplane"}},
        "spec": {"podIdentity": {"provider": "aws", "identityOwner": "keda"}},
    }


def grafana_amp_datasource(query_url: str, region: str) -> dict[str, Any]:
    """A Grafana data source provisioning file for the workspace: the Prometheus plugin, SigV4-signed.

    The dashboards' `datasource` variable lists data sources of type `prometheus`, which this one is (as is
    Amazon Managed Grafana's AMP data source), so they import unchanged. `sigV4AuthType: default` takes Grafana's
    AWS default credential chain (Pod Identity, an instance role); a Grafana of one's own also needs
    `[auth] sigv4_auth_enabled = true` and a role allowed `aps:QueryMetrics` (the policy KEDA's role has).
    """
    return {
        "apiVersion": 1,
        "datasources": [
            {
                "name": "gpuplane-amp",
                "type": "prometheus",
                "access": "proxy",
                "url": query_url,
                "jsonData": {
                    "httpMethod": "POST",
                    "sigV4Auth": True,
                    "sigV4AuthType": "default",
                    "sigV4Region": region,
                },
            }
        ],
    }
