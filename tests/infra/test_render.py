"""The `gpuplane render` contract (docs/getting-started.md): files, determinism, and the exit-2 path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.components.plan import cost
from gpuplane.infra import render as render_module
from gpuplane.infra.cli import app
from gpuplane.infra.render import reduce_edges
from tests import shipped
from tests.conftest import DEV_CLUSTER, stack_config

runner = CliRunner()


def render(stack: str, out: Path, *extra: str) -> None:
    result = runner.invoke(app, ["render", stack, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def dev_rendered(tmp_path_factory) -> tuple[Path, dict[str, Any]]:
    """dev rendered once for the tests that only read the folder or its summary (`--json`; stderr apart)."""
    out = tmp_path_factory.mktemp("render") / "dev"
    result = runner.invoke(app, ["render", "dev", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return out, json.loads(result.stdout)


@pytest.fixture(scope="module")
def dev_out(dev_rendered) -> Path:
    return dev_rendered[0]


@pytest.fixture(scope="module")
def prod_rendered(tmp_path_factory) -> tuple[Path, str]:
    """prod rendered once, with its summary table as printed, for the tests that only read them."""
    out = tmp_path_factory.mktemp("render") / "prod"
    result = runner.invoke(app, ["render", "prod", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output


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
        # customTimeouts only where the program sets a wait of its own (the node groups' updates)
        assert set(resource) - {"customTimeouts"} == keys
        if "customTimeouts" in resource:
            assert resource["type"] in {"aws:eks/nodeGroup:NodeGroup", "kubernetes:batch/v1:Job"}, resource["urn"]
        assert resource["parent"] is None or resource["parent"] in urns or resource["parent"].endswith("gpuplane-dev")
        assert set(resource["dependencies"]) <= urns, resource["urn"]
        assert resource["protect"] is False
        # kept when removed: only the autoscaler's discovery tags, which EKS writes on the group too
        discovery = resource["type"] == "aws:autoscaling/tag:Tag" and resource["inputs"]["tag"]["key"] in {
            "k8s.io/cluster-autoscaler/enabled",
            "k8s.io/cluster-autoscaler/gpuplane-dev",
        }
        assert resource["retainOnDelete"] is discovery, resource["urn"]
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
    """The alert rules as a rule file (promtool, AMP) and each dashboard as importable JSON."""
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
    assert "GpuXidNeedsNodeRepair" in stack_md and "GpuXidApplicationFault" in stack_md


def test_summary_names_observability_and_repair(dev_rendered):
    facts = dev_rendered[1]
    assert facts["observability"]["metrics"] == "prometheus"
    assert "TrainingRunsWaiting" in facts["observability"]["alerts"]
    assert {g["name"]: g["repair"].split(",")[0] for g in facts["nodeGroups"]} == {"gpu": "on", "system": "on"}


def test_summary_table_is_printed(prod_rendered):
    prod, output = prod_rendered
    assert "gpuplane/prod (prod) in us-west-2" in output
    assert "private only" in output
    assert "g5.xlarge" in output
    # The cost, by hand (prices: us-east-1 on 2026-07-20, standing in for us-west-2; facts/prices.py services):
    # EKS 0.10 + gpu 1 x (g5.xlarge 1.006 + 100 GiB gp3) + system 2 x (m6i.xlarge 0.192 + 50 GiB gp3)
    # + 3 NAT x (0.045 + 0.005) + EFS 300 GiB x 0.30/730 + 5 KMS keys x 1/730 (the 5th: AMP's alert topic's)
    # + prod's default metrics backend, managedPrometheus: 1 collector x 0.04 + 1,000 samples/s x
    # 3,600 / 10M x 0.90 + a month of those samples at 2 bytes x 0.03/GB-month, per hour.
    gp3 = 0.08 / 730
    amp = 0.04 + 1000 * 3600 / 1e7 * 0.90 + 1000 * 3600 * 730 * 2 / 1e9 * 0.03 / 730
    idle = 0.10 + (1.006 + 100 * gp3) + 2 * (0.192 + 50 * gp3) + 0.15 + 300 * 0.30 / 730 + 5 / 730 + amp
    top = idle + 3 * (1.006 + 100 * gp3) + 2 * (0.192 + 50 * gp3)
    priced = json.loads((prod / "cost.json").read_text())
    assert priced["idle"] == pytest.approx(idle, abs=1e-3) and priced["max"] == pytest.approx(top, abs=1e-3)
    assert f"Cost: ${idle:,.2f}/h idle" in " ".join(output.split())
    assert "us-east-1 price (us-west-2 is not in the price table)" in " ".join(output.split())
    # The summary names the metrics backend and what it creates ; with AMP the in-cluster
    # release runs kube-state-metrics only, and the cost line says so instead of a Prometheus on the nodes.
    flat = " ".join(output.split())
    assert "metrics: managedPrometheus: AMP workspace + AWS managed collector (scrape config: observability/" in flat
    metrics_line = next(line for line in priced["lines"] if line["item"] == "metrics and alerts")
    ksm = "kube-state-metrics on the system nodes (AMP's collector scrapes it)"
    assert metrics_line["detail"] == f"{ksm}; 1 SNS topic(s)"
    assert not any("0.5 vCPU" in note for note in metrics_line["notes"])


def test_dev_idles_without_a_gpu_node_and_says_how_to_start_its_gpu_variant(dev_out):
    """dev's GPU serving variant is parked at 0 replicas: the idle stack keeps no GPU node up (<= $0.40/h)."""
    gp3 = 0.08 / 730
    gpu_node = 1.212 + 100 * gp3  # spot ceiling: the dearest listed type's on-demand price (g5.2xlarge)
    cpu_node = 0.096 + 50 * gp3  # m6i.large
    services = 0.10 + 0.05 + 300 * 0.30 / 730 + 2 / 730  # EKS, 1 NAT + IPv4, EFS at the volumes' size, 2 KMS keys
    services += 10 * gp3  # the in-cluster Prometheus's 10 GiB volume
    priced = json.loads((dev_out / "cost.json").read_text())
    assert priced["idle"] == pytest.approx(services + cpu_node, abs=1e-3)
    assert priced["idle"] <= 0.40
    assert priced["max"] == pytest.approx(services + 2 * gpu_node + 3 * cpu_node, abs=1e-3)
    gpu = next(line for line in priced["lines"] if line["item"] == "node group gpu")
    assert (gpu["idle"], priced["totalNote"], priced["warnings"]) == (0.0, "", [])
    assert gpu["notes"][-1] == (
        f"ml/mobilenet-gpu at 0 replicas: keeps no GPU node up; set its replicas to start it: +${gpu_node:.2f}/h "
        "per node it brings up"
    )
    assert priced["instancePrices"]["date"] == "2026-07-20"
    picture = (dev_out / "stack.md").read_text()
    assert "## Cost per hour (USD)" in picture and f"**{priced['idle']:,.2f}**" in picture
    # The one line that starts it is in the shipped stack file, with what it costs.
    stack = shipped.DEV.read_text()
    assert "          replicas: 0  # 1 starts it (a GPU node, see above)\n" in stack


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
    shutil.copytree(dev_out, out)  # a previous render, as it left its folder
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


