"""renovate.json: valid for Renovate, and its regex managers find every pin of versions.py exactly once.

Renovate itself needs a newer Node than CI has, so what it would do is checked with what runs here: its JSON
schema (shipped by check-jsonschema as `vendor.renovate`), and each manager's regex applied to the files it
covers, the way Renovate applies it: first the repository's files less `ignorePaths` (a path is ignored when it
contains an entry or minimatch matches it: renovatebot/renovate lib/workers/repository/extract/file-match.ts,
`filterIgnoredFiles`), then every match of every matchString (JavaScript named groups), then `ignoreDeps` and
package rules that disable a dependency outright.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpuplane.manifests import versions
from tests import shipped

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


# `:ignoreModulesAndTests`, which `config:recommended` extends (renovatebot/renovate
# lib/config/presets/internal/default.preset.ts, read 2026-11-28): what applies when renovate.json sets no ignorePaths.
PRESET_IGNORE_PATHS = (
    "**/node_modules/**",
    "**/bower_components/**",
    "**/vendor/**",
    "**/examples/**",
    "**/__tests__/**",
    "**/test/**",
    "**/tests/**",
    "**/__fixtures__/**",
)


def minimatch(path: str, pattern: str) -> bool:
    """minimatch(path, pattern, {dot: true}) for the globs ignorePaths uses: `**` spans folders, `*` and `?` do not."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out, i = out + "(?:/.*)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.fullmatch(out, path) is not None


def ignore_paths(data: dict[str, Any]) -> tuple[str, ...]:
    """The ignorePaths Renovate applies: the repository's own list replaces the one `config:recommended` brings."""
    if "ignorePaths" in data:
        return tuple(data["ignorePaths"])
    return PRESET_IGNORE_PATHS if "config:recommended" in data.get("extends", []) else ()


def is_ignored(path: str, paths: tuple[str, ...]) -> bool:
    return any(entry in path or minimatch(path, entry) for entry in paths)


@cache
def repository_files() -> tuple[str, ...]:
    """The files Renovate sees: what git tracks (plus this checkout's untracked, not-ignored files)."""
    done = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return tuple(sorted({line for line in done.stdout.splitlines() if (ROOT / line).is_file()}))


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


def disabled(dep: dict[str, str], data: dict[str, Any]) -> bool:
    """`ignoreDeps` (exact names), or a package rule that disables a dependency whatever the update."""
    names = {dep.get("depName"), dep.get("packageName")}
    if names & set(data.get("ignoreDeps", [])):
        return True
    for rule in data.get("packageRules", []):
        selectors = set(rule) - {"description", "enabled"}
        listed = set(rule.get("matchDepNames", []) + rule.get("matchPackageNames", []))
        if rule.get("enabled") is False and selectors <= {"matchDepNames", "matchPackageNames"} and names & listed:
            return True
    return False


def extracted(path: str, data: dict[str, Any] | None = None) -> list[dict[str, str]]:
    """What the custom managers extract from `path` and keep: datasource, depName, packageName, currentValue...

    Nothing when Renovate's ignorePaths drop the file, and without the dependencies it is told to ignore.
    """
    data = config() if data is None else data
    if is_ignored(path, ignore_paths(data)):
        return []
    text = (ROOT / path).read_text()
    found = []
    for index, manager in enumerate(data["customManagers"]):
        if not file_matches(manager, path):
            continue
        for match_string in manager["matchStrings"]:
            for match in python_regex(match_string).finditer(text):
                dep = {k: v for k, v in match.groupdict().items() if v is not None}
                dep.setdefault("depName", manager.get("depNameTemplate", ""))
                dep["datasource"] = manager["datasourceTemplate"]
                dep["manager"] = str(index)
                if not disabled(dep, data):
                    found.append(dep)
    return found


# A pin, as a reader spots one: `name==1.2.3`, a TF_VERSION constant, or a Pin's datasource line.
PIN_LOOK = re.compile(r'(?m)\b[A-Za-z][\w.-]*==[0-9]|^TF_VERSION = "|^\s+datasource="(?:helm|docker|github-tags)"')
# Files that look pinned but pin nothing Renovate should move, and why.
NOT_PINS = {
    "docs/getting-started.md": "restates the Makefile's and pyproject's pins for readers",
    "docs/versions.md": "generated from manifests/versions.py",
    "docs/workloads.md": "restates the TensorFlow line",
    "infra/tfplan_map.json": "records which pulumi-aws pin its data was read for",
    "tests/manifests/test_images.py": "made-up images that test the image rules",
}
# pep621 (enabled in renovate.json) reads pyproject.toml files by its own default pattern.
PEP621_FILES = re.compile(r"(^|/)pyproject\.toml$")


def reached(path: str, data: dict[str, Any]) -> bool:
    """Whether Renovate, configured by `data`, would propose updates for what `path` pins."""
    if is_ignored(path, ignore_paths(data)):
        return False
    if "pep621" in data.get("enabledManagers", []) and PEP621_FILES.search(path):
        return True
    return bool(extracted(path, data))


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


