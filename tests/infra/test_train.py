"""`gpuplane train` against an in-memory fake of the cluster API: idempotence, ledger, rerun, changed spec."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.infra import config, kube, train
from gpuplane.infra.cli import app

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


class FakeApi:
    """The `KubeApi` calls, on dicts; a JobSet can be 'finished' and 'cleaned by TTL' by the test."""

    def __init__(self) -> None:
        self.jobsets: dict[tuple[str, str], dict[str, Any]] = {}
        self.ledgers: dict[str, dict[str, str]] = {}
        self.created: list[str] = []
        self.deleted: list[str] = []

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        return copy.deepcopy(self.jobsets.get((namespace, name)))

    def create_jobset(self, namespace: str, body: dict[str, Any]) -> None:
        key = (namespace, body["metadata"]["name"])
        assert key not in self.jobsets, "AlreadyExists"
        self.jobsets[key] = copy.deepcopy(body)
        self.created.append(key[1])

    def delete_jobset(self, namespace: str, name: str) -> None:
        del self.jobsets[(namespace, name)]
        self.deleted.append(name)

    def read_ledger(self, namespace: str) -> dict[str, str]:
        return dict(self.ledgers.get(namespace, {}))

    def write_ledger(self, namespace: str, entries: dict[str, str]) -> None:
        self.ledgers[namespace] = dict(entries)


@pytest.fixture(scope="module")
def dev() -> config.StackConfig:
    return config.load("dev")


def test_submits_once_and_records_the_run(dev):
    api = FakeApi()
    obj = train.build(dev, "mnist")
    first = train.submit(api, obj, now=NOW)
    assert first.action == "submitted" and api.created == [obj["metadata"]["name"]]
    record = json.loads(api.ledgers["ml"][obj["metadata"]["name"]])
    assert record == {
        "specHash": obj["metadata"]["annotations"]["gpuplane.io/spec-hash"],
        "submittedAt": "2026-11-23T12:00:00Z",
    }
    again = train.submit(api, train.build(dev, "mnist"), now=NOW)
    assert again.action == "exists" and again.state == "Running"
    assert len(api.created) == 1


def test_a_run_cleaned_by_its_ttl_is_not_run_again(dev):
    api = FakeApi()
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    api.jobsets.clear()  # the JobSet finished and its TTL deleted it
    outcome = train.submit(api, obj, now=NOW)
    assert outcome.action == "already-ran"
    assert len(api.created) == 1


def test_rerun_replaces_an_existing_run(dev):
    api = FakeApi()
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    name = obj["metadata"]["name"]
    api.jobsets[("ml", name)]["status"] = {"terminalState": "Failed"}
    assert train.submit(api, obj, now=NOW).state == "Failed"
    outcome = train.submit(api, obj, rerun=True, now=NOW)
    assert outcome.action == "submitted"
    assert api.deleted == [name] and api.created == [name, name]


def test_a_changed_spec_or_run_id_is_a_new_run(dev):
    api = FakeApi()
    train.submit(api, train.build(dev, "mnist"), now=NOW)
    changed = dev.platform.model_copy(deep=True)
    changed.training[0].command.append("--epochs=5")
    other = train.build(config.StackConfig(**{**dev.__dict__, "platform": changed}), "mnist")
    assert train.submit(api, other, now=NOW).action == "submitted"
    assert train.submit(api, train.build(dev, "mnist", run_id="exp-2"), now=NOW).action == "submitted"
    assert len(api.created) == 3 and "mnist-exp-2" in api.created
    assert len(api.ledgers["ml"]) == 3


@pytest.mark.parametrize(
    ("status", "state"),
    [
        ({}, "Running"),
        ({"terminalState": "Completed"}, "Completed"),
        ({"conditions": [{"type": "Failed", "status": "True"}]}, "Failed"),
        ({"conditions": [{"type": "Completed", "status": "False"}]}, "Running"),
    ],
)
def test_jobset_state(status, state):
    assert kube.jobset_state({"status": status}) == state


def test_plan_prints_the_manifest_without_a_cluster(tmp_path):
    result = CliRunner().invoke(app, ["train", "dev", "mnist", "--plan", "--kubeconfig", str(tmp_path / "none")])
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(result.output)
    assert doc["kind"] == "JobSet" and doc["metadata"]["name"].startswith("mnist-")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["train", "dev", "nope", "--plan"],
            "no training workload 'nope' in stack 'dev'; gpuplane:training has: mnist",
        ),
        (["train", "dev", "mnist", "--plan", "--run-id", "Bad_ID"], "must be 1-16 chars"),
    ],
)
def test_bad_input_exits_2(args, message):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
