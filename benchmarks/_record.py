"""What every recorded result names besides its figures: the machine, the library versions, the date.

Why shared: `benchmarks/startup.py` and `benchmarks/provider_start.py` write the same head into their JSON
results, and a figure without its machine and versions cannot be compared with a later run. The scripts import
it beside themselves (they run as `python benchmarks/<script>.py`).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any


def head(packages: Sequence[str]) -> dict[str, Any]:
    """The machine (CPUs, architecture, Python, the 1-minute load now), `packages`' versions, today's date (UTC)."""
    return {
        "machine": {
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
            "python": platform.python_version(),
            "loadAverage1m": round(os.getloadavg()[0], 2),
        },
        "versions": {name: metadata.version(name) for name in packages},
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }


def write(path: Path, document: dict[str, Any]) -> None:
    """The results as indented JSON at `path` (its folder made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
