"""The component package: its schema (offline, from the SDK's analyzer) and `construct` under mocks."""

import json
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import jsonschema
import pulumi
import pytest
from pulumi.errors import InputPropertyError
from pulumi.provider.server import ComponentInitError
from pulumi.runtime import rpc
from pydantic import BaseModel

from gpuplane.infra import config, mockrun, provider, render
from tests.conftest import DEV_CLUSTER, stack_config

METASCHEMA = Path(__file__).parents[1] / "fixtures" / "pulumi" / "package-metaschema.json"
REGION = "us-west-2"


@pytest.fixture(scope="module")
def served(package_schema: dict[str, Any]) -> provider.GpuplaneProvider:
    with pytest.MonkeyPatch.context() as patch:
        # The schema it serves is provider.package_schema()'s, made once for the session (tests/conftest.py).
        patch.setattr(provider, "package_schema", lambda: package_schema)
        return provider.GpuplaneProvider()


@pytest.fixture(scope="module")
def schema(served: provider.GpuplaneProvider) -> dict[str, Any]:
    assert served.schema is not None
    return json.loads(served.schema)


def test_schema_is_a_valid_pulumi_package_schema(schema: dict[str, Any]) -> None:
    # The metaschema's patterns name groups the ECMAScript way (`(?<name>`); Python's re spells it `(?P<name>`.
    metaschema = json.loads(METASCHEMA.read_text().replace("(?<", "(?P<"))
    validator = jsonschema.Draft202012Validator(metaschema)
    assert [e.message for e in validator.iter_errors(schema)] == []
    # And a wrong one is caught: the check can fail.
    broken = {**schema, "resources": {"gpuplane:index:Platform": {"isComponent": "yes"}}}
    assert list(validator.iter_errors(broken))


def test_schema_serves_every_component_with_its_token(schema: dict[str, Any]) -> None:
    assert schema["name"] == "gpuplane"
    assert schema["version"] == provider.VERSION
    assert sorted(schema["resources"]) == sorted(
        f"gpuplane:index:{name}" for name in ("Platform", "Cluster", "NodeGroup", "GpuEnablement", "ClusterAutoscaler")
    )
    assert all(r["isComponent"] for r in schema["resources"].values())
    gpu = schema["resources"]["gpuplane:index:GpuEnablement"]
    assert gpu["requiredInputs"] == ["cluster"]
    assert gpu["inputProperties"]["dcgmExporter"] == {
        "type": "boolean",
        "description": "GPU metrics from every GPU node. Default true.",
    }
    assert all(
        r["inputProperties"][k].get("description") for r in schema["resources"].values() for k in r["inputProperties"]
    )


@pytest.mark.parametrize("component", sorted(provider.MODELS))
def test_schema_args_are_the_models_fields(schema: dict[str, Any], component: str) -> None:
    """Every documented field, camelCase, required as the model says, with the model's description."""
    model = provider.MODELS[component]
    resource = schema["resources"][f"gpuplane:index:{component}"]
    properties = resource["inputProperties"]
    for field, info in model.model_fields.items():
        key = info.alias or provider.config_key(field)
        assert key == provider.config_key(field)  # the stack file's key is the schema's
        assert key in properties, f"{component}.{key} missing"
        assert properties[key].get("description") == info.description
    required = {provider.config_key(f) for f, i in model.model_fields.items() if i.is_required()}
    own_required = {"subnetIds"} if component == "Cluster" else {"cluster"} if component != "Platform" else set()
    assert set(resource.get("requiredInputs", [])) == required | own_required
    extra = set(properties) - {provider.config_key(f) for f in model.model_fields}
    assert extra == set(provider.EXTRA_DESCRIPTIONS.get(component, {}))


