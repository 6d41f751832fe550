"""`observability.metrics: cloudwatch` as plain documents: the add-on's configuration, alarms, the GPU dashboard.

Container Insights with enhanced observability (the `amazon-cloudwatch-observability` EKS add-on) publishes
fixed metrics into the `ContainerInsights` namespace: no PromQL, no scrape jobs, no TF Serving or Kueue metrics.
So this backend has its own alarms (CloudWatch metric alarms on those metrics, to the same SNS topic the other
backends use) and its own dashboard (a CloudWatch dashboard), built here as pure values that tests check against
botocore's `cloudwatch` model and against the metric table below.

Source of every metric name and dimension set below: the CloudWatch user guide page "Amazon EKS and Kubernetes
Container Insights with enhanced observability metrics" (Container-Insights-metrics-enhanced-EKS; its cluster,
node, node status and "NVIDIA GPU metrics" tables), stored copy read 2026-11-26. GPU metrics need add-on
v1.3.0-eksbuild.1 or later and `accelerated_compute_metrics` (on by default); Pod Identity for the agent needs
add-on v3.1.0 or later (CloudWatch user guide, "Quick start with the Amazon CloudWatch Observability EKS
add-on", read 2026-11-26). Container Insights has no XID metric: a GPU fault reaches it as a failed node (the
node monitoring agent's `AcceleratedHardwareReady` condition makes the node count in `cluster_failed_node_count`,
which counts nodes "suffering from any node conditions").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

from gpuplane.manifests import observability, wellknown

NAMESPACE: Final = wellknown.CONTAINER_INSIGHTS_NAMESPACE
_CLUSTER: Final = ("ClusterName",)
_NODE: Final = ("ClusterName", "InstanceId", "NodeName")
_GPU_DEVICE: Final = ("ClusterName", "InstanceId", "InstanceType", "NodeName", "GpuDevice")
_POD: Final = ("ClusterName", "Namespace", "PodName")
_POD_FULL: Final = ("ClusterName", "Namespace", "PodName", "FullPodName")
_CONTAINER: Final = ("ClusterName", "Namespace", "PodName", "ContainerName")

# Metric -> the dimension sets Container Insights publishes it with (the user guide's tables, see above).
METRICS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "cluster_failed_node_count": (_CLUSTER,),
    "cluster_node_count": (_CLUSTER,),
    "node_status_condition_ready": (_CLUSTER, _NODE),
    "node_gpu_limit": (_CLUSTER, _NODE),
    "node_gpu_usage_total": (_CLUSTER, _NODE),
    "node_gpu_reserved_capacity": (_CLUSTER, _NODE),
    **{
        f"node_gpu_{m}": (_CLUSTER, _NODE, _GPU_DEVICE)
        for m in (
            "utilization",
            "memory_utilization",
            "memory_used",
            "memory_total",
            "temperature",
            "power_draw",
            "tensor_core_utilization",
        )
    },
    **{
        f"pod_gpu_{m}": (
            _CLUSTER,
            ("ClusterName", "Namespace"),
            ("ClusterName", "Namespace", "Service"),
            _POD,
            _POD_FULL,
        )
        for m in ("memory_utilization", "memory_used", "memory_total", "temperature", "power_draw")
    },
    "pod_gpu_utilization": (
        _CLUSTER,
        _CONTAINER,
        ("ClusterName", "Namespace", "PodName", "FullPodName", "ContainerName"),
    ),
    "pod_gpu_tensor_core_utilization": (_CLUSTER, _CONTAINER),
}
GPU_METRICS: Final = ("node_gpu_utilization", "node_gpu_memory_utilization", "node_gpu_limit")
"""What `gpuplane verify` looks for in ListMetrics once a GPU node has run (infra/verify/checks_cloudwatch.py)."""


def addon_configuration() -> dict[str, Any]:
    """The add-on's `configurationValues`: Container Insights with enhanced observability, GPU metrics on, no logs.

    `agent.config` is the CloudWatch agent's own configuration; `enhanced_container_insights` and
    `accelerated_compute_metrics` are the keys the add-on documentation's "(Optional) Additional configuration"
    sets (the chart's `dcgm-exporter.env` helper reads `logs.metrics_collected.kubernetes` the same way, chart
    6.4.0). `accelerated_compute_metrics: true` makes the add-on run its own dcgm-exporter on NVIDIA instance types
    (the chart's `dcgmExporter` affinity lists them): gpuplane's exporter is then off (one exporter per node).
    `containerLogs.enabled: false`: the add-on would otherwise run Fluent Bit on every node and ship every
    container's logs to CloudWatch Logs, billed per GB ingested; gpuplane asks for metrics only. The root
    `tolerations` default (`operator: Exists`) already lets the agent and the exporter onto tainted GPU nodes.
    """
    return {
        "agent": {
            "config": {
                "logs": {
                    "metrics_collected": {
                        "kubernetes": {"enhanced_container_insights": True, "accelerated_compute_metrics": True}
                    }
                }
            }
        },
        "containerLogs": {"enabled": False},
    }


@dataclass(frozen=True)
class AlarmBounds:
    """The thresholds `ObservabilityArgs` gives the alarms (the same bounds as the Prometheus rules)."""

    gpu_memory_percent: int


def alarms(cluster_name: str, topic_arn: str, bounds: AlarmBounds) -> list[dict[str, Any]]:
    """Each alarm as the parameters of CloudWatch's PutMetricAlarm (botocore's names; tests validate them).

    - GPU memory near full: the fullest GPU node's frame buffer above `gpuMemoryPercent` for 10 minutes (the
      Prometheus rule's `GpuMemoryNearFull`). No data (no GPU node up) is not an alarm.
    - Failed nodes: a node with a bad condition (NotReady, pressure, or the node monitoring agent's
      `AcceleratedHardwareReady` false: XID, ECC, NVLink) for 5 minutes (`GpuNodeNotReady`, `GpuNodeHardware...`).
    - GPU temperature high: the hottest GPU node above `observability.GPU_TEMPERATURE_WARN_C` for 15 minutes (the
      Prometheus rule's `GpuTemperatureHigh`, the same fixed margin).
    - Container Insights silent: no node counted for 10 minutes means the agent stopped reporting; missing data is
      an alarm here (the Prometheus backend's `DcgmExporterDown` plays that part there).
    """
    cluster = [{"Name": "ClusterName", "Value": cluster_name}]

    def alarm(name: str, description: str, **fields: Any) -> dict[str, Any]:
        return {
            "AlarmName": f"{cluster_name}-{name}",
            "AlarmDescription": description,
            "Namespace": NAMESPACE,
            "Dimensions": cluster,
            "ActionsEnabled": True,
            "AlarmActions": [topic_arn],
            "OKActions": [topic_arn],
            **fields,
        }

    return [
        alarm(
            "gpu-memory-near-full",
            f"A GPU node's memory has been more than {bounds.gpu_memory_percent}% full for 10 minutes "
            "(TensorFlow takes all GPU memory unless told otherwise; the runtime helper sets memory growth).",
            MetricName="node_gpu_memory_utilization",
            Statistic="Maximum",
            Period=60,
            EvaluationPeriods=10,
            DatapointsToAlarm=10,
            Threshold=float(bounds.gpu_memory_percent),
            ComparisonOperator="GreaterThanThreshold",
            TreatMissingData="notBreaching",
        ),
        alarm(
            "nodes-failed",
            "A node has had a failing condition for 5 minutes (NotReady, pressure, or its GPUs unhealthy per the "
            "node monitoring agent: XID, ECC, NVLink); EKS repairs it when nodeGroups[].repair is on. "
            "kubectl describe node; docs/operations.md, 'A node fails'.",
            MetricName="cluster_failed_node_count",
            Statistic="Maximum",
            Period=60,
            EvaluationPeriods=5,
            DatapointsToAlarm=5,
            Threshold=0.0,
            ComparisonOperator="GreaterThanThreshold",
            TreatMissingData="notBreaching",
        ),
        alarm(
            "gpu-temperature-high",
            f"A GPU node has been above {observability.GPU_TEMPERATURE_WARN_C} C for 15 minutes (a fixed margin below "
            "the data-center GPUs' slowdown temperature): if it persists or one GPU alone runs hot, replace the node; "
            "docs/operations.md, 'Alerts'.",
            MetricName="node_gpu_temperature",
            Statistic="Maximum",
            Period=60,
            EvaluationPeriods=15,
            DatapointsToAlarm=15,
            Threshold=float(observability.GPU_TEMPERATURE_WARN_C),
            ComparisonOperator="GreaterThanThreshold",
            TreatMissingData="notBreaching",
        ),
        alarm(
            "container-insights-silent",
            "Container Insights has reported no node for 10 minutes: the CloudWatch agent is not running or "
            "cannot publish (kubectl -n amazon-cloudwatch get pods; aws eks describe-addon).",
            MetricName="cluster_node_count",
            Statistic="Maximum",
            Period=300,
            EvaluationPeriods=2,
            DatapointsToAlarm=2,
            Threshold=1.0,
            ComparisonOperator="LessThanThreshold",
            TreatMissingData="breaching",
        ),
    ]


def alarm_args(params: dict[str, Any]) -> dict[str, Any]:
    """PutMetricAlarm parameters as `aws.cloudwatch.MetricAlarm` arguments (snake_case, dimensions as a map)."""
    names = {
        "AlarmName": "name",
        "AlarmDescription": "alarm_description",
        "Namespace": "namespace",
        "MetricName": "metric_name",
        "Statistic": "statistic",
        "Period": "period",
        "EvaluationPeriods": "evaluation_periods",
        "DatapointsToAlarm": "datapoints_to_alarm",
        "Threshold": "threshold",
        "ComparisonOperator": "comparison_operator",
        "TreatMissingData": "treat_missing_data",
        "ActionsEnabled": "actions_enabled",
        "AlarmActions": "alarm_actions",
        "OKActions": "ok_actions",
    }
    args = {names[k]: v for k, v in params.items() if k != "Dimensions"}
    args["dimensions"] = {d["Name"]: d["Value"] for d in params["Dimensions"]}
    return args


# --- the dashboard -----------------------------------------------------------------------------------------------
_SEARCH_RE: Final = re.compile(r"SEARCH\('\{(?P<schema>[^}]*)\} MetricName=\"(?P<metric>[a-z_]+)\"")


def _metric(name: str, cluster_name: str, stat: str, label: str) -> list[Any]:
    return [NAMESPACE, name, "ClusterName", cluster_name, {"stat": stat, "label": label}]


def _search(metric: str, dimensions: tuple[str, ...], cluster_name: str, stat: str) -> dict[str, Any]:
    schema = ",".join((NAMESPACE, *dimensions))
    return {
        "expression": f"SEARCH('{{{schema}}} MetricName=\"{metric}\" ClusterName=\"{cluster_name}\"', '{stat}', 60)",
        "id": f"e_{metric}",
    }


def dashboard(cluster_name: str, region: str) -> dict[str, Any]:
    """The CloudWatch dashboard body for GPUs: utilization, memory, GPUs in use, per node and per pod, node health.

    The CloudWatch counterpart of the Grafana GPU dashboard (per run/model joins need PromQL: here per node and
    per pod). Widgets are 12 wide on CloudWatch's 24-column grid. SEARCH widgets list one line per node or pod.
    """
    widgets: list[tuple[str, list[Any], str]] = [
        (
            "GPU utilization (%), cluster",
            [
                _metric("node_gpu_utilization", cluster_name, "Average", "average"),
                _metric("node_gpu_utilization", cluster_name, "Maximum", "busiest node"),
            ],
            "Percent",
        ),
        (
            "GPU memory used (%), cluster",
            [
                _metric("node_gpu_memory_utilization", cluster_name, "Average", "average"),
                _metric("node_gpu_memory_utilization", cluster_name, "Maximum", "fullest node"),
            ],
            "Percent",
        ),
        ("GPU utilization (%) per node", [_search("node_gpu_utilization", _NODE, cluster_name, "Average")], "Percent"),
        (
            "GPU memory used (%) per pod",
            [_search("pod_gpu_memory_utilization", _POD, cluster_name, "Maximum")],
            "Percent",
        ),
        (
            "GPUs in use / on nodes",
            [
                _metric("node_gpu_usage_total", cluster_name, "Sum", "in use by pods"),
                _metric("node_gpu_limit", cluster_name, "Sum", "on the nodes"),
            ],
            "Count",
        ),
        (
            "Nodes, and nodes failing a condition",
            [
                _metric("cluster_node_count", cluster_name, "Maximum", "nodes"),
                _metric("cluster_failed_node_count", cluster_name, "Maximum", "failing (GPU faults included)"),
            ],
            "Count",
        ),
        (
            "GPU temperature (C) and power (W), hottest node",
            [
                _metric("node_gpu_temperature", cluster_name, "Maximum", "temperature"),
                _metric("node_gpu_power_draw", cluster_name, "Maximum", "power"),
            ],
            "None",
        ),
    ]
    body = [
        {
            "type": "metric",
            "x": (i % 2) * 12,
            "y": (i // 2) * 6,
            "width": 12,
            "height": 6,
            "properties": {
                "title": title,
                "region": region,
                "view": "timeSeries",
                "stacked": False,
                "period": 60,
                "metrics": [m if isinstance(m, list) else [m] for m in metrics],
                "yAxis": {"left": {"min": 0, **({"label": unit} if unit != "None" else {})}},
            },
        }
        for i, (title, metrics, unit) in enumerate(widgets)
    ]
    return {"start": "-PT3H", "periodOverride": "inherit", "widgets": body}


def dashboard_body(cluster_name: str, region: str) -> str:
    """The dashboard as the JSON text PutDashboard takes (`aws.cloudwatch.Dashboard.dashboard_body`)."""
    return json.dumps(dashboard(cluster_name, region), sort_keys=True)


def dashboard_metrics(body: dict[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """(metric, dimension names) of every metric a dashboard body names, in metric arrays and SEARCH expressions.

    A name or dimension set Container Insights does not publish leaves a widget empty; tests compare each against
    `METRICS`.
    """
    found: list[tuple[str, tuple[str, ...]]] = []
    for widget in body["widgets"]:
        for row in widget["properties"].get("metrics", []):
            if len(row) == 1 and isinstance(row[0], dict):
                match = _SEARCH_RE.match(row[0]["expression"])
                if match is None:
                    raise ValueError(f"not a SEARCH expression gpuplane writes: {row[0]['expression']}")
                schema = match["schema"].split(",")
                if schema[0] != NAMESPACE:
                    raise ValueError(f"SEARCH in namespace {schema[0]}, not {NAMESPACE}")
                found.append((match["metric"], tuple(schema[1:])))
                continue
            values = [v for v in row if not isinstance(v, dict)]
            if values[0] != NAMESPACE:
                raise ValueError(f"metric in namespace {values[0]}, not {NAMESPACE}")
            found.append((values[1], tuple(values[2::2])))
    return found
