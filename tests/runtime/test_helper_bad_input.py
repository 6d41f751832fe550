"""Bad input never stops the real command: the helper ignores it, says so on stderr, and still execs.

The one deliberate exception to "always reaches exec" is a failed GPU check (a container given a GPU it
cannot use exits 3): not bad input but a broken node or image; tests/runtime/test_helper_gpu_check.py.
Bad values of the GPU check's own inputs are ignored like any other (tests below).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.runtime._support import FakeHost, base_env, parse_lines, run_helper, shell_params


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    h = FakeHost(tmp_path)
    h.v2("/")
    h.affinity("0-7")
    return h


def exec_env(host: FakeHost, shell: Sequence[str] = ("sh",), **env: str) -> tuple[dict[str, str], str]:
    """Run the helper with ``env`` as the real command: what the command sees, and the helper's stderr."""
    done = run_helper(["env"], base_env(**host.env, **env), shell)
    assert done.returncode == 0, done.stderr
    return parse_lines(done.stdout), done.stderr


@pytest.mark.parametrize("shell", shell_params())
@pytest.mark.parametrize(
    ("cpu_max", "warning"),
    [
        ("lots 100000", "malformed quota 'lots'"),
        ("-50000 100000", "malformed quota '-50000'"),
        ("0 100000", "quota 0"),
        ("50000 0", "malformed period"),
        ("50000 abc", "malformed period"),
        ("1.5 100000", "malformed quota '1.5'"),
        ("", "unreadable or empty"),
    ],
)
def test_malformed_cpu_max_is_ignored(host: FakeHost, shell: Sequence[str], cpu_max: str, warning: str) -> None:
    host.write("/sys/fs/cgroup/cpu.max", cpu_max)
    seen, stderr = exec_env(host, shell)
    assert warning in stderr
    assert "TF_NUM_INTRAOP_THREADS" not in seen
    assert seen["MALLOC_ARENA_MAX"] == "2"


@pytest.mark.parametrize("shell", shell_params())
def test_unreadable_cpu_max_is_ignored(host: FakeHost, shell: Sequence[str]) -> None:
    """A directory where the file should be reads like an I/O error (root ignores chmod 000)."""
    (host.cg / "sys/fs/cgroup/cpu.max").mkdir(parents=True)
    host.write("/sys/fs/cgroup/memory.max", "1073741824\n")
    seen, stderr = exec_env(host, shell)
    assert "cpu.max: unreadable or empty" in stderr
    assert seen["GPUPLANE_DETECTED_MEMORY_BYTES"] == "1073741824"  # the rest still works


@pytest.mark.parametrize("shell", shell_params())
def test_leading_zeros_are_decimal_not_octal(host: FakeHost, shell: Sequence[str]) -> None:
    """``$((08))`` is a fatal error in sh; the helper strips leading zeros first."""
    host.write("/sys/fs/cgroup/cpu.max", "0250000 0100000\n")
    seen, _ = exec_env(host, shell)
    assert seen["GPUPLANE_DETECTED_CPU_MILLICORES"] == "2500"


@pytest.mark.parametrize("quota", ["99999999999999999999", "9223372036854775807"])
def test_absurdly_large_quota_is_no_limit(host: FakeHost, quota: str) -> None:
    host.write("/sys/fs/cgroup/cpu.max", f"{quota} 100000\n")
    seen, stderr = exec_env(host)
    assert "GPUPLANE_DETECTED_CPU_MILLICORES" not in seen
    assert "TF_NUM_INTRAOP_THREADS" not in seen
    assert "ignored" not in stderr  # millions of CPUs is "no limit", not an error


@pytest.mark.parametrize(("quota", "millicores"), [("1000 100000", "10"), ("1 100000", "1"), ("1000 1000000", "1")])
def test_quota_below_one_cpu_gives_one_thread(host: FakeHost, quota: str, millicores: str) -> None:
    host.write("/sys/fs/cgroup/cpu.max", quota)
    seen, _ = exec_env(host)
    assert seen["GPUPLANE_DETECTED_CPU_MILLICORES"] == millicores
    assert seen["TF_NUM_INTRAOP_THREADS"] == "1"
    assert seen["TF_NUM_INTEROP_THREADS"] == "1"


