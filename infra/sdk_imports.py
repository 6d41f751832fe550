"""Import only the pulumi_aws modules a program uses (the offline render's start-up, `mockrun.run`).

Why: each pulumi_aws service package (`pulumi_aws.ec2`, `.autoscaling`, ...) star-imports every module of the
service in its `__init__.py` (184 for ec2), and each module evaluates dozens of typing expressions when it is
imported. A render of the dev stack uses 11 ec2 resources and one autoscaling resource, yet paid for every
module of both (benchmarks/RESULTS.md, "Offline render time").

Here such a package, still pending when the render starts (pulumi_aws registers them all as lazy modules at
its import), is made a `LazyPackage` instead of running its `__init__`. Which module binds which name comes
from each module's own `__all__` (every generated module starts with one), read from its source text, later
star-imports winning as in the `__init__`; a module is imported the first time one of its names is used, and
then binds its names as its star-import would. So every name resolves to the same object as in the eager
package (`tests/infra/test_sdk_imports.py` compares all of them for the packages gpuplane uses).

Only packages whose `__init__.py` holds nothing but those imports are made lazy: any other statement (e.g.
`pulumi_aws.config`, which swaps its module's class) or a module without a literal `__all__` leaves the package
to the normal import.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import os
import re
import sys
import types
from collections.abc import Sequence
from typing import Any, Final

import pulumi._utils
import pulumi_aws  # noqa: F401 (its import registers the pending service packages)

PACKAGE: Final = "pulumi_aws"

_STAR = re.compile(r"from \.(\w+) import \*")
# Lines of a generated service `__init__.py` besides its star-imports (comments and blank lines aside).
_PLAIN = {"import builtins as _builtins", "from .. import _utilities", "import typing"}
_SUBMODULE = "from . import outputs"
_ALL = re.compile(r"^__all__ = (\[.*?\])$", re.MULTILINE | re.DOTALL)


def star_imports(source: str) -> list[str] | None:
    """The modules a generated `__init__.py` star-imports, in order; None if it does anything else."""
    names: list[str] = []
    for raw in source.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line in _PLAIN or line == _SUBMODULE:
            continue
        star = _STAR.fullmatch(line)
        if star is None:
            return None
        names.append(star.group(1))
    return names


def declared_exports(source: str) -> list[str] | None:
    """A module's literal top-level `__all__`, or None when it has none."""
    found = _ALL.search(source)
    if found is None:
        return None
    value = ast.literal_eval(found.group(1))
    return [str(name) for name in value] if isinstance(value, list) else None


def binding_map(folder: str, modules: Sequence[str]) -> dict[str, str] | None:
    """Name -> module that binds it in the package, the last star-import winning; None if one is unreadable."""
    owner: dict[str, str] = {}
    for module in modules:
        try:
            with open(os.path.join(folder, f"{module}.py"), encoding="utf-8") as handle:
                names = declared_exports(handle.read())
        except OSError:
            return None
        if names is None:
            return None
        owner.update(dict.fromkeys(names, module))
    return owner


class LazyPackage(types.ModuleType):
    """A service package whose modules load on first use of one of their names."""

    gpuplane_owner: dict[str, str]
    gpuplane_modules: list[str]

    def __getattr__(self, name: str) -> Any:
        owner = self.__dict__.get("gpuplane_owner", {})
        if name == "outputs":
            return importlib.import_module(f"{self.__name__}.outputs")
        if name == "__all__":
            # `from package import *` on the eager package binds every public name: load them all.
            for module in self.gpuplane_modules:
                self._bind(module)
            self.__getattr__("outputs")
            return sorted(n for n in vars(self) if not n.startswith("_"))
        if name not in owner:
            if name in self.__dict__.get("gpuplane_modules", ()):
                return importlib.import_module(f"{self.__name__}.{name}")  # a module by its own name
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        self._bind(owner[name])
        return vars(self)[name]

    def _bind(self, module: str) -> None:
        """Import `module` and bind the names it wins, as `from .module import *` in the `__init__` would."""
        loaded = importlib.import_module(f"{self.__name__}.{module}")
        for name, winner in self.gpuplane_owner.items():
            if winner == module:
                setattr(self, name, getattr(loaded, name))


class _Loader:
    """Runs instead of a pending package's own loader: lazy when the `__init__` allows it, else as before."""

    def __init__(self, original: Any) -> None:
        self.original = original

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        """Turn `module` into a LazyPackage, or load it the normal way."""
        origin = module.__spec__.origin if module.__spec__ else None
        modules = owner = None
        if origin is not None and origin.endswith("__init__.py"):
            with open(origin, encoding="utf-8") as handle:
                modules = star_imports(handle.read())
            owner = binding_map(os.path.dirname(origin), modules) if modules is not None else None
        if modules is None or owner is None:
            self.original.exec_module(module)
            return
        module.__class__ = LazyPackage
        module.__dict__.update(gpuplane_modules=modules, gpuplane_owner=owner)


def install() -> int:
    """Make the pulumi_aws service packages not used yet load lazily; returns how many were changed.

    pulumi_aws registers each service package at its own import as a pending module (pulumi's
    `_utils.lazy_import`), loaded with its `__init__` on first attribute access. This swaps the loader those
    pending modules will run for `_Loader`, in place: the module objects, and every reference to them, stay
    the same. Packages already loaded, or a pulumi_aws that registers them another way, are left as they are.
    """
    pending_type = getattr(pulumi._utils, "_LazyModule", None)
    changed = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith(f"{PACKAGE}.") or name.count(".") != 1 or type(module) is not pending_type:
            continue
        spec = types.ModuleType.__getattribute__(module, "__spec__")
        if spec is None or isinstance(spec.loader, _Loader) or not hasattr(spec.loader, "exec_module"):
            continue
        spec.loader = _Loader(spec.loader)
        changed += 1
    return changed
