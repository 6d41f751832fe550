"""`manifests/versions.py` holds pins only: a constant, a price or a rule added there later fails here.

What "pins only" admits, exactly:
- the two classes a pin is written with, `Pin` and `TensorFlowImage`, and no function;
- values of those classes, and tuples or dicts whose every value is one (`PINS`, `CLUSTER_AUTOSCALER_IMAGE_PINS`);
- strings derived from a pin: its version (with or without the leading `v`), package, Helm repository or
  reference, written as an expression of the pin (`KEDA.version`), never as a literal, and dicts of them keyed
  by Kubernetes minor (`CLUSTER_AUTOSCALER_IMAGES`);
- the EKS Kubernetes version calendar, `KUBERNETES_VERSIONS` (minor -> three ISO dates in order), and its
  default, `DEFAULT_KUBERNETES_VERSION` (one of its minors): dated pins Renovate cannot read, named here;
- private strings that are the whole `source`, `support` or `newer` text of some pin (text several pins share);
- imports from the standard library only (so no constant can come back here as a re-export).
Labels, ports, namespaces and ARNs belong in `wellknown.py`, rules and compatibility tables in `lifecycle.py`,
prices in `components/facts/prices.py`.
"""

from __future__ import annotations

import ast
import datetime
import inspect
import types
from pathlib import Path
from typing import Any

import pytest

from gpuplane.manifests import versions

SOURCE = Path(versions.__file__).read_text()
TREE = ast.parse(SOURCE)
PIN_TYPES = (versions.Pin, versions.TensorFlowImage)
STDLIB_IMPORTS = {"__future__", "datetime", "dataclasses", "typing"}
CALENDAR = {"KUBERNETES_VERSIONS", "DEFAULT_KUBERNETES_VERSION"}


def _imported() -> dict[str, str]:
    """Name bound by an import statement -> the module it comes from."""
    bound = {}
    for node in TREE.body:
        if isinstance(node, ast.ImportFrom):
            bound.update({a.asname or a.name: node.module or "" for a in node.names})
        elif isinstance(node, ast.Import):
            bound.update({(a.asname or a.name).split(".")[0]: a.name for a in node.names})
    return bound


def _literal_assignments() -> set[str]:
    """Names assigned a literal (a string, number, f-string or a container of literals) at the top level."""
    literal: set[str] = set()
    for node in TREE.body:
        if isinstance(node, ast.AnnAssign | ast.Assign) and node.value is not None:
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            try:
                ast.literal_eval(node.value)
                is_literal = True
            except ValueError:
                is_literal = isinstance(node.value, ast.JoinedStr)
            if is_literal:
                literal.update(t.id for t in targets if isinstance(t, ast.Name))
    return literal


def _pins(namespace: dict[str, Any]) -> list[versions.Pin]:
    found: list[versions.Pin] = []
    for value in namespace.values():
        values = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else (value,)
        for v in values:
            if isinstance(v, versions.TensorFlowImage):
                found.append(v.pin)
            elif isinstance(v, versions.Pin):
                found.append(v)
    return found


def _derived(pins: list[versions.Pin]) -> set[str]:
    out: set[str] = set()
    for p in pins:
        out |= {p.version, p.version.removeprefix("v"), p.package, p.reference}
        if p.registry is not None:
            out.add(p.registry)
    return out


def _dates_in_order(dates: Any) -> bool:
    if not (isinstance(dates, tuple) and len(dates) == 3 and all(isinstance(d, str) for d in dates)):
        return False
    days = [datetime.date.fromisoformat(d) for d in dates]
    return days == sorted(days)


def _is_calendar(name: str, value: Any, namespace: dict[str, Any]) -> bool:
    if name == "KUBERNETES_VERSIONS":
        return (
            isinstance(value, dict)
            and all(isinstance(k, str) and k.count(".") == 1 for k in value)
            and all(_dates_in_order(dates) for dates in value.values())
        )
    return name == "DEFAULT_KUBERNETES_VERSION" and value in namespace.get("KUBERNETES_VERSIONS", {})


