"""gpuplane as a Pulumi component package: the components, served to programs in any Pulumi language.

`PulumiPlugin.yaml` at the repository root makes the repository a plugin (`pulumi package add <git URL>`);
the Python language host runs this module, which hosts the components with the SDK's component provider
(`pulumi.provider.experimental`). Its analyzer infers the package schema from one annotated `args`
parameter of plain `pulumi.Input` fields, and its `construct` calls `Component(name, args, opts)`; the
components take a pydantic model plus the cluster they belong to, so each served component has an adapter
here. The adapters' args are made from the pydantic models (one field per model field, camelCase in the
schema, required where the model requires it, the model's description), and validated by the same models
with the stack file's error text, so a TypeScript program and a stack file are refused alike.

An adapter's `__new__` returns the component itself: the engine asked for `gpuplane:index:<Name>` named
`name`, and that is exactly what the Python program registers, so both programs make the same resource tree.

What crosses a language boundary is data: a served component that needs a cluster (`NodeGroup`,
`GpuEnablement`, `ClusterAutoscaler`) takes the *name* of a `Cluster` (or `Platform`) constructed earlier
in the same program, which this provider process still holds (`pulumi.Output`s cannot carry Python objects);
the caller's `dependsOn` on that cluster (and, for `GpuEnablement`, on its node groups) makes the engine
construct them first.

Inputs that shape the resource tree (sizes, kinds, instance types, which add-ons) must be known when the
program runs. One given as the output of another resource (a `pulumi.Output`, unknown at preview) is
refused with an error naming it, at preview and at `up` alike; `Cluster.subnetIds` alone may be an output
(it only flows into the resources' inputs).
"""

import contextlib
import difflib
import json
import re
import sys
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, Optional, TypeAlias, TypeVar, get_args, get_origin

import pulumi
from pulumi.errors import InputPropertyError
from pulumi.output import Inputs
from pulumi.provider.experimental import component as sdk_component
from pulumi.provider.experimental.analyzer import Analyzer, ComponentDefinition, PropertyType
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.provider import ConstructResult
from pulumi.runtime import rpc
from pydantic import BaseModel, ValidationError

from gpuplane.components import autoscaler as autoscaler_component
from gpuplane.components import cluster as cluster_component
from gpuplane.components import gpu as gpu_component
from gpuplane.components import node_group as node_group_component
from gpuplane.components import platform as platform_component
from gpuplane.components.config import AutoscalerArgs, ClusterArgs, NodeGroupArgs, PlatformArgs
from gpuplane.infra import config

M = TypeVar("M", bound=BaseModel)

PACKAGE = "gpuplane"
"""The package name: the first part of every type token (`gpuplane:index:Platform`)."""
VERSION = "0.1.0"
"""The package version other languages pin (`pulumi package add ... @<tag>`); the distribution's version."""

_CLUSTERS: dict[str, cluster_component.Cluster] = {}
"""The clusters constructed by this provider process, by resource name: what `cluster: <name>` refers to."""


## The args: one class per served component, its fields made from the pydantic model's


def config_key(field: str) -> str:
    """The camelCase key of a snake_case field, as the schema and the stack file spell it."""
    head, *rest = field.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _input_type(annotation: Any, enum_name: str) -> Any:
    """The analyzer's type for a pydantic field's annotation: scalars, lists, maps, and types of the schema.

    The analyzer refuses unions, so `X | None` is unwrapped (optionality is the field's `required`) and any
    other union is `Any`. A nested model becomes a type of the schema of its own (`_settings_class`), and a
    field of fixed strings (a `Literal` or an `Enum`) an enum type named `enum_name` (`_enum_class`), so a
    TypeScript, Go or C# program gets typed, documented settings at every depth
    (`nodeGroups[].sharing.timeSlicing.replicas`, `nodeGroups[].kind: "cpu" | "gpu"`), not a map of anything.
    """
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return _input_type(members[0], enum_name) if len(members) == 1 else Any
    if origin is Literal or (isinstance(annotation, type) and issubclass(annotation, Enum)):
        values = get_args(annotation) if origin is Literal else tuple(m.value for m in annotation)
        if all(isinstance(v, str) for v in values):
            return _enum_class(enum_name, values)
        return type(values[0])
    if origin is typing.Annotated:
        return _input_type(get_args(annotation)[0], enum_name)
    if annotation in (str, int, float, bool):
        return annotation
    if origin in (list, tuple, Sequence, set, frozenset):
        (item, *_) = get_args(annotation) or (Any,)
        return list[_input_type(item, enum_name)]  # type: ignore[misc]
    if origin in (dict, Mapping):
        value = get_args(annotation)[1] if get_args(annotation) else Any
        return dict[str, _input_type(value, enum_name)]  # type: ignore[misc]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _settings_class(annotation)
    return Any


