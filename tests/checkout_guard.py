"""What a test must not touch: the files of the checkout a user edits, and a tool that is not installed.

Why: `stacks/` and `Pulumi.yaml` are the user's (the README's deploy steps and docs/gpu-groups.md have them
edited) and `build/` holds their renders, so a test that reads any of them passes or fails by what the user
did, not by the code; the tests read pristine copies (tests/shipped.py) instead. A test that starts a tool's
command without checking for the tool fails on a machine without it instead of skipping.

One audit hook (`sys.addaudithook`, installed by the conftest for the whole session, collection included)
sees every file this process opens, lists, creates or removes and every process it starts:

- a path under the checkout's `stacks/`, `Pulumi.yaml` or `build/` (also as a started process's working
  folder or argument, or `gpuplane` started in the checkout itself) raises `Failed` where it happens, naming
  the path and the fixture to use; it is also remembered, so the test fails even where the code under test
  catches the error (`touched_since`);
- a write under `tests/fixtures/` (a file opened for writing, a folder made, anything removed or renamed; a
  started process's `--out`) fails the same way: the pristine copies are read by every test;
- a process started with the command of a tool of `.ci/tools` that is missing skips the test with the tool's
  name and install line (fails with GPUPLANE_REQUIRE_TOOLS=1), as `tools.need` does for the helpers that
  ask first.

Only what this process does is seen; the tests that start `gpuplane` give it a project of their own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests import tools

ROOT = Path(__file__).resolve().parents[1]
USER_OWNED = ("stacks", "Pulumi.yaml", "build")
FIX = (
    "tests read the shipped stacks from tests/fixtures (tests/shipped.py: shipped.DEV, shipped.PROD, "
    "shipped.PULUMI_YAML; shipped.make_project(folder) for a project), and write under tmp_path"
)


def _roots() -> tuple[str, ...]:
    """The checkout's root as written and as resolved (a checkout reached through a symlink is both)."""
    return tuple(dict.fromkeys((os.path.abspath(ROOT), os.path.realpath(ROOT))))


_ROOTS = _roots()
_FORBIDDEN = tuple(os.path.join(root, name) for root in _ROOTS for name in USER_OWNED)
# The pristine copies every test reads: a test may read them, never change them (a render written there by
# mistake would be read by the tests running beside it).
_READ_ONLY = tuple(os.path.join(root, "tests", "fixtures") for root in _ROOTS)
_WRITE_EVENTS = frozenset({"os.mkdir", "os.remove", "os.rmdir", "os.rename", "shutil.rmtree"})
# Events whose first argument is a path this process reads, lists or changes (CPython's audit events table).
_PATH_EVENTS = frozenset(
    {"open", "os.listdir", "os.scandir", "os.mkdir", "os.remove", "os.rmdir", "os.rename", "shutil.rmtree"}
)

_touched: list[str] = []
_launched_by: dict[str, str] = {}


def _as_path(value: Any) -> str | None:
    """An absolute path from an audit argument (str, bytes or path-like), or None (a file descriptor, None)."""
    if isinstance(value, (str, bytes, os.PathLike)):
        try:
            return os.path.abspath(os.fsdecode(value))
        except (TypeError, ValueError):
            return None
    return None


def _forbidden(path: str | None) -> bool:
    return path is not None and any(path == f or path.startswith(f + os.sep) for f in _FORBIDDEN)


def _read_only(path: str | None) -> bool:
    return path is not None and any(path == f or path.startswith(f + os.sep) for f in _READ_ONLY)


def _writes(event: str, args: Sequence[Any]) -> bool:
    """Whether the event changes what is at its path: a builtin `open` for writing, or a create/remove/rename."""
    if event == "open":
        mode = args[1] if len(args) > 1 else None
        return isinstance(mode, str) and any(flag in mode for flag in "wax+")
    return event in _WRITE_EVENTS


