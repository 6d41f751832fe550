"""The guard's judgement of a path: the user's files are never touched, the fixtures never changed.

Exercised through the guard's own hook with its failure replaced by a record, so that this test can look at
what the guard would fail without failing itself.
"""

from __future__ import annotations

import os

import pytest

from tests import checkout_guard, shipped


@pytest.fixture
def caught(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(checkout_guard, "_touch", seen.append)
    return seen


def test_reading_a_fixture_is_allowed(caught: list[str]) -> None:
    checkout_guard._hook("open", (str(shipped.DEV), "r", os.O_RDONLY))
    checkout_guard._hook("os.listdir", (str(shipped.STACKS),))
    assert caught == []


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("open", (str(shipped.STACKS / "cost.json"), "w", os.O_WRONLY)),
        ("open", (str(shipped.DEV), "a", os.O_WRONLY)),
        ("os.mkdir", (str(shipped.STACKS / "manifests"), 0o777, None)),
        ("os.remove", (str(shipped.DEV), None)),
        ("shutil.rmtree", (str(shipped.STACKS), None)),
    ],
)
def test_changing_a_fixture_is_caught(caught: list[str], event: str, args: tuple[object, ...]) -> None:
    checkout_guard._hook(event, args)
    assert len(caught) == 1 and "fixtures are read-only" in caught[0]


def test_a_process_told_to_write_into_the_fixtures_is_caught(caught: list[str]) -> None:
    checkout_guard._popen("gpuplane", ["gpuplane", "render", "dev", "--out", str(shipped.STACKS)], "/tmp")
    assert len(caught) == 1 and "output folder" in caught[0]


def test_a_process_writing_elsewhere_is_not(caught: list[str], tmp_path) -> None:
    checkout_guard._popen("gpuplane", ["gpuplane", "render", "dev", "--out", str(tmp_path)], str(tmp_path))
    assert caught == []


def test_a_project_file_above_a_folder_is_found_at_any_depth(tmp_path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert checkout_guard.projects_above(deep) == []  # (this machine's temp folder has no project above it)
    (tmp_path / "a" / "Pulumi.yaml").write_text("name: stray\n")
    (deep / "Pulumi.yml").write_text("name: here\n")
    assert checkout_guard.projects_above(deep) == [deep / "Pulumi.yml", tmp_path / "a" / "Pulumi.yaml"]
