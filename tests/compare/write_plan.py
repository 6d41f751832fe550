"""Write the load-test objects as YAML files for `make scan` (checkov reads files, not Python).

Usage: python -m tests.compare.write_plan DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from tests.compare.test_loadtest_manifests import objects


def main(directory: str) -> None:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for obj in objects():
        (out / f"{obj['kind'].lower()}-{obj['metadata']['name']}.yaml").write_text(yaml.safe_dump(obj))


if __name__ == "__main__":
    main(sys.argv[1])
