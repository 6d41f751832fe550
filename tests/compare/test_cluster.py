"""`kube.JobRunner.run_job` against a fake Kubernetes API: ownership, waiting, the log, an unschedulable pod.

A real API server is not available here; the fakes answer like the official client's models (attributes).
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from kubernetes import client

from gpuplane.infra import compare, kube
from tests.compare.conftest import write_stack

SUMMARY_LINE = 'GPUPLANE-COMPARE-SUMMARY {"runId": "r", "cells": []}'


class FakeApi:
    def __init__(self, phases: list[str], conditions: list[Any] | None = None, events: list[Any] | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.phases = phases
        self.conditions = conditions or []
        self.events = events or []
        self.event_queries: list[str] = []

    # CoreV1Api / NetworkingV1Api / BatchV1Api methods the run uses.
    def create_namespaced_config_map(self, namespace: str, body: dict[str, Any]) -> None:
        self.calls.append(("configmap", body["metadata"]["name"]))

    def create_namespaced_network_policy(self, namespace: str, body: dict[str, Any]) -> None:
        self.calls.append(("policy", body["metadata"]["name"]))

    def create_namespaced_job(self, namespace: str, body: dict[str, Any]) -> Any:
        self.calls.append(("job", body["metadata"]["name"]))
        return SimpleNamespace(metadata=SimpleNamespace(uid="uid-1"))

    def patch_namespaced_config_map(self, name: str, namespace: str, body: dict[str, Any]) -> None:
        self.calls.append(("own-configmap", body["metadata"]["ownerReferences"][0]["uid"]))

    def patch_namespaced_network_policy(self, name: str, namespace: str, body: dict[str, Any]) -> None:
        self.calls.append(("own-policy", body["metadata"]["ownerReferences"][0]["uid"]))

    def read_namespaced_job_status(self, name: str, namespace: str) -> Any:
        phase = self.phases.pop(0) if len(self.phases) > 1 else self.phases[0]
        return SimpleNamespace(status=SimpleNamespace(succeeded=1 if phase == "Succeeded" else None, failed=None))

    def list_namespaced_pod(self, namespace: str, label_selector: str) -> Any:
        pod = SimpleNamespace(
            metadata=SimpleNamespace(name="pod-1"),
            status=SimpleNamespace(phase="Running", conditions=self.conditions),
        )
        return SimpleNamespace(items=[pod])

    def list_namespaced_event(self, namespace: str, field_selector: str) -> Any:
        self.event_queries.append(field_selector)
        return SimpleNamespace(items=self.events)

    def read_namespaced_pod_log(self, name: str, namespace: str, container: str, _preload_content: bool) -> Any:
        self.calls.append(("log", name))
        assert _preload_content is False  # the raw response: the client's own decoding is broken (kube.pod_log)
        return SimpleNamespace(data=("[compare] cell 1/1\n" + SUMMARY_LINE + "\n").encode())


def make_plan(tmp_path) -> compare.Plan:
    config, variants = compare.load_stack("sample", write_stack(tmp_path / "stacks"))
    request = compare.parse_request("resnet", sizes="128", formats="jpeg", concurrency="1", duration=1, inputs=None)
    return compare.build_plan(config, variants[:3], request, run_id="r-1", client_cpu="1", client_memory="1Gi")


def cluster_with(api: FakeApi) -> kube.JobRunner:
    cluster = object.__new__(kube.JobRunner)
    cluster.core = cluster.batch = cluster.networking = api
    return cluster


def test_run_job_hands_the_objects_to_the_job_and_returns_the_log(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    api = FakeApi(["Running", "Running", "Succeeded"])
    cluster = cluster_with(api)
    plan = make_plan(tmp_path)
    progress: list[str] = []
    cluster.prepare(plan)
    log = cluster.run_job(plan, progress.append)
    assert compare.parse_summary(log) == {"runId": "r", "cells": []}
    assert [c[0] for c in api.calls] == ["configmap", "policy", "job", "own-configmap", "own-policy", "log"]
    assert ("own-configmap", "uid-1") in api.calls
    assert len(progress) == 3 and progress[0].startswith("job gpuplane-compare-r-1: Running")


def test_unschedulable_pod_is_reported(tmp_path, monkeypatch):
    clock = iter(range(0, 100000, 400))
    monkeypatch.setattr(time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    condition = SimpleNamespace(
        type="PodScheduled", status="False", reason="Unschedulable", message="0/2 nodes: anti-affinity"
    )
    cluster = cluster_with(FakeApi(["Running"], [condition]))
    with pytest.raises(RuntimeError, match="cannot be scheduled: 0/2 nodes: anti-affinity"):
        cluster.run_job(make_plan(tmp_path), lambda _m: None)


UNSCHEDULABLE = SimpleNamespace(
    type="PodScheduled", status="False", reason="Unschedulable", message="0/2 nodes are available: 2 Insufficient cpu"
)


def event(reason: str, message: str, minute: int, component: str = "cluster-autoscaler") -> Any:
    return SimpleNamespace(
        reason=reason,
        message=message,
        last_timestamp=datetime(2026, 11, 24, 12, minute, tzinfo=UTC),
        event_time=None,
        first_timestamp=None,
        reporting_component=None,
        source=SimpleNamespace(component=component),
    )


def test_no_scale_up_stops_the_run_at_once_with_the_autoscaler_reason(tmp_path, monkeypatch):
    clock = iter(range(0, 100000, 5))  # 5 s per poll: far below the 600 s limit
    monkeypatch.setattr(time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    reason = "pod didn't trigger scale-up: 1 max node group size reached, 1 Insufficient cpu"
    api = FakeApi(["Running"], [UNSCHEDULABLE], [event("NotTriggerScaleUp", reason, 1)])
    with pytest.raises(RuntimeError) as caught:
        cluster_with(api).run_job(make_plan(tmp_path), lambda _m: None)
    text = str(caught.value)
    assert "the cluster-autoscaler will not add a node" in text and reason in text
    assert "2 Insufficient cpu" in text  # the scheduler's message too
    assert api.event_queries == ["involvedObject.kind=Pod,involvedObject.name=pod-1"]


def test_a_scale_up_in_progress_keeps_waiting(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda _s: None)
    events = [
        event("NotTriggerScaleUp", "pod didn't trigger scale-up: 1 node(s) in backoff", 1),
        event("TriggeredScaleUp", "pod triggered scale-up: [{gpu 0->1 (max: 2)}]", 2),
    ]
    api = FakeApi(["Running", "Running", "Succeeded"], [UNSCHEDULABLE], events)
    log = cluster_with(api).run_job(make_plan(tmp_path), lambda _m: None)
    assert compare.parse_summary(log)["runId"] == "r"
    assert len(api.event_queries) == 3


@pytest.mark.parametrize(
    ("events", "refusal"),
    [
        ([], ""),
        ([event("NotTriggerScaleUp", "no", 1, component="someone-else")], ""),
        ([event("TriggeredScaleUp", "yes", 3), event("NotTriggerScaleUp", "no", 2)], ""),
        ([event("TriggeredScaleUp", "yes", 1), event("NotTriggerScaleUp", "no", 2)], "no"),
        ([event("FailedScheduling", "0/2 nodes", 5), event("NotTriggerScaleUp", "no", 2)], "no"),
    ],
)
def test_latest_scale_up_refusal(events, refusal):
    assert kube.latest_scale_up_refusal(events) == refusal


@pytest.mark.parametrize(
    ("log", "message"),
    [
        ("nothing useful\n", "the client printed no summary"),
        ('GPUPLANE-COMPARE-SUMMARY {"runId": "r", "error": "model not AVAILABLE"}\n', "client stopped: model not"),
    ],
)
def test_parse_summary_failures(log, message):
    with pytest.raises(RuntimeError, match=message):
        compare.parse_summary(log)


class _LogServer(BaseHTTPRequestHandler):
    """Answers the pod-log path as the API server does: text/plain, the container's bytes."""

    body = '[compare] cell 1/1\nSUMMARY {"ok": true}\nnon-ascii: \u00e9\n'

    def do_GET(self) -> None:
        assert urlparse(self.path).path == "/api/v1/namespaces/ns/pods/pod-1/log"
        assert parse_qs(urlparse(self.path).query) == {"container": ["client"]}
        data = self.body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_pod_log_is_the_text_the_container_wrote_with_the_real_client():
    """The pinned client (36.0.x) returns "b'...'" from its own decoding; kube.pod_log reads the bytes."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LogServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        configuration = client.Configuration()
        configuration.host = f"http://127.0.0.1:{server.server_address[1]}"
        core = client.CoreV1Api(client.ApiClient(configuration))
        assert kube.pod_log(core, "pod-1", "ns", "client") == _LogServer.body
    finally:
        server.shutdown()
        server.server_close()
