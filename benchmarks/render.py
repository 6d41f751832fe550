"""Cold-process render time of `gpuplane render`: the shipped stacks, and growth with node groups.

Method: each case is a fresh `python -m gpuplane.infra.cli render` process (imports included, as a user runs
it), cases interleaved round-robin so machine noise hits all of them alike, REPEATS rounds, median and
min/max per case. Node-group scaling uses the dev stack with 1, 10 and 50 groups (one CPU group plus
N-1 GPU groups). Writes benchmarks/results/render.json and prints a Markdown table.

Run: .venv/bin/python benchmarks/render.py [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "render.json"


def stack_with_groups(count: int) -> dict[str, Any]:
    groups: list[dict[str, Any]] = [{"name": "system", "instanceTypes": ["m6i.large"], "minSize": 1, "maxSize": 3}]
    groups += [
        {"name": f"gpu-{i:02d}", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 0, "maxSize": 2}
        for i in range(1, count)
    ]
    return {
        "config": {
            "aws:region": "us-west-2",
            "gpuplane:profile": "dev",
            "gpuplane:cluster": {"publicAccessCidrs": ["198.51.100.0/24"]},
            "gpuplane:nodeGroups": groups,
        }
    }


def time_render(stack: str, stacks_dir: Path, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuplane.infra.cli",
            "render",
            stack,
            "--out",
            str(out),
            "--stacks-dir",
            str(stacks_dir),
        ],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "160"},
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        stacks = Path(tmp) / "stacks"
        stacks.mkdir()
        for name in ("dev", "prod"):
            (stacks / f"Pulumi.{name}.yaml").write_text((ROOT / "stacks" / f"Pulumi.{name}.yaml").read_text())
        cases = ["dev", "prod"]
        for count in (1, 10, 50):
            (stacks / f"Pulumi.groups{count}.yaml").write_text(yaml.safe_dump(stack_with_groups(count)))
            cases.append(f"groups{count}")
        samples: dict[str, list[float]] = {case: [] for case in cases}
        resources: dict[str, int] = {}
        for _ in range(args.repeats):
            for case in cases:  # interleaved
                out = Path(tmp) / "out" / case
                samples[case].append(time_render(case, stacks, out))
                plan = json.loads((out / "plan.json").read_text())
                resources[case] = sum(1 for r in plan["resources"] if r["custom"])
    cases_out: dict[str, dict[str, Any]] = {
        case: {
            "median_s": round(statistics.median(values), 3),
            "min_s": round(min(values), 3),
            "max_s": round(max(values), 3),
            "resources": resources[case],
        }
        for case, values in samples.items()
    }
    results = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
        },
        "versions": {pkg: metadata.version(pkg) for pkg in ("pulumi", "pulumi-aws", "pulumi-kubernetes", "pydantic")},
        "method": f"fresh process per render, cases interleaved, {args.repeats} rounds, median seconds",
        "cases": cases_out,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print("| case | resources | median s | min s | max s |\n|---|---|---|---|---|")
    for case, row in cases_out.items():
        print(f"| {case} | {row['resources']} | {row['median_s']} | {row['min_s']} | {row['max_s']} |")


if __name__ == "__main__":
    main()
