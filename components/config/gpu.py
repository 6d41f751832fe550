"""How a GPU group shares its GPUs (`nodeGroups[].sharing`): time-slicing, MPS or MIG."""

from __future__ import annotations

import re
from typing import Final, Literal

from pydantic import Field, field_validator, model_validator

from gpuplane.components.config.base import FieldError, _Args

MIG_PROFILE_RE: Final = re.compile(r"^all-([1-7])g\.([0-9]+)gb$")


class TimeSlicingArgs(_Args):
    """Time-slicing: each GPU is advertised `replicas` times; no memory isolation between sharers."""

    replicas: int = Field(
        ge=2,
        le=64,
        description="Pods per GPU (2-64, and no more than leave each pod 832 MiB of 90 % of the GPU's listed "
        "memory: its CUDA context and 256 MiB for TensorFlow). Required.",
    )


class MpsArgs(_Args):
    """CUDA MPS: `replicas` processes share each GPU with an equal, enforced memory share."""

    replicas: int = Field(
        ge=2,
        le=48,
        description="Pods per GPU (2-48, the MPS client limit, and no more than leave each pod 832 MiB of 90 % of "
        "the GPU's listed memory: its CUDA context and 256 MiB for TensorFlow). Required.",
    )


class MigArgs(_Args):
    """Multi-Instance GPU: hardware partitions, applied by the GPU Operator's MIG manager."""

    strategy: Literal["single", "mixed"] = Field(
        default="single",
        description="`single`: partitions appear as `nvidia.com/gpu`; `mixed`: as `nvidia.com/mig-<profile>`. "
        "Default `single`.",
    )
    profile: str = Field(
        description="MIG manager config name, e.g. `all-1g.10gb` (seven 1g.10gb slices per A100-80GB). Required."
    )

    @field_validator("profile")
    @classmethod
    def _profile(cls, value: str) -> str:
        if not MIG_PROFILE_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not a MIG config name like all-1g.10gb or all-3g.40gb")
        return value


class GpuSharingArgs(_Args):
    """How a GPU group's GPUs are shared. At most one of the three; none set means whole GPUs."""

    time_slicing: TimeSlicingArgs | None = Field(default=None, description="Time-slicing. Default off.")
    mps: MpsArgs | None = Field(default=None, description="CUDA MPS. Default off.")
    mig: MigArgs | None = Field(default=None, description="MIG partitions (MIG-capable GPUs only). Default off.")

    @model_validator(mode="after")
    def _one(self) -> GpuSharingArgs:
        chosen = [k for k, v in (("timeSlicing", self.time_slicing), ("mps", self.mps), ("mig", self.mig)) if v]
        if len(chosen) > 1:
            raise FieldError(chosen[1], f"{' and '.join(chosen)} are both set; a GPU group uses one sharing mode")
        return self

    @property
    def mode(self) -> Literal["none", "time-slicing", "mps", "mig"]:
        """The sharing mode, as the `gpuplane.io/gpu-sharing` node label says it."""
        if self.time_slicing:
            return "time-slicing"
        if self.mps:
            return "mps"
        return "mig" if self.mig else "none"
