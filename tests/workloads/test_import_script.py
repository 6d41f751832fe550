"""The model import script run for real: a loopback HTTPS server, and a moto S3 server with the aws CLI.

The same command lines the Job runs (`s3_copy_command`, then the python script) run here on local
directories, as the workload uid (see `import_harness`); only the pod paths differ. Hostile archives and
servers are in `test_import_hostile.py`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import boto3
import pytest
from moto.server import ThreadedMotoServer

from gpuplane.manifests import model_import
from tests.workloads.import_harness import MODEL, SCRIPT, UID, Sandbox, Server, sandbox_dir, tar_gz, zip_bytes

AWS = Path(sys.executable).parent / "aws"


def _module() -> ModuleType:
    """The script as a module (registered, as dataclasses need, under a name nothing else uses)."""
    if "gpuplane_import_script" not in sys.modules:
        spec = importlib.util.spec_from_file_location("gpuplane_import_script", SCRIPT)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules["gpuplane_import_script"]


def saved_model_tar(top: str = "", extra: dict[str, bytes] | None = None) -> bytes:
    """A tar.gz with saved_model.pb (under `top/` when given) and a variables file."""
    files = {"saved_model.pb": b"fake graph", "variables/variables.index": b"idx", **(extra or {})}
    return tar_gz([(f"{top}/{name}" if top else name, data) for name, data in files.items()])


@pytest.fixture
def box() -> Iterator[Sandbox]:
    yield from sandbox_dir()


@pytest.fixture
def https() -> Iterator[Server]:
    server = Server()
    yield server
    server.close()


@pytest.mark.parametrize(
    ("name", "body"),
    [("m.tar.gz", saved_model_tar()), ("m.tgz", saved_model_tar("exported")), ("m.zip", zip_bytes(MODEL))],
)
def test_https_archive_is_installed_once_and_atomically(box, https, name, body):
    https.routes[f"/{name}"] = body
    digest = hashlib.sha256(body).hexdigest()
    box.run(f"{https.url}/{name}", "resnet/1", GPUPLANE_IMPORT_SHA256=digest).succeeded("imported")
    dest = box.volume / "resnet" / "1"
    assert (dest / "saved_model.pb").read_bytes() == b"fake graph"
    assert (dest / "variables" / "variables.index").read_bytes() == b"idx"
    if os.geteuid() == 0:
        assert os.stat(dest / "saved_model.pb").st_uid == UID  # written by the workload uid, not root
    assert sorted(p.name for p in dest.parent.iterdir()) == ["1"]  # no partial directory, no lock file
    box.assert_nothing_left()
    del https.routes[f"/{name}"]  # a second run must not fetch at all
    box.run(f"{https.url}/{name}", "resnet/1").succeeded("already imported")
    assert https.hits[f"/{name}"] == 1


def test_checksum_mismatch_installs_nothing(box, https):
    https.routes["/m.tar.gz"] = saved_model_tar()
    result = box.run(f"{https.url}/m.tar.gz", GPUPLANE_IMPORT_SHA256="0" * 64)
    result.failed(1, "checksum mismatch", "0" * 64)
    assert not (box.volume / "m" / "1").exists()
    box.assert_nothing_left()


@pytest.mark.parametrize(
    ("name", "body", "message"),
    [
        ("m.tar.gz", b"this is not gzip", "is not a readable tar archive"),
        ("m.tar.gz", saved_model_tar()[:40], "is not a readable tar archive"),  # truncated download
        ("m.zip", b"PK\x03\x04 not really", "is not a readable zip archive"),
        ("m.zip", zip_bytes(MODEL)[:-30], "is not a readable zip archive"),  # the central directory cut off
    ],
    # Named ids: a gzip header holds the time it was made, and pytest-xdist's workers must collect the same ids.
    ids=["not-gzip", "truncated-tar-gz", "not-zip", "zip-without-directory"],
)
def test_bad_archive_fails_cleanly(box, https, name, body, message):
    https.routes[f"/{name}"] = body
    box.run(f"{https.url}/{name}").failed(1, message)
    assert not (box.volume / "m" / "1").exists()
    box.assert_nothing_left()


def test_a_corrupted_zip_member_fails_its_crc(box, https):
    body = bytearray(zip_bytes([("model/saved_model.pb", b"fake graph " * 100)]))
    at = body.index(b"model/saved_model.pb") + len("model/saved_model.pb") + 5  # inside the deflated data
    body[at] ^= 0xFF
    https.routes["/m.zip"] = bytes(body)
    box.run(f"{https.url}/m.zip").failed(1, "is not a readable zip archive")
    box.assert_nothing_left()


def test_archive_without_saved_model_is_refused(box, https):
    https.routes["/m.tar.gz"] = tar_gz([("README", b"hi")])
    box.run(f"{https.url}/m.tar.gz").failed(1, "no saved_model.pb")
    assert not (box.volume / "m" / "1").exists()
    box.assert_nothing_left()


def test_archive_escaping_its_directory_is_refused(box, https):
    https.routes["/m.tar.gz"] = tar_gz([*MODEL, ("../../sentinel/evil", b"x")])
    box.run(f"{https.url}/m.tar.gz").failed(1, "'../../sentinel/evil'", "climbs out")
    assert not (box.sentinel / "evil").exists() and not (box.base / "evil").exists()
    box.assert_nothing_left()


def test_data_import_marks_completion(box, https):
    https.routes["/d.tar.gz"] = tar_gz([("mnist/train.csv", b"1,2")])
    box.run(f"{https.url}/d.tar.gz", "mnist", GPUPLANE_IMPORT_KIND="data").succeeded("imported")
    assert (box.volume / "mnist" / "train.csv").read_bytes() == b"1,2"
    assert (box.volume / "mnist" / ".gpuplane-import-complete").read_text() == f"{https.url}/d.tar.gz\n"
    box.assert_nothing_left()


@pytest.mark.parametrize(("source", "expected"), [("https://h/m.tar.gz", "https"), ("s3://b/k", "s3")])
def test_scheme_check_accepts(source, expected):
    assert _module().check_scheme(source) == expected


@pytest.mark.parametrize("source", ["http://h/m.tar.gz", "ftp://h/m.tar.gz", "file:///etc/passwd", "/data/m"])
def test_scheme_check_refuses_anything_but_https_and_s3(source):
    with pytest.raises(ValueError, match="must start with https:// or s3://"):
        _module().check_scheme(source)


def test_plain_http_is_bad_input(box):
    plain = Server(tls=False)
    try:
        plain.routes["/m.tar.gz"] = saved_model_tar()
        box.run(f"{plain.url}/m.tar.gz").failed(2, "bad input", "https://")
        assert plain.hits["/m.tar.gz"] == 0
    finally:
        plain.close()


def test_the_script_and_the_job_agree_on_the_caps():
    script = _module()
    assert (script.DEFAULT_MAX_BYTES, script.DEFAULT_MAX_FILES, script.DEFAULT_MAX_RATIO) == (
        model_import.DEFAULT_MAX_BYTES,
        model_import.DEFAULT_MAX_FILES,
        model_import.DEFAULT_MAX_RATIO,
    )
    for max_bytes, max_files in [(1 << 20, 1), (10 << 30, 100_000), (1 << 40, 1_000_000)]:
        imp = model_import.Import("m", "ml", "https://h/m.tgz", "models", "m", UID, UID, 1, max_bytes=max_bytes,
                                  max_files=max_files)  # fmt: skip
        assert script.archive_cap(max_bytes, max_files) == imp.archive_cap
        assert imp.staging_bytes >= imp.archive_cap + max_bytes


# ---- s3: the aws CLI copies, the script checks and installs ----------------------------------------


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


def run_s3_import(imp: model_import.Import, box: Sandbox, endpoint: str, **extra: str):
    """The Job's two steps, in order, as the pod runs them (init container, then the script)."""
    shutil.rmtree(box.staging / "s3", ignore_errors=True)
    copy = subprocess.run(
        model_import.s3_copy_command(imp, data_root=str(box.volume), staging=str(box.staging)),
        env=s3_env(endpoint),
        capture_output=True,
        text=True,
        check=False,
    )
    assert copy.returncode == 0, copy.stderr
    if os.geteuid() == 0:  # the init container runs as the same uid in the pod
        for root, dirs, files in os.walk(box.staging):
            for name in [".", *dirs, *files]:
                os.chown(os.path.join(root, name), UID, UID)
    dest = imp.destination.removeprefix(model_import.DATA_ROOT + "/")
    return box.run_with(imp.source, dest, {**({"GPUPLANE_IMPORT_SHA256": imp.sha256} if imp.sha256 else {}), **extra})


