"""Render's output folder: a kill at every step of the swap, mount points, concurrent renders, modes, OSErrors."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplane.infra import outdir
from gpuplane.infra.cli import app

runner = CliRunner()
STACK = "config:\n  aws:region: us-west-2\n  gpuplane:cluster: {publicAccessCidrs: [198.51.100.7/32]}\n"
STEPS = [
    "entries",
    "aside",
    *(f"aside:{name}" for name in outdir.OWNED),
    *(f"in:{name}" for name in outdir.OWNED),
    "clean:staging",
    "clean:aside",
    "done",
]


def _fill(label: str, *, die_after: str | None = None, without: str = "") -> Callable[[Path], None]:
    """A render's files, each saying which render wrote it; the marker last (`die_after`: SIGKILL there)."""

    def fill(staging: Path) -> None:
        for name in outdir.OWNED:
            if name == without:
                continue
            if name in ("manifests", "helm"):
                (staging / name).mkdir()
                (staging / name / "a.yaml").write_text(label)
            else:
                (staging / name).write_text(label)
            if name == die_after:
                os.kill(os.getpid(), signal.SIGKILL)

    return fill


def _labels(out: Path) -> set[str]:
    """Which renders the folder's entries come from (one label: a consistent render)."""
    found = set()
    for name in outdir.OWNED:
        if not (out / name).exists():
            continue
        path = out / name
        found.add((path / "a.yaml").read_text() if path.is_dir() else path.read_text())
    return found


def _in_child(action: Callable[[], object]) -> int:
    """Run `action` in a forked child; its wait status (killed by a signal or exited)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            action()
        finally:
            os._exit(0)
    return os.waitpid(pid, 0)[1]


def _kill_at(step: str) -> Callable[[str], None]:
    def hook(name: str) -> None:
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)

    return hook


@pytest.mark.parametrize(
    ("step", "previous"),
    [(step, True) for step in STEPS] + [(step, False) for step in STEPS if not step.startswith("aside:")],
    ids=[f"{step}-over-a-render" for step in STEPS] + [f"{s}-new-folder" for s in STEPS if not s.startswith("aside:")],
)
def test_a_kill_at_any_step_leaves_a_folder_the_next_render_recovers(tmp_path, step, previous, monkeypatch):
    out = tmp_path / "out"
    if previous:
        outdir.write(out, _fill("old"))
        (out / "mine.txt").write_text("the user's")

    def killed_render() -> None:
        outdir.on_step = _kill_at(step)
        outdir.write(out, _fill("new"))

    status = _in_child(killed_render)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, step
    # The folder is still ours: nothing refuses it, and a recovery makes it one whole render.
    assert outdir.problem(out) is None
    outdir.recover(out)
    # The previous render, or the new one; a first render killed before its staging was complete leaves none.
    assert _labels(out) in ({"old"}, {"new"}) if previous or step != "entries" else _labels(out) == set(), step
    assert not (out / outdir.STAGING).exists() and not (out / outdir.ASIDE).exists()
    outdir.write(out, _fill("next"))
    assert _labels(out) == {"next"}
    assert sorted(p.name for p in out.iterdir()) == sorted([*outdir.OWNED, *(["mine.txt"] if previous else [])])
    if previous:
        assert (out / "mine.txt").read_text() == "the user's"


@pytest.mark.parametrize("step", ["entries", "aside", "aside:observability", "in:helm", "in:.gpuplane-render", "done"])
def test_a_render_without_an_entry_removes_the_previous_one_wherever_it_is_killed(tmp_path, step):
    """A render that writes no `observability/` (observability off) leaves none of the previous render's."""
    out = tmp_path / "out"
    outdir.write(out, _fill("old"))

    def killed_render() -> None:
        outdir.on_step = _kill_at(step)
        outdir.write(out, _fill("new", without="observability"))

    status = _in_child(killed_render)
    assert os.WIFSIGNALED(status), step
    outdir.recover(out)
    if (out / "observability").exists():
        assert _labels(out) == {"old"}, step  # (only before the staging was complete)
    else:
        assert {p.name for p in out.iterdir()} == set(outdir.OWNED) - {"observability"} | {
            outdir.LOCK
        }  # killed: its lock stays
    outdir.write(out, _fill("next", without="observability"))
    assert not (out / "observability").exists()


