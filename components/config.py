"""The typed args of every component, which are also the schema of the stack config.

Why one set of types for both: a bad value must get the same clear error whether it comes from
`stacks/Pulumi.<stack>.yaml` (through `infra.config`) or from another team's program that builds a
`NodeGroupArgs` by hand. Field names are snake_case in Python and camelCase in the stack file (the
Pulumi convention); unknown keys are errors. Every field documents its default where it is declared;
where the `prod` profile changes a default, the description says so and `PlatformArgs` applies it to
every field the user did not set.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Final, Literal

from pydantic import Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from gpuplane.components import catalog
from gpuplane.components.args_base import FieldError as FieldError  # noqa: PLC0414 - re-exported for infra.config
from gpuplane.components.args_base import _Args
from gpuplane.components.network_plan import plan_subnets
from gpuplane.components.workload_args import ServingArgs, TrainingArgs
from gpuplane.manifests import versions

Profile = Literal["dev", "prod"]
TaintEffect = Literal["NoSchedule", "NoExecute", "PreferNoSchedule"]
CapacityType = Literal["ON_DEMAND", "SPOT"]
NatMode = Literal["single", "perAz"]
LogType = Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]
AmiType = Literal[
    "AL2023_x86_64_STANDARD",
    "AL2023_ARM_64_STANDARD",
    "AL2023_x86_64_NVIDIA",
    "AL2023_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64",
    "BOTTLEROCKET_ARM_64",
    "BOTTLEROCKET_x86_64_NVIDIA",
    "BOTTLEROCKET_ARM_64_NVIDIA",
]

# CloudWatch Logs accepts only these retention periods (PutRetentionPolicy API reference).
LOG_RETENTION_DAYS: Final = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
)  # fmt: skip

# Kubernetes label/taint key: optional DNS-subdomain prefix, then a name of <= 63 chars.
_K8S_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_K8S_KEY_RE: Final = re.compile(rf"^([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_K8S_NAME}$")
_K8S_VALUE_RE: Final = re.compile(rf"^({_K8S_NAME})?$")
_DNS_LABEL_RE: Final = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
_MIG_PROFILE_RE: Final = re.compile(r"^all-([1-7])g\.([0-9]+)gb$")
_NAME_RE: Final = re.compile(r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$")
_IAM_PRINCIPAL_RE: Final = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+$")
_SG_ID_RE: Final = re.compile(r"^sg-([0-9a-f]{8}|[0-9a-f]{17})$")
_FS_ID_RE: Final = re.compile(r"^fs-([0-9a-f]{8}|[0-9a-f]{17})$")
_RESERVED_LABEL_DOMAINS: Final = ("kubernetes.io/", "k8s.io/", "eks.amazonaws.com/")
# The most AZs any region has (us-east-1: six); also `azCount`'s upper bound.
MAX_AZS_PER_REGION: Final = 6


def _check_cidr(value: str) -> str:
    try:
        ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"'{value}' is not an IPv4 network in CIDR notation with host bits zero ({exc})") from exc
    return value


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
        _check_cidr(value)
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


class ClusterArgs(_Args):
    """The EKS control plane and what it needs: IAM role, KMS key, logs, OIDC, core add-ons."""

    kubernetes_version: str = Field(
        default=versions.DEFAULT_KUBERNETES_VERSION,
        description=f"Kubernetes minor version. Default `{versions.DEFAULT_KUBERNETES_VERSION}`; "
        f"allowed: {', '.join(versions.KUBERNETES_VERSIONS)}.",
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

    @field_validator("public_access_cidrs")
    @classmethod
    def _cidrs(cls, value: list[str]) -> list[str]:
        for cidr in value:
            _check_cidr(cidr)
        return value

    @field_validator("api_access_cidrs")
    @classmethod
    def _api_cidrs(cls, value: list[str] | None) -> list[str] | None:
        for cidr in value or []:
            _check_cidr(cidr)
        return value

    @field_validator("api_access_security_group_ids")
    @classmethod
    def _api_groups(cls, value: list[str]) -> list[str]:
        for group in value:
            if not _SG_ID_RE.match(group):
                raise ValueError(f"'{group}' is not a security group id (sg- and 8 or 17 hex digits)")
        return value

    @field_validator("admin_principals", "kms_key_administrators")
    @classmethod
    def _principals(cls, value: list[str]) -> list[str]:
        for arn in value:
            if not _IAM_PRINCIPAL_RE.match(arn):
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
        net = ipaddress.IPv4Network(_check_cidr(value))
        private = [ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
        if not any(net.subnet_of(p) for p in private) or not 12 <= net.prefixlen <= 24:
            raise ValueError(
                f"'{value}' must be a /12 to /24 inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (EKS rule)"
            )
        return value

    @model_validator(mode="after")
    def _public_needs_cidrs(self) -> ClusterArgs:
        if self.endpoint_public_access and not self.public_access_cidrs:
            raise FieldError(
                "publicAccessCidrs",
                "is empty but endpointPublicAccess is true; list the CIDRs allowed to reach the API "
                "(e.g. your address as x.x.x.x/32), or set endpointPublicAccess: false",
            )
        return self


class Taint(_Args):
    """A Kubernetes node taint."""

    key: str = Field(description="Taint key, e.g. `nvidia.com/gpu`.")
    value: str = Field(default="", description="Taint value. Default empty.")
    effect: TaintEffect = Field(default="NoSchedule", description="Kubernetes taint effect. Default `NoSchedule`.")

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        if not _K8S_KEY_RE.match(value):
            raise ValueError(f"'{value}' is not a valid Kubernetes taint key ([prefix/]name, name <= 63 chars)")
        return value

    @field_validator("value")
    @classmethod
    def _value(cls, value: str) -> str:
        if not _K8S_VALUE_RE.match(value):
            raise ValueError(f"'{value}' is not a valid taint value (<= 63 chars, alphanumeric, '-', '_', '.')")
        return value


class TimeSlicingArgs(_Args):
    """Time-slicing: each GPU is advertised `replicas` times; no memory isolation between sharers."""

    replicas: int = Field(ge=2, le=64, description="Pods per GPU (2-64). Required.")


class MpsArgs(_Args):
    """CUDA MPS: `replicas` processes share each GPU with an equal, enforced memory share."""

    replicas: int = Field(ge=2, le=48, description="Pods per GPU (2-48, the MPS client limit). Required.")


class MigArgs(_Args):
    """Multi-Instance GPU: hardware partitions, applied by the GPU Operator's MIG manager."""

    strategy: Literal["single", "mixed"] = Field(
        default="single",
        description="`single`: partitions appear as `nvidia.com/gpu`; `mixed`: as `nvidia.com/mig-<profile>`. "
        "Default `single`.",
    )
    profile: str = Field(
        description="MIG manager config name, e.g. `all-1g.10gb` (seven 1g.10gb slices per A100-80GB). Required."
    )

    @field_validator("profile")
    @classmethod
    def _profile(cls, value: str) -> str:
        if not _MIG_PROFILE_RE.match(value):
            raise ValueError(f"'{value}' is not a MIG config name like all-1g.10gb or all-3g.40gb")
        return value


