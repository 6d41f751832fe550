"""Cold-process render time of `gpuplane render`: the shipped stacks, and growth with node groups.

Method: each case is a fresh `python -m gpuplane.infra.cli render` process (imports included, as a user runs
it), cases interleaved round-robin so machine noise hits all of them alike, REPEATS rounds, median and
min/max per case of the wall-clock time, and the median CPU time (user+sys) of the process, which a shared
machine's load disturbs less. The load average before and after is recorded with them. Node-group scaling
uses the dev stack with 1, 10 and 50 groups (one CPU group plus N-1 GPU groups). `--baseline SRC` runs every
case a second time, interleaved, with another checkout's `src/` first on PYTHONPATH (e.g. a worktree of the
commit before a change), so before and after meet the same load. Writes benchmarks/results/render.json and
prints a Markdown table.

Run: .venv/bin/python benchmarks/render.py [--repeats N] [--baseline ../other-checkout/src]
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


def time_render(stack: str, stacks_dir: Path, out: Path, src: Path | None = None) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user+sys) of one render process; `src` first on PYTHONPATH if given."""
    env = {**os.environ, "COLUMNS": "160"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
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
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--baseline", type=Path, help="another checkout's src/ folder, measured interleaved")
    args = parser.parse_args()
    baseline: Path | None = args.baseline.resolve() if args.baseline else None
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        stacks = Path(tmp) / "stacks"
        stacks.mkdir()
        for name in ("dev", "prod"):
            (stacks / f"Pulumi.{name}.yaml").write_text((ROOT / "stacks" / f"Pulumi.{name}.yaml").read_text())
        stacks_cases = ["dev", "prod"]
        for count in (1, 10, 50):
            (stacks / f"Pulumi.groups{count}.yaml").write_text(yaml.safe_dump(stack_with_groups(count)))
            stacks_cases.append(f"groups{count}")
        runs: list[tuple[str, str, Path | None]] = [(case, case, None) for case in stacks_cases]
        if baseline is not None:
            runs += [(f"{case} (baseline)", case, baseline) for case in stacks_cases]
        walls: dict[str, list[float]] = {label: [] for label, _, _ in runs}
        cpus: dict[str, list[float]] = {label: [] for label, _, _ in runs}
        resources: dict[str, int] = {}
        for _ in range(args.repeats):
            for label, case, src in runs:  # interleaved
                out = Path(tmp) / "out" / label.replace(" ", "_")
                wall, cpu = time_render(case, stacks, out, src)
                walls[label].append(wall)
                cpus[label].append(cpu)
                plan = json.loads((out / "plan.json").read_text())
                resources[label] = sum(1 for r in plan["resources"] if r["custom"])
    load_after = os.getloadavg()
    cases_out: dict[str, dict[str, Any]] = {
        label: {
            "median_s": round(statistics.median(values), 3),
            "min_s": round(min(values), 3),
            "max_s": round(max(values), 3),
            "cpu_median_s": round(statistics.median(cpus[label]), 3),
            "resources": resources[label],
        }
        for label, values in walls.items()
    }
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], check=False, cwd=ROOT, capture_output=True, text=True
    )
    results = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
        },
        "versions": {pkg: metadata.version(pkg) for pkg in ("pulumi", "pulumi-aws", "pulumi-kubernetes", "pydantic")},
        "commit": commit.stdout.strip(),
        "baseline": str(baseline) if baseline else None,
        "method": f"fresh process per render, cases interleaved, {args.repeats} rounds, median seconds",
        "cases": cases_out,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"load average before {load_before}, after {load_after}")
    print("| case | resources | median s | min s | max s | CPU median s |\n|---|---|---|---|---|---|")
    for case, row in cases_out.items():
        print(
            f"| {case} | {row['resources']} | {row['median_s']} | {row['min_s']} | {row['max_s']} "
            f"| {row['cpu_median_s']} |"
        )


if __name__ == "__main__":
    main()
