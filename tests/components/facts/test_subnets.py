import ipaddress
import itertools

import pytest

from gpuplane.components.facts.subnets import plan_subnets


@pytest.mark.parametrize("azs", [["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d", "e", "f"]])
def test_one_private_and_one_public_subnet_per_az_without_overlap(azs):
    plan = plan_subnets("10.0.0.0/16", azs, 19, 24)
    assert [(p.az, p.tier) for p in plan] == [(az, "private") for az in azs] + [(az, "public") for az in azs]
    nets = [ipaddress.IPv4Network(p.cidr) for p in plan]
    vpc = ipaddress.IPv4Network("10.0.0.0/16")
    assert all(n.subnet_of(vpc) for n in nets)
    assert not any(a.overlaps(b) for a, b in itertools.combinations(nets, 2))
    assert {n.prefixlen for n, p in zip(nets, plan, strict=True) if p.tier == "private"} == {19}
    assert {n.prefixlen for n, p in zip(nets, plan, strict=True) if p.tier == "public"} == {24}


def test_plan_is_stable_and_packed():
    plan = plan_subnets("10.0.0.0/16", ["a", "b", "c"], 19, 24)
    assert [p.cidr for p in plan] == [
        "10.0.0.0/19",
        "10.0.32.0/19",
        "10.0.64.0/19",
        "10.0.96.0/24",
        "10.0.97.0/24",
        "10.0.98.0/24",
    ]
    assert plan == plan_subnets("10.0.0.0/16", ["a", "b", "c"], 19, 24)


def test_public_larger_than_private_is_still_packed_without_overlap():
    plan = plan_subnets("10.1.0.0/20", ["a", "b"], 24, 22)
    nets = [ipaddress.IPv4Network(p.cidr) for p in plan]
    assert not any(a.overlaps(b) for a, b in itertools.combinations(nets, 2))
    assert [p.cidr for p in plan if p.tier == "public"] == ["10.1.0.0/22", "10.1.4.0/22"]


def test_too_small_vpc_names_the_sizes():
    with pytest.raises(ValueError, match=r"VPC 10.0.0.0/18 .* too small for 3 private /19 and 3 public /24"):
        plan_subnets("10.0.0.0/18", ["a", "b", "c"], 19, 24)


def test_subnet_prefix_must_be_longer_than_vpc():
    with pytest.raises(ValueError, match="private subnet prefix /16 must be longer than the VPC's /16"):
        plan_subnets("10.0.0.0/16", ["a", "b"], 16, 24)
