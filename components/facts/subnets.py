"""The VPC's CIDR plan: which subnet gets which block, as pure, tested logic.

Why its own module: the plan is arithmetic that must be right before any resource exists (a subnet that
does not fit fails `pulumi up` half-way), and it is easiest to trust when it is tested without Pulumi.
Private subnets (nodes and pods; the VPC CNI gives every pod a VPC address, so they are large) come
first, then the small public subnets (NAT gateways and internet-facing load balancers).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SubnetPlan:
    """One planned subnet."""

    az: str
    tier: Literal["private", "public"]
    cidr: str


def plan_subnets(vpc_cidr: str, azs: list[str], private_prefix: int, public_prefix: int) -> list[SubnetPlan]:
    """Carve one private and one public subnet per AZ out of `vpc_cidr`, without overlap.

    Raises ValueError naming the sizes when the VPC is too small. The result is deterministic: the same
    inputs always give the same blocks, so re-running never moves a subnet (which would replace it).
    """
    vpc = ipaddress.IPv4Network(vpc_cidr)
    for label, prefix in (("private", private_prefix), ("public", public_prefix)):
        if prefix <= vpc.prefixlen:
            raise ValueError(f"{label} subnet prefix /{prefix} must be longer than the VPC's /{vpc.prefixlen}")
    needed = len(azs) * (2 ** (32 - private_prefix) + 2 ** (32 - public_prefix))
    if needed > vpc.num_addresses:
        raise ValueError(
            f"VPC {vpc_cidr} ({vpc.num_addresses} addresses) is too small for {len(azs)} private /{private_prefix} "
            f"and {len(azs)} public /{public_prefix} subnets ({needed} addresses); use a larger VPC or longer prefixes"
        )
    plans: list[SubnetPlan] = []
    taken: list[ipaddress.IPv4Network] = []
    # Larger blocks first keeps every block aligned without gaps that would waste space.
    order = sorted((("private", private_prefix), ("public", public_prefix)), key=lambda item: item[1])
    for tier, prefix in order:
        free = (s for s in vpc.subnets(new_prefix=prefix) if not any(s.overlaps(t) for t in taken))
        for az in azs:
            block = next(free, None)
            if block is None:  # pragma: no cover - excluded by the size check above for power-of-two sizes
                raise ValueError(f"VPC {vpc_cidr} has no room left for a /{prefix} {tier} subnet in {az}")
            taken.append(block)
            plans.append(SubnetPlan(az=az, tier=tier, cidr=str(block)))  # type: ignore[arg-type]
    return sorted(plans, key=lambda p: (p.tier != "private", azs.index(p.az)))
