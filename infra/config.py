"""Stack config: read it (from a stack file or the Pulumi engine), validate it, and explain what is wrong.

Why this lives in `infra`: components take typed args and never read config (docs/architecture.md, "Layout").
This module is the one place that knows config comes in `gpuplane:`-namespaced keys, as YAML in `stacks/` or as strings
from the engine, and turns pydantic's errors into messages that name the key as the user wrote it.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from gpuplane.components.config import FieldError, PlatformArgs
from gpuplane.components.config.base import FieldErrors
from gpuplane.components.config.platform import with_profile_sections
from gpuplane.components.facts import partition
from gpuplane.components.plan import cross_checks
from gpuplane.infra import limits, stackyaml
from gpuplane.infra.stackyaml import QUOTED_LIMIT
from gpuplane.infra.untrusted import shown
from gpuplane.manifests import lifecycle

NAMESPACE = "gpuplane"
PROJECT = "gpuplane"
STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"
# Bounds on what a stack file may make us read (infra/stackyaml.py).
MAX_FILE_BYTES = stackyaml.MAX_FILE_BYTES
MAX_YAML_NODES = stackyaml.MAX_YAML_NODES
# Keys a Pulumi stack file holds at its top level (the engine's `workspace.ProjectStack`).
STACK_FILE_KEYS = frozenset({"config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment"})
# Namespaces a typo is checked against (`gpuplan:`, `aws_:`): a close miss is refused, anything else is
# another provider's config and left alone.
KNOWN_NAMESPACES = (NAMESPACE, "aws", "kubernetes", "pulumi")
# A stack name part as the engine takes it (`tokens.ValidateStackName`): letters, digits, `-`, `_`, `.`.
_STACK_PART = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


class ConfigError(Exception):
    """Invalid stack config: one line per problem, each naming the key, the value and what is allowed."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class InvalidConfigExit(SystemExit):
    """How a Pulumi program ends on invalid stack config: exit status 2, the problems kept for whoever runs it.

    Under the engine it is an ordinary exit 2 after the program printed the problems. `gpuplane render` of a
    program (one's own copy of `infra/__main__.py` included) reads `problems` and reports them as it reports
    its own config's: with the stack file's name and "Nothing was rendered", and without the program's print.
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__(2)
        self.problems = problems


@dataclass(frozen=True)
class StackConfig:
    """A validated stack: who it is, where it goes, and the typed platform args."""

    project: str
    stack: str
    region: str
    platform: PlatformArgs
    profile: str | None = None
    assume_roles: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()  # what renders but cannot work once deployed (`cross_checks.config_warnings`)

    @property
    def cluster_name(self) -> str:
        """The EKS cluster name (and prefix of physical names)."""
        return self.platform.cluster_name or f"{self.project}-{self.stack}"


@dataclass(frozen=True)
class Project:
    """A Pulumi project as the engine finds it: `Pulumi.yaml`'s folder, name, stack folder, main, config."""

    root: Path
    name: str
    stacks_dir: Path
    main: Path
    config: Mapping[str, Any] = field(default_factory=dict)


def find_project(start: Path) -> Project | None:
    """The nearest `Pulumi.yaml` from `start` upward, like the Pulumi CLI; None when there is none."""
    for folder in [start.resolve(), *start.resolve().parents]:
        for name in ("Pulumi.yaml", "Pulumi.yml"):
            if (folder / name).is_file():
                return read_project(folder / name)
    return None


def read_project(path: Path) -> Project:
    """Read a `Pulumi.yaml`: name, `stackConfigDir`, `main` and project-level `config:` (namespaced)."""
    document, problems = _read_yaml(path)
    if problems:
        raise ConfigError(problems)
    if not isinstance(document, dict) or not isinstance(document.get("name"), str):
        raise ConfigError([f"{path}: not a Pulumi project file (no `name:`)"])
    name = str(document["name"])
    root = path.parent
    stacks = root / str(document.get("stackConfigDir") or ".")
    main = root / str(document.get("main") or ".")
    config: dict[str, Any] = {}
    raw_config = document.get("config") or {}
    if not isinstance(raw_config, dict):
        raise ConfigError([f"{path}: 'config' must be a mapping of keys to values"])
    for key, value in raw_config.items():
        full = str(key) if ":" in str(key) else f"{name}:{key}"
        if isinstance(value, dict) and set(value) <= {"type", "description", "default", "value", "secret", "items"}:
            if "value" in value or "default" in value:
                config[full] = stackyaml.engine_text(value.get("value", value.get("default")))
        else:
            config[full] = stackyaml.engine_text(value)
    return Project(root=root, name=name, stacks_dir=stacks, main=main, config=config)


