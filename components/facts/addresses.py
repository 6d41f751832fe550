"""IPv4 CIDRs as the AWS provider reads them, and the ranges nobody can reach a public endpoint from.

Why: the stack config's CIDRs end up in `aws_eks_cluster.vpc_config.public_access_cidrs` and security-group
rules, whose provider-side validation is Go's `net.ParseCIDR` (terraform-provider-aws `verify.ValidCIDRNetworkAddress`
on `vpc_config.public_access_cidrs`, which pulumi-aws bridges; read 2026-11-26): a prefix length is required,
and the network address must be the value as written. Python's `ipaddress` reads `1.2.3.4` as a /32,
so without this rule a render passes what `pulumi up` refuses. And an address the user never replaced
(the dev stack ships the documentation range 203.0.113.0/24, RFC 5737) renders fine, deploys an EKS cluster
in ten minutes, and then every Kubernetes object times out: `unreachable` names such ranges so render can
warn and preflight can refuse before that.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

# Go's net.ParseCIDR: an IPv4 address, '/', a decimal prefix length. ipaddress does the rest of the check.
_CIDR_SHAPE: Final = re.compile(r"^[0-9.]+/[0-9]{1,2}$")

# Ranges a request from the internet never comes from (IANA special-purpose registry, RFC 6890 and the RFCs
# named), each with what it is. The public endpoint sees the caller's public address (after NAT), so a
# CIDR inside one of these admits nobody.
UNREACHABLE: Final[tuple[tuple[str, str], ...]] = (
    ("0.0.0.0/8", "'this network' (RFC 1122)"),
    ("10.0.0.0/8", "a private range (RFC 1918): the public endpoint sees your NAT's public address"),
    ("100.64.0.0/10", "the carrier-grade NAT range (RFC 6598)"),
    ("127.0.0.0/8", "loopback (RFC 1122)"),
    ("169.254.0.0/16", "link-local (RFC 3927)"),
    ("172.16.0.0/12", "a private range (RFC 1918): the public endpoint sees your NAT's public address"),
    ("192.0.0.0/24", "IETF protocol assignments (RFC 6890)"),
    ("192.0.2.0/24", "a documentation range (RFC 5737, TEST-NET-1)"),
    ("192.168.0.0/16", "a private range (RFC 1918): the public endpoint sees your NAT's public address"),
    ("198.18.0.0/15", "the benchmarking range (RFC 2544)"),
    ("198.51.100.0/24", "a documentation range (RFC 5737, TEST-NET-2)"),
    ("203.0.113.0/24", "a documentation range (RFC 5737, TEST-NET-3)"),
    ("224.0.0.0/4", "multicast (RFC 5771)"),
    ("240.0.0.0/4", "reserved (RFC 1112)"),
)


def check_cidr(value: str) -> str:
    """`value` if it is an IPv4 network as `net.ParseCIDR` reads it, host bits zero; ValueError naming it otherwise."""
    if "/" not in value:
        single = f" (one address: '{value}/32')" if re.fullmatch(r"[0-9.]+", value) else ""
        raise ValueError(
            f"'{value}' has no prefix length, which the AWS provider refuses (Go net.ParseCIDR); "
            f"allowed: an IPv4 network in CIDR notation{single}"
        )
    try:
        network = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"'{value}' is not an IPv4 network in CIDR notation with host bits zero ({exc})") from exc
    if not _CIDR_SHAPE.fullmatch(value):
        raise ValueError(f"'{value}' is not an IPv4 network in CIDR notation; allowed: e.g. '{network}'")
    return value


def unreachable(cidr: str) -> str | None:
    """Why nobody on the internet can come from `cidr` (it lies inside one of `UNREACHABLE`), or None."""
    network = ipaddress.IPv4Network(cidr, strict=False)
    for special, why in UNREACHABLE:
        if network.subnet_of(ipaddress.IPv4Network(special)):
            return f"{special} is {why}"
    return None
