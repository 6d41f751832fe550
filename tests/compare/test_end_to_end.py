"""`gpuplane compare` end to end against a local stand-in serving a real SavedModel (installs TensorFlow CPU).

Two stand-in "variants" serve the same SavedModel behind TF Serving's REST shape; one sleeps 5 ms per
request, the other 125 ms, which is far more than this machine's run-to-run noise, and the slow one fails
every 4th predict. A cell lasts 1 s: 8 requests of the slow variant at concurrency 1 on a quiet machine, and any
4 in a row hold a failure, so even a busy machine's cell has its error. The very client the Job runs (same
file, same config) runs here with `--endpoint`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplane.infra.cli import app
from tests.compare.conftest import write_stack
from tests.runtime.test_helper_tensorflow import tf_python  # noqa: F401 - the shared TensorFlow venv fixture

pytestmark = pytest.mark.tensorflow

STANDIN = Path(__file__).with_name("standin.py")
FAST_S, SLOW_S, FAIL_EVERY = 0.005, 0.125, 4


@pytest.fixture(scope="module", params=["encoded", "tensor"])
def standins(request, tf_python: Path, tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:  # noqa: F811
    """One stand-in process per mode: it builds the mode's SavedModel and serves it as both variants."""
    tmp = tmp_path_factory.mktemp(f"standin-{request.param}")
    ports = {"gpu": tmp / "port-gpu", "cpu1": tmp / "port-cpu1"}
    process = subprocess.Popen(
        [
            str(tf_python), str(STANDIN), str(tmp / "model"), request.param, "resnet",
            f"{FAST_S}:0:{ports['gpu']}", f"{SLOW_S}:{FAIL_EVERY}:{ports['cpu1']}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp)},  # AutoGraph's files (one per tf.function) stay out of /tmp
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not all(port.exists() for port in ports.values()):
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                _, err = process.communicate()
                raise AssertionError(f"stand-in did not start: {err.decode()[-3000:]}")
            time.sleep(0.2)
        yield request.param, {variant: f"http://127.0.0.1:{port.read_text()}" for variant, port in ports.items()}
    finally:
        process.kill()
        process.wait()


SERVING = [
    {
        "name": "resnet",
        "model": {"name": "resnet", "volume": "models", "path": "resnet"},
        "variants": [
            {"name": "gpu", "resources": {"limits": {"cpu": "4", "memory": "8Gi"}, "gpus": 1}},
            {"name": "cpu1", "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
        ],
    }
]


def test_compare_end_to_end(standins, tf_python: Path, tmp_path: Path, monkeypatch):  # noqa: F811
    mode, urls = standins
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # for the TensorFlow client `compare` starts (AutoGraph's files)
    stacks = write_stack(tmp_path / "stacks", serving=SERVING)
    out = tmp_path / "report"
    result = CliRunner().invoke(
        app,
        [
            "compare", "sample", "--model", "resnet", "--stacks-dir", str(stacks),
            "--sizes", "64,256", "--formats", "jpeg,png", "--concurrency", "1,4", "--duration", "1",
            "--endpoint", f"gpu={urls['gpu']}", "--endpoint", f"cpu1={urls['cpu1']}",
            "--client-python", str(tf_python), "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads((out / "report.json").read_text())
    summary = document["summary"]
    assert summary["mode"] == mode
    cells = {(c["variant"], c["size"], c["format"], c["concurrency"]): c for c in summary["cells"]}
    assert len(cells) == 2 * 2 * 2 * 2
    for (variant, size, fmt, conc), c in cells.items():
        other = cells[("cpu1" if variant == "gpu" else "gpu", size, fmt, conc)]
        fast, slow = (c, other) if variant == "gpu" else (other, c)
        # Latency: the injected delays (5 ms vs 125 ms) order the variants and bound the medians. Compared by
        # difference, not ratio: a loaded machine adds its own time to both (the model's compute, the client's),
        # which once made the fast median 91 ms against 176 ms, 85 ms apart, and a ratio of 1:2 fail.
        assert slow["p50Ms"] - fast["p50Ms"] >= (SLOW_S - FAST_S) * 1000 / 2, (fast["p50Ms"], slow["p50Ms"])
        assert slow["p50Ms"] >= SLOW_S * 1000
        assert fast["p50Ms"] >= FAST_S * 1000
        assert fast["p50Ms"] <= fast["p90Ms"] <= fast["p99Ms"]
        # Throughput follows: a closed loop of `conc` workers cannot beat conc / delay.
        assert fast["throughputRps"] > slow["throughputRps"]
        assert slow["throughputRps"] <= conc / SLOW_S * 1.05
        # Errors: only the slow variant fails, every 4th predict (warm-up predicts count in the server's
        # counter too, so the share is about 1/4, give or take one request per cell).
        assert fast["errors"] == 0
        assert slow["errors"] >= 1
        assert abs(slow["errors"] - slow["requests"] / FAIL_EVERY) <= 1 + conc
        assert slow["errorSamples"] and slow["errorSamples"][0].startswith("HTTP 500")
    # Concurrency keeps that many requests in flight: by Little's law, a closed loop's requests in flight are its
    # throughput times its mean latency, about 3 of 4 here and under 1 of 1 (the client's own time between
    # requests and the failed predicts are the rest). A client that sent one request at a time would show the same
    # number for both. A ratio of throughputs alone was not enough: on a loaded machine a stall in a 1 s cell cut
    # the 4-way cell's throughput to 1.45 times the 1-way cell's, while the requests it keeps in flight do not
    # depend on how fast they are answered. Concurrency still raises the slow variant's throughput (its delay is a
    # sleep, not CPU).
    slow_1, slow_4 = cells[("cpu1", 64, "jpeg", 1)], cells[("cpu1", 64, "jpeg", 4)]
    in_flight = {c["concurrency"]: c["throughputRps"] * c["meanMs"] / 1000 for c in (slow_1, slow_4)}
    assert in_flight[4] > 2 * in_flight[1], in_flight
    assert slow_4["throughputRps"] > slow_1["throughputRps"]
    # Same model behind both: the variants agree on every image that both answered in warm-up.
    for entry in summary["agreement"]["betweenVariants"]:
        assert entry["kind"] == "top1"
        assert entry["value"] == 1.0
    assert {(e["variant"], e["size"]) for e in summary["agreement"]["betweenSizes"]} == {("gpu", 64), ("cpu1", 64)}
    raw = (out / "raw" / summary["runId"] / "requests.jsonl").read_text().splitlines()
    assert len(raw) == sum(c["requests"] for c in summary["cells"])
    html = (out / "report.html").read_text()
    assert html.count("<svg") == len(summary["concurrency"]) + len(summary["sizes"])
    assert "gpu jpeg" in html and "cpu1 png" in html
    if mode == "tensor":
        assert "change only the client" in html
    assert "Single-variant" not in html
