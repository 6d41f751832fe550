"""The verify report: a terminal table, `report.json` (schema below) and a self-contained `report.html`.

Why the compare report's page style and tables: one look for what gpuplane writes under `.gpuplane/`, no
script, no external reference, opens offline. The JSON's schema is written here and the tests hold the
report to it, so scripts (CI gating on `ok`, dashboards of timings) can rely on its shape.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Final

from rich.table import Table
from rich.text import Text

from gpuplane.infra import compare_report
from gpuplane.infra.untrusted import shown
from gpuplane.infra.verify.model import STATUSES
from gpuplane.infra.verify.runner import RunReport

SCHEMA_VERSION: Final = 1
_STRING = {"type": "string"}
REPORT_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "gpuplane verify report",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "schemaVersion",
        "stack",
        "runId",
        "cluster",
        "region",
        "startedAt",
        "durationS",
        "ok",
        "interrupted",
        "counts",
        "checks",
        "cleanup",
    ],
    "properties": {
        "schemaVersion": {"const": SCHEMA_VERSION},
        "stack": _STRING,
        "runId": _STRING,
        "cluster": _STRING,
        "region": _STRING,
        "startedAt": {"type": "string", "format": "date-time"},
        "durationS": {"type": "number", "minimum": 0},
        "ok": {"type": "boolean"},
        "interrupted": {"type": "boolean"},
        "counts": {
            "type": "object",
            "additionalProperties": False,
            "required": list(STATUSES),
            "properties": {s: {"type": "integer", "minimum": 0} for s in STATUSES},
        },
        "checks": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "name",
                    "title",
                    "status",
                    "evidence",
                    "cause",
                    "fix",
                    "timings",
                    "details",
                    "durationS",
                    "proves",
                ],
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
                    "title": _STRING,
                    "status": {"enum": list(STATUSES)},
                    "evidence": {"type": "string", "minLength": 1},
                    "cause": _STRING,
                    "fix": _STRING,
                    "timings": {"type": "object", "additionalProperties": {"type": "number"}},
                    "details": {"type": "object"},
                    "durationS": {"type": "number", "minimum": 0},
                    "proves": _STRING,
                },
                "if": {"properties": {"status": {"const": "fail"}}},
                "then": {"properties": {"cause": {"minLength": 1}, "fix": {"minLength": 1}}},
            },
        },
        "cleanup": {
            "type": "object",
            "additionalProperties": False,
            "required": ["kept", "problems", "remove"],
            "properties": {
                "kept": {"type": "array", "items": _STRING},
                "problems": {"type": "array", "items": _STRING},
                "remove": {"type": "array", "items": _STRING},
            },
        },
    },
}


def document(report: RunReport) -> dict[str, Any]:
    """The report as JSON (REPORT_SCHEMA)."""
    return {
        "schemaVersion": SCHEMA_VERSION,
        "stack": report.stack,
        "runId": report.run_id,
        "cluster": report.cluster,
        "region": report.region,
        "startedAt": report.started_at,
        "durationS": round(report.duration_s, 1),
        "ok": report.ok,
        "interrupted": report.interrupted,
        "counts": {s: sum(r.outcome.status == s for r in report.results) for s in STATUSES},
        "checks": [r.as_dict() for r in report.results],
        "cleanup": {
            "kept": list(report.kept),
            "problems": list(report.cleanup_problems),
            "remove": list(report.remove),
        },
    }


# (text, style): consoles print literally (infra/options.py: markup off), so the colour comes as a style.
_STYLE: Final = {"pass": ("pass", "green"), "fail": ("FAIL", "bold red"), "skipped": ("skipped", "yellow")}


def _timings(timings: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in timings.items())


# Characters of one cell's text in the table: evidence can quote a whole node list (30,000 nodes), the
# report's files keep all of it.
CELL_LIMIT: Final = 600


def table(report: RunReport) -> Table:
    """One row per check: result, evidence, cause and fix, timings.

    What the cluster said is never read as markup (evidence like the autoscaler's `[{eks-gpu 0->1}]` is text)
    and reaches the terminal through `untrusted.shown`: control characters visible, each cell bounded.
    """
    result = Table(
        title=Text(
            shown(f"gpuplane verify: stack {report.stack} ({report.cluster}, {report.region}), run {report.run_id}")
        )
    )
    for column in ("check", "result", "evidence", "cause / fix", "time (s)"):
        result.add_column(column, overflow="fold")
    for r in report.results:
        o = r.outcome
        cause_fix = Text()
        if o.status == "fail":
            cause_fix.append(f"{shown(o.cause, CELL_LIMIT)}\n")
            cause_fix.append("Fix: ", style="bold")
            cause_fix.append(shown(o.fix, CELL_LIMIT))
        timing = f"{r.duration_s:.0f}" + (f"\n{shown(_timings(dict(o.timings)), CELL_LIMIT)}" if o.timings else "")
        evidence = Text(shown(o.evidence, CELL_LIMIT))
        result.add_row(Text(shown(r.name, 80)), Text(*_STYLE[o.status]), evidence, cause_fix, Text(timing))
    return result


def summary_line(report: RunReport) -> str:
    """`3 passed, 1 failed, 2 skipped in 95 s` (+ interrupted / clean-up notes)."""
    counts = document(report)["counts"]
    text = f"{counts['pass']} passed, {counts['fail']} failed, {counts['skipped']} skipped in {report.duration_s:.0f} s"
    if report.interrupted:
        text += "; interrupted"
    if report.cleanup_problems:
        text += f"; {len(report.cleanup_problems)} left behind"
    return text


def render_html(report: RunReport) -> str:
    """The report as one HTML page (no script, no external reference)."""
    esc = html.escape
    doc = document(report)
    rows = []
    for r in report.results:
        o = r.outcome
        status: Any = (o.status.upper(), "bad") if o.status == "fail" else o.status
        rows.append([r.name, status, o.evidence, o.cause, o.fix, f"{r.duration_s:.0f}"])
    sections = [
        f"<h1>gpuplane verify: stack {esc(report.stack)}</h1>",
        f"<p>Cluster <code>{esc(report.cluster)}</code> in {esc(report.region)}; run <code>{esc(report.run_id)}</code> "
        f"started {esc(report.started_at)}; {esc(summary_line(report))}.</p>",
        compare_report.html_table(
            ["check", "result", "evidence", "likely cause", "fix", "seconds"], rows, text_columns=5
        ),
    ]
    timing_rows = [[r.name, k, f"{v:g}"] for r in report.results for k, v in r.outcome.timings.items()]
    if timing_rows:
        sections += ["<h2>Timings</h2>", compare_report.html_table(["check", "what", "value"], timing_rows, 2)]
    proves = [[r.name, r.title, r.proves] for r in report.results]
    sections += ["<h2>What each check proves</h2>", compare_report.html_table(["check", "title", "proves"], proves, 3)]
    if report.kept:
        sections.append("<h2>Kept (--keep)</h2><ul>" + "".join(f"<li>{esc(k)}</li>" for k in report.kept) + "</ul>")
    if report.cleanup_problems:
        sections.append(
            "<h2>Left behind</h2><ul>"
            + "".join(f'<li class="bad">{esc(p)}</li>' for p in report.cleanup_problems)
            + "</ul>"
        )
    if report.remove:
        sections.append(
            "<h2>Remove with</h2><ul>" + "".join(f"<li><code>{esc(c)}</code></li>" for c in report.remove) + "</ul>"
        )
    title = f"gpuplane verify: {esc(report.stack)} ({'ok' if doc['ok'] else 'problems'})"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{compare_report.CSS}</style></head>"
        f"<body>{''.join(sections)}</body></html>\n"
    )


def write(report: RunReport, out_dir: Path) -> tuple[Path, Path]:
    """Write `report.json` and `report.html` into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out_dir / "report.json", out_dir / "report.html"
    json_path.write_text(json.dumps(document(report), indent=2, sort_keys=True) + "\n")
    html_path.write_text(render_html(report))
    return json_path, html_path
