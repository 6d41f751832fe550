"""Run `gpuplane verify`'s in-pod probe commands on a real machine (a GPU host when there is one), no Kubernetes.

Why: the GPU probe's two containers and the runtime probe are tested here against stand-ins (fake /dev, a fake
driver library, a fake `tensorflow`, a fake cgroup tree). On a real GPU host the same commands, built by
`manifests/verify.py` and run through the real runtime helper, show what only real hardware shows: the
helper's device check finding the device nodes and the driver library the NVIDIA stack installs, the
driver version the probe reads from `/proc/driver/nvidia/version`, and what the runtime probe reports from
the host's own cgroup. It needs only the standard library and this checkout:

    PYTHONPATH=src python3 benchmarks/verify_probe_gpu.py [OUT.json]

It prints one JSON document (also written to OUT.json when given); benchmarks/RESULTS_verify_probe_gpu.md
records a run.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HELPER = ROOT / "manifests" / "runtime" / "gpuplane-entrypoint.sh"

sys.path.insert(0, str(ROOT / "src"))

from gpuplane.manifests import tf_runtime  # noqa: E402
from gpuplane.manifests import verify as probes  # noqa: E402

# A stand-in `tensorflow` for hosts without it: the probe's own Python then still reads the real driver.
FAKE_TF = """
__version__ = "stand-in"
class _Experimental:
    @staticmethod
    def get_device_details(device):
        return {"device_name": "stand-in", "compute_capability": (0, 0)}
class config:
    experimental = _Experimental()
    @staticmethod
    def list_physical_devices(kind):
        return []
"""


def _run(command: list[str], env: dict[str, str], timeout: int = 300) -> dict[str, Any]:
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    return {
        "exit": done.returncode,
        "report": probes.parse_report(done.stdout),
        "stderr": done.stderr.strip().splitlines()[-5:],
    }


def _container_env(container: dict[str, Any], cpu_millis: int, memory_bytes: int, scratch: Path) -> dict[str, str]:
    """The container's env as the kubelet would give it: static values, the Downward API limits, a scratch HOME."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    env.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
    env[tf_runtime.ENV_CPU_LIMIT] = str(cpu_millis)
    env[tf_runtime.ENV_MEMORY_LIMIT] = str(memory_bytes)
    env["HOME"] = str(scratch)
    env["CUDA_CACHE_PATH"] = str(scratch / ".nv")
    return env


def _through_helper(container: dict[str, Any]) -> list[str]:
    command = list(container["command"])
    assert command[:2] == ["/bin/sh", tf_runtime.SCRIPT_PATH], command
    command[1] = str(HELPER)
    return command


def main() -> dict[str, Any]:
    """Run the probes' commands and return what they reported."""
    result: dict[str, Any] = {"host": platform.node(), "machine": platform.machine(), "python": sys.version.split()[0]}
    smi = shutil.which("nvidia-smi")
    if smi:
        query = "name,driver_version,compute_cap,memory.total"
        done = subprocess.run(
            [smi, f"--query-gpu={query}", "--format=csv,noheader"], capture_output=True, text=True, check=False
        )
        result["nvidiaSmi"] = done.stdout.strip().splitlines()
    try:
        result["procDriverVersion"] = Path("/proc/driver/nvidia/version").read_text().splitlines()[0]
    except OSError as exc:
        result["procDriverVersion"] = f"unreadable: {exc}"
    gpu_pod = probes.gpu_pod("ns", "device-run", probes.GpuProbe(group="gpu"), uid=10001, gid=10001)
    serving = gpu_pod["spec"]["initContainers"][0]
    training = gpu_pod["spec"]["containers"][0]
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        env = _container_env(serving, 500, 512 * 2**20, scratch)
        result["servingContainer"] = _run(_through_helper(serving), env)
        env = _container_env(training, 1000, 4 * 2**30, scratch)
        result["trainingContainer"] = _run(_through_helper(training), env)
        site = scratch / "site" / "tensorflow"
        site.mkdir(parents=True)
        (site / "__init__.py").write_text(FAKE_TF)
        stand_in_env = {**env, "PYTHONPATH": str(scratch / "site")}
        result["probePythonWithStandInTensorflow"] = _run([sys.executable, "-c", probes.GPU_PYTHON], stand_in_env)
        runtime_pod = probes.runtime_pod("ns", "device-run", uid=10001, gid=10001)
        container = runtime_pod["spec"]["containers"][0]
        env = _container_env(container, 1500, 512 * 2**20, scratch)
        env["GPUPLANE_VERIFY_ROOTFS"] = str(scratch / "not-there")  # never write into the host's /
        result["runtimeContainer"] = _run(_through_helper(container), env)
    return result


if __name__ == "__main__":
    found = main()
    text = json.dumps(found, indent=2, sort_keys=True)
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(text + "\n")
    print(text)
