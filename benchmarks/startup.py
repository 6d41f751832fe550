"""Start-up time of the `gpuplane` command: `--version`, `--help`, `render --help`, and `token`.

Claim: `gpuplane --version` and `gpuplane --help` answer in at most 0.3 s, because the CLI
imports the heavy modules (Pulumi, pulumi_aws, pulumi_kubernetes, boto3, the Kubernetes client) only
inside the commands that use them. `gpuplane token` (run by kubectl through the kubeconfig on every call)
is measured too: it loads boto3 to sign a token and nothing of the platform (no Pulumi).

Method: each measurement is a fresh process of the installed console script (as a user runs it), wall-clock
time from spawn to exit. The cases (and, with `--baseline PATH`, the same cases with another install's
`gpuplane`, e.g. the main branch's) are interleaved round-robin so machine noise hits all alike; REPEATS
rounds; median, min and max per case. Writes benchmarks/results/startup.json and prints a Markdown table.

Run: .venv/bin/python benchmarks/startup.py [--repeats N] [--baseline /path/to/other/venv/bin/gpuplane]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _record  # benchmarks/_record.py: the machine, versions and date every result names

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "startup.json"
CASES = {
    "--version": ["--version"],
    "--help": ["--help"],
    "render --help": ["render", "--help"],
    "token": ["token", "--cluster", "c", "--region", "us-west-2"],
}
# `token` signs with these (AWS's documented example keys) and makes no network call; no profile or metadata
# lookup, so every run does the same work.
ENV = {
    **os.environ,
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def once(executable: str, args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([executable, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--baseline", help="another `gpuplane` executable to measure alongside (e.g. main's)")
    parser.add_argument("--note", default="", help="recorded with the results (e.g. 'machine shared with 6 jobs')")
    options = parser.parse_args()
    ours = str(Path(sys.executable).with_name("gpuplane"))
    runs = {("this tree", name): (ours, args) for name, args in CASES.items()}
    if options.baseline:
        runs |= {("baseline", name): (options.baseline, args) for name, args in CASES.items()}
    for executable, args in runs.values():  # warm the file cache once; not measured
        once(executable, args)
    times: dict[tuple[str, str], list[float]] = {key: [] for key in runs}
    for _ in range(options.repeats):
        for key, (executable, args) in runs.items():
            times[key].append(once(executable, args))
    rows = [
        {
            "build": build,
            "case": f"gpuplane {case}",
            "medianS": round(statistics.median(values), 3),
            "minS": round(min(values), 3),
            "maxS": round(max(values), 3),
        }
        for (build, case), values in times.items()
    ]
    document = {
        **_record.head(("typer", "click", "rich", "pulumi")),
        "repeats": options.repeats,
        "baseline": options.baseline,
        "note": options.note,
        "rows": rows,
    }
    _record.write(RESULTS, document)
    print("| build | case | median s | min s | max s |\n|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['build']} | `{row['case']}` | {row['medianS']} | {row['minS']} | {row['maxS']} |")


if __name__ == "__main__":
    main()
