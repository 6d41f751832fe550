"""Shared fixtures: the recording mock run of the shipped stacks and of ad-hoc platform configs.

Every component test uses `infra.mockrun` (the recording monitor), so parents, dependencies, protect
and retainOnDelete are asserted on, not only inputs.
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from gpuplane.infra import config
from gpuplane.manifests import lifecycle
from tests import checkout_guard, checkov_scan, interrupts, readers, shipped, slowest, tools

if TYPE_CHECKING:  # Pulumi loads with them: imported where a fixture renders, so a nested pytest run of a test
    # that renders nothing (tests/test_tools.py starts several) does not pay for it.
    from gpuplane.infra import mockrun

# From here on, a test that touches the checkout's stacks/, Pulumi.yaml or build/, or starts a missing tool's
# command, fails or skips where it does (tests/checkout_guard.py); collection is watched too.
checkout_guard.install()

# The day the version rules judge by in the whole suite: the day the version table was last
# checked, so no test changes verdict when a Kubernetes version leaves standard support later on.
PINNED_TODAY = "2026-11-24"


@pytest.fixture(scope="session", autouse=True)
def pinned_today() -> Iterator[None]:
    """`lifecycle.today()` reads GPUPLANE_TODAY; set for the session (subprocesses inherit it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(lifecycle.TODAY_ENV, PINNED_TODAY)
        yield


@pytest.fixture(scope="session", autouse=True)
def pristine_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every test runs in a copy of the shipped project (tests/shipped.py), never the checkout's `stacks/`.

    `config.STACKS_DIR` (the default stack folder) points at the copy's `stacks/`, and the current folder is
    the copy: a command run without `--project` finds its `Pulumi.yaml` there and writes its `build/` and
    `.gpuplane/` there. A user's edited or added stack file in the checkout changes no test.
    """
    root = shipped.make_project(tmp_path_factory.mktemp("project"))
    shipped._project.append(root)
    before = os.getcwd()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(config, "STACKS_DIR", root / "stacks")
        os.chdir(root)
        try:
            yield
        finally:
            os.chdir(before)


@pytest.fixture(autouse=True)
def private_config_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpuplane's per-user key (infra/kubeaccess.py) in a folder of the test's, never the user's ~/.config;
    and no KUBECONFIG of the user's reaches a test."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
    monkeypatch.delenv("KUBECONFIG", raising=False)


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Ctrl-C (SIGINT, `_thread.interrupt_main()`) raises KeyboardInterrupt in the test, even where the run was
    started in the background with SIGINT ignored (tests/interrupts.py)."""
    with interrupts.handled():
        yield


T = TypeVar("T")


def once_per_session(factory: pytest.TempPathFactory, key: str, make: Callable[[], T]) -> T:
    """`make()` once per test session, also across pytest-xdist workers (`make check` runs them in parallel).

    Under xdist each worker is a process with its own session fixtures; the first worker to ask builds the
    value and leaves it pickled in the folder the session's workers share (the parent of their base temp
    folders), under a file lock, and the others read that copy. Values must be picklable and only read.
    """
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return make()
    shared = factory.getbasetemp().parent
    path = shared / f"{key}.pickle"
    with open(shared / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            value: T = pickle.loads(path.read_bytes())
            return value
        value = make()
        path.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture(scope="session")
def dev_run(tmp_path_factory: pytest.TempPathFactory) -> mockrun.Recording:
    """The dev stack's recording, rendered once for every test that only reads it."""
    from gpuplane.infra import render  # noqa: PLC0415 - see the imports above

    return once_per_session(tmp_path_factory, "dev-run", lambda: render.run_stack(config.load("dev")))


@pytest.fixture(scope="session")
def prod_run(tmp_path_factory: pytest.TempPathFactory) -> mockrun.Recording:
    """The prod stack's recording, rendered once for every test that only reads it."""
    from gpuplane.infra import render  # noqa: PLC0415 - see the imports above

    return once_per_session(tmp_path_factory, "prod-run", lambda: render.run_stack(config.load("prod")))


@pytest.fixture(scope="session")
def checkov_kubernetes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, checkov_scan.SetResult]:
    """The Kubernetes objects several modules scan, in one checkov run for the session (tests/checkov_scan.py)."""
    return once_per_session(
        tmp_path_factory,
        "checkov-kubernetes",
        lambda: checkov_scan.scan_kubernetes(tmp_path_factory.mktemp("checkov-kubernetes")),
    )


@pytest.fixture(scope="session")
def package_schema(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The component package's schema, made once for the session: the SDK's analyzer reads every component's
    inputs and outputs (seconds of CPU), and two modules read the result."""
    from gpuplane.infra import provider  # noqa: PLC0415 - Pulumi loads with it

    return once_per_session(tmp_path_factory, "package-schema", provider.package_schema)


def stack_config(overrides: dict[str, Any], stack: str = "test", region: str = "us-west-2") -> config.StackConfig:
    """A StackConfig from `gpuplane:` keys (without the namespace) plus the region."""
    raw: dict[str, Any] = {"aws:region": region}
    raw.update({f"gpuplane:{k}": v for k, v in overrides.items()})
    return config.parse(raw, stack)


DEV_CLUSTER = {"publicAccessCidrs": ["198.51.100.7/32"]}


@pytest.fixture
def run_platform() -> Callable[..., mockrun.Recording]:
    """Run the program for ad-hoc `gpuplane:` config under mocks."""

    def _run(overrides: dict[str, Any], stack: str = "test", region: str = "us-west-2") -> mockrun.Recording:
        from gpuplane.infra import render  # noqa: PLC0415 - see the imports above

        overrides = {"cluster": DEV_CLUSTER, **overrides}
        return render.run_stack(stack_config(overrides, stack, region))

    return _run


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: one worker more than this process may use CPUs, unless PYTEST_XDIST_AUTO_NUM_WORKERS says.

    Why one more: many tests wait rather than compute (a deadlocked TensorFlow cluster for its deadline, the
    hostile API server's real deadlines, servers and subprocesses), and while a worker waits its CPU idles
    unless another worker has a test to give it. Measured on 2 CPUs (benchmarks/suite_workers.py): the whole
    suite ends sooner with 3 workers than with 2, for more CPU time. Returning None hands over to xdist's own
    rule, which reads the variable.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cpus + 1


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest tests first, in each xdist worker's share of the run (tests/slowest.py)."""
    seconds = slowest.measured()
    if seconds:
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
        items[:] = slowest.order([item.nodeid for item in items], items, seconds, workers)


GC_ENV = "GPUPLANE_TESTS_GC"


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """Collect with the cyclic collector paused, then set what collection built aside from it for good.

    Why: collecting imports every test module and the libraries behind them (the SDK, moto, the Kubernetes client)
    and builds an item per test: a heap of millions of objects that lives until the process ends. While it grows,
    Python walks the whole of it in each full collection, and after it, in every full collection a test's garbage
    triggers. One collection here, then `gc.freeze()`, leaves the later ones only what tests allocate. Each
    pytest-xdist worker collects, so each saves this: benchmarks/suite_gc.py measures it against Python's own
    collector (GPUPLANE_TESTS_GC=python), and docs/testing.md gives the result.
    """
    if os.environ.get(GC_ENV) == "python":
        return (yield)
    enabled = gc.isenabled()
    gc.disable()
    try:
        return (yield)
    finally:
        gc.collect()
        gc.freeze()
        if enabled:
            gc.enable()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Schemas, AWS models and the CLI's command tree read once per process, not per call (tests/readers.py)."""
    readers.install()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.tool(name)`: skip where the tool is missing, fail where CI requires it (tests/tools.py)."""
    item.stash[_GUARD_MARK] = checkout_guard.mark()
    for mark in item.iter_markers("tool"):
        tools.need(str(mark.args[0]))


_GUARD_MARK = pytest.StashKey[int]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A test that touched the checkout fails even where the code under test caught the guard's error."""
    report = yield
    touched = checkout_guard.touched_since(item.stash.get(_GUARD_MARK, 0))
    item.stash[_GUARD_MARK] = checkout_guard.mark()  # each phase answers for its own
    if touched and report.passed:
        report.outcome = "failed"
        report.longrepr = f"the test touched the checkout's {', '.join(sorted(set(touched)))}; {checkout_guard.FIX}"
    return report


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop before any test when a project file sits above the temp folder (tests/checkout_guard.py says why)."""
    stray = checkout_guard.projects_above(Path(tempfile.gettempdir()).resolve())
    if stray:
        pytest.exit(
            f"{', '.join(map(str, stray))} is above the temp folder: the tests that run in folders under it would "
            "take it for their Pulumi project; move it away, or set TMPDIR to a folder with no project above it",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Remove what the session made outside pytest's own folders: the import harness's TLS key folder."""
    harness = sys.modules.get("tests.workloads.import_harness")
    if harness is not None:
        harness.remove_tls_files()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """At the end: which tests could not run for a missing tool, and the one command that installs them."""
    by_tool: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else ""
        if reason.startswith(f"Skipped: {tools.SKIP_PREFIX} ") or reason.startswith(f"{tools.SKIP_PREFIX} "):
            name = reason.split(f"{tools.SKIP_PREFIX} ", 1)[1].split(":", 1)[0]
            by_tool[name] = by_tool.get(name, 0) + 1
    if not by_tool:
        return
    terminalreporter.section("tests that could not run: missing tools", sep="-", yellow=True)
    for name, count in sorted(by_tool.items()):
        terminalreporter.write_line(f"{count:4d} skipped without {name}: {tools.table()[name].why}")
    terminalreporter.write_line(f"Install them with: {tools.INSTALL}")


def assert_topic_key_admits(run, topic, publisher):
    """The topic is encrypted with a key of its own whose policy lets `publisher` (and only it) encrypt for SNS.

    Not `alias/aws/sns`: that AWS-managed key cannot be opened to a service publisher (kms.topic_key_policy).
    """
    keys = {k.outputs["arn"]: k for k in run.by_type("aws:kms/key:Key")}
    key = keys[topic.inputs["kmsMasterKeyId"]]
    assert key.inputs["enableKeyRotation"] is True
    statements = {st["Sid"]: st for st in json.loads(key.inputs["policy"])["Statement"]}
    publish = statements["EncryptForThePublisher"]
    assert publish["Principal"] == {"Service": publisher}
    assert publish["Action"] == ["kms:Decrypt", "kms:GenerateDataKey*"]
    # For this topic's messages only (the ARN SNS puts in the encryption context), sent by the stack's publisher.
    assert publish["Condition"]["StringEquals"] == {"kms:EncryptionContext:aws:sns:topicArn": topic.outputs["arn"]}
    assert list(publish["Condition"]) == ["ArnLike", "StringEquals"]
    assert statements["AccountRoot"]["Action"] == "kms:*"
    assert set(statements) <= {"AccountRoot", "KeyAdministrators", "EncryptForThePublisher"}
