"""`gpuplane compare`: the stack's variants, every bad input (exit 2, nothing created), and `--plan`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.components.config import PlatformArgs
from gpuplane.infra import compare
from gpuplane.infra.cli import app
from tests.compare.conftest import write_stack

runner = CliRunner()


def invoke(stacks: Path, *args: str):
    return runner.invoke(app, ["compare", "sample", *args, "--stacks-dir", str(stacks)])


@pytest.fixture
def stacks(tmp_path: Path) -> Path:
    return write_stack(tmp_path / "stacks")


def test_variants_come_from_the_stack(stacks):
    _, variants = compare.load_stack("sample", stacks)
    assert [(v.serving, v.model, v.name, v.gpus, v.replicas, v.cpu_limit) for v in variants] == [
        ("resnet", "resnet", "gpu", 1, 1, "4"),
        ("resnet", "resnet", "cpu1", 0, 1, "1"),
        ("resnet", "resnet", "cpu8", 0, 2, "8"),
        ("tiny", "tiny", "cpu", 0, 1, "1"),
    ]
    assert variants[0].service == "resnet-gpu"


def test_variants_carry_the_groups_render_places_them_on(stacks):
    _, variants = compare.load_stack("sample", stacks)
    groups = {v.name: v.node_groups for v in variants}
    assert groups["gpu"] == ("gpu",)
    assert groups["cpu8"] == ("cpu",)  # 8 CPUs fit no m6i.large
    assert set(groups["cpu1"]) == {"system", "cpu"}


def test_plan_prints_configmap_and_job(stacks):
    result = invoke(stacks, "--model", "resnet", "--plan", "--sizes", "128,2048", "--concurrency", "1,8")
    assert result.exit_code == 0, result.output
    configmap, policy, job = list(yaml.safe_load_all(result.stdout))
    assert [configmap["kind"], policy["kind"], job["kind"]] == ["ConfigMap", "NetworkPolicy", "Job"]
    settings = yaml.safe_load(configmap["data"]["config.json"])
    assert settings["variants"] == {
        "gpu": "http://resnet-gpu.ml.svc:8501",
        "cpu1": "http://resnet-cpu1.ml.svc:8501",
        "cpu8": "http://resnet-cpu8.ml.svc:8501",
    }
    assert (settings["sizes"], settings["concurrency"], settings["formats"]) == ([128, 2048], [1, 8], ["jpeg", "png"])
    assert settings["inputsDir"] is None
    assert configmap["data"]["client.py"].startswith('"""gpuplane compare: the in-cluster load-test client')
    # 3 variants x 2 sizes x 2 formats x 2 levels = 24 cells of 30 s + 30 s margin, plus readiness and slack.
    assert job["spec"]["activeDeadlineSeconds"] == 600 + 24 * 60 + 300
    anti = job["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    expressions = anti["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]["matchExpressions"]
    assert {"key": "app.kubernetes.io/instance", "operator": "In", "values": ["resnet"]} in expressions


