"""Metrics, alert rules and dashboards: the Prometheus stack's values and the objects it reads, as plain dicts.

What it answers: "how busy are my GPUs, per run and per model?", "why did this run wait?", "why is this node
failing my pods?". The store is the Prometheus of kube-prometheus-stack (versions.py); the exporters are
dcgm-exporter (per GPU, with the `pod`/`namespace` of the pod holding it), TF Serving's own endpoint, Kueue's
and kube-state-metrics (node conditions, pod labels for joins).

Every metric name the rules and dashboards query is in `KNOWN_METRICS`, with where it comes from; a test reads
each expression back and fails on a name not listed, and promtool parses every expression.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from gpuplane.manifests import versions

# --- metric names, by exporter (FACTS.md "Operating GPUs"; exporters' docs) --------------------------------
DCGM_METRICS: Final = (
    "DCGM_FI_DEV_GPU_UTIL",  # percent of time a kernel ran
    "DCGM_FI_DEV_FB_USED",  # framebuffer MiB used
    "DCGM_FI_DEV_FB_FREE",  # framebuffer MiB free
    "DCGM_FI_DEV_XID_ERRORS",  # the last XID seen (0: none)
)
TF_SERVING_METRICS: Final = (
    ":tensorflow:serving:request_count",  # {model_name, status}
    ":tensorflow:serving:request_latency_bucket",  # microseconds histogram
)
KUEUE_METRICS: Final = (
    "kueue_pending_workloads",  # {cluster_queue, status: active|inadmissible}
    "kueue_admission_wait_time_seconds_bucket",
    "kueue_cluster_queue_resource_usage",  # {cluster_queue, flavor, resource}
    "kueue_cluster_queue_nominal_quota",
)
KUBE_STATE_METRICS: Final = (
    "kube_node_status_condition",  # every node condition, the agent's AcceleratedHardwareReady included
    "kube_node_status_capacity",  # {resource: nvidia_com_gpu}
    "kube_pod_labels",  # the pod labels allowed by `metricLabelsAllowlist`
)
PROMETHEUS_METRICS: Final = ("up",)
KNOWN_METRICS: Final = frozenset(
    DCGM_METRICS + TF_SERVING_METRICS + KUEUE_METRICS + KUBE_STATE_METRICS + PROMETHEUS_METRICS
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


@dataclass(frozen=True)
class AlertBounds:
    """The configured bounds the alert rules compare against."""

    serving_p99_ms: int = 500
    queue_wait_minutes: int = 30
    gpu_memory_percent: int = 95


ALERTMANAGER_SA: Final = "gpuplane-alertmanager"


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
) -> dict[str, Any]:
    """Values of kube-prometheus-stack: read every ServiceMonitor, PodMonitor and rule, not only the release's.

    The `*SelectorNilUsesHelmValues: false` switches make Prometheus read the objects of other charts (the
    dcgm-exporter's ServiceMonitor, Kueue's, ours) without each carrying this release's label. Prometheus keeps
    its data on an emptyDir: the cluster has no EBS CSI driver, and Prometheus does not support NFS (EFS) for its
    TSDB (Prometheus docs, "Storage"); a restart starts an empty store, and `retention` bounds its size.
    `alerts`: Alertmanager's route and receivers (`alertmanager_config`), merged over the chart's default config.
    """
    return {
        "crds": {"enabled": True},
        "prometheus": {
            "prometheusSpec": {
                "retention": retention,
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
        "grafana": {
            "enabled": grafana,
            "tolerations": tolerations,
            "sidecar": {"dashboards": {"enabled": True, "label": versions.GRAFANA_DASHBOARD_LABEL, "labelValue": "1"}},
        },
        # EKS runs the control plane: there is nothing of it to scrape from inside the cluster.
        "kubeControllerManager": {"enabled": False},
        "kubeScheduler": {"enabled": False},
        "kubeEtcd": {"enabled": False},
        "kubeProxy": {"enabled": False},
    }


def dcgm_exporter_metrics_values(*, remote_hostengine: bool) -> dict[str, Any]:
    """What the dcgm-exporter chart (or the GPU Operator's `dcgmExporter`) adds when metrics are collected.

    `serviceMonitor.enabled` is always written, on or off: GPU Operator v26.7 turns it on by default, and a
    ServiceMonitor without the Prometheus operator's CRD fails the install. `honorLabels` keeps the `pod` and
    `namespace` of the workload holding the GPU, which the exporter attaches, instead of the exporter's own.

    `remote_hostengine`: one DCGM host engine per node. The EKS node monitoring agent runs NVIDIA's
    `nv-hostengine` on every GPU node (its `dcgm-server`, hostPort 5555); two engines on one node fail DCGM's
    profiling metrics (NVIDIA/DCGM#56), so the exporter then connects to the agent's engine on the node's IP
    (`DCGM_REMOTE_HOSTENGINE_INFO`, dcgm-exporter's `-r` flag) instead of starting its own.
    """
    env: list[dict[str, Any]] = []
    if remote_hostengine:
        env = [
            {"name": "NODE_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
            {"name": "DCGM_REMOTE_HOSTENGINE_INFO", "value": f"$(NODE_IP):{versions.DCGM_HOSTENGINE_PORT}"},
        ]
    return {"env": env}


def dcgm_service_monitor_values(enabled: bool) -> dict[str, Any]:
    """The `serviceMonitor` block of the dcgm-exporter chart and of the GPU Operator's `dcgmExporter`.

    Always written: the dcgm-exporter chart's own default is `enabled: true` (deployment/values.yaml at chart
    4.6.0 and 4.8.2, NVIDIA/dcgm-exporter d5e5f51, 2026-05-12), as is GPU Operator v26.7's. Its default counters
    (etc/default-counters.csv, same versions) hold every DCGM metric in `DCGM_METRICS`. The exporter reads
    `DCGM_REMOTE_HOSTENGINE_INFO` as its `-r` flag (pkg/cmd/app.go, urfave/cli v2.27 marks a flag set from its
    environment variable as set, so `UseRemoteHE` follows).
    """
    return {"enabled": enabled, "honorLabels": True, "interval": "30s"}


def serving_pod_monitor(namespace: str) -> dict[str, Any]:
    """A PodMonitor over every TF Serving pod of the namespace: its metrics endpoint on the REST port.

    The variant's pod label becomes a `variant` label, so a CPU and a GPU variant of one model sit side by side.
    """
    return {
        "apiVersion": versions.MONITORING_API,
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
                    "path": versions.TF_SERVING_METRICS_PATH,
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


def alert_rule_groups(bounds: AlertBounds) -> list[dict[str, Any]]:
    """The alert rules, as the `groups` of a Prometheus rule file (also the spec of a PrometheusRule)."""

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

    gpu = [
        alert(
            "GpuXidError",
            "DCGM_FI_DEV_XID_ERRORS > 0",
            "0m",
            "critical",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} reported XID {{ $value }}",
            "XIDs 48, 74, 79, 95 replace the node (nodeGroups[].repair); others: docs/operations.md, 'A node fails'",
        ),
        alert(
            "GpuMemoryNearFull",
            f"100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > {bounds.gpu_memory_percent}",
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
    queue = [
        alert(
            "TrainingRunsWaiting",
            'sum by (cluster_queue) (kueue_pending_workloads{status="active"}) > 0',
            f"{bounds.queue_wait_minutes}m",
            "warning",
            "{{ $value }} runs have waited in queue {{ $labels.cluster_queue }} for "
            f"{bounds.queue_wait_minutes} minutes without a break",
            "gpuplane queue shows why (quota, no GPU node, a node group at its maxSize)",
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
        "apiVersion": versions.MONITORING_API,
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
            ("GPU utilization per node and GPU", [("DCGM_FI_DEV_GPU_UTIL", "{{Hostname}} gpu {{gpu}}")], "percent"),
            (
                "GPU memory used",
                [
                    (
                        "100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)",
                        "{{Hostname}} gpu {{gpu}}",
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
            ("Last XID per GPU (0: none)", [("DCGM_FI_DEV_XID_ERRORS", "{{Hostname}} gpu {{gpu}}")], "none"),
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
            "labels": {versions.GRAFANA_DASHBOARD_LABEL: "1", "app.kubernetes.io/managed-by": "gpuplane"},
        },
        "data": {file_name: json.dumps(dashboard, indent=2, sort_keys=True)},
    }
