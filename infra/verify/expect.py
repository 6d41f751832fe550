"""What a stack promises, as plain values the checks compare a live cluster against.

Why a module of plain dataclasses: the checks must be testable with a fake cluster and a handful of
values, without a stack file or the config's validation. `from_config` is the only place that reads the
validated stack (and the only import of `components` in `verify`), so the checks say "the plan gave this
group label X" with the very labels, taints, add-ons and GPU facts that `pulumi up` applied.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from gpuplane.manifests import wellknown

if TYPE_CHECKING:
    from gpuplane.infra.config import StackConfig


# The run id of verify's training runs: `verify-<the verify run's random part>`, apart from the user's own
# runs' names and from another verify run's (two runs on one stack each submit and remove their own).
TRAINING_RUN_PREFIX: Final = "verify-"
TRAINING_RUN_ID: Final = f"{TRAINING_RUN_PREFIX}000000"
"""The id the stack's names are checked with (as long as every run's)."""


def training_run_id(run_id: str) -> str:
    """The training run id of verify run `run_id` (`20261126-100000-abcdef` -> `verify-abcdef`)."""
    return TRAINING_RUN_PREFIX + run_id.rsplit("-", 1)[-1][-6:]


@dataclass(frozen=True)
class GroupExpect:
    """One node group as the plan made it."""

    name: str
    kind: str = "cpu"
    min_size: int = 1
    max_size: int = 3
    instance_types: tuple[str, ...] = ()
    capacity_type: str = "ON_DEMAND"
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[tuple[str, str, str], ...] = ()
    """(key, value, effect) in Kubernetes' spelling (`NoSchedule`)."""
    gpu_resource: str = wellknown.GPU_RESOURCE
    gpu_units: int = 0
    """Allocatable GPU units one node advertises after sharing."""
    memory_fraction: float = 1.0
    gpu_shared: bool = False
    sharing: str = "none"
    driver_major: int | None = None
    compute_capability: int | None = None
    gpu_model: str | None = None
    device_plugin: bool = False
    """A device-plugin pod (gpuplane's chart or the operator's) must run on each of its nodes."""
    usd_per_node_hour: float | None = None
    """One node's price per hour (instance and root volume) as `gpuplane render`'s cost estimate prices it
    (components/plan/cost.py `group_line`: on-demand, a spot group at its on-demand ceiling); None: the price
    table has no price for its types."""
    price_basis: str = ""
    """What that price is: the type, how it is bought, and whose region's price (`us-east-1 price (us-west-2 is
    not in the price table)`), with the table's date."""
    reserved: bool = False
    """The group launches into capacity reserved for it: a Capacity Block or an ODCR target."""
    reservation_id: str | None = None
    reservation_zone: str | None = None
    """The reservation's AZ as the stack names it (`capacityReservation.availabilityZone`); None when unknown."""
    efa_interfaces: int = 0
    """`vpc.amazonaws.com/efa` one node advertises (the EFA devices of its launch template); 0 without EFA."""

    @property
    def is_gpu(self) -> bool:
        """A GPU group."""
        return self.kind == "gpu"


@dataclass(frozen=True)
class VariantExpect:
    """One serving variant: where its REST endpoint answers and which model it serves."""

    serving: str
    variant: str
    model: str
    service: str


@dataclass(frozen=True)
class TrainingRunExpect:
    """A training workload's run as `gpuplane train` would submit it, under verify's own run id."""

    workload: str
    jobset: dict[str, Any]
    """The run under `TRAINING_RUN_ID` (what every run's JobSet looks like, its name aside)."""
    gpus: bool
    build: Callable[[str], dict[str, Any]] | None = field(default=None, compare=False, repr=False)
    """The JobSet under a given training run id (`train.build` for the stack); None: `jobset` renamed."""

    def for_run(self, run_id: str) -> dict[str, Any]:
        """The JobSet that verify run `run_id` submits: named per run, so two runs never share one."""
        if self.build is not None:
            return self.build(training_run_id(run_id))
        jobset = copy.deepcopy(self.jobset)
        name = str(jobset["metadata"]["name"]).removesuffix(TRAINING_RUN_ID) + training_run_id(run_id)
        jobset["metadata"]["name"] = name
        return jobset


