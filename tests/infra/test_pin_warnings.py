"""`gpuplane render` and `preflight` say when a default the stack uses is past its vendor's end of support.

The warning is for gpuplane's own pins (manifests/versions.py) only: a user who names their own image gets none.
A render still exits 0 and writes the same files (plan.json does not change with the calendar).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.components.plan import training
from gpuplane.infra import config, render
from gpuplane.infra.aws import preflight
from gpuplane.infra.cli import app
from gpuplane.manifests import lifecycle, versions
from tests import shipped
from tests.conftest import DEV_CLUSTER, stack_config

runner = CliRunner()
PYTHON_EOS = "2029-11-01"  # versions.PYTHON.end_of_support: the import job's image
DLC_EOP = "2027-07-10"  # versions.TENSORFLOW_GPU.pin.end_of_support: the GPU training image

GPU_TRAINING: dict[str, Any] = {
    "cluster": DEV_CLUSTER,
    "nodeGroups": [
        {"name": "system", "instanceTypes": ["m6i.xlarge"]},
        {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.2xlarge"], "minSize": 0},
    ],
    "training": [
        {
            "name": "mnist",
            "strategy": "multiWorkerMirrored",
            "command": ["python3", "/data/train.py"],
            "worker": {"replicas": 2, "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}},
            "volumes": [{"volume": "datasets", "mountPath": "/data"}],
        }
    ],
}


def gpu_dev_stack(folder: Path) -> Path:
    """The dev stack with GPU workers: its runs use the GPU training image (whose end of patch is dated)."""
    stack = yaml.safe_load(shipped.DEV.read_text())
    stack["config"]["gpuplane:training"][0]["worker"]["resources"]["gpus"] = 1
    folder.mkdir()
    (folder / "Pulumi.dev.yaml").write_text(yaml.safe_dump(stack))
    return folder


_RECORDINGS: dict[str, Any] = {}  # config (as JSON) -> its recording: a render is the same on any day


def warnings_for(overrides: dict[str, Any], today: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    cfg = stack_config(overrides)
    monkeypatch.setenv(lifecycle.TODAY_ENV, today)
    key = json.dumps(overrides, sort_keys=True)
    if key not in _RECORDINGS:
        _RECORDINGS[key] = render.run_stack(cfg)
    return render.end_of_support(_RECORDINGS[key], training.run_manifests(cfg.platform))


def test_the_dev_stack_uses_these_pins(dev_run: Any) -> None:
    runs = training.run_manifests(config.load("dev").platform)
    assert sorted(p.name for p in render.pins_used(dev_run, runs)) == [
        "cluster-autoscaler-1.36",
        "cluster-autoscaler-chart",
        "dcgm-exporter",
        "jobset",
        "kube-prometheus-stack",
        "kueue",
        "nvidia-device-plugin",
        "python",
        "tensorboard",
        "tensorflow",
        "tensorflow-serving",
        "tensorflow-serving-gpu",
    ]


@pytest.mark.parametrize(("today", "warned"), [("2027-07-09", False), (DLC_EOP, True)])
def test_gpu_training_image_warns_from_its_end_of_patch(today: str, warned: bool, monkeypatch) -> None:
    # (Other defaults of the stack, the queue's Kueue among them, have aged by then too: each has its own test.)
    found = [w for w in warnings_for(GPU_TRAINING, today, monkeypatch) if "(tensorflow-training-gpu)" in w]
    assert found == (
        [
            f"{versions.TENSORFLOW_GPU_IMAGE} (tensorflow-training-gpu) is past its end of support since {DLC_EOP} "
            f"(today is {today}): no security patches; move to a newer gpuplane, or name a supported image "
            "yourself (training[].image)"
        ]
        if warned
        else []
    )


def test_a_user_who_names_their_own_image_gets_no_warning(monkeypatch) -> None:
    named = {**GPU_TRAINING["training"][0], "image": "registry.example.com/train:2.21.0", "tensorflowVersion": "2.21.0"}
    found = warnings_for({**GPU_TRAINING, "training": [named]}, DLC_EOP, monkeypatch)
    assert found and not [w for w in found if "tensorflow-training" in w or "registry.example.com" in w]


def test_render_warns_and_still_exits_0_with_the_same_plan(tmp_path: Path, monkeypatch) -> None:
    out, stacks = tmp_path / "r", gpu_dev_stack(tmp_path / "stacks")
    command = ["render", "dev", "--out", str(out), "--stacks-dir", str(stacks)]
    first = runner.invoke(app, command)
    assert first.exit_code == 0, first.output
    assert "end of support" not in first.output  # (the dev stack's documentation CIDR has a warning of its own)
    plan = (out / "plan.json").read_bytes()
    monkeypatch.setenv(lifecycle.TODAY_ENV, DLC_EOP)
    later = runner.invoke(app, command)
    assert later.exit_code == 0, later.output
    flat = " ".join(later.output.split())
    assert (
        f"warning: {versions.TENSORFLOW_GPU_IMAGE} (tensorflow-training-gpu) is past its end of support since "
        f"{DLC_EOP} (today is {DLC_EOP})" in flat
    )
    assert (out / "plan.json").read_bytes() == plan  # the calendar never enters the render's files
    as_json = runner.invoke(app, [*command, "--json"])
    assert as_json.exit_code == 0
    facts = json.loads(as_json.stdout)
    assert versions.TENSORFLOW_GPU_IMAGE in [w.split(" ")[0] for w in facts["endOfSupport"]]


def test_preflight_reports_the_same(dev_run: Any, monkeypatch) -> None:
    cfg = config.load("dev")
    check = preflight.pinned_defaults(cfg, dev_run)
    assert (check.name, check.status) == ("default versions", "pass")
    # The dev stack trains through the queue: Kueue's estimated end of maintenance comes first.
    assert check.detail == (
        f"12 default images and charts, none past end of support; the first to age: {versions.KUEUE.reference} on "
        f"{versions.KUEUE.end_of_support}"
    )
    monkeypatch.setenv(lifecycle.TODAY_ENV, PYTHON_EOS)  # (past EKS 1.36 too: preflight reports that apart)
    check = preflight.pinned_defaults(cfg, dev_run)
    # Past a support date preflight fails: `pulumi up` would install software that gets no security fixes.
    assert check.status == "fail" and f"{versions.PYTHON_IMAGE} (python) is past" in check.detail
    assert check.fix.startswith("Upgrade gpuplane")


@pytest.mark.parametrize(("today", "status"), [("2026-12-05", "pass"), ("2026-12-06", "warn")])
def test_an_estimated_date_warns_from_its_first_day_and_never_fails(
    dev_run: Any, today: str, status: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kueue publishes no end of support; gpuplane's estimate from its release policy warns, a guess never gates."""
    assert versions.KUEUE.estimated and versions.KUEUE.end_of_support == "2026-12-06"
    monkeypatch.setenv(lifecycle.TODAY_ENV, today)
    check = preflight.pinned_defaults(config.load("dev"), dev_run)
    assert check.status == status
    if status == "warn":
        assert check.detail == (
            f"{versions.KUEUE.reference} (kueue) is past its estimated end of support, 2026-12-06 (estimated from "
            f"the vendor policy; today is {today}): it may get no more security patches; see the vendor's releases, "
            "or move to a newer gpuplane"
        )
        assert check.fix.startswith("The date is gpuplane's estimate from the vendor's release policy")


def test_a_published_date_fails_from_its_first_day_even_beside_an_estimated_one(
    dev_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the first day past a published date (the serving image's base OS) preflight fails, the estimate listed too."""
    published = min(
        datetime.date.fromisoformat(p.end_of_support)
        for p in render.pins_used(dev_run, training.run_manifests(config.load("dev").platform))
        if p.end_of_support and not p.estimated
    )
    for day, status in ((published - datetime.timedelta(days=1), "warn"), (published, "fail")):
        monkeypatch.setenv(lifecycle.TODAY_ENV, day.isoformat())
        check = preflight.pinned_defaults(config.load("dev"), dev_run)
        assert check.status == status, day
        assert "(kueue) is past its estimated end of support, 2026-12-06" in check.detail
    # The first published date is Ubuntu 22.04's, the base of the TensorFlow images: serving's and training's can
    # be the stack's own, TensorBoard's cannot (the fix names the keys there are, no more).
    for name in ("tensorflow-serving", "tensorflow", "tensorboard"):
        assert f"({name}) is past its end of support since 2027-06-01" in check.detail
    assert check.fix == "Upgrade gpuplane (newer pins); an image of your own in the stack also does " + (
        "(serving[].variants[].image, training[].image)"
    )
