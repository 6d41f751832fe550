"""The TypeScript and Pulumi YAML examples use only what the component package's schema has."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.infra import config, mockrun, provider

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TS = EXAMPLES / "ts-gpu-cluster"
YAML = EXAMPLES / "yaml-gpu-cluster"

# `new gpuplane.X("name", { ...args... }` up to the args' closing brace at the start of a line or `}, {`/`});`.
NEW = re.compile(r"new gpuplane\.(\w+)\(\s*\"([^\"]+)\",\s*\{(.*?)\n?\}\s*(?:,\s*\{[^}]*\})?\s*\);", re.DOTALL)
KEY = re.compile(r"^\s*(\w+)\s*:", re.MULTILINE)
OUTPUT = re.compile(r"\b(\w+)\.(\w+)\s*;")


@pytest.fixture(scope="module")
def schema(package_schema: dict[str, Any]) -> dict[str, Any]:
    return package_schema  # provider.package_schema(), once for the session (tests/conftest.py)


def ts_calls() -> list[tuple[str, str, list[str]]]:
    source = (TS / "index.ts").read_text()
    calls = [(m.group(1), m.group(2), KEY.findall(m.group(3))) for m in NEW.finditer(source)]
    # Every `new gpuplane.` was parsed: the regex cannot silently skip one.
    assert len(calls) == source.count("new gpuplane."), "an unparsed `new gpuplane.` call in index.ts"
    return calls


def test_the_ts_parser_sees_every_call() -> None:
    assert [(c, n) for c, n, _ in ts_calls()] == [
        ("Cluster", "eks"),
        ("NodeGroup", "eks-system"),
        ("NodeGroup", "eks-gpu"),
        ("GpuEnablement", "eks-gpu-stack"),
        ("ClusterAutoscaler", "eks-autoscaler"),
    ]


def test_the_ts_program_uses_only_the_schemas_tokens_and_properties(schema: dict[str, Any]) -> None:
    resources = schema["resources"]
    variables: dict[str, str] = {}
    source = (TS / "index.ts").read_text()
    for assigned in re.finditer(r"const (\w+) = new gpuplane\.(\w+)\(", source):
        variables[assigned.group(1)] = assigned.group(2)
    for component, name, keys in ts_calls():
        resource = resources[f"gpuplane:index:{component}"]
        unknown = set(keys) - set(resource["inputProperties"])
        assert not unknown, f"{component} '{name}': {sorted(unknown)} are not in the schema"
        missing = set(resource.get("requiredInputs", [])) - set(keys)
        assert not missing, f"{component} '{name}': required {sorted(missing)} not given"
    exported = re.findall(r"export const \w+ = (\w+)\.(\w+);", source)
    assert exported
    for variable, prop in exported:
        assert prop in resources[f"gpuplane:index:{variables[variable]}"]["properties"], prop


def test_the_ts_program_names_clusters_it_made_before(schema: dict[str, Any]) -> None:
    source = (TS / "index.ts").read_text()
    clusters = set(re.findall(r"new gpuplane\.Cluster\(\s*\"([^\"]+)\"", source))
    named = set(re.findall(r"cluster: \"([^\"]+)\"", source))
    assert named and named <= clusters
    # Each component that names a cluster depends on something, so it is constructed after it.
    for match in NEW.finditer(source):
        if match.group(1) != "Cluster":
            assert "dependsOn" in match.group(0), match.group(2)


def test_the_yaml_program_uses_only_the_schemas_tokens_and_properties(schema: dict[str, Any]) -> None:
    program = yaml.safe_load((YAML / "Pulumi.yaml").read_text())
    assert program["runtime"] == "yaml"
    resources = schema["resources"]
    assert program["resources"]
    for name, resource in program["resources"].items():
        token = resource["type"]
        assert token in resources, f"{name}: {token} is not in the schema"
        properties = set(resource.get("properties", {}))
        assert properties <= set(resources[token]["inputProperties"]), name
        assert set(resources[token].get("requiredInputs", [])) <= properties, name
    for output, expression in program["outputs"].items():
        reference = re.fullmatch(r"\$\{(\w+)\.(\w+)\}", expression)
        assert reference, f"{output}: {expression} is not a property reference"
        variable, prop = reference.groups()
        assert prop in resources[program["resources"][variable]["type"]]["properties"], output


SCALARS: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "number": (int, float), "boolean": bool}


def schema_problems(value: Any, prop: dict[str, Any], types: dict[str, Any], path: str) -> list[str]:
    """Where `value` does not fit the schema property `prop`, at any depth: the check a typed program (a generated
    SDK's types, Pulumi YAML's type checker) makes of nested settings against the package's types."""
    if "$ref" in prop:
        ref = prop["$ref"]
        if ref == "pulumi.json#/Any":
            return []
        described = types[ref.removeprefix("#/types/")]
        if "enum" in described:
            allowed = [member["value"] for member in described["enum"]]
            return [] if value in allowed else [f"{path}: {value!r} is not one of {allowed}"]
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not an object"]
        problems = [f"{path}.{key}: not in {ref}" for key in value if key not in described["properties"]]
        problems += [f"{path}.{key}: required by {ref}" for key in described.get("required", []) if key not in value]
        for key, item in value.items():
            if key in described["properties"]:
                problems += schema_problems(item, described["properties"][key], types, f"{path}.{key}")
        return problems
    kind = prop.get("type")
    if kind == "array":
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not a list"]
        return [p for i, item in enumerate(value) for p in schema_problems(item, prop["items"], types, f"{path}[{i}]")]
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not a map"]
        values = prop.get("additionalProperties", {"$ref": "pulumi.json#/Any"})
        return [p for key, item in value.items() for p in schema_problems(item, values, types, f"{path}.{key}")]
    wanted = SCALARS[prop["type"]]
    if (isinstance(value, bool) and kind != "boolean") or not isinstance(value, wanted):
        return [f"{path}: {value!r} is not of type {kind}"]
    return []


