"""What a stack costs per hour, idle and at its maximum: a pure estimate from what the plan creates.

Why from the plan's resources and not from the stack config: `gpuplane render --project` prices any program
that uses the components, and the plan is what `pulumi up` would create (node groups, NAT gateways, the
cluster, file systems, load balancers), whatever config produced it. `usage_from_resources` reads plan.json's
resources (plain dicts) into a `StackUsage`; `estimate` prices it with the dated table of `facts.prices` and
the service prices of `manifests/versions.py`.

"Idle" is what runs with no training submitted: every node group at its minimum, plus the GPU nodes that
always-on workloads keep up (a serving Deployment with one GPU replica keeps a GPU node up even when its
group's minimum is 0). "Max" is every node group at its maximum. Both are estimates, and say what they leave
out: data transfer and data processed, EFS storage growth beyond the volumes' stated size, load-balancer
capacity units, log ingestion, and spot prices (a spot group is priced at its on-demand ceiling).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gpuplane.components.facts import prices
from gpuplane.manifests import cloudwatch, observability, versions

GPU_RESOURCE: Final = "nvidia.com/gpu"
_GROUP_LABEL: Final = "gpuplane.io/node-group"
_GPU_TAG_SUFFIX: Final = "node-template/resources/nvidia.com/gpu"
_EFS_DRIVER: Final = "efs.csi.aws.com"
CAVEATS: Final = (
    "an estimate: on-demand list prices; leaves out data transfer, NAT and EFS data processed, EFS storage "
    "beyond the volumes' stated size, load-balancer capacity units, log ingestion and taxes; spot groups are "
    "priced at their on-demand ceiling (spot prices vary by the hour: `gpuplane preflight` reads them)"
)


@dataclass(frozen=True)
class GroupUsage:
    """One node group as the estimate sees it."""

    name: str
    instance_types: tuple[str, ...]
    capacity: str
    """`ON_DEMAND` or `SPOT`, as the managed node group's `capacityType`."""
    min_size: int
    max_size: int
    root_volume_gib: int = 0
    kept_up: int = 0
    """Nodes that always-on workloads keep up (GPU units they request over the units a node offers)."""
    kept_up_by: tuple[str, ...] = ()
    """The workloads that keep them up (`namespace/name`)."""
    reservation: str | None = None
    """The reserved capacity its launch template targets (`cr-...` or a resource group ARN), or None."""

    @property
    def idle_nodes(self) -> int:
        """Nodes running with no training: the minimum, or more when always-on workloads need more."""
        return max(self.min_size, min(self.kept_up, self.max_size))


@dataclass(frozen=True)
class StackUsage:
    """What the stack runs that costs money by the hour (plain values; `usage_from_resources` fills it)."""

    region: str
    groups: tuple[GroupUsage, ...] = ()
    kubernetes_versions: tuple[str, ...] = ()
    """One entry per EKS cluster."""
    nat_gateways: int = 0
    efs_file_systems: int = 0
    efs_stated_gib: float = 0.0
    """Sum of the EFS-backed persistent volumes' stated capacity (EFS bills what is stored, not this)."""
    load_balancers: int = 0
    kms_keys: int = 0
    metrics_stack: bool = False
    """kube-prometheus-stack runs in the cluster (`observability.metrics: prometheus`, issue 29)."""
    sns_topics: int = 0
    amp_workspaces: int = 0
    """Amazon Managed Service for Prometheus workspaces (`observability.metrics: managedPrometheus`)."""
    amp_collectors: int = 0
    """AWS managed collectors (`aws.amp.Scraper`) feeding them."""
    cloudwatch_agent: bool = False
    """The `amazon-cloudwatch-observability` add-on runs (`observability.metrics: cloudwatch`)."""
    cloudwatch_alarms: int = 0
    cloudwatch_dashboards: int = 0
    prometheus_volume_gib: int = 0
    """The in-cluster Prometheus's EBS volume (`observability.storageGib`), 0 without one."""


