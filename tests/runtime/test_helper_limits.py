"""The helper finds the container's CPU and memory limits in fake cgroup v1 and v2 trees."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.runtime._support import THREAD_VARS, FakeHost, printed, shell_params

GIB = 2**30


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    return FakeHost(tmp_path)


def threads(settings: dict[str, str]) -> tuple[int, int] | None:
    """(intra, inter) the helper exported, or None when it left TF's defaults alone."""
    if "TF_NUM_INTRAOP_THREADS" not in settings:
        assert not any(v in settings for v in THREAD_VARS), settings
        assert "TF_NUM_INTEROP_THREADS" not in settings
        return None
    intra = int(settings["TF_NUM_INTRAOP_THREADS"])
    # Every other pool follows the intra-op count.
    assert {settings[v] for v in THREAD_VARS} == {str(intra)}, settings
    return intra, int(settings["TF_NUM_INTEROP_THREADS"])


## cgroup v2


@pytest.mark.parametrize("shell", shell_params())
@pytest.mark.parametrize(
    ("cpu_max", "cpus", "millicores", "expected"),
    [
        ("50000 100000", "0-3", 500, (1, 1)),  # half a CPU: never 0 threads
        ("100000 100000", "0-3", 1000, (1, 1)),
        ("150000 100000", "0-3", 1500, (2, 1)),  # rounded up: measured best
        ("250000 100000", "0-7", 2500, (3, 1)),
        ("350000 100000", "0-7", 3500, (4, 1)),
        ("800000 100000", "0-15", 8000, (8, 1)),  # the seed's case: 8 CPUs of a bigger node
        ("75000 50000", "0-3", 1500, (2, 1)),  # another period
        ("400000 100000", "0-3", 4000, None),  # quota == usable CPUs: no effective limit
        ("600000 100000", "0-3", 6000, None),  # quota above them
        ("max 100000", "0-3", None, None),
    ],
)
def test_v2_cpu_max(
    host: FakeHost,
    shell: Sequence[str],
    cpu_max: str,
    cpus: str,
    millicores: int | None,
    expected: tuple[int, int] | None,
) -> None:
    host.v2("/")
    host.write("/sys/fs/cgroup/cpu.max", cpu_max + "\n")
    host.affinity(cpus)
    settings, _ = printed(host, shell)
    assert threads(settings) == expected
    assert settings.get("GPUPLANE_DETECTED_CPU_MILLICORES") == (str(millicores) if millicores else None)
    assert settings["MALLOC_ARENA_MAX"] == "2"


@pytest.mark.parametrize(("content", "expected"), [("50000\n", 500), ("max\n", None), ("300000", 3000)])
def test_v2_single_field_cpu_max(host: FakeHost, content: str, expected: int | None) -> None:
    """``cpu.max`` written with only a quota (or only ``max``) means the default 100 ms period."""
    host.v2("/")
    host.write("/sys/fs/cgroup/cpu.max", content)
    host.affinity("0-7")
    settings, stderr = printed(host)
    assert settings.get("GPUPLANE_DETECTED_CPU_MILLICORES") == (str(expected) if expected else None)
    assert "ignored" not in stderr


def test_v2_nested_takes_tightest_level(host: FakeHost) -> None:
    """A container's own ``cpu.max`` can be ``max`` while its pod (a parent) carries the limit."""
    ctr = "/kubepods.slice/kubepods-burstable.slice/pod1.slice/cri-abc.scope"
    host.v2(ctr)
    host.write(f"/sys/fs/cgroup{ctr}/cpu.max", "max 100000\n")
    host.write("/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/pod1.slice/cpu.max", "250000 100000\n")
    host.write("/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/cpu.max", "max 100000\n")
    host.write("/sys/fs/cgroup/kubepods.slice/cpu.max", "700000 100000\n")
    host.affinity("0-15")
    settings, stderr = printed(host)
    assert settings["GPUPLANE_DETECTED_CPU_MILLICORES"] == "2500"
    assert threads(settings) == (3, 1)
    assert "pod1.slice/cpu.max" in stderr  # the summary names where the limit came from


def test_v2_levels_above_the_mount_are_not_read(host: FakeHost) -> None:
    """With a cgroup namespace the mount root is the container's own cgroup: the walk stops there."""
    host.v2("/")
    host.write("/sys/fs/cgroup/cpu.max", "max 100000\n")
    host.write("/sys/cpu.max", "50000 100000\n")  # outside the mount: must be ignored
    settings, _ = printed(host)
    assert "GPUPLANE_DETECTED_CPU_MILLICORES" not in settings