def test_render_is_identical_across_processes_and_hash_seeds(tmp_path, prod_rendered):
    """A fresh process with another hash seed writes the bytes this process's render of prod wrote."""
    ours = os.environ.get("PYTHONHASHSEED", "random")
    seed = str(int(ours) + 1) if ours.isdigit() else "1"  # (a random seed is 1 once in 2**32 runs)
    out = tmp_path / f"seed{seed}"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    command = [sys.executable, "-m", "gpuplane.infra.cli", "render", "prod", "--out", str(out)]
    subprocess.run(command, check=True, env=env)
    assert tree(out) == tree(prod_rendered[0])


def _mermaid(picture: str) -> list[str]:
    return picture.split("```mermaid\n", 1)[1].split("\n```", 1)[0].splitlines()


def test_picture_is_well_formed_reduced_and_has_no_empty_boxes(dev_out):
    lines = [line.strip() for line in _mermaid((dev_out / "stack.md").read_text())]
    assert lines[0] == "flowchart TB"
    opened = [line for line in lines if line.startswith("subgraph ")]
    assert len(opened) == sum(1 for line in lines if line == "end")
    declared = {line.split("[", 1)[0].split()[-1] for line in lines if "[" in line}
    edges = [line.split(" --> ") for line in lines if " --> " in line]
    assert edges and all(a in declared and b in declared for a, b in edges)
    # No empty box: every subgraph holds a node or another subgraph (the ConfigFile box held nothing).
    for i, line in enumerate(lines):
        if line.startswith("subgraph "):
            assert lines[i + 1] == "direction TB" and lines[i + 2] != "end", line
    assert "ConfigFile" not in "\n".join(lines)
    # Reduced and grouped: 134 arrows before (each serving Deployment had about ten); now a few per box.
    assert len(edges) <= 45
    assert max(Counter(a for a, _ in edges).values()) <= 4
    # Each node group carries its cost.
    assert "0-2 nodes<br/>$0.00-2.45/h idle-max" in "\n".join(lines)