@dataclass(frozen=True)
class CostLine:
    """One line of the estimate: USD per hour idle and at the maximum."""

    item: str
    detail: str
    idle: float
    max: float
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Estimate:
    """The whole estimate, with its sources and what it leaves out."""

    region: str
    lines: tuple[CostLine, ...]
    price_source: str
    price_date: str
    service_price_date: str
    notes: tuple[str, ...] = field(default=())

    @property
    def idle(self) -> float:
        """USD per hour with no training running."""
        return round(sum(line.idle for line in self.lines), 4)

    @property
    def max(self) -> float:
        """USD per hour with every node group at its maximum."""
        return round(sum(line.max for line in self.lines), 4)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (plan.json `cost`, `render --json`); amounts in USD per hour, rounded to 4 decimals."""
        return {
            "currency": "USD",
            "per": "hour",
            "region": self.region,
            "idle": self.idle,
            "max": self.max,
            "idleMonthly": round(self.idle * versions.HOURS_PER_MONTH, 2),
            "maxMonthly": round(self.max * versions.HOURS_PER_MONTH, 2),
            "lines": [
                {"item": x.item, "detail": x.detail, "idle": x.idle, "max": x.max, "notes": list(x.notes)}
                for x in self.lines
            ],
            "instancePrices": {"source": self.price_source, "date": self.price_date},
            "servicePrices": {"source": "manifests/versions.py", "date": self.service_price_date},
            "notes": list(self.notes),
        }


def _usd(value: str) -> float:
    return float(value)


def group_line(group: GroupUsage, region: str, table: prices.PriceTable | None = None) -> CostLine:
    """A node group's line: nodes x (instance price + root volume), idle and at the maximum.

    On-demand managed node groups launch the first listed type (allocation strategy `prioritized`), so that
    price counts; spot groups may get any listed type, so their ceiling is the dearest on-demand price.
    """
    quotes = [prices.on_demand(t, region, table) for t in group.instance_types]
    spot = group.capacity == "SPOT"
    known = [q for q in quotes if q.usd_per_hour is not None]
    notes = sorted({n for q in quotes if (n := q.note) and q.usd_per_hour is not None})
    if not known or (not spot and quotes[0].usd_per_hour is None):
        missing = [q.instance_type for q in quotes if q.usd_per_hour is None]
        return CostLine(
            f"node group {group.name}",
            f"{group.idle_nodes}-{group.max_size} x {', '.join(group.instance_types)}",
            0.0,
            0.0,
            (f"no price for {', '.join(missing)} in the price table: left out of the total",),
        )
    chosen = max(known, key=lambda q: q.usd_per_hour or 0.0) if spot else quotes[0]
    assert chosen.usd_per_hour is not None
    volume = group.root_volume_gib * _usd(versions.EBS_GP3_GB_MONTH_USD) / versions.HOURS_PER_MONTH
    per_node = chosen.usd_per_hour + volume
    kind = "spot, at most" if spot else "on-demand"
    detail = f"{group.idle_nodes}-{group.max_size} x {chosen.instance_type} ({kind} ${chosen.usd_per_hour:.4g}/h)"
    if spot:
        notes.append("spot: priced at the on-demand ceiling; spot prices vary by the hour")
        unpriced = [q.instance_type for q in quotes if q.usd_per_hour is None]
        if unpriced:
            notes.append(f"no price for {', '.join(unpriced)} in the price table: the ceiling leaves it out")
    if group.capacity == "CAPACITY_BLOCK":
        notes.append(
            "Capacity Block: its price is fixed when the block is bought and paid up front; shown at the "
            "on-demand rate for comparison"
        )
    elif group.reservation:
        notes.append(
            f"targets reservation {group.reservation}: an On-Demand Capacity Reservation is billed at the "
            "on-demand rate for every reserved instance, running or not (not counted here beyond the nodes)"
        )
    if group.kept_up > group.min_size and group.idle_nodes > group.min_size:
        notes.append(
            f"{group.idle_nodes - group.min_size} node(s) above minSize {group.min_size} kept up by "
            f"{', '.join(group.kept_up_by)}"
        )
    return CostLine(
        f"node group {group.name}",
        detail,
        round(group.idle_nodes * per_node, 4),
        round(group.max_size * per_node, 4),
        tuple(notes),
    )


def estimate(usage: StackUsage, table: prices.PriceTable | None = None, today: dt.date | None = None) -> Estimate:
    """Price `usage`: node groups from the dated instance table, the rest from the dated service prices.

    `today` (a date; default `versions.today()`) decides whether a cluster's version is billed as standard
    or extended support.
    """
    table = table or prices.table()
    on = today or versions.today()
    lines: list[CostLine] = []
    for version in usage.kubernetes_versions:
        extended = version in versions.KUBERNETES_VERSIONS and not versions.in_standard_support(version, on)
        hourly = _usd(versions.EKS_EXTENDED_HOURLY_USD if extended else versions.EKS_STANDARD_HOURLY_USD)
        note: tuple[str, ...] = ()
        if version not in versions.KUBERNETES_VERSIONS:
            note = (f"EKS support dates of {version} are not in manifests/versions.py: priced as standard support",)
        elif not extended:
            note = (
                f"standard support of {version} ends {versions.standard_support_end(version)}; "
                f"extended support then costs ${versions.EKS_EXTENDED_HOURLY_USD}/h",
            )
        support = "extended" if extended else "standard"
        lines.append(CostLine("EKS control plane", f"Kubernetes {version}, {support} support", hourly, hourly, note))
    lines += [group_line(g, usage.region, table) for g in usage.groups]
    if usage.nat_gateways:
        nat = usage.nat_gateways * (_usd(versions.NAT_GATEWAY_HOURLY_USD) + _usd(versions.PUBLIC_IPV4_HOURLY_USD))
        lines.append(
            CostLine(
                "NAT gateways",
                f"{usage.nat_gateways} x (gateway ${versions.NAT_GATEWAY_HOURLY_USD}/h + public IPv4 "
                f"${versions.PUBLIC_IPV4_HOURLY_USD}/h)",
                round(nat, 4),
                round(nat, 4),
                ("plus $0.045 per GB processed (not estimated)",),
            )
        )
    if usage.efs_file_systems:
        efs = usage.efs_stated_gib * _usd(versions.EFS_STANDARD_GB_MONTH_USD) / versions.HOURS_PER_MONTH
        lines.append(
            CostLine(
                "EFS",
                f"{usage.efs_file_systems} file system(s), {usage.efs_stated_gib:g} GiB stated by the volumes "
                f"(${versions.EFS_STANDARD_GB_MONTH_USD}/GB-month)",
                round(efs, 4),
                round(efs, 4),
                ("EFS bills what is stored: the volumes' stated size is the estimate's assumption",),
            )
        )
    if usage.load_balancers:
        lb = usage.load_balancers * _usd(versions.LOAD_BALANCER_HOURLY_USD)
        lines.append(
            CostLine(
                "load balancers",
                f"{usage.load_balancers} x ${versions.LOAD_BALANCER_HOURLY_USD}/h",
                round(lb, 4),
                round(lb, 4),
                ("plus capacity units by traffic (not estimated)",),
            )
        )
    if usage.kms_keys:
        kms = usage.kms_keys * _usd(versions.KMS_KEY_MONTHLY_USD) / versions.HOURS_PER_MONTH
        lines.append(
            CostLine(
                "KMS keys", f"{usage.kms_keys} x ${versions.KMS_KEY_MONTHLY_USD}/month", round(kms, 4), round(kms, 4)
            )
        )
    choices = (metrics_choices_note(usage),)
    if usage.metrics_stack or usage.sns_topics:
        # Stated, not left out: the issue asks each metrics choice's added $/h on the render.
        in_cluster = (
            "kube-prometheus-stack on the system nodes"
            if usage.metrics_stack
            else "kube-state-metrics on the system nodes (AMP's collector scrapes it)"
            if usage.amp_workspaces
            else "no metrics stack"
        )
        pods = (
            ("no AWS charge of its own: its pods (about 0.5 vCPU and 1.5 GiB requested) use the system nodes priced "
             "above, and may make the autoscaler add one",)
            if usage.metrics_stack
            else ()
        )  # fmt: skip
        lines.append(
            CostLine(
                "metrics and alerts",
                f"{in_cluster}; {usage.sns_topics} SNS topic(s)",
                0.0,
                0.0,
                (*pods, "SNS bills per message delivered (not estimated)", *(choices if usage.metrics_stack else ())),
            )
        )
    if usage.amp_workspaces or usage.amp_collectors:
        amp = amp_line(usage.amp_workspaces, usage.amp_collectors)
        lines.append(CostLine(amp.item, amp.detail, amp.idle, amp.max, (*amp.notes, *choices)))
    if usage.cloudwatch_agent:
        line = cloudwatch_line(usage)
        lines.append(CostLine(line.item, line.detail, line.idle, line.max, (*line.notes, *choices)))
    if usage.prometheus_volume_gib:
        lines.append(prometheus_volume_line(usage.prometheus_volume_gib))
    return Estimate(
        region=usage.region,
        lines=tuple(lines),
        price_source=table.source,
        price_date=table.date,
        service_price_date=versions.SERVICE_PRICES_DATE,
        notes=(CAVEATS,),
    )


# --- from plan.json's resources ---------------------------------------------------------------------------


def usage_from_resources(region: str, resources: Iterable[Mapping[str, Any]]) -> StackUsage:
    """Read what costs money from plan.json-style resources (`urn`, `type`, `dependencies`, `inputs`)."""
    items = list(resources)
    by_type: dict[str, list[Mapping[str, Any]]] = {}
    for r in items:
        by_type.setdefault(r["type"], []).append(r)
    templates = {r["urn"]: r for r in by_type.get("aws:ec2/launchTemplate:LaunchTemplate", [])}
    units = _gpu_units_per_node(by_type.get("aws:autoscaling/tag:Tag", []))
    kept = _kept_up(items)
    groups = []
    for r in sorted(by_type.get("aws:eks/nodeGroup:NodeGroup", []), key=lambda r: str(r["urn"])):
        inputs = r["inputs"]
        name = inputs.get("labels", {}).get(_GROUP_LABEL) or inputs.get("nodeGroupName") or r.get("name", "")
        sc = inputs.get("scalingConfig", {})
        template: Mapping[str, Any] = next(
            (templates[d]["inputs"] for d in r.get("dependencies", []) if d in templates), {}
        )
        volume = _root_volume(template) if template else int(inputs.get("diskSize") or 0)
        target = template.get("capacityReservationSpecification", {}).get("capacityReservationTarget", {})
        gpu_units, workloads = kept.get(name, (0, []))
        per_node = units.get(r["urn"], 0)
        kept_up = math.ceil(gpu_units / per_node) if gpu_units and per_node else 0
        groups.append(
            GroupUsage(
                name=name,
                instance_types=tuple(inputs.get("instanceTypes", [])),
                capacity=str(inputs.get("capacityType", "ON_DEMAND")),
                min_size=int(sc.get("minSize", 0)),
                max_size=int(sc.get("maxSize", 0)),
                root_volume_gib=volume,
                kept_up=kept_up,
                kept_up_by=tuple(sorted(workloads)),
                reservation=target.get("capacityReservationId") or target.get("capacityReservationResourceGroupArn"),
            )
        )
    efs_gib = sum(
        _gib(r["inputs"].get("spec", {}).get("capacity", {}).get("storage", "0"))
        for r in by_type.get("kubernetes:core/v1:PersistentVolume", [])
        if r["inputs"].get("spec", {}).get("csi", {}).get("driver") == _EFS_DRIVER
    )
    services = by_type.get("kubernetes:core/v1:Service", [])
    return StackUsage(
        region=region,
        groups=tuple(groups),
        kubernetes_versions=tuple(str(r["inputs"].get("version")) for r in by_type.get("aws:eks/cluster:Cluster", [])),
        nat_gateways=len(by_type.get("aws:ec2/natGateway:NatGateway", [])),
        efs_file_systems=len(by_type.get("aws:efs/fileSystem:FileSystem", [])),
        efs_stated_gib=efs_gib,
        load_balancers=sum(1 for s in services if s["inputs"].get("spec", {}).get("type") == "LoadBalancer")
        + len(by_type.get("kubernetes:networking.k8s.io/v1:Ingress", []))
        + len(by_type.get("aws:lb/loadBalancer:LoadBalancer", [])),
        kms_keys=len(by_type.get("aws:kms/key:Key", [])),
        # The in-cluster Prometheus; with AMP the same release runs kube-state-metrics only (not this).
        metrics_stack=not by_type.get("aws:amp/workspace:Workspace")
        and any(
            r["inputs"].get("name") == "kube-prometheus-stack" for r in by_type.get("kubernetes:helm.sh/v3:Release", [])
        ),
        sns_topics=len(by_type.get("aws:sns/topic:Topic", [])),
        amp_workspaces=len(by_type.get("aws:amp/workspace:Workspace", [])),
        amp_collectors=len(by_type.get("aws:amp/scraper:Scraper", [])),
        cloudwatch_agent=any(
            r["inputs"].get("addonName") == versions.ADDON_CLOUDWATCH_OBSERVABILITY
            for r in by_type.get("aws:eks/addon:Addon", [])
        ),
        cloudwatch_alarms=len(by_type.get("aws:cloudwatch/metricAlarm:MetricAlarm", [])),
        cloudwatch_dashboards=len(by_type.get("aws:cloudwatch/dashboard:Dashboard", [])),
        prometheus_volume_gib=sum(
            _prometheus_volume(r["inputs"])
            for r in by_type.get("kubernetes:helm.sh/v3:Release", [])
            if r["inputs"].get("name") == "kube-prometheus-stack"
        ),
    )


def _prometheus_volume(release: Mapping[str, Any]) -> int:
    """GiB of the volume kube-prometheus-stack's values claim for Prometheus (0: an emptyDir)."""
    spec = release.get("values", {}).get("prometheus", {}).get("prometheusSpec", {})
    claim = spec.get("storageSpec", {}).get("volumeClaimTemplate", {}).get("spec", {})
    return math.ceil(_gib(claim.get("resources", {}).get("requests", {}).get("storage", "0")))


