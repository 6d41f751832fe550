"""The workload front door: each problem refused by `gpuplane render` with exit 2, its key, its limit, nothing written.

Each case renders a stack file through the CLI, the way a user meets it; each boundary has a value that
passes and one that fails.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpuplane.infra.cli import app

runner = CliRunner()

G5 = [
    {"name": "system", "instanceTypes": ["m6i.large"]},
    {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 0},
]
CPU = {"name": "cpu", "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}}
GPU = {"name": "gpu", "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}}
SERVING = {"name": "resnet", "model": {"name": "resnet"}, "variants": [CPU]}
TRAINING = {
    "name": "mnist",
    "strategy": "parameterServer",
    "command": ["python", "/data/train.py"],
    "chief": {"resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "worker": {"replicas": 2, "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "ps": {"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
}


def stack_text(**keys: Any) -> str:
    """A stack file with the given `gpuplane:` keys (as JSON, which YAML reads as flow style)."""
    config = {"aws:region": "us-west-2", "gpuplane:cluster": {"publicAccessCidrs": ["198.51.100.7/32"]}}
    config |= {f"gpuplane:{k}": v for k, v in keys.items()}
    return "config:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in config.items())


def render(tmp_path: Path, text: str, stack: str = "dev") -> tuple[int, str, Path]:
    stacks = tmp_path / "stacks"
    stacks.mkdir(parents=True, exist_ok=True)
    (stacks / f"Pulumi.{stack}.yaml").write_text(text)
    out = tmp_path / "out"
    result = runner.invoke(app, ["render", stack, "--out", str(out), "--stacks-dir", str(stacks)])
    return result.exit_code, " ".join(result.output.split()), out


def refused(tmp_path: Path, text: str, *fragments: str, stack: str = "dev") -> str:
    """Assert the render is refused naming every fragment, with nothing written; the flat output."""
    code, output, out = render(tmp_path, text, stack)
    assert code == 2, output
    for fragment in fragments:
        assert fragment in output, (fragment, output)
    assert "Traceback" not in output
    assert not out.exists()
    return output


def accepted(tmp_path: Path, text: str, stack: str = "dev") -> None:
    code, output, out = render(tmp_path, text, stack)
    assert code == 0, output
    assert (out / "plan.json").is_file()


def variant(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**copy.deepcopy(base), **changes}


def serving(*variants: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**copy.deepcopy(SERVING), "variants": list(variants) or [CPU], **changes}


# --- 3. placement problems name the key that is wrong, and the best group's value --------------------


def test_compute_capability_no_group_has_names_min_compute_capability(tmp_path):
    text = stack_text(nodeGroups=G5, serving=[serving(CPU, variant(GPU, minComputeCapability="8.7"))])
    refused(
        tmp_path,
        text,
        "gpuplane:serving[0].variants[1].minComputeCapability:",
        "GPU compute capability >= 8.7; groups have 8.6 (gpu)",
    )


def test_compute_capability_the_best_group_has_passes(tmp_path):
    accepted(tmp_path, stack_text(nodeGroups=G5, serving=[serving(variant(GPU, minComputeCapability="8.6"))]))


def test_best_group_is_named_first():
    from gpuplane.components.config import PlatformArgs  # noqa: PLC0415

    groups = [*G5, {"name": "t4", "kind": "gpu", "instanceTypes": ["g4dn.xlarge"], "minSize": 0}]
    with pytest.raises(ValueError, match=r"groups have 8\.6 \(gpu\), 7\.5 \(t4\)"):
        PlatformArgs.model_validate(
            {
                "cluster": {"publicAccessCidrs": ["198.51.100.7/32"]},
                "nodeGroups": groups,
                "serving": [serving(variant(GPU, minComputeCapability="9.0"))],
            }
        )


def test_training_compute_capability_is_the_workloads_key_said_once(tmp_path):
    gpu_role = {"replicas": 2, "resources": {"limits": {"cpu": "1", "memory": "2Gi"}, "gpus": 1}}
    training = {**TRAINING, "minComputeCapability": "9.0", "worker": gpu_role, "chief": {**gpu_role, "replicas": 1}}
    output = refused(
        tmp_path,
        stack_text(nodeGroups=G5, training=[training]),
        "gpuplane:training[0].minComputeCapability:",
        "groups have 8.6 (gpu)",
    )
    assert output.count("training[0].minComputeCapability:") == 1


def test_a_node_group_typo_is_reported_at_node_groups(tmp_path):
    text = stack_text(nodeGroups=G5, serving=[serving(variant(GPU, nodeGroups=["gpus"]))])
    refused(tmp_path, text, "gpuplane:serving[0].variants[0].nodeGroups:", "['gpus'] do not exist")


def test_naming_a_group_of_the_wrong_kind_is_reported_at_node_groups(tmp_path):
    text = stack_text(nodeGroups=G5, serving=[serving(variant(GPU, nodeGroups=["system"]))])
    refused(
        tmp_path,
        text,
        "gpuplane:serving[0].variants[0].nodeGroups:",
        "none of the groups it names has a gpu group",
        "groups that have it: ['gpu']",
    )


def test_more_gpus_than_a_node_has_is_reported_at_resources_gpus(tmp_path):
    two = variant(GPU, resources={"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 2})
    refused(
        tmp_path,
        stack_text(nodeGroups=G5, serving=[serving(two)]),
        "gpuplane:serving[0].variants[0].resources.gpus:",
        "largest it could have had: g5.xlarge",
    )
    accepted(tmp_path / "ok", stack_text(nodeGroups=G5, serving=[serving(GPU)]))


def test_memory_over_every_node_is_reported_at_the_memory_key(tmp_path):
    big = variant(CPU, resources={"requests": {"memory": "7Gi"}, "limits": {"cpu": "1", "memory": "7Gi"}})
    refused(
        tmp_path,
        stack_text(nodeGroups=G5, serving=[serving(big)]),
        "gpuplane:serving[0].variants[0].resources.requests.memory:",
        "m6i.large (1.68 CPU, 6.1 GiB",
    )


def test_cpu_and_memory_that_fit_apart_but_never_together_are_reported_at_resources(tmp_path):
    groups = [
        {"name": "system", "instanceTypes": ["c6i.2xlarge"]},
        {"name": "mem", "instanceTypes": ["r6i.xlarge"]},
    ]
    both = variant(CPU, resources={"limits": {"cpu": "6", "memory": "20Gi"}})
    refused(
        tmp_path, stack_text(nodeGroups=groups, serving=[serving(both)]), "gpuplane:serving[0].variants[0].resources:"
    )


# --- 4. every problem in one report ------------------------------------------------------------------


def test_every_workload_problem_is_reported_at_once(tmp_path):
    training = {**TRAINING, "volumes": [{"volume": "scratch", "mountPath": "/scratch"}]}
    text = stack_text(
        nodeGroups=G5,
        storage={"uid": 1000},
        serving=[
            serving(CPU, variant(GPU, nodeGroups=["gpus"]), model={"name": "resnet", "volume": "weights"}),
            serving(name="resnet"),
        ],
        training=[training],
    )
    refused(
        tmp_path,
        text,
        "gpuplane:storage.uid:",
        "gpuplane:serving[0].model.volume: volume 'weights' is not defined",
        "gpuplane:serving[0].variants[1].nodeGroups:",
        "gpuplane:serving[1].name: 'resnet' is already used by serving[0]",
        "gpuplane:training[0].volumes[0].volume: volume 'scratch' is not defined",
    )


def test_platform_problems_and_workload_problems_come_together(tmp_path):
    text = stack_text(
        nodeGroups=[*G5, {"name": "system", "instanceTypes": ["m6i.large"]}],
        cluster={"publicAccessCidrs": ["198.51.100.7/32"], "serviceIpv4Cidr": "10.0.0.0/16"},
        serving=[serving(model={"name": "resnet", "volume": "weights"})],
    )
    refused(
        tmp_path,
        text,
        "gpuplane:nodeGroups: group name(s) ['system'] used more than once",
        "gpuplane:cluster.serviceIpv4Cidr:",
        "gpuplane:serving[0].model.volume:",
    )


def test_a_direct_caller_gets_every_problem_in_one_error():
    from gpuplane.components.args_base import FieldErrors  # noqa: PLC0415
    from gpuplane.components.config import PlatformArgs  # noqa: PLC0415
    from gpuplane.components.serving import serving_spec  # noqa: PLC0415
    from gpuplane.components.workload_args import ServingArgs  # noqa: PLC0415
    from gpuplane.components.workload_checks import WorkloadContext  # noqa: PLC0415

    platform = PlatformArgs.model_validate({"cluster": {"publicAccessCidrs": ["198.51.100.7/32"]}, "nodeGroups": G5})
    args = ServingArgs.model_validate(serving(variant(GPU, nodeGroups=["gpus"]), model={"name": "r", "volume": "w"}))
    with pytest.raises(FieldErrors) as info:
        serving_spec(args, WorkloadContext.of(platform))
    assert [e.field for e in info.value.errors] == ["model.volume", "variants[0].nodeGroups"]
