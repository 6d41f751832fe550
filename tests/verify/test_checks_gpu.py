"""The GPU probe: scale from zero with its timings, the autoscaler's refusals, the helper's failures, mismatches.

The in-pod parts run here too: the serving container's command through the real runtime helper with a
stand-in GPU (fake /dev and driver library, as the helper's own GPU-check tests use), and the training
container's Python against a stand-in `tensorflow` module.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuplane.infra.verify import checks_gpu
from gpuplane.infra.verify.model import Context
from gpuplane.infra.verify.runner import execute
from gpuplane.manifests import tf_runtime
from gpuplane.manifests import verify as probes
from tests.runtime._support import HELPER, FakeHost, base_env
from tests.runtime.test_helper_gpu_check import GpuNode
from tests.verify.conftest import RUN
from tests.verify.fakes import FakeCluster, Script, healthy_nodes, node, report_lines

GOOD_TF = report_lines(
    tf__version="2.20.0",
    tf__gpus="1",
    gpu__name="NVIDIA A10G",
    gpu__compute_capability="86",
    gpu__driver="580.95.05",
)
GOOD_SERVING = report_lines(serving__gpu_check="passed")
PULLED = {"reason": "Pulled", "message": 'Successfully pulled image "tensorflow/tensorflow:x" in 1m2.5s (1m2.5s incl)'}
TRIGGERED = {
    "reason": "TriggeredScaleUp",
    "message": "pod triggered scale-up: [{eks-gpu 0->1 (max: 2)}]",
    "source": {"component": "cluster-autoscaler"},
    "lastTimestamp": "2026-11-26T10:00:05Z",
}


def _refused(message: str) -> dict[str, Any]:
    return {
        "reason": "NotTriggerScaleUp",
        "message": message,
        "source": {"component": "cluster-autoscaler"},
        "lastTimestamp": "2026-11-26T10:00:10Z",
    }


def _gpu_node(dev, name: str = "gpu-new", units: str | None = None) -> dict[str, Any]:
    group = dev.group("gpu")
    return node(
        name,
        "gpu",
        labels=group.labels,
        taints=group.taints,
        allocatable={group.gpu_resource: units or str(group.gpu_units)},
        created="2026-11-26T10:01:00Z",
        ready_at="2026-11-26T10:02:00Z",
    )


def _scale_from_zero(
    dev,
    cluster: FakeCluster,
    *,
    tf_log: str = GOOD_TF,
    serving_log: str = GOOD_SERVING,
    units: str | None = None,
    phase: str = "Succeeded",
) -> None:
    cluster.scripts["gv-gpu-gpu-"] = Script(
        phase=phase,
        node="gpu-new",
        pending_polls=2,
        unschedulable="0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
        events=[TRIGGERED, PULLED],
        logs={"serving": serving_log, "tensorflow": tf_log},
        on_schedule=lambda fake: fake.nodes.append(_gpu_node(dev, units=units)),
    )


def _run(ctx: Context) -> Any:
    return checks_gpu.gpu_check(ctx.expect.group("gpu"))(ctx)


def test_scale_from_zero_passes_with_the_times_to_first_gpu_pod(dev, make_ctx):
    cluster = FakeCluster(healthy_nodes(dev))
    _scale_from_zero(dev, cluster)
    outcome = _run(make_ctx(dev, cluster))
    assert outcome.status == "pass"
    assert outcome.evidence.startswith(
        "TF 2.20.0 sees 1 GPU(s) (NVIDIA A10G, compute capability 86, driver 580.95.05); serving image GPU check "
        "passed; node gpu-new (new node). The new node stays up for the autoscaler's scale-down delay (10m)"
    )
    assert "g5.xlarge/g5.2xlarge (spot)" in outcome.evidence
    assert dict(outcome.timings) == {
        "podCreatedToNodeRegistered": 60.0,
        "nodeRegisteredToReady": 60.0,
        "readyToGpuAllocatable": 30.0,
        "imagePull": 62.5,
        "scheduledToContainerStart": 60.0,
        "timeToFirstGpuPod": 240.0,
    }
    created = next(o for o in cluster.created if o["kind"] == "Pod")
    assert created["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"


def test_the_scale_down_note_prices_the_node_kept_up_as_the_cost_estimate_does(dev, make_ctx):
    group = dev.group("gpu")
    # dev's GPU group is spot over g5.xlarge/g5.2xlarge in us-west-2: the estimate's ceiling is the dearer
    # type's on-demand price, from us-east-1 (the table's nearest covered region), plus the root volume.
    assert group.usd_per_node_hour == pytest.approx(1.212 + 100 * 0.08 / 730, abs=1e-4)
    assert group.price_basis == (
        "g5.2xlarge (spot, at most $1.212/h) plus its 100 GiB root volume; us-east-1 price (us-west-2 is not in "
        "the price table); price table of 2026-07-20"
    )
    cluster = FakeCluster(healthy_nodes(dev))
    _scale_from_zero(dev, cluster)
    outcome = _run(make_ctx(dev, cluster))
    assert outcome.status == "pass"
    assert outcome.evidence.endswith(
        "The new node stays up for the autoscaler's scale-down delay (10m) after the probe: that long of one "
        f"g5.xlarge/g5.2xlarge (spot) costs at most $0.20 ({group.price_basis})"
    )
    assert outcome.details["scaleDownCostUsd"] == pytest.approx(1.223 * 600 / 3600, abs=1e-4)


def test_the_scale_down_note_is_on_a_failure_too_and_follows_the_delay(dev, make_ctx):
    slow = dataclasses.replace(dev, scale_down_unneeded="1h", scale_down_unneeded_s=3600)
    cluster = FakeCluster(healthy_nodes(dev))
    _scale_from_zero(dev, cluster, tf_log=report_lines(tf__version="2.20.0", tf__gpus="0"))
    outcome = execute(_check(slow), make_ctx(slow, cluster), lambda: "")
    assert outcome.status == "fail"
    assert (
        "scale-down delay (1h) after the probe: that long of one g5.xlarge/g5.2xlarge (spot) costs at most $1.22 ("
        in (outcome.evidence)
    )


@pytest.mark.parametrize(
    ("capacity", "price", "basis", "expected"),
    [
        ("ON_DEMAND", 1.017, "g5.xlarge (on-demand $1.006/h)", "(on-demand) costs $0.17 (g5.xlarge (on-demand"),
        ("CAPACITY_BLOCK", 1.017, "g5.xlarge (on-demand $1.006/h)", "uses block time already paid for ($0.17 at"),
        ("SPOT", None, "no price for p9.huge in the price table", "is this check's cost (no price for p9.huge"),
    ],
)
def test_the_scale_down_note_by_how_the_group_buys_its_nodes(dev, make_ctx, capacity, price, basis, expected):
    group = dataclasses.replace(dev.group("gpu"), capacity_type=capacity, usd_per_node_hour=price, price_basis=basis)
    expect = dataclasses.replace(dev, groups=tuple(group if g.name == "gpu" else g for g in dev.groups))
    cluster = FakeCluster(healthy_nodes(dev))
    _scale_from_zero(dev, cluster)
    outcome = checks_gpu.gpu_check(group)(make_ctx(expect, cluster))
    assert expected in outcome.evidence
    assert ("scaleDownCostUsd" in outcome.details) is (price is not None)


def test_an_existing_gpu_node_reports_no_scale_up_times(dev, make_ctx):
    cluster = FakeCluster([*healthy_nodes(dev), _gpu_node(dev, "gpu-0")])
    cluster.scripts["gv-gpu-gpu-"] = Script(node="gpu-0", logs={"serving": GOOD_SERVING, "tensorflow": GOOD_TF})
    outcome = _run(make_ctx(dev, cluster))
    assert "node gpu-0 (existing node)" in outcome.evidence and "scale-down delay" not in outcome.evidence
    assert set(outcome.timings) == {"scheduledToContainerStart", "timeToFirstGpuPod"}


@pytest.mark.parametrize(
    ("refusal", "cause", "fix"),
    [
        ("pod didn't trigger scale-up: 1 max node group size reached", "at its maxSize", "maxSize"),
        (
            "pod didn't trigger scale-up: 1 in backoff after failed scale-up",
            "no spot or on-demand capacity",
            "gpuplane preflight",
        ),
        ("pod didn't trigger scale-up: 1 Insufficient nvidia.com/gpu", "node-template", "node-template"),
    ],
)
def test_an_autoscaler_refusal_fails_at_once_with_its_reason(dev, make_ctx, refusal, cause, fix):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-gpu-gpu-"] = Script(
        never_ends=True, unschedulable="0/2 nodes are available", events=[TRIGGERED, _refused(refusal)]
    )
    ctx = make_ctx(dev, cluster)
    outcome = execute(dataclasses.replace(_check(dev), run=checks_gpu.gpu_check(dev.group("gpu"))), ctx, lambda: "")
    assert outcome.status == "fail"
    assert refusal in outcome.evidence and "will not add a node" in outcome.evidence
    assert cause in outcome.cause and fix in outcome.fix
    assert ctx.clock() < 1000 + 10  # failed at the first poll, not at the deadline


def _check(dev):
    return checks_gpu.gpu_checks(dev)[0]


def test_a_pod_that_never_starts_fails_at_the_deadline(dev, make_ctx):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-gpu-gpu-"] = Script(
        never_ends=True, unschedulable="0/2 nodes are available", events=[TRIGGERED]
    )
    ctx = make_ctx(dev, cluster, deadline_s=90)
    outcome = execute(_check(dev), ctx, lambda: "waiting for a node")
    assert outcome.status == "fail"
    assert outcome.evidence == "no result within 1500 s; last seen: waiting for a node"
    assert ctx.clock() == pytest.approx(1000 + 90, abs=0.01)


@pytest.mark.parametrize(
    ("setup", "cause"),
    [
        (lambda n: n.driver("580.95.05"), "device plugin is not running"),
        (lambda n: n.devices("nvidia0", "nvidiactl").stub_only(), "did not inject the NVIDIA driver"),
        (lambda n: n.devices("nvidia0", "nvidiactl").driver("470.1.2"), "older than the image's CUDA"),
    ],
)
def test_the_serving_containers_real_helper_failure_is_explained(dev, make_ctx, tmp_path, setup, cause):
    """The probe's serving container, run here through the real helper on a broken stand-in GPU."""
    stand_in = GpuNode(tmp_path)
    setup(stand_in)
    done = _serving_container(dev, tmp_path, stand_in)
    assert done.returncode == 3
    cluster = FakeCluster(healthy_nodes(dev))
    _scale_from_zero(dev, cluster, serving_log=done.stderr, tf_log="", phase="Failed")
    outcome = execute(_check(dev), make_ctx(dev, cluster), lambda: "")
    assert outcome.status == "fail"
    assert outcome.evidence.startswith(
        "on node gpu-new: gpuplane-entrypoint: GPU check failed for image tensorflow/serving"
    )
    assert cause in outcome.cause
    assert "podCreatedToNodeRegistered" in outcome.timings