def prometheus_volume_line(gib: int) -> CostLine:
    """The in-cluster Prometheus's gp3 volume: GB-months at the dated gp3 price (`EBS_GP3_GB_MONTH_USD`).

    gp3 includes 3,000 IOPS and 125 MB/s at no charge (EBS pricing page), which a Prometheus of this size does not
    exceed, so only the GB-months are priced. Billed as long as the volume exists: on a prod stack the teardown
    hooks keep it after `pulumi destroy` (docs/operations.md).
    """
    hourly = gib * _usd(versions.EBS_GP3_GB_MONTH_USD) / versions.HOURS_PER_MONTH
    return CostLine(
        "Prometheus volume",
        f"{gib} GiB gp3 x ${versions.EBS_GP3_GB_MONTH_USD}/GB-month",
        round(hourly, 4),
        round(hourly, 4),
        (f"EBS prices as of {versions.SERVICE_PRICES_DATE}; billed per GiB provisioned, used or not",),
    )


def cloudwatch_line(usage: StackUsage) -> CostLine:
    """Container Insights with enhanced observability: observations by node count, alarms and dashboards.

    Observations scale with nodes (and pods): the estimate takes `CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE` per
    node, so idle and maximum differ with the node groups' sizes. Alarms and dashboards are monthly prices per
    hour. All of it is an estimate (the price per observation is not read from AWS in this session: versions.py).
    """
    idle_nodes = sum(g.idle_nodes for g in usage.groups)
    max_nodes = sum(g.max_size for g in usage.groups)
    per_node = (
        versions.CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE
        * 60
        / 1e6
        * _usd(versions.CLOUDWATCH_PER_MILLION_OBSERVATIONS_USD)
    )
    fixed = (
        usage.cloudwatch_alarms * _usd(versions.CLOUDWATCH_ALARM_MONTHLY_USD)
        + usage.cloudwatch_dashboards * _usd(versions.CLOUDWATCH_DASHBOARD_MONTHLY_USD)
    ) / versions.HOURS_PER_MONTH
    return CostLine(
        "CloudWatch Container Insights",
        f"{idle_nodes}-{max_nodes} node(s) x ~{versions.CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE} observations/min at "
        f"${versions.CLOUDWATCH_PER_MILLION_OBSERVATIONS_USD}/1M; {usage.cloudwatch_alarms} alarm(s) x "
        f"${versions.CLOUDWATCH_ALARM_MONTHLY_USD}/month; {usage.cloudwatch_dashboards} dashboard(s) x "
        f"${versions.CLOUDWATCH_DASHBOARD_MONTHLY_USD}/month",
        round(idle_nodes * per_node + fixed, 4),
        round(max_nodes * per_node + fixed, 4),
        (
            f"estimate: ${per_node:.4f}/h per node at the assumed observation rate; CloudWatch prices as of "
            f"{versions.CLOUDWATCH_PRICES_DATE}, not read from AWS here (manifests/versions.py)",
            "the first 3 dashboards of an account are free; container logs are off (no CloudWatch Logs ingestion)",
        ),
    )


