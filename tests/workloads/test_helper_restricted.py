"""The runtime helper as `restricted` pods run it: a non-root uid, every file system read-only.

It runs in a private mount namespace where every mount is remounted read-only, as uid/gid 10001 (the
workload user), with an empty environment but the Downward API values; it must print its settings,
exec the real command, and write nothing (any write fails there and would show as an error).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuplane.manifests.workload_security import MIN_WORKLOAD_UID
from tests.runtime._support import HELPER

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("setpriv")),
    reason="needs root, unshare and setpriv (util-linux) to drop to a uid in a read-only mount namespace",
)

ENV = "env -i PATH=/usr/bin:/bin GPUPLANE_CPU_LIMIT_MILLICORES=500 GPUPLANE_MEMORY_LIMIT_BYTES=1073741824"
USER = f"setpriv --reuid {MIN_WORKLOAD_UID} --regid {MIN_WORKLOAD_UID} --clear-groups"
# Remount every real mount read-only inside the namespace (proc, sys and dev stay as they are).
READ_ONLY = (
    "awk '$3 !~ /^(proc|sysfs|cgroup2?|devtmpfs|devpts|mqueue|tmpfs)$/ {print $2}' /proc/self/mounts | "
    'while read -r m; do mount -o bind,remount,ro "$m" 2>/dev/null || true; done'
)


@pytest.fixture
def helper() -> Iterator[Path]:
    """The helper in a folder uid 10001 may read, as the image has it (root-owned, world-readable).

    Not the checkout itself: a clone made by `mktemp -d` (mode 0700) or under a private home is readable by
    root only, and the sandboxed user would fail on the folder, not on anything the helper does.
    """
    folder = Path(tempfile.mkdtemp(prefix="gp-helper-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        copy = folder / HELPER.name
        shutil.copyfile(HELPER, copy)
        copy.chmod(0o644)
        yield copy
    finally:
        shutil.rmtree(folder)


def in_restricted_sandbox(command: str, helper: Path) -> subprocess.CompletedProcess[str]:
    probe = f"touch /tmp/.gp-probe 2>/dev/null || touch {shlex.quote(str(helper.parent))}/.gp-probe 2>/dev/null"
    # The sandbox must really be read-only, or the test proves nothing.
    script = f"{READ_ONLY}; if {probe}; then echo WRITABLE; exit 9; fi; {command}"
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_helper_prints_its_settings_as_a_non_root_user_on_a_read_only_root(helper):
    done = in_restricted_sandbox(f"{USER} {ENV} sh {shlex.quote(str(helper))} --print", helper)
    assert done.returncode == 0, done.stdout + done.stderr
    settings = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert settings["TF_NUM_INTRAOP_THREADS"] == "1" and settings["MALLOC_ARENA_MAX"] == "2"
    assert "Read-only" not in done.stderr and "Permission denied" not in done.stderr


def test_helper_execs_the_command_as_that_user(helper):
    inner = shlex.quote('echo "$(id -u):$(id -g) $TF_NUM_INTRAOP_THREADS $OMP_NUM_THREADS"')
    done = in_restricted_sandbox(f"{USER} {ENV} sh {shlex.quote(str(helper))} -- sh -c {inner}", helper)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == f"{MIN_WORKLOAD_UID}:{MIN_WORKLOAD_UID} 1 1"
    assert "Read-only" not in done.stderr and "Permission denied" not in done.stderr
