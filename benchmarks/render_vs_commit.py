"""CPU time of `gpuplane render <stack>` against the same render at an earlier commit, on one machine.

Method: the earlier commit is exported (`git archive`) into a temporary folder; both trees get their bytecode
compiled first (`compileall`), so that neither pays for compiling its sources in the timed runs (a shell with
PYTHONDONTWRITEBYTECODE set would otherwise recompile every module in every process). Each measurement is a
fresh `python -m gpuplane.infra.cli render <stack>` process with the tree's `src/` on PYTHONPATH, run in the
tree (its own `Pulumi.yaml` and `stacks/`), with this checkout's virtualenv for both: the same pulumi,
pulumi-aws and pulumi-kubernetes. Runs come in pairs, this tree and the earlier one back to back, the order
alternating from pair to pair; the CPU time (user + system) of each process is read from `getrusage`, which a
shared machine's load disturbs less than the wall clock. Reported: the median CPU seconds of each side, the
median of the per-pair ratios (this / earlier), and the load average before and after. Writes
benchmarks/results/render_vs_commit.json and prints a Markdown table.

Run: .venv/bin/python benchmarks/render_vs_commit.py [--commit 22be56f] [--stack dev] [--pairs 9]
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

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "render_vs_commit.json"
SOURCE_DIRS = ("components", "infra", "manifests", "src/gpuplane")  # the real folders: compileall skips symlinks


def export(commit: str, into: Path) -> None:
    """The commit's tracked files in `into`, without touching this checkout's index or worktrees."""
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def compile_tree(tree: Path) -> None:
    dirs = [str(tree / d) for d in SOURCE_DIRS if (tree / d).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], check=True, stdout=subprocess.DEVNULL)


def cpu_of_render(tree: Path, stack: str, out: Path) -> tuple[float, float]:
    """CPU seconds (user+sys) and wall seconds of one render process in `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "COLUMNS": "160"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gpuplane.infra.cli", "render", stack, "--out", str(out)],
        cwd=tree,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commit", default="22be56f", help="the earlier commit (default: 22be56f)")
    parser.add_argument("--stack", default="dev")
    parser.add_argument("--pairs", type=int, default=9)
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=True, cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain"], check=True, cwd=ROOT, capture_output=True, text=True
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        earlier = Path(tmp) / "earlier"
        earlier.mkdir()
        export(args.commit, earlier)
        compile_tree(earlier)
        compile_tree(ROOT)
        # One untimed render each: the operating system's file cache holds both trees and the venv.
        cpu_of_render(ROOT, args.stack, Path(tmp) / "warm-this")
        cpu_of_render(earlier, args.stack, Path(tmp) / "warm-earlier")
        load_before = os.getloadavg()
        this_cpu: list[float] = []
        earlier_cpu: list[float] = []
        ratios: list[float] = []
        for pair in range(args.pairs):
            order = [("this", ROOT), ("earlier", earlier)]
            if pair % 2:
                order.reverse()
            got: dict[str, float] = {}
            for label, tree in order:
                got[label], _ = cpu_of_render(tree, args.stack, Path(tmp) / f"{label}-{pair}")
            this_cpu.append(got["this"])
            earlier_cpu.append(got["earlier"])
            ratios.append(got["this"] / got["earlier"])
        load_after = os.getloadavg()
    results: dict[str, Any] = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
        },
        "versions": {
            p: metadata.version(p) for p in ("pulumi", "pulumi-aws", "pulumi-kubernetes", "pydantic", "PyYAML")
        },
        "this": head.stdout.strip() + (" (with uncommitted changes)" if dirty.strip() else ""),
        "earlier": args.commit,
        "stack": args.stack,
        "method": f"{args.pairs} interleaved pairs of fresh render processes, order alternating, bytecode compiled",
        "cpu_s": {"this": this_cpu, "earlier": earlier_cpu},
        "cpu_median_s": {
            "this": round(statistics.median(this_cpu), 3),
            "earlier": round(statistics.median(earlier_cpu), 3),
        },
        "ratio_median": round(statistics.median(ratios), 3),
        "ratio_min_max": [round(min(ratios), 3), round(max(ratios), 3)],
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"load average before {load_before}, after {load_after}")
    print(f"| render {args.stack} | CPU median s | ratio (median of pairs) |\n|---|---|---|")
    print(f"| this ({results['this']}) | {results['cpu_median_s']['this']} | {results['ratio_median']} |")
    print(f"| {args.commit} | {results['cpu_median_s']['earlier']} | 1 |")


if __name__ == "__main__":
    main()
