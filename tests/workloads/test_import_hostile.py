"""Hostile archives and servers against the import script, each built here and served over HTTPS.

Every run is the real script as the workload uid into a sandboxed volume with a readable sentinel beside
it; each test asserts the exit code, the one-line message, that nothing from outside the archive reached
the volume and that nothing is left behind. Bombs are bounded by caps far below the free disk, and a
file-size rlimit proves the caps hold while unpacking, not after.
"""

from __future__ import annotations

import fcntl
import io
import os
import stat
import tarfile
import threading
import time
import warnings
import zipfile
from collections.abc import Iterator

import pytest

from tests.workloads.import_harness import (
    MODEL,
    UID,
    Sandbox,
    Server,
    directory,
    drip,
    drop_connection,
    failing,
    hardlink,
    redirect_to,
    sandbox_dir,
    status,
    symlink,
    tar_gz,
    truncated,
    zip_bytes,
)

MIB = 1 << 20
ZEROS = b"\0" * (32 * MIB)


@pytest.fixture
def box() -> Iterator[Sandbox]:
    yield from sandbox_dir()


@pytest.fixture
def https() -> Iterator[Server]:
    server = Server()
    yield server
    server.close()


def refused(box: Sandbox, result, code: int, *fragments: str) -> None:
    """The run failed as expected, and left the volume as it found it."""
    result.failed(code, *fragments)
    assert not (box.volume / "m" / "1").exists()
    box.assert_nothing_from_outside()
    box.assert_nothing_left()


