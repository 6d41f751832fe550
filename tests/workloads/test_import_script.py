"""The model import script run for real: a local HTTP server and a moto S3 server with the aws CLI.

The same command lines the Job runs (`s3_copy_command`, then the python script) run here on local
directories; only the pod paths differ. https needs a certificate a test server lacks, so the scheme
check is unit-tested on its own and the HTTP runs pass the script's test-only override.
"""

from __future__ import annotations

import hashlib
import http.server
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import boto3
import pytest
from moto.server import ThreadedMotoServer

from gpuplane.manifests import model_import

SCRIPT = Path(model_import.__file__).parent / "runtime" / model_import.SCRIPT_NAME
AWS = Path(sys.executable).parent / "aws"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpuplane_import", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def saved_model_tar(top: str = "", extra: dict[str, bytes] | None = None) -> bytes:
    """A tar.gz with saved_model.pb (under `top/` when given) and a variables file."""
    files = {"saved_model.pb": b"fake graph", "variables/variables.index": b"idx", **(extra or {})}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def saved_model_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("model/saved_model.pb", b"fake graph")
        zf.writestr("model/variables/variables.index", b"idx")
    return buf.getvalue()


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def run_script(dest: Path, source: str, staging: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "GPUPLANE_IMPORT_SOURCE": source,
        "GPUPLANE_IMPORT_DEST": str(dest),
        "GPUPLANE_IMPORT_STAGING": str(staging),
        "PYTHONDONTWRITEBYTECODE": "1",
        **extra,
    }
    return subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    ("name", "body"),
    [("m.tar.gz", saved_model_tar()), ("m.tgz", saved_model_tar("exported")), ("m.zip", saved_model_zip())],
)
def test_https_archive_is_installed_once_and_atomically(http_root, tmp_path, name, body):
    root, url = http_root
    (root / name).write_bytes(body)
    dest = tmp_path / "models" / "resnet" / "1"
    digest = hashlib.sha256(body).hexdigest()
    first = run_script(
        dest, f"{url}/{name}", tmp_path / "s1", GPUPLANE_IMPORT_ALLOW_HTTP="true", GPUPLANE_IMPORT_SHA256=digest
    )
    assert first.returncode == 0, first.stderr
    assert (dest / "saved_model.pb").read_bytes() == b"fake graph"
    assert (dest / "variables" / "variables.index").read_bytes() == b"idx"
    assert sorted(p.name for p in dest.parent.iterdir()) == ["1"]  # no partial directory left behind
    (root / name).unlink()  # a second run must not fetch at all
    again = run_script(dest, f"{url}/{name}", tmp_path / "s2", GPUPLANE_IMPORT_ALLOW_HTTP="true")
    assert again.returncode == 0, again.stderr
    assert "already imported" in again.stdout


def test_checksum_mismatch_installs_nothing(http_root, tmp_path):
    root, url = http_root
    (root / "m.tar.gz").write_bytes(saved_model_tar())
    dest = tmp_path / "models" / "m" / "1"
    result = run_script(
        dest, f"{url}/m.tar.gz", tmp_path / "s", GPUPLANE_IMPORT_ALLOW_HTTP="true", GPUPLANE_IMPORT_SHA256="0" * 64
    )
    assert result.returncode == 1
    assert "checksum mismatch" in result.stderr and "0" * 64 in result.stderr
    assert not dest.exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"this is not gzip", "is not a readable tar archive"),
        (saved_model_tar()[:40], "is not a readable tar archive"),  # truncated download
        (b"PK\x03\x04 not really", "is not a readable zip archive"),
    ],
)
def test_bad_archive_fails_cleanly(http_root, tmp_path, body, message):
    root, url = http_root
    name = "m.zip" if body.startswith(b"PK") else "m.tar.gz"
    (root / name).write_bytes(body)
    dest = tmp_path / "models" / "m" / "1"
    result = run_script(dest, f"{url}/{name}", tmp_path / "s", GPUPLANE_IMPORT_ALLOW_HTTP="true")
    assert result.returncode == 1, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not dest.exists()


def test_archive_without_saved_model_is_refused(http_root, tmp_path):
    root, url = http_root
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("README")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    (root / "m.tar.gz").write_bytes(buf.getvalue())
    dest = tmp_path / "models" / "m" / "1"
    result = run_script(dest, f"{url}/m.tar.gz", tmp_path / "s", GPUPLANE_IMPORT_ALLOW_HTTP="true")
    assert result.returncode == 1
    assert "no saved_model.pb" in result.stderr
    assert not dest.exists()


def test_archive_escaping_its_directory_is_refused(http_root, tmp_path):
    root, url = http_root
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("../../evil")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    (root / "m.tar.gz").write_bytes(buf.getvalue())
    result = run_script(tmp_path / "m" / "1", f"{url}/m.tar.gz", tmp_path / "s", GPUPLANE_IMPORT_ALLOW_HTTP="true")
    assert result.returncode == 1
    assert not (tmp_path / "evil").exists() and not (tmp_path.parent / "evil").exists()