def test_v2_memory_nested_and_max(host: FakeHost) -> None:
    host.v2("/pod/ctr")
    host.write("/sys/fs/cgroup/pod/ctr/memory.max", "max\n")
    host.write("/sys/fs/cgroup/pod/memory.max", f"{3 * GIB}\n")
    host.write("/sys/fs/cgroup/memory.max", f"{8 * GIB}\n")
    settings, stderr = printed(host)
    assert settings["GPUPLANE_DETECTED_MEMORY_BYTES"] == str(3 * GIB)
    assert "no memory limit" not in stderr


def test_v2_cpuset_effective_bounds_usable_cpus(host: FakeHost) -> None:
    """A static-CPU-manager pod: quota 2, cpuset 2 CPUs; TF's own sizing is already right."""
    host.v2("/")
    host.write("/sys/fs/cgroup/cpu.max", "200000 100000\n")
    host.write("/sys/fs/cgroup/cpuset.cpus.effective", "4-5\n")
    host.affinity("0-63")
    settings, _ = printed(host)
    assert settings["GPUPLANE_DETECTED_CPUS"] == "2"
    assert threads(settings) is None


## cgroup v1


@pytest.mark.parametrize("shell", shell_params())
def test_v1_nested_quota_and_period(host: FakeHost, shell: Sequence[str]) -> None:
    host.v1("cpu,cpuacct", "/kubepods/burstable/pod1/ctr")
    base = "/sys/fs/cgroup/cpu,cpuacct/kubepods/burstable"
    host.write(f"{base}/pod1/ctr/cpu.cfs_quota_us", "-1\n")
    host.write(f"{base}/pod1/ctr/cpu.cfs_period_us", "100000\n")
    host.write(f"{base}/pod1/cpu.cfs_quota_us", "125000\n")
    host.write(f"{base}/pod1/cpu.cfs_period_us", "50000\n")  # 2.5 CPUs
    host.write(f"{base}/cpu.cfs_quota_us", "-1\n")
    host.affinity("0-7")
    settings, _ = printed(host, shell)
    assert settings["GPUPLANE_DETECTED_CPU_MILLICORES"] == "2500"
    assert threads(settings) == (3, 1)


def test_v1_controller_names_are_matched_exactly(host: FakeHost) -> None:
    """``cpuset`` and ``cpuacct`` are not ``cpu``: only the hierarchy carrying ``cpu`` counts."""
    host.v1("cpuset", "/a")
    host.v1("cpuacct", "/b")
    host.v1("cpu", "/c")
    host.write("/sys/fs/cgroup/cpuset/a/cpuset.cpus", "0-3\n")
    host.write("/sys/fs/cgroup/cpuacct/b/cpu.cfs_quota_us", "50000\n")  # decoy
    host.write("/sys/fs/cgroup/cpu/c/cpu.cfs_quota_us", "300000\n")
    host.affinity("0-7")
    settings, _ = printed(host)
    assert settings["GPUPLANE_DETECTED_CPU_MILLICORES"] == "3000"
    assert settings["GPUPLANE_DETECTED_CPUS"] == "4"
    assert threads(settings) == (3, 1)


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        ("9223372036854771712", None),  # the v1 "no limit" sentinel (2^63 rounded to pages)
        ("9223372036854775807", None),
        ("4611686018427387904", None),  # 2^62
        (str(2 * GIB), str(2 * GIB)),
    ],
)
def test_v1_memory_sentinel(host: FakeHost, limit: str, expected: str | None) -> None:
    host.v1("memory", "/ctr")
    host.write("/sys/fs/cgroup/memory/ctr/memory.limit_in_bytes", limit + "\n")
    settings, stderr = printed(host)
    assert settings.get("GPUPLANE_DETECTED_MEMORY_BYTES") == expected
    assert ("no memory limit found" in stderr) == (expected is None)
    assert settings["MALLOC_ARENA_MAX"] == "2"