def zip_link(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def device(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
    return info


# ---- 1. nothing but the archive's own regular files and directories -----------------------------

LINKS = {
    # The 333-byte escape: `L` is inside when checked, outside once `d` is re-pointed.
    "re-pointed directory": (
        "m.tar.gz",
        lambda box: tar_gz(
            [
                *MODEL,
                directory("model/x/y/z/w/v"),
                symlink("model/d", "x/y/z/w/v"),
                symlink("model/L", "d/../../../../sentinel"),
                symlink("model/d", "x"),
            ]
        ),
        "'model/d' is a symbolic link",
    ),
    "symlink loop": (
        "m.tar.gz",
        lambda box: tar_gz([*MODEL, symlink("model/a", "."), symlink("model/b", ".")]),
        "'model/a' is a symbolic link",
    ),
    "absolute symlink": (
        "m.tar.gz",
        lambda box: tar_gz([*MODEL, symlink("model/secret", str(box.sentinel / "secret.txt"))]),
        "'model/secret' is a symbolic link",
    ),
    "hard link": (
        "m.tar.gz",
        lambda box: tar_gz([*MODEL, hardlink("model/h", "model/saved_model.pb")]),
        "'model/h' is a hard link",
    ),
    "device": ("m.tar.gz", lambda box: tar_gz([*MODEL, device("model/null")]), "'model/null' is a device or FIFO"),
    "zip symlink": (
        "m.zip",
        lambda box: zip_bytes([*MODEL, zip_link("model/L", "../../../sentinel/secret.txt")]),
        "'model/L' is a symbolic link",
    ),
}


@pytest.mark.parametrize("case", LINKS)
def test_links_and_special_files_are_refused(box, https, case):
    name, build, message = LINKS[case]
    https.routes[f"/{name}"] = build(box)
    result = box.run(f"{https.url}/{name}", timeout=20)
    refused(box, result, 1, message, "only regular files and directories")
    assert result.seconds < 10  # the loop made the old copy recurse without end


def test_the_copy_never_follows_a_link_in_the_staged_tree(box):
    """An s3 prefix is staged by the aws CLI, not by our unpacking: its links are refused at the copy."""
    tree = box.staging / "s3"
    (tree / "variables").mkdir(parents=True)
    (tree / "saved_model.pb").write_bytes(b"g")
    (tree / "variables" / "secret").symlink_to(box.sentinel / "secret.txt")
    (tree / "loop").symlink_to(".")
    if os.geteuid() == 0:
        for path in (tree, tree / "variables", tree / "saved_model.pb"):
            os.chown(path, UID, UID)
    result = box.run("s3://bucket/prefix/")
    refused_at = result.stderr
    result.failed(1, "is a link or special file")
    assert "'loop'" in refused_at or "'variables/secret'" in refused_at
    assert not (box.volume / "m" / "1").exists()
    box.assert_nothing_from_outside()
    box.assert_nothing_left("s3")


# ---- 2. caps that stop a bomb while it unpacks -------------------------------------------------


@pytest.mark.parametrize("name", ["m.tar.gz", "m.zip"])
def test_a_bomb_stops_at_the_byte_cap(box, https, name):
    members = [*MODEL, ("model/variables/variables.data-00000-of-00001", ZEROS)]
    https.routes[f"/{name}"] = tar_gz(members) if name.endswith(".gz") else zip_bytes(members)
    result = box.run(
        f"{https.url}/{name}",
        GPUPLANE_IMPORT_MAX_BYTES=str(4 * MIB),
        GPUPLANE_IMPORT_MAX_RATIO="2000",
        file_size_limit=6 * MIB,  # a write past this kills the script: the cap must act before it
    )
    refused(box, result, 1, f"more than {4 * MIB} bytes", "import.maxUnpackedSize")


@pytest.mark.parametrize("name", ["m.tar.gz", "m.zip"])
def test_a_bomb_stops_at_the_expansion_ratio_under_the_default_byte_cap(box, https, name):
    members = [*MODEL, ("model/variables/variables.data-00000-of-00001", ZEROS)]
    body = tar_gz(members) if name.endswith(".gz") else zip_bytes(members)
    assert len(body) * 100 < 8 * MIB < len(ZEROS)  # a thousand-fold bomb, well under the 10Gi default
    https.routes[f"/{name}"] = body
    result = box.run(f"{https.url}/{name}", file_size_limit=8 * MIB)
    refused(box, result, 1, "expands more than 100 times", "decompression bomb", "import.maxExpansionRatio")


@pytest.mark.parametrize("name", ["m.tar.gz", "m.zip"])
def test_many_tiny_files_stop_at_the_count_cap(box, https, name):
    members = [*MODEL, *((f"model/assets/f{i:05}", b"x") for i in range(2000))]
    https.routes[f"/{name}"] = tar_gz(members) if name.endswith(".gz") else zip_bytes(members)
    result = box.run(f"{https.url}/{name}", GPUPLANE_IMPORT_MAX_FILES="500")
    refused(box, result, 1, "more than 500 files and directories", "import.maxFiles")
    if name.endswith(".gz"):
        # model, model/variables, model/assets count too: f00495 is the 501st entry, refused as it streams
        assert "refused at 'model/assets/f00495'" in result.stderr


def test_directories_implied_by_deep_paths_count_as_members(box, https):
    """50 members, each 40 directories deep: 2,000 inodes from an archive whose member count looks small."""
    deep = [("/".join(["model", *(f"d{i}" for _ in range(40)), "f"]), b"x") for i in range(50)]
    https.routes["/m.zip"] = zip_bytes([*MODEL, *deep])
    result = box.run(f"{https.url}/m.zip", GPUPLANE_IMPORT_MAX_FILES="500")
    refused(box, result, 1, "more than 500 files and directories", "import.maxFiles")


def test_an_archive_larger_than_the_caps_allow_is_not_downloaded_whole(box, https):
    https.routes["/m.tar.gz"] = os.urandom(3 * MIB)
    result = box.run(f"{https.url}/m.tar.gz", GPUPLANE_IMPORT_MAX_BYTES=str(MIB), GPUPLANE_IMPORT_MAX_FILES="1")
    refused(box, result, 1, "more than the", "an import may download")


def test_an_archive_within_the_caps_imports(box, https):
    """The caps are not a refusal of everything: the same caps pass an honest archive."""
    members = [*MODEL, *((f"model/assets/f{i}", os.urandom(1000)) for i in range(100))]
    https.routes["/m.tar.gz"] = tar_gz(members)
    box.run(f"{https.url}/m.tar.gz", GPUPLANE_IMPORT_MAX_BYTES=str(200_000), GPUPLANE_IMPORT_MAX_FILES="110").succeeded(
        "imported"
    )
    assert len(list((box.volume / "m" / "1" / "assets").iterdir())) == 100
    box.assert_nothing_left()


# ---- 3. downloads that cannot be downgraded or held open --------------------------------------


def test_an_https_to_http_redirect_is_refused(box, https):
    plain = Server(tls=False)
    try:
        plain.routes["/m.tar.gz"] = tar_gz(MODEL)
        https.routes["/m.tar.gz"] = redirect_to(f"{plain.url}/m.tar.gz")
        refused(box, box.run(f"{https.url}/m.tar.gz"), 1, "redirects to http://", "only https:// redirects")
        assert plain.hits["/m.tar.gz"] == 0
    finally:
        plain.close()


def test_an_https_to_https_redirect_is_followed(box, https):
    https.routes["/old.tar.gz"] = redirect_to(f"{https.url}/new.tar.gz")
    https.routes["/new.tar.gz"] = tar_gz(MODEL)
    box.run(f"{https.url}/old.tar.gz").succeeded("imported")
    box.assert_nothing_left()


def test_an_untrusted_certificate_is_refused_without_retries(box, https):
    https.routes["/m.tar.gz"] = tar_gz(MODEL)
    result = box.run(f"{https.url}/m.tar.gz", SSL_CERT_FILE="/nonexistent")
    refused(box, result, 1, "certificate verify failed")
    assert "retrying" not in result.stdout


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda b: b[:-8], id="no trailer"),
        pytest.param(lambda b: b[:-8] + bytes([b[-8] ^ 0xFF]) + b[-7:], id="bad crc"),
        pytest.param(lambda b: b[:-4] + (len(b) + 7).to_bytes(4, "little"), id="bad length"),
    ],
)
def test_a_gzip_that_is_not_whole_is_refused(box, https, cut):
    body = cut(tar_gz(MODEL))
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:  # what tarfile alone accepts
        assert tar.extractfile("model/saved_model.pb").read() == b"fake graph"  # type: ignore[union-attr]
    https.routes["/m.tar.gz"] = body
    refused(box, box.run(f"{https.url}/m.tar.gz"), 1, "is not a readable tar archive")


