"""Generate the docs that restate code, so they cannot drift: the config reference and the table of pins.

`python -m gpuplane.infra.docs` rewrites the block between the markers in docs/config-reference.md (every config
key, from the config models; the descriptions live where the fields are declared, components/config/) and in
docs/versions.md (every pinned image and chart, from manifests/versions.py). A test fails when a document and the
code disagree.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import BaseModel

from gpuplane.components.config import PlatformArgs
from gpuplane.manifests import versions

ROOT = Path(__file__).resolve().parent.parent
CONFIG_DOC = ROOT / "docs" / "config-reference.md"
START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"
VERSIONS_DOC = ROOT / "docs" / "versions.md"
PINS_START, PINS_END = "<!-- pins:start -->", "<!-- pins:end -->"

SCHEMA_TITLE = "gpuplane stack config (keys under the gpuplane: namespace)"

# An example value for each key whose default is unset or empty (what to write there), by the key's path as
# the reference prints it. Keys with a default take the default (an enum: its first other value) unless listed
# here. tests/infra/test_docs.py checks that every key has one and that each validates against the key's
# schema, so an example cannot name a type, a bound or a value the config refuses.
EXAMPLES: dict[str, Any] = {
    "gpuplane:clusterName": "vision-dev",
    "gpuplane:network": {"azCount": 3},
    "gpuplane:cluster": {"publicAccessCidrs": ["198.51.100.0/24"]},
    "gpuplane:nodeGroups": [
        {"name": "system", "instanceTypes": ["m6i.large"]},
        {"name": "gpu", "kind": "gpu", "instanceTypes": ["g6.xlarge"], "minSize": 0, "maxSize": 2},
    ],
    "gpuplane:storage": {"volumes": [{"name": "models"}, {"name": "scratch", "provisioning": "dynamic"}]},
    "gpuplane:autoscaler": {"scaleDownUnneededTime": "5m"},
    "gpuplane:observability": {"dcgmExporter": False},
    "gpuplane:tags": {"team": "vision", "cost-center": "ml-42"},
    "gpuplane:serving": [
        {
            "name": "mobilenet",
            "model": {"name": "mobilenet", "import": {"source": "https://example.com/mobilenet.tar.gz"}},
            "variants": [{"name": "gpu", "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}}],
        }
    ],
    "gpuplane:training": [
        {
            "name": "mnist",
            "strategy": "multiWorkerMirrored",
            "command": ["python", "/data/mnist/train.py"],
            "worker": {"replicas": 2, "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
        }
    ],
    "gpuplane:ingressClass": "alb",
    "gpuplane:queue": {"maxGpus": 8},
    "network.availabilityZones": ["us-west-2a", "us-west-2b"],
    "cluster.publicAccessCidrs": ["198.51.100.0/24"],
    "cluster.adminPrincipals": ["arn:aws:iam::111122223333:role/platform-admins"],
    "cluster.logTypes": ["api", "audit", "authenticator", "controllerManager", "scheduler"],
    "cluster.apiAccessCidrs": ["10.20.0.0/16"],
    "cluster.apiAccessSecurityGroupIds": ["sg-0123456789abcdef0"],
    "cluster.kmsKeyAdministrators": ["arn:aws:iam::111122223333:role/key-admins"],
    "nodeGroups[].name": "gpu",
    "nodeGroups[].instanceTypes": ["g6.xlarge", "g6.2xlarge"],
    "nodeGroups[].desiredSize": 1,
    "nodeGroups[].diskSizeGib": 200,
    "nodeGroups[].labels": {"team": "vision"},
    "nodeGroups[].taints": [{"key": "dedicated", "value": "training", "effect": "NoSchedule"}],
    "nodeGroups[].sharing": {"timeSlicing": {"replicas": 4}},
    "nodeGroups[].capacityReservation": {"preference": "open"},
    "nodeGroups[].placementGroup": False,
    "nodeGroups[].taints[].key": "dedicated",
    "nodeGroups[].taints[].value": "training",
    "nodeGroups[].sharing.timeSlicing": {"replicas": 4},
    "nodeGroups[].sharing.mps": {"replicas": 2},
    "nodeGroups[].sharing.mig": {"profile": "all-1g.10gb"},
    "nodeGroups[].sharing.timeSlicing.replicas": 4,
    "nodeGroups[].sharing.mps.replicas": 2,
    "nodeGroups[].sharing.mig.profile": "all-1g.10gb",
    "nodeGroups[].capacityReservation.id": "cr-0123456789abcdef0",
    "nodeGroups[].capacityReservation.resourceGroupArn": (
        "arn:aws:resource-groups:us-west-2:111122223333:group/gpu-reservations"
    ),
    "nodeGroups[].capacityReservation.availabilityZone": "us-west-2a",
    "nodeGroups[].capacityReservation.instanceCount": 2,
    "nodeGroups[].capacityReservation.endTime": "2026-12-01T11:30:00Z",
    "nodeGroups[].repair": {"maxParallelNodesRepairedCount": 2},
    "nodeGroups[].repair.maxUnhealthyNodeThresholdCount": 2,
    "nodeGroups[].repair.maxUnhealthyNodeThresholdPercentage": 20,
    "nodeGroups[].repair.maxParallelNodesRepairedCount": 2,
    "nodeGroups[].repair.maxParallelNodesRepairedPercentage": 50,
    "nodeGroups[].repair.nodeRepairConfigOverrides": [
        {
            "nodeMonitoringCondition": "AcceleratedHardwareReady",
            "nodeUnhealthyReason": "NvidiaXID79Error",
            "minRepairWaitTimeMins": 10,
            "repairAction": "Replace",
        }
    ],
    "nodeGroups[].repair.nodeRepairConfigOverrides[].nodeUnhealthyReason": "NvidiaXID79Error",
    "nodeGroups[].repair.nodeRepairConfigOverrides[].minRepairWaitTimeMins": 10,
    "observability.alertTopicArn": "arn:aws:sns:us-west-2:111122223333:ml-alerts",
    "serving[].variants[].autoscaling.targetCpuUtilization": 70,
    "serving[].variants[].autoscaling.target": 50,
    "storage.volumes": [{"name": "models"}, {"name": "datasets", "path": "/datasets"}],
    "storage.existingFileSystemId": "fs-0123456789abcdef0",
    "storage.provisionedThroughputMibps": 256,
    "storage.volumes[].name": "datasets",
    "storage.volumes[].path": "/datasets",
    "queue.maxGpus": 8,
    "serving[].name": "mobilenet",
    "serving[].model": {"name": "mobilenet", "import": {"source": "s3://models/mobilenet.tar.gz"}},
    "serving[].variants": [{"name": "cpu", "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}}],
    "serving[].batching": {"maxBatchSize": 32},
    "serving[].model.name": "mobilenet",
    "serving[].model.path": "vision/mobilenet",
    "serving[].model.fromTraining": "mnist",
    "serving[].model.import": {"source": "https://example.com/mobilenet.tar.gz"},
    "serving[].model.import.source": "s3://models/mobilenet.tar.gz",
    "serving[].model.import.sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "serving[].variants[].name": "gpu",
    "serving[].variants[].resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1},
    "serving[].variants[].autoscaling": {"minReplicas": 1, "maxReplicas": 3},
    "serving[].variants[].nodeGroups": ["serving"],
    "serving[].variants[].image": f"{versions.TF_SERVING_GPU_IMAGE}",
    "serving[].variants[].tensorflowVersion": "2.21.0",
    "serving[].variants[].minComputeCapability": "8.0",
    "serving[].variants[].resources.requests": {"cpu": "500m", "memory": "1Gi"},
    "serving[].variants[].resources.limits": {"cpu": "2", "memory": "8Gi"},
    "serving[].variants[].resources.gpus": 1,
    "serving[].variants[].autoscaling.maxReplicas": 3,
    "serving[].batching.numBatchThreads": 4,
    "training[].name": "mnist",
    "training[].command": ["python", "/data/mnist/train.py", "--model-dir=/logs/mnist"],
    "training[].chief": {"resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "training[].worker": {"replicas": 2, "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "training[].ps": {"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
    "training[].volumes": [{"volume": "datasets", "mountPath": "/data"}],
    "training[].dataImport": {"source": "s3://datasets/mnist.tar.gz", "path": "mnist"},
    "training[].tensorboard": {},
    "training[].image": "registry.example.com/vision/train:2.21.0",
    "training[].tensorflowVersion": "2.21.0",
    "training[].minComputeCapability": "8.0",
    "training[].runId": "mnist-lr-0.01",
    "training[].chief.resources": {"limits": {"cpu": "4", "memory": "16Gi"}, "gpus": 1},
    "training[].chief.nodeGroups": ["gpu"],
    "training[].volumes[].volume": "datasets",
    "training[].volumes[].mountPath": "/data",
    "training[].dataImport.source": "s3://datasets/mnist.tar.gz",
    "training[].dataImport.path": "mnist",
    "training[].dataImport.sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "training[].tensorboard.path": "mnist",
    "training[].export": {"path": "mnist"},
    "training[].export.path": "mnist",
}


def config_schema() -> dict[str, Any]:
    """The JSON Schema `gpuplane schema` prints: the `gpuplane:` config, every section in `$defs`."""
    document = PlatformArgs.model_json_schema(by_alias=True)
    document["title"] = SCHEMA_TITLE
    return document


def _models() -> dict[str, type[BaseModel]]:
    """Every config model reachable from PlatformArgs, by class name (the schema's `$defs` names)."""
    found: dict[str, type[BaseModel]] = {}

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation.__name__ not in found:
            found[annotation.__name__] = annotation
            for field in annotation.model_fields.values():
                visit(field.annotation)
        for arg in get_args(annotation):
            visit(arg)

    visit(PlatformArgs)
    return found


def _ref(prop: dict[str, Any]) -> str | None:
    """The `$defs` name of the object a key holds (itself, in a list, or optional), if it holds one."""
    for alt in [prop, *prop.get("anyOf", [])]:
        if "$ref" in alt:
            return str(alt["$ref"]).rsplit("/", 1)[-1]
        items = alt.get("items")
        if isinstance(items, dict) and "$ref" in items:
            return str(items["$ref"]).rsplit("/", 1)[-1]
    return None


def _is_list(prop: dict[str, Any]) -> bool:
    return any(alt.get("type") == "array" for alt in [prop, *prop.get("anyOf", [])])


def _type(prop: dict[str, Any]) -> str:
    """A key's type in words: `integer`, `list of string`, `map of string to string`, a section's name."""
    if "$ref" in prop:
        name = str(prop["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in prop:
        return " or ".join(_type(alt) for alt in prop["anyOf"] if alt.get("type") != "null")
    kind = prop.get("type")
    if kind == "array":
        return f"list of {_type(prop['items'])}"
    if kind == "object":
        values = prop.get("additionalProperties")
        return f"map of string to {_type(values)}" if isinstance(values, dict) else "mapping"
    return str(kind)


def _flow(value: Any) -> str:
    """A value as it is written in a stack file (YAML flow style), in backticks."""
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000).strip()
    text = text.removesuffix("\n...").strip()
    return "`" + text.replace("|", "\\|") + "`"


def _bounds(prop: dict[str, Any]) -> list[str]:
    """What the schema allows beyond the type: values, ranges, lengths, counts, patterns (and of list items)."""
    out: list[str] = []
    for alt in [prop, *prop.get("anyOf", [])]:
        if "enum" in alt:
            out.append("one of " + ", ".join(f"`{v}`" for v in alt["enum"]))
        low, high = alt.get("minimum"), alt.get("maximum")
        if low is not None and high is not None:
            out.append(f"{low} to {high}")
        elif low is not None:
            out.append(f">= {low}")
        elif high is not None:
            out.append(f"<= {high}")
        if "exclusiveMinimum" in alt:
            out.append(f"> {alt['exclusiveMinimum']}")
        if "exclusiveMaximum" in alt:
            out.append(f"< {alt['exclusiveMaximum']}")
        for key, what in (
            ("minLength", "length >="),
            ("maxLength", "length <="),
            ("minItems", "items >="),
            ("maxItems", "items <="),
        ):
            if key in alt:
                out.append(f"{what} {alt[key]}")
        if "pattern" in alt:
            out.append("matches `" + str(alt["pattern"]).replace("|", "\\|") + "`")
        items = alt.get("items")
        if isinstance(items, dict) and "$ref" not in items:
            out += [f"each: {bound}" for bound in _bounds(items)]
    return out


def _default(model: type[BaseModel] | None, name: str, prop: dict[str, Any], required: bool) -> tuple[str, Any]:
    """(how the default reads, the default value or None) of one key.

    A section's own defaults are in its table: a key that holds a section reads "see its section" (its
    default object may depend on the profile, e.g. the cluster's endpoint, and is not built here).
    """
    if required:
        return "required", None
    if "default" in prop:
        value = prop["default"]
    elif _ref(prop) is not None and not _is_list(prop):
        return "see its section", None
    else:
        assert model is not None, name
        value = model.model_fields[name].get_default(call_default_factory=True)
        if isinstance(value, list):  # a list of sections (storage volumes): what is set beyond their defaults
            value = [
                v.model_dump(by_alias=True, exclude_defaults=True) if isinstance(v, BaseModel) else v for v in value
            ]
    if value is None:
        return "unset (see meaning)", None
    return _flow(value), value


def example(path: str, prop: dict[str, Any], default: Any) -> Any:
    """The example value of one key: EXAMPLES, else a value it takes other than an empty one (see EXAMPLES)."""
    if path in EXAMPLES:
        return EXAMPLES[path]
    enum = next((alt["enum"] for alt in [prop, *prop.get("anyOf", [])] if "enum" in alt), None)
    if enum is not None:
        return next((v for v in enum if v != default), enum[0])
    if isinstance(prop.get("type"), str) and prop["type"] == "boolean":
        return not default
    if default not in (None, [], {}, ""):
        return default
    number = next((alt for alt in [prop, *prop.get("anyOf", [])] if alt.get("type") in ("integer", "number")), None)
    if number is not None and "minimum" in number:  # a count or size without a default: its least value
        return number["minimum"]
    raise KeyError(f"{path}: no example; add one to EXAMPLES in infra/docs.py")


def reference_rows() -> list[tuple[str, str, list[tuple[str, dict[str, Any], bool]]]]:
    """(section name, the paths it is found at, [(key path, property schema, required)]) per config section.

    The sections are the schema's objects in the order a reader meets them (depth first from the top level);
    an object used at several places (the resources of serving variants and of training roles) is one
    section, listed under its first path with the others named.
    """
    schema = config_schema()
    defs: dict[str, Any] = schema["$defs"]
    order: list[str] = []
    paths: dict[str, list[str]] = {}

    def walk(name: str, node: dict[str, Any], prefix: str) -> None:
        first = name not in paths
        paths.setdefault(name, []).append(prefix)
        if not first:
            return
        order.append(name)
        for key, prop in node["properties"].items():
            child = _ref(prop)
            if child is not None:
                base = f"gpuplane:{key}" if name == "PlatformArgs" else f"{prefix}.{key}"
                walk(child, defs[child], base.removeprefix("gpuplane:") + ("[]" if _is_list(prop) else ""))

    walk("PlatformArgs", schema, "gpuplane:")
    sections = []
    for name in order:
        node = schema if name == "PlatformArgs" else defs[name]
        prefix = paths[name][0]
        required = set(node.get("required", []))
        rows = [
            (f"gpuplane:{key}" if name == "PlatformArgs" else f"{prefix}.{key}", prop, key in required)
            for key, prop in node["properties"].items()
        ]
        sections.append((name, ", ".join(f"`{p}`" for p in paths[name]), rows))
    return sections


def config_reference() -> str:
    """One table per config section: every key with its type, default, bounds, an example and its meaning."""
    models = _models()
    parts = []
    for name, where, rows in reference_rows():
        model = models.get(name)
        lines = [
            f"## {name}",
            "",
            "The top level: keys `gpuplane:<key>` of the stack file." if name == "PlatformArgs" else f"At {where}.",
            "",
            "| key | meaning | type | default | allowed | example |",
            "|---|---|---|---|---|---|",
        ]
        for path, prop, required in rows:
            key = path.rsplit(".", 1)[-1] if "." in path else path.removeprefix("gpuplane:")
            field_name = next(
                (n for n, f in (model.model_fields.items() if model else []) if (f.alias or n) == key), key
            )
            shown, value = _default(model, field_name, prop, required)
            bounds = "; ".join(_bounds(prop)) or "-"
            description = str(prop.get("description", "")).replace("|", "\\|")
            lines.append(
                f"| `{path}` | {description} | {_type(prop)} | {shown} | {bounds} "
                f"| {_flow(example(path, prop, value))} |"
            )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def pin_table() -> str:
    """One row per pin of manifests/versions.py: version, dates, the vendor's support policy, newer releases."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|") or "none seen"

    rows = []
    for pin in versions.PINS:
        end = pin.end_of_support or "none published"
        if pin.end_of_support and pin.estimated:
            end += " (estimated)"
        rows.append(
            f"| `{pin.name}` | {pin.datasource} | `{pin.reference}` | {pin.released} | {end} | {pin.read} "
            f"| {cell(pin.source)} | {cell(pin.support)} | {cell(pin.newer)} |"
        )
    header = (
        "| pin | kind | image or chart | released | end of support | read | what was read | support policy "
        "| newer, not taken |\n|---|---|---|---|---|---|---|---|---|"
    )
    return header + "\n" + "\n".join(rows)


def _rewrite(path: Path, start: str, end: str, content: str) -> bool:
    text = path.read_text()
    block = f"{start}\n{content}\n{end}"
    new = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    if new != text:
        path.write_text(new)
    return new != text


def update_config_reference(path: Path = CONFIG_DOC) -> bool:
    """Rewrite the reference block in `path`; True if it changed."""
    return _rewrite(path, START, END, config_reference())


def update_versions_doc(path: Path = VERSIONS_DOC) -> bool:
    """Rewrite the table of pins in `path`; True if it changed."""
    return _rewrite(path, PINS_START, PINS_END, pin_table())


def main(argv: list[str] | None = None) -> None:
    """`python -m gpuplane.infra.docs`: rewrite the generated blocks of the two pages (after a pin or schema change)."""
    import argparse  # noqa: PLC0415 - only the command needs it

    parser = argparse.ArgumentParser(
        prog="python -m gpuplane.infra.docs",
        description="Regenerate docs/config-reference.md (the stack config reference) and the table of pins in "
        "docs/versions.md from the code; tests/infra/test_docs.py fails while either is stale.",
    )
    parser.parse_args(argv)
    changed = update_config_reference()
    print("docs/config-reference.md updated" if changed else "docs/config-reference.md already up to date")
    print("docs/versions.md updated" if update_versions_doc() else "docs/versions.md already up to date")


if __name__ == "__main__":  # pragma: no cover
    main()
