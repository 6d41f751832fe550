"""renovate.json: valid for Renovate, and its regex managers find every pin of versions.py exactly once.

Renovate itself needs a newer Node than CI has, so what it would do is checked with what runs here: its JSON
schema (shipped by check-jsonschema as `vendor.renovate`), and each manager's regex applied to the files it
covers, the way Renovate applies it (every match of every matchString, JavaScript named groups).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuplane.manifests import versions

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "renovate.json"
VERSIONS = "manifests/versions.py"


def config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONFIG.read_text())
    return data


def check_jsonschema(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.renovate", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def python_regex(js: str) -> re.Pattern[str]:
    """Renovate's matchStrings use JavaScript named groups `(?<name>...)`; Python spells them `(?P<name>...)`."""
    return re.compile(js.replace("(?<", "(?P<"))


def file_matches(manager: dict[str, Any], path: str) -> bool:
    """Whether one of the manager's `managerFilePatterns` (`/regex/` or a glob) selects `path`."""
    for pattern in manager["managerFilePatterns"]:
        if pattern.startswith("/") and pattern.endswith("/"):
            if re.search(pattern[1:-1], path):
                return True
        elif Path(path).match(pattern):
            return True
    return False


def extracted(path: str) -> list[dict[str, str]]:
    """What every custom manager extracts from `path`: datasource, depName, packageName, currentValue..."""
    text = (ROOT / path).read_text()
    found = []
    for index, manager in enumerate(config()["customManagers"]):
        if not file_matches(manager, path):
            continue
        for match_string in manager["matchStrings"]:
            for match in python_regex(match_string).finditer(text):
                dep = {k: v for k, v in match.groupdict().items() if v is not None}
                dep.setdefault("depName", manager.get("depNameTemplate", ""))
                dep["datasource"] = manager["datasourceTemplate"]
                dep["manager"] = str(index)
                found.append(dep)
    return found


def test_the_config_is_valid_for_renovate() -> None:
    done = check_jsonschema(CONFIG)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_refuses_a_bad_config(tmp_path: Path) -> None:
    """The check can fail: a manager type Renovate does not know is refused, naming the key."""
    bad = config()
    bad["customManagers"][0]["customType"] = "regexp"
    (tmp_path / "renovate.json").write_text(json.dumps(bad))
    done = check_jsonschema(tmp_path / "renovate.json")
    assert done.returncode == 1
    assert "$.customManagers[0].customType: 'regexp' is not one of ['jsonata', 'regex']" in done.stdout


def _schema() -> dict[str, Any]:
    from check_jsonschema.builtin_schemas import get_builtin_schema  # noqa: PLC0415 - only this test needs it

    schema: dict[str, Any] = get_builtin_schema("vendor.renovate")
    return schema


def test_every_option_is_one_renovate_knows() -> None:
    """Renovate's schema allows unknown keys (it warns at run time); a misspelt option is refused here instead."""
    schema = _schema()
    top = set(schema["properties"])
    manager_keys = set(schema["definitions"]["customManagers"]["items"]["allOf"][0]["properties"])
    rule_items = schema["definitions"]["packageRules"]["items"]
    rule_keys = set(rule_items.get("properties", {})) or set(rule_items["allOf"][0]["properties"])
    data = config()
    assert set(data) - {"$schema"} <= top
    for manager in data["customManagers"]:
        assert set(manager) <= manager_keys, set(manager) - manager_keys
    for rule in data["packageRules"]:
        assert set(rule) <= rule_keys, set(rule) - rule_keys


def test_every_pin_is_matched_exactly_once_with_its_datasource() -> None:
    deps = extracted(VERSIONS)
    for pin in versions.PINS:
        hits = [d for d in deps if d["depName"] == pin.name]
        assert len(hits) == 1, f"{pin.name}: {hits}"
        (hit,) = hits
        assert hit["datasource"] == pin.datasource
        assert (hit["packageName"], hit["currentValue"]) == (pin.package, pin.version)
        assert hit.get("registryUrl") == pin.registry
    assert len(deps) == len(versions.PINS)  # nothing else in the file looks like a pin to Renovate


def test_the_tensorflow_test_venv_moves_with_the_line() -> None:
    """The TensorFlow-marked tests and the thread benchmarks install the CPU image's TensorFlow."""
    for path in ("tests/runtime/test_helper_tensorflow.py", "benchmarks/threads.py"):
        deps = extracted(path)
        assert [(d["depName"], d["datasource"], d["currentValue"]) for d in deps] == [
            ("tensorflow-cpu", "pypi", versions.TENSORFLOW_CPU.tensorflow)
        ], path
    assert extracted("tests/runtime/_support.py") == []


def group_of(dep_name: str) -> list[str]:
    return [
        r["groupName"] for r in config()["packageRules"] if dep_name in r.get("matchDepNames", []) and "groupName" in r
    ]


def test_the_tensorflow_line_is_one_group() -> None:
    """Serving and training move together: serving must stay at least every training image's TensorFlow."""
    line = [i.pin.name for i in versions.TENSORFLOW_IMAGES if i is not versions.TENSORBOARD] + ["tensorflow-cpu"]
    assert {name: group_of(name) for name in line} == {name: ["TensorFlow line"] for name in line}
    # TensorBoard is no training image and must stay on an image that ships `tensorboard` (TF <= 2.20).
    assert group_of("tensorboard") == []
    (rule,) = [r for r in config()["packageRules"] if r.get("matchDepNames") == ["tensorboard"]]
    assert rule["allowedVersions"] == "/^2\\.20\\./"
    assert re.fullmatch(r"/(.*)/", rule["allowedVersions"]) and re.match(rule["allowedVersions"][1:-1], "2.20.1")
    assert not re.match(rule["allowedVersions"][1:-1], "2.21.0") and re.match(
        "^2\\.20\\.", versions.TENSORBOARD.pin.version
    )


@pytest.mark.parametrize("pin", versions.PINS, ids=lambda p: p.name)
def test_every_pin_is_in_one_group(pin: versions.Pin) -> None:
    assert len(group_of(pin.name)) == (0 if pin is versions.TENSORBOARD.pin else 1)


def test_autoscaler_images_keep_their_minor() -> None:
    (rule,) = [
        r
        for r in config()["packageRules"]
        if r.get("matchPackageNames") == [versions.CLUSTER_AUTOSCALER_IMAGE_REPOSITORY]
    ]
    assert rule["matchUpdateTypes"] == ["major", "minor"] and rule["enabled"] is False
    assert {p.package for p in versions.CLUSTER_AUTOSCALER_IMAGE_PINS.values()} == {
        versions.CLUSTER_AUTOSCALER_IMAGE_REPOSITORY
    }
