"""Fixtures for `gpuplane verify`: a fake clock, contexts on fake clusters, the shipped stacks' promises."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from gpuplane.infra.verify.expect import Expectations
from gpuplane.infra.verify.model import Context, Objects
from gpuplane.manifests import verify as probes
from tests.verify.fakes import FakeAws, FakeCluster, active_addons, stack_expect

RUN = "20261126-100000-abcdef"


class Clock:
    """Monotonic time that moves only when something sleeps: deadlines in tests cost no wall time."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(seconds, 0.001)


@pytest.fixture(scope="session")
def dev() -> Expectations:
    return stack_expect("dev")


@pytest.fixture(scope="session")
def prod() -> Expectations:
    return stack_expect("prod")


def objects_for(cluster: Any, expect: Expectations, run_id: str = RUN) -> Objects:
    return Objects(cluster, probes.probe_namespace(run_id, expect.kubernetes_version), probes.standing_objects(run_id))


@pytest.fixture
def make_ctx() -> Callable[..., Context]:
    def build(
        expect: Expectations,
        cluster: FakeCluster,
        aws: FakeAws | None = None,
        *,
        deadline_s: float = 600.0,
    ) -> Context:
        clock = Clock()
        return Context(
            expect=expect,
            cluster=cluster,
            aws=aws if aws is not None else FakeAws(active_addons(expect)),
            run_id=RUN,
            objects=objects_for(cluster, expect),
            deadline=clock() + deadline_s,
            deadline_s=deadline_s,
            clock=clock,
            sleep=clock.sleep,
            now=lambda: datetime(2026, 11, 26, 10, 2, 30, tzinfo=UTC),
        )

    return build
