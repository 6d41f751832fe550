"""Every name the README, the docs and the example program import exists where they say.

A newcomer copies these lines first: after a layout move, a stale path in the README is the first error
they meet. The example imports only the public names (`from gpuplane import ...`), which the layout can
move under without breaking a consumer.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import gpuplane

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "gpu-cluster" / "__main__.py"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"```python\n(.*?)```", re.S)
# `gpuplane.components.plan.cross_checks.check_platform` and the like, written in backticks in prose.
DOTTED = re.compile(r"`(gpuplane(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?![A-Za-z0-9_/-])")


def imports_of(source: str) -> list[tuple[str, str | None]]:
    """(module, name) for every `from gpuplane... import name` and (module, None) for `import gpuplane...`."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "gpuplane":
            found += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name.split(".")[0] == "gpuplane"]
    return found


def documented_imports() -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = []
    for doc in DOCS:
        for block in FENCE.findall(doc.read_text()):
            try:
                found = imports_of(block)
            except SyntaxError:
                continue  # a fragment (`...`), not a program; its imports are read by the line below
            out += [(doc.name, module, name) for module, name in found]
    out += [(EXAMPLE.name, module, name) for module, name in imports_of(EXAMPLE.read_text())]
    return out


def test_the_documents_import_something():
    """The scan is not vacuous: the README's program and the example import the components."""
    sources = {where for where, _, _ in documented_imports()}
    assert {"README.md", "__main__.py"} <= sources


@pytest.mark.parametrize(("where", "module", "name"), documented_imports())
def test_every_documented_import_resolves(where: str, module: str, name: str | None):
    imported = importlib.import_module(module)
    if name is not None:
        assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}"), f"{where}: {module}.{name}"


def test_the_example_uses_the_public_names_only():
    used = imports_of(EXAMPLE.read_text())
    assert used, "the example imports gpuplane"
    assert {module for module, _ in used} == {"gpuplane"}
    assert {name for _, name in used} <= set(gpuplane.__all__)


def test_dotted_paths_in_the_prose_resolve():
    """`gpuplane.x.y.z` written in the README and docs names a module or an attribute of one."""
    missing = []
    for doc in DOCS:
        for path in sorted(set(DOTTED.findall(doc.read_text()))):
            parts = path.split(".")
            for cut in range(len(parts), 0, -1):
                try:
                    obj: object = importlib.import_module(".".join(parts[:cut]))
                except ImportError:
                    continue
                for attr in parts[cut:]:
                    obj = getattr(obj, attr, None)
                if obj is None:
                    missing.append(f"{doc.name}: {path}")
                break
            else:
                missing.append(f"{doc.name}: {path}")
    assert missing == []
