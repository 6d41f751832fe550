"""The consumer example runs under mocks and builds what its author asked for."""

from __future__ import annotations

import runpy
from pathlib import Path

from gpuplane.infra import mockrun

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gpu-cluster" / "__main__.py"


def test_example_program_runs_under_mocks():
    def program() -> dict[str, object]:
        runpy.run_path(str(EXAMPLE))  # exports through pulumi.export, like under the real engine
        return {}

    rec = mockrun.run(program, "team-gpu-cluster", "dev", "us-east-1")
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
        if t.parent and t.parent.endswith("::gpu")
    }
    assert gpu_tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "1"
    coredns = next(a for a in rec.by_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "coredns")
    # coredns waits for the system group only, never for a GPU node's boot (issue 10)
    waits = {
        g.urn.rsplit("::", 1)[-1] for g in rec.by_type("aws:eks/nodeGroup:NodeGroup") if g.urn in coredns.dependencies
    }
    assert waits == {"system-ng"}
