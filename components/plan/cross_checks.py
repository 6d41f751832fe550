"""The checks of a platform that need several sections of its config at once: one report of every problem.

Why here and not in `PlatformArgs`: a field belongs to one section and is checked where it is declared
(`components.config`); a rule that spans sections (node groups and the workloads placed on them, the
queue and the training runs it admits, the storage paths and the workload namespace, the prod profile and
what it forbids) needs the plan layer's decisions (placement, GPU units, queue flavors), and those take
the args. Checking them from inside the schema made the schema import the plan that imports the schema
back. So the schema builds the args, and both callers run these checks on what it built:
`infra.config` (the stack file; each problem becomes a `gpuplane:<key>` line) and the `Platform`
component (a program that builds `PlatformArgs` by hand gets the same report before anything is made).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from gpuplane.components.config import ClusterArgs, PlatformArgs
from gpuplane.components.config.base import FieldError, FieldErrors, raise_all
from gpuplane.components.config.node_groups import blocks_scheduling
from gpuplane.components.config.storage import EFS_PATH_MAX_CHARS, dynamic_access_point_path_length
from gpuplane.components.facts import addresses, partition
from gpuplane.components.plan import addons, placement, training_queue
from gpuplane.components.plan.placement import WorkloadContext

__all__ = ["check_platform", "cluster_warnings", "config_warnings", "platform_problems", "platform_warnings"]


def platform_problems(args: PlatformArgs) -> list[FieldError]:
    """Every problem across the sections of `args`, each naming its key (each check is independent)."""
    groups = args.resolved_node_groups
    problems: list[FieldError] = []
    names = [g.name for g in groups]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(FieldError("nodeGroups", f"group name(s) {dupes} used more than once; names must be unique"))
    if not any(not blocks_scheduling(g) for g in groups):
        problems.append(
            FieldError(
                "nodeGroups",
                "every group is tainted NoSchedule/NoExecute; add an untainted CPU group for system pods (coredns)",
            )
        )
    else:
        problems += _collect(lambda: _check_cluster_services_capacity(args))
    problems += _collect(lambda: _check_dynamic_paths(args))
    problems += _prod_endpoint_problems(args)
    problems += _reservation_az_problems(args)
    problems += _prod_storage_problems(args)
    vpc = ipaddress.IPv4Network(args.network.cidr)
    services = ipaddress.IPv4Network(args.cluster.service_ipv4_cidr)
    if vpc.overlaps(services):
        problems.append(
            FieldError(
                "cluster.serviceIpv4Cidr",
                f"{services} overlaps the VPC {vpc} (network.cidr); pick a Service CIDR outside the VPC",
            )
        )
    problems += _metric_scaling_problems(args)
    context = WorkloadContext.of(args)
    problems += placement.workload_problems(context, args.serving, args.training)
    problems += _collect(lambda: training_queue.check_queue(context, args.queue, args.training))
    return problems


def _metric_scaling_problems(args: PlatformArgs) -> list[FieldError]:
    """A variant scaled on a Prometheus signal needs a store KEDA reads: the stack's Prometheus or its AMP workspace.

    With `cloudwatch` every signal but cpu is refused, not rerouted: Container Insights collects no TF Serving
    metric at all (requestsPerSecond, latencyP90Ms), and its GPU utilization (`pod_gpu_utilization`) arrives a
    minute apart plus CloudWatch's ingestion delay, through a second scaler (KEDA's `aws-cloudwatch`) with its
    own IAM: a scaling path that lags minutes behind load and is built for one metric of three. The variant
    scales on cpu there, or the stack picks a Prometheus backend.
    """
    backend = args.observability.metrics
    if backend in {"prometheus", "managedPrometheus"}:
        return []
    if backend == "cloudwatch":
        why = (
            "is read from Prometheus, but observability.metrics is 'cloudwatch' (Container Insights has no TF "
            "Serving metrics and gpuplane does not scale on its GPU metrics); allowed with cloudwatch: cpu; or set "
            "observability.metrics: prometheus or managedPrometheus"
        )
    else:
        why = (
            f"is read from Prometheus, but observability.metrics is '{backend}'; set observability.metrics: "
            "prometheus or managedPrometheus, or scale on cpu"
        )
    return [
        FieldError(f"serving[{i}].variants[{j}].autoscaling.metric", f"'{v.autoscaling.metric}' {why}")
        for i, s in enumerate(args.serving)
        for j, v in enumerate(s.variants)
        if v.autoscaling is not None and v.autoscaling.metric != "cpu"
    ]


def config_warnings(args: PlatformArgs) -> list[str]:
    """What renders but does not do what the stack says (printed by `gpuplane render`, never an error).

    The components log the same lines as Pulumi warnings (`Cluster` its own, `Platform` the rest), so `pulumi
    preview`/`up` of any program shows them and `gpuplane render` of a program of one's own prints them too
    (infra/mockrun.py collects them).
    """
    return [*cluster_warnings(args.cluster), *platform_warnings(args)]


def cluster_warnings(cluster: ClusterArgs, key: str = "gpuplane:cluster.publicAccessCidrs") -> list[str]:
    """`cluster.publicAccessCidrs` entries nobody on the internet comes from (documentation, private, loopback...).

    A warning, not an error: the shipped dev stack holds the documentation range 203.0.113.0/24 as an example
    and must still render; `gpuplane preflight` refuses it before `pulumi up` (infra/aws/preflight.py).
    `key`: how the reader wrote the list: the stack config's key, or a program's line and argument.
    """
    warnings = []
    for index, cidr in enumerate(cluster.public_access_cidrs if cluster.endpoint_public_access else []):
        why = addresses.unreachable(cidr)
        if why:
            warnings.append(
                f"{key}[{index}]: {cidr} is no internet address ({why}); nobody can "
                "reach the API through it. Replace it with the address you run `pulumi up` and kubectl from "
                "(`curl -s ifconfig.me`, then /32) before deploying"
            )
    return warnings


def platform_warnings(args: PlatformArgs) -> list[str]:
    """The sections' warnings beyond the cluster's (`config_warnings`).

    `dcgmExporter: true` with `cloudwatch`: the add-on runs its own dcgm-exporter on every NVIDIA node, and two
    exporters (two DCGM host engines) on one node fail DCGM's profiling fields (NVIDIA/DCGM#56), so gpuplane's is
    off whatever the key says.
    """
    warnings = []
    observability = args.observability
    if (
        observability.metrics == "cloudwatch"
        and observability.dcgm_exporter
        and "dcgm_exporter" in observability.model_fields_set
    ):
        warnings.append(
            "gpuplane:observability.dcgmExporter: true is ignored with observability.metrics: cloudwatch: the "
            "amazon-cloudwatch-observability add-on runs its own dcgm-exporter on the GPU nodes (one exporter per "
            "node); remove the key to silence this"
        )
    # A key set in the stack that the chosen backend never reads: said, not refused, because the backend may
    # be the profile's default, which depends on the region (a prod stack's `retention` counts in aws-cn only).
    for field, key, used_by in _BACKEND_KEYS:
        value = getattr(observability, field)
        if field in observability.model_fields_set and observability.metrics not in used_by and value is not False:
            warnings.append(
                f"gpuplane:observability.{key}: {value!r} is ignored with observability.metrics: "
                f"{observability.metrics} (read by metrics: {' or '.join(used_by)}); remove the key to silence this"
            )
    return warnings


# (field, key, the backends that read it): Observability (prometheus, managedPrometheus) and
# CloudWatchObservability (cloudwatch) in components/; `none` reads none of them.
_BACKEND_KEYS = (
    ("retention", "retention", ("prometheus",)),
    ("grafana", "grafana", ("prometheus",)),
    ("serving_p99_ms", "servingP99Ms", ("prometheus", "managedPrometheus")),
    ("queue_wait_minutes", "queueWaitMinutes", ("prometheus", "managedPrometheus")),
    ("gpu_memory_percent", "gpuMemoryPercent", ("prometheus", "managedPrometheus", "cloudwatch")),
    ("alert_topic_arn", "alertTopicArn", ("prometheus", "managedPrometheus", "cloudwatch")),
)


def region_problems(args: PlatformArgs, region: str) -> list[tuple[str, str]]:
    """(key, message) for what the region does not allow: missing add-ons, an alert topic of another region.

    Alertmanager signs its SNS calls for the stack's region, and SNS answers for a topic only in its own.
    """
    problems = addons.region_problems(args, region)
    if args.observability.metrics == "managedPrometheus" and region not in partition.service_regions("amp"):
        problems.append(
            (
                "observability.metrics",
                f"'managedPrometheus': Amazon Managed Service for Prometheus is not offered in {region} "
                "(botocore's endpoint data has no `aps` endpoint there, none in aws-cn); "
                "use observability.metrics: prometheus (in-cluster) or none",
            )
        )
    topic = args.observability.alert_topic_arn
    if topic is not None:
        problems += _arn_in_region("observability.alertTopicArn", topic, region, "a topic")
    for index, group in enumerate(args.resolved_node_groups):
        arn = group.capacity_reservation.resource_group_arn if group.capacity_reservation else None
        if arn is not None:
            key = f"nodeGroups[{index}].capacityReservation.resourceGroupArn"
            problems += _arn_in_region(key, arn, region, "a Capacity Reservation group")
    return problems


def _arn_in_region(key: str, arn: str, region: str, what: str) -> list[tuple[str, str]]:
    """(key, message) when a regional ARN is of another partition or region than the stack's, else nothing.

    SNS topics and Capacity Reservation groups are regional: the stack's clients sign for its region and
    partition, and a launch template in one region cannot target a reservation group of another.
    """
    parts = arn.split(":")
    try:
        expected = partition.of_region(region).id
    except ValueError:
        return []  # the region itself is reported
    if parts[1] == expected and parts[3] == region:
        return []
    wanted = ":".join([parts[0], expected, parts[2], region])
    same = parts[1] == expected
    where, ours = (parts[3], region) if same else (f"{parts[1]} {parts[3]}", f"{expected} {region}")
    return [(key, f"'{arn}' is in {where}, the stack in {ours}; name {what} of {region} ({wanted}:...)")]


def check_platform(args: PlatformArgs) -> None:
    """Raise every problem of `platform_problems` together (FieldError, or FieldErrors for several)."""
    raise_all(platform_problems(args))


def _prod_endpoint_problems(args: PlatformArgs) -> list[FieldError]:
    if args.profile != "prod" or not args.cluster.endpoint_public_access:
        return []
    # A set of CIDRs that together cover the whole address space (0.0.0.0/1 + 128.0.0.0/1) is as open as a
    # literal /0.
    networks = [ipaddress.IPv4Network(c) for c in args.cluster.public_access_cidrs]
    if ipaddress.IPv4Network("0.0.0.0/0") not in ipaddress.collapse_addresses(networks):
        return []
    return [
        FieldError(
            "cluster.publicAccessCidrs",
            f"{args.cluster.public_access_cidrs} opens the prod API endpoint to the whole internet; list specific "
            "CIDRs or set cluster.endpointPublicAccess: false",
        )
    ]


def _reservation_az_problems(args: PlatformArgs) -> list[FieldError]:
    """A reservation's AZ must be one of the network's AZs, named explicitly (issue 31).

    A reservation lives in one AZ; its group's nodes launch only in that AZ's private subnet. With
    `network.azCount` the AZs are picked at `pulumi up` from what the region offers, so render could not
    know whether the reservation's AZ is among them: the AZs must be listed.
    """
    problems: list[FieldError] = []
    explicit = args.network.availability_zones
    for index, group in enumerate(args.node_groups or []):
        reservation = group.capacity_reservation
        if reservation is None or reservation.availability_zone is None:
            continue
        key = f"nodeGroups[{index}].capacityReservation.availabilityZone"
        az = reservation.availability_zone
        if not explicit:
            problems.append(
                FieldError(
                    key,
                    f"'{az}' needs the network's AZs named: set network.availabilityZones (including {az}) instead "
                    "of network.azCount, so the group's subnet is known before `pulumi up`",
                )
            )
        elif az not in explicit:
            problems.append(
                FieldError(key, f"'{az}' is not one of network.availabilityZones {list(explicit)}; add it there")
            )
    return problems


def _prod_storage_problems(args: PlatformArgs) -> list[FieldError]:
    storage = args.storage
    if (
        args.profile != "prod"
        or not storage.enabled
        or (storage.protect and storage.retain_on_delete)
        or storage.allow_data_loss_on_prod
    ):
        return []
    off = [k for k, v in (("protect", storage.protect), ("retainOnDelete", storage.retain_on_delete)) if not v]
    return [
        FieldError(
            f"storage.{off[0]}",
            f"{', '.join(off)} switched off on a prod stack would let `pulumi destroy` delete the shared "
            "data; keep it on, or set storage.allowDataLossOnProd: true to say you mean it",
        )
    ]


def _check_cluster_services_capacity(args: PlatformArgs) -> None:
    """Cluster services (coredns, the EFS controller, the autoscaler) run on untainted groups only.

    They wait for those groups (never for GPU groups), so at least one must start with a node.
    """
    untainted = [g for g in args.resolved_node_groups if not blocks_scheduling(g)]
    if not args.system_node_groups:
        raise FieldError(
            "nodeGroups",
            f"no untainted CPU group (untainted: {[g.name for g in untainted]}); cluster services (coredns, the "
            "EFS controller, the autoscaler) wait for untainted CPU groups only, never for GPU nodes: add one",
        )
    if all(g.min_size == 0 for g in args.system_node_groups):
        names = ", ".join(g.name for g in args.system_node_groups)
        raise FieldError(
            "nodeGroups",
            f"every untainted CPU group ({names}) has minSize 0: coredns, the EFS controller and the autoscaler "
            "would have no node to run on (the autoscaler cannot scale up without running itself); "
            "give one of them minSize >= 1",
        )


def _check_dynamic_paths(args: PlatformArgs) -> None:
    """The access point paths the CSI driver will make for our dynamic claims must fit the EFS limit."""
    storage = args.storage
    if not storage.enabled:
        return
    claims = [v.name for v in storage.volumes if v.provisioning == "dynamic"] or ["x"]
    for claim in claims:
        length = dynamic_access_point_path_length(storage.base_path, args.workload_namespace, claim)
        if length > EFS_PATH_MAX_CHARS:
            raise FieldError(
                "storage.basePath",
                f"'{storage.base_path}' makes the access point path of claim '{claim}' in namespace "
                f"'{args.workload_namespace}' {length} characters (basePath/namespace/claim-<uuid>); EFS allows "
                f"{EFS_PATH_MAX_CHARS}: shorten basePath, the namespace or the volume name",
            )


def _collect(check: Callable[[], None]) -> list[FieldError]:
    """The FieldError(s) a check raises, as a list."""
    try:
        check()
    except FieldErrors as exc:
        return exc.errors
    except FieldError as exc:
        return [exc]
    return []
