"""The base of every args class and the error that names one field: shared by config and workload args.

Why its own module: the platform args (`config.platform`) and the workload args (`config.workloads`, serving
and training) both build on it, and the platform args hold the workload args, so neither can own it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
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


def _wants_number(annotation: Any) -> bool:
    """Whether a field's type takes a number (int or float, alone or in a union), and never a boolean."""
    if annotation in (int, float):
        return True
    args = get_args(annotation)
    if get_origin(annotation) is Annotated:
        return _wants_number(args[0])
    return bool(args) and bool not in args and any(_wants_number(a) for a in args if a is not type(None))


def _boolean_for_number(value: Any, annotation: Any) -> bool:
    """A boolean where the type takes a number, at the top or inside a list or mapping of numbers."""
    if isinstance(value, bool):
        return _wants_number(annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (list, tuple, set, frozenset) and args and isinstance(value, list | tuple):
        return any(_boolean_for_number(item, args[0]) for item in value)
    if origin is dict and len(args) == 2 and isinstance(value, dict):
        return any(_boolean_for_number(item, args[1]) for item in value.values())
    return False


class _Args(BaseModel):
    """Base: camelCase keys, unknown keys rejected, defaults validated too, no boolean taken for a number."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_default=True,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _strict_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic takes True as 1 for an int field; `gpus: yes` (YAML's boolean) must not become one GPU.
        field = cls.model_fields.get(info.field_name or "")
        if field is not None and _boolean_for_number(value, field.annotation):
            raise ValueError(
                f"{value!r} is a boolean; a number is expected here (YAML reads yes/no/true/false/on/off as booleans)"
            )
        return value