@dataclass(frozen=True)
class Expectations:
    """Everything `verify` checks a cluster against."""

    stack: str
    cluster_name: str
    region: str
    kubernetes_version: str
    profile: str = "dev"
    public_endpoint: bool = True
    groups: tuple[GroupExpect, ...] = ()
    addons: tuple[str, ...] = ()
    workload_namespace: str = "ml"
    uid: int = 10001
    gid: int = 10001
    volumes: tuple[str, ...] = ()
    zones: tuple[str, ...] = ()
    """The stack's AZs where the config names them; empty when EKS picks them (`azCount`)."""
    variants: tuple[VariantExpect, ...] = ()
    training: tuple[str, ...] = ()
    """Training workload names."""
    training_runs: tuple[TrainingRunExpect, ...] = ()
    """One run per training workload that the queue can admit (`train.build` refuses the others)."""
    tensorboards: tuple[str, ...] = ()
    """The TensorBoard Services of the training workloads that declare one (`<training>-tensorboard`)."""
    autoscaler: bool = True
    scale_down_unneeded: str = "10m"
    scale_down_unneeded_s: int = 600
    """The same delay in seconds, for the cost of a node kept up that long."""
    gpu_operator: bool = False
    metrics: bool = False
    """The stack runs kube-prometheus-stack (`observability.metrics: prometheus`)."""
    metrics_backend: str = "none"
    """`observability.metrics` as configured: `prometheus`, `managedPrometheus`, `cloudwatch` or `none`."""
    dcgm_exporter: bool = True
    """A DCGM exporter runs on every GPU node (`observability.dcgmExporter`)."""

    @property
    def gpu_groups(self) -> list[GroupExpect]:
        """The GPU groups, in config order."""
        return [g for g in self.groups if g.is_gpu]

    def group(self, name: str) -> GroupExpect:
        """The group called `name` (KeyError naming the known ones)."""
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(f"no node group '{name}'; groups: {[g.name for g in self.groups]}")


def from_config(config: StackConfig) -> Expectations:
    """The promises of a validated stack, computed by the same functions the program uses."""
    from gpuplane.components.config.common import duration_seconds  # noqa: PLC0415
    from gpuplane.components.facts import catalog  # noqa: PLC0415 - the config's world, loaded when used
    from gpuplane.components.plan import addons  # noqa: PLC0415
    from gpuplane.components.plan import gpu_nodes as gpu_plan  # noqa: PLC0415
    from gpuplane.infra.compare import serving_variants  # noqa: PLC0415

    platform = config.platform
    groups = platform.resolved_node_groups
    plan = gpu_plan.GpuPlan(tuple(groups))
    made = []
    for group in groups:
        gpu = group.kind == "gpu"
        reservation = group.capacity_reservation
        made.append(
            GroupExpect(
                name=group.name,
                kind=group.kind,
                min_size=group.min_size,
                max_size=group.max_size,
                instance_types=tuple(group.instance_types),
                capacity_type=group.capacity_type,
                labels=gpu_plan.node_labels(group, gpu_operator=plan.operator),
                taints=tuple((t.key, t.value, t.effect) for t in group.all_taints),
                gpu_resource=gpu_plan.gpu_resource_name(group) if gpu else wellknown.GPU_RESOURCE,
                gpu_units=gpu_plan.allocatable_units(group) if gpu else 0,
                memory_fraction=gpu_plan.memory_fraction(group) if gpu else 1.0,
                gpu_shared=bool(gpu and gpu_plan.runtime_gpu_settings(group)["gpu_shared"]),
                sharing=group.sharing.mode if gpu else "none",
                driver_major=gpu_plan.driver_major(group) if gpu else None,
                compute_capability=catalog.compute_capability(group.instance) if gpu else None,
                gpu_model=group.instance.gpu_model if gpu else None,
                device_plugin=gpu and (gpu_plan.needs_standalone_plugin(group) or plan.operator),
                **_node_price(group, config.region),
                reserved=group.reserved,
                reservation_id=reservation.id if reservation else None,
                reservation_zone=reservation.availability_zone if reservation and group.reserved else None,
                efa_interfaces=group.efa_interfaces,
            )
        )
    storage = platform.storage
    parked = {(s.name, v.name) for s in platform.serving for v in s.variants if not v.replicas and not v.autoscaling}
    return Expectations(
        stack=config.stack,
        cluster_name=config.cluster_name,
        region=config.region,
        kubernetes_version=platform.cluster.kubernetes_version,
        profile=platform.profile,
        public_endpoint=platform.cluster.endpoint_public_access,
        groups=tuple(made),
        addons=tuple(a.name for a in addons.stack_addons(platform)),
        workload_namespace=platform.workload_namespace,
        uid=storage.uid,
        gid=storage.gid,
        volumes=tuple(storage.volume_names) if storage.enabled else (),
        zones=tuple(platform.network.availability_zones or ()),
        # A variant parked at 0 replicas (no autoscaler) serves nothing until the user starts it: not probed.
        variants=tuple(
            VariantExpect(v.serving, v.name, v.model, v.service)
            for v in serving_variants(platform)
            if (v.serving, v.name) not in parked
        ),
        training=tuple(t.name for t in platform.training),
        training_runs=tuple(_training_runs(config)),
        tensorboards=tuple(f"{t.name}-tensorboard" for t in platform.training if t.tensorboard is not None),
        autoscaler=platform.autoscaler.enabled,
        scale_down_unneeded=platform.autoscaler.scale_down_unneeded_time,
        scale_down_unneeded_s=duration_seconds(platform.autoscaler.scale_down_unneeded_time),
        gpu_operator=plan.operator,
        metrics=platform.observability.metrics == "prometheus",
        metrics_backend=platform.observability.metrics,
        dcgm_exporter=platform.observability.dcgm_exporter,
    )