def _imp(source: str, sha256: str | None = None) -> model_import.Import:
    return model_import.Import(
        workload="resnet", namespace="ml", source=source, volume="models", path="resnet", version=3,
        uid=UID, gid=UID, sha256=sha256,
    )  # fmt: skip


def _s3(endpoint: str):
    s3 = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )  # fmt: skip
    s3.create_bucket(Bucket="models-bucket")
    return s3


def test_s3_archive_and_prefix_import_through_the_aws_cli(moto_s3, box):
    s3 = _s3(moto_s3)
    body = saved_model_tar("export")
    s3.put_object(Bucket="models-bucket", Key="resnet/model.tar.gz", Body=body)
    s3.put_object(Bucket="models-bucket", Key="tree/saved_model.pb", Body=b"tree graph")
    s3.put_object(Bucket="models-bucket", Key="tree/variables/variables.index", Body=b"idx")

    archive = _imp("s3://models-bucket/resnet/model.tar.gz", hashlib.sha256(body).hexdigest())
    run_s3_import(archive, box, moto_s3).succeeded("imported")
    assert (box.volume / "resnet" / "3" / "saved_model.pb").read_bytes() == b"fake graph"

    # Idempotent: the object is gone, and neither step fails or fetches.
    s3.delete_object(Bucket="models-bucket", Key="resnet/model.tar.gz")
    run_s3_import(archive, box, moto_s3).succeeded("already imported")

    shutil.rmtree(box.volume / "resnet")
    prefix = _imp("s3://models-bucket/tree/")
    run_s3_import(prefix, box, moto_s3).succeeded("imported")
    assert (box.volume / "resnet" / "3" / "saved_model.pb").read_bytes() == b"tree graph"
    assert (box.volume / "resnet" / "3" / "variables" / "variables.index").read_bytes() == b"idx"
    box.assert_nothing_left("s3")


