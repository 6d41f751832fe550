"""Fake cgroup/proc trees and a runner for the runtime helper script.

Kept out of conftest.py so that the helper's tests run on their own too (``pytest --noconftest``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests import tools

ROOT = Path(__file__).resolve().parents[2]
HELPER = ROOT / "manifests" / "runtime" / "gpuplane-entrypoint.sh"

# The shells the helper must run under: sh (dash on Debian), dash itself, busybox ash (Alpine-like
# images). A shell that is not installed is skipped, not failed.
SHELLS: dict[str, list[str]] = {
    "sh": ["sh"],
    "dash": ["dash"],
    "busybox": ["busybox", "sh"],
}


def shell_params() -> list[object]:
    """``pytest.param`` per shell, skipped where the shell is missing."""
    params: list[object] = []
    for name, argv in SHELLS.items():
        # dash and busybox are tools of .ci/tools: skipped where missing, a failure where CI requires them.
        marks = [pytest.mark.tool(argv[0])] if name != "sh" else []
        params.append(pytest.param(argv, id=name, marks=marks))
    return params


def base_env(**extra: str) -> dict[str, str]:
    """A minimal environment: nothing from the test process that the helper reads."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    env.update(extra)
    return env


class FakeHost:
    """A fake /proc/self and cgroup mount tree under ``root``, pointed at by the helper's env knobs.

    Paths given to ``write`` are absolute paths as the container would see them (e.g.
    ``/sys/fs/cgroup/cpu.max``); they land under ``root/cg``.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.proc = root / "proc"
        self.cg = root / "cg"
        (self.proc / "self").mkdir(parents=True)
        self.cg.mkdir()
        self._cgroup_lines: list[str] = []
        self._mount_lines: list[str] = []
        self.affinity("0-3")

    @property
    def env(self) -> dict[str, str]:
        return {"GPUPLANE_CGROUP_ROOT": str(self.cg), "GPUPLANE_PROC_ROOT": str(self.proc)}

    def write(self, path: str, content: str) -> Path:
        target = self.cg / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        return target

    def affinity(self, cpus: str | None) -> None:
        status = "Name:\tsh\nState:\tR (running)\n"
        if cpus is not None:
            status += f"Cpus_allowed:\tff\nCpus_allowed_list:\t{cpus}\n"
        (self.proc / "self" / "status").write_text(status + "VmRSS:\t1000 kB\n")

    def v2(self, path: str = "/", mount: str = "/sys/fs/cgroup", mount_root: str = "/") -> None:
        """Put the process in v2 cgroup ``path`` of a cgroup2 mount at ``mount``."""
        self._cgroup_lines.append(f"0::{path}")
        n = len(self._mount_lines) + 30
        self._mount_lines.append(
            f"{n} 25 0:{n} {mount_root} {mount} rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
            "rw,nsdelegate,memory_recursiveprot"
        )
        (Path(str(self.cg) + mount)).mkdir(parents=True, exist_ok=True)
        self._flush()

    def v1(self, controllers: str, path: str = "/", mount: str | None = None, mount_root: str = "/") -> None:
        """Put the process in v1 cgroup ``path`` of the hierarchy carrying ``controllers``."""
        mount = mount or f"/sys/fs/cgroup/{controllers}"
        hier = len(self._cgroup_lines) + 2
        self._cgroup_lines.append(f"{hier}:{controllers}:{path}")
        n = len(self._mount_lines) + 30
        self._mount_lines.append(
            f"{n} 25 0:{n} {mount_root} {mount} rw,nosuid,nodev,noexec,relatime shared:{n} - cgroup cgroup "
            f"rw,{controllers}"
        )
        (Path(str(self.cg) + mount)).mkdir(parents=True, exist_ok=True)
        self._flush()

    def _flush(self) -> None:
        (self.proc / "self" / "cgroup").write_text("".join(line + "\n" for line in self._cgroup_lines))
        other = "22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/root rw\n"
        (self.proc / "self" / "mountinfo").write_text(other + "".join(line + "\n" for line in self._mount_lines))


def run_helper(
    args: Sequence[str],
    env: Mapping[str, str],
    shell: Sequence[str] = ("sh",),
    timeout: float = 30,
) -> subprocess.CompletedProcess[str]:
    """Run the helper under ``shell`` with exactly ``env`` (a shell of .ci/tools that is missing skips the test)."""
    tool = tools.launched_by().get(shell[0])
    command = tools.need(tool) if tool else shell[0]
    return subprocess.run(
        [command, *shell[1:], str(HELPER), *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def parse_lines(stdout: str) -> dict[str, str]:
    """KEY=VALUE lines (``--print``, or ``env``'s output) as a dict."""
    out = {}
    for line in stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key] = value
    return out


def printed(host: FakeHost | None, shell: Sequence[str] = ("sh",), **env: str) -> tuple[dict[str, str], str]:
    """Run ``--print`` against ``host`` with extra ``env``; return (settings, stderr)."""
    full = base_env(**(host.env if host else {}), **env)
    done = run_helper(["--print"], full, shell)
    assert done.returncode == 0, done.stderr
    return parse_lines(done.stdout), done.stderr


THREAD_VARS = (
    "TF_NUM_INTRAOP_THREADS",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "LOKY_MAX_CPU_COUNT",
    "PYTHON_CPU_COUNT",
)
