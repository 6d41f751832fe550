#!/usr/bin/env python3
"""gpuplane import: put a SavedModel (or a data set) on a shared volume, once.

Runs in the pinned python slim image of the import Job (standard library only: no installs at run time).
Inputs, all from the environment:
  GPUPLANE_IMPORT_SOURCE   https://.../x.tar.gz|.tgz|.zip, or s3://bucket/key-or-prefix/ (already copied
                           into GPUPLANE_IMPORT_STAGING by the aws-cli init container)
  GPUPLANE_IMPORT_DEST     the version directory to create, e.g. /data/resnet/1
  GPUPLANE_IMPORT_STAGING  scratch directory (an emptyDir); default /tmp/import
  GPUPLANE_IMPORT_SHA256   optional hex SHA-256 of the archive, verified before anything is unpacked
  GPUPLANE_IMPORT_KIND     `model` (default: the result must hold saved_model.pb) or `data`
  GPUPLANE_IMPORT_ALLOW_HTTP  tests only: accept http:// (a local test server has no certificate)
Idempotent: a destination that already holds the result is left alone (exit 0). The result appears
atomically (unpacked beside it, then renamed), so a killed import never leaves a half model that TF
Serving would load. Exit 0 on success, 1 on a failed import, 2 on bad input.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

MARKER = ".gpuplane-import-complete"
CHUNK = 1 << 20


class ImportError_(Exception):
    """A failed import: the message is the whole story for the Job's log."""


def check_scheme(source: str, allow_http: bool = False) -> str:
    """`https` or `s3` (or `http` when a test allows it); anything else is bad input."""
    for scheme in ("https", "s3") + (("http",) if allow_http else ()):
        if source.startswith(f"{scheme}://"):
            return scheme
    raise ValueError(f"source {source!r} must start with https:// or s3://")


def archive_kind(name: str) -> str:
    """`tar` (tar.gz/tgz), `zip`, or ValueError."""
    lower = name.lower().split("?", 1)[0]
    if lower.endswith((".tar.gz", ".tgz")):
        return "tar"
    if lower.endswith(".zip"):
        return "zip"
    raise ValueError(f"{name!r} is not a .tar.gz, .tgz or .zip archive")


def complete(dest: Path, kind: str) -> bool:
    """The destination already holds a finished import."""
    if kind == "model":
        return (dest / "saved_model.pb").is_file()
    return (dest / MARKER).is_file()


def download(url: str, target: Path) -> str:
    """Stream `url` to `target`; return its SHA-256."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=60) as response, target.open("wb") as out:
            while chunk := response.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
    except OSError as exc:
        raise ImportError_(f"download of {url} failed: {exc}") from exc
    return digest.hexdigest()


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks (archives can be large)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def unpack(archive: Path, kind: str, into: Path) -> None:
    """Unpack safely: no absolute paths, no `..`, no links out of the tree, no devices."""
    try:
        if kind == "tar":
            with tarfile.open(archive, "r:gz") as tar:
                tar.extractall(into, filter="data")
        else:
            with zipfile.ZipFile(archive) as zf:
                for member in zf.namelist():
                    parts = PurePosixPath(member).parts
                    if member.startswith("/") or ".." in parts:
                        raise ImportError_(f"archive member {member!r} points outside the archive")
                zf.extractall(into)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ImportError_(f"{archive.name} is not a readable {kind} archive: {exc}") from exc


def find_root(tree: Path, kind: str) -> Path:
    """The directory to install: the one holding saved_model.pb (at the top or one level down)."""
    if kind == "data":
        entries = [p for p in tree.iterdir()]
        return entries[0] if len(entries) == 1 and entries[0].is_dir() else tree
    found = sorted(p.parent for p in tree.glob("saved_model.pb")) + sorted(
        p.parent for p in tree.glob("*/saved_model.pb")
    )
    if not found:
        raise ImportError_("no saved_model.pb at the top of the archive or one directory down: not a SavedModel")
    if len(found) > 1:
        raise ImportError_(f"several SavedModels in the archive ({[str(p.relative_to(tree)) for p in found]})")
    return found[0]


def run(env: dict[str, str]) -> str:
    """Do the import described by `env`; return what happened. ValueError: bad input; ImportError_: failed."""
    source = env.get("GPUPLANE_IMPORT_SOURCE", "")
    dest_text = env.get("GPUPLANE_IMPORT_DEST", "")
    kind = env.get("GPUPLANE_IMPORT_KIND", "model")
    expected = env.get("GPUPLANE_IMPORT_SHA256", "").strip().lower()
    staging = Path(env.get("GPUPLANE_IMPORT_STAGING", "/tmp/import"))
    if kind not in ("model", "data"):
        raise ValueError(f"GPUPLANE_IMPORT_KIND {kind!r} must be model or data")
    if not dest_text.startswith("/"):
        raise ValueError(f"GPUPLANE_IMPORT_DEST {dest_text!r} must be an absolute path")
    scheme = check_scheme(source, env.get("GPUPLANE_IMPORT_ALLOW_HTTP") == "true")
    dest = Path(dest_text)
    if complete(dest, kind):
        return f"{dest} is already imported; nothing to do"
    if dest.exists():
        raise ImportError_(f"{dest} exists but holds no finished import; remove it to import again")
    staging.mkdir(parents=True, exist_ok=True)
    if scheme == "s3":
        fetched = staging / "s3"
        files = sorted(p for p in fetched.rglob("*") if p.is_file()) if fetched.is_dir() else []
        if source.endswith("/"):
            if expected:
                raise ValueError("GPUPLANE_IMPORT_SHA256 checks one archive; an s3 prefix is a directory")
            tree = fetched
            archive = None
        elif len(files) == 1:
            archive, tree = files[0], None
        else:
            raise ImportError_(f"the s3 copy step left {len(files)} files in {fetched}; expected the one archive")
    else:
        archive = staging / ("download.zip" if archive_kind(source) == "zip" else "download.tar.gz")
        tree = None
        digest = download(source, archive)
    if archive is not None:
        akind = archive_kind(source)
        digest = sha256_of(archive)
        if expected and digest != expected:
            raise ImportError_(f"checksum mismatch for {source}: expected sha256 {expected}, got {digest}")
        tree = staging / "unpacked"
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir()
        unpack(archive, akind, tree)
    assert tree is not None
    root = find_root(tree, kind)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Copy beside the destination, then rename: the destination appears whole or not at all.
    partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
    try:
        shutil.copytree(root, partial, dirs_exist_ok=True)
        if kind == "data":
            (partial / MARKER).write_text(source + "\n", encoding="utf-8")
        partial.chmod(0o755)
        os.rename(partial, dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return f"imported {source} into {dest}"


def main() -> int:
    """Entry point: exit 0 done, 1 failed, 2 bad input; never a traceback."""
    try:
        print(run(dict(os.environ)), flush=True)
    except ValueError as exc:
        print(f"gpuplane-import: bad input: {exc}", file=sys.stderr, flush=True)
        return 2
    except ImportError_ as exc:
        print(f"gpuplane-import: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