@pytest.mark.parametrize("bad", ["xyz", "0" * 63, "0" * 65, "g" * 64, "0" * 62 + " 0"])
def test_a_malformed_sha256_is_bad_input_before_any_download(box, https, bad):
    https.routes["/m.tar.gz"] = tar_gz(MODEL)
    result = box.run(f"{https.url}/m.tar.gz", GPUPLANE_IMPORT_SHA256=bad)
    refused(box, result, 2, "bad input", "GPUPLANE_IMPORT_SHA256", "64 hex characters")
    assert https.hits["/m.tar.gz"] == 0


def test_a_dripping_server_hits_the_deadline(box, https):
    https.routes["/m.tar.gz"] = drip(10_000, 0.1)
    result = box.run(f"{https.url}/m.tar.gz", GPUPLANE_IMPORT_DOWNLOAD_SECONDS="1.5", timeout=30)
    refused(box, result, 1, "did not finish within 1.5 s")
    assert result.seconds < 6


def test_transient_errors_are_retried_with_backoff_and_logged(box, https):
    https.routes["/m.tar.gz"] = failing(2, then=tar_gz(MODEL), with_=status(503))
    https.routes["/n.tar.gz"] = failing(1, then=tar_gz(MODEL), with_=drop_connection)
    result = box.run(f"{https.url}/m.tar.gz")
    result.succeeded("imported")
    retries = [line for line in result.stdout.splitlines() if "retrying" in line]
    assert len(retries) == 2 and "HTTP 503" in retries[0]
    assert "retrying in 0.05 s" in retries[0] and "retrying in 0.1 s" in retries[1]  # doubling back-off
    assert https.hits["/m.tar.gz"] == 3
    box.run(f"{https.url}/n.tar.gz", "n/1").succeeded("imported")
    assert https.hits["/n.tar.gz"] == 2
    box.assert_nothing_left()


