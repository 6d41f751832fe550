"""The whole stack config (`PlatformArgs`): the sections, the prod profile's defaults and the cross-checks."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any, Final, Literal

from pydantic import Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from gpuplane.components import queue_plan, workload_checks
from gpuplane.components.args_base import FieldError, FieldErrors, _Args, raise_all
from gpuplane.components.config.cluster import ClusterArgs
from gpuplane.components.config.common import _DNS_LABEL_RE, Profile
from gpuplane.components.config.network import NetworkArgs
from gpuplane.components.config.node_groups import NodeGroupArgs, _blocks_scheduling, default_node_groups
from gpuplane.components.config.queue import QueueArgs
from gpuplane.components.config.storage import EFS_PATH_MAX_CHARS, StorageArgs, dynamic_access_point_path_length
from gpuplane.components.workload_args import ServingArgs, TrainingArgs
from gpuplane.components.workload_checks import WorkloadContext
from gpuplane.manifests import versions


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
    queue: QueueArgs = Field(
        default_factory=QueueArgs,
        description="The training queue (Kueue), installed when training is declared. See QueueArgs.",
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
        if not _DNS_LABEL_RE.fullmatch(value) or value.startswith("kube-"):
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
        # Every problem of the whole at once (each check below is independent of the others' outcome).
        if self.node_groups is None:
            self.node_groups = default_node_groups(self.profile)
        problems: list[FieldError] = []
        names = [g.name for g in self.node_groups]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            problems.append(
                FieldError("nodeGroups", f"group name(s) {dupes} used more than once; names must be unique")
            )
        if not any(not _blocks_scheduling(g) for g in self.node_groups):
            problems.append(
                FieldError(
                    "nodeGroups",
                    "every group is tainted NoSchedule/NoExecute; add an untainted CPU group for system pods (coredns)",
                )
            )
        else:
            problems += _collect(self._check_cluster_services_capacity)
        problems += _collect(self._check_dynamic_paths)
        if self.profile == "prod" and self.cluster.endpoint_public_access:
            # A set of CIDRs that together cover the whole address space (0.0.0.0/1 + 128.0.0.0/1) is as
            # open as a literal /0.
            networks = [ipaddress.IPv4Network(c) for c in self.cluster.public_access_cidrs]
            everything = ipaddress.IPv4Network("0.0.0.0/0")
            covered = everything in ipaddress.collapse_addresses(networks)
            open_cidrs = self.cluster.public_access_cidrs if covered else []
            if open_cidrs:
                problems.append(
                    FieldError(
                        "cluster.publicAccessCidrs",
                        f"{open_cidrs} opens the prod API endpoint to the whole internet; list specific CIDRs or "
                        "set cluster.endpointPublicAccess: false",
                    )
                )
        storage = self.storage
        if (
            self.profile == "prod"
            and storage.enabled
            and not (storage.protect and storage.retain_on_delete)
            and not storage.allow_data_loss_on_prod
        ):
            off = [k for k, v in (("protect", storage.protect), ("retainOnDelete", storage.retain_on_delete)) if not v]
            problems.append(
                FieldError(
                    f"storage.{off[0]}",
                    f"{', '.join(off)} switched off on a prod stack would let `pulumi destroy` delete the shared "
                    "data; keep it on, or set storage.allowDataLossOnProd: true to say you mean it",
                )
            )
        vpc = ipaddress.IPv4Network(self.network.cidr)
        services = ipaddress.IPv4Network(self.cluster.service_ipv4_cidr)
        if vpc.overlaps(services):
            problems.append(
                FieldError(
                    "cluster.serviceIpv4Cidr",
                    f"{services} overlaps the VPC {vpc} (network.cidr); pick a Service CIDR outside the VPC",
                )
            )
        problems += workload_checks.workload_problems(WorkloadContext.of(self), self.serving, self.training)
        problems += _collect(lambda: queue_plan.check_queue(WorkloadContext.of(self), self.queue, self.training))
        raise_all(problems)
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


def _collect(check: Callable[[], None]) -> list[FieldError]:
    """The FieldError(s) a check raises, as a list."""
    try:
        check()
    except FieldErrors as exc:
        return exc.errors
    except FieldError as exc:
        return [exc]
    return []
