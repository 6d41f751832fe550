"""Cluster commands against hostile and broken kubeconfigs and an unreachable server: one line, the right exit.

A sentinel file proves that no kubeconfig gpuplane did not write ran its `exec` command.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.infra import kubeaccess
from gpuplane.infra.cli import app
from tests import team_project

runner = CliRunner()
CLUSTER = team_project.CLUSTER


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _kubeconfig(server: str, user: dict[str, object], name: str = CLUSTER) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": "Q0E="}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [{"name": name, "user": user}],
        }
    )


def _gpuplane_user(cluster: str = CLUSTER) -> dict[str, object]:
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "gpuplane",
            "args": ["token", "--cluster", cluster, "--region", team_project.REGION],
        }
    }


def _hostile_user(sentinel: Path) -> dict[str, object]:
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "sh",
            "args": ["-c", f"touch {sentinel}; echo '{{}}'"],
        }
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return team_project.own_program(tmp_path / "team")


def _state(project: Path) -> Path:
    return project / ".gpuplane" / "dev"


COMMANDS = [
    ["train", "dev", "mnist"],
    ["queue", "dev"],
    ["compare", "dev", "--model", team_project.MODEL],
    ["verify", "dev"],
]


def _invoke(project: Path, args: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "--project", str(project)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize("how", ["committed", "no-record", "edited", "other-users-key", "link", "open-folder"])
def test_a_project_kubeconfig_gpuplane_did_not_write_is_refused_and_never_run(project, tmp_path, args, how):
    sentinel = tmp_path / "ran"
    state = _state(project)
    server = f"https://127.0.0.1:{_closed_port()}"
    hostile = _kubeconfig(server, _hostile_user(sentinel))
    if how == "committed":  # as a clone would have it: plain files, a record copied from someone else
        state.mkdir(parents=True, mode=0o700)
        (state / "kubeconfig").write_text(hostile)
        (state / "kubeconfig.trust").write_text(json.dumps({"mac": "0" * 64, "cluster": CLUSTER, "server": server}))
        for path in (state / "kubeconfig", state / "kubeconfig.trust"):
            path.chmod(0o600)
    elif how == "no-record":
        kubeaccess.write(
            state / "kubeconfig", _kubeconfig(server, _gpuplane_user()), CLUSTER, project_state=state.parent
        )
        (state / "kubeconfig.trust").unlink()
    elif how == "edited":  # gpuplane wrote it; then someone swapped the plugin in
        kubeaccess.write(
            state / "kubeconfig", _kubeconfig(server, _gpuplane_user()), CLUSTER, project_state=state.parent
        )
        (state / "kubeconfig").write_text(hostile)
    elif how == "other-users-key":  # a record made with another key: the MAC cannot match this user's
        kubeaccess.write(state / "kubeconfig", hostile, CLUSTER, project_state=state.parent)
        kubeaccess.key_path().unlink()
        kubeaccess.write(tmp_path / "other" / "kc", _kubeconfig(server, _gpuplane_user()), CLUSTER)
    elif how == "link":
        kubeaccess.write(tmp_path / "elsewhere" / "kc", hostile, CLUSTER)
        state.mkdir(parents=True, mode=0o700)
        (state / "kubeconfig").symlink_to(tmp_path / "elsewhere" / "kc")
        (state / "kubeconfig.trust").symlink_to(tmp_path / "elsewhere" / "kc.trust")
    elif how == "open-folder":  # gpuplane wrote it, but anyone may now swap it
        kubeaccess.write(state / "kubeconfig", hostile, CLUSTER, project_state=state.parent)
        state.chmod(0o777)
    code, text = _invoke(project, args)
    assert code == 2, text
    assert f"refusing kubeconfig {state / 'kubeconfig'}" in text, text
    assert "gpuplane kubeconfig dev" in text
    assert not sentinel.exists()


def test_gpuplane_token_for_another_cluster_is_refused(project, tmp_path):
    state = _state(project)
    server = f"https://127.0.0.1:{_closed_port()}"
    kubeaccess.write(
        state / "kubeconfig", _kubeconfig(server, _gpuplane_user("other")), CLUSTER, project_state=state.parent
    )
    code, text = _invoke(project, ["queue", "dev"])
    assert code == 2 and f"not `gpuplane token --cluster {CLUSTER}`" in text, text


def test_what_gpuplane_writes_is_private_from_the_start_whatever_the_umask(project):
    state = _state(project)
    (project / ".gpuplane").mkdir(mode=0o777)
    os.chmod(project / ".gpuplane", 0o777)  # as an older gpuplane left it under umask 000
    old = os.umask(0)
    try:
        kubeaccess.write(
            state / "kubeconfig",
            _kubeconfig("https://k.example", _gpuplane_user()),
            CLUSTER,
            project_state=state.parent,
        )
    finally:
        os.umask(old)
    modes = {
        p.name: p.stat().st_mode & 0o777
        for p in (project / ".gpuplane", state, state / "kubeconfig", state / "kubeconfig.trust")
    }
    assert modes == {".gpuplane": 0o700, "dev": 0o700, "kubeconfig": 0o600, "kubeconfig.trust": 0o600}
    assert kubeaccess.key_path().stat().st_mode & 0o777 == 0o600
    source = kubeaccess.Source.of(None, state / "kubeconfig", "dev", CLUSTER)
    assert kubeaccess.load(source)["current-context"] == CLUSTER


def test_a_link_in_the_state_folder_is_never_written_through(project, tmp_path):
    (tmp_path / "target").mkdir()
    (project / ".gpuplane").symlink_to(tmp_path / "target")
    with pytest.raises(kubeaccess.KubeconfigError, match="is a link"):
        kubeaccess.write(
            _state(project) / "kubeconfig",
            _kubeconfig("https://k", _gpuplane_user()),
            CLUSTER,
            project_state=project / ".gpuplane",
        )
    assert list((tmp_path / "target").iterdir()) == []


def _feed(fifo: Path, data: bytes) -> None:
    """Write `data` into a named pipe for its one reader; a reader that stops early closes it (a broken pipe)."""
    with contextlib.suppress(BrokenPipeError), fifo.open("wb") as pipe:
        pipe.write(data)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("clusters: [\n", "is not valid YAML"),
        ("", "is empty or not a kubeconfig"),
        ("apiVersion: v1\nkind: Config\n", "has no current-context"),
        ("apiVersion: v1\nclusters: []\n", "has no current-context"),
        (None, "is a folder"),
        ("MISSING", "does not exist; write it with `gpuplane kubeconfig dev` first"),
        # A pipe (or a device such as /dev/zero) has no size to check beforehand: it is read with the same bound.
        ("PIPE", f"is more than {kubeaccess.MAX_BYTES} bytes; allowed: at most {kubeaccess.MAX_BYTES}"),
    ],
    ids=["malformed", "empty", "no-clusters", "no-context", "folder", "missing", "endless"],
)
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_broken_kubeconfig_is_one_line_and_exit_2(project, tmp_path, content, said, args):
    path = tmp_path / "kc"
    if content is None:
        path.mkdir()
    elif content == "PIPE":
        os.mkfifo(path)
        threading.Thread(target=_feed, args=(path, b"#" * (kubeaccess.MAX_BYTES + 4096)), daemon=True).start()
    elif content != "MISSING":
        path.write_text(content)
    code, text = _invoke(project, [*args, "--kubeconfig", str(path)])
    assert code == 2, text
    assert f"kubeconfig {path}" in text and said in text, text


@pytest.mark.parametrize("private", [False, True], ids=["public", "private-endpoint"])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_an_unreachable_server_is_one_line_naming_it_and_exit_1(tmp_path, args, private):
    project = team_project.own_program(tmp_path / "team", private_endpoint=private)
    server = f"https://127.0.0.1:{_closed_port()}"
    path = tmp_path / "kc"
    path.write_text(_kubeconfig(server, {"token": "t"}))
    code, text = _invoke(project, [*args, "--kubeconfig", str(path)])
    assert code == 1, text
    assert f"cannot reach API server {server} (kubeconfig {path}): connection refused" in text, text
    assert ("inside the VPC" in text) == private, text
    assert text.count("Error:") == 1


def test_a_named_kubeconfig_is_the_users_choice_and_kubeconfig_env_is_never_read(project, tmp_path, monkeypatch):
    sentinel = tmp_path / "ran"
    hostile = tmp_path / "hostile"
    hostile.write_text(_kubeconfig(f"https://127.0.0.1:{_closed_port()}", _hostile_user(sentinel)))
    monkeypatch.setenv("KUBECONFIG", str(hostile))
    code, text = _invoke(project, ["queue", "dev"])  # no project kubeconfig: the variable does not stand in
    assert code == 2 and "does not exist" in text and not sentinel.exists(), text
    code, text = _invoke(project, ["queue", "dev", "--kubeconfig", str(hostile)])  # named: used as kubectl would
    assert code == 1 and sentinel.exists(), text


# --- TLS and authentication failures against a local HTTPS server ---------------------------------------


def _certificate(tmp_path: Path, name: str) -> tuple[Path, Path, str]:
    """A self-signed certificate for 127.0.0.1: (cert file, key file, its base64 PEM as a kubeconfig holds it)."""
    import base64  # noqa: PLC0415
    import datetime  # noqa: PLC0415
    import ipaddress  # noqa: PLC0415

    from cryptography import x509  # noqa: PLC0415
    from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
    from cryptography.x509.oid import NameOID  # noqa: PLC0415

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    cert_file, key_file = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
    cert_file.write_bytes(pem)
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file, base64.b64encode(pem).decode()


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """An HTTPS server on 127.0.0.1 answering 401 to everything; yields (url, its CA as base64 PEM)."""
    import http.server  # noqa: PLC0415
    import ssl  # noqa: PLC0415
    import threading  # noqa: PLC0415

    cert, key, ca = _certificate(tmp_path, "server")

    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"kind":"Status","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", ca
    finally:
        server.shutdown()
        server.server_close()


def _with_ca(server: str, ca: str) -> str:
    text = _kubeconfig(server, {"token": "t"})
    return text.replace("certificate-authority-data: Q0E=", f"certificate-authority-data: {ca}")


def test_a_server_the_kubeconfig_ca_does_not_name_is_a_tls_failure(project, tmp_path, https_server):
    server, _ = https_server
    _, _, other_ca = _certificate(tmp_path, "other")
    path = tmp_path / "kc"
    path.write_text(_with_ca(server, other_ca))
    code, text = _invoke(project, ["queue", "dev", "--kubeconfig", str(path)])
    assert code == 1, text
    assert f"TLS with API server {server} (kubeconfig {path}) failed" in text, text
    assert "gpuplane kubeconfig dev" in text


def test_refused_credentials_are_one_line_naming_the_access_entry(project, tmp_path, https_server):
    server, ca = https_server
    path = tmp_path / "kc"
    path.write_text(_with_ca(server, ca))
    code, text = _invoke(project, ["train", "dev", "mnist", "--kubeconfig", str(path)])
    assert code == 1, text
    assert f"API server {server} (kubeconfig {path}) refused the credentials (401 Unauthorized)" in text, text
    assert "adminPrincipals" in text
