"""The consumer example runs under mocks and builds what its author asked for."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import yaml
from typer.testing import CliRunner

from gpuplane.infra import mockrun
from gpuplane.infra.cli import app

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gpu-cluster" / "__main__.py"


def test_example_program_runs_under_mocks():
    def program() -> dict[str, object]:
        runpy.run_path(str(EXAMPLE))  # exports through pulumi.export, like under the real engine
        return {}

    rec = mockrun.run(program, "team-gpu-cluster", "dev", "us-east-1", {"aws:region": "us-east-1"})
    groups = {
        g.inputs["labels"]["gpuplane.io/node-group"]: g.inputs for g in rec.by_type("aws:eks/nodeGroup:NodeGroup")
    }
    assert set(groups) == {"system", "gpu"}
    assert groups["gpu"]["amiType"] == "AL2023_x86_64_NVIDIA"
    assert groups["gpu"]["instanceTypes"] == ["g6.xlarge"]
    assert groups["gpu"]["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    cluster = rec.one("aws:eks/cluster:Cluster").inputs
    assert cluster["name"] == "team-gpu-cluster-dev"
    assert cluster["vpcConfig"]["publicAccessCidrs"] == ["198.51.100.0/24"]
    vpc = rec.one("aws:ec2/vpc:Vpc").inputs
    assert vpc["cidrBlock"] == "10.42.0.0/16"
    gpu_tags = {
        t.inputs["tag"]["key"]: t.inputs["tag"]["value"]
        for t in rec.by_type("aws:autoscaling/tag:Tag")
        if t.parent and t.parent.endswith("::eks-gpu")
    }
    assert gpu_tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "1"
    coredns = next(a for a in rec.by_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "coredns")
    # coredns waits for the system group only, never for a GPU node's boot (issue 10)
    waits = {
        g.urn.rsplit("::", 1)[-1] for g in rec.by_type("aws:eks/nodeGroup:NodeGroup") if g.urn in coredns.dependencies
    }
    assert waits == {"eks-system-ng"}
    # the region is the stack's, read by the cluster and its children, never written in the program
    autoscaler = next(r for r in rec.by_type("kubernetes:helm.sh/v3:Release") if r.name == "eks-autoscaler-release")
    assert autoscaler.inputs["values"]["awsRegion"] == "us-east-1"
    assert autoscaler.inputs["values"]["extraArgs"]["scale-down-unneeded-time"] == "5m"


def test_render_previews_the_example_program_offline(tmp_path):
    out = tmp_path / "example"
    result = CliRunner().invoke(app, ["render", "--project", str(EXAMPLE.parent), "dev", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads((out / "plan.json").read_text())
    assert (plan["project"], plan["stack"]) == ("team-gpu-cluster", "dev")
    assert plan["config"]["aws:region"] == "us-west-2"
    by_type = {r["type"]: r for r in plan["resources"]}
    assert by_type["aws:eks/cluster:Cluster"]["inputs"]["name"] == "team-gpu-cluster-dev"
    # the example's own config key reached the program through the engine's config
    assert by_type["aws:eks/cluster:Cluster"]["inputs"]["vpcConfig"]["publicAccessCidrs"] == ["198.51.100.0/24"]
    assert plan["outputs"]["clusterName"] == "team-gpu-cluster-dev"
    facts = json.loads(result.stdout)
    assert facts["counts"]["resources"] == len(plan["resources"])
    # The GPU group works: the device plugin advertises its GPUs and the autoscaler starts it from zero.
    charts = {yaml.safe_load(f.read_text())["chart"] for f in (out / "helm").iterdir()}
    assert {"nvidia-device-plugin", "cluster-autoscaler"} <= charts
    assert facts["wiring"] == []
    # The Cluster component logs its config warnings (a documentation CIDR) as Pulumi warnings: `pulumi up`
    # shows them, and so does the render of a program of one's own (in --json and on stderr), naming the
    # program's line and argument (the program has no gpuplane:cluster key).
    (warning,) = facts["warnings"]
    expected = "ClusterArgs.public_access_cidrs[0]: 198.51.100.0/24 is no internet address"
    assert warning.startswith("__main__.py line ") and expected in warning
    assert "warning: __main__.py line " in result.stderr
    assert {(g["name"], g["kind"]) for g in facts["nodeGroups"]} == {("system", "cpu"), ("gpu", "gpu")}
    assert (out / "stack.md").read_text().startswith("# Stack `dev` of `team-gpu-cluster`")
    assert (out / ".gpuplane-render").is_file()
    # A consumer's program is priced like gpuplane's own (from its plan): its cost, in --json and cost.json.
    assert facts["cost"] == json.loads((out / "cost.json").read_text())
    assert {line["item"] for line in facts["cost"]["lines"]} >= {
        "EKS control plane",
        "node group gpu",
        "node group system",
    }
    assert facts["cost"]["max"] > facts["cost"]["idle"] > 0


def test_a_program_s_warnings_are_printed_once_with_the_summary(tmp_path):
    result = CliRunner().invoke(app, ["render", "--project", str(EXAMPLE.parent), "dev", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert flat.count("ClusterArgs.public_access_cidrs[0]: 198.51.100.0/24 is no internet address") == 1


def test_an_invoke_render_cannot_answer_stops_it_by_name(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: other\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-west-2\n")
    (tmp_path / "__main__.py").write_text(
        "import pulumi_aws as aws\nimport pulumi\npulumi.export('vpc', aws.ec2.get_vpc(default=True).id)\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", "--project", str(tmp_path), "dev", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "aws:ec2/getVpc:getVpc" in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not out.exists()
