"""Every "Bad input" of issue 11 is a config error naming the key, the value and what is allowed."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from typer.testing import CliRunner

from gpuplane.components.config import PlatformArgs
from gpuplane.components.config.workloads import ServingArgs
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.serving import serving_spec
from gpuplane.infra import config
from gpuplane.infra.cli import app
from tests.conftest import DEV_CLUSTER

CPU = {
    "name": "cpu",
    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}},
}
GPU = {"name": "gpu", "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}}
SERVING = {"name": "resnet", "model": {"name": "resnet"}, "variants": [CPU]}
CPU_ONLY = [{"name": "system", "instanceTypes": ["m6i.large"]}]


def problems(overrides: dict[str, Any]) -> list[str]:
    raw: dict[str, Any] = {"aws:region": "us-west-2", "gpuplane:cluster": DEV_CLUSTER}
    raw.update({f"gpuplane:{k}": v for k, v in overrides.items()})
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    return info.value.problems


def serving(**changes: Any) -> dict[str, Any]:
    s = copy.deepcopy(SERVING)
    s.update(changes)
    return s


def variant(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    v = copy.deepcopy(base)
    v.update(changes)
    return v


CASES: list[tuple[str, dict[str, Any], str, list[str]]] = [
    (
        "GPU variant without GPU group",
        {"nodeGroups": CPU_ONLY, "serving": [serving(variants=[GPU])]},
        "gpuplane:serving[0].variants[0].resources.gpus:",
        ["no GPU node group", "variant 'gpu'"],
    ),
    (
        "HPA without requests",
        {"serving": [serving(variants=[variant(GPU, name="g", autoscaling={"maxReplicas": 3})])]},
        "gpuplane:serving[0].variants[0].autoscaling:",
        ["requests.cpu"],
    ),
    (
        "limits missing",
        {"serving": [serving(variants=[variant(CPU, resources={"requests": {"cpu": "1"}, "limits": {"cpu": "1"}})])]},
        "gpuplane:serving[0].variants[0].resources.limits.memory:",
        ["is required"],
    ),
    (
        "limits below requests",
        {
            "serving": [
                serving(
                    variants=[
                        variant(CPU, resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1", "memory": "1Gi"}})
                    ]
                )
            ]
        },
        "gpuplane:serving[0].variants[0].resources.limits.cpu:",
        ["1 is below requests.cpu 2"],
    ),
    (
        "requests that fit no node",
        {"serving": [serving(variants=[variant(CPU, resources={"limits": {"cpu": "64", "memory": "8Gi"}})])]},
        "gpuplane:serving[0].variants[0].resources.limits.cpu:",
        ["fit no node", "largest it could have had: m6i.large", "serving 'resnet' variant 'cpu'"],
    ),
    (
        "volume that does not exist",
        {"serving": [serving(model={"name": "resnet", "volume": "weights"})]},
        "gpuplane:serving[0].model.volume:",
        ["'weights' is not defined", "models, datasets, logs"],
    ),
    (
        "model path outside its volume",
        {"serving": [serving(model={"name": "resnet", "path": "../etc"})]},
        "gpuplane:serving[0].model.path:",
        ["'../etc'", "relative path inside its volume"],
    ),
    (
        "absolute model path",
        {"serving": [serving(model={"name": "resnet", "path": "/models/resnet"})]},
        "gpuplane:serving[0].model.path:",
        ["relative path inside its volume"],
    ),
    (
        "two workloads with the same name",
        {"serving": [serving(), serving()]},
        "gpuplane:serving[1].name:",
        ["'resnet' is already used by serving[0]"],
    ),
    (
        "plain http import",
        {"serving": [serving(model={"name": "resnet", "import": {"source": "http://example.com/m.tar.gz"}})]},
        "gpuplane:serving[0].model.import.source:",
        ["https://", "s3://", "plain http:// is refused"],
    ),
    (
        "ftp import",
        {"serving": [serving(model={"name": "resnet", "import": {"source": "ftp://example.com/m.tar.gz"}})]},
        "gpuplane:serving[0].model.import.source:",
        ["must start with https://"],
    ),
    (
        "image tag latest",
        {"serving": [serving(variants=[variant(CPU, image="tensorflow/serving:latest")])]},
        "gpuplane:serving[0].variants[0].image:",
        ["not pinned", "tensorflow/serving:latest"],
    ),
    (
        "image without tag",
        {"serving": [serving(variants=[variant(CPU, image="tensorflow/serving")])]},
        "gpuplane:serving[0].variants[0].image:",
        ["not pinned"],
    ),
    (
        "no variants",
        {"serving": [serving(variants=[])]},
        "gpuplane:serving[0].variants:",
        ["at least 1"],
    ),
    (
        "uid below 10001 with workloads",
        {"storage": {"uid": 1000}, "serving": [serving()]},
        "gpuplane:storage.uid:",
        ["1000 is below 10001"],
    ),
    (
        "ingress class not a name",
        {"ingressClass": "ALB Public"},
        "gpuplane:ingressClass:",
        ["'ALB Public' is not an IngressClass name"],
    ),
    (
        "unknown key in a variant",
        {"serving": [serving(variants=[variant(CPU, replica=2)])]},
        "gpuplane:serving[0].variants[0].replica:",
        ["unknown key", "replicas"],
    ),
]


@pytest.mark.parametrize(("case", "overrides", "key", "fragments"), CASES, ids=[c[0] for c in CASES])
def test_bad_workload_input_names_the_key(case, overrides, key, fragments):
    found = problems(overrides)
    matching = [p for p in found if p.startswith(key)]
    assert matching, f"no problem starts with {key!r}: {found}"
    for fragment in fragments:
        assert any(fragment in p for p in matching), f"{fragment!r} not in {matching}"


def test_bad_input_renders_nothing(tmp_path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.bad.yaml").write_text(
        "config:\n  aws:region: us-west-2\n  gpuplane:cluster:\n    publicAccessCidrs: [198.51.100.7/32]\n"
        "  gpuplane:nodeGroups:\n    - {name: system, instanceTypes: [m6i.large]}\n"
        "  gpuplane:serving:\n    - name: m\n      model: {name: m}\n"
        "      variants: [{name: g, resources: {limits: {cpu: '1', memory: 1Gi}, gpus: 1}}]\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", "bad", "--out", str(out), "--stacks-dir", str(stacks)])
    assert result.exit_code == 2, result.output
    assert "gpuplane:serving[0].variants[0].resources.gpus" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_direct_caller_gets_the_same_error():
    args = PlatformArgs.model_validate({"cluster": DEV_CLUSTER, "nodeGroups": CPU_ONLY})
    with pytest.raises(
        ValueError, match=r"variants\[0\]\.resources\.gpus: serving 'resnet' variant 'gpu': asks for 1 GPU"
    ):
        serving_spec(ServingArgs.model_validate(serving(variants=[GPU])), WorkloadContext.of(args))


# --- GPU compute capability: the image's declared need, on a label the group itself sets ---------------

G5 = [
    {"name": "system", "instanceTypes": ["m6i.large"]},
    {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.2xlarge"], "minSize": 0},
]


def test_a_variant_needing_more_compute_capability_than_any_gpu_is_refused():
    found = problems({"nodeGroups": G5, "serving": [serving(variants=[variant(GPU, minComputeCapability="9.0")])]})
    line = next(p for p in found if p.startswith("gpuplane:serving[0].variants[0]"))
    assert "GPU compute capability >= 9.0" in line


@pytest.mark.parametrize("bad", ["9", "8.10", "x.y", "0.5"])
def test_a_compute_capability_that_is_not_major_minor_is_refused(bad):
    found = problems({"nodeGroups": G5, "serving": [serving(variants=[variant(GPU, minComputeCapability=bad)])]})
    assert any("minComputeCapability" in p and f"'{bad}'" in p and "major.minor" in p for p in found), found


@pytest.mark.parametrize(("declared", "expected"), [(None, "59"), ("8.6", "85")])
def test_gpu_variants_select_the_compute_capability_label_the_group_advertises(declared, expected):
    gpu = variant(GPU, **({"minComputeCapability": declared} if declared else {}))
    args = PlatformArgs.model_validate({"cluster": DEV_CLUSTER, "nodeGroups": G5, "serving": [serving(variants=[gpu])]})
    spec = serving_spec(args.serving[0], WorkloadContext.of(args))
    terms = spec.variants[0].affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    expressions = terms["nodeSelectorTerms"][0]["matchExpressions"]
    assert {"key": "gpuplane.io/gpu-compute-capability", "operator": "Gt", "values": [expected]} in expressions
