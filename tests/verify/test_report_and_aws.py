"""The report (JSON against its schema, HTML offline and in Chromium), the AWS seam (Stubber), teardown and skips."""

from __future__ import annotations

import json
import re
from pathlib import Path

import boto3
import jsonschema
import pytest
from botocore.stub import Stubber
from rich.console import Console

from gpuplane.infra.verify import aws as verify_aws
from gpuplane.infra.verify import checks_other, report
from gpuplane.infra.verify.model import CheckFailed, Outcome, skipped
from gpuplane.infra.verify.runner import Result, RunReport
from tests.compare.test_report import _browse, _console_messages
from tests.verify.fakes import FakeAws, FakeCluster


def _report(**extra) -> RunReport:
    run = RunReport("dev", "20261126-100000-abcdef", "gpuplane-dev", "us-west-2", "2026-11-26T10:00:00+00:00")
    run.results = [
        Result("api", "API", Outcome("pass", "API server answers, Kubernetes 1.36 as configured"), 0.4, "answers"),
        Result(
            "gpu-gpu",
            "GPU",
            Outcome(
                "fail",
                "pod <gv-gpu> cannot be scheduled",
                "no capacity",
                "add instance types",
                {"imagePull": 62.5, "timeToFirstGpuPod": 240.0},
            ),
            301.0,
        ),
        Result("serving", "Serving", skipped("needs api (fail)")),
    ]
    run.duration_s = 302.0
    for key, value in extra.items():
        setattr(run, key, value)
    return run


def test_json_matches_its_schema_and_counts():
    document = report.document(_report())
    jsonschema.Draft202012Validator.check_schema(report.REPORT_SCHEMA)
    jsonschema.validate(document, report.REPORT_SCHEMA, format_checker=jsonschema.FormatChecker())
    assert document["counts"] == {"pass": 1, "fail": 1, "skipped": 1}
    assert document["ok"] is False
    assert document["checks"][1]["timings"] == {"imagePull": 62.5, "timeToFirstGpuPod": 240.0}


def test_the_schema_refuses_a_failure_without_cause_or_fix():
    document = report.document(_report())
    document["checks"][1]["fix"] = ""
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, report.REPORT_SCHEMA)


def test_files_are_written_and_html_is_self_contained(tmp_path: Path):
    json_path, html_path = report.write(_report(cleanup_problems=["Pod ml/x: Forbidden"]), tmp_path / "run")
    assert json.loads(json_path.read_text())["cleanup"]["problems"] == ["Pod ml/x: Forbidden"]
    page = html_path.read_text()
    assert "<script" not in page and not re.search(r"(src|href)=", page)
    assert 'class="t bad">FAIL' in page and "&lt;gv-gpu&gt;" in page  # escaped
    assert "timeToFirstGpuPod" in page and "Left behind" in page


def test_what_the_cluster_says_is_never_markup():
    run = _report()
    run.results[1] = Result(
        "gpu-gpu", "GPU", Outcome("fail", "pod triggered scale-up: [{eks-gpu 0->1 (max: 2)}] [bold]x[/]", "c", "f")
    )
    console = Console(record=True, width=300)
    console.print(report.table(run))
    assert "[{eks-gpu 0->1 (max: 2)}] [bold]x[/]" in console.export_text()


def test_table_and_summary():
    console = Console(record=True, width=200)
    console.print(report.table(_report(interrupted=True)))
    text = console.export_text()
    assert "gpu-gpu" in text and "FAIL" in text and "Fix: add instance types" in text
    assert report.summary_line(_report(interrupted=True)) == "1 passed, 1 failed, 1 skipped in 302 s; interrupted"


def test_report_renders_in_headless_chromium(tmp_path: Path):
    _, html_path = report.write(_report(), tmp_path)
    done = _browse(html_path, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _console_messages(done.stderr) == []
    assert done.stdout.count("<tr>") >= 4


# --- the AWS seam against botocore's EKS model ----------------------------------------------------------------


def test_stack_aws_lists_and_describes_addons_through_pages():
    eks = boto3.client("eks", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="y")
    stub = Stubber(eks)
    stub.add_response("list_addons", {"addons": ["vpc-cni"], "nextToken": "t"}, {"clusterName": "c"})
    stub.add_response("list_addons", {"addons": ["coredns"]}, {"clusterName": "c", "nextToken": "t"})
    for name, status in (("vpc-cni", "ACTIVE"), ("coredns", "DEGRADED")):
        stub.add_response(
            "describe_addon",
            {
                "addon": {
                    "addonName": name,
                    "clusterName": "c",
                    "status": status,
                    "addonVersion": "v1.2.3-eksbuild.1",
                    "health": {"issues": []},
                }
            },
            {"clusterName": "c", "addonName": name},
        )
    with stub:
        found = verify_aws.StackAws(None, lambda: None, eks=eks).addons("c")  # type: ignore[arg-type]
    assert {n: a["status"] for n, a in found.items()} == {"vpc-cni": "ACTIVE", "coredns": "DEGRADED"}
    stub.assert_no_pending_responses()


# --- teardown readiness and what is not probed -----------------------------------------------------------------


def test_teardown_with_nothing_left(dev, make_ctx):
    outcome = checks_other.check_teardown(make_ctx(dev, FakeCluster([]), FakeAws()))
    assert outcome.evidence.startswith("nothing Kubernetes created in AWS")


def test_teardown_lists_what_destroy_must_remove_first(dev, make_ctx):
    leftovers = [verify_aws.Leftover("load-balancer", "arn:aws:elasticloadbalancing:x", "k8s-ml-mobilenet", "tag")]
    outcome = checks_other.check_teardown(make_ctx(dev, FakeCluster([]), FakeAws(leftovers=leftovers)))
    assert outcome.status == "pass"
    assert outcome.evidence.startswith("1 resources Kubernetes created (load-balancer k8s-ml-mobilenet)")
    assert "pulumi destroy --run-program" in outcome.evidence
    assert outcome.details["leftovers"][0]["id"] == "arn:aws:elasticloadbalancing:x"


def test_teardown_scan_failure_fails(dev, make_ctx):
    with pytest.raises(CheckFailed) as caught:
        checks_other.check_teardown(make_ctx(dev, FakeCluster([]), FakeAws(error=RuntimeError("AccessDenied"))))
    assert caught.value.outcome.evidence == "the janitor's scan failed: AccessDenied"
    assert "gpuplane janitor" in caught.value.outcome.fix


def test_not_probed_items_are_named_with_reasons(dev, make_ctx):
    checks = {c.name: c for c in checks_other.other_checks(dev)}
    assert set(checks) == {
        "teardown",
        "network-policy",
        "grpc-health",
        "pod-identity-import",
        "queue-webhooks",
    }
    outcome = checks["queue-webhooks"].run(make_ctx(dev, FakeCluster([])))
    assert outcome.status == "skipped" and "by hand: submit a JobSet with the queue label" in outcome.evidence