def test_the_ignore_rule_is_renovates() -> None:
    assert minimatch("tests/runtime/test_helper_tensorflow.py", "**/tests/**")
    assert minimatch("examples/training/mnist/train.py", "**/examples/**")
    assert minimatch("a/node_modules/b/package.json", "**/node_modules/**")
    assert not minimatch("manifests/versions.py", "**/tests/**") and not minimatch("tests", "**/tests/**/x")
    assert is_ignored("vendor/x.py", ("vendor/",))  # a plain substring is enough for Renovate


def test_every_pinned_file_is_reached() -> None:
    """Every file that pins something is read by a manager after ignorePaths: none is silently skipped."""
    pinned = {
        path
        for path in repository_files()
        if path not in NOT_PINS and path != "tests/test_renovate.py" and _looks_pinned(path)
    }
    assert pinned >= {"Makefile", "benchmarks/tfvenv.py", "manifests/versions.py", "pyproject.toml"}
    data = config()
    assert {path: reached(path, data) for path in sorted(pinned)} == dict.fromkeys(sorted(pinned), True)
    assert set(NOT_PINS) <= set(repository_files())  # the exceptions still exist and still look pinned
    assert all(_looks_pinned(path) for path in NOT_PINS)


def _looks_pinned(path: str) -> bool:
    # The stacks and Pulumi.yaml are what a user edits: their shipped copies stand in (tests/shipped.py).
    try:
        return PIN_LOOK.search(shipped.SHIPPED.get(path, ROOT / path).read_text()) is not None
    except (UnicodeDecodeError, OSError):
        return False


def test_without_its_ignore_paths_a_pin_in_tests_or_examples_would_be_skipped() -> None:
    """config:recommended's own ignorePaths skip tests/ and examples/: the repository's list is what reaches them."""
    data = {k: v for k, v in config().items() if k != "ignorePaths"}
    for path in ("tests/runtime/x.py", "examples/gpu-cluster/x"):
        assert is_ignored(path, ignore_paths(data)) and not is_ignored(path, ignore_paths(config()))
    assert reached("benchmarks/tfvenv.py", data)


def test_ignore_deps_and_disabled_rules_drop_a_dependency() -> None:
    data = {**config(), "ignoreDeps": ["kueue"]}
    assert [d for d in extracted(VERSIONS, data) if d["depName"] == "kueue"] == []
    rule = {"matchDepNames": ["keda"], "enabled": False}
    data = {**config(), "packageRules": [*config()["packageRules"], rule]}
    assert [d for d in extracted(VERSIONS, data) if d["depName"] == "keda"] == []
    # Nothing in the real configuration drops a pin (the autoscaler rule disables minor and major updates only).
    assert {d["depName"] for d in extracted(VERSIONS)} == {p.name for p in versions.PINS}


def test_checkov_in_the_makefile_is_tracked() -> None:
    assert [(d["depName"], d["datasource"]) for d in extracted("Makefile")] == [("checkov", "pypi")]
    (dep,) = extracted("Makefile")
    assert f"checkov=={dep['currentValue']}" in (ROOT / "Makefile").read_text()
    assert re.fullmatch(r"\d+\.\d+\.\d+", dep["currentValue"])


def note_commands() -> list[str]:
    """The commands PR notes tell reviewers to run: backticked text that starts with a program we ship or use."""
    notes = [note for rule in config()["packageRules"] for note in rule.get("prBodyNotes", [])]
    spans = [span for note in notes for span in re.findall(r"`([^`]+)`", note)]
    return [span for span in spans if span.split()[0] in {"python", "python3", "gpuplane", "make"}]


def test_every_command_in_the_pr_notes_exists() -> None:
    commands = note_commands()
    assert commands == ["python -m gpuplane.infra.docs"]
    bin_dir = Path(sys.executable).parent
    before = (ROOT / "docs" / "versions.md").read_bytes()
    for command in commands:
        argv = shlex.split(command)
        program = {"python": sys.executable, "python3": sys.executable}.get(argv[0], str(bin_dir / argv[0]))
        done = subprocess.run(
            [program, *argv[1:], "--help"], cwd=ROOT, capture_output=True, text=True, check=False, timeout=120
        )
        assert done.returncode == 0, (command, done.stdout + done.stderr)
        assert "usage" in done.stdout.lower(), command
    assert (ROOT / "docs" / "versions.md").read_bytes() == before  # --help only says what the command does


def test_the_tensorflow_test_venv_moves_with_the_line() -> None:
    """The TensorFlow-marked tests and the thread benchmarks install the CPU image's TensorFlow, from one line."""
    deps = extracted("benchmarks/tfvenv.py")
    assert [(d["depName"], d["datasource"], d["currentValue"]) for d in deps] == [
        ("tensorflow-cpu", "pypi", versions.TENSORFLOW_CPU.tensorflow)
    ]
    for path in ("tests/runtime/test_helper_tensorflow.py", "benchmarks/threads.py", "tests/runtime/_support.py"):
        assert extracted(path) == [] and not _looks_pinned(path), path  # they read benchmarks/tfvenv.py


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
