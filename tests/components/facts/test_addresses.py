"""CIDRs as the AWS provider reads them (a prefix is required), and the ranges nobody reaches an endpoint from."""

from __future__ import annotations

import pytest

from gpuplane.components.facts import addresses


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (
            "1.2.3.4",
            "'1.2.3.4' has no prefix length, which the AWS provider refuses (Go net.ParseCIDR); allowed: an "
            "IPv4 network in CIDR notation (one address: '1.2.3.4/32')",
        ),
        ("1.2.3.5/24", "host bits"),
        ("1.2.3.0/33", "not an IPv4 network"),
        ("example.com", "no prefix length"),
        ("1.2.3.0/24 ", "not an IPv4 network"),
    ],
)
def test_a_cidr_needs_a_prefix_and_zero_host_bits(value, said):
    with pytest.raises(ValueError, match=None) as refused:
        addresses.check_cidr(value)
    assert said in str(refused.value)


@pytest.mark.parametrize("value", ["1.2.3.4/32", "0.0.0.0/0", "10.0.0.0/16", "198.51.100.0/24"])
def test_a_network_in_cidr_notation_passes(value):
    assert addresses.check_cidr(value) == value


@pytest.mark.parametrize(
    ("cidr", "inside"),
    [
        ("203.0.113.0/24", "203.0.113.0/24 is a documentation range (RFC 5737, TEST-NET-3)"),
        ("198.51.100.7/32", "198.51.100.0/24 is a documentation range"),
        ("192.0.2.0/25", "192.0.2.0/24 is a documentation range"),
        ("127.0.0.1/32", "loopback"),
        ("169.254.10.0/24", "link-local"),
        ("10.20.0.0/16", "private range (RFC 1918)"),
        ("192.168.1.10/32", "private range (RFC 1918)"),
        ("100.64.1.0/24", "carrier-grade NAT"),
        ("224.0.0.1/32", "multicast"),
        ("0.0.0.0/8", "'this network'"),
    ],
)
def test_ranges_nobody_reaches_the_endpoint_from_are_named(cidr, inside):
    assert inside in (addresses.unreachable(cidr) or "")


@pytest.mark.parametrize("cidr", ["8.8.8.8/32", "0.0.0.0/0", "52.94.0.0/16", "172.32.0.0/16", "11.0.0.0/8"])
def test_routable_ranges_pass(cidr):
    assert addresses.unreachable(cidr) is None