def stack_short_name(stack: str) -> str:
    """`dev`, `org/dev` or `org/project/dev` -> `dev`; ConfigError for a name the engine refuses."""
    parts = stack.split("/")
    if (
        not 1 <= len(parts) <= 3
        or stack.startswith("/")
        or any(not _STACK_PART.fullmatch(p) or p in (".", "..") for p in parts)
    ):
        raise ConfigError(
            [
                f"stack name {stack!r} is not one the engine accepts; allowed: [org/[project/]]name, each part "
                "letters, digits, '-', '_', '.' (not '.' or '..'), at most 100 characters"
            ]
        )
    return parts[-1]


def stack_file(stack: str, stacks_dir: Path | None = None) -> Path:
    """Path of a stack's config file (`org/project/dev` reads `Pulumi.dev.yaml`, as the engine does).

    `stacks_dir` defaults to `STACKS_DIR`, read when called (the tests point it at their pristine copy).
    """
    return (stacks_dir or STACKS_DIR) / f"Pulumi.{stack_short_name(stack)}.yaml"


def _read_yaml(path: Path) -> tuple[Any, list[str]]:
    """Read a stack file or `Pulumi.yaml` as the engine reads it (infra/stackyaml.py): (document, problems).

    The document is None when there is a problem: every problem names the file, the line and column, and the
    key path. An empty file is an empty mapping.
    """
    try:
        document = stackyaml.read(path)
    except stackyaml.StackFileError as exc:
        return None, exc.problems
    return ({} if document is None else document), []


def _not_a_file(path: Path) -> str:
    """What a stack file's path is when it is there but not a file one can read as text (for its error)."""
    if not path.exists():
        return f"a link to {os.readlink(path)}, which does not exist"
    if path.is_dir():
        return "a folder"
    if path.is_char_device() or path.is_block_device():
        return "a device"
    if path.is_fifo():
        return "a pipe"
    return "not a regular file"