def test_the_total_names_an_unpriced_type_and_shows_the_idle_gpu_warning():
    groups = (
        cost.GroupUsage("big", ("p5e.48xlarge",), "ON_DEMAND", 0, 2),
        cost.GroupUsage(
            "p5", ("p5.48xlarge",), "ON_DEMAND", 0, 1, kept_up=1, kept_up_by=("ml/r-gpu",), gpu_units_per_node=8,
            gpu_units_held=1,
        ),
    )  # fmt: skip
    priced = cost.estimate(cost.StackUsage(region="us-east-1", groups=groups)).as_dict()
    caption = render_module.cost_caption(priced)
    assert caption.startswith(
        f"Cost: ${priced['idle']:,.2f}/h idle (${priced['idleMonthly']:,.0f} a month), ${priced['max']:,.2f}/h at "
        f"every group's maximum (${priced['maxMonthly']:,.0f} a month) (excludes p5e.48xlarge: no price);"
    )
    assert (
        "Warning: ml/r-gpu keep(s) 1 x p5.48xlarge up using 1 of its 8 GPU unit(s): the 7 idle cost $48.16/h" in caption
    )
    table = render_module.cost_markdown(priced)
    assert f"| **total** | excludes p5e.48xlarge: no price | **{priced['idle']:,.2f}** |" in table
    assert "**Warning:** ml/r-gpu keep(s) 1 x p5.48xlarge up" in table


def test_reduce_edges_keeps_every_path_and_drops_the_implied_arrows():
    assert reduce_edges({("a", "b"), ("b", "c"), ("a", "c")}) == {("a", "b"), ("b", "c")}
    # A cycle: b and c reach each other; a keeps a path to both, whatever is dropped.
    kept = reduce_edges({("a", "b"), ("a", "c"), ("b", "c"), ("c", "b")})
    assert {("b", "c"), ("c", "b")} <= kept and len(kept) == 3
    # A box reaches its members without an arrow: its arrow to what a member already reaches is implied.
    assert reduce_edges({("box", "z"), ("m", "z")}, {"box": {"m"}}) == {("m", "z")}


def test_json_summary_lists_workloads_runs_releases_sharing_and_cost(dev_rendered):
    dev, facts = dev_rendered  # (stderr has the dev stack's CIDR warning)
    by_name = {w["name"]: w for w in facts["workloads"]}
    assert by_name["ml/mobilenet-gpu"] == {
        "name": "ml/mobilenet-gpu",
        "kind": "Deployment",
        "nodeGroup": "gpu",
        "replicas": "0",
        "gpusPerReplica": 1,
    }
    assert by_name["ml/mobilenet-cpu"]["replicas"] == "1-3 (HPA)"
    assert facts["trainingRuns"] == [{"name": "mnist", "roles": {"chief": 1, "worker": 2, "ps": 1}}]
    assert {r["name"] for r in facts["helmReleases"]} >= {"nvidia-device-plugin", "cluster-autoscaler", "kueue"}
    assert {g["name"]: g["gpuSharing"] for g in facts["nodeGroups"]} == {"gpu": "none", "system": None}
    assert facts["cost"] == json.loads((dev / "cost.json").read_text())


