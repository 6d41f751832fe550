"""The `gpuplane compare` report: a terminal table, a JSON file with every number, a self-contained HTML page.

Why SVG written here and not a charting library: the page must open in a browser with no network (no CDN,
no script), be diffable, and add no dependency. Two kinds of chart answer the questions a team asks when
choosing a variant: latency by image size per variant and format (does a GPU pay off, does PNG cost more
than JPEG?), and throughput by concurrency (where does each variant saturate?).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

PALETTE: Final = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
DASHES: Final = ("", "6 4", "2 3", "8 3 2 3")


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def notes(summary: dict[str, Any]) -> list[str]:
    """Plain-language caveats the numbers need next to them."""
    out = []
    if summary.get("singleVariant"):
        out.append(
            f"Single-variant benchmark: only '{summary['variants'][0]}' serves this model, so nothing is compared "
            "across variants."
        )
    if summary.get("mode") == "tensor":
        out.append(
            "The model takes a decoded tensor, not an encoded image: the client decodes and resizes, so image format "
            "and size change only the client's work and the pixels, not what the server decodes."
        )
    else:
        out.append('The model takes encoded images ({"b64": ...}): format and size change what the server decodes.')
    saturated = [c for c in summary.get("cells", []) if c.get("client", {}).get("saturated")]
    if saturated:
        cells = ", ".join(f"{c['variant']} {c['size']}px {c['format']} x{c['concurrency']}" for c in saturated[:6])
        out.append(
            f"The client was CPU-saturated in {len(saturated)} cell(s) ({cells}): their latency and throughput "
            "measure the client, not the server. Raise the client's CPU or lower the concurrency."
        )
    return out


def table(summary: dict[str, Any]) -> Table:
    """One row per cell, sorted the way the run went."""
    result = Table(title=f"gpuplane compare: model {summary['model']} (run {summary['runId']})")
    for column in ("variant", "size", "format", "conc.", "requests", "errors", "p50 ms", "p90 ms", "p99 ms", "req/s"):
        result.add_column(column, justify="left" if column in ("variant", "format") else "right")
    result.add_column("client CPU", justify="right")
    for c in summary["cells"]:
        client = c.get("client", {})
        cpu = Text(_fmt(client.get("cpuCores"), 2))
        if client.get("saturated"):
            cpu.append(" saturated", style="red")
        errors = Text(str(c["errors"]), style="red") if c["errors"] else Text("0")
        result.add_row(
            c["variant"],
            str(c["size"]),
            c["format"],
            str(c["concurrency"]),
            str(c["requests"]),
            errors,
            _fmt(c["p50Ms"]),
            _fmt(c["p90Ms"]),
            _fmt(c["p99Ms"]),
            _fmt(c["throughputRps"]),
            cpu,
        )
    return result


def print_report(summary: dict[str, Any], console: Console) -> None:
    """The table and the caveats on the terminal."""
    console.print(table(summary))
    for line in notes(summary):
        console.print(Text(f"- {line}"), soft_wrap=True)


# --- charts -----------------------------------------------------------------------------------------

Series = dict[str, list[tuple[float, float]]]


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        high = low + 1.0
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value <= high + step * 0.5:
        ticks.append(round(value, 10))
        value += step
    return ticks


def line_chart(title: str, x_label: str, y_label: str, series: Series, *, log_x: bool = False) -> str:
    """An inline SVG line chart with axes, ticks, one polyline per series and a legend."""
    width, height = 640, 360
    left, right, top, bottom = 64, 190, 36, 48
    plot_w, plot_h = width - left - right, height - top - bottom
    points = [p for values in series.values() for p in values if not math.isnan(p[1])]
    xs = sorted({p[0] for p in points}) or [1.0]
    y_max = max((p[1] for p in points), default=1.0)
    y_ticks = _ticks(0.0, y_max * 1.05 if y_max > 0 else 1.0)
    y_top = y_ticks[-1]

    def sx(x: float) -> float:
        if len(xs) == 1:
            return left + plot_w / 2
        if log_x:
            lo, hi = math.log2(xs[0]), math.log2(xs[-1])
            return left + (math.log2(x) - lo) / (hi - lo) * plot_w
        return left + (x - xs[0]) / (xs[-1] - xs[0]) * plot_w

    def sy(y: float) -> float:
        return top + plot_h - (y / y_top) * plot_h

    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" aria-label="{esc(title)}">',
        f"<title>{esc(title)}</title>",
        f'<text x="{left}" y="20" class="title">{esc(title)}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" class="axis"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" class="axis"/>',
    ]
    for tick in y_ticks:
        y = sy(tick)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">{tick:g}</text>')
    for x in xs:
        parts.append(f'<text x="{sx(x):.1f}" y="{top + plot_h + 16}" class="tick" text-anchor="middle">{x:g}</text>')
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 8}" class="label" text-anchor="middle">{esc(x_label)}</text>'
    )
    parts.append(
        f'<text x="14" y="{top + plot_h / 2}" class="label" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + plot_h / 2})">{esc(y_label)}</text>'
    )
    for index, (name, values) in enumerate(series.items()):
        color = PALETTE[index % len(PALETTE)]
        dash = DASHES[(index // len(PALETTE)) % len(DASHES)]
        good = [(x, y) for x, y in sorted(values) if not math.isnan(y)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in good)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<polyline class="series" data-series="{esc(name)}" points="{path}" fill="none" stroke="{color}" '
            f'stroke-width="2"{dash_attr}/>'
        )
        for x, y in good:
            parts.append(
                f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{color}"><title>{esc(name)}: {x:g}, '
                f"{y:.2f}</title></circle>"
            )
        ly = top + 8 + index * 18
        parts.append(
            f'<line x1="{left + plot_w + 12}" y1="{ly}" x2="{left + plot_w + 32}" y2="{ly}" stroke="{color}" '
            f'stroke-width="2"{dash_attr}/>'
        )
        parts.append(f'<text x="{left + plot_w + 38}" y="{ly + 4}" class="legend">{esc(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def latency_series(summary: dict[str, Any], concurrency: int, stat: str = "p50Ms") -> Series:
    """`stat` latency by size, one series per variant and format, at one concurrency level."""
    series: Series = {}
    for c in summary["cells"]:
        if c["concurrency"] == concurrency:
            value = c[stat]
            series.setdefault(f"{c['variant']} {c['format']}", []).append(
                (float(c["size"]), math.nan if value is None else float(value))
            )
    return series


def throughput_series(summary: dict[str, Any], size: int) -> Series:
    """Throughput by concurrency, one series per variant and format, at one image size."""
    series: Series = {}
    for c in summary["cells"]:
        if c["size"] == size:
            series.setdefault(f"{c['variant']} {c['format']}", []).append(
                (float(c["concurrency"]), float(c["throughputRps"]))
            )
    return series


# --- HTML -------------------------------------------------------------------------------------------

_CSS: Final = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px} h2{font-size:18px;margin-top:28px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right} th{background:#f2f2f2}
td.t,th.t{text-align:left} td.bad{color:#b00;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.chart{border:1px solid #ddd;background:#fff}
.chart .title{font-size:14px;font-weight:600} .chart .tick{font-size:11px;fill:#555}
.chart .label{font-size:12px;fill:#333} .chart .legend{font-size:12px}
.chart .axis{stroke:#333} .chart .grid{stroke:#eee}
.note{background:#fff8e1;border-left:4px solid #f0b400;padding:6px 10px;margin:6px 0}
"""


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], text_columns: int = 1) -> str:
    esc = html.escape
    head = "".join(f'<th class="{"t" if i < text_columns else ""}">{esc(h)}</th>' for i, h in enumerate(headers))
    body = []
    for row in rows:
        cells = []
        for i, item in enumerate(row):
            css = "t" if i < text_columns else ""
            text = item
            if isinstance(item, tuple):  # (text, css class)
                text, css = item[0], f"{css} {item[1]}"
            cells.append(f'<td class="{css.strip()}">{esc(str(text))}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


# The page's look and its tables, shared with `gpuplane verify`'s report (infra/verify/report.py).
CSS: Final = _CSS
html_table = _html_table


def render_html(summary: dict[str, Any], machine: dict[str, Any]) -> str:
    """The whole report as one HTML page: no script, no external reference of any kind."""
    esc = html.escape
    sections = [
        f"<h1>gpuplane compare: model {esc(summary['model'])}</h1>",
        f"<p>Run <code>{esc(summary['runId'])}</code>; variants {esc(', '.join(summary['variants']))}; "
        f"inputs: {esc(str(summary.get('inputs', '')))}; {summary['durationS']:g} s per cell; input "
        f"<code>{esc(summary['input']['name'])}</code> ({esc(summary['input']['dtype'])}).</p>",
    ]
    sections += [f'<p class="note">{esc(n)}</p>' for n in notes(summary)]
    sections.append("<h2>Latency by image size</h2><div class='charts'>")
    for concurrency in summary["concurrency"]:
        sections.append(
            line_chart(
                f"p50 latency at concurrency {concurrency}",
                "image size (px, longest side)",
                "p50 latency (ms)",
                latency_series(summary, concurrency),
                log_x=True,
            )
        )
    sections.append("</div><h2>Throughput by concurrency</h2><div class='charts'>")
    for size in summary["sizes"]:
        sections.append(
            line_chart(
                f"throughput at {size} px",
                "concurrent requests",
                "requests per second",
                throughput_series(summary, size),
                log_x=True,
            )
        )
    sections.append("</div><h2>Every cell</h2>")
    rows = []
    for c in summary["cells"]:
        client = c.get("client", {})
        rows.append(
            [
                c["variant"],
                c["format"],
                c["size"],
                c["concurrency"],
                c["requests"],
                (c["errors"], "bad") if c["errors"] else 0,
                _fmt(c["errorRate"] * 100, 2),
                _fmt(c["p50Ms"]),
                _fmt(c["p90Ms"]),
                _fmt(c["p99Ms"]),
                _fmt(c["throughputRps"]),
                (f"{_fmt(client.get('cpuCores'), 2)} saturated", "bad")
                if client.get("saturated")
                else _fmt(client.get("cpuCores"), 2),
            ]
        )
    sections.append(
        _html_table(
            [
                "variant",
                "format",
                "size",
                "concurrency",
                "requests",
                "errors",
                "error %",
                "p50 ms",
                "p90 ms",
                "p99 ms",
                "req/s",
                "client CPU (cores)",
            ],
            rows,
            text_columns=2,
        )
    )
    agreement = summary.get("agreement", {})
    sections.append("<h2>Output agreement</h2>")
    sections.append(
        "<p>Top-1: share of images whose top class matches the reference. Max abs diff: the largest difference of "
        "any output value.</p>"
    )
    variant_rows = [
        [a["variant"], a["reference"], a["format"], a["size"], a["kind"], _fmt(a["value"], 4), a["images"]]
        for a in agreement.get("betweenVariants", [])
    ]
    if variant_rows:
        sections.append(
            _html_table(["variant", "reference", "format", "size", "measure", "value", "images"], variant_rows, 3)
        )
    size_rows = [
        [a["variant"], a["format"], a["size"], a["referenceSize"], a["kind"], _fmt(a["value"], 4), a["images"]]
        for a in agreement.get("betweenSizes", [])
    ]
    if size_rows:
        sections.append(
            _html_table(["variant", "format", "size", "reference size", "measure", "value", "images"], size_rows, 2)
        )
    sections.append("<h2>Machines</h2>")
    machine_rows = [
        [
            v["name"],
            v.get("serving", ""),
            ", ".join(v.get("instanceTypes", [])) or "-",
            v.get("cpuLimit") or "-",
            v.get("memoryLimit") or "-",
            v.get("gpus", 0),
            v.get("gpuModel") or "-",
            v.get("gpuSharing") or "-",
            v.get("replicas", 1),
        ]
        for v in machine.get("variants", [])
    ]
    sections.append(
        _html_table(
            [
                "variant",
                "serving",
                "instance types",
                "CPU limit",
                "memory limit",
                "GPUs",
                "GPU model",
                "GPU sharing",
                "replicas",
            ],
            machine_rows,
            3,
        )
    )
    client = machine.get("client", {})
    if client:
        sections.append(
            f"<p>Client: {esc(str(client.get('cpu')))} CPU, {esc(str(client.get('memory')))} memory, "
            f"image <code>{esc(str(client.get('image')))}</code>, measured CPU limit "
            f"{esc(_fmt(summary.get('clientCpuLimit'), 2))}.</p>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>gpuplane compare: {esc(summary['model'])}</title><style>{_CSS}</style></head>"
        f"<body>{''.join(sections)}</body></html>\n"
    )


def write(summary: dict[str, Any], machine: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write `report.json` (every number, the machine facts, the caveats) and `report.html`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "report.json"
    html_path = out_dir / "report.html"
    document = {"summary": summary, "machine": machine, "notes": notes(summary)}
    json_path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    html_path.write_text(render_html(summary, machine))
    return json_path, html_path