def _touch(what: str) -> None:
    _touched.append(what)
    raise pytest.fail.Exception(f"a test touched the checkout's {what}; {FIX}", pytrace=True)


def _popen(executable: Any, args: Any, cwd: Any) -> None:
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args or [])
    command = os.path.basename(os.fsdecode(executable if executable is not None else argv[0])) if argv else ""
    tool = _launched_by.get(command)
    if tool is not None and not tools.present(tool):
        tools.need(tool)  # skips (or fails in CI) with the tool's name and install line
    folder = _as_path(cwd) if cwd is not None else os.getcwd()
    if _forbidden(folder):
        _touch(f"{folder} (as the working folder of {argv[:3]})")
    for index, arg in enumerate(argv[1:], start=1):
        path = _as_path(arg) if isinstance(arg, (bytes, os.PathLike)) or str(arg).startswith(os.sep) else None
        if _forbidden(path):
            _touch(f"{path} (an argument of {argv[:3]})")
        if os.fsdecode(argv[index - 1]) == "--out" and _read_only(_as_path(arg)):
            _touch(f"{_as_path(arg)} (the output folder of {argv[:3]}; the fixtures are read-only)")
    if folder in _ROOTS and any(os.path.basename(os.fsdecode(a)) == "gpuplane" for a in argv[:3]):
        _touch(f"stacks (gpuplane started in {folder} reads its Pulumi.yaml and stacks/)")


def _relative_to_a_folder_fd(event: str, args: Sequence[Any]) -> bool:
    """Whether the event's path is relative to a folder descriptor rather than the current folder.

    `shutil.rmtree` (pytest's cleanup of old temporary folders among them) opens and removes entries by name
    relative to a folder it holds open; the events do not say which, so such a name is not judged. `os.open`
    is the only "open" whose mode is None (the builtin `open` has no `dir_fd`).
    """
    if isinstance(args[0], int) or os.path.isabs(os.fsdecode(args[0])):
        return False
    if event == "open":
        return args[1] is None
    fd_at = {"os.mkdir": 2, "os.remove": 1, "os.rmdir": 1, "os.rename": 2, "shutil.rmtree": 1}.get(event)
    return fd_at is not None and len(args) > fd_at and args[fd_at] not in (None, -1)


def _hook(event: str, args: Sequence[Any]) -> None:
    if event in _PATH_EVENTS:
        if not args or _relative_to_a_folder_fd(event, args):
            return
        if _forbidden(_as_path(args[0])):
            _touch(os.fsdecode(args[0]))
        if _writes(event, args) and _read_only(_as_path(args[0])):
            _touch(f"{os.fsdecode(args[0])} (the fixtures are read-only)")
        if event == "os.rename" and len(args) > 1 and _forbidden(_as_path(args[1])):
            _touch(os.fsdecode(args[1]))
    elif event == "subprocess.Popen":
        _popen(args[0], args[1], args[2])


def install() -> None:
    """Start watching (once per process; an audit hook cannot be removed)."""
    if not _launched_by:
        _launched_by.update(tools.launched_by())
        sys.addaudithook(_hook)


def mark() -> int:
    """Where the record of touched paths stands now (see `touched_since`)."""
    return len(_touched)


def touched_since(start: int) -> list[str]:
    """What was touched since `mark()` returned `start`, even where the code under test caught the failure."""
    return _touched[start:]


def projects_above(folder: Path) -> list[Path]:
    """The Pulumi project files in `folder` or any folder above it.

    Why: many tests run gpuplane in folders under the temp folder and expect no project to be found there
    (project discovery walks up, as the Pulumi CLI does). A `Pulumi.yaml` above the temp folder (one left in `/`)
    turns them red for a reason that is not the code, and a render would write its `build/` beside that file.
    """
    return [
        f / name for f in (folder, *folder.parents) for name in ("Pulumi.yaml", "Pulumi.yml") if (f / name).is_file()
    ]
