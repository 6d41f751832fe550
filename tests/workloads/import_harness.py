"""How the import script is run in tests: over loopback HTTPS, as a non-root uid, into a sandboxed volume.

The sandbox is a directory readable by everyone with, side by side, the `volume` the script writes (owned
by the workload uid), its `staging` directory and a `sentinel` directory holding a secret the script can
read but must never copy: a hostile archive that gets it into the volume shows up as the secret's bytes
in a file there. The HTTPS server has a certificate from a CA made for the test (SSL_CERT_FILE points the
script at it), listens on 127.0.0.1 only, and serves routes that misbehave in the ways a server can.
"""

from __future__ import annotations

import atexit
import datetime
import functools
import http.server
import io
import ipaddress
import os
import resource
import secrets
import shutil
import signal
import ssl
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from gpuplane.manifests import model_import
from gpuplane.manifests.workload_security import MIN_WORKLOAD_UID

SCRIPT = Path(model_import.__file__).parent / "runtime" / model_import.SCRIPT_NAME
UID = MIN_WORKLOAD_UID


# ---- archives -------------------------------------------------------------------------------------


def tar_gz(members: Sequence[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    """A .tar.gz of (name, data) regular files and ready-made TarInfo entries (links, directories), in order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def symlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


def hardlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.LNKTYPE, target
    return info


def directory(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    return info


def zip_bytes(members: Sequence[tuple[str, bytes] | zipfile.ZipInfo | tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for member in members:
            if isinstance(member, zipfile.ZipInfo):
                zf.writestr(member, b"")
            else:
                zf.writestr(*member)
    return buf.getvalue()


MODEL = [("model/saved_model.pb", b"fake graph"), ("model/variables/variables.index", b"idx")]


# ---- TLS ------------------------------------------------------------------------------------------


_TLS_FOLDERS: list[Path] = []


def remove_tls_files() -> None:
    """Remove the folders `tls_files` made. Why not only at exit: an xdist worker may end without running `atexit`."""
    for folder in _TLS_FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)
    _TLS_FOLDERS.clear()
    tls_files.cache_clear()


@functools.cache
def tls_files() -> tuple[Path, Path, Path]:
    """(CA certificate, server certificate, server key) for 127.0.0.1, valid for a day, strict-X.509 clean."""
    where = Path(tempfile.mkdtemp(prefix="gpuplane-import-tls-"))
    # A test run leaves no key behind in the machine's /tmp: removed when the session ends (the conftest's
    # `pytest_sessionfinish`), and at exit for a process that is not a test session.
    _TLS_FOLDERS.append(where)
    atexit.register(shutil.rmtree, where, True)
    os.chmod(where, 0o755)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpuplane import test CA")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = (where / "ca.pem", where / "server.pem", where / "server.key")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    os.chmod(paths[0], 0o644)
    return paths


# ---- servers --------------------------------------------------------------------------------------

Route = bytes | Callable[[http.server.BaseHTTPRequestHandler], None]


@dataclass
class Server:
    """A loopback server: `routes[path]` is a body to serve, or a function that answers the request."""

    tls: bool = True
    routes: dict[str, Route] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    url: str = ""

    def __post_init__(self) -> None:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.hits[self.path] += 1
                route = server.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                elif isinstance(route, bytes):
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(route)))
                    self.end_headers()
                    self.wfile.write(route)
                else:
                    route(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        if self.tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            _, cert, key = tls_files()
            context.load_cert_chain(cert, key)
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def redirect_to(location: str) -> Route:
    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


def status(code: int) -> Route:
    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(code)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


def failing(times: int, then: Route, with_: Route) -> Route:
    """`with_` for the first `times` requests, then `then`."""
    count = {"n": 0}

    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        count["n"] += 1
        route = with_ if count["n"] <= times else then
        if isinstance(route, bytes):
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(route)))
            handler.end_headers()
            handler.wfile.write(route)
        else:
            route(handler)

    return answer


def drop_connection(handler: http.server.BaseHTTPRequestHandler) -> None:
    """Close without answering (a reset load balancer, a crashed server)."""
    handler.close_connection = True
    handler.connection.shutdown(2)


def truncated(body: bytes) -> Route:
    """Promise the whole body, send half, hang up."""

    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[: len(body) // 2])
        handler.wfile.flush()
        handler.close_connection = True
        handler.connection.shutdown(2)

    return answer


def drip(length: int, every: float) -> Route:
    """Promise `length` bytes, send one every `every` seconds: alive forever to a per-read timeout."""

    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(length))
        handler.end_headers()
        try:
            for _ in range(length):
                handler.wfile.write(b"\0")
                handler.wfile.flush()
                time.sleep(every)
        except OSError:
            pass

    return answer


# ---- the sandbox and the run ----------------------------------------------------------------------


@functools.cache
def _drop_to_uid() -> tuple[list[str], str]:
    """(command prefix, python) that run the script as the workload uid; as ourselves when we are not root."""
    if os.geteuid() != 0:
        return [], sys.executable
    setpriv = shutil.which("setpriv")
    if setpriv:
        prefix = [setpriv, f"--reuid={UID}", f"--regid={UID}", "--clear-groups"]
        # Our own interpreter may live under /root (unreadable to the uid); the script needs only the stdlib.
        for python in (sys.executable, "/usr/bin/python3", shutil.which("python3") or ""):
            probe = [*prefix, python, "-c", "import sys; assert sys.version_info >= (3, 11)"]
            if python and subprocess.run(probe, capture_output=True, check=False).returncode == 0:
                return prefix, python
    raise RuntimeError("running as root without setpriv or a python the workload uid may run")


@dataclass
class Sandbox:
    """`volume/`, `staging/` and `sentinel/` side by side; the script runs as the workload uid."""

    base: Path
    secret: bytes = field(default_factory=lambda: b"SENTINEL-" + secrets.token_hex(16).encode())

    def __post_init__(self) -> None:
        self.base.chmod(0o755)
        self.volume = self.base / "volume"
        self.staging = self.base / "staging"
        self.sentinel = self.base / "sentinel"
        self.script = self.base / "gpuplane-import.py"
        for path in (self.volume, self.staging, self.sentinel):
            path.mkdir(mode=0o755)
        shutil.copy(SCRIPT, self.script)
        self.script.chmod(0o644)
        (self.sentinel / "secret.txt").write_bytes(self.secret)
        (self.sentinel / "secret.txt").chmod(0o644)  # readable by the uid: only the script's care keeps it out
        if os.geteuid() == 0:
            for path in (self.volume, self.staging):
                os.chown(path, UID, UID)

    def env(self, source: str, dest: str, **extra: str) -> dict[str, str]:
        return {
            "PATH": "/usr/bin:/bin",
            "SSL_CERT_FILE": str(tls_files()[0]),
            "GPUPLANE_IMPORT_SOURCE": source,
            "GPUPLANE_IMPORT_DEST": str(self.volume / dest),
            "GPUPLANE_IMPORT_STAGING": str(self.staging),
            "GPUPLANE_IMPORT_RETRY_DELAY_SECONDS": "0.05",
            "PYTHONDONTWRITEBYTECODE": "1",
            **extra,
        }

    def command(self) -> list[str]:
        prefix, python = _drop_to_uid()
        return [*prefix, python, str(self.script)]

    def run(
        self, source: str, dest: str = "m/1", *, timeout: float = 60, file_size_limit: int | None = None, **extra: str
    ) -> Result:
        """Run the script to its end; `file_size_limit`: RLIMIT_FSIZE, so a write past it kills the script."""
        return self.run_with(source, dest, extra, timeout=timeout, file_size_limit=file_size_limit)

    def run_with(
        self,
        source: str,
        dest: str,
        extra: Mapping[str, str],
        *,
        timeout: float = 60,
        file_size_limit: int | None = None,
    ) -> Result:
        """`run` with the extra environment as a mapping."""

        def limit() -> None:
            if file_size_limit is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

        started = time.monotonic()
        done = subprocess.run(
            self.command(),
            env=self.env(source, dest, **extra),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            preexec_fn=limit,
        )
        return Result(done.returncode, done.stdout, done.stderr, time.monotonic() - started)

    def start(self, source: str, dest: str = "m/1", **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(),
            env=self.env(source, dest, **extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def files(self) -> dict[str, bytes | str]:
        """Everything in the volume, never following a link: file -> bytes, link -> 'link -> target'."""
        found: dict[str, bytes | str] = {}
        for root, dirs, names in os.walk(self.volume):
            for name in dirs + names:
                path = Path(root) / name
                rel = str(path.relative_to(self.volume))
                mode = os.lstat(path).st_mode
                if stat.S_ISLNK(mode):
                    found[rel] = f"link -> {os.readlink(path)}"
                elif stat.S_ISREG(mode):
                    found[rel] = path.read_bytes()
        return found

    def assert_nothing_from_outside(self) -> None:
        """No link in the volume, and no file that holds the sentinel's secret."""
        for rel, content in self.files().items():
            assert not isinstance(content, str), f"{rel} is a {content}"
            assert self.secret not in content, f"{rel} holds the sentinel's secret: read from outside the archive"

    def assert_nothing_left(self, *keep: str) -> None:
        """No partial copy, no lock file; no staging leftovers; the sentinel untouched."""
        for root, dirs, names in os.walk(self.volume):
            for name in dirs + names:
                assert ".partial-" not in name and not name.endswith(".import-lock"), f"left behind: {root}/{name}"
        left = sorted(p.name for p in self.staging.iterdir())
        assert left == sorted(keep), f"staging holds {left}"
        assert sorted(p.name for p in self.sentinel.iterdir()) == ["secret.txt"]
        assert (self.sentinel / "secret.txt").read_bytes() == self.secret


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def failed(self, code: int, *fragments: str) -> None:
        """Exit `code` with one line on stderr holding every fragment, and no traceback."""
        assert self.returncode == code, (self.returncode, self.stdout, self.stderr)
        lines = self.stderr.strip().splitlines()
        assert len(lines) == 1, f"not one line: {self.stderr!r}"
        assert lines[0].startswith("gpuplane-import: "), lines
        for fragment in fragments:
            assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
        assert "Traceback" not in self.stdout + self.stderr

    def succeeded(self, *fragments: str) -> None:
        assert self.returncode == 0, (self.returncode, self.stdout, self.stderr)
        assert self.stderr == "", self.stderr
        for fragment in fragments:
            assert fragment in self.stdout, (fragment, self.stdout)


def terminate(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)


def sandbox_dir() -> Iterator[Sandbox]:
    """A fresh sandbox under /tmp (pytest's own tmp_path is private to root; the uid could not enter it)."""
    base = Path(tempfile.mkdtemp(prefix="gpuplane-import-"))
    try:
        yield Sandbox(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
