"""The node groups section of the stack config (`nodeGroups`): CPU and GPU managed node groups."""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from pydantic import Field, field_validator, model_validator

from gpuplane.components.config.base import FieldError, _Args
from gpuplane.components.config.common import Profile
from gpuplane.components.config.gpu import GpuSharingArgs
from gpuplane.components.facts import catalog
from gpuplane.manifests import versions

TaintEffect = Literal["NoSchedule", "NoExecute", "PreferNoSchedule"]
CapacityType = Literal["ON_DEMAND", "SPOT"]
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


# Kubernetes label/taint key: optional DNS-subdomain prefix, then a name of <= 63 chars.
_K8S_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_K8S_KEY_RE: Final = re.compile(rf"^([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_K8S_NAME}$")
_K8S_VALUE_RE: Final = re.compile(rf"^({_K8S_NAME})?$")
_NAME_RE: Final = re.compile(r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$")
_RESERVED_LABEL_DOMAINS: Final = ("kubernetes.io/", "k8s.io/", "eks.amazonaws.com/")


class Taint(_Args):
    """A Kubernetes node taint."""

    key: str = Field(description="Taint key, e.g. `nvidia.com/gpu`.")
    value: str = Field(default="", description="Taint value. Default empty.")
    effect: TaintEffect = Field(default="NoSchedule", description="Kubernetes taint effect. Default `NoSchedule`.")

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        if not _K8S_KEY_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not a valid Kubernetes taint key ([prefix/]name, name <= 63 chars)")
        return value

    @field_validator("value")
    @classmethod
    def _value(cls, value: str) -> str:
        if not _K8S_VALUE_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not a valid taint value (<= 63 chars, alphanumeric, '-', '_', '.')")
        return value


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
    capacity_type: CapacityType = Field(default="ON_DEMAND", description="`ON_DEMAND` or `SPOT`. Default `ON_DEMAND`.")
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
            if not _K8S_KEY_RE.fullmatch(key):
                problems.append(f"label key '{key}' is not a valid Kubernetes label key")
            elif any(key.startswith(d) or f".{d}" in key for d in _RESERVED_LABEL_DOMAINS):
                problems.append(
                    f"label key '{key}' uses a domain reserved for Kubernetes/EKS ({_RESERVED_LABEL_DOMAINS})"
                )
            if not _K8S_VALUE_RE.fullmatch(label):
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
            arch, nvidia, _ = versions.AMI_TYPES[self.ami_type]
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
                    f"({', '.join(k for k, v in versions.AMI_TYPES.items() if v[1])})",
                )
        return self

    def _check_gpu_settings(self, facts: catalog.InstanceType) -> None:
        family = versions.AMI_TYPES[self.resolved_ami_type][2]
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
            return versions.AMI_AL2023_ARM_NVIDIA if arm else versions.AMI_AL2023_X86_NVIDIA
        return versions.AMI_AL2023_ARM_STANDARD if arm else versions.AMI_AL2023_X86_STANDARD

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
    def all_taints(self) -> list[Taint]:
        """User taints plus the GPU taint of a GPU group (unless switched off), without duplicates."""
        taints = list(self.taints)
        if self.kind == "gpu" and self.gpu_taint and all(t.key != versions.GPU_RESOURCE for t in taints):
            taints.insert(0, Taint(key=versions.GPU_RESOURCE, value="true", effect="NoSchedule"))
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
