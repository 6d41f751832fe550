"""CPU and wall time of `make test-fast`'s pytest with the suite's garbage-collector setting and with Python's own.

Claim: collecting with the cyclic collector paused, then `gc.freeze()` on what collection built (tests/conftest.py,
`pytest_collection`), costs each pytest-xdist worker less CPU than Python's default collector, which walks the
collected heap (the SDK, moto, the Kubernetes client, an item per test) in every full collection.

Method: each run is test-fast's pytest (`-n 3 --dist worksteal -m "not tensorflow"`, Chromium's tests left out)
in this checkout, a fresh process; A is the suite as committed, B the same with GPUPLANE_TESTS_GC=python, which
makes that hook step aside. Runs alternate A B A B, so the machine's drift within the hour hits both alike; the
CPU is pytest's and every process it started (`getrusage` of the children). Reported: the median wall and CPU of
each, and the ratio A/B of each pair. Writes benchmarks/results/suite_gc.json. A run takes 3-4 minutes on 2 CPUs.

Run: .venv/bin/python benchmarks/suite_gc.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from typing import Any

import _record  # benchmarks/_record.py: the machine, versions and date every result names
import suite_workers

ROOT = suite_workers.ROOT
RESULTS = ROOT / "benchmarks" / "results" / "suite_gc.json"
TEST_FAST = ["-m", "not tensorflow"]
VARIANTS = {
    "A": {"GPUPLANE_LEAVE_OUT_TOOLS": "chromium"},
    "B": {"GPUPLANE_LEAVE_OUT_TOOLS": "chromium", "GPUPLANE_TESTS_GC": "python"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2, help="runs of each variant (default 2)")
    parser.add_argument("--workers", type=int, default=3, help="pytest-xdist workers (default 3, `-n auto` here)")
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=True, cwd=ROOT, capture_output=True, text=True)
    runs: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        for name, env in VARIANTS.items():
            runs.append({"variant": name, **suite_workers.one_run(args.workers, TEST_FAST, env)})
            print(json.dumps(runs[-1]), flush=True)
    medians = {
        name: {
            key: round(statistics.median(r[key] for r in runs if r["variant"] == name), 1)
            for key in ("wall_s", "cpu_s")
        }
        for name in VARIANTS
    }
    pairs = [
        {key: round(a[key] / b[key], 3) for key in ("wall_s", "cpu_s")}
        for a, b in zip(runs[0::2], runs[1::2], strict=True)
    ]
    _record.write(
        RESULTS,
        {
            **_record.head(["pytest", "pytest-xdist", "pulumi", "moto"]),
            "commit": head.stdout.strip(),
            "method": f"{args.rounds} rounds of test-fast's pytest per variant, interleaved A B, fresh processes",
            "variants": {"A": "the suite's collector setting", "B": "GPUPLANE_TESTS_GC=python (Python's default)"},
            "runs": runs,
            "median": medians,
            "ratioAtoB": pairs,
        },
    )
    print("| variant | wall, median s | CPU, median s |\n|---|---|---|")
    for name in VARIANTS:
        print(f"| {name} | {medians[name]['wall_s']} | {medians[name]['cpu_s']} |")
    print(f"A/B per pair: {pairs}")


if __name__ == "__main__":
    main()
