#!/usr/bin/env python3
"""gpuplane import: put a SavedModel (or a data set) on a shared volume, once.

Runs in the pinned python slim image of the import Job (standard library only: no installs at run time).
The archive is untrusted input: whoever controls the URL chooses its bytes, and the volume it lands on is
mounted by every serving pod. So only the archive's own regular files and directories ever reach the
volume (links, devices, absolute or `..` paths and duplicate names are refused), nothing is copied by
following a link, and unpacking stops at the byte, member-count and expansion-ratio caps while it runs.

Inputs, all from the environment:
  GPUPLANE_IMPORT_SOURCE   https://.../x.tar.gz|.tgz|.zip, or s3://bucket/key-or-prefix/ (already copied
                           into GPUPLANE_IMPORT_STAGING by the aws-cli init container)
  GPUPLANE_IMPORT_DEST     the version directory to create, e.g. /data/resnet/1
  GPUPLANE_IMPORT_STAGING  scratch directory (an emptyDir); default /tmp/import
  GPUPLANE_IMPORT_SHA256   optional SHA-256 of the archive (64 hex characters), verified before unpacking
  GPUPLANE_IMPORT_KIND     `model` (default: the result must hold saved_model.pb) or `data`
  GPUPLANE_IMPORT_MAX_BYTES, _MAX_FILES, _MAX_RATIO   the caps (import.maxUnpackedSize, .maxFiles,
                           .maxExpansionRatio); defaults below
  GPUPLANE_IMPORT_DOWNLOAD_SECONDS   the whole download (every attempt and wait) must end within this
  GPUPLANE_IMPORT_RETRY_DELAY_SECONDS  first back-off between attempts (doubles each time); default 2
Idempotent: a destination that already holds the result is left alone (exit 0). The result appears
atomically (copied beside it under a lock, then renamed), so a killed import never leaves a half model
that TF Serving would load, and the next run removes what a killed one left. Exit 0 on success
(including "already imported"), 1 on a failed import, 2 on bad input; one line on stderr, never a
traceback.
"""

from __future__ import annotations

import errno
import fcntl
import gzip
import hashlib
import http.client
import os
import re
import shutil
import signal
import ssl
import stat
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import FrameType
from typing import IO, NoReturn

MARKER = ".gpuplane-import-complete"
CHUNK = 1 << 20
MIB = 1 << 20
# Defaults of the caps; model_import.py renders the same numbers (a test holds them equal).
DEFAULT_MAX_BYTES = 10 << 30
DEFAULT_MAX_FILES = 100_000
DEFAULT_MAX_RATIO = 100
# A tiny archive may expand past the ratio up to this much: a few highly compressible files are no bomb.
RATIO_FLOOR = MIB
# The archive itself may exceed the unpacked cap by its per-member headers (tar: 512 B plus padding).
ENTRY_OVERHEAD = 1024
ARCHIVE_SLACK = MIB
DEFAULT_DOWNLOAD_SECONDS = 1350
DEFAULT_RETRY_DELAY = 2.0
ATTEMPTS = 4
READ_TIMEOUT = 30
TRANSIENT_HTTP = frozenset({408, 429, 500, 502, 503, 504})
LOCK_TRIES = 100


class ImportError_(Exception):
    """A failed import: the message is the whole story for the Job's log."""


class BadInput(ValueError):
    """The Job's inputs are wrong: retrying cannot help (exit 2, the Job fails at once)."""


class _Transient(Exception):
    """A download failure worth another attempt (5xx, a dropped or timed-out connection)."""


def log(message: str) -> None:
    """Progress on stdout; stderr is kept for the one line that says why an import failed."""
    print(f"gpuplane-import: {message}", flush=True)


def one_line(text: object) -> str:
    """An exception's text on one line (the Job's failure message is read as a single line)."""
    return " ".join(str(text).split())