@pytest.mark.parametrize("die_after", ["plan.json", "helm"])
def test_a_kill_while_staging_keeps_the_previous_render(tmp_path, die_after):
    out = tmp_path / "out"
    outdir.write(out, _fill("old"))
    status = _in_child(lambda: outdir.write(out, _fill("new", die_after=die_after)))
    assert os.WIFSIGNALED(status)
    assert _labels(out) == {"old"}  # untouched, before any recovery
    outdir.write(out, _fill("next"))
    assert _labels(out) == {"next"} and not (out / outdir.STAGING).exists()


def test_concurrent_renders_into_one_folder_take_turns(tmp_path):
    out = tmp_path / "out"
    log = tmp_path / "log"

    def slow(label: str) -> Callable[[Path], None]:
        def fill(staging: Path) -> None:
            with log.open("a") as f:
                f.write(f"start {label}\n")
            time.sleep(0.5)
            _fill(label)(staging)
            with log.open("a") as f:
                f.write(f"end {label}\n")

        return fill

    pids = []
    for label in ("a", "b", "c"):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the children
            code = 0
            try:
                outdir.write(out, slow(label))
            except BaseException:
                code = 1
            os._exit(code)
        pids.append(pid)
    statuses = [os.waitpid(pid, 0)[1] for pid in pids]
    assert all(os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0 for s in statuses), statuses
    lines = log.read_text().split()
    # One render at a time: each start is followed by its own end.
    pairs = [(lines[i], lines[i + 1], lines[i + 2], lines[i + 3]) for i in range(0, len(lines), 4)]
    assert all(p[0] == "start" and p[2] == "end" and p[1] == p[3] for p in pairs), lines
    assert len(_labels(out)) == 1
    assert sorted(p.name for p in out.iterdir()) == sorted(outdir.OWNED)  # no lock file left behind


def test_a_render_that_waits_too_long_for_the_lock_is_refused(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    import fcntl  # noqa: PLC0415

    fd = os.open(out / outdir.LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    monkeypatch.setattr(outdir, "LOCK_WAIT_S", 0.3)
    try:
        with pytest.raises(outdir.OutputError, match="another gpuplane render"):
            outdir.write(out, _fill("x"))
    finally:
        os.close(fd)
    assert sorted(p.name for p in out.iterdir()) == [outdir.LOCK]


@pytest.mark.parametrize(("umask", "folder", "file"), [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600)])
def test_modes_come_from_the_umask(tmp_path, umask, folder, file):
    old = os.umask(umask)
    try:
        outdir.write(tmp_path / "new" / "out", _fill("x"))
    finally:
        os.umask(old)
    out = tmp_path / "new" / "out"
    assert (out.stat().st_mode & 0o777, (out / "manifests").stat().st_mode & 0o777) == (folder, folder)
    assert (out / "plan.json").stat().st_mode & 0o777 == file


def test_a_failed_first_render_leaves_no_folder(tmp_path):
    def broken(staging: Path) -> None:
        (staging / "plan.json").write_text("x")
        raise OSError(28, "No space left on device", str(staging / "tfplan.json"))

    with pytest.raises(outdir.OutputError, match=r"tfplan\.json: No space left on device"):
        outdir.write(tmp_path / "out", broken)
    assert list(tmp_path.iterdir()) == []


@contextlib.contextmanager
def _tmpfs(where: Path, *options: str) -> Iterator[Path]:
    where.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(["size=64m", *options]), "tmpfs", str(where)],
        check=False,
        capture_output=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({made.stderr.decode().strip()}); CI runs as root")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def _stack(tmp_path: Path) -> Path:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.dev.yaml").write_text(STACK)
    return stacks


def _render(stacks: Path, out: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["render", "dev", "--out", str(out), "--stacks-dir", str(stacks)])
    return result.exit_code, " ".join(result.output.split())


