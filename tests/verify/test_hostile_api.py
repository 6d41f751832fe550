"""`gpuplane verify` as a process against a slow or hostile API server: it always ends, within its deadline plus
15 s, deletes only what it created, and prints no terminal escape.

Each run uses `--deadline` (a few seconds) so the waits are short; the bound asserted is that deadline plus
15 s, measured from the start of the process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import interrupts
from tests.verify.fakeapi import FakeApi, Server
from tests.verify.fakes import healthy_nodes, node, stack_expect

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;aGVsbG8=\x07"


@pytest.fixture(scope="module")
def dev_version() -> str:
    return stack_expect("dev").kubernetes_version


@pytest.fixture
def api(dev_version: str) -> Iterator[Server]:
    with Server(FakeApi(version=dev_version, nodes=healthy_nodes(stack_expect("dev")))) as server:
        yield server


def _start(server: Server, tmp_path: Path, *args: str, out: str = "r") -> tuple[subprocess.Popen[str], float]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "COLUMNS": "120",
        "HOME": str(tmp_path),
    }
    command = [sys.executable, "-m", "gpuplane.infra.cli", "verify", "dev", "--project", str(ROOT)]
    command += ["--kubeconfig", str(server.kubeconfig(tmp_path / "kubeconfig")), "--out", str(tmp_path / out), *args]
    started = time.monotonic()
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
        preexec_fn=interrupts.as_from_a_terminal,  # noqa: PLW1509 - only resets a signal's disposition
    )
    return child, started


# How long the process may take to start (imports, the stack's validation) before it calls the API server, on a
# loaded test machine: not part of the run's deadline, which starts at its first request.
START_UP_S = 120


def _finish(
    child: subprocess.Popen[str], started: float, deadline: float, server: Server
) -> tuple[int, str, str, float]:
    """Wait for the process; its return code, output, and how long it ran after its first request."""
    try:
        out, err = child.communicate(timeout=deadline + 15 + START_UP_S)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        pytest.fail(f"verify did not end within {deadline} + 15 s:\n{out}\n{err}")
    return child.returncode, out, err, time.monotonic() - (server.api.first or started)


def _verify(
    server: Server, tmp_path: Path, deadline: float, *args: str, cleanup: bool = False
) -> tuple[int, str, str, dict[str, Any]]:
    """Run verify with `deadline`; it must end within the deadline plus 15 s (plus the clean-up's own deadline
    when `cleanup`: the run waits that long at most for an object it must still remove)."""
    child, started = _start(server, tmp_path, "--deadline", str(deadline), *args)
    code, out, err, took = _finish(child, started, deadline * (2 if cleanup else 1), server)
    assert took < deadline * (2 if cleanup else 1) + 15
    return code, out, err, json.loads((tmp_path / "r" / "report.json").read_text())


def _checks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}


def test_escape_sequences_from_the_cluster_are_shown_not_sent(api: Server, tmp_path: Path):
    broken = node("gpu-1", "system", ready=False)
    broken["status"]["conditions"][0]["message"] = f"kubelet {HOSTILE} stopped"
    api.api.nodes = [*api.api.nodes, broken]
    code, out, err, report = _verify(api, tmp_path, 10, "--only", "nodes")
    assert code == 1
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07" in out
    assert HOSTILE in _checks(report)["nodes"]["evidence"]  # the JSON keeps the raw text


def test_a_stalled_list_fails_its_check_and_the_process_ends(api: Server, tmp_path: Path):
    api.api.rules[("GET", "^/api/v1/nodes$")] = "stall"
    code, _out, err, report = _verify(api, tmp_path, 2, "--only", "nodes")
    assert code == 1
    nodes = _checks(report)["nodes"]
    assert nodes["status"] == "fail" and nodes["evidence"].startswith("did not return within 2 s (+1 s)")
    assert "0 passed" not in err and "1 passed, 1 failed" in err


def test_a_stalled_delete_is_listed_as_left_behind_with_its_command(api: Server, tmp_path: Path):
    api.api.rules[("DELETE", "^/api/v1/namespaces/gpuplane-verify-[^/]+$")] = "stall"
    code, _out, err, report = _verify(api, tmp_path, 2, "--only", "runtime", cleanup=True)
    assert code == 1
    namespace = next(k.rsplit("/", 1)[1] for k in api.api.objects if re.fullmatch("/api/v1/namespaces/[^/]+", k))
    assert report["cleanup"]["problems"] == [
        f"Namespace {namespace}: its delete was sent and not answered before clean-up's deadline"
    ]
    remove = f"kubectl --kubeconfig {tmp_path / 'kubeconfig'} delete namespace {namespace}"
    assert report["cleanup"]["remove"] == [remove]
    assert remove in " ".join(err.split())
    assert "left behind:" in err


def test_a_409_on_create_is_someone_elses_and_is_not_deleted(api: Server, tmp_path: Path):
    api.api.rules[("POST", "^/api/v1/namespaces$")] = 409
    code, _out, _err, report = _verify(api, tmp_path, 5, "--only", "runtime")
    assert code == 1
    runtime = _checks(report)["runtime"]
    assert "exists already (the API server answered 409 Conflict); it is not this run's" in runtime["evidence"]
    assert api.api.seen("DELETE") == []
    assert report["cleanup"] == {"kept": [], "problems": [], "remove": []}


def test_a_create_answered_after_clean_up_began_is_removed_too(api: Server, tmp_path: Path):
    # The pod's create trickles for 7 s: the check is abandoned at 4 + 1 s, clean-up begins (and may take 4 s),
    # then the answer comes, 2 s from either edge.
    api.api.rules[("POST", "^/api/v1/namespaces/[^/]+/pods$")] = ("late", 7)
    code, _out, _err, report = _verify(api, tmp_path, 4, "--only", "runtime", cleanup=True)
    assert code == 1
    assert _checks(report)["runtime"]["evidence"].startswith("did not return within 4 s")
    (pod,) = [p for p in api.api.seen("POST") if p.endswith("/pods")]
    deleted = api.api.seen("DELETE", r"/pods/gv-runtime-")
    assert len(deleted) == 1 and deleted[0].startswith(pod)
    assert report["cleanup"]["problems"] == []


def test_30000_nodes_give_a_bounded_report(dev_version: str, tmp_path: Path):
    nodes = [node(f"ip-10-0-{i // 250}-{i % 250}", "system", ready=False) for i in range(30_000)]
    with Server(FakeApi(version=dev_version, nodes=nodes)) as server:
        code, out, err, report = _verify(server, tmp_path, 40, "--only", "nodes")
    assert code == 1
    assert len(out) + len(err) < 20_000
    evidence = _checks(report)["nodes"]["evidence"]
    assert "and 29980 more" in evidence and len(evidence) < 5_000


def test_a_redirect_is_not_followed(dev_version: str, tmp_path: Path):
    with Server(FakeApi(version=dev_version)) as elsewhere, Server(FakeApi(version=dev_version)) as server:
        server.api.rules[("GET", "^/version$")] = ("redirect", f"{elsewhere.url}/version")
        child, started = _start(server, tmp_path, "--deadline", "5", "--only", "nodes")
        code, _out, err, took = _finish(child, started, 5, server)
    assert took < 20
    assert code == 1
    assert elsewhere.api.requests == []
    assert "answered 302" in " ".join(err.split())


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_prints_the_report_and_what_was_left(api: Server, tmp_path: Path, presses: int):
    api.api.rules[("DELETE", "^/api/v1/namespaces/gpuplane-verify-[^/]+$")] = "stall"
    # One press waits out the clean-up's deadline (the stalled delete); two presses do not wait for it. The
    # check's deadline (the same number) must outlast the wait for its first poll below and the press.
    deadline = 4 if presses == 1 else 30
    child, started = _start(api, tmp_path, "--deadline", str(deadline), "--only", "runtime")
    end = time.monotonic() + 30 + START_UP_S
    while not api.api.seen("GET", "/pods/gv-runtime-") and time.monotonic() < end:
        time.sleep(0.1)
    child.send_signal(signal.SIGINT)
    pressed = time.monotonic()
    if presses == 2:  # the second while the clean-up waits on the stalled delete
        while not api.api.seen("DELETE", "^/api/v1/namespaces/") and time.monotonic() < end:
            time.sleep(0.1)
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        pressed = time.monotonic()
    code, _out, err, _took = _finish(child, started, deadline, api)
    assert code == 130, err
    # One press: the clean-up runs to its deadline (the stalled delete); two: it is not waited for.
    assert time.monotonic() - pressed < (deadline + 15 if presses == 1 else 25)  # 25: before the clean-up's 30 s
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["interrupted"] is True
    (problem,) = report["cleanup"]["problems"]
    assert problem.startswith("Namespace gpuplane-verify-")
    (remove,) = report["cleanup"]["remove"]
    assert remove.startswith(f"kubectl --kubeconfig {tmp_path / 'kubeconfig'} delete namespace gpuplane-verify-")
    assert remove in " ".join(err.split())


def test_two_runs_on_one_stack_remove_only_their_own(api: Server, tmp_path: Path):
    runs = [_start(api, tmp_path, "--deadline", "2", "--only", "runtime", out=out) for out in ("a", "b")]
    reports = []
    for (child, started), out in zip(runs, ("a", "b"), strict=True):
        code, _out, _err, _took = _finish(child, started, 2, api)
        assert code == 1
        reports.append(json.loads((tmp_path / out / "report.json").read_text()))
    run_ids = {r["runId"] for r in reports}
    assert len(run_ids) == 2
    for report in reports:
        assert report["cleanup"]["problems"] == []
    namespaces = api.api.seen("DELETE", "^/api/v1/namespaces/[^/]+$")
    assert sorted(namespaces) == sorted(f"/api/v1/namespaces/gpuplane-verify-{r}" for r in run_ids)
    assert not [k for k in api.api.objects if "gpuplane-verify-" in k]  # nothing of either run is left