def test_the_cost_page_table_matches_the_renders(dev_out, prod_rendered):
    """docs/cost.md's table quotes what the renders print: a change in prices or stacks must update it."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "cost.md").read_text()
    for stack, out in (("dev", dev_out), ("prod", prod_rendered[0])):
        priced = json.loads((out / "cost.json").read_text())
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{stack}` | $"))
        assert row.startswith(
            f"| `{stack}` | ${priced['idle']:,.2f}/h (~${round(priced['idleMonthly'], -1):,.0f} a month) |"
        )
        assert f"| ${priced['max']:,.2f}/h |" in row


def test_the_types_a_newcomer_tried_render_and_are_priced(tmp_path):
    """c6a, r5 and m5a for CPU groups and g6e for a GPU group (refused before the data file): they render."""
    groups = [
        {"name": "system", "instanceTypes": ["c6a.large"]},
        {"name": "memory", "instanceTypes": ["r5.xlarge", "m5a.xlarge"], "minSize": 0, "maxSize": 2},
        {"name": "gpu", "kind": "gpu", "instanceTypes": ["g6e.xlarge"], "minSize": 0, "maxSize": 1},
    ]
    cfg = stack_config({"cluster": DEV_CLUSTER, "nodeGroups": groups}, region="us-east-1")
    facts = render_module.write(cfg, tmp_path / "out")
    rows = {g["name"]: g for g in facts["nodeGroups"]}
    assert rows["gpu"]["amiType"] == "AL2023_x86_64_NVIDIA" and rows["memory"]["instanceTypes"] == [
        "r5.xlarge",
        "m5a.xlarge",
    ]
    lines = {line["item"]: line for line in facts["cost"]["lines"]}
    gp3 = 0.08 / 730
    assert lines["node group system"]["max"] == pytest.approx(3 * (0.0765 + 50 * gp3), abs=1e-3)  # default max 3
    assert lines["node group memory"]["max"] == pytest.approx(2 * (0.252 + 50 * gp3), abs=1e-3)  # first type: r5
    assert lines["node group gpu"]["max"] == pytest.approx(1.861 + 100 * gp3, abs=1e-3)
    assert all(not any("price (" in n for n in line["notes"]) for line in lines.values())  # us-east-1's own


def test_reserved_groups_are_priced_and_say_what_their_reservation_costs(tmp_path):
    block = {
        "name": "p5-block",
        "kind": "gpu",
        "instanceTypes": ["p5.48xlarge"],
        "capacityType": "CAPACITY_BLOCK",
        "minSize": 0,
        "maxSize": 2,
        "capacityReservation": {
            "id": "cr-02168da1478b509e0",
            "availabilityZone": "us-west-2b",
            "instanceCount": 2,
            "endTime": "2026-12-01T11:30:00Z",
        },
    }
    odcr = {
        "name": "p4d-odcr",
        "kind": "gpu",
        "instanceTypes": ["p4d.24xlarge"],
        "minSize": 0,
        "maxSize": 4,
        "capacityReservation": {"id": "cr-0123456789abcdef0", "availabilityZone": "us-west-2c", "instanceCount": 4},
    }
    system = {"name": "system", "instanceTypes": ["m6i.large"], "minSize": 1, "maxSize": 2}
    overrides = {
        "cluster": DEV_CLUSTER,
        "nodeGroups": [system, block, odcr],
        "network": {"availabilityZones": ["us-west-2a", "us-west-2b", "us-west-2c"]},
    }
    facts = render_module.write(stack_config(overrides), tmp_path / "out")
    lines = {line["item"]: line for line in facts["cost"]["lines"]}
    gp3 = 0.08 / 730
    # The block's instances are prepaid: its nodes add their volumes only, its own line is $0/h and says so.
    assert lines["node group p5-block"]["max"] == pytest.approx(2 * 100 * gp3, abs=1e-3)
    block_line = lines["Capacity Block cr-02168da1478b509e0"]
    assert (block_line["idle"], block_line["max"]) == (0.0, 0.0)
    assert block_line["notes"][0].startswith("prepaid: 2 x p5.48xlarge until 2026-12-01T11:30:00Z;")
    # The ODCR bills its 4 instances every hour: in the idle figure as in the maximum.
    odcr_line = lines["ODCR cr-0123456789abcdef0"]
    assert odcr_line["idle"] == odcr_line["max"] == round(4 * 21.957642, 4)
    assert facts["cost"]["idle"] >= 4 * 21.957642
    assert lines["node group p4d-odcr"]["idle"] == 0.0  # min 0; its nodes run inside the reservation
    caption = render_module.cost_caption(facts["cost"])
    assert "Note: prepaid: 2 x p5.48xlarge until 2026-12-01T11:30:00Z" in caption
    assert "Note: reserved: 4 x p4d.24xlarge billed every hour, running or not" in caption