def test_v1_bad_quota_and_period(tmp_path: Path) -> None:
    host = FakeHost(tmp_path)
    host.v1("cpu", "/a/b")
    host.affinity("0-7")
    host.write("/sys/fs/cgroup/cpu/a/b/cpu.cfs_quota_us", "unlimited\n")
    host.write("/sys/fs/cgroup/cpu/a/cpu.cfs_quota_us", "300000\n")
    host.write("/sys/fs/cgroup/cpu/a/cpu.cfs_period_us", "0\n")
    seen, stderr = exec_env(host)
    assert "cpu.cfs_quota_us: malformed quota 'unlimited'" in stderr
    assert "cpu.cfs_period_us: malformed '0'; assuming 100000" in stderr
    assert seen["GPUPLANE_DETECTED_CPU_MILLICORES"] == "3000"


@pytest.mark.parametrize("value", ["2.5", "-1000", "0", "two", "1500m", "99999999999"])
def test_nonsense_downward_cpu_is_ignored(host: FakeHost, value: str) -> None:
    host.write("/sys/fs/cgroup/cpu.max", "150000 100000\n")
    seen, stderr = exec_env(host, GPUPLANE_CPU_LIMIT_MILLICORES=value)
    assert f"ignored GPUPLANE_CPU_LIMIT_MILLICORES='{value}'" in stderr
    assert seen["GPUPLANE_DETECTED_CPU_MILLICORES"] == "1500"


@pytest.mark.parametrize("value", ["1Gi", "-1", "0", "lots"])
def test_nonsense_downward_memory_is_ignored(host: FakeHost, value: str) -> None:
    host.write("/sys/fs/cgroup/memory.max", "1073741824\n")
    seen, stderr = exec_env(host, GPUPLANE_MEMORY_LIMIT_BYTES=value)
    assert f"ignored GPUPLANE_MEMORY_LIMIT_BYTES='{value}'" in stderr
    assert seen["GPUPLANE_DETECTED_MEMORY_BYTES"] == "1073741824"


@pytest.mark.parametrize(
    ("content", "warning"), [("lots\n", "malformed memory limit 'lots'"), ("0\n", "memory limit 0")]
)
def test_bad_memory_max_is_ignored(host: FakeHost, content: str, warning: str) -> None:
    host.write("/sys/fs/cgroup/memory.max", content)
    seen, stderr = exec_env(host)
    assert warning in stderr
    assert "GPUPLANE_DETECTED_MEMORY_BYTES" not in seen


@pytest.mark.parametrize("cpus", ["zz", "3-1", "0-", ""])
def test_bad_affinity_list_is_ignored(host: FakeHost, cpus: str) -> None:
    host.affinity(cpus)
    host.write("/sys/fs/cgroup/cpu.max", "150000 100000\n")
    seen, stderr = exec_env(host)
    assert "Cpus_allowed_list" in stderr
    # Usable CPUs unknown: the quota is taken as a real limit.
    assert "GPUPLANE_DETECTED_CPUS" not in seen
    assert seen["TF_NUM_INTRAOP_THREADS"] == "2"


def test_bad_cpuset_is_ignored(host: FakeHost) -> None:
    host.write("/sys/fs/cgroup/cpuset.cpus.effective", "a-b\n")
    seen, stderr = exec_env(host)
    assert "cpuset.cpus.effective: malformed CPU list 'a-b'" in stderr
    assert seen["GPUPLANE_DETECTED_CPUS"] == "8"


def test_garbage_proc_files(tmp_path: Path) -> None:
    host = FakeHost(tmp_path)
    (host.proc / "self" / "cgroup").write_text("garbage\n::\n0\n")
    (host.proc / "self" / "mountinfo").write_text("1 2 3\n- - -\n\n")
    seen, _ = exec_env(host)
    assert seen["MALLOC_ARENA_MAX"] == "2"
    assert "TF_NUM_INTRAOP_THREADS" not in seen


def test_no_proc_at_all(tmp_path: Path) -> None:
    env = base_env(GPUPLANE_PROC_ROOT=str(tmp_path / "nope"), GPUPLANE_CGROUP_ROOT=str(tmp_path / "nope"))
    done = run_helper(["env"], env)
    assert done.returncode == 0
    assert parse_lines(done.stdout)["MALLOC_ARENA_MAX"] == "2"


@pytest.mark.parametrize("value", ["1.5", "0", "0.0", "-0.5", "half", "0.5.1", ".", "2"])
def test_bad_gpu_fraction_is_ignored(host: FakeHost, value: str) -> None:
    seen, stderr = exec_env(host, GPUPLANE_GPU_MEMORY_FRACTION=value)
    assert f"ignored GPUPLANE_GPU_MEMORY_FRACTION='{value}'" in stderr
    assert "TF_FORCE_GPU_ALLOW_GROWTH" not in seen