def test_s3_prefix_is_held_to_the_caps_as_it_is_copied(moto_s3, box):
    s3 = _s3(moto_s3)
    s3.put_object(Bucket="models-bucket", Key="tree/saved_model.pb", Body=b"g")
    for i in range(5):
        s3.put_object(Bucket="models-bucket", Key=f"tree/variables/part-{i}", Body=b"v" * 1000)
    result = run_s3_import(_imp("s3://models-bucket/tree/"), box, moto_s3, GPUPLANE_IMPORT_MAX_BYTES="3000")
    result.failed(1, "more than 3000 bytes", "import.maxUnpackedSize")
    assert not (box.volume / "resnet" / "3").exists()
    box.assert_nothing_left("s3")


def test_s3_checksum_mismatch(moto_s3, box):
    s3 = _s3(moto_s3)
    s3.put_object(Bucket="models-bucket", Key="m.tar.gz", Body=saved_model_tar())
    run_s3_import(_imp("s3://models-bucket/m.tar.gz", "f" * 64), box, moto_s3).failed(1, "checksum mismatch")
    assert not (box.volume / "resnet" / "3").exists()


def test_tar_member_modes_are_not_carried_over(box, https):
    info = tarfile.TarInfo("model/saved_model.pb")
    info.size, info.mode = 1, 0o6777  # setuid, setgid, world-writable
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.addfile(info, io.BytesIO(b"g"))
    https.routes["/m.tgz"] = buf.getvalue()
    box.run(f"{https.url}/m.tgz").succeeded("imported")
    assert oct(os.stat(box.volume / "m" / "1" / "saved_model.pb").st_mode & 0o7777) == oct(0o755)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("GPUPLANE_IMPORT_MAX_BYTES", "lots"),
        ("GPUPLANE_IMPORT_MAX_FILES", "0"),
        ("GPUPLANE_IMPORT_MAX_RATIO", "1.5"),
        ("GPUPLANE_IMPORT_DOWNLOAD_SECONDS", "nan"),
        ("GPUPLANE_IMPORT_DOWNLOAD_SECONDS", "inf"),
    ],
)
def test_a_bad_cap_in_the_environment_is_bad_input(box, https, key, value):
    https.routes["/m.tar.gz"] = saved_model_tar()
    box.run(f"{https.url}/m.tar.gz", **{key: value}).failed(2, "bad input", key, repr(value))
    assert https.hits["/m.tar.gz"] == 0