def test_schema_types_follow_the_fields(schema: dict[str, Any]) -> None:
    group = schema["resources"]["gpuplane:index:NodeGroup"]["inputProperties"]
    assert group["minSize"]["type"] == "integer"
    assert group["instanceTypes"] == {**group["instanceTypes"], "type": "array"}
    assert group["instanceTypes"]["items"]["type"] == "string"
    assert group["gpuTaint"]["type"] == "boolean"
    assert group["labels"]["additionalProperties"]["type"] == "string"
    platform = schema["resources"]["gpuplane:index:Platform"]["inputProperties"]
    assert platform["nodeGroups"]["type"] == "array"
    assert platform["nodeGroups"]["items"]["$ref"] == "#/types/gpuplane:index:NodeGroupSettings"
    assert platform["cluster"]["$ref"] == "#/types/gpuplane:index:ClusterSettings"
    # Typed at every depth: what another language's program is checked against, documented as the stack file is.
    types = schema["types"]
    nested = types["gpuplane:index:NodeGroupSettings"]
    assert nested["properties"]["minSize"]["type"] == "integer"
    assert nested["properties"]["taints"]["items"]["$ref"] == "#/types/gpuplane:index:TaintSettings"
    assert nested["properties"]["sharing"]["$ref"] == "#/types/gpuplane:index:GpuSharingSettings"
    assert sorted(nested["required"]) == ["instanceTypes", "name"]
    sharing = types["gpuplane:index:GpuSharingSettings"]["properties"]
    assert sharing["timeSlicing"]["$ref"] == "#/types/gpuplane:index:TimeSlicingSettings"
    assert types["gpuplane:index:TimeSlicingSettings"]["properties"]["replicas"]["type"] == "integer"
    training = types["gpuplane:index:TrainingSettings"]["properties"]
    assert training["volumes"]["items"]["$ref"] == "#/types/gpuplane:index:VolumeMountSettings"


def _nested_models(model: type[BaseModel]) -> set[type[BaseModel]]:
    """Every model a field of `model` holds, at any depth (in lists, maps and optionals too)."""
    found: set[type[BaseModel]] = set()
    for info in model.model_fields.values():
        pending: list[Any] = [info.annotation]
        while pending:
            annotation = pending.pop()
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                if annotation not in found:
                    found |= {annotation} | _nested_models(annotation)
            else:
                pending.extend(get_args(annotation))
    return found


def test_every_nested_model_is_a_type_with_the_stack_files_keys_and_words(schema: dict[str, Any]) -> None:
    """Each model a served component's args hold is one schema type: every field under the stack file's key,
    required as the model says, with the model's description; nothing else is a type."""
    models = set().union(*(_nested_models(m) for m in provider.MODELS.values()))
    assert len(models) > 20
    by_model = {model: name for name, model in provider.SETTINGS_TYPES.items()}
    objects = {token for token, described in schema["types"].items() if "enum" not in described}
    assert {f"gpuplane:index:{by_model[m]}" for m in models} == objects
    for model in models:
        described = schema["types"][f"gpuplane:index:{by_model[model]}"]
        assert described["description"] == model.__doc__
        properties = described["properties"]
        for field, info in model.model_fields.items():
            key = info.alias or provider.config_key(field)
            assert key == provider.config_key(field), (model, field)  # what a program sends is what the model reads
            assert properties[key].get("description") == info.description, (model, key)
        assert set(properties) == {provider.config_key(f) for f in model.model_fields}
        required = {provider.config_key(f) for f, i in model.model_fields.items() if i.is_required()}
        assert set(described.get("required", [])) == required, model


## construct under mocks


def _construct(served: provider.GpuplaneProvider, calls: list[tuple[str, str, dict[str, Any]]]) -> mockrun.Recording:
    def program() -> dict[str, Any]:
        for name, component, inputs in calls:
            served.construct(name, f"gpuplane:index:{component}", inputs, None)
        return {}

    return mockrun.run(program, config.PROJECT, "test", REGION, {"aws:region": REGION})


def _tree(recording: mockrun.Recording) -> list[tuple[str, str, str | None, str]]:
    return sorted(
        (r.urn, r.type, r.parent, json.dumps(r.inputs, sort_keys=True, default=str)) for r in recording.resources
    )


def test_construct_of_platform_makes_what_the_python_program_makes(served: provider.GpuplaneProvider) -> None:
    settings = {"cluster": DEV_CLUSTER, "profile": "dev", "tags": {"team": "ml"}}
    expected = render.run_stack(stack_config(settings))
    made = _construct(served, [("gpuplane-test", "Platform", settings)])
    assert len(made.resources) == len(expected.resources) > 50
    assert _tree(made) == _tree(expected)
    assert made.warnings == expected.warnings


