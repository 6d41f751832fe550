"""mypy skips the parts of pulumi_aws, pulumi_kubernetes and moto that nothing uses; every part used is checked.

pyproject.toml's mypy overrides skip those packages (`follow_imports = "skip"`, their names become `Any`) and read
a list of their modules again (`follow_imports = "normal"`). A module the code reaches that is not on the second
list would be silently unchecked: a misspelt argument of `aws.s3.Bucket(...)` would pass. This test finds every
module of the three packages that the type-checked files reach, from their source (imports and attribute chains
such as `aws.eks.Cluster`, followed through each package's `__init__` re-exports), without importing them.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MYPY = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]


def patterns(follow: str) -> list[str]:
    return [m for o in MYPY["overrides"] if o.get("follow_imports") == follow for m in o["module"]]


SKIPPED = patterns("skip")
CHECKED = patterns("normal")
PACKAGES = sorted({p.split(".")[0] for p in SKIPPED})


def matches(pattern: str, module: str) -> bool:
    """mypy's override patterns: `a.b.*` is `a.b` and everything under it; anything else is the module itself."""
    if pattern.endswith(".*"):
        return module == pattern[:-2] or module.startswith(pattern[:-1])
    return module == pattern


def checked(module: str) -> bool:
    return any(matches(p, module) for p in CHECKED) or not any(matches(p, module) for p in SKIPPED)


@cache
def top_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)  # a top-level spec runs nothing of the package
    assert spec is not None and spec.submodule_search_locations, package
    return Path(next(iter(spec.submodule_search_locations)))


def path_of(module: str) -> Path | None:
    """The package folder (a namespace package's too) or module file of a dotted name, found on disk."""
    top, *rest = module.split(".")
    base = top_dir(top).joinpath(*rest)
    if base.is_dir() and base.name != "__pycache__":
        return base
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def is_module(name: str) -> bool:
    return path_of(name) is not None


def top_level_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Module-level statements, those under `if TYPE_CHECKING:` (and its else) included."""
    for node in tree.body:
        if isinstance(node, ast.If):
            yield from node.body
            yield from node.orelse
        else:
            yield node


@cache
def statements(module: str) -> tuple[ast.stmt, ...]:
    path = path_of(module)
    if path is None:
        return ()
    if path.is_dir():
        path = path / "__init__.py"
        if not path.is_file():
            return ()
    return tuple(top_level_statements(ast.parse(path.read_text())))


DEFINITION = re.compile(r"^(?:class|def|async def) (\w+)|^(\w+)\s*(?::[^=\n]*)?=", re.MULTILINE)


@cache
def defined(module: str) -> frozenset[str]:
    """The names a module's own code defines at its top level (classes, functions, assignments); read as text,
    not parsed: the generated modules of pulumi_aws are large, and a name search reads hundreds of them."""
    path = path_of(module)
    if path is not None and path.is_dir():
        path = path / "__init__.py"
    if path is None or not path.is_file():
        return frozenset()
    return frozenset(a or b for a, b in DEFINITION.findall(path.read_text()))


def absolute(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    path = path_of(importer)
    parts = importer.split(".")
    base = parts if path is not None and path.is_dir() else parts[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


@cache
def origin(module: str, name: str) -> str | None:
    """The module `module.name` is checked in: its own submodule, the module defining it, or where the module's
    imports take it from (a package's `__init__` re-exports with `from .x import *`)."""
    sub = f"{module}.{name}"
    if is_module(sub):
        return sub
    if name in defined(module):
        return module
    for node in statements(module):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = absolute(module, node)
        for alias in node.names:
            if alias.name == "*":
                if name in defined(source) or is_module(f"{source}.{name}"):
                    return origin(source, name)
            elif (alias.asname or alias.name) == name:
                return origin(source, alias.name) or source
    return None


def reached(source: str) -> set[str]:
    """The modules of PACKAGES that one file's code reaches."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # a local name -> the module it stands for
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    found.add(alias.name)
                    # `import a.b` binds `a`; `import a.b as x` binds `x` to `a.b`.
                    local, top = alias.asname or alias.name.split(".")[0], alias.name.split(".")[0]
                    bound[local] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in PACKAGES:
            module = node.module or ""
            found.add(module)
            for alias in node.names:
                where = origin(module, alias.name)
                assert where is not None, f"cannot tell where {module}.{alias.name} comes from"
                found.add(where)
                if is_module(where):
                    bound[alias.asname or alias.name] = where
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain: list[str] = []
        head: ast.expr = node
        while isinstance(head, ast.Attribute):
            chain.insert(0, head.attr)
            head = head.value
        if not isinstance(head, ast.Name) or head.id not in bound:
            continue
        module = bound[head.id]
        for attr in chain:
            where = origin(module, attr)
            if where is None:
                break
            found.add(where)
            if not is_module(where) or where != f"{module}.{attr}":
                break
            module = where
    return found


def type_checked_files() -> list[Path]:
    """What mypy reads: its `files`, less hidden folders (mypy does not enter them) and its `exclude`."""
    excluded = [re.compile(pattern) for pattern in MYPY.get("exclude", [])]
    files: list[Path] = []
    for entry in MYPY["files"]:
        # src/gpuplane's components, infra and manifests are symlinks to the top-level folders: followed, as mypy does.
        walked = os.walk(ROOT / entry, followlinks=True)
        for path in sorted(Path(folder, name) for folder, _, names in walked for name in names if name.endswith(".py")):
            relative = path.relative_to(ROOT).as_posix()
            if any(part.startswith(".") for part in Path(relative).parts) or any(e.search(relative) for e in excluded):
                continue
            files.append(path)
    return files


def test_every_module_the_code_reaches_is_checked() -> None:
    used = set().union(*(reached(path.read_text()) for path in type_checked_files()))
    # What the platform is built from, so the search itself is seen working.
    assert {"pulumi_aws.eks", "pulumi_aws.ec2", "pulumi_aws.iam", "pulumi_aws.provider", "moto.server"} <= used
    assert "pulumi_kubernetes.provider" in used and "pulumi_kubernetes.helm.v3" in used
    assert {m for m in used if not checked(m)} == set()


@pytest.mark.parametrize(
    ("source", "unchecked"),
    [
        ("import pulumi_aws as aws\naws.s3.Bucket('b')\n", {"pulumi_aws.s3", "pulumi_aws.s3.bucket"}),
        ("from pulumi_aws import lambda_\nlambda_.Function('f')\n", {"pulumi_aws.lambda_.function"}),
        ("import pulumi_kubernetes as k8s\nk8s.apps.v1.Deployment('d')\n", {"pulumi_kubernetes.apps"}),
        ("from moto.s3.models import s3_backends\n", {"moto.s3.models"}),
    ],
)
def test_a_module_left_off_the_list_is_found(source: str, unchecked: set[str]) -> None:
    """The search sees through aliases, `from` imports and re-exports; these uses would go unchecked."""
    assert unchecked <= {m for m in reached(source) if not checked(m)}


def test_every_checked_module_exists() -> None:
    """A misspelt entry would leave the module it meant skipped."""
    assert [p for p in CHECKED if path_of(p.removesuffix(".*")) is None] == []
    assert PACKAGES == ["moto", "pulumi_aws", "pulumi_kubernetes"]