@dataclass(frozen=True)
class Limits:
    """The caps an archive must stay under, checked while it is unpacked and again while it is copied."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_files: int = DEFAULT_MAX_FILES
    max_ratio: int = DEFAULT_MAX_RATIO

    @property
    def archive_bytes(self) -> int:
        """The largest archive worth downloading: its contents plus per-member headers."""
        return archive_cap(self.max_bytes, self.max_files)


def archive_cap(max_bytes: int, max_files: int) -> int:
    """The download cap for given unpacked caps (model_import.py sizes the staging volume with it)."""
    return max_bytes + max_files * ENTRY_OVERHEAD + ARCHIVE_SLACK


class Budget:
    """Counts members and bytes as they are written and refuses the first one past a cap."""

    def __init__(self, limits: Limits, what: str, archive_size: int | None = None) -> None:
        self.limits = limits
        self.what = what
        self.files = 0
        self.bytes = 0
        self.cap = limits.max_bytes
        self.by_ratio = False
        if archive_size is not None:
            by_ratio = max(limits.max_ratio * archive_size, RATIO_FLOOR)
            if by_ratio < self.cap:
                self.cap, self.by_ratio = by_ratio, True
        self.archive_size = archive_size

    def member(self, name: str) -> None:
        """One more file or directory."""
        self.files += 1
        if self.files > self.limits.max_files:
            self.too_many(name)

    def too_many(self, name: str) -> NoReturn:
        """Refuse: `name` is the first member past the count cap."""
        raise ImportError_(
            f"{self.what} holds more than {self.limits.max_files} files and directories "
            f"(import.maxFiles); refused at {name!r}"
        )

    def add(self, size: int, name: str) -> None:
        """`size` more bytes (declared, or just written)."""
        self.bytes += size
        if self.bytes > self.cap:
            self._over(name)

    def fits(self, size: int, name: str) -> None:
        """Refuse a member whose declared size alone would pass the cap, before writing any of it."""
        if self.bytes + size > self.cap:
            self._over(name)

    def _over(self, name: str) -> NoReturn:
        if self.by_ratio:
            raise ImportError_(
                f"{self.what} expands more than {self.limits.max_ratio} times its {self.archive_size} bytes "
                f"(import.maxExpansionRatio): a decompression bomb; refused at {name!r}"
            )
        raise ImportError_(
            f"{self.what} unpacks to more than {self.limits.max_bytes} bytes (import.maxUnpackedSize); "
            f"refused at {name!r}"
        )


def check_scheme(source: str) -> str:
    """`https` or `s3`; anything else (plain http included) is bad input."""
    for scheme in ("https", "s3"):
        if source.startswith(f"{scheme}://"):
            return scheme
    raise BadInput(f"source {source!r} must start with https:// or s3://")


def archive_kind(name: str) -> str:
    """`tar` (tar.gz/tgz), `zip`, or BadInput."""
    lower = name.lower().split("?", 1)[0]
    if lower.endswith((".tar.gz", ".tgz")):
        return "tar"
    if lower.endswith(".zip"):
        return "zip"
    raise BadInput(f"{name!r} is not a .tar.gz, .tgz or .zip archive")


def is_regular(path: Path) -> bool:
    """A regular file at `path` itself (a link to one does not count)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def complete(dest: Path, kind: str) -> bool:
    """The destination already holds a finished import."""
    return is_regular(dest / ("saved_model.pb" if kind == "model" else MARKER))


# ---- download -------------------------------------------------------------------------------------


class HttpsOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to https://: a downgrade to http would import bytes anyone on the path chose."""

    def redirect_request(  # noqa: PLR0917 (urllib's signature)
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        """Refuse any target but https (urllib has made `newurl` absolute by now)."""
        if not newurl.lower().startswith("https://"):
            fp.close()
            raise ImportError_(f"{req.full_url} redirects to {newurl}: only https:// redirects are followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    """Bound everything inside (connects, reads, back-off waits) by one wall-clock deadline.

    A per-read socket timeout cannot stop a server that sends a byte every few seconds; an interval timer
    interrupts whatever call is blocked when the time is up.
    """

    def expired(signum: int, frame: FrameType | None) -> NoReturn:
        raise ImportError_(f"{what} did not finish within {seconds:g} s; refused (a stalled or dripping server)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def fetch_once(opener: urllib.request.OpenerDirector, url: str, target: Path, cap: int) -> str:
    """One attempt: stream `url` to `target`, at most `cap` bytes; return its SHA-256."""
    digest = hashlib.sha256()
    request = urllib.request.Request(url, headers={"User-Agent": "gpuplane-import"})
    try:
        with opener.open(request, timeout=READ_TIMEOUT) as response, target.open("wb") as out:
            length_text = response.headers.get("Content-Length")
            length = int(length_text) if length_text and length_text.isdigit() else None
            if length is not None and length > cap:
                raise ImportError_(f"{url} is {length} bytes, more than the {cap} an import may download")
            got = 0
            while chunk := response.read1(CHUNK):
                got += len(chunk)
                if got > cap:
                    raise ImportError_(f"{url} sends more than the {cap} bytes an import may download")
                digest.update(chunk)
                out.write(chunk)
            if length is not None and got != length:
                raise _Transient(f"connection closed after {got} of {length} bytes")
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code in TRANSIENT_HTTP:
            raise _Transient(f"HTTP {exc.code} {exc.reason}") from exc
        raise ImportError_(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise ImportError_(f"download of {url} failed: {one_line(reason)}") from exc
        if isinstance(reason, OSError):
            raise _Transient(one_line(reason)) from exc
        raise ImportError_(f"download of {url} failed: {one_line(reason)}") from exc
    except ssl.SSLCertVerificationError as exc:
        raise ImportError_(f"download of {url} failed: {one_line(exc)}") from exc
    except (ConnectionError, TimeoutError, ssl.SSLError, http.client.IncompleteRead) as exc:
        raise _Transient(one_line(exc) or type(exc).__name__) from exc
    except (OSError, http.client.HTTPException) as exc:
        raise ImportError_(f"download of {url} failed: {one_line(exc) or type(exc).__name__}") from exc
    return digest.hexdigest()


def download(url: str, target: Path, cap: int, seconds: float, delay: float) -> str:
    """Fetch `url` (https only, redirects too) within `seconds`, retrying transient failures; its SHA-256."""
    opener = urllib.request.build_opener(
        HttpsOnlyRedirects(), urllib.request.HTTPSHandler(context=ssl.create_default_context())
    )
    log(f"downloading {url}")
    with deadline(seconds, f"the download of {url}"):
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return fetch_once(opener, url, target, cap)
            except _Transient as exc:
                if attempt == ATTEMPTS:
                    raise ImportError_(f"download of {url} failed after {ATTEMPTS} attempts: {exc}") from exc
                wait = delay * 2 ** (attempt - 1)
                log(f"download attempt {attempt} of {ATTEMPTS} failed ({exc}); retrying in {wait:g} s")
                time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks (archives can be large)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# ---- unpacking ------------------------------------------------------------------------------------


def member_path(name: str) -> PurePosixPath | None:
    """The member's path inside the archive; None for the archive's own top (`.`, `./`)."""
    if name.startswith("/"):
        raise ImportError_(f"archive member {name!r} has an absolute path; refused")
    parts = PurePosixPath(name).parts
    if ".." in parts:
        raise ImportError_(f"archive member {name!r} climbs out of the archive with '..'; refused")
    return PurePosixPath(*parts) if parts else None


class Extractor:
    """Writes members into the staging tree: regular files and directories, each name once, nothing else.

    No link is ever created, so no path under `into` can lead outside it; files are opened with
    O_EXCL|O_NOFOLLOW regardless. Every byte written is counted against the caps as it is written, and
    every directory created counts as a member, also one only implied by a deeper member's path (or a
    zip of deep paths would fill the node's inodes while its member count looked small).
    """

    def __init__(self, into: Path, budget: Budget) -> None:
        self.into = into
        self.budget = budget
        self.seen: set[str] = set()  # member names, normalized
        self.made: set[str] = set()  # directories created, explicit or implied

    def _claim(self, name: str) -> PurePosixPath | None:
        rel = member_path(name)
        if rel is None:
            self.budget.member(name)  # the archive's top (`./`): nothing to write, still counted
            return None
        key = rel.as_posix()
        if key in self.seen:
            raise ImportError_(f"archive member {name!r} appears twice; refused (which copy wins is arbitrary)")
        self.seen.add(key)
        if key not in self.made:  # an implied directory was counted when it was made
            self.budget.member(name)
        return rel

    def directory(self, name: str) -> None:
        """A directory member."""
        rel = self._claim(name)
        if rel is not None:
            self._mkdirs(rel, name)

    def file(self, name: str, size: int, data: IO[bytes], executable: bool) -> None:
        """A regular file member of declared `size`, read from `data` (archive errors propagate)."""
        rel = self._claim(name)
        if rel is None:
            raise ImportError_(f"archive member {name!r} is a file in place of the archive's top directory")
        self.budget.fits(size, name)
        self._mkdirs(rel.parent, name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.into / rel, flags, 0o755 if executable else 0o644)
        except (FileExistsError, IsADirectoryError, NotADirectoryError) as exc:
            raise ImportError_(f"archive member {name!r} collides with another member; refused") from exc
        except OSError as exc:
            raise ImportError_(f"cannot write archive member {name!r}: {one_line(exc)}") from exc
        try:
            while chunk := data.read(CHUNK):
                self.budget.add(len(chunk), name)
                write_all(fd, chunk, name)
        finally:
            os.close(fd)

    def _mkdirs(self, rel: PurePosixPath, name: str) -> None:
        """`rel` and its parents, each new one counted (an explicit member was counted by `_claim`)."""
        for depth in range(1, len(rel.parts) + 1):
            key = "/".join(rel.parts[:depth])
            if key in self.made:
                continue
            if key not in self.seen:
                self.budget.member(name)
            try:
                (self.into / key).mkdir(mode=0o755)
            except (FileExistsError, NotADirectoryError) as exc:
                raise ImportError_(f"archive member {name!r} collides with another member; refused") from exc
            except OSError as exc:
                raise ImportError_(f"cannot write archive member {name!r}: {one_line(exc)}") from exc
            self.made.add(key)


def write_all(fd: int, chunk: bytes, name: str) -> None:
    """os.write until all of `chunk` is out; a full disk is the import's failure, named."""
    view = memoryview(chunk)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        raise ImportError_(f"cannot write {name!r}: {one_line(exc)}") from exc


def unpack_tar(archive: Path, ex: Extractor) -> None:
    """A gzip'd tar, read as one stream; then the rest of the gzip (its CRC and length trailer) is checked."""
    with archive.open("rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
        with tarfile.open(fileobj=gz, mode="r|") as tar:
            while (member := tar.next()) is not None:
                # Stream mode keeps every header it read; with 10^6 members that is most of the pod's memory.
                tar.members.clear()  # type: ignore[attr-defined]
                if member.isdir():
                    ex.directory(member.name)
                elif member.isreg() and not member.issparse():
                    data = tar.extractfile(member)
                    assert data is not None
                    ex.file(member.name, member.size, data, bool(member.mode & 0o100))
                else:
                    what = (
                        "a symbolic link"
                        if member.issym()
                        else "a hard link"
                        if member.islnk()
                        else "a sparse file"
                        if member.isreg()
                        else "a device or FIFO"
                    )
                    raise ImportError_(
                        f"archive member {member.name!r} is {what}: an archive may hold only regular files "
                        "and directories"
                    )
        # Past the tar's end: read the gzip to its end, so a truncated or corrupted stream is refused.
        while chunk := gz.read(CHUNK):
            ex.budget.add(len(chunk), "(data after the end of the tar)")


def unpack_zip(archive: Path, ex: Extractor) -> None:
    """A zip: counts and declared sizes checked from the central directory first, then each CRC on reading."""
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        if len(infos) > ex.budget.limits.max_files:
            ex.budget.too_many(infos[ex.budget.limits.max_files].filename)
        ex.budget.fits(sum(i.file_size for i in infos), "(the sizes the zip declares)")
        for info in infos:
            mode = info.external_attr >> 16
            if info.flag_bits & 0x1:
                raise ImportError_(f"archive member {info.filename!r} is encrypted; refused")
            if info.is_dir() or stat.S_ISDIR(mode):
                ex.directory(info.filename)
            elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: no type recorded (many zip writers)
                what = "a symbolic link" if stat.S_ISLNK(mode) else "a device or FIFO"
                raise ImportError_(
                    f"archive member {info.filename!r} is {what}: an archive may hold only regular files "
                    "and directories"
                )
            else:
                with zf.open(info) as data:
                    ex.file(info.filename, info.file_size, data, bool(mode & 0o100))


def unpack(archive: Path, kind: str, into: Path, source: str, limits: Limits) -> None:
    """Unpack `archive` into `into` under the caps; any unreadable or corrupt archive is refused."""
    budget = Budget(limits, "the archive", archive.stat().st_size)
    ex = Extractor(into, budget)
    try:
        if kind == "tar":
            unpack_tar(archive, ex)
        else:
            unpack_zip(archive, ex)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, OSError, NotImplementedError) as exc:
        raise ImportError_(f"{source} is not a readable {kind} archive: {one_line(exc)}") from exc
    log(f"unpacked {budget.files} files and directories, {budget.bytes} bytes")


def find_root(tree: Path, kind: str) -> Path:
    """The directory to install: the one holding saved_model.pb (at the top or one level down)."""
    if kind == "data":
        entries = list(tree.iterdir())
        single = len(entries) == 1 and stat.S_ISDIR(os.lstat(entries[0]).st_mode)
        return entries[0] if single else tree
    tops = [tree, *sorted(p for p in tree.iterdir() if stat.S_ISDIR(os.lstat(p).st_mode))]
    found = [p for p in tops if is_regular(p / "saved_model.pb")]
    if not found:
        raise ImportError_("no saved_model.pb at the top of the archive or one directory down: not a SavedModel")
    if len(found) > 1:
        raise ImportError_(f"several SavedModels in the archive ({[str(p.relative_to(tree)) for p in found]})")
    return found[0]


# ---- install --------------------------------------------------------------------------------------


def copy_tree(src: Path, dst: Path, budget: Budget) -> None:
    """Copy regular files and directories only, never through a link, counting every byte copied.

    The caps hold for what is really copied, whatever the archive's headers said (and for an s3 prefix,
    which has no archive, this is the only place they are checked).
    """
    pending = [(src, dst)]
    while pending:
        here, there = pending.pop()
        with os.scandir(here) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            rel = os.path.relpath(entry.path, src)
            budget.member(rel)
            mode = entry.stat(follow_symlinks=False).st_mode
            target = there / entry.name
            if stat.S_ISDIR(mode):
                target.mkdir(mode=0o755)
                pending.append((Path(entry.path), target))
            elif stat.S_ISREG(mode):
                copy_file(Path(entry.path), target, rel, budget)
            else:
                raise ImportError_(f"{rel!r} is a link or special file: only regular files and directories are copied")


def copy_file(src: Path, dst: Path, rel: str, budget: Budget) -> None:
    """One regular file; O_NOFOLLOW on both ends, so a link swapped in meanwhile is refused, not followed."""
    try:
        fd_in = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise ImportError_(f"cannot read {rel!r}: {one_line(exc)}") from exc
    try:
        mode = os.fstat(fd_in).st_mode
        if not stat.S_ISREG(mode):
            raise ImportError_(f"{rel!r} is not a regular file: only regular files and directories are copied")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd_out = os.open(dst, flags, 0o755 if mode & stat.S_IXUSR else 0o644)
        try:
            while chunk := os.read(fd_in, CHUNK):
                budget.add(len(chunk), rel)
                write_all(fd_out, chunk, rel)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


@contextmanager
def install_lock(dest: Path) -> Iterator[None]:
    """Hold `.<version>.import-lock` beside the destination while installing; remove it afterwards.

    Two imports of one destination (a re-run while the first Job still runs) take turns here, so the
    second finds the first's result, and a `.partial-` directory seen under the lock is certainly a dead
    run's. POSIX record locks (lockf) work on EFS (NFSv4.1 advisory locks; awsdocs/amazon-efs-user-guide
    `limits.md`: "All locks in Amazon EFS are advisory"). The lock file is unlinked while held; a waiter that
    then gets the lock on the unlinked file sees that it is no longer the one at the path and tries again.
    """
    path = dest.parent / f".{dest.name}.import-lock"
    for _ in range(LOCK_TRIES):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise ImportError_(f"cannot create the lock {path}: {one_line(exc)}") from exc
        try:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EACCES, errno.EAGAIN):
                    raise
                log(f"waiting for another import of {dest} to finish")
                fcntl.lockf(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            try:
                now = os.stat(path, follow_symlinks=False)
                same = (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)
            except FileNotFoundError:
                same = False
        except OSError as exc:
            os.close(fd)
            if exc.errno == errno.ESTALE:  # NFS: the file was removed under us; take the new one
                continue
            raise ImportError_(f"cannot lock {path}: {one_line(exc)}") from exc
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)
    else:
        raise ImportError_(f"could not lock {path} in {LOCK_TRIES} tries")
    try:
        yield
    finally:
        with suppress(OSError):  # gone already (removed by hand): the import's outcome stands
            os.unlink(path)
        os.close(fd)


def remove_leftovers(dest: Path) -> None:
    """Remove `.<version>.partial-*` of earlier, killed runs (called under the lock: none is alive)."""
    prefix = f".{dest.name}.partial-"
    for entry in os.scandir(dest.parent):
        if not entry.name.startswith(prefix):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError as exc:
            raise ImportError_(f"cannot remove {entry.path}, left by an interrupted import: {one_line(exc)}") from exc
        log(f"removed {entry.path}, left by an interrupted import")


def install(root: Path, dest: Path, kind: str, source: str, limits: Limits) -> str:
    """Copy `root` beside `dest`, check it, rename it into place: the destination appears whole or not at all."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ImportError_(f"cannot create {dest.parent}: {one_line(exc)}") from exc
    with install_lock(dest):
        if complete(dest, kind):
            return f"{dest} is already imported (by another run meanwhile); nothing to do"
        if os.path.lexists(dest):
            raise ImportError_(f"{dest} exists but holds no finished import; remove it to import again")
        remove_leftovers(dest)
        partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
        try:
            try:
                copy_tree(root, partial, Budget(limits, "the import"))
            except OSError as exc:
                raise ImportError_(f"cannot copy the import into {partial}: {one_line(exc)}") from exc
            if kind == "model" and not is_regular(partial / "saved_model.pb"):
                raise ImportError_("the copied tree holds no regular saved_model.pb; refused")
            if kind == "data":
                (partial / MARKER).write_text(source + "\n", encoding="utf-8")
            partial.chmod(0o755)
            try:
                os.rename(partial, dest)
            except OSError as exc:
                if exc.errno in (errno.EEXIST, errno.ENOTEMPTY) and complete(dest, kind):
                    shutil.rmtree(partial, ignore_errors=True)
                    return f"{dest} is already imported (by another run meanwhile); nothing to do"
                raise ImportError_(f"cannot move the import into {dest}: {one_line(exc)}") from exc
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
    return f"imported {source} into {dest}"


# ---- the run --------------------------------------------------------------------------------------


def _number(env: dict[str, str], key: str, default: float, kind: type[int] | type[float] = int) -> float:
    text = env.get(key, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise BadInput(f"{key} {text!r} is not a number") from None
    if not 0 < value < float("inf"):
        raise BadInput(f"{key} {text!r} must be a finite number above zero")
    return value


def limits_from(env: dict[str, str]) -> Limits:
    """The caps the Job passed (the defaults when run by hand)."""
    return Limits(
        max_bytes=int(_number(env, "GPUPLANE_IMPORT_MAX_BYTES", DEFAULT_MAX_BYTES)),
        max_files=int(_number(env, "GPUPLANE_IMPORT_MAX_FILES", DEFAULT_MAX_FILES)),
        max_ratio=int(_number(env, "GPUPLANE_IMPORT_MAX_RATIO", DEFAULT_MAX_RATIO)),
    )


def run(env: dict[str, str]) -> str:
    """Do the import described by `env`; return what happened. BadInput: bad input; ImportError_: failed."""
    source = env.get("GPUPLANE_IMPORT_SOURCE", "")
    dest_text = env.get("GPUPLANE_IMPORT_DEST", "")
    kind = env.get("GPUPLANE_IMPORT_KIND", "model")
    expected = env.get("GPUPLANE_IMPORT_SHA256", "").strip().lower()
    staging = Path(env.get("GPUPLANE_IMPORT_STAGING", "/tmp/import"))
    if kind not in ("model", "data"):
        raise BadInput(f"GPUPLANE_IMPORT_KIND {kind!r} must be model or data")
    if not dest_text.startswith("/"):
        raise BadInput(f"GPUPLANE_IMPORT_DEST {dest_text!r} must be an absolute path")
    if expected and not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise BadInput(f"GPUPLANE_IMPORT_SHA256 {expected!r} is not a SHA-256 (64 hex characters)")
    scheme = check_scheme(source)
    limits = limits_from(env)
    seconds = _number(env, "GPUPLANE_IMPORT_DOWNLOAD_SECONDS", DEFAULT_DOWNLOAD_SECONDS, float)
    delay = _number(env, "GPUPLANE_IMPORT_RETRY_DELAY_SECONDS", DEFAULT_RETRY_DELAY, float)
    if scheme == "s3" and source.endswith("/") and expected:
        raise BadInput("GPUPLANE_IMPORT_SHA256 checks one archive; an s3 prefix is a directory")
    akind = None if scheme == "s3" and source.endswith("/") else archive_kind(source)
    dest = Path(dest_text)
    if complete(dest, kind):
        return f"{dest} is already imported; nothing to do"
    if os.path.lexists(dest):
        raise ImportError_(f"{dest} exists but holds no finished import; remove it to import again")
    try:
        staging.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ImportError_(f"cannot create the staging directory {staging}: {one_line(exc)}") from exc
    made: list[Path] = []  # what this run put in staging, removed at the end
    try:
        if akind is None:
            tree = staging / "s3"
            if not tree.is_dir():
                raise ImportError_(f"the s3 copy step left no {tree}")
        else:
            if scheme == "s3":
                fetched = staging / "s3"
                files = sorted(p for p in fetched.rglob("*") if is_regular(p)) if fetched.is_dir() else []
                if len(files) != 1:
                    raise ImportError_(f"the s3 copy step left {len(files)} files in {fetched}; expected one archive")
                archive = files[0]
                digest = sha256_of(archive)
            else:
                archive = staging / ("download.zip" if akind == "zip" else "download.tar.gz")
                made.append(archive)
                digest = download(source, archive, limits.archive_bytes, seconds, delay)
            if expected and digest != expected:
                raise ImportError_(f"checksum mismatch for {source}: expected sha256 {expected}, got {digest}")
            tree = staging / "unpacked"
            shutil.rmtree(tree, ignore_errors=True)
            made.append(tree)
            tree.mkdir()
            unpack(archive, akind, tree, source, limits)
        root = find_root(tree, kind)
        return install(root, dest, kind, source, limits)
    finally:
        for path in made:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _stopped(signum: int, frame: FrameType | None) -> NoReturn:
    """SIGTERM (pod deleted, Job deadline): unwind, so the partial copy is removed, and say so."""
    signal.signal(signum, signal.SIG_IGN)
    raise ImportError_(f"stopped by {signal.Signals(signum).name} (the pod was deleted or ran out of time)")


def main() -> int:
    """Entry point: exit 0 done, 1 failed, 2 bad input; one line on stderr, never a traceback."""
    signal.signal(signal.SIGTERM, _stopped)
    try:
        print(run(dict(os.environ)), flush=True)
    except BadInput as exc:
        print(f"gpuplane-import: bad input: {one_line(exc)}", file=sys.stderr, flush=True)
        return 2
    except ImportError_ as exc:
        print(f"gpuplane-import: {one_line(exc)}", file=sys.stderr, flush=True)
        return 1
    except Exception as exc:  # a bug of ours or an error we did not foresee: still one line, no traceback
        print(f"gpuplane-import: failed: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