def test_tensorflow_without_gpu_is_explained(dev, make_ctx):
    line = (
        "gpuplane-entrypoint: GPU check failed for image tensorflow/tensorflow:2.20.0-gpu: TensorFlow sees no GPU "
        "although devices nvidia0 and driver 580.95.05 are there: the image's CUDA/cuDNN libraries do not match"
    )
    cluster = FakeCluster(healthy_nodes(dev))
    _scale_from_zero(dev, cluster, tf_log=line, phase="Failed")
    outcome = execute(_check(dev), make_ctx(dev, cluster), lambda: "")
    assert "CUDA/cuDNN do not match" in outcome.cause and "training image gpuplane pins" in outcome.fix


def test_what_the_node_shows_against_the_plan(dev, make_ctx):
    tf_log = report_lines(
        tf__version="2.20.0", tf__gpus="1", gpu__name="NVIDIA A100", gpu__compute_capability="80", gpu__driver="570.1"
    )
    cluster = FakeCluster(healthy_nodes(dev))
    _scale_from_zero(dev, cluster, tf_log=tf_log, units="4")
    outcome = execute(_check(dev), make_ctx(dev, cluster), lambda: "")
    assert outcome.status == "fail"
    assert outcome.evidence.startswith(
        "compute capability 80, the plan labels 86; driver 570.1, the plan labels driver major 580; "
        "node advertises 4 nvidia.com/gpu, the plan promises 1"
    )
    assert "AMI_DRIVER_MAJOR" in outcome.fix and "device plugin's config" in outcome.fix


