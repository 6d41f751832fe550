"""The whole stack config (`PlatformArgs`): the sections, the prod profile's defaults and the cross-checks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic.alias_generators import to_camel

from gpuplane.components.config.base import FieldError, _Args
from gpuplane.components.config.cluster import ClusterArgs
from gpuplane.components.config.common import Profile, duration_seconds
from gpuplane.components.config.network import NetworkArgs
from gpuplane.components.config.node_groups import NodeGroupArgs, blocks_scheduling, default_node_groups
from gpuplane.components.config.queue import QueueArgs
from gpuplane.components.config.storage import StorageArgs
from gpuplane.components.config.workloads import ServingArgs, TrainingArgs
from gpuplane.components.facts import partition, prices
from gpuplane.components.facts.name_limits import DNS1123_LABEL_RE, DNS1123_SUBDOMAIN_RE
from gpuplane.manifests import observability, wellknown


class AutoscalerArgs(_Args):
    """The cluster-autoscaler: scales node groups (GPU groups from zero) by the tags on their ASGs."""

    enabled: bool = Field(default=True, description="Install the cluster-autoscaler. Default true.")
    expander: Literal["least-waste", "random", "most-pods", "priority", "price"] = Field(
        default="least-waste", description="How it picks among groups that fit a pending pod. Default `least-waste`."
    )
    scale_down_unneeded_time: str = Field(
        default="10m", description="How long a node must be idle before removal (Go duration). Default `10m`."
    )

    @field_validator("scale_down_unneeded_time")
    @classmethod
    def _duration(cls, value: str) -> str:
        duration_seconds(value)  # ValueError naming the value and the form allowed
        return value


# Prometheus's duration (prometheus/common model/time.go `durationRE`), without its bare `0` (no retention).
_PROMETHEUS_DURATION_RE: Final = re.compile(r"([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?")
_MAX_GO_DURATION_S: Final = (2**63 - 1) // 10**9
_UNIT_S: Final = {"y": 31536000, "w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}


def _duration_s(value: str) -> float:
    """Seconds of a Prometheus duration already matched by `_PROMETHEUS_DURATION_RE` (a year is 365 days)."""
    return sum(int(n) * _UNIT_S[unit] for n, unit in re.findall(r"([0-9]+)(ms|y|w|d|h|m|s)", value))


MetricsBackend = Literal["prometheus", "managedPrometheus", "cloudwatch", "none"]


def default_metrics(profile: str, amp_offered: bool) -> MetricsBackend:
    """`observability.metrics` when the stack does not set it: by profile, and by what the region offers.

    prod: Amazon Managed Service for Prometheus (no collector or store to run, PromQL, any Grafana reads it)
    where the region has it (`amp_offered`: botocore's `aps` endpoints; commercial regions and GovCloud, none in
    aws-cn), else the in-cluster Prometheus, the one backend that exists in every region and keeps every alert,
    dashboard and metric scaler. dev: the in-cluster Prometheus, which the cost model prices at about $0.001/h added
    (its 10 GiB gp3 volume; its pods use the system nodes), against about $0.36/h for AMP (collector-hour and
    samples) and about $0.01/h for CloudWatch (observations, alarms, a dashboard), which lacks the serving and queue
    alerts: the cheapest choice that keeps the dashboards and alerts (docs/operations.md, "Choosing a metrics
    backend").
    """
    if profile == "prod" and amp_offered:
        return "managedPrometheus"
    return "prometheus"


class ObservabilityArgs(_Args):
    """GPU, serving and queue metrics, alert rules and dashboards (docs/operations.md, "Metrics and alerts")."""

    dcgm_exporter: bool = Field(
        default=True,
        description="Run NVIDIA's DCGM exporter on GPU nodes (GPU utilization and memory on port 9400). Default true. "
        "Ignored with `metrics: cloudwatch`, whose add-on runs its own (one exporter per node; render warns).",
    )
    metrics: MetricsBackend = Field(
        default="prometheus",
        description="`prometheus`: kube-prometheus-stack in namespace `monitoring` (Prometheus, Alertmanager, "
        "kube-state-metrics, node-exporter, Grafana) scraping DCGM, TF Serving, Kueue, with gpuplane's alert "
        "rules and dashboards; it runs on the system nodes (about 0.5 vCPU and 1.5 GiB requested, no AWS charge "
        "of its own but its data volume, `storageGib` of gp3: about $0.001/h at 10 GiB). `managedPrometheus`: an "
        "Amazon Managed Service for Prometheus workspace fed by the AWS managed collector (DCGM, TF Serving, "
        "kube-state-metrics, Kueue through a plain-HTTP relay in the cluster), the alert rules and Alertmanager "
        "in the workspace, alerts to the SNS topic; billed per collector-hour and per sample (about $0.36/h at "
        "1,000 samples/s); KEDA and the dashboards read the workspace with SigV4; no Grafana in the cluster; not "
        "in aws-cn. `cloudwatch`: the `amazon-cloudwatch-observability` EKS add-on (Container Insights with "
        "enhanced observability, GPU metrics from its own dcgm-exporter, which replaces gpuplane's whatever "
        "`dcgmExporter` says), CloudWatch alarms (GPU memory, failed nodes, agent silent) to the SNS topic and a "
        "CloudWatch GPU dashboard; no TF Serving or Kueue metrics, so serving scales on cpu only; billed per "
        "observation (about $0.004/h per node, an estimate). `none`: nothing collected. Default: prod "
        "`managedPrometheus` where the region has Amazon Managed Service for Prometheus (aws, aws-us-gov), else "
        "`prometheus` (aws-cn has no AMP; the in-cluster stack keeps every alert, dashboard and metric scaler "
        "there); dev `prometheus`, the cheapest choice that keeps the dashboards and alerts (the shipped dev "
        "stack: about $0.001/h added, its volume, against about $0.36/h for managedPrometheus and $0.01/h for "
        "cloudwatch, which lacks the serving and queue alerts; docs/operations.md).",
    )
    retention: str = Field(
        default=observability.DEFAULT_RETENTION,
        description="How long the in-cluster Prometheus keeps samples, on its EBS volume (`storageGib`), which "
        "outlives its pod. Default `7d`.",
    )
    storage_gib: int | None = Field(
        default=None,
        ge=observability.PROMETHEUS_MIN_VOLUME_GIB,
        le=observability.PROMETHEUS_MAX_VOLUME_GIB,
        description="Size in GiB of the in-cluster Prometheus's encrypted gp3 volume (`metrics: prometheus`; "
        f"${prices.EBS_GP3_GB_MONTH_USD}/GB-month, docs/operations.md). Default: sized from `retention` at "
        f"{observability.PROMETHEUS_EXPECTED_SERIES:,} series scraped every 30 s, 2 bytes a sample, twice that for "
        f"the WAL and compaction, at least {observability.PROMETHEUS_MIN_VOLUME_GIB} (10 for `7d`).",
    )
    grafana: bool = Field(
        default=True,
        description="Install Grafana with the gpuplane dashboards (reach it with kubectl port-forward). Default true.",
    )
    serving_p99_ms: int = Field(
        default=500,
        ge=1,
        le=600000,
        description="Alert when a serving variant's p99 latency stays above this. Default 500.",
    )
    queue_wait_minutes: int = Field(
        default=30,
        ge=1,
        le=10080,
        description="Alert when training runs have waited in a queue this long without a break. Default 30.",
    )
    gpu_memory_percent: int = Field(
        default=95, ge=50, le=100, description="Alert when a GPU's memory stays fuller than this. Default 95."
    )
    alert_topic_arn: str | None = Field(
        default=None,
        description="SNS topic Alertmanager sends the alerts to (same region). Default: a topic the stack creates, "
        "`<cluster>-alerts` (subscribe to it to receive them).",
    )

    @field_validator("alert_topic_arn")
    @classmethod
    def _topic(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(
            r"arn:aws(-cn|-us-gov)?:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}", value
        ):
            raise ValueError(f"'{value}' is not an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)")
        return value

    @model_validator(mode="after")
    def _volume_needs_prometheus(self) -> ObservabilityArgs:
        if self.storage_gib is not None and self.metrics != "prometheus":
            raise FieldError(
                "storageGib",
                f"is {self.storage_gib}, but only the in-cluster Prometheus (metrics: prometheus) has a volume and "
                f"metrics is '{self.metrics}' (as set, or the default for the stack's profile and region); remove "
                "storageGib or set metrics: prometheus",
            )
        return self

    @property
    def volume_gib(self) -> int:
        """Prometheus's volume: `storageGib`, or the size `retention` needs (`observability.prometheus_volume_gib`)."""
        return self.storage_gib or observability.prometheus_volume_gib(self.retention)

    @field_validator("retention")
    @classmethod
    def _retention(cls, value: str) -> str:
        # What Prometheus's own parser and the operator's CRD take: each unit at most once, largest first
        # (`Duration` pattern of prometheus-operator pkg/apis/monitoring/v1/types.go, and `durationRE` of
        # prometheus/common model/time.go, read 2026-11-26), so `12h7d` or `1d1d` fail the helm install at
        # `pulumi up`; and no more than Go's int64 nanoseconds hold (about 292 years), which Prometheus refuses.
        if (
            not _PROMETHEUS_DURATION_RE.fullmatch(value)
            or not re.search(r"[1-9]", value)
            or _duration_s(value) > _MAX_GO_DURATION_S
        ):
            raise ValueError(
                f"'{value}' is not a Prometheus duration like 12h, 7d or 2w (units y, w, d, h, m, s, ms, each at "
                "most once and largest first, e.g. 1w3d; at most 292y)"
            )
        return value


# Defaults that the prod profile changes, applied to fields the user did not set.
_PROD_NETWORK: Final[dict[str, Any]] = {
    "az_count": 3,
    "nat_gateways": "perAz",
    "flow_logs": True,
    "flow_log_retention_days": 90,
}
_PROD_STORAGE: Final[dict[str, Any]] = {
    "protect": True,
    "retain_on_delete": True,
    "backups": True,
    "customer_managed_key": True,
}
_PROD_CLUSTER: Final[dict[str, Any]] = {
    "endpoint_public_access": False,
    "log_types": list(wellknown.CONTROL_PLANE_LOG_TYPES),
    "log_retention_days": 90,
}


def _observability_default(raw: Any, profile: Any, info: ValidationInfo) -> Any:
    """`observability` with its `metrics` default for the profile and the region, when the stack leaves it out.

    The region comes from the validation context (`PlatformArgs.model_validate(data, context={"region": ...})`,
    as `infra.config.parse` does with `aws:region`); without one (a program building the args itself) AMP is
    taken as offered, as in every commercial region, and `gpuplane render` refuses `managedPrometheus` in a
    region without it (components.plan.cross_checks.region_problems), naming the key and the other choices.
    """
    if isinstance(raw, _Args):
        raw = raw.model_dump(exclude_unset=True, by_alias=True)
    if not isinstance(raw, dict) or "metrics" in raw:
        return raw
    region = (info.context or {}).get("region") if isinstance(info.context, dict) else None
    offered = not isinstance(region, str) or region in partition.service_regions("amp")
    return {**raw, "metrics": default_metrics(str(profile or "dev"), offered)}


def with_profile_sections(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` (the `gpuplane:` keys) with the profile's defaults under `network`, `cluster` and `storage`.

    What the model's own validation starts from; also what a section is checked against again when the model
    reported errors elsewhere (`infra.config.cross_field_problems`), so a prod network, cluster or storage section
    is never judged by dev's defaults (a prod cluster's endpoint is private: no CIDRs needed). The observability
    section's default depends on the region too and is applied by the model alone.
    """
    data = dict(data)
    prod = data.get("profile") == "prod"
    for key, overrides in (("network", _PROD_NETWORK), ("cluster", _PROD_CLUSTER), ("storage", _PROD_STORAGE)):
        raw = data.get(key, {})
        if isinstance(raw, _Args):
            raw = raw.model_dump(exclude_unset=True, by_alias=True)
        if isinstance(raw, dict):
            merged = {to_camel(k): v for k, v in overrides.items()} if prod else {}
            merged.update(raw)
            data[key] = merged
    return data


class PlatformArgs(_Args):
    """Everything one gpuplane platform is made of: the stack config, as one typed object."""

    profile: Profile = Field(
        default="dev",
        description="`dev` (cheap, deletable) or `prod` (HA, private, logged, protected); picks the defaults "
        "marked 'prod:' below. Default `dev`.",
    )
    cluster_name: str | None = Field(
        default=None,
        description="EKS cluster name and prefix of physical names. Default `<project>-<stack>`.",
    )
    network: NetworkArgs = Field(default_factory=NetworkArgs, description="The VPC. See NetworkArgs.")
    cluster: ClusterArgs = Field(
        default_factory=ClusterArgs,
        description="The EKS control plane. See ClusterArgs (defaults per profile).",
    )
    node_groups: list[NodeGroupArgs] | None = Field(
        default=None,
        description="Managed node groups. Default dev: `system` (m6i.large, 1-3) and `gpu` (g5.xlarge/2xlarge spot, "
        "0-2); prod: `system` (m6i.xlarge, 2-4) and `gpu` (g5.xlarge on-demand, 1-4).",
    )
    storage: StorageArgs = Field(
        default_factory=StorageArgs, description="Shared EFS storage. See StorageArgs (defaults per profile)."
    )
    autoscaler: AutoscalerArgs = Field(default_factory=AutoscalerArgs, description="See AutoscalerArgs.")
    observability: ObservabilityArgs = Field(default_factory=ObservabilityArgs, description="See ObservabilityArgs.")
    tags: dict[str, str] = Field(default_factory=dict, description="Extra tags on every AWS resource. Default none.")
    workload_namespace: str = Field(
        default="ml",
        description="Namespace (Pod Security `restricted`) for TensorFlow workloads and the runtime helper. "
        "Default `ml`.",
    )
    serving: list[ServingArgs] = Field(
        default_factory=list,
        description="TensorFlow Serving workloads (docs/workloads.md). Default none.",
    )
    training: list[TrainingArgs] = Field(
        default_factory=list,
        description="Distributed TensorFlow training workloads; runs are submitted by `gpuplane train` "
        "(docs/workloads.md). Default none.",
    )
    ingress_class: str | None = Field(
        default=None,
        description="IngressClass for TensorBoard's Ingress (no controller is installed). Default: no Ingress.",
    )
    queue: QueueArgs = Field(
        default_factory=QueueArgs,
        description="The training queue (Kueue), installed when training is declared. See QueueArgs.",
    )

    @model_validator(mode="before")
    @classmethod
    def _profile_defaults(cls, data: Any, info: ValidationInfo) -> Any:
        # Runs before field validation so that a prod stack with no `cluster` key does not trip over the
        # dev default "public endpoint needs CIDRs" (prod's default endpoint is private), and so that errors
        # in a defaulted section still carry its key (`gpuplane:cluster...`).
        if not isinstance(data, dict):
            return data
        data = with_profile_sections(data)
        data["observability"] = _observability_default(data.get("observability", {}), data.get("profile"), info)
        return data

    @field_validator("workload_namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        if not DNS1123_LABEL_RE.fullmatch(value) or value.startswith("kube-"):
            raise ValueError(f"'{value}' must be a DNS label (lowercase, digits, '-') and not start with 'kube-'")
        return value

    @field_validator("ingress_class")
    @classmethod
    def _ingress_class(cls, value: str | None) -> str | None:
        if value is not None and not DNS1123_SUBDOMAIN_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not an IngressClass name (lowercase DNS subdomain)")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            if key.startswith(("aws:", "gpuplane:", "kubernetes.io/")):
                raise ValueError(
                    f"tag key '{key}' is reserved (aws:, gpuplane:, kubernetes.io/ are set by AWS/gpuplane)"
                )
        return value

    @model_validator(mode="after")
    def _default_groups(self) -> PlatformArgs:
        # The profile's groups when none are given; the checks across sections (group names, system capacity,
        # prod safety, workloads, queue) live in `components.plan.cross_checks`, which takes these args.
        if self.node_groups is None:
            self.node_groups = default_node_groups(self.profile)
        return self

    @property
    def resolved_api_access_cidrs(self) -> list[str]:
        """Networks admitted to the API on 443: as configured, else the VPC for a private-only endpoint.

        A private-only endpoint is unreachable without a rule; the VPC's own CIDR lets a runner inside the
        VPC (CI runner, bastion) finish `pulumi up`. With the public endpoint on, nothing is opened unasked.
        """
        if self.cluster.api_access_cidrs is not None:
            return list(self.cluster.api_access_cidrs)
        return [] if self.cluster.endpoint_public_access else [self.network.cidr]

    @property
    def system_node_groups(self) -> list[NodeGroupArgs]:
        """Untainted CPU groups: where cluster services run, and the only groups they wait for."""
        return [g for g in self.resolved_node_groups if g.kind == "cpu" and not blocks_scheduling(g)]

    @property
    def resolved_node_groups(self) -> list[NodeGroupArgs]:
        """Node groups after defaults (never None once validated)."""
        assert self.node_groups is not None  # set by _whole
        return self.node_groups
