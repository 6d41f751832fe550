"""One checkov run over the Kubernetes objects that several test modules scan, and one over both stacks' plans.

A checkov run spends most of its time starting (its imports and check registry: 15-20 s of a loaded 2-CPU
machine against a second or two of checking), so the tests that scan objects of their own share a run: each
set's files carry its name, and each test asserts on its own set's checks (none failed, some passed: a set
that checkov could not read would pass nothing). The conftest's `checkov_kubernetes` and `checkov_plans`
fixtures make each run once per session, also across pytest-xdist workers.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"
SEP = "--"  # between a set's name and its file's own name


def binary() -> str | None:
    """The checkov of `make scan`'s venv, else one on PATH, else None (the scanning tests skip)."""
    return str(CHECKOV) if CHECKOV.exists() else shutil.which("checkov")


@dataclass
class SetResult:
    """What checkov said of one set's files."""

    failed: list[str] = field(default_factory=list)  # "CKV_K8S_n resource (file)"
    failed_ids: set[str] = field(default_factory=set)
    passed: int = 0
    parsing_errors: list[str] = field(default_factory=list)
    files: int = 0


def _kubernetes_sets() -> dict[str, list[dict[str, Any]]]:
    """Each test module's objects by set name (imported here so the one run has them all)."""
    from tests.compare import test_loadtest_manifests as loadtest  # noqa: PLC0415
    from tests.queue import test_metrics_relay as relay  # noqa: PLC0415
    from tests.verify import test_probe_manifests as probes  # noqa: PLC0415

    return {
        "verify-dev": probes.probe_objects("dev"),
        "verify-prod": probes.probe_objects("prod"),
        "metrics-relay": relay.relay_objects(),
        "loadtest": loadtest.objects(),
    }


def _set_of(path: str) -> str:
    return Path(path).name.split(SEP, 1)[0]


def _reports(stdout: str) -> list[dict[str, Any]]:
    """checkov's JSON output: one document, a list of them, or (several -d/-f) documents one after another."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    text = stdout.strip()
    while text:
        document, end = decoder.raw_decode(text)
        found.extend(document if isinstance(document, list) else [document])
        text = text[end:].strip()
    return found


def _by_set(stdout: str, names: list[str], files: dict[str, int]) -> dict[str, SetResult]:
    results = {name: SetResult(files=files[name]) for name in names}
    for report in _reports(stdout):
        checks = report.get("results", {})
        for check in checks.get("failed_checks", []):
            found = results[_set_of(check["file_path"])]
            found.failed.append(f"{check['check_id']} {check['resource']} ({Path(check['file_path']).name})")
            found.failed_ids.add(check["check_id"])
        for check in checks.get("passed_checks", []):
            results[_set_of(check["file_path"])].passed += 1
        for path in checks.get("parsing_errors", []):
            results[_set_of(path)].parsing_errors.append(path)
    return results


def _run(args: list[str]) -> str:
    checkov = binary()
    assert checkov is not None
    done = subprocess.run(
        [checkov, *args, "--skip-download", "-o", "json", "--compact"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    # Exit 1 is "some check failed" (each test judges its own set); anything else is checkov's own trouble.
    assert done.returncode in (0, 1) and done.stdout.strip(), done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def scan_kubernetes(folder: Path) -> dict[str, SetResult]:
    """Every set of `_kubernetes_sets` in one checkov run (the kubernetes framework, as `make scan` runs it)."""
    folder.mkdir(parents=True, exist_ok=True)
    sets = _kubernetes_sets()
    for name, objects in sets.items():
        for index, obj in enumerate(objects):
            file = f"{name}{SEP}{index:02d}-{obj['kind'].lower()}-{obj['metadata']['name']}.yaml"
            (folder / file).write_text(yaml.safe_dump(obj))
    return _by_set(
        _run(["-d", str(folder), "--framework", "kubernetes"]), list(sets), {k: len(v) for k, v in sets.items()}
    )


def scan_plans(folder: Path, plans: dict[str, Callable[[], str]]) -> dict[str, SetResult]:
    """Each stack's tfplan.json (`plans`: stack to its text) in one checkov run, no skips: the test compares."""
    folder.mkdir(parents=True, exist_ok=True)
    args = []
    for stack, text in plans.items():
        path = folder / f"{stack}{SEP}tfplan.json"
        path.write_text(text())
        args += ["-f", str(path)]
    return _by_set(_run([*args, "--framework", "terraform_plan"]), list(plans), dict.fromkeys(plans, 1))
