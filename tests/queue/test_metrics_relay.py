"""Kueue's metrics for the AWS managed collector: the plain-HTTP relay, its objects, and the collector's job.

The relay script runs for real here (a subprocess in front of a local HTTPS server with a self-signed certificate
that, like Kueue, accepts only one bearer token); the objects are checked against the Kubernetes schema (strict),
Pod Security `restricted`, and what the render records for a `managedPrometheus` stack with training.
"""

from __future__ import annotations

import http.server
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from gpuplane.components.queue import TrainingQueue
from gpuplane.infra import config, render
from gpuplane.manifests import observability, pod_security, queue, versions, wellknown
from tests import checkov_scan
from tests.conftest import once_per_session

SCRIPT = Path(queue.__file__).parent / "runtime" / queue.RELAY_SCRIPT
VPC = "10.0.0.0/16"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FakeKueue:
    """An HTTPS `/metrics` with a self-signed certificate that answers only `Bearer <self.token>` (Kueue's filter)."""

    def __init__(self, tmp: Path) -> None:
        cert, key = tmp / "tls.crt", tmp / "tls.key"
        subprocess.run(
            [
                *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"),
                *("-keyout", str(key), "-out", str(cert)),
            ],
            check=True,
            capture_output=True,
        )
        self.token = "first-token"
        self.seen: list[dict[str, str]] = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.seen.append({"path": self.path, **dict(self.headers)})
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    self.send_response(401)
                    self.end_headers()
                    return
                body = b'kueue_pending_workloads{cluster_queue="ml-training",status="active"} 2\n'
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}/metrics"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def running_relay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FakeKueue, Path, Any]]:
    """One relay process and one fake Kueue for the module: the relay keeps no state between requests (it reads
    the token file each time), so the tests share them, each from the state `relay` resets."""
    tmp_path = tmp_path_factory.mktemp("relay")
    kueue = FakeKueue(tmp_path)
    token = tmp_path / "token"
    token.write_text("first-token\n")
    port = _free_port()
    env = {
        **os.environ,
        "RELAY_UPSTREAM": kueue.url,
        "RELAY_PORT": str(port),
        "RELAY_TOKEN_FILE": str(token),
        "RELAY_TIMEOUT_SECONDS": "5",
    }
    proc = subprocess.Popen([sys.executable, str(SCRIPT)], env=env, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while True:
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the relay did not start"
            time.sleep(0.1)
    try:
        yield base, kueue, token, proc
    finally:
        proc.terminate()
        proc.wait(timeout=5)
        kueue.server.shutdown()


@pytest.fixture
def relay(running_relay: tuple[str, FakeKueue, Path, Any]) -> tuple[str, FakeKueue, Path]:
    """The module's relay, as it started: the first token on both sides, no request seen yet."""
    base, kueue, token, proc = running_relay
    assert proc.poll() is None, "the relay ended"
    kueue.token = "first-token"
    token.write_text("first-token\n")
    kueue.seen.clear()
    return base, kueue, token


def _get(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


# --- the relay, running ----------------------------------------------------------------------------------------
def test_relay_serves_kueues_metrics_with_its_own_token_and_nothing_of_the_callers(relay):
    base, kueue, _ = relay
    status, body = _get(f"{base}/metrics?x=1", headers={"Authorization": "Bearer the-callers", "X-Probe": "1"})
    assert (status, body) == (200, 'kueue_pending_workloads{cluster_queue="ml-training",status="active"} 2\n')
    sent = kueue.seen[-1]
    assert sent["path"] == "/metrics" and sent["Authorization"] == "Bearer first-token"
    assert "X-Probe" not in sent  # the caller's headers stay with the relay


def test_relay_reads_the_token_again_for_every_request(relay):
    """Projected service-account tokens rotate (about hourly): a token read once at start-up would expire."""
    base, kueue, token = relay
    kueue.token = "rotated-token"
    assert _get(f"{base}/metrics")[0] == 502  # Kueue refuses the old token: the relay says so
    token.write_text("rotated-token")
    assert _get(f"{base}/metrics") == (200, 'kueue_pending_workloads{cluster_queue="ml-training",status="active"} 2\n')


def test_relay_reports_kueues_refusal_as_502(relay):
    base, kueue, _ = relay
    kueue.token = "another"
    status, body = _get(f"{base}/metrics")
    assert status == 502 and body == "Kueue answered 401 Unauthorized\n"


@pytest.mark.parametrize(
    ("path", "method", "expected"), [("/", "GET", 404), ("/api", "GET", 404), ("/metrics", "POST", 405)]
)
def test_relay_answers_nothing_but_get_metrics(relay, path, method, expected):
    base, kueue, _ = relay
    before = len(kueue.seen)
    assert _get(f"{base}{path}", method=method)[0] == expected
    assert len(kueue.seen) == before  # never forwarded


def test_relay_without_kueue_answers_502_and_keeps_running(tmp_path: Path):
    port, dead = _free_port(), _free_port()
    (tmp_path / "token").write_text("t")
    env = {
        **os.environ,
        "RELAY_UPSTREAM": f"https://127.0.0.1:{dead}/metrics",
        "RELAY_PORT": str(port),
        "RELAY_TOKEN_FILE": str(tmp_path / "token"),
    }
    proc = subprocess.Popen([sys.executable, str(SCRIPT)], env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                status, body = _get(f"http://127.0.0.1:{port}/metrics")
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert status == 502 and body.startswith("Kueue did not answer:")
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=5)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RELAY_UPSTREAM": "http://kueue:8443/metrics"}, "is not an https:// URL"),
        ({"RELAY_UPSTREAM": "https://kueue:8443/metrics", "RELAY_PORT": "eighty"}, "RELAY_PORT"),
    ],
)
def test_relay_refuses_bad_input_with_exit_2(env, message):
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


