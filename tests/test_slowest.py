"""The slowest tests first (tests/slowest.py): each xdist worker's first share starts with its part of them."""

from __future__ import annotations

import os
from pathlib import Path

from tests import slowest

ROOT = Path(__file__).resolve().parents[1]


def test_shares_are_what_worksteal_hands_out():
    assert slowest.shares(10, 2) == [5, 5]
    assert slowest.shares(11, 2) == [5, 6]
    assert slowest.shares(10, 3) == [3, 3, 4]
    assert slowest.shares(7, 1) == [7]


def test_each_share_starts_with_its_slow_tests_dealt_longest_first():
    ids = [f"t{i}" for i in range(10)]
    seconds = {"t7": 60.0, "t2": 50.0, "t9": 20.0, "t4": 5.0}
    ordered = slowest.order(ids, ids, seconds, workers=2)
    assert sorted(ordered) == sorted(ids)  # every test once
    first, second = ordered[:5], ordered[5:]
    assert first[:2] == ["t7", "t4"] and second[:2] == ["t2", "t9"]  # 65 s and 70 s
    assert [t for t in ordered if t not in seconds] == ["t0", "t1", "t3", "t5", "t6", "t8"]  # pytest's order


def test_one_worker_runs_them_first_longest_first():
    ids = ["a", "b", "c", "d"]
    assert slowest.order(ids, ids, {"c": 3.0, "d": 9.0}, workers=1) == ["d", "c", "a", "b"]


def test_more_slow_tests_than_a_share_holds_spill_over():
    ids = ["a", "b", "c", "d"]
    ordered = slowest.order(ids, ids, {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}, workers=2)
    assert ordered == ["d", "a", "c", "b"]


def test_the_list_names_test_files_that_exist():
    listed = slowest.measured()
    assert listed, "tests/slowest.txt is empty"
    missing = {node_id.split("::")[0] for node_id in listed} - {
        str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py")
    }
    assert missing == set()


def test_a_junit_report_becomes_the_list(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.infra.test_render" name="test_a[x]" time="12.5"/>'
        '<testcase classname="tests.test_project" name="test_b" time="0.1"/>'
        '<testcase classname="tests.verify.test_x.TestY" name="test_c" time="3"/>'
        "</testsuite></testsuites>"
    )
    assert slowest.from_junit(report, keep=2) == [
        (12.5, "tests/infra/test_render.py::test_a[x]"),
        (3.0, "tests/verify/test_x.py::TestY::test_c"),
    ]


def test_auto_gives_one_worker_more_than_the_cpus(pytestconfig, monkeypatch):
    """`-n auto` asks the hook, and the conftest answers first: the CPUs this process may use, plus one."""
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert pytestconfig.pluginmanager.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == 3


def test_the_variable_still_decides_where_it_is_set(pytestconfig, monkeypatch):
    """xdist's own rule reads PYTEST_XDIST_AUTO_NUM_WORKERS: the conftest steps aside for it."""
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "5")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert pytestconfig.pluginmanager.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == 5
