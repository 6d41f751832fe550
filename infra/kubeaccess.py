"""How a command reaches a cluster: which kubeconfig, whether to trust it, and one-line failures.

Why apart from `infra/kube.py` (the API calls): `train`, `queue`, `compare` and `verify` all start the same
way, and the dangerous part is here. A kubeconfig's `exec` plugin is a command run as the user, and its
server receives the user's EKS token. So:

- the project-local kubeconfig (`.gpuplane/<stack>/kubeconfig`, the default) is used only if gpuplane wrote
  it for this user: beside it, `kubeconfig.trust` (mode 0600) holds the cluster, server and CA gpuplane wrote
  and an HMAC of the file under a per-user key (`$XDG_CONFIG_HOME/gpuplane/kubeconfig.key`, 0600), so a
  kubeconfig committed to a cloned repository, or swapped into the folder, is refused before any command or
  token goes anywhere. The file, its record and their folders must be the user's, not links, and not
  writable by others; the exec plugin must be `gpuplane token --cluster <this stack's cluster>`.
- a kubeconfig named with `--kubeconfig` is the user's choice and is used as kubectl would use it.
- `KUBECONFIG` is never read: a variable left from another stack must not redirect gpuplane.

Failures are `KubeError`s: one line naming the kubeconfig, the server when known, and what to do, with the
exit code of the table in docs/commands.md (2: the kubeconfig is missing, a folder, malformed or untrusted; 1: the
cluster cannot be reached, TLS or authentication failed).

API (also for `gpuplane verify`): `Source.of(...)` picks the kubeconfig; `connect(source, hint)` returns a
`Connection` (a ready `kubernetes` ApiClient, checked with a `/version` call) or raises `KubeError`;
`explain(exc, connection)` turns any later client exception into a `KubeError`; `write(path, text, cluster)`
is how `gpuplane kubeconfig` writes a trusted one.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXIT_FAILED = 1
EXIT_INVALID = 2
TRUST_SUFFIX = ".trust"
MAX_BYTES = 1 << 20
# A probe that cannot connect gives up after this long (a private endpoint from outside the VPC drops packets).
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 60.0


class KubeError(Exception):
    """A cluster command cannot go on: one line (the kubeconfig, the server, what to do) and its exit code."""

    exit_code = EXIT_FAILED


class KubeconfigError(KubeError):
    """The kubeconfig is missing, a folder, malformed, or not one gpuplane wrote (exit 2)."""

    exit_code = EXIT_INVALID


class ClusterError(KubeError):
    """The cluster cannot be reached, or refused the TLS handshake or the credentials (exit 1)."""

    exit_code = EXIT_FAILED


@dataclass(frozen=True)
class Source:
    """Which kubeconfig a command uses: `cluster` is set when it is the project's own (trust is checked)."""

    path: Path
    stack: str
    cluster: str | None
    hint: str = ""  # what to do when the server cannot be reached (a private endpoint: from inside the VPC)

    @classmethod
    def of(cls, named: Path | None, default: Path, stack: str, cluster: str, hint: str = "") -> Source:
        """`--kubeconfig` if given (the user's choice, as kubectl), else the project's, checked for trust."""
        if named is not None:
            return cls(named, stack, None, hint)
        return cls(default, stack, cluster, hint)

    @property
    def regenerate(self) -> str:
        """How to get a kubeconfig gpuplane trusts for this stack."""
        return f"write it with `gpuplane kubeconfig {self.stack}`"


@dataclass(frozen=True)
class Connection:
    """A checked way to a cluster: the client, where it came from and its server."""

    api: Any
    source: Source
    server: str


# --- the per-user key and the trust record --------------------------------------------------------------