def test_plan_with_inputs_adds_the_uploader_and_datasets(stacks, tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    (images / "a.png").write_bytes(b"\x89PNG")
    (images / "notes.txt").write_text("not an image")
    result = invoke(stacks, "--model", "resnet", "--plan", "--inputs", str(images))
    assert result.exit_code == 0, result.output
    configmap, _, pod, job = list(yaml.safe_load_all(result.stdout))
    settings = yaml.safe_load(configmap["data"]["config.json"])
    run_id = job["metadata"]["labels"]["app.kubernetes.io/instance"]
    assert settings["inputsDir"] == f"/datasets/gpuplane-compare/{run_id}"
    mounts = job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    assert {"name": "datasets", "mountPath": "/datasets", "readOnly": True} in mounts
    assert pod["kind"] == "Pod" and pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == "datasets"


def test_single_variant_runs_as_a_benchmark_and_says_so(stacks):
    result = invoke(stacks, "--model", "tiny", "--plan")
    assert result.exit_code == 0, result.output
    assert "Only variant 'cpu' serves model 'tiny': running a single-variant benchmark" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "bert"], "no serving variant serves model 'bert'; served models: resnet, tiny"),
        (["--model", "resnet", "--sizes", "16,128"], "--sizes: [16] out of range; allowed 32-4096 px"),
        (["--model", "resnet", "--sizes", "8192"], "--sizes: [8192] out of range; allowed 32-4096 px"),
        (["--model", "resnet", "--sizes", "big"], "--sizes: 'big' is not a comma-separated list of whole numbers"),
        (["--model", "resnet", "--concurrency", "0,4"], "--concurrency: [0] out of range; allowed 1-256"),
        (["--model", "resnet", "--concurrency", "512"], "--concurrency: [512] out of range; allowed 1-256"),
        (["--model", "resnet", "--duration", "0"], "--duration: [0] out of range; allowed 1-3600 s per cell"),
        (["--model", "resnet", "--duration", "7200"], "--duration: [7200] out of range; allowed 1-3600 s per cell"),
        (["--model", "resnet", "--formats", "gif"], "--formats: ['gif'] not allowed; allowed: jpeg, png"),
        (
            ["--model", "resnet", "--client-cpu", "64"],
            "requests 64 CPU, 3.00 GiB fit no node; the largest it could have had: m6i.4xlarge",
        ),
        (["--model", "resnet", "--endpoint", "gpu=http://x:1"], "--endpoint: no URL for variant(s) ['cpu1', 'cpu8']"),
        (["--model", "resnet", "--endpoint", "tpu=http://x:1"], "--endpoint: variant 'tpu' does not serve this model"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(stacks, args, message):
    result = invoke(stacks, *args, "--plan")
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_inputs_folder_without_images_is_refused(stacks, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("no images here")
    result = invoke(stacks, "--model", "resnet", "--inputs", str(empty), "--plan")
    assert result.exit_code == 2
    assert f"--inputs: '{empty}' holds no images; allowed: .jpg, .jpeg, .png files" in " ".join(result.stderr.split())


def test_missing_kubeconfig_is_bad_input_and_creates_nothing(stacks, tmp_path):
    result = invoke(stacks, "--model", "resnet", "--kubeconfig", str(tmp_path / "none"), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "does not exist; write it with `gpuplane kubeconfig sample` first" in " ".join(result.stderr.split())
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("serving", "message"),
    [
        ({"name": "x"}, "gpuplane:serving:"),
        (
            [{"name": "x", "model": {"name": "m", "volume": "models", "path": "m"}, "variants": []}],
            "gpuplane:serving[0].variants",
        ),
        ([{"name": "x", "variants": [{"name": "a"}]}], "gpuplane:serving[0].model"),
    ],
)
def test_bad_serving_config_exits_2(tmp_path, serving, message):
    stacks = write_stack(tmp_path / "stacks", serving=serving)
    result = invoke(stacks, "--model", "m", "--plan")
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())


def test_invalid_platform_config_is_reported_like_render(tmp_path):
    stacks = write_stack(tmp_path / "stacks", workloadNamespace="Bad_NS")
    result = invoke(stacks, "--model", "resnet", "--plan")
    assert result.exit_code == 2
    assert "gpuplane:workloadNamespace" in result.stderr


def test_machine_facts_from_stack_and_catalog(stacks):
    config, variants = compare.load_stack("sample", stacks)
    facts = compare.machine_facts(config.platform, variants[:3], "1500m", "3Gi")
    rows = {r["name"]: r for r in facts["variants"]}
    assert rows["gpu"]["instanceTypes"] == ["g5.2xlarge"]
    assert rows["gpu"]["gpuModel"] == "A10G"
    assert rows["gpu"]["gpuSharing"] == "none"
    assert rows["cpu8"]["instanceTypes"] == ["m6i.4xlarge"]  # where the 8-CPU variant is placed
    assert rows["cpu8"]["gpuModel"] is None
    assert facts["client"]["image"] == "tensorflow/tensorflow:2.21.0"


def test_fit_check_uses_allocatable_not_capacity():
    platform = PlatformArgs.model_validate({"cluster": {"publicAccessCidrs": ["203.0.113.0/24"]}})
    assert compare.check_fits(platform, "1500m", "4Gi") == "system"  # m6i.large: 2 vCPU, 8 GiB
    with pytest.raises(compare.CompareError, match=r"largest it could have had: m6i.large \(1.68 CPU, 6.1 GiB"):
        compare.check_fits(platform, "2", "1Gi")  # 2 vCPUs exist, but EKS reserves some
