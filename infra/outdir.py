"""A render's output folder: one render at a time, staged in the folder itself, swapped in recoverably.

Why apart from `infra/render.py`: what a render writes is render's business; how it lands in a folder the
user named is a file-system problem of its own, and the same whatever is rendered. The folder may be a mount
point or a Docker bind mount (`--out /dev/shm`, `-v $PWD/out:/out`), so nothing is staged in its parent: the
new files are written in `<out>/.gpuplane-new/` (the same file system as the entries they replace, so each move
is one rename) and moved in one entry at a time, the marker last.

A render killed at any moment (SIGKILL included) leaves the folder in one of these states, and the next render
(`recover`, under the lock) finishes or discards what it left before doing anything else:

- `.gpuplane-new/` without its entry list (`.gpuplane-entries`), no `.gpuplane-old/`: staging was cut short;
  it is deleted and the previous render stands (untouched all along).
- `.gpuplane-new/` with its entry list: a complete render was being moved in; the move is finished (the list
  says which entries are new, so a previous entry the new render lacks goes too).
- `.gpuplane-old/` alone: the clean-up was cut short; it is deleted.

Between two moves the folder holds some new and some previous entries, with the previous marker; the next
render completes the move. Folders and files get their modes from the umask, like any tool's output. Every
`OSError` becomes `OutputError`: one line naming the path, which the CLI prints with exit 2.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

MARKER = ".gpuplane-render"
"""File every render leaves in its output folder: the entries it names are the render's, and only those."""
OWNED = ("plan.json", "tfplan.json", "cost.json", "stack.md", "manifests", "helm", "observability", MARKER)
"""What a render writes, and so all it ever replaces (the marker last): any other file is the user's and stays."""
STAGING = ".gpuplane-new"
ASIDE = ".gpuplane-old"
# In the staging folder, written once `fill` is done: the entries the new render has. Its presence says the
# staging is complete; its list says which previous entries go (a render without `observability/` removes an
# old one), so a move stopped anywhere is finished the same way.
ENTRIES = ".gpuplane-entries"
LOCK = ".gpuplane-lock"
# How long a render waits for another one writing into the same folder before giving up.
LOCK_WAIT_S = 300.0


class OutputError(Exception):
    """The output folder cannot be used or written: one line naming the path and what to do."""


def _noop(step: str) -> None:
    """Default step hook."""


# Called with the name of each step of the swap before it happens (tests inject a SIGKILL there).
on_step: Callable[[str], None] = _noop


def _describe(exc: OSError, fallback: Path) -> str:
    path = exc.filename or fallback
    reason = exc.strerror or str(exc)
    return f"{path}: {reason}"


def problem(out_dir: Path) -> str | None:
    """Why a render may not write into `out_dir`, or None.

    A render replaces only its own entries (`OWNED`): a folder holding a previous render (its marker, or a
    render that a killed run was moving in) or none of those names is fine, and any other file in it is left
    alone. A folder holding `plan.json`, `manifests/`... without the marker is someone else's: refused, so no
    file of the user's is replaced.
    """
    try:
        if out_dir.is_symlink() and not out_dir.exists():
            return f"--out {out_dir}: is a link to {os.readlink(out_dir)}, which does not exist; allowed: a folder"
        if not out_dir.exists():
            for parent in out_dir.parents:
                if parent.exists() or parent.is_symlink():
                    if not parent.is_dir():
                        return f"--out {out_dir}: {parent} is a file, not a folder; allowed: a path of folders"
                    break
            return None
        if not out_dir.is_dir():
            return f"--out {out_dir}: is a file; allowed: a folder (new, or one a render may write into)"
        if (out_dir / MARKER).is_file() or (out_dir / STAGING / ENTRIES).is_file() or (out_dir / ASIDE).is_dir():
            return None
        clashes = [name for name in OWNED if os.path.lexists(out_dir / name)]
    except OSError as exc:
        return f"--out {_describe(exc, out_dir)}"
    if clashes:
        return (
            f"--out {out_dir}: holds {', '.join(clashes)}, which no gpuplane render wrote (no {MARKER}); allowed: "
            f"a folder without {', '.join(n for n in OWNED if n != MARKER)}, or a previous render. Nothing was deleted."
        )
    return None