def key_path() -> Path:
    """Where the per-user key lives: `$XDG_CONFIG_HOME/gpuplane/kubeconfig.key` (default ~/.config)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gpuplane" / "kubeconfig.key"


def _private_problem(path: Path, what: str, *, folder: bool = False) -> str | None:
    """Why `path` is not a private file (or folder) of this user, or None when it is.

    A link, the wrong kind, someone else's, or writable by others: one rule for the key, the kubeconfig and
    their folders.
    """
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return f"{what} {path} is a link"
    if not (stat.S_ISDIR if folder else stat.S_ISREG)(info.st_mode):
        return f"{path} is not a folder" if folder else f"{what} {path} is not a file"
    if info.st_uid != os.getuid():
        return f"{what} {path} belongs to user id {info.st_uid}, not you"
    if info.st_mode & 0o022:
        return f"{what} {path} is writable by others (mode {info.st_mode & 0o777:o})"
    return None


def _key(create: bool) -> bytes | None:
    path = key_path()
    try:
        problem = _private_problem(path, "gpuplane's key")
    except FileNotFoundError:
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
        return path.read_bytes()
    if problem or path.stat().st_mode & 0o077:
        raise KubeconfigError(
            f"{problem or f'gpuplane key {path} is readable by others'}; delete it and write the kubeconfig again "
            "with `gpuplane kubeconfig STACK`"
        )
    return path.read_bytes()


def _mac(key: bytes, content: bytes) -> str:
    return hmac.new(key, content, hashlib.sha256).hexdigest()


def private_folders(top: Path, leaf: Path) -> None:
    """Create `top` and the folders below it down to `leaf` 0700, never through a link; ours are made 0700."""
    levels = [top, *(top / part for part in _parts_below(top, leaf))]
    for folder in levels:
        if folder.is_symlink():
            raise KubeconfigError(f"{folder} is a link; allowed: a folder of yours (remove the link)")
        if not folder.exists():
            folder.mkdir(mode=0o700)
            continue
        problem = _private_problem(folder, "folder", folder=True)
        if problem and "writable by others" in problem:
            folder.chmod(0o700)  # ours, from an older gpuplane or a umask of 000: made private now
        elif problem:
            raise KubeconfigError(f"{problem}; allowed: a folder of yours")
        else:
            folder.chmod(0o700)


def _parts_below(top: Path, leaf: Path) -> list[str]:
    parts = leaf.relative_to(top).parts
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` mode 0600 from the start: a new file renamed over it (a link there is replaced)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def write(path: Path, text: str, cluster: str, *, project_state: Path | None = None) -> None:
    """Write a kubeconfig gpuplane trusts later: the file and its record, both 0600, in private folders.

    `project_state`: the project's `.gpuplane/` (its folders are made 0700 and never followed through a link).
    Raises KubeconfigError (exit 2) for a path that is a link or not the user's; OSError otherwise.
    """
    if project_state is not None:
        private_folders(project_state, path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    document = _parse(text.encode(), path)
    server, ca = _server_and_ca(document, path)
    content = text.encode()
    key = _key(create=True)
    assert key is not None
    record = {"cluster": cluster, "server": server, "caSha256": hashlib.sha256(ca.encode()).hexdigest()}
    record["mac"] = _mac(key, content)
    _write_private(path, content)
    _write_private(path.with_name(path.name + TRUST_SUFFIX), (json.dumps(record, sort_keys=True) + "\n").encode())


# --- reading -------------------------------------------------------------------------------------------


def _read(path: Path, regenerate: str) -> bytes:
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise KubeconfigError(f"kubeconfig {path} is a folder; allowed: a kubeconfig file ({regenerate})")
        if info.st_size > MAX_BYTES:
            raise KubeconfigError(f"kubeconfig {path} is {info.st_size} bytes; allowed: at most {MAX_BYTES}")
        # Read with the same bound: a pipe (`--kubeconfig <(...)`) or a device has no size to check beforehand,
        # and /dev/zero would otherwise be read until memory runs out.
        with path.open("rb") as file:
            data = file.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise KubeconfigError(f"kubeconfig {path} is more than {MAX_BYTES} bytes; allowed: at most {MAX_BYTES}")
        return data
    except FileNotFoundError:
        raise KubeconfigError(f"kubeconfig {path} does not exist; {regenerate} first") from None
    except OSError as exc:
        raise KubeconfigError(f"kubeconfig {path} cannot be read ({exc.strerror or exc})") from None


def _parse(data: bytes, path: Path) -> dict[str, Any]:
    import yaml  # noqa: PLC0415

    try:
        document = yaml.safe_load(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        reason = " ".join(str(exc).split())
        raise KubeconfigError(f"kubeconfig {path} is not valid YAML ({reason})") from None
    if not isinstance(document, dict) or not document:
        raise KubeconfigError(f"kubeconfig {path} is empty or not a kubeconfig (no clusters, contexts, users)")
    return document


def _named(document: dict[str, Any], kind: str, name: object, path: Path) -> dict[str, Any]:
    for entry in document.get(kind) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            inner = entry.get(kind[:-1])
            if isinstance(inner, dict):
                return inner
    raise KubeconfigError(f"kubeconfig {path} has no {kind[:-1]} {name!r} (named by its current-context)")


def _current(document: dict[str, Any], path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(cluster, user) entries of the current context; KubeconfigError naming what is missing."""
    name = document.get("current-context")
    if not name:
        raise KubeconfigError(f"kubeconfig {path} has no current-context")
    context = _named(document, "contexts", name, path)
    return _named(document, "clusters", context.get("cluster"), path), _named(
        document, "users", context.get("user"), path
    )