def metrics_choices(usage: StackUsage) -> dict[str, tuple[float, float]]:
    """What each `observability.metrics` choice adds to this stack, USD per hour (idle, max), by the same model.

    `prometheus`: its EBS volume (`prometheus_volume_line`: this stack's, else the size for the default
    retention); its pods use the system nodes; `managedPrometheus`: one workspace and one collector (`amp_line`);
    `cloudwatch`: the stack's nodes, the backend's alarms and 1 dashboard (`cloudwatch_line`).
    """
    volume = prometheus_volume_line(
        usage.prometheus_volume_gib or observability.prometheus_volume_gib(observability.DEFAULT_RETENTION)
    )
    amp = amp_line(1, 1)
    alarms = len(cloudwatch.alarms("", "", cloudwatch.AlarmBounds(gpu_memory_percent=100)))
    cw = cloudwatch_line(
        StackUsage(region=usage.region, groups=usage.groups, cloudwatch_alarms=alarms, cloudwatch_dashboards=1)
    )
    return {
        "prometheus": (volume.idle, volume.max),
        "managedPrometheus": (amp.idle, amp.max),
        "cloudwatch": (cw.idle, cw.max),
    }


def metrics_choices_note(usage: StackUsage) -> str:
    """The note every metrics line carries: each choice's added $/h for this stack (the issue asks it on render)."""
    return "observability.metrics choices for this stack, added $/h idle-max: " + "; ".join(
        f"{name} ${low:.4f}-{high:.4f}" for name, (low, high) in metrics_choices(usage).items()
    )


