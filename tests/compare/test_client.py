"""The client's pure parts (statistics, agreement, CPU accounting, signature reading), without TensorFlow."""

from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1.0, 2.0, 3.0, 4.0, 5.0], 50, 3.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
        ([10.0, 20.0], 90, 19.0),
        (list(map(float, range(1, 101))), 99, 99.01),
        ([7.0], 99, 7.0),
    ],
)
def test_percentile_interpolates_like_numpy(client, values, q, expected):
    assert client.percentile(values, q) == pytest.approx(expected)


def test_percentile_of_nothing_is_nan(client):
    assert math.isnan(client.percentile([], 50))


def test_cell_stats_counts_errors_and_uses_successes_only(client):
    samples = [client.Sample(i * 0.1, (i + 1) / 1000, True) for i in range(9)]
    samples.append(client.Sample(1.0, 5.0, False, "HTTP 500: boom"))
    samples.append(client.Sample(1.1, 5.0, False, "HTTP 500: boom"))
    stats = client.cell_stats(samples, wall_s=2.0)
    assert stats["requests"] == 11
    assert stats["errors"] == 2
    assert stats["errorRate"] == pytest.approx(2 / 11, abs=1e-6)
    assert stats["p50Ms"] == pytest.approx(5.0)  # median of 1..9 ms; the 5 s failures are not latencies
    assert stats["throughputRps"] == pytest.approx(4.5)
    assert stats["errorSamples"] == ["HTTP 500: boom"]


@pytest.mark.parametrize(
    ("reference", "other", "kind", "value"),
    [
        ([[0.1, 0.9], [0.8, 0.2]], [[0.2, 0.8], [0.3, 0.7]], "top1", 0.5),
        ([[0.1, 0.9], [0.8, 0.2]], [[0.1, 0.9], [0.8, 0.2]], "top1", 1.0),
        ([0.5, 1.5], [0.75, 1.0], "maxAbsDiff", 0.5),
        ([[[1.0, 2.0]], [[3.0]]], [[[1.0, 2.5]], [[2.0]]], "maxAbsDiff", 1.0),
    ],
)
def test_agreement(client, reference, other, kind, value):
    result = client.agreement(reference, other)
    assert result["kind"] == kind
    assert result["value"] == pytest.approx(value)


def test_agreement_skips_failed_answers_and_reports_shape_mismatch(client):
    assert client.agreement([None, [0.2, 0.8]], [[0.9, 0.1], [0.1, 0.9]])["images"] == 1
    mismatch = client.agreement([[1.0, 2.0, 3.0, 4.0]], [[[1.0], [2.0]]])
    assert mismatch["value"] is None


def test_agreement_table_references_first_variant_and_largest_size(client):
    outputs = {
        ("gpu", 128, "jpeg"): [[0.9, 0.1], [0.2, 0.8]],
        ("gpu", 512, "jpeg"): [[0.9, 0.1], [0.7, 0.3]],
        ("cpu", 128, "jpeg"): [[0.9, 0.1], [0.2, 0.8]],
        ("cpu", 512, "jpeg"): [[0.1, 0.9], [0.7, 0.3]],
    }
    table = client.agreement_table(outputs, ["gpu", "cpu"])
    by_size = {a["size"]: a["value"] for a in table["betweenVariants"]}
    assert by_size == {128: 1.0, 512: 0.5}
    sizes = {(a["variant"], a["size"]): a["value"] for a in table["betweenSizes"]}
    assert sizes == {("gpu", 128): 0.5, ("cpu", 128): 0.0}
    assert all(a["referenceSize"] == 512 for a in table["betweenSizes"])


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"cpu.max": "150000 100000\n"}, 1.5),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 0.5),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
    ],
)
def test_cgroup_cpu_limit(client, tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert client.cgroup_cpu_limit(str(tmp_path)) == expected


@pytest.mark.parametrize(
    ("cpu_s", "wall_s", "limit", "saturated"),
    [
        (0.9, 1.0, 2.0, True),  # most of one core: the GIL-bound client is the bottleneck
        (0.5, 1.0, 2.0, False),
        (0.45, 1.0, 0.5, True),  # most of a half-core limit
        (0.2, 1.0, None, False),
    ],
)
def test_client_load_flags_saturation(client, cpu_s, wall_s, limit, saturated):
    load = client.client_load(cpu_s, wall_s, limit)
    assert load["saturated"] is saturated
    assert load["cpuCores"] == pytest.approx(cpu_s / wall_s)


METADATA = {
    "metadata": {
        "signature_def": {
            "signature_def": {
                "serving_default": {
                    "inputs": {"image_bytes": {"dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1"}]}}},
                    "outputs": {"scores": {"dtype": "DT_FLOAT"}, "classes": {"dtype": "DT_INT64"}},
                }
            }
        }
    }
}


def test_input_spec_reads_tf_serving_metadata(client):
    spec = client.input_spec(METADATA, "serving_default")
    assert (spec.name, spec.dtype, spec.shape, spec.encoded, spec.output) == (
        "image_bytes",
        "DT_STRING",
        [-1],
        True,
        "classes",
    )
    with pytest.raises(RuntimeError, match="no signature 'other'"):
        client.input_spec(METADATA, "other")


def test_request_body_and_prediction_shapes(client):
    spec = client.InputSpec("image_bytes", "DT_STRING", [-1], "scores")
    body = json.loads(client.request_body({"b64": "AAA="}, spec, "serving_default"))
    assert body == {"signature_name": "serving_default", "instances": [{"image_bytes": {"b64": "AAA="}}]}
    assert client.prediction_of({"predictions": [{"scores": [0.1, 0.9], "classes": 1}]}, spec) == [0.1, 0.9]
    assert client.prediction_of({"predictions": [[0.3, 0.7]]}, spec) == [0.3, 0.7]


class _Fixed(BaseHTTPRequestHandler):
    """Answers every predict with 200, except bodies containing "fail", which get a 500."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        status = 500 if b"fail" in body else 200
        data = b'{"predictions": [[1.0, 0.0]]}'
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.mark.parametrize("concurrency", [1, 4])
def test_closed_loop_stops_at_max_requests_and_counts_errors(client, concurrency):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Fixed)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = client.Endpoint("x", f"http://127.0.0.1:{server.server_address[1]}", 5.0)
        samples, _ = client.closed_loop(
            endpoint,
            "/v1/models/m:predict",
            [b"ok", b"fail"],
            concurrency=concurrency,
            duration_s=30.0,
            max_requests=40,
        )
    finally:
        server.shutdown()
    assert len(samples) == 40
    # Each worker alternates ok/fail inputs, so the failures are half, give or take one per worker.
    assert abs(sum(not s.ok for s in samples) - 20) <= concurrency - 1
    assert all(s.error.startswith("HTTP 500") for s in samples if not s.ok)