def _node_price(group: Any, region: str) -> dict[str, Any]:
    """`usd_per_node_hour` and `price_basis` of one node of `group`, priced as the cost estimate prices it.

    Through `cost.group_line` with one node (min 0, max 1): the same choice of type (on-demand: the first
    listed, which a managed node group launches; spot: the dearest on-demand price, the ceiling), the same
    root volume and the same labels for a price that is another region's.
    """
    from gpuplane.components.facts import prices  # noqa: PLC0415
    from gpuplane.components.plan import cost  # noqa: PLC0415

    usage = cost.GroupUsage(
        name=group.name,
        instance_types=tuple(group.instance_types),
        capacity=group.capacity_type,
        min_size=0,
        max_size=1,
        root_volume_gib=group.resolved_disk_size_gib,
    )
    line = cost.group_line(usage, region)
    if not line.max:
        return {"usd_per_node_hour": None, "price_basis": "; ".join(line.notes)}
    bought = line.detail.removeprefix("0-1 x ")
    notes = [n for n in line.notes if not n.startswith("spot: priced")]  # "at most" in `bought` says it
    basis = "; ".join([f"{bought} plus its {group.resolved_disk_size_gib} GiB root volume", *notes])
    return {"usd_per_node_hour": line.max, "price_basis": f"{basis}; price table of {prices.table().date}"}


def _training_runs(config: StackConfig) -> list[TrainingRunExpect]:
    from gpuplane.infra import train  # noqa: PLC0415

    runs = []
    for workload in config.platform.training:
        try:
            jobset = train.build(config, workload.name, TRAINING_RUN_ID)
        except ValueError:  # a run the queue could never admit: `gpuplane render` already refuses that stack
            continue
        build = functools.partial(train.build, config, workload.name)
        runs.append(TrainingRunExpect(workload.name, jobset, _asks_for_gpus(jobset), build))
    return runs


def _asks_for_gpus(jobset: dict[str, Any]) -> bool:
    for job in jobset["spec"]["replicatedJobs"]:
        for container in job["template"]["spec"]["template"]["spec"]["containers"]:
            limits = (container.get("resources") or {}).get("limits") or {}
            if any(key.startswith("nvidia.com/") for key in limits):
                return True
    return False