def why_admitted(name: str, value: Any, namespace: dict[str, Any], literal: set[str]) -> str | None:
    """Why `name` may be defined in the pins module, or None when it may not."""
    if inspect.isclass(value):
        return "a pin's class" if value in PIN_TYPES and value.__module__ == versions.__name__ else None
    if callable(value):
        return None
    if isinstance(value, PIN_TYPES):
        return "a pin"
    items = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, tuple) else None
    if items and all(isinstance(v, PIN_TYPES) for v in items):
        return "a collection of pins"
    if name in CALENDAR:
        return "the EKS version calendar" if _is_calendar(name, value, namespace) else None
    pins = _pins(namespace)
    if name.startswith("_") and isinstance(value, str):
        shared = {text for p in pins for text in (p.source, p.support, p.newer)}
        return "text of a pin" if value in shared else None
    if name in literal:
        return None  # a value written by hand here is a constant, not something derived from a pin
    derived = _derived(pins)
    if isinstance(value, str) and value in derived:
        return "derived from a pin"
    minors = namespace.get("KUBERNETES_VERSIONS", {})
    if isinstance(value, dict) and value and all(k in minors and v in derived for k, v in value.items()):
        return "derived from pins, per Kubernetes minor"
    return None


def _namespace() -> dict[str, Any]:
    imported = _imported()
    return {
        name: value
        for name, value in vars(versions).items()
        if not (name.startswith("__") and name.endswith("__")) and name not in imported
    }


def test_imports_only_the_standard_library() -> None:
    """A name imported from elsewhere in gpuplane would be a re-export shim of something that moved out."""
    imported = _imported()
    assert imported, "the scan found no imports: it reads the wrong file"
    assert {name: module for name, module in imported.items() if module.split(".")[0] not in STDLIB_IMPORTS} == {}
    assert not any(isinstance(vars(versions)[n], types.ModuleType) and n not in imported for n in vars(versions))


def test_the_module_defines_pins_only() -> None:
    namespace = _namespace()
    literal = _literal_assignments()
    refused = sorted(name for name, value in namespace.items() if why_admitted(name, value, namespace, literal) is None)
    assert refused == [], (
        f"{refused} in manifests/versions.py are not pins: platform constants go to manifests/wellknown.py, "
        "rules and compatibility tables to manifests/lifecycle.py, prices to components/facts/prices.py"
    )


def test_the_scan_sees_every_kind_it_admits() -> None:
    """Each admission rule is used by the real module (an admission no value needs would hide a loophole)."""
    namespace = _namespace()
    literal = _literal_assignments()
    reasons = {why_admitted(name, value, namespace, literal) for name, value in namespace.items()}
    assert reasons == {
        "a pin's class",
        "a pin",
        "a collection of pins",
        "the EKS version calendar",
        "text of a pin",
        "derived from a pin",
        "derived from pins, per Kubernetes minor",
    }
    assert {"CLUSTER_AUTOSCALER_IMAGE_REPOSITORY", "KEDA_VERSION", "KUEUE_VERSION", "PYTHON_IMAGE"} <= set(namespace)


@pytest.mark.parametrize(
    ("name", "value", "written_as_literal"),
    [
        ("NFS_PORT", 2049, True),  # a port
        ("GPU_RESOURCE", "nvidia.com/gpu", True),  # a resource name
        ("KEDA_NAMESPACE", "keda", True),  # a namespace
        ("EKS_STANDARD_HOURLY_USD", "0.10", True),  # a price
        ("CUDA_MIN_DRIVER", {12: 525}, True),  # a compatibility table
        ("KEDA_VERSION_AGAIN", "2.20.2", True),  # a pin's version written by hand, not derived from the pin
        ("TODAY_ENV", "GPUPLANE_TODAY", True),
        ("_PRIVATE", "not the text of any pin", True),
        ("DEFAULT_KUBERNETES_VERSION", "1.99", True),  # a default the calendar does not know
        ("TaintSpec", type("TaintSpec", (), {}), False),  # any class but the pins'
        ("today", datetime.date.today, False),  # logic
    ],
)
def test_a_constant_added_later_is_refused(name: str, value: Any, written_as_literal: bool) -> None:
    namespace = {**_namespace(), name: value}
    literal = _literal_assignments() | ({name} if written_as_literal else set())
    assert why_admitted(name, value, namespace, literal) is None