@pytest.mark.parametrize(
    ("source", "allow", "expected"),
    [
        ("https://h/m.tar.gz", False, "https"),
        ("s3://b/k", False, "s3"),
        ("http://h/m.tar.gz", True, "http"),
    ],
)
def test_scheme_check_accepts(source, allow, expected):
    assert _module().check_scheme(source, allow) == expected


@pytest.mark.parametrize("source", ["http://h/m.tar.gz", "ftp://h/m.tar.gz", "file:///etc/passwd", "/data/m"])
def test_scheme_check_refuses_anything_but_https_and_s3(source):
    with pytest.raises(ValueError, match="must start with https:// or s3://"):
        _module().check_scheme(source)


def test_plain_http_is_bad_input_without_the_test_override(tmp_path):
    result = run_script(tmp_path / "m" / "1", "http://127.0.0.1:9/m.tar.gz", tmp_path / "s")
    assert result.returncode == 2
    assert "bad input" in result.stderr and "https://" in result.stderr


@pytest.fixture
def moto_s3(monkeypatch) -> Iterator[str]:
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def s3_env(endpoint: str) -> dict[str, str]:
    return {
        "PATH": f"{AWS.parent}:{os.environ['PATH']}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "HOME": "/nonexistent",
    }


def run_s3_import(
    imp: model_import.Import, data: Path, staging: Path, endpoint: str
) -> subprocess.CompletedProcess[str]:
    """The Job's two steps, in order, as the pod runs them (init container, then the script)."""
    copy = subprocess.run(
        model_import.s3_copy_command(imp, data_root=str(data), staging=str(staging)),
        env=s3_env(endpoint),
        capture_output=True,
        text=True,
        check=False,
    )
    assert copy.returncode == 0, copy.stderr
    dest = data / imp.destination.removeprefix(model_import.DATA_ROOT + "/")
    return run_script(dest, imp.source, staging, **({"GPUPLANE_IMPORT_SHA256": imp.sha256} if imp.sha256 else {}))


def _imp(source: str, sha256: str | None = None) -> model_import.Import:
    return model_import.Import(
        workload="resnet", namespace="ml", source=source, volume="models", path="resnet", version=3,
        uid=10001, gid=10001, sha256=sha256,
    )  # fmt: skip


def test_s3_archive_and_prefix_import_through_the_aws_cli(moto_s3, tmp_path):
    s3 = boto3.client(
        "s3",
        endpoint_url=moto_s3,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    s3.create_bucket(Bucket="models-bucket")
    body = saved_model_tar("export")
    s3.put_object(Bucket="models-bucket", Key="resnet/model.tar.gz", Body=body)
    s3.put_object(Bucket="models-bucket", Key="tree/saved_model.pb", Body=b"tree graph")
    s3.put_object(Bucket="models-bucket", Key="tree/variables/variables.index", Body=b"idx")

    archive = _imp("s3://models-bucket/resnet/model.tar.gz", hashlib.sha256(body).hexdigest())
    data = tmp_path / "data"
    result = run_s3_import(archive, data, tmp_path / "s1", moto_s3)
    assert result.returncode == 0, result.stderr
    assert (data / "resnet" / "3" / "saved_model.pb").read_bytes() == b"fake graph"

    # Idempotent: the object is gone, and neither step fails or fetches.
    s3.delete_object(Bucket="models-bucket", Key="resnet/model.tar.gz")
    again = run_s3_import(archive, data, tmp_path / "s2", moto_s3)
    assert again.returncode == 0 and "already imported" in again.stdout

    prefix = _imp("s3://models-bucket/tree/")
    data2 = tmp_path / "data2"
    result = run_s3_import(prefix, data2, tmp_path / "s3", moto_s3)
    assert result.returncode == 0, result.stderr
    assert (data2 / "resnet" / "3" / "saved_model.pb").read_bytes() == b"tree graph"
    assert (data2 / "resnet" / "3" / "variables" / "variables.index").read_bytes() == b"idx"


def test_s3_checksum_mismatch(moto_s3, tmp_path):
    s3 = boto3.client(
        "s3",
        endpoint_url=moto_s3,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    s3.create_bucket(Bucket="models-bucket")
    s3.put_object(Bucket="models-bucket", Key="m.tar.gz", Body=saved_model_tar())
    result = run_s3_import(_imp("s3://models-bucket/m.tar.gz", "f" * 64), tmp_path / "d", tmp_path / "s", moto_s3)
    assert result.returncode == 1 and "checksum mismatch" in result.stderr
    assert not (tmp_path / "d" / "resnet" / "3").exists()


def test_data_import_marks_completion(http_root, tmp_path):
    root, url = http_root
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("mnist/train.csv")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"1,2"))
    (root / "d.tar.gz").write_bytes(buf.getvalue())
    dest = tmp_path / "datasets" / "mnist"
    result = run_script(
        dest, f"{url}/d.tar.gz", tmp_path / "s", GPUPLANE_IMPORT_ALLOW_HTTP="true", GPUPLANE_IMPORT_KIND="data"
    )
    assert result.returncode == 0, result.stderr
    assert (dest / "train.csv").read_bytes() == b"1,2"
    assert (dest / ".gpuplane-import-complete").is_file()
    shutil.rmtree(tmp_path / "s")
