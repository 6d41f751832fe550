"""The GPU Operator's `dcgmExporter` values, as its chart copies them into the ClusterPolicy, are valid for its CRD.

The API server prunes what a CRD's structural schema does not declare, without an error: a `valueFrom` in
`dcgmExporter.env` vanished that way and left the exporter's host-engine address `:5555`. The schema is the
`dcgmExporter` subtree of the ClusterPolicy CRD vendored from the pinned tag (tests/fixtures/crds, its header
names the source); the copy follows the chart's templates/clusterpolicy.yaml at the same tag.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.components.gpu import gpu_operator_values
from gpuplane.components.plan.gpu_nodes import GpuPlan
from gpuplane.manifests import observability, versions

SCHEMA_FILE = Path(__file__).parents[1] / "fixtures" / "crds" / "clusterpolicy-v26.7.0-dcgmexporter.yaml"
SCHEMA: dict[str, Any] = yaml.safe_load(SCHEMA_FILE.read_text())

# templates/clusterpolicy.yaml at v26.7.0, `dcgmExporter:`: the keys it copies from the values as they are, and
# `config`, of which it copies `name` only (`create` and `data` feed templates/dcgm_exporter_config.yaml).
COPIED = {
    "enabled", "annotations", "repository", "image", "version", "imagePullPolicy", "imagePullSecrets", "resources",
    "env", "args", "serviceMonitor", "service", "hostPID", "hostNetwork", "hpcJobMapping", "enablePodLabels",
    "enablePodUID", "podLabelAllowlistRegex",
}  # fmt: skip
CHART_ONLY_CONFIG = {"create", "data"}


def test_the_vendored_schema_is_the_pinned_operators():
    header = SCHEMA_FILE.read_text().split("\n", 6)[:6]
    assert any(f"tag {versions.GPU_OPERATOR_VERSION} " in line for line in header)
    assert SCHEMA["description"] == "DCGMExporter spec"


def cluster_policy_dcgm_exporter(values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """What the chart writes into `spec.dcgmExporter`, and the values it reads nowhere."""
    spec = {k: v for k, v in values.items() if k in COPIED}
    unread = [k for k in values if k not in COPIED | {"config"}]
    if "config" in values:
        config = values["config"]
        if config.get("name"):
            spec["config"] = {"name": config["name"]}
        unread += [f"config.{k}" for k in config if k not in {"name"} | CHART_ONLY_CONFIG]
    return spec, unread


def problems(value: Any, schema: dict[str, Any], where: str = "dcgmExporter") -> list[str]:
    """What a structural schema refuses or prunes in `value`: types, enums, required and undeclared fields."""
    if schema.get("x-kubernetes-int-or-string"):
        return [] if isinstance(value, (int, str)) and not isinstance(value, bool) else [f"{where}: not int-or-string"]
    kind = schema.get("type")
    expected = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int}.get(kind or "")
    if expected and (not isinstance(value, expected) or (expected is int and isinstance(value, bool))):
        return [f"{where}: {type(value).__name__} where the CRD has {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where}: {value!r} is not one of {schema['enum']}"]
    found: list[str] = []
    if kind == "array":
        for i, item in enumerate(value):
            found += problems(item, schema.get("items", {}), f"{where}[{i}]")
    if kind == "object" and not schema.get("x-kubernetes-preserve-unknown-fields"):
        declared = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in declared:
                found += problems(item, declared[key], f"{where}.{key}")
            elif isinstance(extra, dict):
                found += problems(item, extra, f"{where}.{key}")
            else:
                found.append(f"{where}.{key}: not in the CRD, the API server drops it")
        found += [f"{where}.{key}: required" for key in schema.get("required", []) if key not in value]
    return found


def test_the_check_catches_a_dropped_value_from():
    env = [{"name": "NODE_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}]
    assert problems({"env": env}, SCHEMA) == ["dcgmExporter.env[0].valueFrom: not in the CRD, the API server drops it"]
    assert problems({"hostNetwork": "yes"}, SCHEMA) == ["dcgmExporter.hostNetwork: str where the CRD has boolean"]
    relabel = {"serviceMonitor": {"relabelings": [{"action": "labelDrop"}]}}
    assert problems(relabel, SCHEMA)[0].startswith("dcgmExporter.serviceMonitor.relabelings[0].action: 'labelDrop'")


@pytest.mark.parametrize("remote_hostengine", [True, False])
@pytest.mark.parametrize("metrics", [True, False])
def test_operator_dcgm_exporter_values_are_valid_for_the_cluster_policy(remote_hostengine, metrics):
    plan = GpuPlan(groups=())
    values = gpu_operator_values(plan, dcgm_exporter=True, metrics=metrics, remote_hostengine=remote_hostengine)
    spec, unread = cluster_policy_dcgm_exporter(values["dcgmExporter"])
    assert unread == []
    assert problems(spec, SCHEMA) == []
    # the counters reach the exporter: the ClusterPolicy names the ConfigMap the chart makes from `data`
    assert spec["config"] == {"name": observability.DCGM_COUNTERS_CONFIG_MAP}
    assert values["dcgmExporter"]["config"]["create"] is True
    assert "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter" in values["dcgmExporter"]["config"]["data"]
    if remote_hostengine:
        # the operator's way to an engine on the node: localhost on the host's network, no valueFrom
        assert spec["env"] == [{"name": "DCGM_REMOTE_HOSTENGINE_INFO", "value": "localhost:5555"}]
        assert spec["hostNetwork"] is True
    else:
        assert spec["env"] == [] and "hostNetwork" not in spec


def test_an_operator_stack_with_the_node_agent_renders_a_valid_cluster_policy(run_platform):
    """The stack's own render: an operator group, repair on (the node monitoring agent's engine), metrics on."""
    rec = run_platform(
        {
            "nodeGroups": [
                {"name": "system", "instanceTypes": ["m6i.large"]},
                {"name": "op", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "driver": "operator"},
            ]
        }
    )
    (operator,) = [r for r in rec.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "gpu-operator"]
    spec, unread = cluster_policy_dcgm_exporter(operator.inputs["values"]["dcgmExporter"])
    assert unread == [] and problems(spec, SCHEMA) == []
    assert spec["env"] == [{"name": "DCGM_REMOTE_HOSTENGINE_INFO", "value": "localhost:5555"}]
    assert spec["serviceMonitor"]["relabelings"][0] == {
        "sourceLabels": ["__meta_kubernetes_pod_node_name"],
        "targetLabel": "node",
    }