def test_the_yaml_programs_nested_settings_follow_the_schemas_types(schema: dict[str, Any]) -> None:
    program = yaml.safe_load((YAML / "Pulumi.yaml").read_text())
    for name, resource in program["resources"].items():
        declared = schema["resources"][resource["type"]]["inputProperties"]
        for key, value in resource.get("properties", {}).items():
            assert schema_problems(value, declared[key], schema["types"], f"{name}.{key}") == []
    # The check sees a typo at depth, and a value of the wrong type.
    platform = schema["resources"]["gpuplane:index:Platform"]["inputProperties"]
    groups = [{"name": "gpu", "instanceTypes": ["g6.xlarge"], "sharing": {"timeSlicing": {"replicaz": 4}}}]
    assert schema_problems(groups, platform["nodeGroups"], schema["types"], "nodeGroups") == [
        "nodeGroups[0].sharing.timeSlicing.replicaz: not in #/types/gpuplane:index:TimeSlicingSettings",
        "nodeGroups[0].sharing.timeSlicing.replicas: required by #/types/gpuplane:index:TimeSlicingSettings",
    ]
    wrong = [{"name": "gpu", "instanceTypes": ["g6.xlarge"], "minSize": "one"}]
    found = schema_problems(wrong, platform["nodeGroups"], schema["types"], "g")
    assert found == ["g[0].minSize: 'one' is not of type integer"]
    assert schema_problems("staging", platform["profile"], schema["types"], "profile") == [
        "profile: 'staging' is not one of ['dev', 'prod']"
    ]


@pytest.mark.parametrize("example", [TS, YAML], ids=["ts", "yaml"])
def test_the_examples_add_the_package_from_this_checkout(example: Path) -> None:
    """A local path to the repository's root, whose PulumiPlugin.yaml serves the components: the examples run
    against the code beside them, with no release tag or URL to keep in step."""
    project = yaml.safe_load((example / "Pulumi.yaml").read_text())
    source = (example / project["packages"]["gpuplane"]).resolve()
    assert source == Path(__file__).resolve().parent.parent
    assert yaml.safe_load((source / "PulumiPlugin.yaml").read_text())["runtime"]["name"] == "python"


def test_the_ts_package_json_uses_the_generated_sdk() -> None:
    package = json.loads((TS / "package.json").read_text())
    assert package["dependencies"]["@pulumi/gpuplane"] == "file:sdks/gpuplane"
    assert package["dependencies"]["@pulumi/pulumi"] == "3.272.0"  # the SDK release gpuplane pins in Python


def test_the_yaml_programs_platform_is_a_valid_config() -> None:
    """The example's Platform properties go through construct under mocks: they are a config that deploys."""
    program = yaml.safe_load((YAML / "Pulumi.yaml").read_text())
    properties = program["resources"]["platform"]["properties"]
    served = provider.GpuplaneProvider()

    def run() -> dict[str, Any]:
        served.construct("platform", "gpuplane:index:Platform", properties, None)
        return {}

    recording = mockrun.run(run, config.PROJECT, "dev", "us-west-2", {"aws:region": "us-west-2"})
    groups = {r.name: r.inputs for r in recording.resources if r.type == "aws:eks/nodeGroup:NodeGroup"}
    assert sorted(groups) == ["platform-gpu-ng", "platform-system-ng"]
    assert groups["platform-gpu-ng"]["instanceTypes"] == ["g6.xlarge"]
    assert groups["platform-gpu-ng"]["capacityType"] == "SPOT"
