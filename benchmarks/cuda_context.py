"""GPU memory a process holds outside TensorFlow's own budget: its CUDA context, on a real GPU host.

Why: a shared GPU unit (time-slicing or MPS) gets a memory fraction that the runtime helper passes to
TensorFlow Serving (`--per_process_gpu_memory_fraction`; training pods grow their memory as they need it). That
fraction bounds TensorFlow's
allocator only; the CUDA context each process creates on the GPU comes on top. With N processes on one GPU each
filling its 1/N the last one runs out of memory, and under MPS the context counts against the per-client pinned
memory limit. `components/plan/gpu_nodes.py` reserves a context per unit; this script measures what a context
takes, so that reserve is a measured number.

Method: for each repeat a fresh Python process loads the driver library (ctypes, nothing else needed), creates a
context on device 0 (`cuCtxCreate`) and reads the device's free and total memory (`cuMemGetInfo`) and, while the
context lives, `nvidia-smi`'s per-process `used_memory` for itself; the device's free memory before the context
comes from `nvidia-smi` too. The median and the range over the repeats are printed as JSON (and written to
OUT.json when given). Needs only an NVIDIA driver and Python 3:

    python3 benchmarks/cuda_context.py [OUT.json] [--repeats N]

benchmarks/RESULTS.md records a run.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

MIB = 1024 * 1024


def _smi(query: str, kind: str = "gpu") -> list[list[str]]:
    flag = "--query-gpu" if kind == "gpu" else "--query-compute-apps"
    out = subprocess.run(
        ["nvidia-smi", f"{flag}={query}", "--format=csv,noheader,nounits"], capture_output=True, text=True, check=True
    ).stdout
    return [[cell.strip() for cell in line.split(",")] for line in out.splitlines() if line.strip()]


def one() -> dict[str, Any]:
    """One measurement in this process: the context's memory as the driver and nvidia-smi see it."""
    free_before_mib = int(_smi("memory.free")[0][0])
    cuda = ctypes.CDLL("libcuda.so.1")
    device, context = ctypes.c_int(), ctypes.c_void_p()
    for call, args in (
        ("cuInit", (0,)),
        ("cuDeviceGet", (ctypes.byref(device), 0)),
        ("cuCtxCreate_v2", (ctypes.byref(context), 0, device)),
    ):
        status = getattr(cuda, call)(*args)
        if status != 0:
            raise RuntimeError(f"{call} returned CUDA error {status}")
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    if cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) != 0:
        raise RuntimeError("cuMemGetInfo failed")
    mine = [int(row[1]) for row in _smi("pid,used_memory", "apps") if row[0] == str(os.getpid())]
    return {
        "total_mib": total.value // MIB,
        "free_before_mib": free_before_mib,
        "free_with_context_mib": free.value // MIB,
        "context_by_free_mib": free_before_mib - free.value // MIB,
        "context_by_nvidia_smi_mib": mine[0] if mine else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one()))
        return
    command = [sys.executable, __file__, "--one"]
    runs = [
        json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        for _ in range(args.repeats)
    ]
    gpu = _smi("name,driver_version")[0]
    smi = [r["context_by_nvidia_smi_mib"] for r in runs if r["context_by_nvidia_smi_mib"] is not None]
    by_free = [r["context_by_free_mib"] for r in runs]
    result = {
        "machine": {"gpu": gpu[0], "driver": gpu[1], "python": platform.python_version(), "kernel": platform.release()},
        "method": "a fresh process per repeat: cuCtxCreate on device 0, then cuMemGetInfo and nvidia-smi",
        "repeats": args.repeats,
        "runs": runs,
        "median": {
            "context_by_nvidia_smi_mib": statistics.median(smi) if smi else None,
            "context_by_free_mib": statistics.median(by_free),
        },
        "range": {"context_by_nvidia_smi_mib": [min(smi), max(smi)] if smi else None},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
