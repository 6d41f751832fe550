"""Once over real HTTP: `gpuplane preflight --json` against a ThreadedMotoServer on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.retries.standard import ExponentialBackoff
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


@pytest.fixture
def backoffs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """botocore's retries without its back-off sleeps: the retries a client makes, recorded, none waited for.

    Why: the server has no Price List API and answers 500, which standard mode retries with exponential back-off
    (up to the product's max_attempts), several seconds of sleep that test nothing here.
    """
    seen: list[Any] = []

    def delay_amount(_self: ExponentialBackoff, context: Any) -> float:
        seen.append(context)
        return 0.0

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", delay_amount)
    return seen


def test_preflight_over_http(moto_server, set_quotas, backoffs):
    seed_amis()  # the server shares this process's moto backends
    set_quotas(GOOD_QUOTAS)
    result = CliRunner().invoke(app, ["preflight", "dev", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["ok"] is True
    statuses = {c["name"]: c["status"] for c in document["checks"]}
    assert statuses["credentials"] == "pass" and statuses["instance types: gpu"] == "pass"
    # The Price List API's 500s were retried as every client of the commands retries, only without the sleeps:
    # 9 attempts in standard mode (total_max_attempts), the first try and 8 retries.
    assert [c.operation_model.name for c in backoffs] == ["GetProducts"] * 8
