"""The GPU check: a container given GPUs that cannot use them stops before its command, loudly.

Stand-ins: a fake /dev (GPUPLANE_DEV_ROOT) with or without `nvidia0` + `nvidiactl`, a fake driver library
directory (GPUPLANE_LIB_DIRS) with or without `libcuda.so.<driver version>`, and a fake `python3` that
answers like TensorFlow with or without a GPU. The real command is `env`, so a passing check is seen by
what the command printed, and a failing one by exit 3, the one message and no output of the command.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.runtime._support import FakeHost, base_env, parse_lines, run_helper, shell_params

IMAGE = "example.com/train:2.20.0"
GPU_EXIT = 3


class GpuNode:
    """A fake GPU node as a container sees it: device nodes, the driver library, a Python with TF."""

    def __init__(self, root: Path) -> None:
        self.dev = root / "dev"
        self.lib = root / "lib"
        self.bin = root / "bin"
        for d in (self.dev, self.lib, self.bin):
            d.mkdir()

    def devices(self, *names: str) -> GpuNode:
        for name in names:
            (self.dev / name).write_text("")
        return self

    def driver(self, version: str) -> GpuNode:
        (self.lib / f"libcuda.so.{version}").write_text("")
        (self.lib / "libcuda.so.1").symlink_to(f"libcuda.so.{version}")
        return self

    def stub_only(self) -> GpuNode:
        """What CUDA images carry without a driver: libcuda.so and libcuda.so.1, no versioned file."""
        (self.lib / "libcuda.so").write_text("")
        (self.lib / "libcuda.so.1").symlink_to("libcuda.so")
        return self

    def tensorflow(self, gpus: int, exit_code: int | None = None) -> GpuNode:
        """A `python3` that prints what the helper's snippet prints and exits as TensorFlow would."""
        code = exit_code if exit_code is not None else (0 if gpus else 3)
        script = self.bin / "python3"
        script.write_text(f'#!/bin/sh\necho "gpuplane-gpu-check: TensorFlow 2.20.0 sees {gpus} GPU(s)"\nexit {code}\n')
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
        return self

    def env(self, mode: str, **extra: str) -> dict[str, str]:
        path = f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        return {
            "GPUPLANE_GPU_CHECK": mode,
            "GPUPLANE_IMAGE": IMAGE,
            "GPUPLANE_DEV_ROOT": str(self.dev),
            "GPUPLANE_LIB_DIRS": f"{self.root_missing}:{self.lib}",
            "PATH": path,
            **extra,
        }

    @property
    def root_missing(self) -> str:
        return str(self.dev.parent / "no-such-lib-dir")


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    (tmp_path / "host").mkdir()
    h = FakeHost(tmp_path / "host")
    h.v2("/")
    h.write("/sys/fs/cgroup/memory.max", "4294967296\n")  # a limit, so the helper has nothing else to say
    return h


@pytest.fixture
def node(tmp_path: Path) -> GpuNode:
    return GpuNode(tmp_path)


def run(host: FakeHost, env: dict[str, str], shell: Sequence[str] = ("sh",)) -> subprocess.CompletedProcess[str]:
    full = base_env(**host.env)
    full.update(env)
    return run_helper(["env"], full, shell)


@pytest.mark.parametrize("shell", shell_params())
@pytest.mark.parametrize("mode", ["devices", "tensorflow"])
def test_a_usable_gpu_passes_and_the_command_runs(
    host: FakeHost, node: GpuNode, shell: Sequence[str], mode: str
) -> None:
    node.devices("nvidia0", "nvidiactl", "nvidia-uvm").driver("580.95.05").tensorflow(gpus=1)
    done = run(host, node.env(mode, GPUPLANE_GPU_MIN_DRIVER="525", GPUPLANE_VERBOSE="1"), shell)
    assert done.returncode == 0, done.stderr
    assert parse_lines(done.stdout)["GPUPLANE_GPU_CHECK"] == mode  # `env` ran: the command started
    assert f"GPU check ({mode}) passed: devices nvidia0, driver 580.95.05" in done.stderr


@pytest.mark.parametrize("shell", shell_params())
@pytest.mark.parametrize("mode", ["devices", "tensorflow"])
def test_no_device_node_stops_the_container(host: FakeHost, node: GpuNode, shell: Sequence[str], mode: str) -> None:
    node.driver("580.95.05").tensorflow(gpus=0)  # no /dev/nvidia*: the GPU was never mounted
    done = run(host, node.env(mode), shell)
    assert done.returncode == GPU_EXIT
    assert done.stdout == ""  # the command never started
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # one message
    assert f"GPU check failed for image {IMAGE}" in lines[0]
    assert "the GPU was not mounted into the container" in lines[0]
    assert "gpuCheck: false" in lines[0]