# Files that say a folder is a project's or its source's: a render never writes among them.
_PROJECT_FILES = ("Pulumi.yaml", "Pulumi.yml", "pyproject.toml", "setup.py", ".git")


def forbidden(out_dir: Path, *, project_root: Path, stacks_dir: Path) -> str | None:
    """Why `out_dir` may never hold a render (whatever it holds now), or None.

    `/`, the home folder, the project's root or stacks folder, a folder above either (a render there would
    sit among the project's files), or a folder holding a project's or package's files (`Pulumi.yaml`,
    `Pulumi.<stack>.yaml`, `pyproject.toml`, `setup.py`, `.git`, Python sources): a render's files would mix
    with them, and the next render would replace what it wrote there.
    """
    try:
        target = out_dir.expanduser().resolve()
        home = Path.home().resolve()
        root, stacks = project_root.resolve(), stacks_dir.resolve()
    except (OSError, RuntimeError) as exc:
        return f"--out {out_dir}: cannot be resolved ({exc})"
    named = {Path(target.anchor): "the file system's root", home: "your home folder"}
    named |= {root: "the project's root", stacks: "the project's stacks folder"}
    what = named.get(target)
    if what is None and (target in root.parents or target in stacks.parents):
        what = "a folder holding the project"
    if what is None and target.is_dir():
        try:
            held = sorted(
                p.name
                for p in target.iterdir()
                if p.name in _PROJECT_FILES
                or p.suffix == ".py"
                or (p.name.startswith("Pulumi.") and p.suffix in (".yaml", ".yml"))
            )
        except OSError:
            held = []
        if held:
            what = f"a folder of a project's files ({', '.join(held[:3])}{', ...' if len(held) > 3 else ''})"
    if what is None:
        return None
    return (
        f"--out {out_dir}: is {what}; allowed: a folder of its own for the render (the default is build/<stack> "
        "in the project)"
    )


@contextlib.contextmanager
def locked(out_dir: Path) -> Iterator[Path]:
    """Create `out_dir` if needed and hold its lock: renders into one folder run one after the other.

    Yields the staging folder, new and empty. On leaving, a folder this call created is removed again if
    nothing was moved into it (a failed first render leaves nothing behind), and the lock file goes too: a
    render that was waiting on it sees it unlinked and locks the one there is then (`_lock`).
    """
    fd, created = _lock(out_dir)
    try:
        try:
            recover(out_dir)
            staging = out_dir / STAGING
            staging.mkdir()
        except OSError as exc:
            raise OutputError(f"--out {_describe(exc, out_dir)}; the previous render, if any, is unchanged") from None
        try:
            yield staging
        finally:
            with contextlib.suppress(OSError):
                if staging.is_dir():
                    shutil.rmtree(staging)
            if created:
                _remove_if_unused(out_dir)
    finally:
        with contextlib.suppress(OSError):  # still ours: whoever locks next checks that it is the file there
            (out_dir / LOCK).unlink()
        os.close(fd)


