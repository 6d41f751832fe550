"""What a stack costs per hour, idle and at its maximum: a pure estimate from what the plan creates.

Why from the plan's resources and not from the stack config: `gpuplane render --project` prices any program
that uses the components, and the plan is what `pulumi up` would create (node groups, NAT gateways, the
cluster, file systems, load balancers), whatever config produced it. `usage_from_resources` reads plan.json's
resources (plain dicts) into a `StackUsage`; `estimate` prices it with `facts.prices`: its dated instance table
and its dated service prices.

"Idle" is what runs with no training submitted: every node group at its minimum, plus the GPU nodes that
always-on workloads keep up (a serving Deployment with one GPU replica keeps a GPU node up even when its
group's minimum is 0). "Max" is every node group at its maximum. Both are estimates, and say what they leave
out: data transfer and data processed, EFS storage growth beyond the volumes' stated size, load-balancer
capacity units, log ingestion, and spot prices (a spot group is priced at its on-demand ceiling).

Reserved capacity is priced as AWS bills it: an On-Demand Capacity Reservation costs its reserved count x the
on-demand rate every hour, used or not, so it is a line of its own in the idle figure as in the maximum (the
group's nodes inside it add only their volumes); a Capacity Block is paid up front when bought, so its line is
$0/h and says what was prepaid until when. What the plan's resources cannot tell (a reservation's instance count
and end) comes from the stack config (`Reservation`). An instance type without a price is named in the total,
never dropped silently.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gpuplane.components.facts import prices
from gpuplane.manifests import cloudwatch, lifecycle, observability, versions, wellknown

_GPU_TAG_SUFFIX: Final = f"node-template/resources/{wellknown.GPU_RESOURCE}"
CAVEATS: Final = (
    "an estimate: on-demand list prices; leaves out data transfer, NAT and EFS data processed, EFS storage "
    "beyond the volumes' stated size, load-balancer capacity units, CloudWatch Logs ingestion and storage (the "
    "control plane's logs, VPC flow logs), EFS backup storage (AWS Backup), the AMP collector's per-sample charge, "
    "KMS requests and the $1/month each rotated key version adds (up to $3 a key), and taxes; a CPU group idles at "
    "its minSize even where the add-ons and always-on pods need another node (the autoscaler adds it); spot groups "
    "are priced at their on-demand ceiling (spot prices vary by the hour: `gpuplane preflight` reads them)"
)
# What the estimate assumes of usage it cannot see in a plan, each priced by `facts.prices`. Amazon Managed Service
# for Prometheus: ingestion at `AMP_ESTIMATE_SAMPLES_PER_SECOND` per workspace (about 30,000 active series scraped
# every 30 s: a few GPU nodes with DCGM's default counters, kube-state-metrics and a few serving pods) and storage at
# `AMP_BYTES_PER_SAMPLE` (Prometheus's compressed TSDB stores about 1-2 bytes a sample). CloudWatch Container
# Insights: `CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE`, about 60 node-level data points plus about 10 pods with about
# 25 pod and container data points each, once a minute (the metric tables of the CloudWatch user guide's "Container
# Insights with enhanced observability metrics" for EKS); GPU nodes add about 10 per GPU.
AMP_ESTIMATE_SAMPLES_PER_SECOND: Final = 1000
AMP_BYTES_PER_SAMPLE: Final = 2
CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE: Final = 310


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
    reserved_count: int | None = None
    """Instances the reservation holds (`capacityReservation.instanceCount`), None when not stated."""
    reservation_end: str | None = None
    """When the reservation ends (`capacityReservation.endTime`), None when not stated."""
    gpu_units_per_node: int = 0
    """`nvidia.com/gpu` units one node offers (after sharing), 0 for a CPU group or when unknown."""
    gpu_units_held: int = 0
    """Units the always-on workloads (`kept_up_by`) request in all."""
    parked: tuple[str, ...] = ()
    """GPU workloads at 0 replicas on this group (`namespace/name`): they keep nothing up until started."""

    @property
    def idle_nodes(self) -> int:
        """Nodes running with no training: the minimum, or more when always-on workloads need more."""
        return max(self.min_size, min(self.kept_up, self.max_size))


@dataclass(frozen=True)
class Reservation:
    """What the stack config says of a group's reservation that its resources cannot: size and end."""

    instance_count: int | None = None
    end_time: str | None = None


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
    """kube-prometheus-stack runs in the cluster (`observability.metrics: prometheus`)."""
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
    unpriced: tuple[str, ...] = ()
    """Instance types this line needed a price for and the table lacks: left out of the totals, by name."""
    warnings: tuple[str, ...] = ()
    """What the user should act on (GPUs kept up and mostly idle), shown with the totals."""


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

    @property
    def excluded(self) -> tuple[str, ...]:
        """Instance types the totals leave out for want of a price (sorted, once each)."""
        return tuple(sorted({t for line in self.lines for t in line.unpriced}))

    @property
    def total_note(self) -> str:
        """What the total line says beside its figures: e.g. `excludes p5e.48xlarge: no price`, or nothing."""
        return f"excludes {', '.join(self.excluded)}: no price" if self.excluded else ""

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every line's warnings, in line order."""
        return tuple(w for line in self.lines for w in line.warnings)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (plan.json `cost`, `render --json`); amounts in USD per hour, rounded to 4 decimals."""
        return {
            "currency": "USD",
            "per": "hour",
            "region": self.region,
            "idle": self.idle,
            "max": self.max,
            "idleMonthly": round(self.idle * prices.HOURS_PER_MONTH, 2),
            "maxMonthly": round(self.max * prices.HOURS_PER_MONTH, 2),
            "excludes": list(self.excluded),
            "totalNote": self.total_note,
            "warnings": list(self.warnings),
            "lines": [
                {
                    "item": x.item,
                    "detail": x.detail,
                    "idle": x.idle,
                    "max": x.max,
                    "notes": list(x.notes),
                    "unpriced": list(x.unpriced),
                    "warnings": list(x.warnings),
                }
                for x in self.lines
            ],
            "instancePrices": {"source": self.price_source, "date": self.price_date},
            "servicePrices": {"source": "components/facts/prices.py", "date": self.service_price_date},
            "notes": list(self.notes),
        }


def _usd(value: str) -> float:
    return float(value)


# GPU nodes kept up by always-on workloads are "mostly idle" when more than this share of their units is unused.
IDLE_GPU_WARNING_SHARE: Final = 0.5


def _is_block(group: GroupUsage) -> bool:
    return group.capacity == "CAPACITY_BLOCK"


def _is_counted_odcr(group: GroupUsage) -> bool:
    """An ODCR target whose size the config states: billed as a line of its own (`reservation_line`)."""
    return not _is_block(group) and group.reservation is not None and group.reserved_count is not None


def group_line(group: GroupUsage, region: str, table: prices.PriceTable | None = None) -> CostLine:
    """A node group's line: nodes x (instance price + root volume), idle and at the maximum.

    On-demand managed node groups launch the first listed type (allocation strategy `prioritized`), so that
    price counts; spot groups may get any listed type, so their ceiling is the dearest on-demand price. Nodes
    inside reserved capacity add only their root volumes here: a Capacity Block's instances are prepaid, a
    counted ODCR's are billed on its own line (`reservation_line`) whether they run or not.
    """
    volume = group.root_volume_gib * _usd(prices.EBS_GP3_GB_MONTH_USD) / prices.HOURS_PER_MONTH
    if _is_block(group):
        return CostLine(
            f"node group {group.name}",
            f"{group.idle_nodes}-{group.max_size} x {group.instance_types[0]} (Capacity Block: instances prepaid; "
            f"root volumes ${volume:.4f}/h each)",
            round(group.idle_nodes * volume, 4),
            round(group.max_size * volume, 4),
            tuple(_parked_notes(group, None)),
        )
    quotes = [prices.on_demand(t, region, table) for t in group.instance_types]
    spot = group.capacity == "SPOT"
    known = [q for q in quotes if q.usd_per_hour is not None]
    notes = sorted({n for q in quotes if (n := q.note) and q.usd_per_hour is not None})
    if not known or (not spot and quotes[0].usd_per_hour is None):
        missing = tuple(q.instance_type for q in quotes if q.usd_per_hour is None)
        return CostLine(
            f"node group {group.name}",
            f"{group.idle_nodes}-{group.max_size} x {', '.join(group.instance_types)}",
            0.0,
            0.0,
            (f"no price for {', '.join(missing)} in the price table: left out of the total",),
            unpriced=missing,
        )
    chosen = max(known, key=lambda q: q.usd_per_hour or 0.0) if spot else quotes[0]
    assert chosen.usd_per_hour is not None
    rate = chosen.usd_per_hour
    per_node = rate + volume
    kind = "spot, at most" if spot else "on-demand"
    detail = f"{group.idle_nodes}-{group.max_size} x {chosen.instance_type} ({kind} ${chosen.usd_per_hour:.4g}/h)"
    unpriced: tuple[str, ...] = ()
    if spot:
        notes.append("spot: priced at the on-demand ceiling; spot prices vary by the hour")
        unpriced = tuple(q.instance_type for q in quotes if q.usd_per_hour is None)
        if unpriced:
            notes.append(f"no price for {', '.join(unpriced)} in the price table: the ceiling leaves it out")
    covered = 0
    if _is_counted_odcr(group):
        assert group.reserved_count is not None
        covered = group.reserved_count
        detail += f"; up to {covered} inside reservation {group.reservation} (their volumes only here)"
    elif group.reservation:
        notes.append(
            f"targets reservation {group.reservation}: an On-Demand Capacity Reservation is billed at the "
            "on-demand rate for every reserved instance, running or not; set capacityReservation.instanceCount "
            "to count it in the totals"
        )
    if group.kept_up > group.min_size and group.idle_nodes > group.min_size:
        notes.append(
            f"{group.idle_nodes - group.min_size} node(s) above minSize {group.min_size} kept up by "
            f"{', '.join(group.kept_up_by)}"
        )
    notes += _parked_notes(group, per_node)

    def nodes(count: int) -> float:
        return count * volume + max(0, count - covered) * rate

    return CostLine(
        f"node group {group.name}",
        detail,
        round(nodes(group.idle_nodes), 4),
        round(nodes(group.max_size), 4),
        tuple(notes),
        unpriced=unpriced,
        warnings=_idle_gpu_warning(group, rate, chosen.instance_type),
    )


def reservation_line(group: GroupUsage, region: str, table: prices.PriceTable | None = None) -> CostLine | None:
    """The reservation a group launches into, as billed.

    A Capacity Block at $0/h (prepaid), a counted ODCR at its reserved count x the on-demand rate in both
    figures; None for a group without one (or an ODCR whose size the config does not state: its group line
    says so).
    """
    if _is_block(group):
        count = group.reserved_count if group.reserved_count is not None else group.max_size
        until = f" until {group.reservation_end}" if group.reservation_end else ""
        return CostLine(
            f"Capacity Block {group.reservation or '(no id)'}",
            f"group {group.name}: {count} x {group.instance_types[0]}",
            0.0,
            0.0,
            (
                f"prepaid: {count} x {group.instance_types[0]}{until}; the block's price is paid when it is bought, "
                "not by the hour",
            ),
        )
    if not _is_counted_odcr(group):
        return None
    assert group.reserved_count is not None
    quote = prices.on_demand(group.instance_types[0], region, table)
    item = f"ODCR {group.reservation}"
    if quote.usd_per_hour is None:
        return CostLine(
            item,
            f"group {group.name}: {group.reserved_count} x {group.instance_types[0]} reserved",
            0.0,
            0.0,
            (f"no price for {group.instance_types[0]} in the price table: left out of the total",),
            unpriced=(group.instance_types[0],),
        )
    hourly = round(group.reserved_count * quote.usd_per_hour, 4)
    until = f"; ends {group.reservation_end}" if group.reservation_end else ""
    return CostLine(
        item,
        f"group {group.name}: {group.reserved_count} x {group.instance_types[0]} reserved "
        f"(on-demand ${quote.usd_per_hour:.4g}/h each)",
        hourly,
        hourly,
        (
            f"reserved: {group.reserved_count} x {group.instance_types[0]} billed every hour, running or not{until}",
            *((quote.note,) if quote.note else ()),
        ),
    )


def _idle_gpu_warning(group: GroupUsage, usd_per_hour: float, instance_type: str) -> tuple[str, ...]:
    """A warning when always-on workloads keep GPU nodes up and leave more than half their GPU units unused.

    Only the nodes those workloads keep up are weighed, and only their idle share is priced: a 1-GPU serving
    variant placed on an 8-GPU p5.48xlarge pays for seven GPUs that nothing uses ($48/h of its $55/h).
    """
    units = group.gpu_units_per_node
    nodes = min(group.kept_up, group.max_size)
    if not units or not nodes or not group.gpu_units_held:
        return ()
    offered = nodes * units
    used = min(group.gpu_units_held, offered)
    idle = offered - used
    if idle / offered <= IDLE_GPU_WARNING_SHARE:
        return ()
    return (
        f"{', '.join(group.kept_up_by)} keep(s) {nodes} x {instance_type} up using {used} of its {offered} GPU "
        f"unit(s): the {idle} idle cost ${idle / units * usd_per_hour:.2f}/h; a type with fewer GPUs per node "
        "fits it better",
    )


def _parked_notes(group: GroupUsage, per_node: float | None) -> list[str]:
    """What starting a GPU workload parked at 0 replicas would add: it keeps no node up until then."""
    if not group.parked:
        return []
    start = f": +${per_node:.2f}/h per node it brings up" if per_node is not None else ""
    return [f"{', '.join(group.parked)} at 0 replicas: keeps no GPU node up; set its replicas to start it{start}"]


def estimate(usage: StackUsage, table: prices.PriceTable | None = None, today: dt.date | None = None) -> Estimate:
    """Price `usage`: node groups from the dated instance table, the rest from the dated service prices.

    `today` (a date; default `lifecycle.today()`) decides whether a cluster's version is billed as standard
    or extended support.
    """
    table = table or prices.table()
    on = today or lifecycle.today()
    lines: list[CostLine] = []
    for version in usage.kubernetes_versions:
        extended = version in versions.KUBERNETES_VERSIONS and not lifecycle.in_standard_support(version, on)
        hourly = _usd(prices.EKS_EXTENDED_HOURLY_USD if extended else prices.EKS_STANDARD_HOURLY_USD)
        note: tuple[str, ...] = ()
        if version not in versions.KUBERNETES_VERSIONS:
            note = (f"EKS support dates of {version} are not in manifests/versions.py: priced as standard support",)
        elif not extended:
            note = (
                f"standard support of {version} ends {lifecycle.standard_support_end(version)}; "
                f"extended support then costs ${prices.EKS_EXTENDED_HOURLY_USD}/h",
            )
        support = "extended" if extended else "standard"
        lines.append(CostLine("EKS control plane", f"Kubernetes {version}, {support} support", hourly, hourly, note))
    for group in usage.groups:
        lines.append(group_line(group, usage.region, table))
        reserved = reservation_line(group, usage.region, table)
        if reserved is not None:
            lines.append(reserved)
    if usage.nat_gateways:
        nat = usage.nat_gateways * (_usd(prices.NAT_GATEWAY_HOURLY_USD) + _usd(prices.PUBLIC_IPV4_HOURLY_USD))
        lines.append(
            CostLine(
                "NAT gateways",
                f"{usage.nat_gateways} x (gateway ${prices.NAT_GATEWAY_HOURLY_USD}/h + public IPv4 "
                f"${prices.PUBLIC_IPV4_HOURLY_USD}/h)",
                round(nat, 4),
                round(nat, 4),
                ("plus $0.045 per GB processed (not estimated)",),
            )
        )
    if usage.efs_file_systems:
        efs = usage.efs_stated_gib * _usd(prices.EFS_STANDARD_GB_MONTH_USD) / prices.HOURS_PER_MONTH
        lines.append(
            CostLine(
                "EFS",
                f"{usage.efs_file_systems} file system(s), {usage.efs_stated_gib:g} GiB stated by the volumes "
                f"(${prices.EFS_STANDARD_GB_MONTH_USD}/GB-month)",
                round(efs, 4),
                round(efs, 4),
                ("EFS bills what is stored: the volumes' stated size is the estimate's assumption",),
            )
        )
    if usage.load_balancers:
        lb = usage.load_balancers * _usd(prices.LOAD_BALANCER_HOURLY_USD)
        lines.append(
            CostLine(
                "load balancers",
                f"{usage.load_balancers} x ${prices.LOAD_BALANCER_HOURLY_USD}/h",
                round(lb, 4),
                round(lb, 4),
                ("plus capacity units by traffic (not estimated)",),
            )
        )
    if usage.kms_keys:
        kms = usage.kms_keys * _usd(prices.KMS_KEY_MONTHLY_USD) / prices.HOURS_PER_MONTH
        lines.append(
            CostLine(
                "KMS keys", f"{usage.kms_keys} x ${prices.KMS_KEY_MONTHLY_USD}/month", round(kms, 4), round(kms, 4)
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
        service_price_date=prices.SERVICE_PRICES_DATE,
        notes=(CAVEATS,),
    )


# --- from plan.json's resources ---------------------------------------------------------------------------


def usage_from_resources(
    region: str, resources: Iterable[Mapping[str, Any]], reservations: Mapping[str, Reservation] | None = None
) -> StackUsage:
    """Read what costs money from plan.json-style resources (`urn`, `type`, `dependencies`, `inputs`).

    `reservations`: by node group name, what the stack config states of its reservation (instance count, end),
    which no resource carries; without it a Capacity Block is taken to hold `maxSize` instances and an ODCR's
    size is unknown (its line says how to state it).
    """
    items = list(resources)
    by_type: dict[str, list[Mapping[str, Any]]] = {}
    for r in items:
        by_type.setdefault(r["type"], []).append(r)
    templates = {r["urn"]: r for r in by_type.get("aws:ec2/launchTemplate:LaunchTemplate", [])}
    units = _gpu_units_per_node(by_type.get("aws:autoscaling/tag:Tag", []))
    kept, parked = _kept_up(items)
    groups = []
    for r in sorted(by_type.get("aws:eks/nodeGroup:NodeGroup", []), key=lambda r: str(r["urn"])):
        inputs = r["inputs"]
        name = (
            inputs.get("labels", {}).get(wellknown.LABEL_NODE_GROUP) or inputs.get("nodeGroupName") or r.get("name", "")
        )
        sc = inputs.get("scalingConfig", {})
        template: Mapping[str, Any] = next(
            (templates[d]["inputs"] for d in r.get("dependencies", []) if d in templates), {}
        )
        volume = _root_volume(template) if template else int(inputs.get("diskSize") or 0)
        target = template.get("capacityReservationSpecification", {}).get("capacityReservationTarget", {})
        gpu_units, workloads = kept.get(name, (0, []))
        per_node = units.get(r["urn"], 0)
        kept_up = math.ceil(gpu_units / per_node) if gpu_units and per_node else 0
        stated = (reservations or {}).get(name, Reservation())
        groups.append(
            GroupUsage(
                name=name,
                # A Capacity Block group names its type in the launch template only.
                instance_types=tuple(inputs.get("instanceTypes") or filter(None, [template.get("instanceType")])),
                capacity=str(inputs.get("capacityType", "ON_DEMAND")),
                min_size=int(sc.get("minSize", 0)),
                max_size=int(sc.get("maxSize", 0)),
                root_volume_gib=volume,
                kept_up=kept_up,
                kept_up_by=tuple(sorted(workloads)),
                reservation=target.get("capacityReservationId") or target.get("capacityReservationResourceGroupArn"),
                reserved_count=stated.instance_count,
                reservation_end=stated.end_time,
                gpu_units_per_node=per_node,
                gpu_units_held=gpu_units,
                parked=tuple(sorted(parked.get(name, []))),
            )
        )
    efs_gib = sum(
        _gib(r["inputs"].get("spec", {}).get("capacity", {}).get("storage", "0"))
        for r in by_type.get("kubernetes:core/v1:PersistentVolume", [])
        if r["inputs"].get("spec", {}).get("csi", {}).get("driver") == wellknown.EFS_CSI_PROVISIONER
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
        and any(r["inputs"].get("name") == "kube-prometheus-stack" for r in by_type.get(wellknown.HELM_RELEASE, [])),
        sns_topics=len(by_type.get("aws:sns/topic:Topic", [])),
        amp_workspaces=len(by_type.get("aws:amp/workspace:Workspace", [])),
        amp_collectors=len(by_type.get("aws:amp/scraper:Scraper", [])),
        cloudwatch_agent=any(
            r["inputs"].get("addonName") == wellknown.ADDON_CLOUDWATCH_OBSERVABILITY
            for r in by_type.get("aws:eks/addon:Addon", [])
        ),
        cloudwatch_alarms=len(by_type.get("aws:cloudwatch/metricAlarm:MetricAlarm", [])),
        cloudwatch_dashboards=len(by_type.get("aws:cloudwatch/dashboard:Dashboard", [])),
        prometheus_volume_gib=sum(
            _prometheus_volume(r["inputs"])
            for r in by_type.get(wellknown.HELM_RELEASE, [])
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
    hourly = gib * _usd(prices.EBS_GP3_GB_MONTH_USD) / prices.HOURS_PER_MONTH
    return CostLine(
        "Prometheus volume",
        f"{gib} GiB gp3 x ${prices.EBS_GP3_GB_MONTH_USD}/GB-month",
        round(hourly, 4),
        round(hourly, 4),
        (f"EBS prices as of {prices.SERVICE_PRICES_DATE}; billed per GiB provisioned, used or not",),
    )


def cloudwatch_line(usage: StackUsage) -> CostLine:
    """Container Insights with enhanced observability: observations by node count, alarms and dashboards.

    Observations scale with nodes (and pods): the estimate takes `CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE` per
    node, so idle and maximum differ with the node groups' sizes. Alarms and dashboards are monthly prices per
    hour. All of it is an estimate (the price per observation is not read from AWS in this session: facts/prices.py).
    """
    idle_nodes = sum(g.idle_nodes for g in usage.groups)
    max_nodes = sum(g.max_size for g in usage.groups)
    per_node = CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE * 60 / 1e6 * _usd(prices.CLOUDWATCH_PER_MILLION_OBSERVATIONS_USD)
    fixed = (
        usage.cloudwatch_alarms * _usd(prices.CLOUDWATCH_ALARM_MONTHLY_USD)
        + usage.cloudwatch_dashboards * _usd(prices.CLOUDWATCH_DASHBOARD_MONTHLY_USD)
    ) / prices.HOURS_PER_MONTH
    return CostLine(
        "CloudWatch Container Insights",
        f"{idle_nodes}-{max_nodes} node(s) x ~{CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE} observations/min at "
        f"${prices.CLOUDWATCH_PER_MILLION_OBSERVATIONS_USD}/1M; {usage.cloudwatch_alarms} alarm(s) x "
        f"${prices.CLOUDWATCH_ALARM_MONTHLY_USD}/month; {usage.cloudwatch_dashboards} dashboard(s) x "
        f"${prices.CLOUDWATCH_DASHBOARD_MONTHLY_USD}/month",
        round(idle_nodes * per_node + fixed, 4),
        round(max_nodes * per_node + fixed, 4),
        (
            f"estimate: ${per_node:.4f}/h per node at the assumed observation rate; CloudWatch prices as of "
            f"{prices.CLOUDWATCH_PRICES_DATE}, not read from AWS here (components/facts/prices.py)",
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
    rate = AMP_ESTIMATE_SAMPLES_PER_SECOND * workspaces
    ingestion = rate * 3600 / 1e7 * _usd(prices.AMP_INGESTION_PER_10M_SAMPLES_USD)
    month_gb = rate * 3600 * prices.HOURS_PER_MONTH * AMP_BYTES_PER_SAMPLE / 1e9
    storage = month_gb * _usd(prices.AMP_STORAGE_GB_MONTH_USD) / prices.HOURS_PER_MONTH
    collector = collectors * _usd(prices.AMP_COLLECTOR_HOURLY_USD)
    hourly = round(ingestion + storage + collector, 4)
    return CostLine(
        "managed Prometheus (AMP)",
        f"{collectors} collector(s) x ${prices.AMP_COLLECTOR_HOURLY_USD}/h; ingestion "
        f"${prices.AMP_INGESTION_PER_10M_SAMPLES_USD}/10M samples; "
        f"storage ${prices.AMP_STORAGE_GB_MONTH_USD}/GB-month",
        hourly,
        hourly,
        (
            f"estimate at {rate} samples/s ingested (ingestion ${ingestion:.4f}/h, storage ${storage:.4f}/h per "
            f"month of data kept, collectors ${collector:.4f}/h); AMP prices as of {prices.AMP_PRICES_DATE}",
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


def _kept_up(
    resources: list[Mapping[str, Any]],
) -> tuple[dict[str, tuple[int, list[str]]], dict[str, list[str]]]:
    """GPU units that always-on workloads hold per node group, and which workloads: {group: (units, names)}.

    Second: the GPU workloads parked at 0 replicas (no autoscaler with a floor) per group: {group: names}.
    """
    floors = {
        (
            r["inputs"].get("metadata", {}).get("namespace"),
            r["inputs"].get("spec", {}).get("scaleTargetRef", {}).get("name"),
        ): int(r["inputs"].get("spec", {}).get("minReplicas", 1))
        for r in resources
        if r["type"] == "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
    }
    held: dict[str, tuple[int, list[str]]] = {}
    parked: dict[str, list[str]] = {}
    for r in resources:
        if r["type"] not in _KEEPERS:
            continue
        meta, spec = r["inputs"].get("metadata", {}), r["inputs"].get("spec", {})
        replicas = floors.get((meta.get("namespace"), meta.get("name")), spec.get("replicas", 1))
        pod = spec.get("template", {}).get("spec", {})
        gpus = sum(
            int(c.get("resources", {}).get("limits", {}).get(wellknown.GPU_RESOURCE, 0))
            for c in pod.get("containers", [])
        )
        group = target_group(pod)
        if not gpus or group is None:
            continue
        name = f"{meta.get('namespace')}/{meta.get('name')}"
        if not replicas:
            if (meta.get("namespace"), meta.get("name")) not in floors:  # an autoscaler's floor 0 is not parked
                parked.setdefault(group, []).append(name)
            continue
        units, names = held.get(group, (0, []))
        held[group] = (units + int(replicas) * gpus, [*names, name])
    return held, parked


def target_group(pod: Mapping[str, Any]) -> str | None:
    """The node group a pod must run on (`gpuplane.io/node-group` in its nodeSelector or required affinity)."""
    selected = pod.get("nodeSelector", {}).get(wellknown.LABEL_NODE_GROUP)
    if selected:
        return str(selected)
    required = pod.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {})
    for term in required.get("nodeSelectorTerms", []):
        for expression in term.get("matchExpressions", []):
            if (
                expression.get("key") == wellknown.LABEL_NODE_GROUP
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
