"""Preflight reads each group's reservation and refuses a mismatch with the stack.

The answers come from botocore's Stubber: the request is checked against the real `ec2` model (operation
and parameter names), the response is shaped as EC2's `DescribeCapacityReservations` answer.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from gpuplane.infra import config
from gpuplane.infra.aws import preflight
from tests.conftest import DEV_CLUSTER, stack_config

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
BLOCK_ID = "cr-02168da1478b509e0"
SYSTEM = {"name": "system", "instanceTypes": ["m6i.large"], "minSize": 1, "maxSize": 2}
BLOCK = {
    "name": "p5-block",
    "kind": "gpu",
    "instanceTypes": ["p5.48xlarge"],
    "capacityType": "CAPACITY_BLOCK",
    "minSize": 0,
    "maxSize": 2,
    "capacityReservation": {
        "id": BLOCK_ID,
        "availabilityZone": "us-west-2b",
        "instanceCount": 2,
        "endTime": "2026-12-01T11:30:00Z",
    },
}


def cfg() -> config.StackConfig:
    return stack_config(
        {
            "cluster": DEV_CLUSTER,
            "network": {"availabilityZones": ["us-west-2a", "us-west-2b"]},
            "nodeGroups": [SYSTEM, BLOCK],
        }
    )


def reservation(**changes: Any) -> dict[str, Any]:
    answer = {
        "CapacityReservationId": BLOCK_ID,
        "InstanceType": "p5.48xlarge",
        "InstancePlatform": "Linux/UNIX",
        "AvailabilityZone": "us-west-2b",
        "TotalInstanceCount": 2,
        "AvailableInstanceCount": 2,
        "State": "active",
        "StartDate": datetime(2026, 11, 24, 11, 30, tzinfo=UTC),
        "EndDate": datetime(2026, 12, 1, 11, 30, tzinfo=UTC),
        "ReservationType": "capacity-block",
    }
    answer.update(changes)
    return answer


def run(answer: dict[str, Any] | None = None, error: str | None = None) -> list[preflight.Check]:
    stack = cfg()
    ec2 = boto3.session.Session(
        region_name=stack.region, aws_access_key_id="testing", aws_secret_access_key="testing"
    ).client("ec2")
    with Stubber(ec2) as stub:
        expected = {"CapacityReservationIds": [BLOCK_ID]}
        if error is not None:
            stub.add_client_error("describe_capacity_reservations", error, "not found", expected_params=expected)
        else:
            stub.add_response("describe_capacity_reservations", {"CapacityReservations": [answer]}, expected)
        checks = preflight.reservation_checks(stack, ec2, now=NOW)
        stub.assert_no_pending_responses()
    return checks


def test_the_reservation_found_as_the_stack_says_passes():
    (check,) = run(reservation())
    assert check.status == "pass"
    assert check.name == "reservation: p5-block"
    assert "cr-02168da1478b509e0 active: 2 x p5.48xlarge in us-west-2b" in check.detail


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"AvailabilityZone": "us-west-2a"}, "it is in us-west-2a, the stack says us-west-2b"),
        ({"State": "expired"}, "it is expired"),
        ({"EndDate": datetime(2026, 11, 25, tzinfo=UTC)}, "it ended 2026-11-25"),
        ({"InstanceType": "p5e.48xlarge"}, "it reserves p5e.48xlarge, the group runs p5.48xlarge"),
        ({"TotalInstanceCount": 1}, "it holds 1 instance(s), the stack says instanceCount 2"),
        (
            {"ReservationType": "default"},
            "On-Demand Capacity Reservation but the group's capacityType is CAPACITY_BLOCK",
        ),
    ],
)
def test_a_mismatch_fails_naming_it(changes, fragment):
    (check,) = run(reservation(**changes))
    assert check.status == "fail"
    assert fragment in check.detail
    assert "nodeGroups.p5-block.capacityReservation" in check.fix


def test_a_reservation_that_does_not_exist_fails():
    (check,) = run(error="InvalidCapacityReservationId.NotFound")
    assert check.status == "fail"
    assert "cr-02168da1478b509e0 is not a Capacity Reservation of this account in us-west-2" in check.detail


def test_a_block_not_yet_active_warns():
    (check,) = run(reservation(State="scheduled", StartDate=datetime(2026, 11, 28, tzinfo=UTC)))
    assert check.status == "warn"
    assert "once it is active" in check.fix


def test_capacity_block_groups_need_no_vcpu_quota():
    needed = preflight.vcpus_needed(cfg().platform.resolved_node_groups)
    assert all(capacity in ("ON_DEMAND", "SPOT") for _, capacity in needed)
    assert all("p5-block" not in names for _, names in needed.values())