def _server_and_ca(document: dict[str, Any], path: Path) -> tuple[str, str]:
    cluster, _ = _current(document, path)
    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith("https://"):
        raise KubeconfigError(f"kubeconfig {path}: server {server!r} is not an https:// address")
    return server, str(cluster.get("certificate-authority-data") or "")


def _untrusted(source: Source, why: str) -> KubeconfigError:
    return KubeconfigError(
        f"refusing kubeconfig {source.path}: {why}; gpuplane uses the project's kubeconfig only as it wrote it. "
        f"Delete it and {source.regenerate} again (or name a kubeconfig you trust with --kubeconfig)"
    )


def load(source: Source) -> dict[str, Any]:
    """The kubeconfig document, checked: parsed and complete; for the project's own, written by gpuplane."""
    if source.cluster is None:
        document = _parse(_read(source.path, source.regenerate), source.path)
        cluster, _ = _current(document, source.path)
        if not isinstance(cluster.get("server"), str) or not cluster["server"]:
            raise KubeconfigError(f"kubeconfig {source.path}: its current cluster has no server address")
        return document
    return _trusted(source)


def _trusted(source: Source) -> dict[str, Any]:
    path = source.path
    if not os.path.lexists(path):
        raise KubeconfigError(f"kubeconfig {path} does not exist; {source.regenerate} first")
    try:
        for folder in (path.parent, path.parent.parent):
            problem = _private_problem(folder, "folder", folder=True)
            if problem:
                raise _untrusted(source, problem)
        if path.is_dir() and not path.is_symlink():
            raise KubeconfigError(f"kubeconfig {path} is a folder; allowed: a kubeconfig file ({source.regenerate})")
        record_path = path.with_name(path.name + TRUST_SUFFIX)
        for file, what in ((path, "the kubeconfig"), (record_path, "its record")):
            problem = _private_problem(file, what)
            if problem:
                raise _untrusted(source, problem)
    except FileNotFoundError as exc:
        raise _untrusted(source, f"{exc.filename} is missing (no record that gpuplane wrote it)") from None
    content = _read(path, source.regenerate)
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        raise _untrusted(source, f"its record {record_path} is not readable") from None
    key = _key(create=False)
    if (
        key is None
        or not isinstance(record, dict)
        or not hmac.compare_digest(str(record.get("mac")), _mac(key, content))
    ):
        raise _untrusted(source, "it is not the file gpuplane wrote for you (its record does not match)")
    document = _parse(content, path)
    server, ca = _server_and_ca(document, path)
    _, user = _current(document, path)
    plugin = user.get("exec") or {}
    args = [str(a) for a in plugin.get("args") or []]
    if plugin.get("command") != "gpuplane" or args[:3] != ["token", "--cluster", source.cluster]:
        raise _untrusted(source, f"its exec plugin is not `gpuplane token --cluster {source.cluster}`")
    if set(user) - {"exec"}:
        raise _untrusted(source, f"its user has credentials besides the exec plugin ({', '.join(sorted(user))})")
    expected = (record.get("cluster"), record.get("server"), record.get("caSha256"))
    if expected != (source.cluster, server, hashlib.sha256(ca.encode()).hexdigest()):
        raise _untrusted(source, "its cluster, server or CA is not the one gpuplane wrote")
    return document