def test_render_onto_a_mount_point(tmp_path):
    stacks = _stack(tmp_path)
    with _tmpfs(tmp_path / "mnt") as mount:
        assert os.stat(mount).st_dev != os.stat(tmp_path).st_dev
        code, output = _render(stacks, mount)
        assert code == 0, output
        assert (mount / "plan.json").is_file() and (mount / outdir.MARKER).is_file()
        code, output = _render(stacks, mount)  # and over its own previous render
        assert code == 0, output
        assert not (mount / outdir.STAGING).exists() and not (mount / outdir.ASIDE).exists()


def test_a_read_only_output_folder_is_one_line_and_exit_2(tmp_path):
    stacks = _stack(tmp_path)
    with _tmpfs(tmp_path / "ro", "ro") as mount:
        code, output = _render(stacks, mount / "out")
    assert code == 2, output
    assert f"--out {mount / 'out'}: Read-only file system" in output or "Read-only file system" in output
    assert "Traceback" not in output


def test_a_file_in_the_path_and_a_dangling_link_are_refused_by_name(tmp_path):
    stacks = _stack(tmp_path)
    (tmp_path / "afile").write_text("x")
    code, output = _render(stacks, tmp_path / "afile" / "out")
    assert code == 2 and f"{tmp_path / 'afile'} is a file, not a folder" in output, output
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    code, output = _render(stacks, tmp_path / "link")
    assert code == 2 and "is a link to" in output and "does not exist" in output, output
    assert "Traceback" not in output


def test_a_dangling_link_inside_a_previous_render_is_replaced(tmp_path):
    stacks = _stack(tmp_path)
    out = tmp_path / "out"
    assert _render(stacks, out)[0] == 0
    import shutil  # noqa: PLC0415

    shutil.rmtree(out / "manifests")
    (out / "manifests").symlink_to(tmp_path / "gone")
    code, output = _render(stacks, out)
    assert code == 0, output
    assert (out / "manifests").is_dir() and not (out / "manifests").is_symlink()


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "home" / "proj"
    (root / "stacks").mkdir(parents=True)
    (root / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    (root / "infra").mkdir()
    (root / "infra" / "__main__.py").write_text("")
    return root, root / "stacks"


@pytest.mark.parametrize(
    ("out", "what"),
    [
        ("/", "the file system's root"),
        ("~", "your home folder"),
        ("{root}", "the project's root"),
        ("{root}/stacks", "the project's stacks folder"),
        ("{root}/../..", "a folder holding the project"),
        ("{root}/infra", "a folder of a project's files (__main__.py)"),
        ("{root}/stacks/../.", "the project's root"),
    ],
)
def test_out_refuses_folders_of_the_system_home_and_project(tmp_path, monkeypatch, out, what):
    root, stacks = _project(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    problem = outdir.forbidden(Path(out.format(root=root)), project_root=root, stacks_dir=stacks)
    assert problem is not None and f"is {what}; allowed: a folder of its own" in problem


@pytest.mark.parametrize("out", ["{root}/build/dev", "{root}/elsewhere", "{tmp}/out"])
def test_out_accepts_a_folder_of_its_own(tmp_path, monkeypatch, out):
    root, stacks = _project(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert outdir.forbidden(Path(out.format(root=root, tmp=tmp_path)), project_root=root, stacks_dir=stacks) is None


def test_render_refuses_the_root_folder_and_writes_nothing_there(tmp_path):
    done = runner.invoke(app, ["render", "dev", "--out", "/", "--stacks-dir", str(_stack(tmp_path))])
    assert done.exit_code == 2
    assert "--out /: is the file system's root" in " ".join(done.output.split())
    assert not Path("/plan.json").exists()


def test_a_render_leaves_no_lock_file(tmp_path):
    outdir.write(tmp_path / "out", _fill("x"))
    outdir.write(tmp_path / "out", _fill("y"))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(outdir.OWNED)
    assert _labels(tmp_path / "out") == {"y"}