# --- its objects ------------------------------------------------------------------------------------------------
def _relay_objects() -> dict[str, dict[str, Any]]:
    return {doc["kind"]: doc for doc in queue.metrics_relay_objects(allowed_cidrs=[VPC], startup_taints=["efs"])}


@pytest.mark.parametrize("version", sorted(versions.KUBERNETES_VERSIONS))
def test_relay_objects_validate_strictly(version):
    for doc in queue.metrics_relay_objects(allowed_cidrs=[VPC]):
        assert kubernetes_validate.validate(doc, version, strict=True), doc["kind"]


def test_relay_pod_is_admitted_by_restricted_and_runs_the_shipped_script():
    objects = _relay_objects()
    deployment = objects["Deployment"]
    assert deployment["metadata"]["namespace"] == wellknown.KUEUE_NAMESPACE == "kueue-system"
    assert pod_security.object_violations(deployment) == []
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == versions.PYTHON_IMAGE  # the pinned python slim image: no new image
    assert container["command"] == ["python3", f"/relay/{queue.RELAY_SCRIPT}"]
    assert objects["ConfigMap"]["data"][queue.RELAY_SCRIPT] == SCRIPT.read_text()
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["RELAY_UPSTREAM"] == "https://kueue-controller-manager-metrics-service.kueue-system.svc:8443/metrics"
    assert env["RELAY_PORT"] == "8080"
    assert deployment["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "efs", "operator": "Exists", "effect": "NoExecute"}
    ]


def test_relay_account_may_read_metrics_and_nothing_else():
    objects = _relay_objects()
    assert objects["ClusterRole"]["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    binding = objects["ClusterRoleBinding"]
    assert binding["roleRef"]["name"] == objects["ClusterRole"]["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": objects["ServiceAccount"]["metadata"]["name"], "namespace": "kueue-system"}
    ]
    assert objects["Deployment"]["spec"]["template"]["spec"]["serviceAccountName"] == "kueue-metrics-relay"


def test_network_policy_admits_the_plain_port_only_from_the_vpc():
    objects = _relay_objects()
    policy = objects["NetworkPolicy"]["spec"]
    assert policy["podSelector"]["matchLabels"] == objects["Deployment"]["spec"]["selector"]["matchLabels"]
    assert policy["policyTypes"] == ["Ingress"]
    assert policy["ingress"] == [{"ports": [{"protocol": "TCP", "port": 8080}], "from": [{"ipBlock": {"cidr": VPC}}]}]
    service = objects["Service"]
    assert service["metadata"]["name"] == queue.RELAY_SERVICE
    assert service["spec"]["ports"] == [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}]


def relay_objects() -> list[dict[str, Any]]:
    """The relay's objects as a managed-Prometheus stack deploys them (what the checkov run scans)."""
    return queue.metrics_relay_objects(allowed_cidrs=[VPC], startup_taints=["efs"])


@pytest.mark.skipif(checkov_scan.binary() is None, reason="checkov not installed (make scan)")
def test_relay_objects_pass_checkov(checkov_kubernetes: dict[str, checkov_scan.SetResult]):
    """`make scan` checks the dev and prod renders, and neither runs the relay (prod trains nothing; dev keeps the
    in-cluster Prometheus): its objects pass checkov here (the session's one run, tests/checkov_scan.py), every
    skip with its reason on the object."""
    found = checkov_kubernetes["metrics-relay"]
    assert found.files == len(relay_objects())
    assert found.failed == [] and found.parsing_errors == []
    assert found.passed >= found.files  # each object was read and checked


