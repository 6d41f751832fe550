"""The VPC section of the stack config (`network`)."""

from __future__ import annotations

import ipaddress
import re
from typing import Final, Literal

from pydantic import Field, field_validator, model_validator

from gpuplane.components.config.base import FieldError, _Args
from gpuplane.components.config.common import LOG_RETENTION_DAYS
from gpuplane.components.facts.addresses import check_cidr
from gpuplane.components.facts.subnets import plan_subnets

NatMode = Literal["single", "perAz"]
# The most AZs any region has (us-east-1: six); also `azCount`'s upper bound.
MAX_AZS_PER_REGION: Final = 6


class NetworkArgs(_Args):
    """The VPC: one public and one private subnet per availability zone."""

    cidr: str = Field(default="10.0.0.0/16", description="VPC IPv4 CIDR block, /16 to /24. Default `10.0.0.0/16`.")
    availability_zones: list[str] | None = Field(
        default=None,
        description="Explicit AZ names (e.g. `us-west-2a`). Default: none, use `azCount` AZs of the region.",
    )
    az_count: int = Field(
        default=2,
        ge=2,
        le=6,
        description="How many AZs to use when `availabilityZones` is unset. Default 2 (prod: 3).",
    )
    nat_gateways: NatMode = Field(
        default="single",
        description="`single` NAT gateway (cheap, one AZ is a single point of failure) or `perAz`. "
        "Default `single` (prod: `perAz`).",
    )
    private_subnet_prefix: int = Field(
        default=19,
        ge=16,
        le=28,
        description="Prefix length of each private (node and pod) subnet. Default 19.",
    )
    public_subnet_prefix: int = Field(
        default=24,
        ge=16,
        le=28,
        description="Prefix length of each public (NAT, load balancer) subnet. Default 24.",
    )
    flow_logs: bool = Field(
        default=False,
        description="VPC flow logs (all traffic) to a CloudWatch log group encrypted with a KMS key of the stack. "
        "Default false (prod: true).",
    )
    flow_log_retention_days: int = Field(
        default=30, description="CloudWatch retention of the flow-log group. Default 30 (prod: 90)."
    )

    @field_validator("flow_log_retention_days")
    @classmethod
    def _flow_retention(cls, value: int) -> int:
        if value not in LOG_RETENTION_DAYS:
            raise ValueError(f"{value} is not a CloudWatch retention period; allowed: {list(LOG_RETENTION_DAYS)}")
        return value

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        check_cidr(value)
        prefix = ipaddress.IPv4Network(value).prefixlen
        if not 16 <= prefix <= 24:
            raise ValueError(f"'{value}' has prefix /{prefix}; AWS VPCs allow /16 to /24")
        return value

    @field_validator("availability_zones")
    @classmethod
    def _azs(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return value
        if len(value) < 2:
            raise ValueError(f"{value} names {len(value)} AZ; EKS needs subnets in at least 2 AZs")
        if len(value) > MAX_AZS_PER_REGION:
            raise ValueError(
                f"{value} names {len(value)} AZs; no AWS region has more than {MAX_AZS_PER_REGION} (us-east-1)"
            )
        if len(set(value)) != len(value):
            raise ValueError(f"{value} names an AZ twice; each AZ once")
        for az in value:
            if not re.fullmatch(r"[a-z]{2}(-[a-z]+)+-\d[a-z]", az):
                raise ValueError(f"'{az}' is not an AZ name like 'us-west-2a'")
        if len({az[:-1] for az in value}) != 1:
            raise ValueError(f"{value} spans several regions; all AZs must be in the stack's region")
        return value

    @model_validator(mode="after")
    def _plan_fits(self) -> NetworkArgs:
        if self.private_subnet_prefix <= ipaddress.IPv4Network(self.cidr).prefixlen:
            raise FieldError(
                "privateSubnetPrefix",
                f"/{self.private_subnet_prefix} is not smaller than the VPC {self.cidr}; use a longer prefix",
            )
        count = len(self.availability_zones) if self.availability_zones else self.az_count
        plan_subnets(self.cidr, [f"az{i}" for i in range(count)], self.private_subnet_prefix, self.public_subnet_prefix)
        return self

    @property
    def zone_count(self) -> int:
        """Number of AZs the network spans."""
        return len(self.availability_zones) if self.availability_zones else self.az_count
