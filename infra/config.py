"""Stack config: read it (from a stack file or the Pulumi engine), validate it, and explain what is wrong.

Why this lives in `infra`: components take typed args and never read config (DESIGN.md). This module is
the one place that knows config comes in `gpuplane:`-namespaced keys, as YAML in `stacks/` or as strings
from the engine, and turns pydantic's errors into messages that name the key as the user wrote it.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from gpuplane.components import partition
from gpuplane.components.config import FieldError, PlatformArgs

NAMESPACE = "gpuplane"
PROJECT = "gpuplane"
STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"


class ConfigError(Exception):
    """Invalid stack config: one line per problem, each naming the key, the value and what is allowed."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class StackConfig:
    """A validated stack: who it is, where it goes, and the typed platform args."""

    project: str
    stack: str
    region: str
    platform: PlatformArgs

    @property
    def cluster_name(self) -> str:
        """The EKS cluster name (and prefix of physical names)."""
        return self.platform.cluster_name or f"{self.project}-{self.stack}"


def stack_file(stack: str, stacks_dir: Path = STACKS_DIR) -> Path:
    """Path of a stack's config file."""
    return stacks_dir / f"Pulumi.{stack}.yaml"


def read_stack_file(stack: str, stacks_dir: Path = STACKS_DIR) -> dict[str, Any]:
    """The `config:` map of `stacks/Pulumi.<stack>.yaml`, or ConfigError if it is missing or not YAML."""
    path = stack_file(stack, stacks_dir)
    if not path.is_file():
        known = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in stacks_dir.glob("Pulumi.*.yaml"))
        raise ConfigError([f"stack '{stack}': no file {path}; known stacks: {', '.join(known) or 'none'}"])
    try:
        document = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError([f"{path}: not valid YAML: {exc}"]) from exc
    config = document.get("config", {}) if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise ConfigError([f"{path}: 'config' must be a mapping of keys to values"])
    return config


def from_engine_strings(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Config as the Pulumi engine hands it over (structured values as JSON strings), decoded."""
    decoded: dict[str, Any] = {}
    for key, value in raw.items():
        decoded[key] = value
        if isinstance(value, str) and value[:1] in ("{", "["):
            with contextlib.suppress(json.JSONDecodeError):
                decoded[key] = json.loads(value)
    return decoded


def parse(raw: Mapping[str, Any], stack: str, project: str = PROJECT) -> StackConfig:
    """Validate a stack's config map (`namespace:key` -> value). Raises ConfigError listing every problem."""
    problems: list[str] = []
    ours: dict[str, Any] = {}
    for key, value in raw.items():
        namespace, _, name = str(key).partition(":")
        if namespace == NAMESPACE:
            ours[name] = value
    region = raw.get("aws:region")
    regions = eks_regions()
    if not isinstance(region, str) or not region:
        problems.append("aws:region: is not set; set it to the AWS region of the stack, e.g. us-west-2")
    elif region not in regions:
        problems.append(
            f"aws:region: '{region}' is not a region where EKS is offered; allowed: {', '.join(sorted(regions))}"
        )
    platform: PlatformArgs | None = None
    try:
        platform = PlatformArgs.model_validate(ours)
    except ValidationError as exc:
        problems.extend(format_errors(exc))
    if platform is not None and isinstance(region, str):
        azs = platform.network.availability_zones or []
        wrong = [az for az in azs if az[:-1] != region]
        if wrong:
            problems.append(f"{NAMESPACE}:network.availabilityZones: {wrong} are not in the stack's region {region}")
        problems.extend(_partition_problems(platform, region))
    if problems or platform is None or not isinstance(region, str):
        raise ConfigError(problems)
    return StackConfig(project=project, stack=stack, region=region, platform=platform)


def _partition_problems(platform: PlatformArgs, region: str) -> list[str]:
    """ARNs in the config must be of the region's partition (`arn:aws-cn:` in cn-*), or EKS refuses them."""
    try:
        expected = partition.of_region(region).id
    except ValueError:
        return []  # the region itself is already reported
    return [
        f"{NAMESPACE}:cluster.adminPrincipals[{index}]: '{arn}' is not in the partition of {region}; "
        f"write it as arn:{expected}:..."
        for index, arn in enumerate(platform.cluster.admin_principals)
        if arn.split(":")[1] != expected
    ]


@functools.cache
def eks_regions() -> frozenset[str]:
    """Regions where EKS is offered in the aws, aws-cn and aws-us-gov partitions (botocore's endpoint data)."""
    return partition.service_regions("eks")


def load(stack: str, stacks_dir: Path = STACKS_DIR) -> StackConfig:
    """Read and validate `stacks/Pulumi.<stack>.yaml`."""
    return parse(read_stack_file(stack, stacks_dir), stack)


def format_errors(exc: ValidationError) -> list[str]:
    """One line per pydantic error: `gpuplane:<key path>: <what is wrong> (got <value>)`."""
    lines = []
    for error in exc.errors():
        loc: list[str | int] = list(error["loc"])
        cause = error.get("ctx", {}).get("error")
        shown_value = True
        if isinstance(cause, FieldError):
            loc.extend(cause.field.split("."))
            message = cause.message
        elif isinstance(cause, ValueError):
            message = str(cause)
        elif error["type"] == "extra_forbidden":
            allowed = _allowed_keys(loc[:-1])
            message = f"unknown key; allowed keys here: {', '.join(allowed)}"
        elif error["type"] == "missing":
            message = "is required"
            shown_value = False
        else:
            message = error["msg"]
        value = error.get("input")
        suffix = ""
        if (
            shown_value
            and not isinstance(value, dict | list)
            and repr(value) not in message
            and str(value) not in message
        ):
            suffix = f" (got {value!r})"
        lines.append(f"{NAMESPACE}:{_key_path(loc)}: {message}{suffix}")
    return lines


def _key_path(loc: list[str | int]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(top level)"


def _allowed_keys(loc: list[str | int]) -> list[str]:
    """The camelCase keys a model at `loc` (below PlatformArgs) accepts."""
    model: type[BaseModel] = PlatformArgs
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        inner = _model_in(field.annotation) if field is not None else None
        if inner is None:
            break
        model = inner
    return sorted(f.alias or n for n, f in model.model_fields.items())


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None