def test_nvidiactl_alone_is_not_a_gpu(host: FakeHost, node: GpuNode) -> None:
    node.devices("nvidiactl", "nvidia-uvm").driver("580.95.05")
    done = run(host, node.env("devices"))
    assert done.returncode == GPU_EXIT
    assert "no GPU device node" in done.stderr


def test_a_cuda_stub_is_not_the_driver(host: FakeHost, node: GpuNode) -> None:
    """CUDA images register a stub libcuda.so.1; only the toolkit's libcuda.so.<version> is a driver."""
    node.devices("nvidia0", "nvidiactl").stub_only()
    done = run(host, node.env("devices"))
    assert done.returncode == GPU_EXIT
    assert "not the NVIDIA driver library" in done.stderr
    assert "container toolkit" in done.stderr


def test_a_driver_too_old_for_the_image_stops_the_container(host: FakeHost, node: GpuNode) -> None:
    node.devices("nvidia0", "nvidiactl").driver("470.256.02")
    done = run(host, node.env("devices", GPUPLANE_GPU_MIN_DRIVER="525"))
    assert done.returncode == GPU_EXIT
    assert "driver 470.256.02 is too old" in done.stderr
    assert "525 or newer" in done.stderr


def test_tensorflow_that_sees_no_gpu_stops_the_container(host: FakeHost, node: GpuNode) -> None:
    """Device and driver are there, TensorFlow still finds no GPU: the image's libraries do not match."""
    node.devices("nvidia0", "nvidiactl").driver("580.95.05").tensorflow(gpus=0)
    done = run(host, node.env("tensorflow"))
    assert done.returncode == GPU_EXIT
    assert done.stdout == ""
    assert "TensorFlow sees no GPU" in done.stderr
    assert "CUDA/cuDNN libraries do not match its TensorFlow" in done.stderr
    assert "TensorFlow 2.20.0 sees 0 GPU(s)" in done.stderr  # TensorFlow's own answer is quoted


def test_the_devices_mode_never_runs_python(host: FakeHost, node: GpuNode) -> None:
    """Serving images have no Python: `devices` must not need it (here a python3 that would say no GPU)."""
    node.devices("nvidia0", "nvidiactl").driver("580.95.05").tensorflow(gpus=0)
    done = run(host, node.env("devices"))
    assert done.returncode == 0, done.stderr


def test_tensorflow_that_cannot_be_imported_stops_the_container(host: FakeHost, node: GpuNode) -> None:
    node.devices("nvidia0", "nvidiactl").driver("580.95.05").tensorflow(gpus=0, exit_code=1)
    done = run(host, node.env("tensorflow"))
    assert done.returncode == GPU_EXIT
    assert "could not ask TensorFlow for its GPUs (python3 exited 1)" in done.stderr


def test_an_image_without_python_is_checked_by_devices_only(host: FakeHost, node: GpuNode) -> None:
    node.devices("nvidia0", "nvidiactl").driver("580.95.05")
    done = run(host, node.env("tensorflow", GPUPLANE_GPU_PYTHON="no-such-python"))
    assert done.returncode == 0, done.stderr
    assert "TensorFlow's own device list not checked" in done.stderr


@pytest.mark.parametrize("value", ["", "off"])
def test_no_check_without_the_setting(host: FakeHost, node: GpuNode, value: str) -> None:
    """A CPU container (or `gpuCheck: false`) runs on a node without any GPU."""
    done = run(host, node.env(value))
    assert done.returncode == 0, done.stderr
    assert "GPU check" not in done.stderr


def test_a_bad_mode_is_reported_and_ignored(host: FakeHost, node: GpuNode) -> None:
    done = run(host, node.env("maybe"))
    assert done.returncode == 0
    assert "ignored GPUPLANE_GPU_CHECK='maybe'" in done.stderr


def test_print_never_runs_the_check(host: FakeHost, node: GpuNode) -> None:
    """`--print` shows the settings on any machine, GPU or not."""
    full = base_env(**host.env)
    full.update(node.env("devices"))
    done = run_helper(["--print"], full)
    assert done.returncode == 0, done.stderr