def test_v1_cpuset_smaller_than_quota_means_no_effective_limit(host: FakeHost) -> None:
    host.v1("cpu", "/")
    host.v1("cpuset", "/")
    host.write("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "400000\n")
    host.write("/sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-1\n")
    host.write("/sys/fs/cgroup/cpuset/cpuset.cpus", "0-7\n")  # effective_cpus is preferred
    host.affinity("0-7")
    settings, _ = printed(host)
    assert settings["GPUPLANE_DETECTED_CPUS"] == "2"
    assert threads(settings) is None


def test_v1_cpuset_with_gaps_is_counted(host: FakeHost) -> None:
    host.v1("cpu", "/")
    host.v1("cpuset", "/")
    host.write("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "200000\n")
    host.write("/sys/fs/cgroup/cpuset/cpuset.cpus", "0-3,8-11,16\n")
    host.affinity("0-31")
    settings, _ = printed(host)
    assert settings["GPUPLANE_DETECTED_CPUS"] == "9"
    assert threads(settings) == (2, 1)


def test_affinity_bounds_usable_cpus(host: FakeHost) -> None:
    """taskset/affinity narrower than the quota: no effective limit."""
    host.v2("/")
    host.write("/sys/fs/cgroup/cpu.max", "300000 100000\n")
    host.affinity("0,2")
    settings, _ = printed(host)
    assert settings["GPUPLANE_DETECTED_CPUS"] == "2"
    assert threads(settings) is None


def test_docker_v1_without_cgroupns_uses_the_mount_root(host: FakeHost) -> None:
    """Docker on v1 mounts the container's own cgroup as the root: /proc says /docker/<id>."""
    host.v1("cpu,cpuacct", "/docker/abc123", mount_root="/docker/abc123")
    host.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "150000\n")
    host.write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n")
    settings, _ = printed(host)
    assert settings["GPUPLANE_DETECTED_CPU_MILLICORES"] == "1500"


def test_hybrid_v1_and_v2_takes_the_tighter(host: FakeHost) -> None:
    """Hybrid hosts (like systemd's): an unified mount plus v1 controllers; read both."""
    host.v2("/", mount="/sys/fs/cgroup/unified")
    host.v1("cpu", "/ctr")
    host.write("/sys/fs/cgroup/unified/cpu.max", "300000 100000\n")
    host.write("/sys/fs/cgroup/cpu/ctr/cpu.cfs_quota_us", "200000\n")
    host.affinity("0-7")
    settings, _ = printed(host)
    assert settings["GPUPLANE_DETECTED_CPU_MILLICORES"] == "2000"


def test_no_mountinfo_falls_back_to_the_usual_paths(host: FakeHost) -> None:
    """Without /proc/self/mountinfo the conventional /sys/fs/cgroup layout is tried."""
    host.write("/sys/fs/cgroup/cgroup.controllers", "cpu memory\n")
    host.write("/sys/fs/cgroup/cpu.max", "150000 100000\n")
    host.write("/sys/fs/cgroup/memory.max", "1073741824\n")
    settings, _ = printed(host)
    assert settings["GPUPLANE_DETECTED_CPU_MILLICORES"] == "1500"
    assert settings["GPUPLANE_DETECTED_MEMORY_BYTES"] == "1073741824"


## Downward API


@pytest.mark.parametrize(
    ("cgroup_quota", "downward", "expected_m"),
    [
        (None, "2500", 2500),  # only the Downward API knows
        ("400000 100000", "2500", 2500),  # the Downward API is tighter
        ("150000 100000", "4000", 1500),  # the cgroup is tighter
    ],
)
def test_downward_cpu_combines_with_cgroup(
    host: FakeHost, cgroup_quota: str | None, downward: str, expected_m: int
) -> None:
    host.v2("/")
    if cgroup_quota:
        host.write("/sys/fs/cgroup/cpu.max", cgroup_quota + "\n")
    host.affinity("0-7")
    settings, _ = printed(host, GPUPLANE_CPU_LIMIT_MILLICORES=downward)
    assert settings["GPUPLANE_DETECTED_CPU_MILLICORES"] == str(expected_m)
    assert threads(settings) == (-(-expected_m // 1000), 1)  # rounded up


def test_downward_memory_combines_with_cgroup(host: FakeHost) -> None:
    host.v2("/")
    host.write("/sys/fs/cgroup/memory.max", f"{4 * GIB}\n")
    settings, _ = printed(host, GPUPLANE_MEMORY_LIMIT_BYTES=str(2 * GIB))
    assert settings["GPUPLANE_DETECTED_MEMORY_BYTES"] == str(2 * GIB)
    settings, _ = printed(host, GPUPLANE_MEMORY_LIMIT_BYTES=str(8 * GIB))
    assert settings["GPUPLANE_DETECTED_MEMORY_BYTES"] == str(4 * GIB)


def test_nothing_found_keeps_defaults(host: FakeHost) -> None:
    """No cgroup files at all (e.g. plain docker run without limits): only the allocator setting."""
    settings, stderr = printed(host)
    assert settings == {"MALLOC_ARENA_MAX": "2", "GPUPLANE_DETECTED_CPUS": "4"}
    assert "no memory limit found" in stderr
