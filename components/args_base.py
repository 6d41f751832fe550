"""The base of every args class and the error that names one field: shared by config and workload args.

Why its own module: `components.config` (platform args) and `components.workload_args` (serving and
training args) both build on it, and the platform args hold the workload args, so neither can own it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["FieldError", "FieldErrors", "_Args", "raise_all"]


class FieldError(ValueError):
    """A validation error about one named field of the model being validated.

    `infra.config` appends `field` to the model's key path, so the user sees
    `gpuplane:nodeGroups[1].minSize` rather than just the group.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class FieldErrors(ValueError):
    """Several FieldErrors found by one check: every problem in one report, not one per round.

    `infra.config` turns each into its own line with its own key path; a direct caller sees them all in
    the message.
    """

    def __init__(self, errors: Sequence[FieldError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = list(errors)


def raise_all(errors: Sequence[FieldError]) -> None:
    """Raise the one error, or all of them together; nothing when there are none."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise FieldErrors(errors)


class _Args(BaseModel):
    """Base: camelCase keys, unknown keys rejected, defaults validated too."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_default=True,
    )