def test_a_time_sliced_group_must_see_its_memory_share(dev, make_ctx):
    shared = dataclasses.replace(dev.group("gpu"), gpu_units=4, gpu_shared=True, memory_fraction=0.25)
    expect = dataclasses.replace(dev, groups=(dev.group("system"), shared))
    cluster = FakeCluster(healthy_nodes(dev))
    _scale_from_zero(
        dev, cluster, tf_log=GOOD_TF + "\n" + report_lines(env__GPUPLANE_GPU_MEMORY_FRACTION="0.25"), units="4"
    )
    assert _run(make_ctx(expect, cluster)).status == "pass"
    pod = next(o for o in cluster.created if o["kind"] == "Pod")
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env["GPUPLANE_GPU_MEMORY_FRACTION"] == "0.25" and env["GPUPLANE_GPU_SHARED"] == "true"
    cluster2 = FakeCluster(healthy_nodes(dev))
    _scale_from_zero(dev, cluster2, tf_log=GOOD_TF, units="4")
    outcome = execute(
        dataclasses.replace(_check(dev), run=checks_gpu.gpu_check(shared)), make_ctx(expect, cluster2), lambda: ""
    )
    assert outcome.evidence.startswith("memory fraction None, the plan promises 0.25")


# --- the in-pod commands, run here ---------------------------------------------------------------------------


