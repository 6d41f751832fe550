"""CPU time of starting the component plugin: what `pulumi preview` or `up` of a TypeScript, Go, C# or YAML program
waits for before the plugin serves anything.

Claim: starting the plugin (importing `gpuplane.infra.provider` and making `GpuplaneProvider()`, which analyzes
the components twice: the SDK's provider, then the schema with the models' descriptions) takes under 3 CPU
seconds, where the SDK's analyzer alone took about half a minute. The SDK's analyzer looks for each property's
description in the declaring class's source; the classes made from the models have none, and `inspect` parses
the whole module before it says so, once per property. `provider._SourceLessAnalyzer` skips those classes.

Method: each measurement is a fresh process (`python -c`) that imports the provider module and makes the
provider, as `python -m gpuplane.infra.provider` does before it serves; its user plus system CPU time is read
from `os.wait4`. Two cases, interleaved round-robin so machine noise hits both alike: "this tree", and "SDK's
analyzer", the same tree with the SDK's own `Analyzer` put back for both analyses (the behaviour before the
change). Median, min and max per case. Writes benchmarks/results/provider_start.json and prints a Markdown table.

Run: .venv/bin/python benchmarks/provider_start.py [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

import _record  # benchmarks/_record.py: the machine, versions and date every result names

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "provider_start.json"

START = "from gpuplane.infra import provider\n{swap}provider.GpuplaneProvider()\n"
SDK_ANALYZER = (
    "from pulumi.provider.experimental.analyzer import Analyzer\n"
    "provider._SourceLessAnalyzer = Analyzer\n"
    "provider._sdk_analyzes_sourceless = __import__('contextlib').nullcontext\n"
)
CASES = {"this tree": START.format(swap=""), "SDK's analyzer": START.format(swap=SDK_ANALYZER)}


def once(code: str) -> float:
    """CPU seconds (user + system) of one fresh process running `code`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"the start failed (wait status {status}): {code!r}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--note", default="", help="recorded with the results (e.g. 'machine shared with 6 jobs')")
    options = parser.parse_args()
    for code in CASES.values():  # warm the file cache and the byte-code once; not measured
        once(code)
    times: dict[str, list[float]] = {case: [] for case in CASES}
    for _ in range(options.repeats):
        for case, code in CASES.items():
            times[case].append(once(code))
    rows = [
        {
            "case": case,
            "medianCpuS": round(statistics.median(values), 2),
            "minCpuS": round(min(values), 2),
            "maxCpuS": round(max(values), 2),
        }
        for case, values in times.items()
    ]
    document = {
        **_record.head(("pulumi", "pydantic")),
        "repeats": options.repeats,
        "note": options.note,
        "rows": rows,
    }
    _record.write(RESULTS, document)
    print("| case | median CPU s | min | max |\n|---|---|---|---|")
    for row in rows:
        print(f"| {row['case']} | {row['medianCpuS']} | {row['minCpuS']} | {row['maxCpuS']} |")


if __name__ == "__main__":
    main()
