"""docs/config-reference.md documents every config key, generated from the schema; docs/versions.md every pin."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter
from typer.testing import CliRunner

from gpuplane.components.config import CapacityReservationArgs, ClusterArgs, NetworkArgs, NodeGroupArgs, PlatformArgs
from gpuplane.infra import docs
from gpuplane.infra.cli import app
from gpuplane.manifests import versions

SCHEMA = docs.config_schema()
DEFS = SCHEMA["$defs"]
REFERENCE = docs.config_reference()
MODELS = docs._models()


def cells(path: str) -> list[str]:
    """The cells of the reference's row for one key: key, meaning, type, default, allowed, example."""
    prefix = f"| `{path}` |"
    rows = [line for line in REFERENCE.splitlines() if line.startswith(prefix)]
    assert len(rows) == 1, f"{path}: {len(rows)} rows"
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", rows[0])[1:-1]]


ROWS = [(name, path, prop, req) for name, _, section in docs.reference_rows() for path, prop, req in section]


def rows() -> list[tuple[str, str, dict[str, Any], bool]]:
    return ROWS


def test_the_config_reference_page_is_current():
    text = docs.CONFIG_DOC.read_text()
    assert docs.config_reference() in text, "run: python -m gpuplane.infra.docs"


def test_gpuplane_schema_prints_the_schema_the_reference_is_made_from():
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == json.loads(json.dumps(SCHEMA))


def test_every_key_of_the_schema_has_one_row():
    """Every property of the top level and of every object in `$defs` is in the reference, once."""
    documented = {(name, path.rsplit(".", 1)[-1].removeprefix("gpuplane:")) for name, path, _, _ in rows()}
    in_schema = {("PlatformArgs", key) for key in SCHEMA["properties"]}
    in_schema |= {(name, key) for name, node in DEFS.items() for key in node["properties"]}
    assert documented == in_schema
    assert len(rows()) == len(in_schema)
    sections = [line for line in REFERENCE.splitlines() if line.startswith("## ")]
    assert sections == ["## PlatformArgs", *[f"## {name}" for name, _, _ in docs.reference_rows()[1:]]]
    assert {s.removeprefix("## ") for s in sections} == {"PlatformArgs", *DEFS}


@pytest.mark.parametrize(("section", "path", "prop", "required"), rows(), ids=[r[1] for r in rows()])
def test_each_row_states_the_type_default_and_bounds_of_the_schema(section, path, prop, required):
    key, meaning, kind, default, allowed, example = cells(path)
    assert key == f"`{path}`"
    assert example == docs._flow(docs.example(path, prop, prop.get("default")))
    assert kind and meaning == prop["description"].replace("|", "\\|")
    assert (default == "required") is required
    if prop.get("default") is not None:
        assert default == docs._flow(prop["default"])
    elif "default" in prop:
        assert default == "unset (see meaning)"
    alternatives = [prop, *prop.get("anyOf", [])]
    for alt in alternatives:
        for value in alt.get("enum", []):
            assert f"`{value}`" in allowed
        for bound in ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"):
            if bound in alt:
                assert str(alt[bound]) in allowed, f"{path}: {bound}"
        if "$ref" in alt or "$ref" in alt.get("items", {}):
            ref = (alt.get("$ref") or alt["items"]["$ref"]).rsplit("/", 1)[-1]
            assert f"[{ref}](#{ref.lower()})" in kind
    if not any(b in alt for alt in alternatives for b in ("enum", "minimum", "maximum", "pattern", "minItems")):
        assert allowed == "-" or "each:" in allowed or "length" in allowed or "items" in allowed


@pytest.mark.parametrize(("section", "path", "prop", "required"), rows(), ids=[r[1] for r in rows()])
def test_each_example_is_valid_config(section, path, prop, required):
    """The example validates against the key's JSON Schema and through the config model of the key."""
    value = docs.example(path, prop, prop.get("default"))
    jsonschema.Draft202012Validator({**prop, "$defs": DEFS}).validate(value)
    model = MODELS[section]
    name = next(n for n, f in model.model_fields.items() if (f.alias or n) == path.rsplit(".", 1)[-1].split(":")[-1])
    annotation = model.model_fields[name].annotation
    assert annotation is not None
    TypeAdapter(annotation).validate_python(value)


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_listed_example_is_used():
    assert set(docs.EXAMPLES) <= {path for _, path, _, _ in rows()}


def test_a_bad_example_would_fail():
    """The example check is not vacuous: a value out of bounds or of the wrong shape is refused."""
    replicas = next(prop for _, path, prop, _ in rows() if path == "nodeGroups[].sharing.timeSlicing.replicas")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator({**replicas, "$defs": DEFS}).validate(1)
    sharing = next(prop for _, path, prop, _ in rows() if path == "nodeGroups[].sharing")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator({**sharing, "$defs": DEFS}).validate({"timeSlicing": 4})


def test_every_key_is_documented_with_a_default():
    reference = docs.config_reference()
    for model in (PlatformArgs, NetworkArgs, ClusterArgs, NodeGroupArgs, CapacityReservationArgs):
        for name, field in model.model_fields.items():
            assert f"{field.alias or name}`" in reference
            assert field.description, f"{model.__name__}.{name} has no description"
            if not field.is_required():
                assert "Default" in field.description or "See " in field.description, f"{model.__name__}.{name}"


def test_the_pin_table_is_current():
    """docs/versions.md lists every pin of manifests/versions.py as the code has it."""
    assert docs.pin_table() in docs.VERSIONS_DOC.read_text(), "run: python -m gpuplane.infra.docs"


def test_the_pin_table_has_a_row_per_pin():
    rows = [line for line in docs.pin_table().splitlines()[2:]]
    assert len(rows) == len(versions.PINS)
    for row, pin in zip(rows, versions.PINS, strict=True):
        assert row.startswith(f"| `{pin.name}` | {pin.datasource} | `{pin.reference}` | {pin.released} | ")
        end = pin.end_of_support or "none published"
        end += " (estimated)" if pin.estimated else ""
        assert f"| {end} | {pin.read} |" in row
        assert row.endswith(f"| {pin.newer.replace('|', chr(92) + '|') or 'none seen'} |")


# Images the docs name on purpose although they are not pins: the official -gpu images, rejected for GPU training.
NAMED_NOT_PINNED = {"tensorflow/tensorflow:2.18.0-gpu", "tensorflow/tensorflow:2.21.0-gpu"}


def test_the_docs_name_only_current_images():
    """An image of a pinned repository in README.md or docs/*.md is the pinned tag (no stale tag after a bump)."""
    pinned = {p.reference for p in versions.PINS if p.datasource == "docker"}
    stale = []
    for doc in [docs.ROOT / "README.md", *sorted((docs.ROOT / "docs").rglob("*.md"))]:
        text = doc.read_text()
        for package in {p.package for p in versions.PINS if p.datasource == "docker"}:
            for match in re.finditer(re.escape(package) + r":([A-Za-z0-9._-]+)", text):
                reference = f"{package}:{match.group(1)}"
                if reference not in pinned | NAMED_NOT_PINNED:
                    stale.append(f"{doc.name}:{text.count(chr(10), 0, match.start()) + 1}: {reference}")
    assert stale == []
