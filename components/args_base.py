"""The base of every args class and the error that names one field: shared by config and workload args.

Why its own module: `components.config` (platform args) and `components.workload_args` (serving and
training args) both build on it, and the platform args hold the workload args, so neither can own it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["FieldError", "_Args"]


class FieldError(ValueError):
    """A validation error about one named field of the model being validated.

    `infra.config` appends `field` to the model's key path, so the user sees
    `gpuplane:nodeGroups[1].minSize` rather than just the group.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class _Args(BaseModel):
    """Base: camelCase keys, unknown keys rejected, defaults validated too."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_default=True,
    )