# --- Kueue's own listener, and who reads it ------------------------------------------------------------------------
@pytest.mark.parametrize("metrics", ["prometheus", "managedPrometheus", "none"])
def test_the_chart_servicemonitor_is_never_on(metrics):
    """It would make Kueue's release wait for the stack's CRDs: ours (observability.kueue_service_monitor) is
    applied after the stack instead, with the chart's endpoint."""
    values = queue.kueue_values("ml", pods_ready_timeout="40m", requeue_limit=3, metrics=metrics)
    assert values["enablePrometheus"] is False


def test_kueue_reports_the_queue_resource_metrics_the_dashboard_reads():
    config = queue.manager_config("ml", "40m", 3)
    assert config["metrics"] == {"bindAddress": ":8443", "enableClusterQueueResources": True}
    board = observability.dashboards()["gpuplane-queue.json"]
    names = " ".join(observability.dashboard_expressions(board))
    assert "kueue_cluster_queue_resource_usage" in names and "kueue_cluster_queue_nominal_quota" in names


def test_collector_job_reads_the_relay_under_the_servicemonitors_job_name():
    job = next(j for j in observability.managed_scrape_config(None)["scrape_configs"] if j["job_name"] == "kueue")
    assert observability.collector_problems({"scrape_configs": [job]}) == []
    assert job["kubernetes_sd_configs"] == [{"role": "endpoints", "namespaces": {"names": ["kueue-system"]}}]
    keep = {r["source_labels"][0]: r["regex"] for r in job["relabel_configs"] if r.get("action") == "keep"}
    assert keep == {
        "__meta_kubernetes_service_name": "kueue-metrics-http",
        "__meta_kubernetes_endpoint_port_name": "http",
    }
    # The in-cluster Prometheus names a ServiceMonitor's job after the Service it selects: the chart's metrics
    # Service (`kueue` release): both stores write the same `job`.
    assert {"target_label": "job", "replacement": "kueue-controller-manager-metrics-service"} in job["relabel_configs"]
    assert "scheme" not in job and "tls_config" not in job  # plain HTTP


# --- the render -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def amp_run(tmp_path_factory):
    """The dev stack (it declares a training run, so Kueue runs) with the managed collector."""
    dev = config.load("dev")
    raw = dict(dev.raw)
    raw["gpuplane:observability"] = {**raw.get("gpuplane:observability", {}), "metrics": "managedPrometheus"}
    managed = config.parse(raw, dev.stack)
    return once_per_session(tmp_path_factory, "relay-amp-run", lambda: render.run_stack(managed))


def test_managed_stack_with_training_runs_the_relay_beside_kueue(amp_run):
    objects = render.kubernetes_objects(amp_run)
    relay_docs = [
        o for o in objects.values() if o["metadata"].get("labels", {}).get("app.kubernetes.io/name") == queue.RELAY_NAME
    ]
    assert sorted(o["kind"] for o in relay_docs) == sorted(
        ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment", "Service", "NetworkPolicy"]
    )
    policy = next(o for o in relay_docs if o["kind"] == "NetworkPolicy")
    assert policy["spec"]["ingress"][0]["from"] == [{"ipBlock": {"cidr": "10.0.0.0/16"}}]  # the stack's VPC
    kueue = next(r for r in amp_run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "kueue")
    assert kueue.inputs["values"]["enablePrometheus"] is False
    scraper = amp_run.one("aws:amp/scraper:Scraper")
    assert "job_name: kueue" in scraper.inputs["scrapeConfiguration"]


def test_in_cluster_prometheus_runs_no_relay(dev_run):
    kinds = [r.inputs.get("metadata", {}).get("name") for r in dev_run.resources if r.type.startswith("kubernetes:")]
    assert queue.RELAY_NAME not in kinds and queue.RELAY_SERVICE not in kinds


@pytest.mark.parametrize("metrics", [True, "cloudwatch", ""])
def test_training_queue_refuses_a_store_it_does_not_know(metrics):
    """`metrics` was a bool before the relay: an old caller's True gets a clear error, not a silent `none`."""
    with pytest.raises(ValueError, match=r"metrics=.* is not one of prometheus, managedPrometheus, none"):
        TrainingQueue(
            "q",
            None,  # type: ignore[arg-type]
            None,  # type: ignore[arg-type]
            cluster=None,  # type: ignore[arg-type]
            kubernetes_version="1.36",
            startup_taints=(),
            after=(),
            metrics=metrics,
        )
