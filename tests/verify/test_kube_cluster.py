"""`KubeCluster` (the real client) against a local HTTP server that answers the Kubernetes REST paths it uses.

No API server is available here; this one speaks the same URLs, verbs and JSON for the few calls verify
makes, so what is tested is the official client building those requests from our calls and our code reading
its answers back as API JSON (camelCase), 404s included.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import pytest
import yaml

from gpuplane.infra.verify.cluster import ClusterUnreachable, KubeCluster, scale_up_refusal
from gpuplane.manifests import verify as probes

# What EKS answers on /version (every field of version.Info; EKS's minor carries a '+').
VERSION = {
    "major": "1",
    "minor": "36+",
    "gitVersion": "v1.36.1-eks-1b2c3d4",
    "gitCommit": "0123456789abcdef0123456789abcdef01234567",
    "gitTreeState": "clean",
    "buildDate": "2026-10-01T00:00:00Z",
    "goVersion": "go1.25.1",
    "compiler": "gc",
    "platform": "linux/amd64",
}
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "system-0",
        "labels": {"gpuplane.io/node-group": "system"},
        "creationTimestamp": "2026-11-26T10:00:00Z",
    },
    "status": {
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-26T10:01:00Z"}],
        "allocatable": {"cpu": "1930m"},
    },
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "gv-x", "namespace": "ns", "labels": {"a": "b"}},
    "spec": {"nodeName": "system-0", "containers": [{"name": "probe", "image": "python"}]},
    "status": {"phase": "Succeeded"},
}
EVENT = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "e1", "namespace": "ns"},
    "involvedObject": {"kind": "Pod", "name": "gv-x"},
    "reason": "NotTriggerScaleUp",
    "message": "pod didn't trigger scale-up: 1 max node group size reached",
    "source": {"component": "cluster-autoscaler"},
    "lastTimestamp": "2026-11-26T10:00:10Z",
}

PROXY = "/api/v1/namespaces/monitoring/services/http:kube-prometheus-stack-prometheus:9090/proxy"


class Api(BaseHTTPRequestHandler):
    requests: ClassVar[list[tuple[str, str, dict[str, list[str]], Any]]] = []
    auth: ClassVar[list[str | None]] = []
    down = False

    def _answer(self, code: int, body: Any, content_type: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self) -> tuple[str, dict[str, list[str]]]:
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        Api.requests.append((self.command, url.path, parse_qs(url.query), body))
        Api.auth.append(self.headers.get("Authorization"))
        return url.path, parse_qs(url.query)

    def do_GET(self) -> None:
        path, _query = self._record()
        if Api.down:
            self._answer(503, {"kind": "Status", "code": 503, "message": "unavailable"})
        elif path in ("/version", "/version/"):  # the client asks for /version/
            self._answer(200, VERSION)
        elif path == "/api/v1/nodes":
            self._answer(200, {"kind": "NodeList", "apiVersion": "v1", "items": [NODE]})
        elif path == "/api/v1/namespaces/ns/pods":
            self._answer(200, {"kind": "PodList", "apiVersion": "v1", "items": [POD]})
        elif path == "/api/v1/pods":
            self._answer(200, {"kind": "PodList", "apiVersion": "v1", "items": [POD, POD]})
        elif path == "/api/v1/namespaces/ns/pods/gv-x":
            self._answer(200, POD)
        elif path == "/api/v1/namespaces/ns/pods/gv-x/log":
            self._answer(200, f"{probes.MARKER} a=1\n", "text/plain")
        elif path == "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/mnist-verify":
            self._answer(
                200,
                {
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "kind": "JobSet",
                    "metadata": {"name": "mnist-verify", "namespace": "ml", "uid": "u1"},
                },
            )
        elif path == "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads":
            self._answer(
                200,
                {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "WorkloadList",
                    "items": [{"metadata": {"name": "w1"}}],
                },
            )
        elif path == f"{PROXY}/api/v1/query":
            self._answer(200, {"status": "success", "data": {"resultType": "vector", "result": []}})
        elif path == "/api/v1/namespaces/monitoring/services/http:down:9090/proxy/api/v1/query":
            self._answer(503, {"kind": "Status", "code": 503, "message": "no endpoints available for service"})
        elif path == "/api/v1/namespaces/ns/events":
            self._answer(200, {"kind": "EventList", "apiVersion": "v1", "items": [EVENT]})
        else:
            self._answer(404, {"kind": "Status", "apiVersion": "v1", "code": 404, "reason": "NotFound"})

    def do_POST(self) -> None:
        _path, _query = self._record()
        body = Api.requests[-1][3]
        self._answer(201, body)

    def do_DELETE(self) -> None:
        path, _query = self._record()
        if path.endswith("/gone"):
            self._answer(404, {"kind": "Status", "apiVersion": "v1", "code": 404, "reason": "NotFound"})
        elif path.endswith("/forbidden"):
            self._answer(403, {"kind": "Status", "apiVersion": "v1", "code": 403, "reason": "Forbidden"})
        else:
            self._answer(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[KubeCluster]:
    Api.requests = []
    Api.down = False
    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    made = KubeCluster.from_kubeconfig(path)
    Api.requests = []  # connecting checks the server with one GET /version (infra/kubeaccess.py); not counted below
    yield made
    server.shutdown()


def test_reads_answer_as_api_json(cluster: KubeCluster):
    assert cluster.server_version() == "1.36"
    nodes = cluster.list_nodes()
    assert nodes[0]["metadata"]["labels"] == {"gpuplane.io/node-group": "system"}
    assert nodes[0]["status"]["conditions"][0]["lastTransitionTime"].startswith("2026-11-26T10:01:00")
    assert [p["metadata"]["name"] for p in cluster.list_pods("ns", "a=b")] == ["gv-x"]
    assert len(cluster.list_pods("")) == 2
    pod = cluster.read_pod("ns", "gv-x")
    assert pod is not None and pod["spec"]["nodeName"] == "system-0"
    assert cluster.read_pod("ns", "missing") is None
    assert probes.parse_report(cluster.pod_log("ns", "gv-x", "probe")) == {"a": "1"}
    assert cluster.pod_log("ns", "missing", "probe") == ""
    events = cluster.pod_events("ns", "gv-x")
    assert scale_up_refusal(events) == "pod didn't trigger scale-up: 1 max node group size reached"
    queries = {path: query for _verb, path, query, _body in Api.requests}
    assert queries["/api/v1/namespaces/ns/pods"]["labelSelector"] == ["a=b"]
    assert queries["/api/v1/namespaces/ns/events"]["fieldSelector"] == [
        "involvedObject.kind=Pod,involvedObject.name=gv-x"
    ]
    assert queries["/api/v1/namespaces/ns/pods/gv-x/log"]["container"] == ["probe"]
    assert "timestamps" not in queries["/api/v1/namespaces/ns/pods/gv-x/log"]


def test_a_log_with_timestamps_asks_the_api_for_them(cluster: KubeCluster):
    cluster.pod_log("ns", "gv-x", "tensorflow", timestamps=True)
    (query,) = [q for _verb, path, q, _body in Api.requests if path == "/api/v1/namespaces/ns/pods/gv-x/log"]
    # The client spells it `True`; the API server parses it with Go's strconv.ParseBool, which accepts that.
    assert query["timestamps"] == ["True"] and query["container"] == ["tensorflow"]


def test_creates_and_deletes_each_kind_at_its_path(cluster: KubeCluster):
    run = "20261126-100000-abcdef"
    namespace = probes.probe_namespace_name(run)
    objects = [
        probes.probe_namespace(run, "1.36"),
        *probes.standing_objects(run),
        probes.http_pod(namespace, run, "serving", {"a": "http://a"}, uid=10001, gid=10001),
    ]
    for obj in objects:
        cluster.create(obj)
    posted = [(path, body["metadata"]["name"]) for verb, path, _q, body in Api.requests if verb == "POST"]
    assert posted == [
        ("/api/v1/namespaces", namespace),
        (f"/api/v1/namespaces/{namespace}/configmaps", "gpuplane-runtime"),
        (f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies", f"gv-deny-ingress-{run}"),
        (f"/api/v1/namespaces/{namespace}/pods", f"gv-serving-{run}"),
    ]
    Api.requests = []
    cluster.delete("Pod", namespace, f"gv-serving-{run}")
    cluster.delete("NetworkPolicy", namespace, "p")
    cluster.delete("ConfigMap", namespace, "gpuplane-runtime")
    cluster.delete("Namespace", None, namespace)
    cluster.delete("Pod", namespace, "gone")  # already gone: fine
    assert [(verb, path) for verb, path, _q, _b in Api.requests] == [
        ("DELETE", f"/api/v1/namespaces/{namespace}/pods/gv-serving-{run}"),
        ("DELETE", f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies/p"),
        ("DELETE", f"/api/v1/namespaces/{namespace}/configmaps/gpuplane-runtime"),
        ("DELETE", f"/api/v1/namespaces/{namespace}"),
        ("DELETE", f"/api/v1/namespaces/{namespace}/pods/gone"),
    ]
    with pytest.raises(Exception, match="403"):
        cluster.delete("Pod", namespace, "forbidden")
    with pytest.raises(ValueError, match="not Deployment"):
        cluster.create({"kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}})


def test_an_unreachable_server_is_reported_as_such(cluster: KubeCluster):
    Api.down = True
    with pytest.raises(ClusterUnreachable, match="503"):
        cluster.server_version()


def test_training_runs_go_through_the_custom_object_paths(cluster: KubeCluster):
    assert cluster.get_jobset("ml", "mnist-verify")["metadata"]["uid"] == "u1"  # type: ignore[index]
    assert cluster.get_jobset("ml", "other") is None
    assert cluster.list_workloads("ml", "kueue.x-k8s.io/job-uid=u1") == [{"metadata": {"name": "w1"}}]
    cluster.create(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "mnist-verify", "namespace": "ml"},
            "spec": {},
        }
    )
    cluster.delete("JobSet", "ml", "mnist-verify")
    calls = [(verb, path, query, body) for verb, path, query, body in Api.requests]
    assert calls[2][1:3] == (
        "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads",
        {"labelSelector": ["kueue.x-k8s.io/job-uid=u1"]},
    )
    assert calls[3][:2] == ("POST", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets")
    verb, path, query, body = calls[4]
    assert (verb, path) == ("DELETE", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/mnist-verify")
    # Foreground: its Jobs, pods and Workload go first (the client sends it as a query parameter here).
    assert query.get("propagationPolicy") == ["Foreground"] or (body or {}).get("propagationPolicy") == "Foreground"


def test_the_service_proxy_keeps_the_path_and_passes_the_query(cluster: KubeCluster):
    promql = 'count by (model_name) (:tensorflow:serving:request_count{job=~".*x"})'
    text = cluster.service_proxy_get(
        "monitoring", "kube-prometheus-stack-prometheus", 9090, "api/v1/query", {"query": promql}
    )
    assert json.loads(text)["status"] == "success"
    ((verb, path, query, _body),) = Api.requests
    # The path's slashes stay slashes (the generated proxy method would send api%2Fv1%2Fquery) and the PromQL
    # arrives whole as a query parameter, with the bearer token of the kubeconfig.
    assert (verb, path, query) == ("GET", f"{PROXY}/api/v1/query", {"query": [promql]})
    assert Api.auth[-1] == "Bearer t"
    with pytest.raises(Exception, match="503") as caught:
        cluster.service_proxy_get("monitoring", "down", 9090, "api/v1/query", {"query": "up"})
    assert getattr(caught.value, "status", None) == 503