# --- connecting and explaining failures -----------------------------------------------------------------


def connect(source: Source, timeout: tuple[float, float] = (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)) -> Connection:
    """A client for `source`'s current context, checked with a `/version` call; KubeError otherwise.

    `timeout`: (connect, read) seconds for that call. The client follows no redirect: an API server answers
    none, and one that does (to another host or port) would be handed the next request; the redirect is
    reported as the answer it is (`answered 302 Found`).
    """
    document = load(source)
    server = str(_current(document, source.path)[0]["server"])
    from kubernetes import client  # noqa: PLC0415 - only a command that talks to a cluster loads the client
    from kubernetes import config as kube_config  # noqa: PLC0415

    configuration = client.Configuration()
    try:
        kube_config.load_kube_config_from_dict(
            document, client_configuration=configuration, persist_config=False, temp_file_path=None
        )
    except (kube_config.ConfigException, ValueError, TypeError, KeyError) as exc:
        raise KubeconfigError(f"kubeconfig {source.path} cannot be used: {' '.join(str(exc).split())}") from None
    from urllib3 import Retry  # noqa: PLC0415

    configuration.retries = Retry(total=1, redirect=0, raise_on_redirect=False)
    api = client.ApiClient(configuration)
    connection = Connection(api, source, server)
    try:
        client.VersionApi(api).get_code(_request_timeout=timeout)
    except Exception as exc:
        raise explain(exc, connection) from None
    return connection


def explain(exc: BaseException, connection: Connection) -> KubeError:
    """Any exception from a call through `connection` as one line: what failed, the server, what to do."""
    where = f"API server {connection.server} (kubeconfig {connection.source.path})"
    reason = _reason(exc)
    status = getattr(exc, "status", None)
    if _api_exception(exc) and isinstance(status, int) and status:
        body = " ".join(str(getattr(exc, "body", "") or "").split())[:300]
        if status == 401:
            return ClusterError(
                f"{where} refused the credentials (401 Unauthorized); check that your AWS identity is an access "
                "entry of the cluster (gpuplane:cluster.adminPrincipals) and that `gpuplane token` works"
            )
        if status == 403:
            return ClusterError(f"{where} forbids this (403): {body or exc}; your identity lacks the permission")
        return ClusterError(f"{where} answered {status} {getattr(exc, 'reason', '')}: {body}".rstrip(": "))
    if "certificate" in reason.lower() or "ssl" in reason.lower():
        return ClusterError(
            f"TLS with {where} failed ({reason}): the server is not the one the kubeconfig's CA names; "
            f"{connection.source.regenerate} again"
        )
    fix = connection.source.hint or "check the server address and your network"
    return ClusterError(f"cannot reach {where}: {reason}. {fix}")


def _api_exception(exc: BaseException) -> bool:
    """Whether `exc` is an HTTP answer of the API server (ApiException or a subclass: UnauthorizedException...)."""
    return any(klass.__name__ == "ApiException" for klass in type(exc).__mro__)


def is_client_failure(exc: BaseException) -> bool:
    """Whether `exc` comes from talking to the API server (HTTP status, connection, TLS), not from our code."""
    module = type(exc).__module__
    return (
        _api_exception(exc)
        or module.startswith(("urllib3", "ssl", "socket"))
        or isinstance(exc, ConnectionError | TimeoutError)
    )


def _reason(exc: BaseException) -> str:
    """The innermost useful words of a urllib3/ssl/socket failure, without the pool's noise."""
    inner: BaseException = exc
    seen = 0
    while seen < 5:
        nested = getattr(inner, "reason", None)
        if isinstance(nested, BaseException):
            inner, seen = nested, seen + 1
            continue
        break
    text = " ".join(str(inner).split())
    for marker in ("Connection refused", "timed out", "Name or service not known", "No route to host"):
        if marker in text:
            return marker.lower() if marker != "Name or service not known" else "the server's name is not known"
    return text[:300] or type(inner).__name__
