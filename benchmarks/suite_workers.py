"""Wall time of the whole test suite with a given number of pytest-xdist workers, in interleaved runs.

Claim: on a 2-CPU machine the whole suite (`make test`'s pytest) ends sooner with one worker more than there
are CPUs, although it spends more CPU. Why it can: many tests wait rather than compute (the TensorFlow
training runs wait for a deadlocked cluster, the hostile-API tests for real deadlines, the compare and import
tests for servers and subprocesses), and while a worker waits its CPU idles unless another worker has a
test to run.

Method: each run is `pytest -q -n N --dist worksteal -p no:cacheprovider` over the whole suite in this
checkout, a fresh process, with PYTHONDONTWRITEBYTECODE cleared as `make test` does (the rewritten test modules
are kept after the first, untimed run). Runs alternate between the worker counts (A B A B ...), so the machine's
drift within the hour hits both alike. Recorded per run: the wall time, the CPU time of pytest and every
process it started (user + system, from `getrusage` of the children), the exit code and the load average
before. Reported: the median wall and CPU of each count. Writes benchmarks/results/suite_workers.json and prints
a Markdown table. A run takes 5-7 minutes on 2 CPUs; `--rounds 2` is four runs.

Run: .venv/bin/python benchmarks/suite_workers.py [--workers 2 3] [--rounds 2] [--warm]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "suite_workers.json"


def one_run(workers: int, extra: list[str], env_extra: dict[str, str] | None = None) -> dict[str, Any]:
    """One whole-suite run with `workers` workers (and `env_extra` set): wall and CPU seconds, exit code, the
    load before."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "", "PYTHONPATH": str(ROOT / "src"), **(env_extra or {})}
    command = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "--dist", "worksteal"]
    command += ["-p", "no:cacheprovider", *extra]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        command, check=False, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return {
        "workers": workers,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "rc": done.returncode,
        "load_before": round(load, 2),
        "summary": summary,
        "failed": [line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED ")],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs=2, default=[2, 3], metavar=("A", "B"))
    parser.add_argument("--rounds", type=int, default=2, help="runs of each count (default 2)")
    parser.add_argument("--warm", action="store_true", help="one untimed run first (caches, rewritten modules)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=True, cwd=ROOT, capture_output=True, text=True)
    if args.warm:
        one_run(args.workers[0], args.pytest_args)
    runs: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        for workers in args.workers:
            runs.append(one_run(workers, args.pytest_args))
            print(json.dumps(runs[-1]), flush=True)
    medians = {
        str(n): {
            "wall_s": round(statistics.median(r["wall_s"] for r in runs if r["workers"] == n), 1),
            "cpu_s": round(statistics.median(r["cpu_s"] for r in runs if r["workers"] == n), 1),
        }
        for n in args.workers
    }
    results = {
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "versions": {p: metadata.version(p) for p in ("pytest", "pytest-xdist", "pulumi", "moto")},
        "commit": head.stdout.strip(),
        "method": f"{args.rounds} rounds of the whole suite per worker count, interleaved, fresh pytest processes",
        "pytest_args": args.pytest_args,
        "runs": runs,
        "median": medians,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print("| workers | wall, median s | CPU, median s |\n|---|---|---|")
    for n in args.workers:
        print(f"| {n} | {medians[str(n)]['wall_s']} | {medians[str(n)]['cpu_s']} |")


if __name__ == "__main__":
    main()