def read_stack_file(stack: str, stacks_dir: Path | None = None) -> dict[str, Any]:
    """The `config:` map of `Pulumi.<stack>.yaml`, or ConfigError listing every problem of the file."""
    stacks_dir = stacks_dir or STACKS_DIR
    path = stack_file(stack, stacks_dir)
    if not path.is_file():
        if not stacks_dir.is_dir():
            state = "is not a folder" if stacks_dir.exists() else "does not exist"
            raise ConfigError(
                [f"stack '{stack}': the stacks folder {stacks_dir} {state}; allowed: a folder of Pulumi.<stack>.yaml"]
            )
        if path.is_symlink() or path.exists():
            raise ConfigError([f"stack '{stack}': {path} is {_not_a_file(path)}; allowed: a YAML file"])
        known = sorted(
            p.name.removeprefix("Pulumi.").removesuffix(".yaml")
            for p in stacks_dir.glob("Pulumi.*.yaml")
            if p.is_file()
        )
        close = difflib.get_close_matches(stack, known, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ConfigError([f"stack '{stack}': no file {path}; known stacks: {', '.join(known) or 'none'}{hint}"])
    document, problems = _read_yaml(path)
    if document is None:
        raise ConfigError(problems)
    if not isinstance(document, dict):
        raise ConfigError([*problems, f"{path}: must be a mapping with a 'config:' key"])
    for key in document:
        if key not in STACK_FILE_KEYS:
            hint = "; config keys go under 'config:'" if ":" in str(key) else ""
            problems.append(
                f"{path}: top-level key {key!r} is not a stack file key{hint}; "
                f"allowed: {', '.join(sorted(STACK_FILE_KEYS))}"
            )
    config = document.get("config", {})
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ConfigError([*problems, f"{path}: 'config' must be a mapping of keys to values"])
    # Each value as the program receives it from the engine: text for a scalar, the structure for a list or map.
    config = {key: stackyaml.engine_text(value) for key, value in config.items()}
    if problems:
        # Reported together with every config problem by `load`.
        config = {**config, FILE_PROBLEMS: problems}
    return config


FILE_PROBLEMS = "\0file-problems"


def from_engine_strings(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Config as the Pulumi engine hands it over (structured values as JSON strings), decoded."""
    decoded: dict[str, Any] = {}
    for key, value in raw.items():
        decoded[key] = value
        if isinstance(value, str) and value[:1] in ("{", "["):
            with contextlib.suppress(json.JSONDecodeError, RecursionError):
                decoded[key] = json.loads(value)
    return decoded


def key_problems(raw: Mapping[str, Any], project: str) -> list[str]:
    """Keys the engine would refuse or read differently, and namespace typos."""
    problems: list[str] = []
    for key in raw:
        text = str(key)
        if text == FILE_PROBLEMS:
            continue
        namespace, _, name = text.partition(":")
        if not name:
            problems.append(
                f"{text}: has no namespace, which the engine refuses; "
                f"allowed: <namespace>:<key>, e.g. {NAMESPACE}:{text}"
            )
            continue
        if name.startswith("config:"):
            problems.append(
                f"{text}: the engine reads this as {namespace}:{name.removeprefix('config:')}; write it that way"
            )
            continue
        known = [*KNOWN_NAMESPACES, project]
        if namespace not in known:
            close = difflib.get_close_matches(namespace, known, n=1, cutoff=0.75)
            if close:
                problems.append(
                    f"{text}: namespace {namespace!r} looks like a typo of {close[0]!r}; "
                    f"allowed namespaces here: {', '.join(sorted(set(known)))}"
                )
    return problems


def unknown_key(name: str, allowed: list[str]) -> str:
    """What is wrong with key `name` where only `allowed` are read: the closest allowed key, and all of them."""
    close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    near = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown key{near}; allowed keys here: {', '.join(allowed)}"


def unknown_keys(raw: Mapping[str, Any], project: str) -> list[str]:
    """`gpuplane:` keys no gpuplane setting has, with the closest known key and the allowed ones.

    Why: a team's own program reads the `gpuplane:` keys it knows by name and never sees the others, so a typo
    (`gpuplane:clustr`) would be silently unread and the render would fail, if at all, on what is then missing.
    gpuplane's own program gets the same message from the model itself (`format_errors`). A program whose project
    is named `gpuplane` shares the namespace (`pulumi.Config()` reads it), so its keys are its own business.
    """
    if project == NAMESPACE:
        return []
    allowed = _allowed_keys([])
    problems = []
    for key in raw:
        namespace, _, name = str(key).partition(":")
        if namespace != NAMESPACE or not name or name.startswith("config:") or name in allowed:
            continue
        problems.append(
            f"{NAMESPACE}:{name}: {unknown_key(name, allowed)}; "
            f"a setting of the program's own goes under its project's namespace, {project}:{name}"
        )
    return problems


def parse(raw: Mapping[str, Any], stack: str, project: str = PROJECT) -> StackConfig:
    """Validate a stack's config map (`namespace:key` -> value). Raises ConfigError listing every problem."""
    problems: list[str] = list(raw.get(FILE_PROBLEMS, []))
    problems += key_problems(raw, project)
    problems += limits.raw_problems({k: v for k, v in raw.items() if k != FILE_PROBLEMS})
    ours: dict[str, Any] = {}
    for key, value in raw.items():
        namespace, _, name = str(key).partition(":")
        if namespace == NAMESPACE and not name.startswith("config:"):
            ours[name] = value
    region = raw.get("aws:region")
    regions = eks_regions()
    if not isinstance(region, str) or not region:
        problems.append("aws:region: is not set; set it to the AWS region of the stack, e.g. us-west-2")
    elif region not in regions:
        problems.append(
            f"aws:region: '{region}' is not a region where EKS is offered; allowed: {', '.join(sorted(regions))}"
        )
    profile, roles = _identity(raw, problems)
    if any("not a finite number" in p or "entries; allowed" in p for p in problems):
        # pydantic on a huge or non-finite value is slow or misleading: stop with what is known.
        raise ConfigError(problems)
    api = limits.config_problems(ours, NAMESPACE)
    problems += api
    reported = {p.split(": ", 1)[0] for p in api}
    platform: PlatformArgs | None = None
    try:
        # The region picks `observability.metrics`' default (components.config.platform.default_metrics).
        platform = PlatformArgs.model_validate(ours, context={"region": region if isinstance(region, str) else None})
    except ValidationError as exc:
        lines = [*format_errors(exc), *cross_field_problems(ours, exc)]
        problems.extend(line for line in lines if not any(line.startswith(f"{r}") for r in reported))
    if platform is not None:
        problems += [
            f"{NAMESPACE}:{_key_path(e.field.split('.'))}: {e.message}"
            for e in cross_checks.platform_problems(platform)
        ]
    if platform is not None and isinstance(region, str):
        azs = platform.network.availability_zones or []
        wrong = [az for az in azs if az[:-1] != region]
        if wrong:
            problems.append(f"{NAMESPACE}:network.availabilityZones: {wrong} are not in the stack's region {region}")
        problems.extend(_partition_problems(platform, region))
        problems.extend(
            f"{NAMESPACE}:{key}: {message}" for key, message in cross_checks.region_problems(platform, region)
        )
    if platform is not None:
        name = platform.cluster_name or f"{project}-{stack}"
        problems += [
            p for p in limits.platform_problems(platform, name, NAMESPACE, project, stack) if p not in problems
        ]
    if problems or platform is None or not isinstance(region, str):
        raise ConfigError(problems)
    return StackConfig(
        project=project,
        stack=stack,
        region=region,
        platform=platform,
        profile=profile,
        assume_roles=roles,
        raw={k: v for k, v in raw.items() if k != FILE_PROBLEMS},
        warnings=tuple(cross_checks.config_warnings(platform)),
    )


def _identity(raw: Mapping[str, Any], problems: list[str]) -> tuple[str | None, tuple[str, ...]]:
    """`aws:profile` and the role ARNs of `aws:assumeRoles` (or the older `aws:assumeRole`)."""
    profile = raw.get("aws:profile")
    if profile is not None and (not isinstance(profile, str) or not profile):
        problems.append(f"aws:profile: {profile!r} is not a profile name; allowed: a name from ~/.aws/config")
        profile = None
    roles: list[str] = []
    entries = raw.get("aws:assumeRoles", raw.get("aws:assumeRole"))
    if isinstance(entries, dict):
        entries = [entries]
    if entries is not None and not isinstance(entries, list):
        problems.append(f"aws:assumeRoles: {entries!r} is not a list; allowed: a list of {{roleArn: ...}}")
        entries = []
    for index, entry in enumerate(entries or []):
        arn = entry.get("roleArn") if isinstance(entry, dict) else None
        if not isinstance(arn, str) or not _ROLE_ARN.fullmatch(arn):
            problems.append(
                f"aws:assumeRoles[{index}].roleArn: {arn!r} is not an IAM role ARN; "
                "allowed: arn:aws:iam::<account>:role/<name>"
            )
        else:
            roles.append(arn)
    return profile, tuple(roles)


_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$")


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


def load(
    stack: str, stacks_dir: Path | None = None, project: str = PROJECT, defaults: Mapping[str, Any] | None = None
) -> StackConfig:
    """Read and validate `Pulumi.<stack>.yaml`, over the project's own `config:` values (`defaults`).

    GPUPLANE_TODAY is checked first: the date rules read it, and a bad value is the environment's fault, not a
    stack key's, so it must not be reported as one.
    """
    short = stack_short_name(stack)
    try:
        lifecycle.today()
    except ValueError as exc:
        raise ConfigError([str(exc)]) from None
    return parse({**(defaults or {}), **read_stack_file(stack, stacks_dir)}, short, project)


def format_errors(exc: ValidationError) -> list[str]:
    """One line per pydantic error: `gpuplane:<key path>: <what is wrong> (got <value>)`."""
    lines = []
    for error in exc.errors():
        loc: list[str | int] = list(error["loc"])
        cause = error.get("ctx", {}).get("error")
        shown_value = True
        if isinstance(cause, FieldErrors):
            # Several problems found by one check (the workload cross-checks): a line each.
            lines += [f"{NAMESPACE}:{_key_path([*loc, *e.field.split('.')])}: {e.message}" for e in cause.errors]
            continue
        if isinstance(cause, FieldError):
            loc.extend(cause.field.split("."))
            message = cause.message
        elif isinstance(cause, ValueError):
            message = str(cause)
        elif error["type"] == "extra_forbidden":
            message = unknown_key(str(loc[-1]), _allowed_keys(loc[:-1]))
        elif error["type"] == "missing":
            message = "is required"
            shown_value = False
        elif error["type"] == "model_type" and (hint := mapping_hint(loc, error.get("input"))):
            message = hint
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
            suffix = f" (got {shown(repr(value), QUOTED_LIMIT, one_line=True)})"  # a huge value: its start
        lines.append(f"{NAMESPACE}:{_key_path(loc)}: {message}{suffix}")
    return lines


def cross_field_problems(data: Mapping[str, Any], exc: ValidationError) -> list[str]:
    """The cross-field problems pydantic did not get to: every bad key at once, not one round at a time.

    pydantic runs a model's own checks (minSize <= maxSize, instance types that match the kind...) only
    when all its fields are valid, so a group with a bad label and minSize > maxSize would report the
    label, and the sizes only after the label is fixed. For each section or list item below the top level
    that had field errors, this validates it again without the failing keys (their defaults stand in)
    and keeps what its own checks then find about the other keys, unless the message names a failing key (it
    would describe the default, not the user's value). The top level is left out: its checks
    span every section, and defaults standing in for a broken section would make up problems.
    """
    data = with_profile_sections(data)  # a section is judged with its profile's defaults, as the model did
    failing: dict[tuple[str | int, ...], tuple[type[BaseModel], set[str]]] = {}
    for error in exc.errors():
        found = _owning_model(list(error["loc"]))
        if found is not None:
            at, model, key = found
            failing.setdefault(at, (model, set()))[1].add(key)
    lines: list[str] = []
    for at, (model, keys) in sorted(failing.items(), key=lambda item: str(item[0])):
        raw: Any = data
        for part in at:
            if isinstance(raw, list) and isinstance(part, int) and part < len(raw):
                raw = raw[part]
            elif isinstance(raw, dict):
                raw = raw.get(part)
            else:
                raw = None
        if not isinstance(raw, dict):
            continue
        try:
            model.model_validate({k: v for k, v in raw.items() if k not in keys})
        except ValidationError as again:
            for error in again.errors():
                cause = error.get("ctx", {}).get("error")
                if error["type"] == "missing" or not isinstance(cause, FieldError):
                    continue
                if cause.field.split(".")[0] in keys:
                    continue
                if any(re.search(rf"\b{re.escape(key)}\b", cause.message) for key in keys):
                    # A check that reads a failing key saw its default, not what the user wrote: with `metric: rps`
                    # refused, "with metric cpu set targetCpuUtilization" would be made up.
                    continue
                loc = [*at, *error["loc"], *cause.field.split(".")]
                lines.append(f"{NAMESPACE}:{_key_path(loc)}: {cause.message}")
    return lines


def _owning_model(loc: list[str | int]) -> tuple[tuple[str | int, ...], type[BaseModel], str] | None:
    """(location of the deepest model below the top level, that model, its failing key) for an error loc."""
    model: type[BaseModel] = PlatformArgs
    at: list[str | int] = []
    best: tuple[tuple[str | int, ...], type[BaseModel], str] | None = None
    i = 0
    while i < len(loc):
        part = loc[i]
        if isinstance(part, int):
            return best
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return best
        if at:
            best = (tuple(at), model, str(part))
        inner = _model_in(field.annotation)
        if inner is None:
            return best
        at.append(part)
        i += 1
        if i < len(loc) and isinstance(loc[i], int):
            at.append(loc[i])
            i += 1
        model = inner
    return best


def _key_path(loc: Sequence[str | int]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(top level)"


def _model_at(loc: list[str | int], root: type[BaseModel] = PlatformArgs) -> type[BaseModel]:
    """The args model at `loc` below `root` (the deepest model the path reaches)."""
    model = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        inner = _model_in(field.annotation) if field is not None else None
        if inner is None:
            break
        model = inner
    return model


def _allowed_keys(loc: list[str | int]) -> list[str]:
    """The camelCase keys a model at `loc` (below PlatformArgs) accepts."""
    return sorted(f.alias or n for n, f in _model_at(loc).model_fields.items())


def mapping_hint(loc: list[str | int], value: Any, root: type[BaseModel] = PlatformArgs) -> str | None:
    """What to write where a mapping was expected and a scalar was given, or None if `loc` is not a model.

    `sharing: {timeSlicing: 4}` gets `expected a mapping like {replicas: 4}` (the required keys, the given
    value kept where one key is required), never pydantic's "instance of TimeSlicingArgs".
    """
    model, model_loc = root, [p for p in loc if isinstance(p, str)]
    for part in model_loc:
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        inner = _model_in(field.annotation) if field is not None else None
        if inner is None:
            return None  # the path leaves the models: not a mapping this hint can describe
        model = inner
    fields = model.model_fields
    keys = [f.alias or n for n, f in fields.items() if f.is_required()] or [
        f.alias or n for n, f in list(fields.items())[:2]
    ]
    scalar = value is not None and not isinstance(value, dict | list)
    shown = [f"{k}: {value if scalar and len(keys) == 1 else '...'}" for k in keys]
    allowed = ", ".join(sorted(f.alias or n for n, f in fields.items()))
    return f"expected a mapping like {{{', '.join(shown)}}}; keys here: {allowed}"


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None
