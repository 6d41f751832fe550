"""The reserved-capacity and EFA checks against fake clusters: pass, fail with cause and fix, skip."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.infra.verify import checks_capacity as cc
from gpuplane.infra.verify.expect import Expectations, from_config
from gpuplane.infra.verify.model import CheckFailed
from gpuplane.manifests import versions, wellknown
from tests.components.test_reserved_capacity import BLOCK, ODCR, SPOT, stack
from tests.conftest import stack_config
from tests.verify.fakes import FakeCluster, healthy_nodes, node


@pytest.fixture(scope="module")
def reserved() -> Expectations:
    """The promises of a stack with a p5 Capacity Block (EFA, us-west-2b), a p4d ODCR (EFA, us-west-2c), spot g6."""
    return from_config(stack_config(stack(BLOCK, ODCR, SPOT)))


def _fail(check, ctx) -> CheckFailed:
    with pytest.raises(CheckFailed) as caught:
        check(ctx)
    outcome = caught.value.outcome
    assert outcome.status == "fail" and outcome.evidence and outcome.cause and outcome.fix
    return caught.value


def _gpu_node(name: str, group: str, *, zone: str, capacity: str, efa: str | None) -> dict[str, Any]:
    labels = {cc.CAPACITY_TYPE_LABEL: capacity}
    return node(name, group, zone=zone, labels=labels, allocatable={wellknown.EFA_RESOURCE: efa} if efa else {})


def test_expectations_carry_the_plan(reserved, dev):
    block, odcr, spot = (reserved.group(n) for n in ("p5-block", "p4d-odcr", "g6-spot"))
    assert (block.reserved, block.reservation_zone, block.capacity_type, block.efa_interfaces) == (
        True,
        "us-west-2b",
        "CAPACITY_BLOCK",
        32,
    )
    assert (odcr.reserved, odcr.reservation_id, odcr.reservation_zone, odcr.capacity_type, odcr.efa_interfaces) == (
        True,
        "cr-0123456789abcdef0",
        "us-west-2c",
        "ON_DEMAND",
        4,
    )
    assert (spot.reserved, spot.reservation_zone, spot.efa_interfaces) == (False, None, 0)
    assert [c.name for c in cc.capacity_checks(reserved)] == ["reserved-capacity", "efa"]
    assert all(c.needs == ("nodes",) for c in cc.capacity_checks(reserved))
    assert cc.capacity_checks(dev) == []  # no reservation, no EFA in the shipped dev stack


def test_reserved_nodes_in_the_reservation_pass(reserved, make_ctx):
    nodes = [
        *healthy_nodes(reserved),
        _gpu_node("p5-0", "p5-block", zone="us-west-2b", capacity="CAPACITY_BLOCK", efa="32"),
        _gpu_node("p4d-0", "p4d-odcr", zone="us-west-2c", capacity="ON_DEMAND", efa="4"),
    ]
    outcome = cc.check_reserved_capacity(make_ctx(reserved, FakeCluster(nodes)))
    assert outcome.status == "pass"
    assert outcome.evidence == (
        "p5-block: 1 node(s) CAPACITY_BLOCK in us-west-2b, p4d-odcr: 1 node(s) ON_DEMAND in us-west-2c"
    )
    efa = cc.check_efa(make_ctx(reserved, FakeCluster(nodes)))
    assert efa.status == "pass"
    assert efa.evidence == f"{wellknown.EFA_RESOURCE} as planned on p5-block: 1 node(s) x 32, p4d-odcr: 1 node(s) x 4"


def test_reserved_node_in_another_zone_or_capacity_type_fails(reserved, make_ctx):
    nodes = [
        _gpu_node("p5-0", "p5-block", zone="us-west-2a", capacity="CAPACITY_BLOCK", efa="32"),
        _gpu_node("p4d-0", "p4d-odcr", zone="us-west-2c", capacity="SPOT", efa="4"),
    ]
    failure = _fail(cc.check_reserved_capacity, make_ctx(reserved, FakeCluster(nodes))).outcome
    assert "p5-0 (p5-block): zone us-west-2a, reservation cr-02168da1478b509e0 is in us-west-2b" in failure.evidence
    assert f"p4d-0 (p4d-odcr): {cc.CAPACITY_TYPE_LABEL}=SPOT, plan ON_DEMAND" in failure.evidence
    assert "describe-nodegroup" in failure.fix
    assert len(failure.details["problems"]) == 2


def test_not_ready_nodes_are_not_judged_and_no_node_skips(reserved, make_ctx):
    stray = node("p5-0", "p5-block", zone="us-west-2a", ready=False, labels={cc.CAPACITY_TYPE_LABEL: "SPOT"})
    outcome = cc.check_reserved_capacity(make_ctx(reserved, FakeCluster([*healthy_nodes(reserved), stray])))
    assert outcome.status == "skipped"
    assert outcome.evidence.startswith("no Ready node of reserved group(s) ['p5-block', 'p4d-odcr']")
    efa = cc.check_efa(make_ctx(reserved, FakeCluster(healthy_nodes(reserved))))
    assert efa.status == "skipped" and "EFA group(s) ['p5-block', 'p4d-odcr']" in efa.evidence


def test_efa_node_without_the_resource_fails_naming_the_plugin(reserved, make_ctx):
    nodes = [_gpu_node("p5-0", "p5-block", zone="us-west-2b", capacity="CAPACITY_BLOCK", efa=None)]
    failure = _fail(cc.check_efa, make_ctx(reserved, FakeCluster(nodes))).outcome
    assert failure.evidence == f"no {wellknown.EFA_RESOURCE} allocatable on EFA node(s) ['p5-0 (p5-block)']"
    assert wellknown.LABEL_EFA in failure.cause and versions.EFA_DEVICE_PLUGIN_CHART in failure.fix


def test_efa_node_with_fewer_devices_than_planned_fails(reserved, make_ctx):
    nodes = [
        _gpu_node("p5-0", "p5-block", zone="us-west-2b", capacity="CAPACITY_BLOCK", efa="32"),
        _gpu_node("p4d-0", "p4d-odcr", zone="us-west-2c", capacity="ON_DEMAND", efa="1"),
    ]
    failure = _fail(cc.check_efa, make_ctx(reserved, FakeCluster(nodes))).outcome
    assert (
        failure.evidence == f"{wellknown.EFA_RESOURCE} allocatable differs from the plan: p4d-0 (p4d-odcr): 1, plan 4"
    )
    assert "NetworkCardIndex" in failure.fix