class GpuSharingArgs(_Args):
    """How a GPU group's GPUs are shared. At most one of the three; none set means whole GPUs."""

    time_slicing: TimeSlicingArgs | None = Field(default=None, description="Time-slicing. Default off.")
    mps: MpsArgs | None = Field(default=None, description="CUDA MPS. Default off.")
    mig: MigArgs | None = Field(default=None, description="MIG partitions (MIG-capable GPUs only). Default off.")

    @model_validator(mode="after")
    def _one(self) -> GpuSharingArgs:
        chosen = [k for k, v in (("timeSlicing", self.time_slicing), ("mps", self.mps), ("mig", self.mig)) if v]
        if len(chosen) > 1:
            raise FieldError(chosen[1], f"{' and '.join(chosen)} are both set; a GPU group uses one sharing mode")
        return self

    @property
    def mode(self) -> Literal["none", "time-slicing", "mps", "mig"]:
        """The sharing mode, as the `gpuplane.io/gpu-sharing` node label says it."""
        if self.time_slicing:
            return "time-slicing"
        if self.mps:
            return "mps"
        return "mig" if self.mig else "none"


class NodeGroupArgs(_Args):
    """One EKS managed node group (CPU or GPU)."""

    name: str = Field(description="Group name, lowercase letters, digits and '-', 2-32 chars. Required.")
    kind: Literal["cpu", "gpu"] = Field(
        default="cpu",
        description="`gpu` groups must use GPU instance types and get GPU labels/taints. Default `cpu`.",
    )
    instance_types: Annotated[list[str], Field(min_length=1)] = Field(
        description="EC2 instance types (same architecture; for GPU groups the same GPU model and count). Required."
    )
    ami_type: AmiType | None = Field(
        default=None,
        description="EKS AMI type. Default: derived from the instance types (AL2023 standard or NVIDIA, x86_64/ARM).",
    )
    capacity_type: CapacityType = Field(default="ON_DEMAND", description="`ON_DEMAND` or `SPOT`. Default `ON_DEMAND`.")
    min_size: int = Field(default=1, ge=0, le=1000, description="Minimum nodes. Default 1.")
    max_size: int = Field(default=3, ge=1, le=1000, description="Maximum nodes. Default 3.")
    desired_size: int | None = Field(
        default=None, description="Initial nodes (then owned by the cluster-autoscaler). Default: `minSize`."
    )
    disk_size_gib: int | None = Field(
        default=None,
        ge=20,
        le=16384,
        description="Root volume size (gp3, encrypted). Default 50 (GPU groups: 100).",
    )
    labels: dict[str, str] = Field(default_factory=dict, description="Extra Kubernetes node labels. Default none.")
    taints: list[Taint] = Field(default_factory=list, description="Extra node taints. Default none.")
    gpu_taint: bool = Field(
        default=True,
        description="GPU groups only: add the `nvidia.com/gpu=true:NoSchedule` taint so only GPU pods land there. "
        "Default true.",
    )
    max_unavailable_percentage: int = Field(
        default=33, ge=1, le=100, description="Share of nodes replaced at once during updates. Default 33."
    )
    driver: Literal["ami", "operator"] = Field(
        default="ami",
        description="GPU groups: `ami` (the AMI's driver, gpuplane installs the device plugin) or `operator` (the "
        "NVIDIA GPU Operator runs plugin, GFD, MIG manager and DCGM on the AMI's driver). Default `ami`.",
    )
    sharing: GpuSharingArgs = Field(
        default_factory=GpuSharingArgs,
        description="GPU groups: `timeSlicing`, `mps` or `mig` sharing. Default: none (whole GPUs).",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME_RE.match(value):
            raise ValueError(
                f"'{value}' must be 2-32 chars of lowercase letters, digits and '-', starting with a letter"
            )
        return value

    @field_validator("instance_types")
    @classmethod
    def _types(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"{value} lists an instance type twice")
        for name in value:
            catalog.lookup(name)  # raises ValueError naming the type and what is allowed
        return value

    @field_validator("labels")
    @classmethod
    def _labels(cls, value: dict[str, str]) -> dict[str, str]:
        # Every bad label in one message: a user fixing three labels should not need three rounds.
        problems: list[str] = []
        for key, label in value.items():
            if not _K8S_KEY_RE.match(key):
                problems.append(f"label key '{key}' is not a valid Kubernetes label key")
            elif any(key.startswith(d) or f".{d}" in key for d in _RESERVED_LABEL_DOMAINS):
                problems.append(
                    f"label key '{key}' uses a domain reserved for Kubernetes/EKS ({_RESERVED_LABEL_DOMAINS})"
                )
            if not _K8S_VALUE_RE.match(label):
                problems.append(f"label '{key}' has invalid value '{label}' (<= 63 chars, alphanumeric, '-', '_', '.')")
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @model_validator(mode="after")
    def _consistent(self) -> NodeGroupArgs:
        if self.min_size > self.max_size:
            raise FieldError("minSize", f"{self.min_size} is greater than maxSize {self.max_size}")
        if self.desired_size is not None and not self.min_size <= self.desired_size <= self.max_size:
            raise FieldError(
                "desiredSize",
                f"{self.desired_size} is outside [minSize, maxSize] = [{self.min_size}, {self.max_size}]",
            )
        facts = [catalog.lookup(t) for t in self.instance_types]
        arches = sorted({f.architecture for f in facts})
        if len(arches) > 1:
            raise FieldError("instanceTypes", f"{self.instance_types} mix architectures {arches}; use one")
        if self.kind == "gpu":
            no_gpu = [f.name for f in facts if not f.has_gpu]
            if no_gpu:
                raise FieldError(
                    "instanceTypes", f"{no_gpu} have no GPU but kind is 'gpu'; use GPU types (g5, g6, p5...)"
                )
            gpus = sorted({f"{f.gpu_count}x {f.gpu_model}" for f in facts})
            if len(gpus) > 1:
                raise FieldError(
                    "instanceTypes",
                    f"{self.instance_types} mix GPU models or counts {gpus}; one group needs one GPU shape "
                    "(the scheduler and autoscaler see one)",
                )
            self._check_gpu_settings(facts[0])
        else:
            with_gpu = [f.name for f in facts if f.has_gpu]
            if with_gpu:
                raise FieldError("instanceTypes", f"{with_gpu} have GPUs but kind is 'cpu'; set kind: gpu")
            for key in ("driver", "sharing"):
                if key in self.model_fields_set:
                    raise FieldError(key, "is a GPU group setting but kind is 'cpu'")
        if self.ami_type is not None:
            arch, nvidia, _ = versions.AMI_TYPES[self.ami_type]
            if arch != arches[0]:
                raise FieldError("amiType", f"'{self.ami_type}' is for {arch} but the instance types are {arches[0]}")
            if self.kind == "cpu" and nvidia:
                raise FieldError("amiType", f"'{self.ami_type}' does not fit a cpu group; use a non-NVIDIA AMI type")
            if self.kind == "gpu" and not nvidia:
                # The GPU Operator's driver containers do not support Amazon Linux: on EKS it runs with
                # the AMI's driver (GPU Operator docs, "Amazon EKS"), so every GPU group needs an NVIDIA AMI,
                # whatever the driver mode.
                raise FieldError(
                    "amiType",
                    f"'{self.ami_type}' has no NVIDIA driver; use an NVIDIA AMI type "
                    f"({', '.join(k for k, v in versions.AMI_TYPES.items() if v[1])})",
                )
        return self

    def _check_gpu_settings(self, facts: catalog.InstanceType) -> None:
        family = versions.AMI_TYPES[self.resolved_ami_type][2]
        if self.driver == "operator" and family == "bottlerocket":
            raise FieldError(
                "driver",
                f"'operator' does not work on Bottlerocket ({self.resolved_ami_type}): it ships its own driver and "
                "device plugin; use driver: ami, or an AL2023 AMI type",
            )
        if self.sharing.mig is not None:
            if not facts.mig_capable:
                raise FieldError(
                    "sharing.mig",
                    f"{facts.gpu_model} ({facts.name}) does not support MIG; MIG-capable: "
                    f"{', '.join(sorted(catalog.MIG_CAPABLE_GPUS))} (p4d, p4de, p5, p5e, p5en, p6)",
                )
            if self.driver != "operator":
                raise FieldError(
                    "sharing.mig", "needs driver: operator (the GPU Operator's MIG manager partitions the GPUs)"
                )
        if family == "bottlerocket" and self.sharing.mode != "none":
            raise FieldError(
                "sharing",
                "Bottlerocket runs its own device plugin, configured through its settings API, not by gpuplane; "
                "use an AL2023 NVIDIA AMI type for shared GPUs",
            )

    # --- derived facts (pure; used by the NodeGroup component and the renderer) ---------------------

    @property
    def architecture(self) -> catalog.Architecture:
        """CPU architecture shared by the group's instance types."""
        return catalog.lookup(self.instance_types[0]).architecture

    @property
    def instance(self) -> catalog.InstanceType:
        """Catalog facts of the first instance type (the group's GPU shape is uniform)."""
        return catalog.lookup(self.instance_types[0])

    @property
    def resolved_ami_type(self) -> str:
        """The explicit AMI type, or the AL2023 one that fits the architecture and GPU."""
        if self.ami_type is not None:
            return self.ami_type
        arm = self.architecture == "arm64"
        if self.kind == "gpu":
            return versions.AMI_AL2023_ARM_NVIDIA if arm else versions.AMI_AL2023_X86_NVIDIA
        return versions.AMI_AL2023_ARM_STANDARD if arm else versions.AMI_AL2023_X86_STANDARD

    @property
    def resolved_desired_size(self) -> int:
        """Desired size, defaulting to the minimum."""
        return self.min_size if self.desired_size is None else self.desired_size

    @property
    def resolved_disk_size_gib(self) -> int:
        """Root volume size; GPU AMIs and CUDA images need more room."""
        if self.disk_size_gib is not None:
            return self.disk_size_gib
        return 100 if self.kind == "gpu" else 50

    @property
    def all_taints(self) -> list[Taint]:
        """User taints plus the GPU taint of a GPU group (unless switched off), without duplicates."""
        taints = list(self.taints)
        if self.kind == "gpu" and self.gpu_taint and all(t.key != versions.GPU_RESOURCE for t in taints):
            taints.insert(0, Taint(key=versions.GPU_RESOURCE, value="true", effect="NoSchedule"))
        return taints


# EFS API model (botocore `efs`): Path and Permissions patterns of an access point's root directory.
_EFS_PATH_RE: Final = re.compile(r"^(\/|(\/(?!\.)+[^$#<>;`|&?{}^*/\n]+){1,4})$")
_EFS_PERMS_RE: Final = re.compile(r"^[0-7]{3,4}$")
_K8S_QUANTITY_RE: Final = re.compile(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")
# EFS access point Path: at most 100 characters and 4 components (botocore `efs` model). The CSI driver's
# dynamic provisioning makes `<basePath>/<namespace>/<claim>-<uuid>` with our StorageClass
# (subPathPattern `${.PVC.namespace}/${.PVC.name}`, ensureUniqueDirectory appends `-` and a 36-char UUID).
EFS_PATH_MAX_CHARS: Final = 100
EFS_BASE_PATH_MAX_COMPONENTS: Final = 2
EFS_UNIQUE_SUFFIX_CHARS: Final = 37


def dynamic_access_point_path_length(base_path: str, namespace: str, claim: str) -> int:
    """Length of the access point path the EFS CSI driver makes for a claim on the `efs-ap` StorageClass."""
    return len(f"{base_path.rstrip('/')}/{namespace}/{claim}") + EFS_UNIQUE_SUFFIX_CHARS


# EFS accepts uid/gid 0..4294967295 (PosixUser); 0 would make every workload root on the share, and
# 4294967295 is (uid_t)-1, "no user". Workloads run non-root, so both ends are refused.
POSIX_ID_MIN: Final = 1
POSIX_ID_MAX: Final = 4294967294


class VolumeArgs(_Args):
    """One named ReadWriteMany data volume on the shared EFS file system."""

    name: str = Field(description="Volume and claim name workloads bind by (DNS label). Required.")
    provisioning: Literal["static", "dynamic"] = Field(
        default="static",
        description="`static`: an access point at a fixed path owned by the stack (survives claim and cluster "
        "re-creation); `dynamic`: a claim on the `efs-ap` StorageClass (a new unique directory). Default `static`.",
    )
    path: str | None = Field(default=None, description="Directory on EFS for static volumes. Default `/<name>`.")
    size: str = Field(
        default="100Gi",
        description="Nominal capacity Kubernetes requires (EFS is elastic and does not enforce it). Default `100Gi`.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _DNS_LABEL_RE.match(value):
            raise ValueError(f"'{value}' must be a DNS label (lowercase letters, digits, '-', <= 63 chars)")
        return value

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None and (not _EFS_PATH_RE.match(value) or value == "/"):
            raise ValueError(f"'{value}' is not an EFS access point path: absolute, 1-4 components, not '/'")
        return value

    @field_validator("size")
    @classmethod
    def _size(cls, value: str) -> str:
        if not _K8S_QUANTITY_RE.match(value):
            raise ValueError(f"'{value}' is not a Kubernetes quantity like 100Gi")
        if float(re.sub(r"[A-Za-z]+$", "", value)) == 0:
            raise ValueError(f"'{value}' is zero; a claim needs a positive size like 100Gi")
        return value

    @property
    def resolved_path(self) -> str:
        """Directory of a static volume."""
        return self.path or f"/{self.name}"


def _default_volumes() -> list[VolumeArgs]:
    return [VolumeArgs(name=n) for n in ("models", "datasets", "logs")]


class StorageArgs(_Args):
    """Shared EFS storage: the file system, its mount targets, the CSI driver and the named volumes."""

    enabled: bool = Field(default=True, description="Create the EFS file system and volumes. Default true.")
    performance_mode: Literal["generalPurpose", "maxIO"] = Field(
        default="generalPurpose", description="EFS performance mode (fixed at creation). Default `generalPurpose`."
    )
    throughput_mode: Literal["elastic", "bursting", "provisioned"] = Field(
        default="elastic", description="EFS throughput mode. Default `elastic` (pay per use, scales with load)."
    )
    provisioned_throughput_mibps: float | None = Field(
        default=None, ge=1, description="MiB/s when `throughputMode` is `provisioned` (then required). Default none."
    )
    uid: int = Field(
        default=10001,
        description=f"POSIX uid of the workloads (`runAsUser`), enforced by access points; {POSIX_ID_MIN}-"
        f"{POSIX_ID_MAX}; workloads need 10001 or more (Pod Security `restricted`, clear of image "
        "users). Default 10001.",
    )
    gid: int = Field(
        default=10001,
        description=f"POSIX gid of the workloads (`runAsGroup`); {POSIX_ID_MIN}-{POSIX_ID_MAX}. Default 10001.",
    )
    directory_perms: str = Field(default="750", description="Mode of directories access points create. Default `750`.")
    base_path: str = Field(
        default="/dynamic", description="Where dynamic claims get their directories. Default `/dynamic`."
    )
    volumes: list[VolumeArgs] = Field(
        default_factory=_default_volumes,
        description="Named ReadWriteMany volumes workloads bind by name. "
        "Default `models`, `datasets`, `logs` (static).",
    )
    csi_identity: Literal["podIdentity", "irsa"] = Field(
        default="podIdentity",
        description="How the EFS CSI controller gets its IAM role: EKS Pod Identity or IRSA. Default `podIdentity`.",
    )
    protect: bool = Field(
        default=False,
        description="Pulumi `protect` on the file system and what guards its data (backup policy, file-system "
        "policy): `pulumi destroy` refuses to delete them, `--exclude-protected` keeps only them. "
        "Default false (prod: true).",
    )
    retain_on_delete: bool = Field(
        default=False,
        description="Pulumi `retainOnDelete`: removing them from the stack leaves them in AWS. "
        "Default false (prod: true).",
    )
    backups: bool = Field(
        default=False,
        description="AWS Backup daily backups of the file system (EFS backup policy). Default false (prod: true).",
    )
    existing_file_system_id: str | None = Field(
        default=None,
        description="Take over a file system kept by an earlier stack's destroy (`fs-...`): it is imported into this "
        "stack (Pulumi `import`), so its settings must match this section. Default none (create one).",
    )
    customer_managed_key: bool = Field(
        default=False,
        description="Encrypt a NEW file system with a KMS key of the stack (protected and retained with the file "
        "system: losing the key loses the data) instead of the AWS-managed `aws/elasticfilesystem` key. A file "
        "system's key is fixed at creation: an existing one keeps its key (see README, 'Changing the EFS key'). "
        "Default false (prod: true).",
    )
    allow_data_loss_on_prod: bool = Field(
        default=False,
        description="The explicit override needed to switch `protect` or `retainOnDelete` off on a prod stack. "
        "Default false.",
    )

    @field_validator("uid", "gid")
    @classmethod
    def _posix_id(cls, value: int) -> int:
        if not POSIX_ID_MIN <= value <= POSIX_ID_MAX:
            raise ValueError(
                f"{value} is outside {POSIX_ID_MIN}-{POSIX_ID_MAX} (EFS allows 0-4294967295; 0 is root and "
                "4294967295 is 'no user')"
            )
        return value

    @field_validator("directory_perms")
    @classmethod
    def _perms(cls, value: str) -> str:
        if not _EFS_PERMS_RE.match(value):
            raise ValueError(f"'{value}' is not an octal mode like 750 or 0750")
        return value

    @field_validator("base_path")
    @classmethod
    def _base(cls, value: str) -> str:
        if not _EFS_PATH_RE.match(value) or value == "/":
            raise ValueError(f"'{value}' is not an EFS path: absolute, 1-4 components, not '/'")
        depth = len(value.strip("/").split("/"))
        if depth > EFS_BASE_PATH_MAX_COMPONENTS:
            raise ValueError(
                f"'{value}' has {depth} components; at most {EFS_BASE_PATH_MAX_COMPONENTS}: the CSI driver appends "
                "<namespace>/<claim> and an access point path has at most 4 components (EFS API)"
            )
        return value

    @field_validator("existing_file_system_id")
    @classmethod
    def _fs_id(cls, value: str | None) -> str | None:
        if value is not None and not _FS_ID_RE.match(value):
            raise ValueError(f"'{value}' is not an EFS file system id (fs- and 8 or 17 hex digits)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> StorageArgs:
        if self.performance_mode == "maxIO" and self.throughput_mode == "elastic":
            raise FieldError(
                "performanceMode",
                "'maxIO' cannot be used with throughputMode 'elastic' (EFS CreateFileSystem refuses the pair); "
                "use generalPurpose, or throughputMode bursting/provisioned",
            )
        if self.throughput_mode == "provisioned" and self.provisioned_throughput_mibps is None:
            raise FieldError("provisionedThroughputMibps", "is required when throughputMode is 'provisioned'")
        if self.throughput_mode != "provisioned" and self.provisioned_throughput_mibps is not None:
            raise FieldError(
                "provisionedThroughputMibps", f"is set but throughputMode is '{self.throughput_mode}'; remove it"
            )
        names = [v.name for v in self.volumes]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise FieldError("volumes", f"volume name(s) {dupes} used more than once; names must be unique")
        paths = [v.resolved_path for v in self.volumes if v.provisioning == "static"]
        for index, path in enumerate(paths):
            clash = [p for p in paths[:index] if p == path or path.startswith(p + "/") or p.startswith(path + "/")]
            if clash:
                raise FieldError("volumes", f"static volume paths {clash[0]} and {path} overlap; give each its own")
            if path == self.base_path or path.startswith(self.base_path + "/"):
                raise FieldError("volumes", f"static path {path} is inside basePath {self.base_path} (dynamic claims)")
        return self

    @property
    def volume_names(self) -> list[str]:
        """Names workloads may bind."""
        return [v.name for v in self.volumes]


class AutoscalerArgs(_Args):
    """The cluster-autoscaler: scales node groups (GPU groups from zero) by the tags on their ASGs."""

    enabled: bool = Field(default=True, description="Install the cluster-autoscaler. Default true.")
    expander: Literal["least-waste", "random", "most-pods", "priority", "price"] = Field(
        default="least-waste", description="How it picks among groups that fit a pending pod. Default `least-waste`."
    )
    scale_down_unneeded_time: str = Field(
        default="10m", description="How long a node must be idle before removal (Go duration). Default `10m`."
    )

    @field_validator("scale_down_unneeded_time")
    @classmethod
    def _duration(cls, value: str) -> str:
        if not re.fullmatch(r"([0-9]+(h|m|s))+", value):
            raise ValueError(f"'{value}' is not a duration like 10m, 1h or 1h30m")
        return value


class ObservabilityArgs(_Args):
    """GPU metrics."""

    dcgm_exporter: bool = Field(
        default=True,
        description="Run NVIDIA's DCGM exporter on GPU nodes (GPU utilization and memory on port 9400). Default true.",
    )


def default_node_groups(profile: Profile) -> list[NodeGroupArgs]:
    """The node groups a stack gets when its config lists none."""
    if profile == "prod":
        return [
            NodeGroupArgs(name="system", instance_types=["m6i.xlarge"], min_size=2, max_size=4),
            NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g5.xlarge"], min_size=1, max_size=4),
        ]
    return [
        NodeGroupArgs(name="system", instance_types=["m6i.large"], min_size=1, max_size=3),
        NodeGroupArgs(
            name="gpu",
            kind="gpu",
            instance_types=["g5.xlarge", "g5.2xlarge"],
            capacity_type="SPOT",
            min_size=0,
            max_size=2,
        ),
    ]


# Defaults that the prod profile changes, applied to fields the user did not set.
_PROD_NETWORK: Final[dict[str, Any]] = {
    "az_count": 3,
    "nat_gateways": "perAz",
    "flow_logs": True,
    "flow_log_retention_days": 90,
}
_PROD_STORAGE: Final[dict[str, Any]] = {
    "protect": True,
    "retain_on_delete": True,
    "backups": True,
    "customer_managed_key": True,
}
_PROD_CLUSTER: Final[dict[str, Any]] = {
    "endpoint_public_access": False,
    "log_types": list(versions.CONTROL_PLANE_LOG_TYPES),
    "log_retention_days": 90,
}


class PlatformArgs(_Args):
    """Everything one gpuplane platform is made of: the stack config, as one typed object."""

    profile: Profile = Field(
        default="dev",
        description="`dev` (cheap, deletable) or `prod` (HA, private, logged, protected); picks the defaults "
        "marked 'prod:' below. Default `dev`.",
    )
    cluster_name: str | None = Field(
        default=None,
        description="EKS cluster name and prefix of physical names. Default `<project>-<stack>`.",
    )
    network: NetworkArgs = Field(default_factory=NetworkArgs, description="The VPC. See NetworkArgs.")
    cluster: ClusterArgs = Field(
        default_factory=ClusterArgs,
        description="The EKS control plane. See ClusterArgs (defaults per profile).",
    )
    node_groups: list[NodeGroupArgs] | None = Field(
        default=None,
        description="Managed node groups. Default dev: `system` (m6i.large, 1-3) and `gpu` (g5.xlarge/2xlarge spot, "
        "0-2); prod: `system` (m6i.xlarge, 2-4) and `gpu` (g5.xlarge on-demand, 1-4).",
    )
    storage: StorageArgs = Field(
        default_factory=StorageArgs, description="Shared EFS storage. See StorageArgs (defaults per profile)."
    )
    autoscaler: AutoscalerArgs = Field(default_factory=AutoscalerArgs, description="See AutoscalerArgs.")
    observability: ObservabilityArgs = Field(default_factory=ObservabilityArgs, description="See ObservabilityArgs.")
    tags: dict[str, str] = Field(default_factory=dict, description="Extra tags on every AWS resource. Default none.")
    workload_namespace: str = Field(
        default="ml",
        description="Namespace (Pod Security `restricted`) for TensorFlow workloads and the runtime helper. "
        "Default `ml`.",
    )
    serving: list[ServingArgs] = Field(
        default_factory=list,
        description="TensorFlow Serving workloads (docs/workloads.md). Default none.",
    )
    training: list[TrainingArgs] = Field(
        default_factory=list,
        description="Distributed TensorFlow training workloads; runs are submitted by `gpuplane train` "
        "(docs/workloads.md). Default none.",
    )
    ingress_class: str | None = Field(
        default=None,
        description="IngressClass for TensorBoard's Ingress (no controller is installed). Default: no Ingress.",
    )

    @model_validator(mode="before")
    @classmethod
    def _profile_defaults(cls, data: Any) -> Any:
        # Runs before field validation so that a prod stack with no `cluster` key does not trip over the
        # dev default "public endpoint needs CIDRs" (prod's default endpoint is private), and so that errors
        # in a defaulted section still carry its key (`gpuplane:cluster...`).
        if not isinstance(data, dict):
            return data
        data = dict(data)
        prod = data.get("profile") == "prod"
        for key, overrides in (("network", _PROD_NETWORK), ("cluster", _PROD_CLUSTER), ("storage", _PROD_STORAGE)):
            raw = data.get(key, {})
            if isinstance(raw, _Args):
                raw = raw.model_dump(exclude_unset=True, by_alias=True)
            if isinstance(raw, dict):
                merged = {to_camel(k): v for k, v in overrides.items()} if prod else {}
                merged.update(raw)
                data[key] = merged
        return data

    @field_validator("workload_namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        if not _DNS_LABEL_RE.match(value) or value.startswith("kube-"):
            raise ValueError(f"'{value}' must be a DNS label (lowercase, digits, '-') and not start with 'kube-'")
        return value

    @field_validator("ingress_class")
    @classmethod
    def _ingress_class(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", value):
            raise ValueError(f"'{value}' is not an IngressClass name (lowercase DNS subdomain)")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            if key.startswith(("aws:", "gpuplane:", "kubernetes.io/")):
                raise ValueError(
                    f"tag key '{key}' is reserved (aws:, gpuplane:, kubernetes.io/ are set by AWS/gpuplane)"
                )
        return value

    @model_validator(mode="after")
    def _whole(self) -> PlatformArgs:
        if self.node_groups is None:
            self.node_groups = default_node_groups(self.profile)
        names = [g.name for g in self.node_groups]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise FieldError("nodeGroups", f"group name(s) {dupes} used more than once; names must be unique")
        if not any(not _blocks_scheduling(g) for g in self.node_groups):
            raise FieldError(
                "nodeGroups",
                "every group is tainted NoSchedule/NoExecute; add an untainted CPU group for system pods (coredns)",
            )
        self._check_cluster_services_capacity()
        self._check_dynamic_paths()
        if self.profile == "prod" and self.cluster.endpoint_public_access:
            # A set of CIDRs that together cover the whole address space (0.0.0.0/1 + 128.0.0.0/1) is as
            # open as a literal /0.
            networks = [ipaddress.IPv4Network(c) for c in self.cluster.public_access_cidrs]
            everything = ipaddress.IPv4Network("0.0.0.0/0")
            covered = everything in ipaddress.collapse_addresses(networks)
            open_cidrs = self.cluster.public_access_cidrs if covered else []
            if open_cidrs:
                raise FieldError(
                    "cluster.publicAccessCidrs",
                    f"{open_cidrs} opens the prod API endpoint to the whole internet; list specific CIDRs or set "
                    "cluster.endpointPublicAccess: false",
                )
        storage = self.storage
        if (
            self.profile == "prod"
            and storage.enabled
            and not (storage.protect and storage.retain_on_delete)
            and not storage.allow_data_loss_on_prod
        ):
            off = [k for k, v in (("protect", storage.protect), ("retainOnDelete", storage.retain_on_delete)) if not v]
            raise FieldError(
                f"storage.{off[0]}",
                f"{', '.join(off)} switched off on a prod stack would let `pulumi destroy` delete the shared data; "
                "keep it on, or set storage.allowDataLossOnProd: true to say you mean it",
            )
        vpc = ipaddress.IPv4Network(self.network.cidr)
        services = ipaddress.IPv4Network(self.cluster.service_ipv4_cidr)
        if vpc.overlaps(services):
            raise FieldError(
                "cluster.serviceIpv4Cidr",
                f"{services} overlaps the VPC {vpc} (network.cidr); pick a Service CIDR outside the VPC",
            )
        from gpuplane.components import workload_checks  # noqa: PLC0415 - it imports this module's types

        workload_checks.check_workloads(self)
        return self

    def _check_cluster_services_capacity(self) -> None:
        """Cluster services (coredns, the EFS controller, the autoscaler) run on untainted groups only.

        They wait for those groups (never for GPU groups), so at least one must start with a node.
        """
        untainted = [g for g in self.resolved_node_groups if not _blocks_scheduling(g)]
        if not self.system_node_groups:
            raise FieldError(
                "nodeGroups",
                f"no untainted CPU group (untainted: {[g.name for g in untainted]}); cluster services (coredns, the "
                "EFS controller, the autoscaler) wait for untainted CPU groups only, never for GPU nodes: add one",
            )
        if all(g.min_size == 0 for g in self.system_node_groups):
            names = ", ".join(g.name for g in self.system_node_groups)
            raise FieldError(
                "nodeGroups",
                f"every untainted CPU group ({names}) has minSize 0: coredns, the EFS controller and the autoscaler "
                "would have no node to run on (the autoscaler cannot scale up without running itself); "
                "give one of them minSize >= 1",
            )

    @property
    def resolved_api_access_cidrs(self) -> list[str]:
        """Networks admitted to the API on 443: as configured, else the VPC for a private-only endpoint.

        A private-only endpoint is unreachable without a rule; the VPC's own CIDR lets a runner inside the
        VPC (CI runner, bastion) finish `pulumi up`. With the public endpoint on, nothing is opened unasked.
        """
        if self.cluster.api_access_cidrs is not None:
            return list(self.cluster.api_access_cidrs)
        return [] if self.cluster.endpoint_public_access else [self.network.cidr]

    @property
    def system_node_groups(self) -> list[NodeGroupArgs]:
        """Untainted CPU groups: where cluster services run, and the only groups they wait for."""
        return [g for g in self.resolved_node_groups if g.kind == "cpu" and not _blocks_scheduling(g)]

    def _check_dynamic_paths(self) -> None:
        """The access point paths the CSI driver will make for our dynamic claims must fit the EFS limit."""
        storage = self.storage
        if not storage.enabled:
            return
        claims = [v.name for v in storage.volumes if v.provisioning == "dynamic"] or ["x"]
        for claim in claims:
            length = dynamic_access_point_path_length(storage.base_path, self.workload_namespace, claim)
            if length > EFS_PATH_MAX_CHARS:
                raise FieldError(
                    "storage.basePath",
                    f"'{storage.base_path}' makes the access point path of claim '{claim}' in namespace "
                    f"'{self.workload_namespace}' {length} characters (basePath/namespace/claim-<uuid>); EFS allows "
                    f"{EFS_PATH_MAX_CHARS}: shorten basePath, the namespace or the volume name",
                )

    @property
    def resolved_node_groups(self) -> list[NodeGroupArgs]:
        """Node groups after defaults (never None once validated)."""
        assert self.node_groups is not None  # set by _whole
        return self.node_groups


def _blocks_scheduling(group: NodeGroupArgs) -> bool:
    return any(t.effect in ("NoSchedule", "NoExecute") for t in group.all_taints)
