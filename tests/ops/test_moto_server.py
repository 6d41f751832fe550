"""Once over real HTTP: `gpuplane preflight --json` against a ThreadedMotoServer on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from moto.moto_server import werkzeug_app
from moto.server import ThreadedMotoServer
from typer.testing import CliRunner

from gpuplane.infra.cli import app
from tests.ops.conftest import GOOD_QUOTAS, seed_amis


@pytest.fixture
def moto_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # The server runs in this process: its note about a service it does not serve (the Price List API, which
    # preflight asks and moto lacks) would land in the command's captured stdout, ahead of the JSON.
    monkeypatch.setattr(werkzeug_app, "print", lambda *args, **kwargs: None, raising=False)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)  # botocore sends every client there
    try:
        yield endpoint
    finally:
        server.stop()


def test_preflight_over_http(moto_server, set_quotas):
    seed_amis()  # the server shares this process's moto backends
    set_quotas(GOOD_QUOTAS)
    result = CliRunner().invoke(app, ["preflight", "dev", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["ok"] is True
    statuses = {c["name"]: c["status"] for c in document["checks"]}
    assert statuses["credentials"] == "pass" and statuses["instance types: gpu"] == "pass"