def test_platform_refuses_bad_config_with_the_stack_files_words(served: provider.GpuplaneProvider) -> None:
    settings = {"cluster": DEV_CLUSTER, "nodeGroups": [{"name": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": -1}]}
    with pytest.raises(config.ConfigError) as stack_error:
        stack_config(settings)
    with pytest.raises(ComponentInitError) as construct_error:
        _construct(served, [("p", "Platform", settings)])
    message = str(construct_error.value.__cause__ or construct_error.value)
    assert message.startswith("Platform 'p': ")
    for problem in stack_error.value.problems:
        assert problem in message


def _fixed_strings(annotation: Any) -> tuple[str, ...] | None:
    """The strings a field takes when it takes only fixed ones (a Literal of strings, in an optional or a list)."""
    if get_origin(annotation) is Literal:
        return get_args(annotation) if all(isinstance(v, str) for v in get_args(annotation)) else None
    if get_origin(annotation) in (list, Union, UnionType):
        found = [f for f in map(_fixed_strings, get_args(annotation)) if f]
        return found[0] if len(found) == 1 else None
    return None


def test_every_field_of_fixed_strings_is_an_enum_of_exactly_those(schema: dict[str, Any]) -> None:
    """A TypeScript program gets `"cpu" | "gpu"` for a node group's kind, not any string: one enum type per field of
    fixed strings, with the model's values and nothing else, referred to by that field (or by its items)."""
    enums = {token: described for token, described in schema["types"].items() if "enum" in described}
    seen = set()
    models = set().union(*(_nested_models(m) for m in provider.MODELS.values())) | set(provider.MODELS.values())
    by_model = {model: name for name, model in provider.SETTINGS_TYPES.items()}
    for model in models:
        if model in by_model:
            properties = schema["types"][f"gpuplane:index:{by_model[model]}"]["properties"]
        else:
            component = next(c for c, m in provider.MODELS.items() if m is model)
            properties = schema["resources"][f"gpuplane:index:{component}"]["inputProperties"]
        for field, info in model.model_fields.items():
            values = _fixed_strings(info.annotation)
            if values is None:
                continue
            prop = properties[provider.config_key(field)]
            ref = (prop.get("items") or prop)["$ref"].removeprefix("#/types/")
            assert [member["value"] for member in enums[ref]["enum"]] == list(values), (model, field)
            seen.add(ref)
    assert seen == set(enums)
    assert "gpuplane:index:NodeGroupKind" in seen and "gpuplane:index:TaintEffect" in seen
    expander = {m["name"]: m["value"] for m in enums["gpuplane:index:AutoscalerExpander"]["enum"]}
    assert expander["least_waste"] == "least-waste"  # member names are identifiers, values the stack file's


def test_an_enum_setting_reaches_the_model_as_sent(served: provider.GpuplaneProvider) -> None:
    """The provider passes an enum's string as the program sent it: the model checks it, with its own words."""
    made = _construct(served, [("p", "Platform", {"cluster": DEV_CLUSTER, "profile": "dev"})])
    assert any(r.type == "aws:eks/cluster:Cluster" for r in made.resources)
    with pytest.raises(ComponentInitError, match=r"Platform 'q': .*profile"):
        _construct(served, [("q", "Platform", {"cluster": DEV_CLUSTER, "profile": "staging"})])


def test_a_nested_typo_is_refused_with_the_closest_key_as_in_a_stack_file(served: provider.GpuplaneProvider) -> None:
    """The SDK's own input mapping would drop a nested key its schema does not know; the stack file's model refuses
    it, naming the key it was probably meant to be."""
    group = {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "sharing": {"timeSlicing": {"replicaz": 4}}}
    settings = {"cluster": DEV_CLUSTER, "nodeGroups": [group]}
    with pytest.raises(config.ConfigError) as stack_error:
        stack_config(settings)
    with pytest.raises(ComponentInitError) as construct_error:
        _construct(served, [("p", "Platform", settings)])
    message = str(construct_error.value.__cause__ or construct_error.value)
    assert "nodeGroups[0].sharing.timeSlicing.replicaz: unknown key (did you mean 'replicas'?)" in message
    for problem in stack_error.value.problems:
        assert problem in message


def _on_the_wire(value: Any) -> Any:
    """`value` as the engine hands it to the provider: a protobuf Struct carries every number as a double."""
    if isinstance(value, dict):
        return {k: _on_the_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_on_the_wire(v) for v in value]
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def test_nested_settings_make_what_the_python_program_makes(served: provider.GpuplaneProvider) -> None:
    """Nested objects and lists reach the model as the program sent them (camelCase keys, at every depth, numbers as
    the doubles the wire carries)."""
    group = {
        "name": "gpu",
        "kind": "gpu",
        "instanceTypes": ["g5.xlarge"],
        "minSize": 1,
        "taints": [{"key": "team", "value": "ml", "effect": "NoSchedule"}],
        "sharing": {"timeSlicing": {"replicas": 4}},
    }
    settings = {"cluster": DEV_CLUSTER, "nodeGroups": [{"name": "system", "instanceTypes": ["m6i.large"]}, group]}
    expected = render.run_stack(stack_config(settings))
    made = _construct(served, [("gpuplane-test", "Platform", _on_the_wire(settings))])
    assert _tree(made) == _tree(expected)
    taints = [r.inputs.get("taints") for r in made.resources if r.type == "aws:eks/nodeGroup:NodeGroup"]
    assert any({"key": "team", "value": "ml", "effect": "NO_SCHEDULE"} in (t or []) for t in taints), taints


def test_an_unknown_input_is_refused_with_the_closest_name(served: provider.GpuplaneProvider) -> None:
    inputs = {"cluster": "eks", "name": "g", "instanceTypes": ["m6i.large"], "minSzie": 1}
    with pytest.raises(InputPropertyError) as unknown:
        _construct(served, [("g", "NodeGroup", inputs)])
    assert unknown.value.property_path == "minSzie"
    assert unknown.value.reason.startswith("NodeGroup 'g': unknown input 'minSzie' (did you mean 'minSize'?); its ")
    assert "amiType, capacityReservation, capacityType, cluster," in unknown.value.reason
    with pytest.raises(InputPropertyError) as missing:
        _construct(served, [("h", "NodeGroup", {"cluster": "eks", "name": "h"})])
    assert (missing.value.property_path, missing.value.reason) == (
        "instanceTypes",
        "NodeGroup 'h': input 'instanceTypes' is required",
    )


@pytest.mark.parametrize("unknown", [pulumi.Output.from_input("dev"), rpc.UNKNOWN], ids=["output", "engine-unknown"])
def test_an_input_that_is_not_known_yet_is_refused_by_name(served: provider.GpuplaneProvider, unknown: Any) -> None:
    """At preview another resource's output is unknown: what decides the resource tree must be plain."""
    with pytest.raises(ComponentInitError, match=r"Platform 'p': input 'profile' is the output of another resource"):
        _construct(served, [("p", "Platform", {"cluster": DEV_CLUSTER, "profile": unknown})])
    nested = {"cluster": {**DEV_CLUSTER, "publicAccessCidrs": [unknown]}}
    with pytest.raises(ComponentInitError, match=r"input 'cluster' is the output of another resource"):
        _construct(served, [("p", "Platform", nested)])


def test_cluster_subnets_may_be_an_output_and_node_groups_name_their_cluster(
    served: provider.GpuplaneProvider,
) -> None:
    subnets = pulumi.Output.from_input(["subnet-a", "subnet-b"])
    made = _construct(
        served,
        [
            ("eks", "Cluster", {"subnetIds": subnets, "publicAccessCidrs": ["198.51.100.7/32"]}),
            ("eks-system", "NodeGroup", {"cluster": "eks", "name": "system", "instanceTypes": ["m6i.large"]}),
            ("eks-gpu", "NodeGroup", {"cluster": "eks", "name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"]}),
            ("eks-gpu-stack", "GpuEnablement", {"cluster": "eks"}),
            ("eks-autoscaler", "ClusterAutoscaler", {"cluster": "eks"}),
        ],
    )
    by_type = {r.type: r for r in made.resources if r.type.startswith("gpuplane:index:") and r.name != "eks-system"}
    assert sorted(by_type) == [
        "gpuplane:index:Cluster",
        "gpuplane:index:ClusterAutoscaler",
        "gpuplane:index:GpuEnablement",
        "gpuplane:index:NodeGroup",
    ]
    node_group = next(r for r in made.resources if r.type == "aws:eks/nodeGroup:NodeGroup" and "gpu" in r.name)
    assert node_group.inputs["subnetIds"] == ["subnet-a", "subnet-b"]
    assert node_group.inputs["instanceTypes"] == ["g5.xlarge"]
    assert node_group.parent == by_type["gpuplane:index:NodeGroup"].urn


def test_a_component_naming_an_unknown_cluster_is_refused(served: provider.GpuplaneProvider) -> None:
    with pytest.raises(ComponentInitError, match=r"NodeGroup 'g': cluster 'nope' is not a Cluster or Platform made"):
        _construct(served, [("g", "NodeGroup", {"cluster": "nope", "name": "g", "instanceTypes": ["m6i.large"]})])


@pytest.mark.parametrize(
    ("component", "inputs"),
    [("GpuEnablement", {}), ("ClusterAutoscaler", {}), ("NodeGroup", {"name": "g", "instanceTypes": ["m6i.large"]})],
)
@pytest.mark.parametrize("cluster", [["eks"], {"name": "eks"}])
def test_a_cluster_that_is_not_a_name_is_refused_naming_the_component(
    served: provider.GpuplaneProvider, component: str, inputs: dict[str, Any], cluster: Any
) -> None:
    # An untyped program may pass the resource or a list where the schema says a name: it failed as Python's
    # "unhashable type: 'list'", naming neither the component nor what to pass.
    refused = rf"{component} 'x': cluster is {type(cluster).__name__}, not a name; allowed: the resource name of a"
    with pytest.raises(ComponentInitError, match=refused):
        _construct(served, [("x", component, {"cluster": cluster, **inputs})])


def test_cluster_args_are_validated_by_the_model(served: provider.GpuplaneProvider) -> None:
    refused = r"Cluster 'c': kubernetesVersion: '0.1' is not a Kubernetes version EKS supports; allowed: 1\.\d+"
    with pytest.raises(ComponentInitError, match=refused):
        _construct(served, [("c", "Cluster", {"subnetIds": ["s"], "kubernetesVersion": "0.1"})])


def test_the_plugin_start_reads_no_source_for_the_classes_made_from_the_models(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each start of the plugin process analyzes the components twice (the SDK's provider, then the schema with
    the models' descriptions). The classes made from the models have no source; asking `inspect` for it parses
    this module each time, 15 CPU seconds an analysis. Only classes written in source may be read."""
    import inspect  # noqa: PLC0415 - only this test watches it

    asked: list[type] = []
    original = inspect.getsource

    def getsource(obj: Any) -> str:
        asked.append(obj)
        return original(obj)

    monkeypatch.setattr(inspect, "getsource", getsource)
    served = provider.GpuplaneProvider()
    assert served.schema is not None
    assert provider.MADE_AT_RUN_TIME  # the set the analyzer consults is filled
    assert [c for c in asked if c in provider.MADE_AT_RUN_TIME] == []
    assert provider.GpuEnablementInputs in asked  # a class written in source is still read for its descriptions
    # The SDK's own analyzer is back once the provider has started.
    from pulumi.provider.experimental import analyzer, component  # noqa: PLC0415

    assert vars(component)["Analyzer"] is analyzer.Analyzer


def test_skipping_the_source_lookup_changes_nothing_the_analyzer_infers() -> None:
    """The SDK's analyzer, which looks for the source of every class, and the one that skips the classes made
    here infer the same definitions (one component, with a nested settings type and enums, to keep it short)."""
    from pulumi.provider.experimental.analyzer import Analyzer  # noqa: PLC0415
    from pulumi.provider.experimental.schema import generate_schema  # noqa: PLC0415

    def schema_of(analyzer: Analyzer) -> dict[str, Any]:
        result = analyzer.analyze([provider.ClusterAutoscaler])
        made: dict[str, Any] = generate_schema(
            "gpuplane", "0.1.0", None, result["component_definitions"], result["type_definitions"], []
        ).to_json()
        return made

    sdk = schema_of(Analyzer("gpuplane"))
    ours = schema_of(provider._SourceLessAnalyzer("gpuplane"))
    assert ours == sdk
    assert sdk["types"]  # it has nested types made from the models, the classes the lookup is skipped for


def test_an_sdk_without_the_analyzer_name_still_starts_the_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The swap is a speed-up only: where the SDK's module no longer binds `Analyzer`, the provider starts as the
    SDK makes it."""
    from pulumi.provider.experimental import component  # noqa: PLC0415

    monkeypatch.delitem(vars(component), "Analyzer")
    with provider._sdk_analyzes_sourceless():
        assert "Analyzer" not in vars(component)
    assert "Analyzer" not in vars(component)