MADE_AT_RUN_TIME: set[type] = set()
"""The args, settings and enum classes made here from the models: they have no source text (`_SourceLessAnalyzer`)."""

ENUM_TYPES: dict[str, tuple[str, ...]] = {}
"""The values of each enum type of the schema, by the type's name (`NodeGroupKind`: `cpu`, `gpu`)."""

_ENUM_CLASSES: dict[str, type[Enum]] = {}


def _enum_class(name: str, values: tuple[str, ...]) -> type[Enum]:
    """The Python enum the analyzer reads as the schema's enum type `name`, one member per value.

    Named after the model and its field (`NodeGroupKind`, `TaintEffect`): two fields with the same values are
    still two types, each documented where it is used. The values are the stack file's strings, which the
    adapters pass to the models as they are; member names are the values made identifiers (`least-waste` ->
    `least_waste`), as the SDK generators want.
    """
    if ENUM_TYPES.setdefault(name, values) != values:
        raise TypeError(f"two fields make the schema enum {name}: {ENUM_TYPES[name]} and {values}")
    if name not in _ENUM_CLASSES:
        identifiers = {v: re.sub(r"\W", "_", v) for v in values}
        members = {(ident if ident[:1].isalpha() else f"_{ident}"): v for v, ident in identifiers.items()}
        made = Enum(name, members, module=__name__)  # type: ignore[misc]
        made.__doc__ = f"The values `{name}` takes: " + ", ".join(f"`{v}`" for v in values) + "."
        _ENUM_CLASSES[name] = made
        MADE_AT_RUN_TIME.add(made)
    return _ENUM_CLASSES[name]


SETTINGS_SUFFIX = "Settings"
"""The schema's name of a nested model's type: `NodeGroupArgs` -> `NodeGroupSettings`, `Taint` -> `TaintSettings`.

Why a suffix: types and resources share the package's tokens (`gpuplane:index:NodeGroup` is the component), and
the SDK generators add `Args` to input types themselves (Python's `NodeGroupSettingsArgs`, not `NodeGroupArgsArgs`).
"""

SETTINGS_TYPES: dict[str, type[BaseModel]] = {}
"""The model behind each nested type of the schema, by the type's name: its fields' descriptions are the schema's."""

_SETTINGS_CLASSES: dict[type[BaseModel], type] = {}


def _settings_class(model: type[BaseModel]) -> type:
    """The class the analyzer reads as the schema type of a nested model: one `pulumi.Input` field per model field.

    Made once per model, and registered before its fields are read, so a model reached twice (`storage` and
    `training[].volumes`) is one type.
    """
    if model not in _SETTINGS_CLASSES:
        name = model.__name__.removesuffix("Args") + SETTINGS_SUFFIX
        if SETTINGS_TYPES.get(name, model) is not model:
            raise TypeError(f"two nested models make the schema type {name}: {SETTINGS_TYPES[name]} and {model}")
        made = type(name, (), {"__module__": __name__, "__doc__": model.__doc__})
        _SETTINGS_CLASSES[model] = made
        MADE_AT_RUN_TIME.add(made)
        SETTINGS_TYPES[name] = model
        made.__annotations__ = _field_annotations(model)
    return _SETTINGS_CLASSES[model]


