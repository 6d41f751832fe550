"""The report: terminal table, JSON with every number, and an HTML page that a real headless browser renders."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from gpuplane.infra import compare_report
from tests import tools

MACHINE = {
    "variants": [
        {"name": "gpu", "serving": "resnet", "instanceTypes": ["g5.xlarge"], "cpuLimit": "4", "gpus": 1,
         "gpuModel": "A10G", "gpuSharing": "none", "replicas": 1},
        {"name": "cpu8", "serving": "resnet", "instanceTypes": ["m6i.large"], "cpuLimit": "8", "gpus": 0,
         "replicas": 2},
    ],
    "client": {"cpu": "1500m", "memory": "3Gi", "image": "tensorflow/tensorflow:2.21.0"},
}  # fmt: skip


def test_json_holds_every_number_and_the_machine(summary, tmp_path):
    json_path, html_path = compare_report.write(summary, MACHINE, tmp_path)
    document = json.loads(json_path.read_text())
    assert document["summary"] == summary
    assert document["machine"] == MACHINE
    assert html_path.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"singleVariant": True, "variants": ["gpu"]}, "Single-variant benchmark: only 'gpu' serves this model"),
        ({"mode": "tensor"}, "format and size change only the client's work"),
        ({"mode": "encoded"}, "format and size change what the server decodes"),
    ],
)
def test_notes_say_what_the_numbers_mean(summary, changes, expected):
    assert any(expected in n for n in compare_report.notes(summary | changes))


def test_saturated_client_is_reported(summary):
    summary["cells"][3]["client"] = {"cpuCores": 0.95, "cpuLimit": 2.0, "saturated": True}
    note = next(n for n in compare_report.notes(summary) if "CPU-saturated" in n)
    c = summary["cells"][3]
    assert f"{c['variant']} {c['size']}px {c['format']} x{c['concurrency']}" in note
    console = Console(width=200, record=True)
    compare_report.print_report(summary, console)
    assert "saturated" in console.export_text()


def test_terminal_table_rows(summary):
    console = Console(width=200, record=True)
    console.print(compare_report.table(summary))
    text = console.export_text()
    first = summary["cells"][0]
    row = next(line for line in text.splitlines() if f"{first['p50Ms']:.1f}" in line and "gpu" in line)
    assert "jpeg" in row and f"{first['throughputRps']:.1f}" in row


def test_series_pick_the_right_cells(summary):
    latency = compare_report.latency_series(summary, 4)
    assert sorted(latency) == ["cpu8 jpeg", "cpu8 png", "gpu jpeg", "gpu png"]
    expected = {(c["size"], c["p50Ms"]) for c in summary["cells"] if c["concurrency"] == 4 and c["variant"] == "gpu"
                and c["format"] == "png"}  # fmt: skip
    assert set(latency["gpu png"]) == {(float(s), float(v)) for s, v in expected}
    throughput = compare_report.throughput_series(summary, 512)
    assert [x for x, _ in throughput["cpu8 jpeg"]] == [1.0, 4.0, 16.0]


def test_chart_places_points_by_value():
    svg = compare_report.line_chart("t", "x", "y", {"a": [(1.0, 0.0), (4.0, 10.0)], "b": [(1.0, 5.0)]}, log_x=True)
    points = re.search(r'data-series="a" points="([^"]+)"', svg)
    assert points is not None
    (x1, y1), (x2, y2) = (tuple(map(float, p.split(","))) for p in points.group(1).split())
    assert x1 < x2 and y1 > y2  # left to right, and a higher value is higher up (smaller y)
    b_point = re.search(r'data-series="b" points="([^"]+)"', svg)
    assert b_point is not None
    b_y = float(b_point.group(1).split(",")[1])
    assert b_y == pytest.approx((y1 + y2) / 2, abs=1.0)  # 5 sits halfway between 0 and 10


_EXTERNAL = re.compile(r"(<script|<link|<img|<iframe|\bsrc=|\bhref=|url\(|@import)", re.IGNORECASE)


def test_html_is_self_contained(summary, tmp_path):
    _, html_path = compare_report.write(summary, MACHINE, tmp_path)
    html = html_path.read_text()
    assert not _EXTERNAL.search(html)
    # The only URL is the SVG namespace, an identifier that no browser fetches.
    assert set(re.findall(r"https?://[^\"' <]+", html)) == {"http://www.w3.org/2000/svg"}
    assert html.count("<svg") == len(summary["concurrency"]) + len(summary["sizes"])
    assert "A10G" in html and "tensorflow/tensorflow:2.21.0" in html


_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
    # Any attempt to reach the network fails (and would show up as a console error).
    "--host-resolver-rules=MAP * ~NOTFOUND",
]


def _browse(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    chromium = tools.need("chromium")  # skips the test where Chromium is missing (tests/tools.py)
    return subprocess.run(
        [chromium, *_FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.tool("chromium")
def test_report_renders_in_headless_chromium(summary: dict[str, Any], tmp_path: Path):
    _, html_path = compare_report.write(summary, MACHINE, tmp_path)
    done = _browse(html_path, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _console_messages(done.stderr) == []
    dom = done.stdout
    charts = len(summary["concurrency"]) + len(summary["sizes"])
    assert dom.count("<svg") == charts
    assert dom.count("<polyline") == charts * 4  # 2 variants x 2 formats per chart
    shot = tmp_path / "shot.png"
    done = _browse(html_path, tmp_path / "profile2", f"--screenshot={shot}", "--window-size=1400,1600")
    assert done.returncode == 0
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.tool("chromium")
def test_console_check_catches_errors(tmp_path: Path):
    """The console check above can fail: a page that logs an error is caught."""
    page = tmp_path / "bad.html"
    page.write_text('<html><body><script>console.error("broken chart")</script></body></html>')
    done = _browse(page, tmp_path / "profile", "--dump-dom")
    assert any("broken chart" in line for line in _console_messages(done.stderr))
