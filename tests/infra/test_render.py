"""The `gpuplane render` contract (README): files, determinism, and the exit-2 path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.infra.cli import app

runner = CliRunner()


def render(stack: str, out: Path, *extra: str) -> None:
    result = runner.invoke(app, ["render", stack, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def dev_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("render") / "dev"
    render("dev", out)
    return out


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_render_is_byte_identical_twice(dev_out, tmp_path):
    again = tmp_path / "again"
    render("dev", again)
    assert tree(dev_out) == tree(again)
    assert "plan.json" in tree(again)
    assert "tfplan.json" in tree(again)  # the AWS side as a Terraform plan (tests/infra/test_tfplan.py)


def test_plan_json_follows_the_contract(dev_out):
    plan = json.loads((dev_out / "plan.json").read_text())
    assert set(plan) == {"project", "stack", "config", "resources", "outputs"}
    assert (plan["project"], plan["stack"]) == ("gpuplane", "dev")
    assert plan["config"]["aws:region"] == "us-west-2"
    assert plan["config"]["gpuplane:profile"] == "dev"
    keys = {
        "urn",
        "type",
        "name",
        "custom",
        "parent",
        "dependencies",
        "provider",
        "protect",
        "retainOnDelete",
        "deletedWith",
        "inputs",
    }
    urns = {r["urn"] for r in plan["resources"]}
    for resource in plan["resources"]:
        assert set(resource) == keys
        assert resource["parent"] is None or resource["parent"] in urns or resource["parent"].endswith("gpuplane-dev")
        assert set(resource["dependencies"]) <= urns, resource["urn"]
        assert resource["protect"] is False and resource["retainOnDelete"] is False
    assert [r["urn"] for r in plan["resources"]] == sorted(urns)
    types = {r["type"] for r in plan["resources"]}
    assert {
        "gpuplane:index:Platform",
        "aws:ec2/vpc:Vpc",
        "aws:eks/cluster:Cluster",
        "aws:eks/nodeGroup:NodeGroup",
    } <= types
    groups = [r for r in plan["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup"]
    assert {g["inputs"]["labels"]["gpuplane.io/node-group"] for g in groups} == {"system", "gpu"}
    assert {g["inputs"]["nodeGroupNamePrefix"] for g in groups} == {"system-", "gpu-"}
    # camelCase provider property names, as the engine receives them
    assert "scalingConfig" in groups[0]["inputs"] and "scaling_config" not in groups[0]["inputs"]
    assert plan["outputs"]["kubeconfig"] == "[secret]"
    assert plan["outputs"]["clusterName"] == "gpuplane-dev"


def test_secrets_never_reach_the_plan(dev_out):
    text = (dev_out / "plan.json").read_text()
    assert "certificate-authority-data" not in text  # the kubeconfig is secret, so its content is absent
    provider = next(r for r in json.loads(text)["resources"] if r["type"] == "pulumi:providers:kubernetes")
    assert provider["inputs"]["kubeconfig"] == "[secret]"


def test_picture_shows_components_and_node_groups(dev_out):
    picture = (dev_out / "stack.md").read_text()
    assert "```mermaid" in picture and "flowchart TB" in picture
    for label in ("Platform: gpuplane-dev", "Cluster: gpuplane-dev-cluster", "NodeGroup: gpuplane-dev-gpu"):
        assert label in picture
    assert "g5.xlarge, g5.2xlarge<br/>AL2023_x86_64_NVIDIA, SPOT, 0-2 nodes" in picture
    assert " --> " in picture


def test_manifests_and_helm_dirs_exist_and_hold_yaml(dev_out):
    for folder in ("manifests", "helm"):
        assert (dev_out / folder).is_dir()
        for path in (dev_out / folder).rglob("*.yaml"):  # manifests/runs/: runs `gpuplane train` submits
            document = yaml.safe_load(path.read_text())
            assert isinstance(document, dict)


def test_observability_files_are_what_the_tools_take(dev_out):
    """The alert rules as a rule file (promtool, AMP) and each dashboard as importable JSON (issue 29)."""
    rules = yaml.safe_load((dev_out / "observability" / "rules-gpuplane.yaml").read_text())
    manifest = yaml.safe_load((dev_out / "manifests" / "prometheusrule-monitoring-gpuplane.yaml").read_text())
    assert rules == {"groups": manifest["spec"]["groups"]}
    boards = sorted(p.name for p in (dev_out / "observability" / "dashboards").glob("*.json"))
    assert boards == ["gpuplane-gpus.json", "gpuplane-queue.json", "gpuplane-serving.json"]
    for name in boards:
        board = json.loads((dev_out / "observability" / "dashboards" / name).read_text())
        assert board["templating"]["list"][0]["name"] == "datasource"
    stack_md = (dev_out / "stack.md").read_text()
    assert "## Metrics, alerts and node repair" in stack_md
    assert "| `gpu` | on, 1 at a time, stops above 1 unhealthy, 8 overrides |" in stack_md
    assert "GpuXidError" in stack_md


def test_summary_names_observability_and_repair(tmp_path):
    result = runner.invoke(app, ["render", "dev", "--out", str(tmp_path / "dev"), "--json"])
    assert result.exit_code == 0, result.output
    facts = json.loads(result.output[result.output.index("{") :])
    assert facts["observability"]["metrics"] == "prometheus"
    assert "TrainingRunsWaiting" in facts["observability"]["alerts"]
    assert {g["name"]: g["repair"].split(",")[0] for g in facts["nodeGroups"]} == {"gpu": "on", "system": "on"}


def test_summary_table_is_printed(tmp_path):
    result = runner.invoke(app, ["render", "prod", "--out", str(tmp_path / "prod")])
    assert result.exit_code == 0
    assert "gpuplane/prod (prod) in us-west-2" in result.output
    assert "private only" in result.output
    assert "g5.xlarge" in result.output


def test_invalid_config_exits_2_and_writes_nothing(tmp_path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.bad.yaml").write_text(
        "config:\n  aws:region: us-west-2\n  gpuplane:profile: dev\n"
        "  gpuplane:cluster:\n    publicAccessCidrs: [1.2.3.4/32]\n"
        "  gpuplane:nodeGroups:\n    - name: gpu\n      kind: gpu\n      instanceTypes: [m6i.large]\n"
    )
    out = tmp_path / "out"
    result = runner.invoke(app, ["render", "bad", "--out", str(out), "--stacks-dir", str(stacks)])
    assert result.exit_code == 2
    assert "gpuplane:nodeGroups[0].instanceTypes: ['m6i.large'] have no GPU" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [stacks]


def test_invalid_config_keeps_a_previous_render(tmp_path, dev_out):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-west-2\n  gpuplane:bogus: 1\n")
    out = tmp_path / "out"
    render("dev", out)
    before = tree(out)
    result = runner.invoke(app, ["render", "dev", "--out", str(out), "--stacks-dir", str(stacks)])
    assert result.exit_code == 2
    assert "gpuplane:bogus: unknown key" in result.output
    assert tree(out) == before


def test_unknown_stack_exits_2(tmp_path):
    result = runner.invoke(app, ["render", "staging", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "known stacks: dev, prod" in result.output


def test_schema_lists_every_top_level_key_with_defaults():
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert set(schema["properties"]) == {
        "profile",
        "clusterName",
        "network",
        "cluster",
        "nodeGroups",
        "tags",
        "workloadNamespace",
        "storage",
        "autoscaler",
        "observability",
        "serving",
        "training",
        "ingressClass",
        "queue",
    }
    assert schema["additionalProperties"] is False
    group = schema["$defs"]["NodeGroupArgs"]["properties"]
    assert group["capacityType"]["default"] == "ON_DEMAND"
    assert "Default" in group["minSize"]["description"]


def test_render_is_identical_across_processes_and_hash_seeds(tmp_path):
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [sys.executable, "-m", "gpuplane.infra.cli", "render", "prod", "--out", str(out)], check=True, env=env
        )
        outs.append(tree(out))
    assert outs[0] == outs[1]