def _field_annotations(model: type[BaseModel]) -> dict[str, Any]:
    """`pulumi.Input` annotations of `model`'s fields, optional where the model does not require the field."""
    annotations: dict[str, Any] = {}
    base = model.__name__.removesuffix("Args")
    for field, info in model.model_fields.items():
        key = config_key(field)
        kind = pulumi.Input[_input_type(info.annotation, base + key[:1].upper() + key[1:])]  # type: ignore[misc,valid-type]
        annotations[field] = kind if info.is_required() else Optional[kind]  # noqa: UP045 (the analyzer reads Optional)
    return annotations


def _args_class(name: str, model: type[BaseModel], extra: Mapping[str, Any] = {}) -> type:
    """A class of `pulumi.Input` fields named like `model`'s (snake_case; the schema camelCases them)."""
    annotations = _field_annotations(model)
    annotations.update(extra)
    made = type(name, (), {"__annotations__": annotations, "__module__": __name__, "__doc__": model.__doc__})
    MADE_AT_RUN_TIME.add(made)
    return made


if TYPE_CHECKING:
    # Made at run time from the models (what the analyzer reads); a type checker sees the mapping the host passes.
    PlatformInputs: TypeAlias = Mapping[str, Any]
    ClusterInputs: TypeAlias = Mapping[str, Any]
    NodeGroupInputs: TypeAlias = Mapping[str, Any]
    AutoscalerInputs: TypeAlias = Mapping[str, Any]
else:
    PlatformInputs = _args_class("PlatformInputs", PlatformArgs)
    ClusterInputs = _args_class(
        "ClusterInputs",
        ClusterArgs,
        {"subnet_ids": pulumi.Input[list[str]], "cluster_name": Optional[str]},  # noqa: UP045
    )
    NodeGroupInputs = _args_class("NodeGroupInputs", NodeGroupArgs, {"cluster": str})
    AutoscalerInputs = _args_class("AutoscalerInputs", AutoscalerArgs, {"cluster": str})


class GpuEnablementInputs:
    """What a cluster's GPU node groups need: the NVIDIA device plugin, GPU feature discovery, DCGM exporter."""

    cluster: str
    """The name of a `Cluster` (or `Platform`) made earlier in this program; its GPU groups are served."""
    dcgm_exporter: Optional[pulumi.Input[bool]]  # noqa: UP045 (the analyzer reads Optional)
    """GPU metrics from every GPU node. Default true."""
    metrics: Optional[pulumi.Input[bool]]  # noqa: UP045
    """The Prometheus Operator's CRDs exist, so the exporter gets a ServiceMonitor. Default false."""


EXTRA_DESCRIPTIONS: dict[str, dict[str, str]] = {
    "Cluster": {
        "subnetIds": "The private subnets of the control plane's interfaces and of the nodes (may be an output).",
        "clusterName": "The EKS cluster's name. Default `<project>-<stack>`.",
    },
    "NodeGroup": {"cluster": "The name of a `Cluster` (or `Platform`) made earlier in this program."},
    "ClusterAutoscaler": {"cluster": "The name of a `Cluster` (or `Platform`) made earlier in this program."},
}
"""Descriptions of the args that are the adapters' own (not a model field)."""


## Inputs that decide the resource tree must be known


