"""The training rule: a training pod never gets fewer than 2 inter-op threads (TensorFlow issue #38969).

Measured in benchmarks/threads_training.py (results in benchmarks/RESULTS_threads_training.md): with one
inter-op thread per task, parameter-server training hangs on its first step; with two it trains, and
multi-worker mirrored runs are no slower. Serving and other single-process work keeps the inference rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.runtime._support import THREAD_VARS, FakeHost, printed, shell_params

PS_POD = {
    "GPUPLANE_TF_ROLES": "chief:1,worker:2,ps:1",
    "GPUPLANE_TF_ROLE": "worker",
    "GPUPLANE_TF_JOB_NAME": "mnist-1a2b3c4d",
    "JOB_COMPLETION_INDEX": "1",
}
OWN_TF_CONFIG = {"TF_CONFIG": '{"cluster":{"worker":["a:2222","b:2222"]},"task":{"type":"worker","index":0}}'}


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    return FakeHost(tmp_path)


def quota(host: FakeHost, cpu_max: str, cpus: str) -> None:
    host.v2("/")
    host.write("/sys/fs/cgroup/cpu.max", cpu_max + "\n")
    host.affinity(cpus)


@pytest.mark.parametrize("shell", shell_params())
@pytest.mark.parametrize("pod", [PS_POD, OWN_TF_CONFIG], ids=["gpuplane-layout", "own-tf-config"])
@pytest.mark.parametrize(
    ("cpu_max", "cpus", "intra"),
    [
        ("50000 100000", "0-3", 1),  # the dev stack's ps: half a CPU, and still 2 inter-op threads
        ("100000 100000", "0-3", 1),  # the dev stack's chief and workers
        ("150000 100000", "0-3", 2),  # intra-op rounded up, as for inference
        ("800000 100000", "0-15", 8),
    ],
)
def test_training_pod_under_a_quota_gets_two_inter_op_threads(
    host: FakeHost, shell: Sequence[str], pod: dict[str, str], cpu_max: str, cpus: str, intra: int
) -> None:
    quota(host, cpu_max, cpus)
    settings, stderr = printed(host, shell, **pod)
    assert settings["TF_NUM_INTEROP_THREADS"] == "2"
    assert {settings[v] for v in THREAD_VARS} == {str(intra)}
    assert "training rule" in printed(host, shell, GPUPLANE_VERBOSE="1", **pod)[1]
    assert "inference rule" not in stderr


@pytest.mark.parametrize(("cpu_max", "cpus", "inter"), [("50000 100000", "0-3", "1"), ("150000 100000", "0-3", "1")])
def test_serving_keeps_the_inference_rule(host: FakeHost, cpu_max: str, cpus: str, inter: str) -> None:
    quota(host, cpu_max, cpus)
    settings, stderr = printed(host)
    assert settings["TF_NUM_INTEROP_THREADS"] == inter
    assert "inference rule" in stderr


@pytest.mark.parametrize("shell", shell_params())
def test_training_without_a_limit_keeps_tf_defaults(host: FakeHost, shell: Sequence[str]) -> None:
    """TF sizes both pools from the 4 usable CPUs: 4 inter-op threads, nothing to fix."""
    quota(host, "max 100000", "0-3")
    settings, _ = printed(host, shell, **PS_POD)
    assert not any(v in settings for v in (*THREAD_VARS, "TF_NUM_INTEROP_THREADS"))


@pytest.mark.parametrize("shell", shell_params())
@pytest.mark.parametrize("cpu_max", ["max 100000", "100000 100000", "200000 100000"])
def test_training_on_a_single_cpu_gets_two_inter_op_threads(host: FakeHost, shell: Sequence[str], cpu_max: str) -> None:
    """One usable CPU and no effective quota: TF's default inter-op pool would be that one thread."""
    quota(host, cpu_max, "3")
    settings, stderr = printed(host, shell, GPUPLANE_VERBOSE="1", **PS_POD)
    assert settings["TF_NUM_INTEROP_THREADS"] == "2"
    assert not any(v in settings for v in THREAD_VARS)  # the intra-op pool is TF's: one thread here
    assert "no effective CPU limit on 1 usable CPU: inter=2" in stderr
    serving, _ = printed(host, shell)
    assert "TF_NUM_INTEROP_THREADS" not in serving


def test_users_inter_op_setting_wins_with_a_warning(host: FakeHost) -> None:
    quota(host, "100000 100000", "0-3")
    settings, stderr = printed(host, TF_NUM_INTEROP_THREADS="1", **PS_POD)
    assert settings["TF_NUM_INTEROP_THREADS"] == "1"
    assert "hangs parameter-server training (TensorFlow issue #38969)" in stderr
    settings, stderr = printed(host, TF_NUM_INTEROP_THREADS="3", **PS_POD)
    assert settings["TF_NUM_INTEROP_THREADS"] == "3"
    assert "#38969" not in stderr
