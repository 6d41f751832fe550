"""The helper on this machine's real cgroups: the test process's own, and ones the test creates (root)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime._support import HELPER, base_env, parse_lines, printed

## An independent reading of the real cgroup files, to compare the helper with.


def _mounts() -> list[tuple[str, str, str, str]]:
    """(root, mount point, fstype, super options) of every cgroup mount, from mountinfo."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            out.append((fields[3], fields[4], tail[0], tail[2]))
    return out


def _own_dirs() -> dict[str, tuple[Path, Path]]:
    """hierarchy key ("2" or a v1 controller) -> (own cgroup dir, mount point)."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hid, ctl, path = line.split(":", 2)
        for key in ["2"] if hid == "0" and not ctl else ctl.split(","):
            paths[key] = path
    out = {}
    for root, mnt, fstype, opts in _mounts():
        keys = ["2"] if fstype == "cgroup2" else opts.split(",")
        for key in keys:
            if key in paths and key not in out:
                path = paths[key]
                rel = path[len(root) :] if root != "/" and path.startswith(root) else ("" if root != "/" else path)
                out[key] = (Path(mnt + rel.rstrip("/")), Path(mnt))
    return out


def _levels(own: Path, top: Path) -> Iterator[Path]:
    d = own
    while True:
        yield d
        if d == top or top not in d.parents:
            return
        d = d.parent


def reference_limits() -> tuple[int | None, int, int | None]:
    """(CPU millicores or None, usable CPUs, memory bytes or None) as this test reads them."""
    dirs = _own_dirs()
    quotas: list[int] = []
    memory: list[int] = []
    cpus = [len(os.sched_getaffinity(0))]
    if "2" in dirs:
        for d in _levels(*dirs["2"]):
            with contextlib.suppress(OSError):
                q, *p = (d / "cpu.max").read_text().split()
                if q != "max":
                    quotas.append(-(-int(q) * 1000 // int(p[0] if p else 100000)))
            with contextlib.suppress(OSError):
                m = (d / "memory.max").read_text().strip()
                if m != "max":
                    memory.append(int(m))
    if "cpu" in dirs:
        for d in _levels(*dirs["cpu"]):
            with contextlib.suppress(OSError):
                q1 = int((d / "cpu.cfs_quota_us").read_text())
                if q1 > 0:
                    quotas.append(-(-q1 * 1000 // int((d / "cpu.cfs_period_us").read_text())))
    if "memory" in dirs:
        for d in _levels(*dirs["memory"]):
            with contextlib.suppress(OSError):
                m1 = int((d / "memory.limit_in_bytes").read_text())
                if m1 < 2**62:
                    memory.append(m1)
    return (min(quotas) if quotas else None, min(cpus), min(memory) if memory else None)


def test_real_cgroup_of_the_test_process() -> None:
    """No fake tree: the helper reads /proc and /sys/fs/cgroup like in a container."""
    if not Path("/proc/self/cgroup").exists():
        pytest.skip("no /proc/self/cgroup (not Linux)")
    millicores, cpus, memory = reference_limits()
    settings, _ = printed(None)
    assert settings.get("GPUPLANE_DETECTED_CPU_MILLICORES") == (str(millicores) if millicores else None)
    assert int(settings["GPUPLANE_DETECTED_CPUS"]) <= cpus
    assert settings.get("GPUPLANE_DETECTED_MEMORY_BYTES") == (str(memory) if memory else None)
    limited = millicores is not None and millicores < 1000 * int(settings["GPUPLANE_DETECTED_CPUS"])
    assert ("TF_NUM_INTRAOP_THREADS" in settings) == limited
    assert settings["MALLOC_ARENA_MAX"] == "2"


## Real cgroups with real quotas (root only).


class RealCgroups:
    """Cgroups this test creates on the hierarchy that carries the cpu controller; removed afterwards."""

    def __init__(self) -> None:
        self.version = 0
        self.cpu_mount: Path | None = None
        self.memory_mount: Path | None = None
        self.created: list[Path] = []
        mounts = _mounts()
        for _, mnt, fstype, _opts in mounts:
            if fstype == "cgroup2" and "cpu" in (Path(mnt) / "cgroup.controllers").read_text().split():
                self.version, self.cpu_mount, self.memory_mount = 2, Path(mnt), Path(mnt)
                break
        else:
            for _, mnt, fstype, opts in mounts:
                if fstype == "cgroup" and "cpu" in opts.split(","):
                    self.version, self.cpu_mount = 1, Path(mnt)
                if fstype == "cgroup" and "memory" in opts.split(","):
                    self.memory_mount = Path(mnt)

    def why_not(self) -> str | None:
        if os.geteuid() != 0:
            return "needs root to create cgroups"
        if self.cpu_mount is None:
            return "no cgroup hierarchy with the cpu controller"
        if not os.access(self.cpu_mount, os.W_OK):
            return f"{self.cpu_mount} is not writable"
        return None

    def make(self, mount: Path, rel: str) -> Path:
        path = mount / rel
        path.mkdir()
        self.created.append(path)
        return path

    def set_cpu(self, path: Path, cpus: float | None) -> None:
        quota = round(cpus * 100_000) if cpus is not None else None
        if self.version == 2:
            (path / "cpu.max").write_text(f"{quota if quota is not None else 'max'} 100000")
        else:
            (path / "cpu.cfs_period_us").write_text("100000")
            (path / "cpu.cfs_quota_us").write_text(str(quota if quota is not None else -1))

    def run_print(self, *cgroups: Path) -> tuple[dict[str, str], str]:
        """The helper's --print from a shell that first joins ``cgroups``."""
        joins = " && ".join(f'echo $$ > "{c}/cgroup.procs"' for c in cgroups)
        done = subprocess.run(
            ["sh", "-c", f'{joins} && exec sh "$0" --print', str(HELPER)],
            env=base_env(),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return parse_lines(done.stdout), done.stderr

    def cleanup(self) -> None:
        for path in reversed(self.created):
            with contextlib.suppress(OSError):
                path.rmdir()


@pytest.fixture
def real() -> Iterator[RealCgroups]:
    cg = RealCgroups()
    reason = cg.why_not()
    if reason:
        pytest.skip(f"cannot create real cgroups here: {reason}")
    if cg.version == 2:
        assert cg.cpu_mount is not None
        control = cg.cpu_mount / "cgroup.subtree_control"
        if "cpu" not in control.read_text().split():
            try:
                control.write_text("+cpu")
            except OSError as err:
                pytest.skip(f"cannot enable the cpu controller on {cg.cpu_mount}: {err}")
    yield cg
    cg.cleanup()
    for path in cg.created:
        assert not path.exists(), f"cgroup {path} was left behind"


@pytest.mark.realcgroup
@pytest.mark.parametrize(("cpus", "expected"), [(0.5, ("500", "1", "1")), (1.5, ("1500", "2", "1"))])
def test_real_quota(real: RealCgroups, cpus: float, expected: tuple[str, str, str]) -> None:
    assert real.cpu_mount is not None
    if cpus >= len(os.sched_getaffinity(0)):
        pytest.skip("this machine has no more CPUs than the quota")
    cg = real.make(real.cpu_mount, f"gpuplane-test-{os.getpid()}")
    real.set_cpu(cg, cpus)
    settings, _ = real.run_print(cg)
    got = (
        settings.get("GPUPLANE_DETECTED_CPU_MILLICORES"),
        settings.get("TF_NUM_INTRAOP_THREADS"),
        settings.get("TF_NUM_INTEROP_THREADS"),
    )
    assert got == expected


@pytest.mark.realcgroup
def test_real_nested_quota_is_found_up_the_tree(real: RealCgroups) -> None:
    """The limit sits on the parent (the pod), the process lives in an unlimited child (the container)."""
    assert real.cpu_mount is not None
    parent = real.make(real.cpu_mount, f"gpuplane-test-{os.getpid()}")
    real.set_cpu(parent, 0.5)
    if real.version == 2:
        (parent / "cgroup.subtree_control").write_text("+cpu")
    child = real.make(parent, "ctr")
    real.set_cpu(child, None)
    settings, stderr = real.run_print(child)
    assert settings["GPUPLANE_DETECTED_CPU_MILLICORES"] == "500"
    assert settings["TF_NUM_INTRAOP_THREADS"] == "1"
    assert f"{parent.name}/cpu" in stderr


@pytest.mark.realcgroup
def test_real_memory_limit(real: RealCgroups) -> None:
    if real.memory_mount is None or not os.access(real.memory_mount, os.W_OK):
        pytest.skip("no writable memory controller")
    cg = real.make(real.memory_mount, f"gpuplane-test-mem-{os.getpid()}")
    limit = 512 * 2**20
    if real.version == 2:
        control = real.memory_mount / "cgroup.subtree_control"
        if "memory" not in control.read_text().split():
            pytest.skip("the memory controller is not enabled for children")
        (cg / "memory.max").write_text(str(limit))
    else:
        (cg / "memory.limit_in_bytes").write_text(str(limit))
    settings, stderr = real.run_print(cg)
    assert settings["GPUPLANE_DETECTED_MEMORY_BYTES"] == str(limit)
    assert "no memory limit" not in stderr