def _is_unknown(value: Any) -> bool:
    """An output of another resource (its value is not readable here) or the engine's unknown marker."""
    if isinstance(value, pulumi.Output) or value == rpc.UNKNOWN:
        return True
    if isinstance(value, Mapping):
        return any(_is_unknown(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_is_unknown(v) for v in value)
    return False


def _settings(component: str, name: str, args: Mapping[str, Any], passed: Sequence[str] = ()) -> dict[str, Any]:
    """The args as the stack file would write them (camelCase keys), refusing any that is not known yet."""
    settings: dict[str, Any] = {}
    for key, value in args.items():
        camel = config_key(key)
        if key in passed:
            continue
        if _is_unknown(value):
            raise ValueError(
                f"{component} '{name}': input '{camel}' is the output of another resource (unknown until it "
                "exists); it decides which resources gpuplane makes, so it must be a plain value when the program "
                "runs (a literal or a stack config value)"
            )
        settings[camel] = value
    return settings


def _validated(component: str, name: str, model: type[M], settings: Mapping[str, Any]) -> M:
    """`model` from `settings`, refused with the stack file's error lines (each naming key, value, allowed)."""
    try:
        return model.model_validate(settings)
    except ValidationError as exc:
        # The stack file's lines, keyed by the component's own arg (no `gpuplane:` namespace here).
        lines = [line.removeprefix(f"{config.NAMESPACE}:") for line in config.format_errors(exc)]
        raise ValueError(f"{component} '{name}': " + "; ".join(lines)) from None


def _cluster(component: str, name: str, cluster: object) -> cluster_component.Cluster:
    """The Cluster (or Platform's) that `cluster` names; ValueError naming the component and what is allowed.

    Why the type check: the schema says string, but a YAML or other untyped program may pass the resource itself
    (`cluster: ${eks}`) or a list, which would otherwise fail as Python's "unhashable type" with no component named.
    """
    if not isinstance(cluster, str):
        raise ValueError(
            f"{component} '{name}': cluster is {type(cluster).__name__}, not a name; allowed: the resource name of "
            "a Cluster or Platform made earlier in this program by this package (a string, e.g. 'eks')"
        )
    if cluster not in _CLUSTERS:
        made = ", ".join(sorted(_CLUSTERS)) or "none yet"
        raise ValueError(
            f"{component} '{name}': cluster '{cluster}' is not a Cluster or Platform made earlier in this program "
            f"by this package (name its resource name, and depend on it: `dependsOn`); made so far: {made}"
        )
    return _CLUSTERS[cluster]


## The served components


class Platform(pulumi.ComponentResource):
    """A GPU-ready EKS platform for TensorFlow: network, cluster, node groups, storage, GPU add-ons, workloads.

    Its args are the stack file's `gpuplane:` keys, validated the same way (and against the stack's
    `aws:region`).
    """

    cluster_name: pulumi.Output[str]
    """The EKS cluster's name."""
    endpoint: pulumi.Output[str]
    """The Kubernetes API endpoint."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (token from `aws eks get-token`)."""
    vpc_id: pulumi.Output[str]
    """The VPC's id."""

    def __new__(  # type: ignore[misc]
        cls, name: str, args: PlatformInputs, opts: pulumi.ResourceOptions | None = None
    ) -> platform_component.Platform:
        """The `Platform` component, for `args` validated like a stack file's `gpuplane:` keys."""
        settings = _settings("Platform", name, args)
        raw: dict[str, Any] = {f"{config.NAMESPACE}:{k}": v for k, v in settings.items()}
        for key in ("region", "profile", "assumeRoles", "assumeRole"):
            value = pulumi.Config("aws").get(key)
            if value is not None:
                raw[f"aws:{key}"] = value
        try:
            stack = config.parse(config.from_engine_strings(raw), pulumi.get_stack(), pulumi.get_project())
        except config.ConfigError as exc:
            raise ValueError(f"Platform '{name}': " + "; ".join(exc.problems)) from None
        platform = platform_component.Platform(
            name,
            stack.platform,
            region=stack.region,
            aws_profile=stack.profile,
            assume_roles=stack.assume_roles,
            opts=opts,
        )
        _CLUSTERS[name] = platform.cluster
        served = {
            "cluster_name": platform.cluster.cluster_name,
            "endpoint": platform.cluster.endpoint,
            "kubeconfig": platform.cluster.kubeconfig,
            "vpc_id": platform.network.vpc_id,
        }
        for attribute, output in served.items():
            setattr(platform, attribute, output)
        return platform

    def __init__(self, name: str, args: PlatformInputs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Never runs (`__new__` returns the component); declares `args` for the schema."""
        super().__init__("gpuplane:index:Platform", name, None, opts)  # pragma: no cover


class Cluster(pulumi.ComponentResource):
    """An EKS cluster secured by default (access entries, KMS-encrypted Secrets, logs, OIDC provider)."""

    cluster_name: pulumi.Output[str]
    """The EKS cluster's name."""
    endpoint: pulumi.Output[str]
    """The Kubernetes API endpoint."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (token from `aws eks get-token`)."""
    oidc_provider_arn: pulumi.Output[str]
    """The IAM OIDC provider of the cluster (IRSA)."""

    def __new__(  # type: ignore[misc]
        cls, name: str, args: ClusterInputs, opts: pulumi.ResourceOptions | None = None
    ) -> cluster_component.Cluster:
        """The `Cluster` component in the given subnets."""
        values = args
        settings = _settings("Cluster", name, values, passed=("subnet_ids", "cluster_name"))
        made = cluster_component.Cluster(
            name,
            _validated("Cluster", name, ClusterArgs, settings),
            subnet_ids=values["subnet_ids"],
            cluster_name=values.get("cluster_name"),
            opts=opts,
        )
        _CLUSTERS[name] = made
        return made

    def __init__(self, name: str, args: ClusterInputs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Never runs (`__new__` returns the component); declares `args` for the schema."""
        super().__init__("gpuplane:index:Cluster", name, None, opts)  # pragma: no cover


class NodeGroup(pulumi.ComponentResource):
    """A managed node group of a cluster: CPU or GPU (with the GPU taint and labels), in the cluster's subnets."""

    node_group_name: pulumi.Output[str]
    """The EKS node group's name."""
    role_arn: pulumi.Output[str]
    """The nodes' IAM role."""

    def __new__(  # type: ignore[misc]
        cls, name: str, args: NodeGroupInputs, opts: pulumi.ResourceOptions | None = None
    ) -> node_group_component.NodeGroup:
        """The `NodeGroup` component of the named cluster."""
        values = args
        settings = _settings("NodeGroup", name, values, passed=("cluster",))
        cluster = _cluster("NodeGroup", name, values["cluster"])
        group = _validated("NodeGroup", name, NodeGroupArgs, settings)
        return node_group_component.NodeGroup(name, group, cluster=cluster, opts=opts)

    def __init__(self, name: str, args: NodeGroupInputs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Never runs (`__new__` returns the component); declares `args` for the schema."""
        super().__init__("gpuplane:index:NodeGroup", name, None, opts)  # pragma: no cover


class GpuEnablement(pulumi.ComponentResource):
    """What a cluster's GPU node groups need: the NVIDIA device plugin, GPU feature discovery, DCGM exporter."""

    releases: pulumi.Output[list[str]]
    """The Helm releases installed."""

    def __new__(  # type: ignore[misc]
        cls, name: str, args: GpuEnablementInputs, opts: pulumi.ResourceOptions | None = None
    ) -> gpu_component.GpuEnablement:
        """The `GpuEnablement` component for the GPU groups the named cluster has so far."""
        values = typing.cast(Mapping[str, Any], args)
        settings = _settings("GpuEnablement", name, values, passed=("cluster",))
        cluster = _cluster("GpuEnablement", name, values["cluster"])
        return gpu_component.GpuEnablement(
            name,
            cluster=cluster,
            dcgm_exporter=bool(settings.get("dcgmExporter", True)),
            metrics=bool(settings.get("metrics", False)),
            opts=opts,
        )

    def __init__(self, name: str, args: GpuEnablementInputs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Never runs (`__new__` returns the component); declares `args` for the schema."""
        super().__init__("gpuplane:index:GpuEnablement", name, None, opts)  # pragma: no cover


class ClusterAutoscaler(pulumi.ComponentResource):
    """The cluster-autoscaler: scales every node group of the cluster, GPU groups from zero."""

    role_arn: pulumi.Output[str]
    """The autoscaler's IAM role."""

    def __new__(  # type: ignore[misc]
        cls, name: str, args: AutoscalerInputs, opts: pulumi.ResourceOptions | None = None
    ) -> autoscaler_component.ClusterAutoscaler:
        """The `ClusterAutoscaler` component of the named cluster."""
        values = args
        settings = _settings("ClusterAutoscaler", name, values, passed=("cluster",))
        cluster = _cluster("ClusterAutoscaler", name, values["cluster"])
        scaler = _validated("ClusterAutoscaler", name, AutoscalerArgs, settings)
        return autoscaler_component.ClusterAutoscaler(name, scaler, cluster=cluster, opts=opts)

    def __init__(self, name: str, args: AutoscalerInputs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Never runs (`__new__` returns the component); declares `args` for the schema."""
        super().__init__("gpuplane:index:ClusterAutoscaler", name, None, opts)  # pragma: no cover


COMPONENTS: list[type[pulumi.ComponentResource]] = [Platform, Cluster, NodeGroup, GpuEnablement, ClusterAutoscaler]
"""The served components, in the schema's order."""

MODELS: dict[str, type[BaseModel]] = {
    "Platform": PlatformArgs,
    "Cluster": ClusterArgs,
    "NodeGroup": NodeGroupArgs,
    "ClusterAutoscaler": AutoscalerArgs,
}
"""The pydantic model each served component's args are made from (their descriptions are the schema's)."""


## The schema and the provider


def _field_descriptions(model: type[BaseModel]) -> dict[str, str | None]:
    """Each field's description, by the key the schema and the stack file spell it with."""
    return {config_key(f): i.description for f, i in model.model_fields.items()}


def _describe(properties: dict[str, Any], described: Mapping[str, str | None]) -> None:
    """Give each schema property the description written for it (a component's input or a type's field)."""
    for key, prop in properties.items():
        if described.get(key):
            prop["description"] = described[key]


class _SourceLessAnalyzer(Analyzer):
    """The SDK's analyzer, told that the classes made here from the models have no source text to read.

    Why: the analyzer looks for each property's description in the source of the class that declares it
    (`inspect.getsource`, then `ast`), and remembers what it found only when the class's source is found. For a
    class made at run time, `inspect` parses this whole module before it gives up, and the analyzer asks again
    for the next property: about 800 parses, some 9 CPU seconds an analysis. The plugin analyzes twice at each
    start (each `pulumi preview` or `up` of a program in another language), so it spent 18 CPU seconds before it
    served anything; now 2 (benchmarks/provider_start.py). The answer for those classes is the one the SDK reaches,
    no description (the models' descriptions are filled in by `package_schema`); classes written in source, such
    as `GpuEnablementInputs`, are read as before.
    """

    def get_docstring(self, typ: type, name: str) -> str | None:
        """None for a class made at run time (no source); the SDK's lookup for any other."""
        if typ in MADE_AT_RUN_TIME:
            return None
        return super().get_docstring(typ, name)


@contextlib.contextmanager
def _sdk_analyzes_sourceless() -> Iterator[None]:
    """Let the SDK's `ComponentProvider` analyze with `_SourceLessAnalyzer` while it starts, then restore its own.

    `ComponentProvider.__init__` makes its analyzer by the name `Analyzer` of its module and takes no other; the
    swap lasts only for that call. If a later SDK no longer looks the name up there, the plugin only starts slower
    (a test counts the source reads of a start and fails then).
    """
    names = vars(sdk_component)  # the module's namespace; `Analyzer` is not one of its exports
    original = names.get("Analyzer")
    if original is None:  # an SDK that makes its analyzer some other way: start as it does
        yield
        return
    names["Analyzer"] = _SourceLessAnalyzer
    try:
        yield
    finally:
        names["Analyzer"] = original


def package_schema() -> dict[str, Any]:
    """The package schema, inferred offline by the SDK's analyzer, with the models' field descriptions.

    The analyzer reads property descriptions from the source text after each annotation, which the args
    made from the models do not have; the models' descriptions are filled in here, one text for both.
    """
    result = _SourceLessAnalyzer(PACKAGE).analyze(COMPONENTS)
    spec = generate_schema(
        PACKAGE,
        VERSION,
        None,
        result["component_definitions"],
        result["type_definitions"],
        sorted(result["dependencies"], key=lambda d: f"{d.name}{d.version}"),
    ).to_json()
    for token, resource in spec["resources"].items():
        component = token.rsplit(":", 1)[-1]
        model = MODELS.get(component)
        own = EXTRA_DESCRIPTIONS.get(component, {})
        _describe(resource.get("inputProperties", {}), {**(_field_descriptions(model) if model else {}), **own})
    for token, described_type in spec.get("types", {}).items():
        if "enum" in described_type:
            # The SDK writes `"description": null` for an enum member without a docstring, which Pulumi's package
            # metaschema refuses (a description is a string); a member without one has none.
            for member in described_type["enum"]:
                if member.get("description") is None:
                    member.pop("description", None)
            continue
        model = SETTINGS_TYPES[token.rsplit(":", 1)[-1]]
        _describe(described_type.get("properties", {}), _field_descriptions(model))
    spec["description"] = "A GPU-ready EKS platform for TensorFlow, as Pulumi components."
    return spec


class GpuplaneProvider(ComponentProvider):
    """The SDK's component provider, serving `package_schema()` (with the models' descriptions)."""

    def __init__(self) -> None:
        with _sdk_analyzes_sourceless():
            super().__init__(COMPONENTS, PACKAGE, None, VERSION)
        self.schema = json.dumps(package_schema())

    def construct(
        self, name: str, resource_type: str, inputs: Inputs, options: pulumi.ResourceOptions | None = None
    ) -> ConstructResult:
        """The SDK's construct; an input it refuses is named with the resource, as the adapters' errors are."""
        try:
            return super().construct(name, resource_type, inputs, options)
        except InputPropertyError as exc:
            component = resource_type.rsplit(":", 1)[-1]
            raise InputPropertyError(exc.property_path, f"{component} '{name}': {exc.reason}") from None

    def map_inputs(self, inputs: Inputs, component_def: ComponentDefinition) -> Inputs:
        """The top-level inputs under the args' Python names; nested settings as the program sent them.

        Why not the SDK's own mapping: it renames a nested object's keys to Python names and silently drops a
        key its schema does not know, so `nodeGroups: [{minSzie: 0}]` from a YAML program (or any caller the
        generated SDK's types do not check) would become a group with the default size. The adapters validate
        the settings with the stack file's models, which read the stack file's camelCase keys and refuse an
        unknown one with the closest known key, as in a stack file. An unknown top-level input is refused here,
        the same way; a required one that is missing too, as the SDK does.
        """
        known = component_def.inputs
        unknown = sorted(k for k in inputs if k not in known)
        if unknown:
            allowed = ", ".join(sorted(known))
            hints = []
            for key in unknown:
                close = difflib.get_close_matches(str(key), list(known), n=1)
                hints.append(f"'{key}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
            raise InputPropertyError(
                str(unknown[0]),
                f"unknown input {', '.join(hints)}; its inputs are: {allowed}",
            )
        mapped: dict[str, Any] = {}
        for key, prop in known.items():
            value = inputs.get(key)
            if value is None:
                if not prop.optional:
                    raise InputPropertyError(key, f"input '{key}' is required")
                continue
            if prop.type == PropertyType.INTEGER and isinstance(value, float) and value.is_integer():
                value = int(value)  # the wire carries every number as a double
            mapped[component_def.inputs_mapping[key]] = value
        return mapped


def main() -> None:
    """Serve the components to the Pulumi engine (the plugin's entry point, run by `PulumiPlugin.yaml`)."""
    from pulumi.provider import main as serve  # noqa: PLC0415 (only the plugin process serves)

    serve(GpuplaneProvider(), sys.argv[1:])


if __name__ == "__main__":
    main()
