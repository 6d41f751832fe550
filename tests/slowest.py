"""The slowest tests run first, so that a long test never starts last and holds the whole run back.

`tests/slowest.txt` lists the slowest tests as measured (`seconds node-id` per line, slowest first); a test
it does not name keeps pytest's order (which keeps a module's fixtures together). Under pytest-xdist's
`--dist worksteal` (what `make test` uses) each worker is handed an equal, contiguous share of the list, and
an idle worker steals from the end of another's queue: so each share starts with its part of the slow tests,
dealt longest first to the share with the least measured time, and the fast ones fill the rest.

Refresh the list after the tests change (any run that writes a JUnit XML file, e.g. `make test-fast`). The
report goes outside the checkout: the tests may not write into its `build/`, and pytest's own report counts.

    .venv/bin/pytest -n 2 --junitxml=/tmp/junit.xml     # the whole suite: the TensorFlow tests are among the slowest
    .venv/bin/python -m tests.slowest /tmp/junit.xml > tests/slowest.txt
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

LIST = Path(__file__).resolve().parent / "slowest.txt"
KEEP = 60  # how many of the slowest a refresh keeps: the rest are too short to matter
T = TypeVar("T")


def measured(path: Path = LIST) -> dict[str, float]:
    """Node id to seconds, from the list (empty where there is none)."""
    if not path.exists():
        return {}
    found = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            seconds, node_id = line.split(maxsplit=1)
            found[node_id] = float(seconds)
    return found


def shares(count: int, workers: int) -> list[int]:
    """The sizes of the contiguous shares xdist's worksteal hands out first (each gets what is left // those left)."""
    sizes = []
    for left in range(workers, 0, -1):
        sizes.append(count // left)
        count -= sizes[-1]
    return sizes


def order(ids: Sequence[str], items: Sequence[T], seconds: dict[str, float], workers: int) -> list[T]:
    """`items` (whose node ids are `ids`) reordered: the measured ones first in each worker's share."""
    slow = sorted((i for i, node_id in enumerate(ids) if node_id in seconds), key=lambda i: -seconds[ids[i]])
    rest = [i for i, node_id in enumerate(ids) if node_id not in seconds]
    sizes = shares(len(items), max(workers, 1))
    dealt: list[list[int]] = [[] for _ in sizes]
    load = [0.0 for _ in sizes]
    for i in slow:
        open_shares = [k for k in range(len(sizes)) if len(dealt[k]) < sizes[k]]
        k = min(open_shares, key=lambda k: load[k])
        dealt[k].append(i)
        load[k] += seconds[ids[i]]
    start = 0
    for k, size in enumerate(sizes):
        take = size - len(dealt[k])
        dealt[k] += rest[start : start + take]
        start += take
    return [items[i] for share in dealt for i in share]


def from_junit(path: Path, keep: int = KEEP) -> list[tuple[float, str]]:
    """The `keep` slowest test cases of a JUnit XML report as (seconds, node id)."""
    found = []
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "")
        parts = module.split(".")
        # classname is the module path with dots (and the class, if any): tests.infra.test_render
        classes = [p for p in parts if p[:1].isupper()]
        file = "/".join(p for p in parts if p not in classes) + ".py"
        node_id = "::".join([file, *classes, case.get("name", "")])
        found.append((float(case.get("time", "0")), node_id))
    return sorted(found, reverse=True)[:keep]


if __name__ == "__main__":
    print("# seconds node-id: the slowest tests, run first (tests/slowest.py says how to refresh this list)")
    for seconds, node_id in from_junit(Path(sys.argv[1])):
        print(f"{seconds:.1f} {node_id}")