def amp_line(workspaces: int, collectors: int) -> CostLine:
    """Amazon Managed Service for Prometheus: collector-hours, plus ingestion and storage at a stated sample rate.

    Ingestion and storage are usage: the line is an estimate at `AMP_ESTIMATE_SAMPLES_PER_SECOND` per workspace
    (its notes say so), the same figure idle and at the maximum (more GPU nodes add DCGM series: roughly 30 per
    GPU every 30 s). Storage is the month's new data at `AMP_BYTES_PER_SAMPLE`; it accumulates over the
    workspace's retention (150 days by default), which the hourly figure does not show.
    """
    rate = versions.AMP_ESTIMATE_SAMPLES_PER_SECOND * workspaces
    ingestion = rate * 3600 / 1e7 * _usd(versions.AMP_INGESTION_PER_10M_SAMPLES_USD)
    month_gb = rate * 3600 * versions.HOURS_PER_MONTH * versions.AMP_BYTES_PER_SAMPLE / 1e9
    storage = month_gb * _usd(versions.AMP_STORAGE_GB_MONTH_USD) / versions.HOURS_PER_MONTH
    collector = collectors * _usd(versions.AMP_COLLECTOR_HOURLY_USD)
    hourly = round(ingestion + storage + collector, 4)
    return CostLine(
        "managed Prometheus (AMP)",
        f"{collectors} collector(s) x ${versions.AMP_COLLECTOR_HOURLY_USD}/h; ingestion "
        f"${versions.AMP_INGESTION_PER_10M_SAMPLES_USD}/10M samples; "
        f"storage ${versions.AMP_STORAGE_GB_MONTH_USD}/GB-month",
        hourly,
        hourly,
        (
            f"estimate at {rate} samples/s ingested (ingestion ${ingestion:.4f}/h, storage ${storage:.4f}/h per "
            f"month of data kept, collectors ${collector:.4f}/h); AMP prices as of {versions.AMP_PRICES_DATE}",
            "queries (per sample processed: dashboards, alert rules, KEDA) not estimated",
        ),
    )


