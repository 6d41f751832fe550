"""The node groups section of the stack config (`nodeGroups`): CPU and GPU managed node groups."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Final, Literal

from pydantic import Field, field_validator, model_validator

from gpuplane.components.config.base import FieldError, _Args
from gpuplane.components.config.common import Profile
from gpuplane.components.config.gpu import GpuSharingArgs
from gpuplane.components.config.node_repair import NodeRepairArgs
from gpuplane.components.facts import catalog, efa
from gpuplane.components.facts.name_limits import LABEL_VALUE_RE, QUALIFIED_NAME_RE
from gpuplane.manifests import wellknown

TaintEffect = Literal["NoSchedule", "NoExecute", "PreferNoSchedule"]
# botocore's eks model, shape CapacityTypes (CreateNodegroup `capacityType`); changing it replaces the group.
CapacityType = Literal["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"]
# botocore's ec2 model, shape CapacityReservationPreference (launch template CapacityReservationSpecification).
ReservationPreference = Literal["open", "none", "capacity-reservations-only"]
AmiType = Literal[
    "AL2023_x86_64_STANDARD",
    "AL2023_ARM_64_STANDARD",
    "AL2023_x86_64_NVIDIA",
    "AL2023_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64",
    "BOTTLEROCKET_ARM_64",
    "BOTTLEROCKET_x86_64_NVIDIA",
    "BOTTLEROCKET_ARM_64_NVIDIA",
]


_NAME_RE: Final = re.compile(r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$")
_RESERVED_LABEL_DOMAINS: Final = ("kubernetes.io/", "k8s.io/", "eks.amazonaws.com/")
# EC2 ids: `cr-` and 8 or 17 hex digits (Capacity Blocks are Capacity Reservations and share the prefix).
_RESERVATION_ID_RE: Final = re.compile(r"^cr-([0-9a-f]{8}|[0-9a-f]{17})$")
# A Capacity Reservation group is an AWS Resource Groups group (EC2 user guide, "Capacity Reservation groups").
_RESOURCE_GROUP_ARN_RE: Final = re.compile(
    r"^arn:aws[a-z-]*:resource-groups:[a-z0-9-]+:\d{12}:group/[A-Za-z0-9_.-]{1,300}$"
)
_AZ_RE: Final = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$")
# botocore's ec2 model, shape UsageClassType: how EC2 sells a type (DescribeInstanceTypes SupportedUsageClasses).
CAPACITY_BLOCK_USAGE_CLASS: Final = "capacity-block"


class Taint(_Args):
    """A Kubernetes node taint."""

    key: str = Field(description="Taint key, e.g. `nvidia.com/gpu`.")
    value: str = Field(default="", description="Taint value. Default empty.")
    effect: TaintEffect = Field(default="NoSchedule", description="Kubernetes taint effect. Default `NoSchedule`.")

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        if not QUALIFIED_NAME_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not a valid Kubernetes taint key ([prefix/]name, name <= 63 chars)")
        return value

    @field_validator("value")
    @classmethod
    def _value(cls, value: str) -> str:
        if not LABEL_VALUE_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not a valid taint value (<= 63 chars, alphanumeric, '-', '_', '.')")
        return value


class CapacityReservationArgs(_Args):
    """Reserved EC2 capacity a group launches into: a Capacity Block for ML or an On-Demand Capacity Reservation.

    What render cannot look up offline (the reservation's AZ, its instance count, a block's end) is written
    here by the user; `gpuplane preflight` reads the reservation with the user's credentials and refuses a
    mismatch with these values.
    """

    id: str | None = Field(
        default=None,
        description="The reservation's id (`cr-...`): the Capacity Block of a `CAPACITY_BLOCK` group (required "
        "there), or an ODCR an `ON_DEMAND` group targets. Default none.",
    )
    resource_group_arn: str | None = Field(
        default=None,
        description="`ON_DEMAND` groups: target a Capacity Reservation group (AWS Resource Groups ARN) instead of "
        "one reservation. Default none.",
    )
    preference: ReservationPreference | None = Field(
        default=None,
        description="`ON_DEMAND` groups without a target: `open` (use any matching open ODCR), `none`, or "
        "`capacity-reservations-only` (launch only into reservations, fail otherwise). Default none (EC2's `open`).",
    )
    availability_zone: str | None = Field(
        default=None,
        description="The reservation's AZ; must be one of `network.availabilityZones`. The group's nodes are "
        "placed in that AZ's private subnet only. Required with `id`. Default none.",
    )
    instance_count: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="How many instances the reservation holds; `maxSize` may not exceed it. Required for "
        "`CAPACITY_BLOCK`. Default none.",
    )
    end_time: str | None = Field(
        default=None,
        description="When the reservation ends (ISO 8601 with a zone, e.g. `2026-12-01T11:30:00Z`); render states "
        "what happens then. Default none.",
    )

    @field_validator("id")
    @classmethod
    def _id(cls, value: str | None) -> str | None:
        if value is not None and not _RESERVATION_ID_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not a Capacity Reservation id (cr- and 8 or 17 hex digits)")
        return value

    @field_validator("resource_group_arn")
    @classmethod
    def _group_arn(cls, value: str | None) -> str | None:
        if value is not None and not _RESOURCE_GROUP_ARN_RE.fullmatch(value):
            raise ValueError(
                f"'{value}' is not a resource group ARN "
                "(arn:<partition>:resource-groups:<region>:<account>:group/<name>)"
            )
        return value

    @field_validator("availability_zone")
    @classmethod
    def _az(cls, value: str | None) -> str | None:
        if value is not None and not _AZ_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not an availability zone name (e.g. us-east-2a)")
        return value

    @field_validator("end_time")
    @classmethod
    def _end(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"'{value}' is not an ISO 8601 time (e.g. 2026-12-01T11:30:00Z)") from None
        if parsed.tzinfo is None:
            raise ValueError(f"'{value}' has no time zone; add one (Z for UTC)")
        return value

    @model_validator(mode="after")
    def _one_option(self) -> CapacityReservationArgs:
        # EC2 takes one option at a time: a preference, or a target (one reservation, or a group).
        chosen = [k for k, v in (("id", self.id), ("resourceGroupArn", self.resource_group_arn)) if v is not None]
        if self.preference is not None:
            chosen.append("preference")
        if len(chosen) > 1:
            raise FieldError(
                chosen[1],
                f"set together with {chosen[0]}; EC2 takes one option at a time (a preference, one reservation id, "
                "or one reservation group)",
            )
        if self.availability_zone is not None and self.id is None:
            raise FieldError(
                "availabilityZone", "names the AZ of a reservation given by id; set id, or remove availabilityZone"
            )
        if self.id is not None and self.availability_zone is None:
            raise FieldError(
                "availabilityZone",
                f"is required with id '{self.id}': a reservation lives in one AZ and the group's nodes must launch "
                "there (preflight checks it against the reservation)",
            )
        return self

    @property
    def end(self) -> datetime | None:
        """`end_time` parsed."""
        return None if self.end_time is None else datetime.fromisoformat(self.end_time)


class NodeGroupArgs(_Args):
    """One EKS managed node group (CPU or GPU)."""

    name: str = Field(description="Group name, lowercase letters, digits and '-', 2-32 chars. Required.")
    kind: Literal["cpu", "gpu"] = Field(
        default="cpu",
        description="`gpu` groups must use GPU instance types and get GPU labels/taints. Default `cpu`.",
    )
    instance_types: Annotated[list[str], Field(min_length=1)] = Field(
        description="EC2 instance types (same architecture; for GPU groups the same GPU model and count). Required."
    )
    ami_type: AmiType | None = Field(
        default=None,
        description="EKS AMI type. Default: derived from the instance types (AL2023 standard or NVIDIA, x86_64/ARM).",
    )
    capacity_type: CapacityType = Field(
        default="ON_DEMAND",
        description="`ON_DEMAND`, `SPOT`, or `CAPACITY_BLOCK` (a GPU group launched into an EC2 Capacity Block for "
        "ML, named in `capacityReservation`). Default `ON_DEMAND`.",
    )
    min_size: int = Field(default=1, ge=0, le=1000, description="Minimum nodes. Default 1.")
    max_size: int = Field(default=3, ge=1, le=1000, description="Maximum nodes. Default 3.")
    desired_size: int | None = Field(
        default=None, description="Initial nodes (then owned by the cluster-autoscaler). Default: `minSize`."
    )
    disk_size_gib: int | None = Field(
        default=None,
        ge=20,
        le=16384,
        description="Root volume size (gp3, encrypted). Default 50 (GPU groups: 100).",
    )
    labels: dict[str, str] = Field(default_factory=dict, description="Extra Kubernetes node labels. Default none.")
    taints: list[Taint] = Field(default_factory=list, description="Extra node taints. Default none.")
    gpu_taint: bool = Field(
        default=True,
        description="GPU groups only: add the `nvidia.com/gpu=true:NoSchedule` taint so only GPU pods land there. "
        "Default true.",
    )
    max_unavailable_percentage: int = Field(
        default=33, ge=1, le=100, description="Share of nodes replaced at once during updates. Default 33."
    )
    driver: Literal["ami", "operator"] = Field(
        default="ami",
        description="GPU groups: `ami` (the AMI's driver, gpuplane installs the device plugin) or `operator` (the "
        "NVIDIA GPU Operator runs plugin, GFD, MIG manager and DCGM on the AMI's driver). Default `ami`.",
    )
    sharing: GpuSharingArgs = Field(
        default_factory=GpuSharingArgs,
        description="GPU groups: `timeSlicing`, `mps` or `mig` sharing. Default: none (whole GPUs).",
    )
    # --- reserved capacity and EFA: checked in `_check_reservation` and `_check_efa` ---------------
    capacity_reservation: CapacityReservationArgs | None = Field(
        default=None,
        description="Reserved capacity: the Capacity Block of a `CAPACITY_BLOCK` group, or an ODCR preference or "
        "target of an `ON_DEMAND` group. Default none.",
    )
    efa: bool = Field(
        default=False,
        description="GPU groups: one Elastic Fabric Adapter interface per network card (NCCL over EFA for "
        "multi-node training) and the EFA device plugin on these nodes. Only on types with EFA. The nodes use one "
        "private subnet (EFA traffic stays in its subnet): the reservation's AZ, else the network's first AZ. "
        "Default false.",
    )
    placement_group: bool | None = Field(
        default=None,
        description="EFA groups: launch into a cluster placement group of their own. Default: on for EFA groups "
        "without a reservation target, off with one (a reservation not made in that placement group cannot "
        "serve it: launches fail with InsufficientInstanceCapacity).",
    )
    repair: NodeRepairArgs = Field(
        default_factory=NodeRepairArgs,
        description="EKS node auto repair (the API's `nodeRepairConfig`). Default on: one node at a time, paused "
        "when more than a fifth of the group is unhealthy; GPU groups replace nodes with GPU failures after 10 "
        "minutes. See NodeRepairArgs.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME_RE.fullmatch(value):
            raise ValueError(
                f"'{value}' must be 2-32 chars of lowercase letters, digits and '-', starting with a letter"
            )
        return value

    @field_validator("instance_types")
    @classmethod
    def _types(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"{value} lists an instance type twice")
        for name in value:
            catalog.lookup(name)  # raises ValueError naming the type and what is allowed
        return value

    @field_validator("labels")
    @classmethod
    def _labels(cls, value: dict[str, str]) -> dict[str, str]:
        # Every bad label in one message: a user fixing three labels should not need three rounds.
        problems: list[str] = []
        for key, label in value.items():
            if not QUALIFIED_NAME_RE.fullmatch(key):
                problems.append(f"label key '{key}' is not a valid Kubernetes label key")
            elif any(key.startswith(d) or f".{d}" in key for d in _RESERVED_LABEL_DOMAINS):
                problems.append(
                    f"label key '{key}' uses a domain reserved for Kubernetes/EKS ({_RESERVED_LABEL_DOMAINS})"
                )
            if not LABEL_VALUE_RE.fullmatch(label):
                problems.append(f"label '{key}' has invalid value '{label}' (<= 63 chars, alphanumeric, '-', '_', '.')")
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @model_validator(mode="after")
    def _consistent(self) -> NodeGroupArgs:
        if self.min_size > self.max_size:
            raise FieldError("minSize", f"{self.min_size} is greater than maxSize {self.max_size}")
        if self.desired_size is not None and not self.min_size <= self.desired_size <= self.max_size:
            raise FieldError(
                "desiredSize",
                f"{self.desired_size} is outside [minSize, maxSize] = [{self.min_size}, {self.max_size}]",
            )
        facts = [catalog.lookup(t) for t in self.instance_types]
        arches = sorted({f.architecture for f in facts})
        if len(arches) > 1:
            raise FieldError("instanceTypes", f"{self.instance_types} mix architectures {arches}; use one")
        if self.kind == "gpu":
            no_gpu = [f.name for f in facts if not f.has_gpu]
            if no_gpu:
                raise FieldError(
                    "instanceTypes", f"{no_gpu} have no GPU but kind is 'gpu'; use GPU types (g5, g6, p5...)"
                )
            gpus = sorted({f"{f.gpu_count}x {f.gpu_model}" for f in facts})
            if len(gpus) > 1:
                raise FieldError(
                    "instanceTypes",
                    f"{self.instance_types} mix GPU models or counts {gpus}; one group needs one GPU shape "
                    "(the scheduler and autoscaler see one)",
                )
            self._check_gpu_settings(facts[0])
        else:
            with_gpu = [f.name for f in facts if f.has_gpu]
            if with_gpu:
                raise FieldError("instanceTypes", f"{with_gpu} have GPUs but kind is 'cpu'; set kind: gpu")
            for key in ("driver", "sharing"):
                if key in self.model_fields_set:
                    raise FieldError(key, "is a GPU group setting but kind is 'cpu'")
        if self.ami_type is not None:
            arch, nvidia, _ = wellknown.AMI_TYPES[self.ami_type]
            if arch != arches[0]:
                raise FieldError("amiType", f"'{self.ami_type}' is for {arch} but the instance types are {arches[0]}")
            if self.kind == "cpu" and nvidia:
                raise FieldError("amiType", f"'{self.ami_type}' does not fit a cpu group; use a non-NVIDIA AMI type")
            if self.kind == "gpu" and not nvidia:
                # The GPU Operator's driver containers do not support Amazon Linux: on EKS it runs with
                # the AMI's driver (GPU Operator docs, "Amazon EKS"), so every GPU group needs an NVIDIA AMI,
                # whatever the driver mode.
                raise FieldError(
                    "amiType",
                    f"'{self.ami_type}' has no NVIDIA driver; use an NVIDIA AMI type "
                    f"({', '.join(k for k, v in wellknown.AMI_TYPES.items() if v[1])})",
                )
        return self

    @model_validator(mode="after")
    def _reserved_capacity_and_efa(self) -> NodeGroupArgs:
        self._check_reservation()
        self._check_efa()
        return self

    def _check_reservation(self) -> None:
        """A Capacity Block's constraints (EKS user guide, "Capacity Blocks for ML" with managed node groups).

        One explicit instance type (the block reserves one), subnets of the block's AZ only (cross-checked
        against `network` in plan/cross_checks.py), desired size 0 (the block may not be active when the
        group is created or upgraded; EKS asks for 0 on upgrades) and at most the block's instance count.
        """
        reservation = self.capacity_reservation
        if self.capacity_type == "SPOT":
            if reservation is not None:
                raise FieldError(
                    "capacityReservation", "does not apply to SPOT groups; use ON_DEMAND or CAPACITY_BLOCK"
                )
            return
        if self.capacity_type == "ON_DEMAND":
            if reservation is not None and reservation.id is not None and reservation.instance_count is not None:
                self._check_within_count(reservation.instance_count, "the reservation")
            return
        if self.kind != "gpu":
            raise FieldError(
                "capacityType", "'CAPACITY_BLOCK' is for GPU groups (Capacity Blocks reserve GPU instances)"
            )
        if len(self.instance_types) != 1:
            raise FieldError(
                "instanceTypes",
                f"{self.instance_types} lists {len(self.instance_types)} types; a Capacity Block reserves one "
                "instance type: list only the block's type",
            )
        block_type = self.instance
        if CAPACITY_BLOCK_USAGE_CLASS not in block_type.usage_classes:
            sold = sorted(n for n, t in catalog.CATALOG.items() if CAPACITY_BLOCK_USAGE_CLASS in t.usage_classes)
            raise FieldError(
                "capacityType",
                f"'CAPACITY_BLOCK' with {block_type.name}, which EC2 sells as "
                f"{', '.join(sorted(block_type.usage_classes))} only (DescribeInstanceTypes SupportedUsageClasses); "
                f"Capacity Blocks exist for: {', '.join(sold)}",
            )
        if reservation is None or reservation.id is None:
            raise FieldError(
                "capacityReservation.id",
                "is required with capacityType CAPACITY_BLOCK: the block's reservation id (cr-...)",
            )
        if reservation.instance_count is None:
            raise FieldError(
                "capacityReservation.instanceCount",
                "is required with capacityType CAPACITY_BLOCK: how many instances the block holds",
            )
        if self.resolved_desired_size != 0:
            raise FieldError(
                "desiredSize",
                f"{self.resolved_desired_size} with capacityType CAPACITY_BLOCK; use 0 (with minSize 0): the block "
                "may not be active when the group is created or upgraded, and the autoscaler scales it up for "
                "pending pods",
            )
        self._check_within_count(reservation.instance_count, "the Capacity Block")

    def _check_within_count(self, count: int, what: str) -> None:
        if self.max_size > count:
            raise FieldError(
                "maxSize",
                f"{self.max_size} exceeds capacityReservation.instanceCount {count}: {what} holds {count} "
                f"instance(s); use maxSize <= {count}",
            )

    def _check_efa(self) -> None:
        """EFA only on GPU types that have it, with one interface layout the launch template can give all types."""
        if not self.efa:
            if self.placement_group is not None:
                raise FieldError("placementGroup", "applies to EFA groups only; set efa: true or remove it")
            return
        if self.kind != "gpu":
            raise FieldError("efa", "is a GPU group setting but kind is 'cpu'")
        for name in self.instance_types:
            if name not in efa.EFA:
                raise FieldError(
                    "efa",
                    f"{name} has no EFA (DescribeInstanceTypes: EfaSupported false, 0 EFA interfaces); GPU types "
                    "with EFA (interfaces per node): "
                    f"{', '.join(f'{t} ({efa.EFA[t]})' for t in efa.efa_types())}",
                )
        counts = {name: efa.EFA[name] for name in self.instance_types}
        if len(set(counts.values())) > 1:
            raise FieldError(
                "instanceTypes",
                f"EFA interfaces per node differ {counts}; the launch template gives every node the same interfaces: "
                "use types with the same number of network cards",
            )
        layouts = {name: efa.layout_for(name) for name in self.instance_types}
        if len(set(layouts.values())) > 1:
            cards = {
                name: ",".join(f"{i.network_card_index}:{i.interface_type}" for i in layout)
                for name, layout in layouts.items()
            }
            raise FieldError(
                "instanceTypes",
                f"EFA interface layouts differ ({cards}, card:type); the launch template gives every node the same "
                "interfaces: use types whose network cards take the same interface types",
            )
        reservation = self.capacity_reservation
        targeted = reservation is not None and (reservation.id or reservation.resource_group_arn)
        if self.placement_group and targeted:
            raise FieldError(
                "placementGroup",
                "true with a reservation target: a reservation not made in this placement group cannot serve its "
                "launches (InsufficientInstanceCapacity); remove placementGroup",
            )

    def _check_gpu_settings(self, facts: catalog.InstanceType) -> None:
        family = wellknown.AMI_TYPES[self.resolved_ami_type][2]
        if self.driver == "operator" and family == "bottlerocket":
            raise FieldError(
                "driver",
                f"'operator' does not work on Bottlerocket ({self.resolved_ami_type}): it ships its own driver and "
                "device plugin; use driver: ami, or an AL2023 AMI type",
            )
        if self.sharing.mig is not None:
            if not facts.mig_capable:
                raise FieldError(
                    "sharing.mig",
                    f"{facts.gpu_model} ({facts.name}) does not support MIG; MIG-capable: "
                    f"{', '.join(sorted(catalog.MIG_CAPABLE_GPUS))} (p4d, p4de, p5, p5e, p5en, p6)",
                )
            if self.driver != "operator":
                raise FieldError(
                    "sharing.mig", "needs driver: operator (the GPU Operator's MIG manager partitions the GPUs)"
                )
        if family == "bottlerocket" and self.sharing.mode != "none":
            raise FieldError(
                "sharing",
                "Bottlerocket runs its own device plugin, configured through its settings API, not by gpuplane; "
                "use an AL2023 NVIDIA AMI type for shared GPUs",
            )
        shared = self.sharing.time_slicing or self.sharing.mps
        if shared is not None:
            # Each pod's share of the GPU holds its CUDA context besides TensorFlow's budget (catalog).
            # Counted on the least memory the driver may report of the GPU.
            unit = catalog.CUDA_CONTEXT_RESERVE_MIB + catalog.MIN_SHARED_UNIT_BUDGET_MIB
            reported = int(catalog.reported_gpu_memory_floor_mib(facts))
            most = reported // unit
            if shared.replicas > most:
                key = "sharing.timeSlicing.replicas" if self.sharing.time_slicing else "sharing.mps.replicas"
                raise FieldError(
                    key,
                    f"{shared.replicas} pods per {facts.gpu_model} (about {reported} MiB usable of "
                    f"{facts.gpu_memory_mib}) leave each {reported // shared.replicas} MiB, of which its CUDA context "
                    f"takes {catalog.CUDA_CONTEXT_RESERVE_MIB}; allowed here: at most {most}, so that each keeps "
                    f"{catalog.MIN_SHARED_UNIT_BUDGET_MIB} MiB for TensorFlow",
                )

    # --- derived facts (pure; used by the NodeGroup component and the renderer) ---------------------

    @property
    def architecture(self) -> catalog.Architecture:
        """CPU architecture shared by the group's instance types."""
        return catalog.lookup(self.instance_types[0]).architecture

    @property
    def instance(self) -> catalog.InstanceType:
        """Catalog facts of the first instance type (the group's GPU shape is uniform)."""
        return catalog.lookup(self.instance_types[0])

    @property
    def resolved_ami_type(self) -> str:
        """The explicit AMI type, or the AL2023 one that fits the architecture and GPU."""
        if self.ami_type is not None:
            return self.ami_type
        arm = self.architecture == "arm64"
        if self.kind == "gpu":
            return wellknown.AMI_AL2023_ARM_NVIDIA if arm else wellknown.AMI_AL2023_X86_NVIDIA
        return wellknown.AMI_AL2023_ARM_STANDARD if arm else wellknown.AMI_AL2023_X86_STANDARD

    @property
    def resolved_desired_size(self) -> int:
        """Desired size, defaulting to the minimum."""
        return self.min_size if self.desired_size is None else self.desired_size

    @property
    def resolved_disk_size_gib(self) -> int:
        """Root volume size; GPU AMIs and CUDA images need more room."""
        if self.disk_size_gib is not None:
            return self.disk_size_gib
        return 100 if self.kind == "gpu" else 50

    @property
    def reserved(self) -> bool:
        """Whether the group launches into capacity reserved for it (a Capacity Block, or an ODCR target)."""
        reservation = self.capacity_reservation
        if self.capacity_type == "CAPACITY_BLOCK":
            return True
        return reservation is not None and (reservation.id is not None or reservation.resource_group_arn is not None)

    @property
    def efa_interfaces(self) -> int:
        """EFA interfaces per node (the `vpc.amazonaws.com/efa` a node advertises); 0 without EFA."""
        return efa.EFA[self.instance_types[0]] if self.efa else 0

    @property
    def resolved_placement_group(self) -> bool:
        """Whether the group gets a cluster placement group: EFA groups without a reservation target."""
        if self.placement_group is not None:
            return self.placement_group
        return self.efa and not self.reserved

    @property
    def all_taints(self) -> list[Taint]:
        """User taints plus the GPU taint of a GPU group (unless switched off), without duplicates."""
        taints = list(self.taints)
        gpu_taint = wellknown.GPU_TAINT
        if self.kind == "gpu" and self.gpu_taint and all(t.key != gpu_taint.key for t in taints):
            taints.insert(0, Taint(key=gpu_taint.key, value=gpu_taint.value, effect=gpu_taint.effect))
        return taints


def default_node_groups(profile: Profile) -> list[NodeGroupArgs]:
    """The node groups a stack gets when its config lists none."""
    if profile == "prod":
        return [
            NodeGroupArgs(name="system", instance_types=["m6i.xlarge"], min_size=2, max_size=4),
            NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g5.xlarge"], min_size=1, max_size=4),
        ]
    return [
        NodeGroupArgs(name="system", instance_types=["m6i.large"], min_size=1, max_size=3),
        NodeGroupArgs(
            name="gpu",
            kind="gpu",
            instance_types=["g5.xlarge", "g5.2xlarge"],
            capacity_type="SPOT",
            min_size=0,
            max_size=2,
        ),
    ]


def blocks_scheduling(group: NodeGroupArgs) -> bool:
    """Whether a taint keeps pods without a toleration (system pods) off the group."""
    return any(t.effect in ("NoSchedule", "NoExecute") for t in group.all_taints)
