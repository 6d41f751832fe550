"""The EKS control plane section of the stack config (`cluster`)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Final, Literal

from pydantic import Field, field_validator, model_validator

from gpuplane.components.config.base import FieldError, _Args
from gpuplane.components.config.common import LOG_RETENTION_DAYS
from gpuplane.components.facts import prices
from gpuplane.components.facts.addresses import check_cidr
from gpuplane.manifests import lifecycle, versions

LogType = Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]
NodeUpgradeOrder = Literal["parallel", "systemFirst"]
"""How the node groups are ordered among themselves (`ClusterArgs.node_upgrade_order`)."""
_IAM_PRINCIPAL_RE: Final = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+$")
_SG_ID_RE: Final = re.compile(r"^sg-([0-9a-f]{8}|[0-9a-f]{17})$")


class ClusterArgs(_Args):
    """The EKS control plane and what it needs: IAM role, KMS key, logs, OIDC, core add-ons."""

    kubernetes_version: str = Field(
        default=versions.DEFAULT_KUBERNETES_VERSION,
        description=f"Kubernetes minor version. Default `{versions.DEFAULT_KUBERNETES_VERSION}` (the newest in EKS "
        f"standard support when pinned); allowed: {', '.join(versions.KUBERNETES_VERSIONS)}. A version past its "
        'standard support needs `upgradePolicy: EXTENDED` (docs/cost.md, "EKS upgrade policy").',
    )
    endpoint_public_access: bool = Field(
        default=True,
        description="Expose the API endpoint publicly (limited to `publicAccessCidrs`); the private endpoint is "
        "always on. Default true (prod: false).",
    )
    public_access_cidrs: list[str] = Field(
        default_factory=list,
        description="CIDRs allowed to reach the public endpoint; required when it is on. Default none.",
    )
    admin_principals: list[str] = Field(
        default_factory=list,
        description="IAM role/user ARNs given cluster-admin through EKS access entries; leave out the identity that "
        "runs `pulumi up` when `bootstrapCreatorAdmin` is on (EKS already made its entry). Default none.",
    )
    bootstrap_creator_admin: bool = Field(
        default=True,
        description="Give the identity that runs `pulumi up` cluster-admin (EKS access entry made at creation), so "
        "the program can apply Kubernetes objects. Default true.",
    )
    log_types: list[LogType] = Field(
        default_factory=lambda: list[LogType](["api", "audit", "authenticator"]),
        description="Control-plane log types sent to CloudWatch. Default `api, audit, authenticator` (prod: all five).",
    )
    log_retention_days: int = Field(
        default=7, description="CloudWatch retention of the control-plane log group. Default 7 (prod: 90)."
    )
    service_ipv4_cidr: str = Field(
        default="172.20.0.0/16",
        description="Kubernetes Service CIDR; must not overlap the VPC. Default `172.20.0.0/16`.",
    )
    kms_deletion_window_days: int = Field(
        default=30,
        ge=7,
        le=30,
        description="Waiting period before the secrets KMS key is deleted. Default 30.",
    )
    api_access_cidrs: list[str] | None = Field(
        default=None,
        description="Networks allowed to reach the API endpoint on 443 through the cluster security group (where "
        "Pulumi and kubectl run: the VPC itself, a VPN, a peered VPC). Default: the VPC CIDR when "
        "`endpointPublicAccess` is false (a runner inside the VPC works), none otherwise.",
    )
    api_access_security_group_ids: list[str] = Field(
        default_factory=list,
        description="Security groups (e.g. of a CI runner or bastion in the VPC) allowed to reach the API on 443. "
        "Default none.",
    )
    upgrade_policy: Literal["STANDARD", "EXTENDED"] = Field(
        default="STANDARD",
        description="EKS support type at the end of standard support: `STANDARD` (EKS upgrades the control plane "
        "itself, $0.10/h) or `EXTENDED` (stays on the old minor, $0.60/h). Default `STANDARD`.",
    )
    node_upgrade_order: NodeUpgradeOrder = Field(
        default="parallel",
        description="When the GPU node groups move to a new minor: `parallel` (every group at once, each by its "
        "`maxUnavailablePercentage`, as terraform-aws-eks and EKS Blueprints do) or `systemFirst` (EKS's upgrade "
        "guide: each GPU group waits for every system group, the untainted CPU groups). The same dependency orders "
        "create and destroy: in the project's timeline model `systemFirst` adds 2 min to the create of a new stack "
        "(dev and prod), 5 min to every destroy (the system group's delete waits for the GPU group's) and to an "
        "upgrade what the GPU group's roll outlasts coredns's (dev 0 with its empty GPU group, prod 6) "
        "(docs/upgrades.md). Default `parallel`.",
    )
    encrypt_logs: bool = Field(
        default=True,
        description="Encrypt the control-plane log group with a KMS key of the stack (rotation on) instead of "
        "the CloudWatch Logs service key. Default true.",
    )
    kms_key_administrators: list[str] = Field(
        default_factory=list,
        description="IAM role or user ARNs that may manage (not use) the stack's KMS keys, written into each "
        "key's policy next to the account root. Default none (the account root, and through it IAM policies).",
    )

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> Any:
        if isinstance(value, float):
            raise ValueError(
                f'{value!r} is a number; write the version as a quoted string like "1.35" '
                "(YAML reads 1.30 as the number 1.3)"
            )
        text = str(value)
        if text not in versions.KUBERNETES_VERSIONS:
            raise ValueError(
                f"'{text}' is not a Kubernetes version EKS supports; allowed: {', '.join(versions.KUBERNETES_VERSIONS)}"
            )
        return text

    @field_validator("public_access_cidrs", "api_access_cidrs")
    @classmethod
    def _cidrs(cls, value: list[str] | None) -> list[str] | None:
        for cidr in value or []:
            check_cidr(cidr)
        return value

    @field_validator("api_access_security_group_ids")
    @classmethod
    def _api_groups(cls, value: list[str]) -> list[str]:
        for group in value:
            if not _SG_ID_RE.fullmatch(group):
                raise ValueError(f"'{group}' is not a security group id (sg- and 8 or 17 hex digits)")
        return value

    @field_validator("admin_principals", "kms_key_administrators")
    @classmethod
    def _principals(cls, value: list[str]) -> list[str]:
        for arn in value:
            if not _IAM_PRINCIPAL_RE.fullmatch(arn):
                raise ValueError(f"'{arn}' is not an IAM role or user ARN (arn:aws:iam::<12 digits>:role/<name>)")
        return value

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        if value not in LOG_RETENTION_DAYS:
            raise ValueError(f"{value} is not a CloudWatch retention period; allowed: {list(LOG_RETENTION_DAYS)}")
        return value

    @field_validator("log_types")
    @classmethod
    def _log_types(cls, value: list[LogType]) -> list[LogType]:
        if len(set(value)) != len(value):
            raise ValueError(f"{value} lists a log type twice")
        return value

    @field_validator("service_ipv4_cidr")
    @classmethod
    def _service_cidr(cls, value: str) -> str:
        net = ipaddress.IPv4Network(check_cidr(value))
        private = [ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
        if not any(net.subnet_of(p) for p in private) or not 12 <= net.prefixlen <= 24:
            raise ValueError(
                f"'{value}' must be a /12 to /24 inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (EKS rule)"
            )
        return value

    @model_validator(mode="after")
    def _support_window(self) -> ClusterArgs:
        """A version past standard support only with `upgradePolicy: EXTENDED`, whose price the message names.

        With STANDARD, EKS upgrades such a cluster on its own right after creation: the pinned version would
        drift at once. "Today" is `lifecycle.today()` (GPUPLANE_TODAY pins it).
        """
        version = self.kubernetes_version
        today = lifecycle.today()
        standard_end = lifecycle.standard_support_end(version)
        extended_end = versions.KUBERNETES_VERSIONS[version][2]
        # Names a version in standard support on `today`, or says that none of the table is and what to do.
        advice = lifecycle.supported_version_advice(today)
        if today.isoformat() >= extended_end:
            raise FieldError(
                "kubernetesVersion",
                f"'{version}' left EKS extended support on {extended_end} (today is {today}): EKS no longer creates "
                f"clusters on it; {advice}",
            )
        if today >= standard_end and self.upgrade_policy != "EXTENDED":
            raise FieldError(
                "kubernetesVersion",
                f"'{version}' left EKS standard support on {standard_end} (today is {today}): with upgradePolicy "
                f"STANDARD, EKS would upgrade the new cluster at once and the pinned version would drift. "
                f"{advice[0].upper()}{advice[1:]}; or set cluster.upgradePolicy: EXTENDED to stay on "
                f"{version} until {extended_end} at ${prices.EKS_EXTENDED_HOURLY_USD} per cluster hour instead of "
                f"${prices.EKS_STANDARD_HOURLY_USD}. A cluster that already runs an older minor moves one minor per "
                "`pulumi up` (EKS refuses a skip; `gpuplane preflight` names the path, docs/upgrades.md): set "
                "upgradePolicy EXTENDED while a step is past standard support",
            )
        return self

    @model_validator(mode="after")
    def _public_needs_cidrs(self) -> ClusterArgs:
        if self.endpoint_public_access and not self.public_access_cidrs:
            raise FieldError(
                "publicAccessCidrs",
                "is empty but endpointPublicAccess is true; list the CIDRs allowed to reach the API "
                "(e.g. your address as x.x.x.x/32), or set endpointPublicAccess: false",
            )
        return self