def _root_volume(template: Mapping[str, Any]) -> int:
    for mapping in template.get("blockDeviceMappings", []):
        size = mapping.get("ebs", {}).get("volumeSize")
        if size:
            return int(size)
    return 0


def _gpu_units_per_node(tags: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """GPU units (`nvidia.com/gpu`, after sharing) per node of each node group, from its autoscaler tags."""
    units: dict[str, int] = {}
    for tag in tags:
        spec = tag["inputs"].get("tag", {})
        if str(spec.get("key", "")).endswith(_GPU_TAG_SUFFIX):
            for dep in tag.get("dependencies", []):
                if "aws:eks/nodeGroup:NodeGroup::" in dep:
                    units[dep] = int(spec.get("value", 0))
    return units


_KEEPERS: Final = ("kubernetes:apps/v1:Deployment", "kubernetes:apps/v1:StatefulSet")


def _kept_up(resources: list[Mapping[str, Any]]) -> dict[str, tuple[int, list[str]]]:
    """GPU units that always-on workloads hold per node group, and which workloads: {group: (units, names)}."""
    floors = {
        (
            r["inputs"].get("metadata", {}).get("namespace"),
            r["inputs"].get("spec", {}).get("scaleTargetRef", {}).get("name"),
        ): int(r["inputs"].get("spec", {}).get("minReplicas", 1))
        for r in resources
        if r["type"] == "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
    }
    held: dict[str, tuple[int, list[str]]] = {}
    for r in resources:
        if r["type"] not in _KEEPERS:
            continue
        meta, spec = r["inputs"].get("metadata", {}), r["inputs"].get("spec", {})
        replicas = floors.get((meta.get("namespace"), meta.get("name")), spec.get("replicas", 1))
        pod = spec.get("template", {}).get("spec", {})
        gpus = sum(
            int(c.get("resources", {}).get("limits", {}).get(GPU_RESOURCE, 0)) for c in pod.get("containers", [])
        )
        group = target_group(pod)
        if not replicas or not gpus or group is None:
            continue
        units, names = held.get(group, (0, []))
        held[group] = (units + int(replicas) * gpus, [*names, f"{meta.get('namespace')}/{meta.get('name')}"])
    return held


def target_group(pod: Mapping[str, Any]) -> str | None:
    """The node group a pod must run on (`gpuplane.io/node-group` in its nodeSelector or required affinity)."""
    selected = pod.get("nodeSelector", {}).get(_GROUP_LABEL)
    if selected:
        return str(selected)
    required = pod.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {})
    for term in required.get("nodeSelectorTerms", []):
        for expression in term.get("matchExpressions", []):
            if (
                expression.get("key") == _GROUP_LABEL
                and expression.get("operator") == "In"
                and expression.get("values")
            ):
                return str(expression["values"][0])
    return None


_BINARY: Final = {"Ki": 2**-20, "Mi": 2**-10, "Gi": 1, "Ti": 2**10, "Pi": 2**20}
_DECIMAL: Final = {"k": 1e3 / 2**30, "M": 1e6 / 2**30, "G": 1e9 / 2**30, "T": 1e12 / 2**30}


def _gib(quantity: str) -> float:
    """A Kubernetes storage quantity (`100Gi`, `1Ti`, `500G`) in GiB."""
    text = str(quantity)
    for suffixes in (_BINARY, _DECIMAL):
        for suffix, factor in suffixes.items():
            if text.endswith(suffix):
                return float(text.removesuffix(suffix)) * factor
    return float(text) / 2**30
