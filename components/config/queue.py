"""QueueArgs: the training queue's settings (stack key `gpuplane:queue`); used only when training is declared."""

from __future__ import annotations

from typing import Final

from pydantic import Field, field_validator

from gpuplane.components.config.base import _Args
from gpuplane.components.config.common import duration_seconds

# A GPU node scaled from zero: EC2 launch and join (3-5 min), the device plugin registering the GPUs (about
# 1 min), pulling the TensorFlow GPU image (several GB: minutes more). Below this the queue would evict every
# run that had to wait for a GPU node, however healthy.
MIN_PODS_READY_SECONDS: Final = 10 * 60


class QueueArgs(_Args):
    """The training queue (Kueue): admission of whole runs, one scale-up per run (docs/workloads.md)."""

    max_gpus: int | None = Field(
        default=None,
        ge=1,
        le=100000,
        description="Most GPUs (allocatable units) admitted runs hold at once on each GPU node group (Kueue's quotas "
        "are per node group). Default: what the group holds at its maxSize.",
    )
    pods_ready_timeout: str = Field(
        default="40m",
        description="How long an admitted run may take until all its pods are ready before Kueue evicts and requeues "
        "it (`waitForPodsReady`; releases the nodes of a partial fill). At least 10m (a GPU node's boot from zero and "
        "the image pull), and at least 10m more than any training dataImport's timeoutMinutes (the roles start after "
        "it). Default `40m` (the default import timeout, 30m, plus 10m).",
    )
    requeue_limit: int = Field(
        default=3,
        ge=0,
        le=100,
        description="Evictions for not becoming ready before a run is deactivated (each retry boots GPU nodes again; "
        "`gpuplane train --rerun` submits it anew). Default 3.",
    )

    @field_validator("pods_ready_timeout")
    @classmethod
    def _timeout(cls, value: str) -> str:
        if duration_seconds(value) < MIN_PODS_READY_SECONDS:
            raise ValueError(
                f"'{value}' is shorter than 10m: a GPU node scaled from zero (launch, join, device plugin, image "
                "pull) takes minutes, and every run that waited for one would be evicted"
            )
        return value