def test_bad_gpu_shared_is_ignored(host: FakeHost) -> None:
    seen, stderr = exec_env(host, GPUPLANE_GPU_SHARED="maybe")
    assert "ignored GPUPLANE_GPU_SHARED='maybe'" in stderr
    assert "TF_FORCE_GPU_ALLOW_GROWTH" not in seen


@pytest.mark.parametrize(
    ("env", "warning"),
    [
        ({"JOB_COMPLETION_INDEX": "4"}, "JOB_COMPLETION_INDEX=4 is outside the job's 4 tasks"),
        ({"JOB_COMPLETION_INDEX": "-1"}, "JOB_COMPLETION_INDEX='-1' is not an index"),
        ({}, "JOB_COMPLETION_INDEX='' is not an index"),
        ({"JOB_COMPLETION_INDEX": "0", "GPUPLANE_TF_ROLES": "chief:x"}, "role 'chief' needs a positive count"),
        ({"JOB_COMPLETION_INDEX": "0", "GPUPLANE_TF_ROLES": "chief"}, "role 'chief' needs a positive count"),
        ({"JOB_COMPLETION_INDEX": "0", "GPUPLANE_TF_ROLES": "boss:1"}, "unknown role 'boss'"),
        ({"JOB_COMPLETION_INDEX": "0", "GPUPLANE_TF_ROLES": "chief:2"}, "exactly one chief"),
        ({"JOB_COMPLETION_INDEX": "0", "GPUPLANE_TF_ROLES": "worker:1,worker:2"}, "appears twice"),
        ({"JOB_COMPLETION_INDEX": "0", "GPUPLANE_TF_ROLES": "worker:0"}, "needs a positive count"),
        ({"JOB_COMPLETION_INDEX": "0", "GPUPLANE_TF_JOB_NAME": "Bad_Name"}, "is not a DNS label"),
        ({"JOB_COMPLETION_INDEX": "0", "GPUPLANE_TF_JOB_NAME": ""}, "job name '' is not a DNS label"),
    ],
)
def test_bad_training_layout_gives_no_tf_config(host: FakeHost, env: dict[str, str], warning: str) -> None:
    full = {"GPUPLANE_TF_ROLES": "chief:1,worker:2,ps:1", "GPUPLANE_TF_JOB_NAME": "train", **env}
    seen, stderr = exec_env(host, **full)
    assert warning in stderr
    assert "TF_CONFIG" not in seen


def test_bad_port_falls_back_to_2222(host: FakeHost) -> None:
    seen, stderr = exec_env(
        host, GPUPLANE_TF_ROLES="worker:1", GPUPLANE_TF_JOB_NAME="t", JOB_COMPLETION_INDEX="0", GPUPLANE_TF_PORT="99999"
    )
    assert "ignored GPUPLANE_TF_PORT='99999'" in stderr
    assert seen["TF_CONFIG"] == '{"cluster":{"worker":["t-0.t:2222"]},"task":{"type":"worker","index":0}}'


@pytest.mark.parametrize("value", ["maybe", "on", "DEVICES"])
def test_unknown_gpu_check_mode_is_ignored(host: FakeHost, value: str) -> None:
    """An unknown mode is bad input, not a failed check: reported and skipped, the command still runs."""
    seen, stderr = exec_env(host, GPUPLANE_GPU_CHECK=value, GPUPLANE_DEV_ROOT=str(host.root / "no-dev"))
    assert f"ignored GPUPLANE_GPU_CHECK='{value}'" in stderr
    assert seen["GPUPLANE_GPU_CHECK"] == value


def test_malformed_min_driver_is_ignored(host: FakeHost) -> None:
    dev, lib = host.root / "dev", host.root / "lib"
    dev.mkdir()
    lib.mkdir()
    for name in ("nvidia0", "nvidiactl"):
        (dev / name).write_text("")
    (lib / "libcuda.so.580.95.05").write_text("")
    seen, stderr = exec_env(
        host,
        GPUPLANE_GPU_CHECK="devices",
        GPUPLANE_GPU_MIN_DRIVER="five-two-five",
        GPUPLANE_DEV_ROOT=str(dev),
        GPUPLANE_LIB_DIRS=str(lib),
    )
    assert "ignored GPUPLANE_GPU_MIN_DRIVER='five-two-five'" in stderr
    assert seen["GPUPLANE_GPU_CHECK"] == "devices"