def _lock(out_dir: Path) -> tuple[int, bool]:
    """The lock of `out_dir`, held (the folder made when missing); and whether this call made the folder.

    Two first renders into one new folder both get there: one makes the folder, the other finds it. A lock
    file unlinked while this one waited on it (its holder left) is not the lock any more: lock the new one.
    """
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        created = False
        try:
            if not out_dir.is_dir():
                try:
                    out_dir.mkdir(parents=True)
                    created = True
                except FileExistsError:
                    if not out_dir.is_dir():
                        raise
            fd = os.open(out_dir / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except FileNotFoundError:  # the folder was removed (another render's failed first) since: again
            if time.monotonic() > deadline:
                raise OutputError(f"--out {out_dir}: it keeps disappearing; nothing was written") from None
            continue
        except OSError as exc:
            raise OutputError(f"--out {_describe(exc, out_dir)}; nothing was written") from None
        try:
            _acquire(fd, out_dir, deadline)
            held = os.fstat(fd)
            try:
                there = os.stat(out_dir / LOCK, follow_symlinks=False)
            except FileNotFoundError:
                there = None
        except BaseException:
            os.close(fd)
            raise
        if there is not None and (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino):
            return fd, created
        os.close(fd)


def _acquire(fd: int, out_dir: Path, deadline: float) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise OutputError(
                    f"--out {out_dir}: another gpuplane render has been writing into it for over "
                    f"{LOCK_WAIT_S:.0f} s; wait for it to end, or use another --out"
                ) from None
            time.sleep(0.1)
        except OSError as exc:
            raise OutputError(f"--out {_describe(exc, out_dir)}: cannot lock it; nothing was written") from None


def _remove_if_unused(out_dir: Path) -> None:
    with contextlib.suppress(OSError):
        if {p.name for p in out_dir.iterdir()} <= {LOCK}:
            (out_dir / LOCK).unlink(missing_ok=True)
            out_dir.rmdir()


def _move(source: Path, target: Path) -> None:
    """One rename; a copy and delete where the two are on different file systems (a mount inside the folder)."""
    try:
        os.rename(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        shutil.move(str(source), str(target))


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def swap_in(out_dir: Path) -> None:
    """Move the complete render in `<out>/.gpuplane-new/` into `out_dir`, replacing the previous render's entries.

    Each entry of OWNED: the previous one aside into `.gpuplane-old/`, the new one (if the entry list names it)
    in; the marker last. Safe to run again from any point it was stopped at (that is how `recover` finishes a
    killed render's move).
    """
    staging, aside = out_dir / STAGING, out_dir / ASIDE
    entries = set((staging / ENTRIES).read_text().split())
    on_step("aside")
    aside.mkdir(exist_ok=True)
    for name in OWNED:
        new = name in entries
        if new and not os.path.lexists(staging / name):
            continue  # moved in already
        if os.path.lexists(out_dir / name):  # the previous render's (a new one is still in staging)
            on_step(f"aside:{name}")
            if os.path.lexists(aside / name):
                _remove(aside / name)
            _move(out_dir / name, aside / name)
        if new:
            on_step(f"in:{name}")
            _move(staging / name, out_dir / name)
    on_step("clean:staging")
    shutil.rmtree(staging)
    on_step("clean:aside")
    shutil.rmtree(aside)
    on_step("done")


def recover(out_dir: Path) -> None:
    """Finish or discard what a killed render left in `out_dir` (the table in this module's docstring)."""
    staging, aside = out_dir / STAGING, out_dir / ASIDE
    if (staging / ENTRIES).is_file():
        swap_in(out_dir)
        return
    if os.path.lexists(staging):
        _remove(staging)
    if os.path.lexists(aside):
        _remove(aside)


def write(out_dir: Path, fill: Callable[[Path], None]) -> None:
    """Lock `out_dir`, let `fill` write a complete render into the staging folder, and swap it in.

    `fill` must write the marker (`MARKER`) last: a staging folder holding it is complete. Raises
    OutputError (one line naming the path) on any file-system error, leaving the previous render as it was.
    """
    with locked(out_dir) as staging:
        try:
            fill(staging)
            if not (staging / MARKER).is_file():
                raise OutputError(f"--out {out_dir}: the render did not complete; nothing was replaced")
            present = [name for name in OWNED if os.path.lexists(staging / name)]
            listed = staging / f"{ENTRIES}.tmp"
            listed.write_text("".join(f"{name}\n" for name in present))
            on_step("entries")
            listed.rename(staging / ENTRIES)  # atomically: from here on the staging is complete
        except OSError as exc:
            raise OutputError(f"--out {_describe(exc, staging)}; the previous render, if any, is unchanged") from None
        try:
            swap_in(out_dir)
        except OSError as exc:
            raise OutputError(
                f"--out {_describe(exc, out_dir)}; the render was stopped while moving in: the next render "
                "finishes or undoes it"
            ) from None