@pytest.mark.parametrize(
    ("route", "fragment", "tries"),
    [
        (status(503), "failed after 4 attempts: HTTP 503", 4),
        (truncated(tar_gz(MODEL)), "failed after 4 attempts: connection closed after", 4),
        (status(404), "HTTP 404", 1),
    ],
    ids=["503 forever", "always truncated", "404"],
)
def test_retries_are_bounded_and_permanent_errors_not_retried(box, https, route, fragment, tries):
    https.routes["/m.tar.gz"] = route
    refused(box, box.run(f"{https.url}/m.tar.gz"), 1, fragment)
    assert https.hits["/m.tar.gz"] == tries


# ---- 4. member names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "build", "message"),
    [
        ("m.tar.gz", lambda: tar_gz([*MODEL, ("/etc/evil", b"x")]), "'/etc/evil' has an absolute path"),
        ("m.zip", lambda: zip_bytes([*MODEL, ("/etc/evil", b"x")]), "'/etc/evil' has an absolute path"),
        ("m.tar.gz", lambda: tar_gz([*MODEL, ("model/saved_model.pb", b"other")]), "appears twice"),
        ("m.tar.gz", lambda: tar_gz([*MODEL, ("./model/saved_model.pb", b"other")]), "appears twice"),
        ("m.zip", lambda: zip_bytes([*MODEL, ("model/saved_model.pb", b"other")]), "appears twice"),
        ("m.tar.gz", lambda: tar_gz([*MODEL, ("model/saved_model.pb/x", b"x")]), "collides with another member"),
    ],
    ids=["tar absolute", "zip absolute", "tar duplicate", "tar duplicate ./", "zip duplicate", "file as dir"],
)
def test_absolute_and_duplicate_member_names_are_refused(box, https, name, build, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns about the duplicate it is told to write
        https.routes[f"/{name}"] = build()
    refused(box, box.run(f"{https.url}/{name}"), 1, message)


# ---- 5. concurrent and interrupted imports ----------------------------------------------------


def staging_for(box: Sandbox, name: str) -> str:
    """Each pod has its own emptyDir: so does each concurrent run here."""
    path = box.base / name
    path.mkdir(mode=0o755)
    if os.geteuid() == 0:
        os.chown(path, UID, UID)
    return str(path)


def test_two_concurrent_imports_leave_one_intact_version(box, https):
    files = {f"model/variables/part-{i:03}": os.urandom(4096) for i in range(300)}
    https.routes["/m.tar.gz"] = tar_gz([*MODEL, *files.items()])
    for round_ in range(3):
        dest = f"m/{round_ + 1}"
        runs = [box.start(f"{https.url}/m.tar.gz", dest, GPUPLANE_IMPORT_STAGING=staging_for(box, f"s{round_}{i}"))
                for i in range(2)]  # fmt: skip
        outputs = [run.communicate(timeout=60) for run in runs]
        assert [run.returncode for run in runs] == [0, 0], outputs
        assert all(err == "" for _, err in outputs), outputs
        imported = [out for out, _ in outputs if "imported https://" in out]
        already = [out for out, _ in outputs if "already imported" in out]
        assert len(imported) == 1 and len(already) == 1, outputs
        installed = box.volume / dest
        assert (installed / "saved_model.pb").read_bytes() == b"fake graph"
        for name, data in files.items():
            assert (installed / name.removeprefix("model/")).read_bytes() == data
    box.assert_nothing_left()
    assert all(not any((box.base / f"s{r}{i}").iterdir()) for r in range(3) for i in range(2))
    assert sorted(p.name for p in (box.volume / "m").iterdir()) == ["1", "2", "3"]


def test_an_import_waiting_on_a_running_one_exits_0_when_that_one_finishes(box, https):
    https.routes["/m.tar.gz"] = tar_gz(MODEL)
    (box.volume / "m").mkdir()
    if os.geteuid() == 0:
        os.chown(box.volume / "m", UID, UID)
    lock = box.volume / "m" / ".1.import-lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    os.chmod(lock, 0o666)
    fcntl.lockf(fd, fcntl.LOCK_EX)  # "the first Job" holds the install
    waiter = box.start(f"{https.url}/m.tar.gz")
    killer = threading.Timer(30, waiter.kill)
    killer.start()
    try:
        assert waiter.stdout is not None
        while "waiting for another import" not in (line := waiter.stdout.readline()):
            assert line, "the import ended without waiting for the lock"
        # The first import finishes: its version appears whole, then it lets go of the lock.
        first = box.volume / "m" / "1"
        first.mkdir()
        (first / "saved_model.pb").write_bytes(b"first")
        os.unlink(lock)
        os.close(fd)
        out, err = waiter.communicate(timeout=30)
    finally:
        killer.cancel()
    assert waiter.returncode == 0 and err == "", err
    assert "already imported (by another run meanwhile)" in out
    assert (first / "saved_model.pb").read_bytes() == b"first"
    box.assert_nothing_left()


def test_partial_directories_of_killed_runs_are_removed_and_only_those(box, https):
    https.routes["/m.tar.gz"] = tar_gz(MODEL)
    parent = box.volume / "m"
    dead = parent / ".1.partial-k1ll3d"
    (dead / "a" / "b").mkdir(parents=True)
    (dead / "a" / "b" / "variables.data").write_bytes(b"half")
    (dead / "loop").symlink_to(".")  # what the old copy left after a symlink loop
    (parent / ".1.partial-f1le").write_bytes(b"")
    others = [parent / ".2.partial-other", parent / ".1.partialnot", parent / "notes.1.partial-x"]
    others[0].mkdir()
    others[1].write_bytes(b"")
    others[2].write_bytes(b"")
    if os.geteuid() == 0:
        for root, dirs, names in os.walk(parent):
            for name in [".", *dirs, *names]:
                os.chown(os.path.join(root, name), UID, UID, follow_symlinks=False)
    result = box.run(f"{https.url}/m.tar.gz")
    result.succeeded("imported")
    assert result.stdout.count("left by an interrupted import") == 2
    assert sorted(p.name for p in parent.iterdir()) == sorted(["1", *(p.name for p in others)])
    assert (parent / "1" / "saved_model.pb").read_bytes() == b"fake graph"


def test_sigterm_mid_download_ends_with_one_line_and_nothing_left(box, https):
    https.routes["/m.tar.gz"] = drip(10_000, 0.05)
    run = box.start(f"{https.url}/m.tar.gz")
    deadline = time.monotonic() + 20
    while https.hits["/m.tar.gz"] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # some bytes are in the staging file now
    run.terminate()
    out, err = run.communicate(timeout=20)
    assert run.returncode == 1, (out, err)
    assert err.strip().splitlines() == ["gpuplane-import: stopped by SIGTERM (the pod was deleted or ran out of time)"]
    box.assert_nothing_left()


def test_a_failure_past_the_lock_removes_the_partial_copy_and_the_lock(box):
    """A cap hit while copying onto the volume (an s3 prefix has no archive to check first)."""
    tree = box.staging / "s3"
    tree.mkdir()
    (tree / "saved_model.pb").write_bytes(b"g")
    for i in range(20):
        (tree / f"f{i:02}").write_bytes(b"x" * 100)
    if os.geteuid() == 0:
        for path in [tree, *tree.iterdir()]:
            os.chown(path, UID, UID)
    result = box.run("s3://bucket/prefix/", GPUPLANE_IMPORT_MAX_FILES="10")
    result.failed(1, "the import holds more than 10 files and directories")
    assert sorted(p.name for p in (box.volume / "m").iterdir()) == []
    box.assert_nothing_left("s3")
