"""The import's caps as config keys: validated at render, passed to the script, and sizing the Job's disk."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from typer.testing import CliRunner

from gpuplane.components.config import PlatformArgs
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.serving import model_import_spec
from gpuplane.components.plan.training import training_spec
from gpuplane.infra import config
from gpuplane.infra.cli import app
from gpuplane.manifests import model_import, training
from tests.conftest import DEV_CLUSTER

CPU = {"name": "cpu", "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}}
MIB = 1 << 20


def serving(import_: dict[str, Any]) -> dict[str, Any]:
    return {"name": "resnet", "model": {"name": "resnet", "import": import_}, "variants": [CPU]}


def problems(overrides: dict[str, Any]) -> list[str]:
    raw: dict[str, Any] = {"aws:region": "us-west-2", "gpuplane:cluster": DEV_CLUSTER}
    raw.update({f"gpuplane:{k}": v for k, v in overrides.items()})
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    return info.value.problems


HTTPS = "https://example.com/m.tar.gz"


@pytest.mark.parametrize(
    ("import_", "key", "fragment"),
    [
        ({"sha256": "ABC"}, "sha256", "64 lowercase hex characters"),
        ({"sha256": "A" * 64}, "sha256", "64 lowercase hex characters"),
        ({"sha256": "0" * 63}, "sha256", "64 lowercase hex characters"),
        ({"maxUnpackedSize": "ten gigs"}, "maxUnpackedSize", "not a size like 10Gi"),
        ({"maxUnpackedSize": "512Ki"}, "maxUnpackedSize", "between 1Mi and 1Ti"),
        ({"maxUnpackedSize": "2Ti"}, "maxUnpackedSize", "between 1Mi and 1Ti"),
        ({"maxFiles": 0}, "maxFiles", "greater than or equal to 1"),
        ({"maxExpansionRatio": 0}, "maxExpansionRatio", "greater than or equal to 1"),
    ],
)
def test_bad_import_keys_name_the_key(import_, key, fragment):
    found = problems({"serving": [serving({"source": HTTPS, **import_})]})
    line = next((p for p in found if p.startswith(f"gpuplane:serving[0].model.import.{key}:")), None)
    assert line is not None, found
    assert fragment in line, line


def test_a_malformed_sha256_fails_the_render_with_exit_2(tmp_path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.bad.yaml").write_text(
        "config:\n  aws:region: us-west-2\n  gpuplane:cluster:\n    publicAccessCidrs: [198.51.100.7/32]\n"
        "  gpuplane:serving:\n    - name: m\n      model: {name: m, import: {source: 'https://h/m.tgz', sha256: abc}}\n"
        "      variants: [{name: c, resources: {limits: {cpu: '1', memory: 1Gi}}}]\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", "bad", "--out", str(out), "--stacks-dir", str(stacks)])
    assert result.exit_code == 2, result.output
    assert "gpuplane:serving[0].model.import.sha256" in result.output and "'abc'" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container["env"]}


def import_job(import_: dict[str, Any]) -> dict[str, Any]:
    args = PlatformArgs.model_validate({"cluster": DEV_CLUSTER, "serving": [serving({"source": HTTPS, **import_})]})
    imp = model_import_spec(args.serving[0], WorkloadContext.of(args))
    assert imp is not None
    return model_import.job(imp)


def test_default_caps_fit_a_large_savedmodel_and_size_the_pod():
    job = import_job({})
    pod = job["spec"]["template"]["spec"]
    env = env_of(pod["containers"][0])
    assert env["GPUPLANE_IMPORT_MAX_BYTES"] == str(10 << 30)
    assert env["GPUPLANE_IMPORT_MAX_FILES"] == "100000"
    assert env["GPUPLANE_IMPORT_MAX_RATIO"] == "100"
    assert env["GPUPLANE_IMPORT_DOWNLOAD_SECONDS"] == "1350"  # three quarters of the 30-minute Job deadline
    assert job["spec"]["activeDeadlineSeconds"] == 1800
    # archive (10Gi + 100000 KiB of headers + 1Mi) + its unpacked 10Gi + 256Mi scratch, in whole MiB
    staging = next(v for v in pod["volumes"] if "emptyDir" in v)
    assert staging["emptyDir"]["sizeLimit"] == "20835Mi"
    assert pod["containers"][0]["resources"]["limits"]["ephemeral-storage"] == "21091Mi"
    assert pod["containers"][0]["resources"]["requests"]["ephemeral-storage"] == "21091Mi"


def test_configured_caps_reach_the_script_and_the_disk_limits_follow_them():
    job = import_job({"maxUnpackedSize": "2Gi", "maxFiles": 5000, "maxExpansionRatio": 20, "timeoutMinutes": 10})
    pod = job["spec"]["template"]["spec"]
    env = env_of(pod["containers"][0])
    assert (env["GPUPLANE_IMPORT_MAX_BYTES"], env["GPUPLANE_IMPORT_MAX_FILES"], env["GPUPLANE_IMPORT_MAX_RATIO"]) == (
        str(2 << 30),
        "5000",
        "20",
    )
    assert env["GPUPLANE_IMPORT_DOWNLOAD_SECONDS"] == "450"
    archive = (2 << 30) + 5000 * 1024 + MIB
    size_limit = -(-(archive + (2 << 30) + 256 * MIB) // MIB)
    staging = next(v for v in pod["volumes"] if "emptyDir" in v)
    assert staging["emptyDir"]["sizeLimit"] == f"{size_limit}Mi"
    assert pod["containers"][0]["resources"]["limits"]["ephemeral-storage"] == f"{size_limit + 256}Mi"


def test_the_s3_copy_step_gets_the_same_disk_limits():
    args = PlatformArgs.model_validate(
        {"cluster": DEV_CLUSTER, "serving": [serving({"source": "s3://models-bucket/m/", "maxUnpackedSize": "1Gi"})]}
    )
    imp = model_import_spec(args.serving[0], WorkloadContext.of(args))
    assert imp is not None
    pod = model_import.job(imp)["spec"]["template"]["spec"]
    assert pod["initContainers"][0]["resources"] == pod["containers"][0]["resources"]


def test_a_training_data_import_carries_its_caps():
    spec = {
        "name": "mnist",
        "strategy": "multiWorkerMirrored",
        "command": ["python", "/data/train.py"],
        "worker": {"replicas": 1, "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
        "volumes": [{"volume": "datasets", "mountPath": "/data"}],
        "dataImport": {"source": "https://example.com/mnist.tar.gz", "path": "mnist", "maxFiles": 250_000},
    }
    args = PlatformArgs.model_validate({"cluster": DEV_CLUSTER, "training": [copy.deepcopy(spec)]})
    obj = training.jobset(training_spec(args.training[0], WorkloadContext.of(args)), None)
    data = next(r for r in obj["spec"]["replicatedJobs"] if r["name"] == "data-import")
    container = data["template"]["spec"]["template"]["spec"]["containers"][0]
    assert env_of(container)["GPUPLANE_IMPORT_MAX_FILES"] == "250000"
    assert env_of(container)["GPUPLANE_IMPORT_KIND"] == "data"