def _serving_container(dev, tmp_path: Path, stand_in: GpuNode) -> subprocess.CompletedProcess[str]:
    pod = probes.gpu_pod("ns", RUN, checks_gpu.probe_for(dev.group("gpu")), uid=10001, gid=10001)
    container = pod["spec"]["initContainers"][0]
    command = list(container["command"])
    assert command[:2] == ["/bin/sh", tf_runtime.SCRIPT_PATH]
    command[1] = str(HELPER)
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    (tmp_path / "host").mkdir(exist_ok=True)
    host = FakeHost(tmp_path / "host")
    host.v2("/")
    host.write("/sys/fs/cgroup/memory.max", "536870912\n")
    full = base_env(**host.env)
    full.update(stand_in.env("devices"))
    full.update(env)  # the pod's own values win: its check mode, image and minimum driver
    return subprocess.run(command, env=full, capture_output=True, text=True, timeout=30, check=False)


def test_the_serving_container_reports_success_on_a_usable_stand_in_gpu(dev, tmp_path):
    stand_in = GpuNode(tmp_path).devices("nvidia0", "nvidiactl").driver("580.95.05")
    done = _serving_container(dev, tmp_path, stand_in)
    assert done.returncode == 0, done.stderr
    assert probes.parse_report(done.stdout) == {"serving.gpu_check": "passed"}


FAKE_TF = """
__version__ = "2.20.0"
class _Experimental:
    @staticmethod
    def get_device_details(device):
        return {"device_name": "NVIDIA A10G", "compute_capability": (8, 6)}
class config:
    experimental = _Experimental()
    @staticmethod
    def list_physical_devices(kind):
        return [object()] if GPUS else []
"""


@pytest.mark.parametrize("gpus", [1, 0])
def test_the_training_containers_python_against_a_stand_in_tensorflow(tmp_path, gpus):
    package = tmp_path / "site" / "tensorflow"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"GPUS = {gpus}\n" + FAKE_TF)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "GPUPLANE_GPU_MEMORY_FRACTION": "0.5"}
    done = subprocess.run(
        [sys.executable, "-c", probes.GPU_PYTHON], env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    report = probes.parse_report(done.stdout)
    assert report["tf.version"] == "2.20.0" and report["tf.gpus"] == str(gpus)
    assert report["env.GPUPLANE_GPU_MEMORY_FRACTION"] == "0.5"
    if gpus:
        assert report["gpu.name"] == "NVIDIA A10G" and report["gpu.compute_capability"] == "86"
    else:
        assert "gpu.name" not in report
    assert "gpu.driver" in report


# The first line of /proc/driver/nvidia/version as the proprietary and the open kernel modules write it; the
# second is the line of the H100 host this probe's commands ran on (benchmarks/RESULTS_verify_probe_gpu.md).
DRIVER_LINES = [
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023", "535.54.03"),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  ", "580.159.04"),
    (
        "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build  (dvs-builder@U16-I3)",
        "570.86.15",
    ),
]


@pytest.mark.parametrize(("line", "driver"), DRIVER_LINES)
def test_the_probe_reads_the_driver_version_of_either_kernel_module(tmp_path, line, driver):
    package = tmp_path / "site" / "tensorflow"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("GPUS = 0\n" + FAKE_TF)
    version = tmp_path / "proc" / "driver" / "nvidia" / "version"
    version.parent.mkdir(parents=True)
    version.write_text(line + "\nGCC version:  gcc version 12.2.0\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "GPUPLANE_PROC_ROOT": str(tmp_path / "proc")}
    done = subprocess.run(
        [sys.executable, "-c", probes.GPU_PYTHON], env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert probes.parse_report(done.stdout)["gpu.driver"] == driver
