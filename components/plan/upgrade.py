"""A Kubernetes upgrade by changing one version: the path between minors, the nodes' versions, EKS's order.

Why one module: raising `cluster.kubernetesVersion` moves the control plane only unless every node group and
add-on is told the new minor too (EKS gives them the cluster's version at creation and never moves them),
and EKS takes one minor per step (`UpdateClusterVersion` refuses a skip). The render, `gpuplane preflight`,
the program under the engine (`infra/aws/live_version.py`) and docs/upgrades.md read the same rules from here, so
the plan, the checks and the guide cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from gpuplane.manifests import lifecycle, versions, wellknown

if TYPE_CHECKING:
    from gpuplane.components.config import NodeGroupArgs, NodeUpgradeOrder, PlatformArgs


def minor_of(version: str) -> tuple[int, int]:
    """`"1.36"` (or `"1.36.2"`, `"v1.36"`) as `(1, 36)`; a clear error naming the bad text otherwise."""
    parts = version.strip().removeprefix("v").split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise ValueError(f"'{version}' is not a Kubernetes version like 1.36")
    return int(parts[0]), int(parts[1])


def upgrade_path(running: str, target: str) -> list[str]:
    """The minors to set one after another to go from `running` to `target`, the target last.

    Empty when they are the same minor. EKS upgrades one minor per `UpdateClusterVersion` and never
    downgrades, so a lower target has no path (ValueError naming both).
    """
    have, want = minor_of(running), minor_of(target)
    if want < have:
        raise ValueError(
            f"cluster.kubernetesVersion '{target}' is older than the running cluster's {running}: EKS never "
            f"downgrades a control plane; set '{running}' (or newer, one minor at a time)"
        )
    if have[0] != want[0]:
        raise ValueError(f"no upgrade path from {running} to {target}: different major versions")
    return [f"{want[0]}.{minor}" for minor in range(have[1] + 1, want[1] + 1)]


def jump_problem(running: str, target: str) -> str | None:
    """Why a stack at `target` cannot be applied to a cluster at `running` in one `pulumi up`, or None."""
    try:
        path = upgrade_path(running, target)
    except ValueError as exc:
        return str(exc)
    if len(path) <= 1:
        return None
    steps = " -> ".join([running, *path])
    return (
        f"cluster.kubernetesVersion '{target}' is {len(path)} minors ahead of the running cluster's {running}: "
        f"EKS upgrades one minor at a time; take the path {steps}, one `pulumi up` per minor (set "
        f"'{path[0]}', up, verify, then the next)"
    )


# --- the nodes' versions -----------------------------------------------------------------------------------
# The managed node group's `version` is the cluster's minor (EKS refuses a node group newer than its cluster,
# and one more than a minor behind cannot be upgraded in one step), and its `releaseVersion` is the AMI release
# EKS recommends for that minor and AMI type: read at `pulumi up` from the public SSM parameter AWS publishes
# for it (EKS user guide, "Retrieve recommended Amazon Linux AMI IDs" / "Retrieve recommended Bottlerocket AMI
# IDs"), so it moves with the minor and with AWS's AMI releases and the plan names the release it rolls to.


@dataclass(frozen=True)
class NodeVersion:
    """What a managed node group is told about its Kubernetes version and AMI release."""

    version: str
    """The node group's `version`: the cluster's minor."""
    release_parameter: str
    """The public SSM parameter whose value is the group's `releaseVersion` (the recommended AMI release)."""


def release_version_parameter(ami_type: str, kubernetes_version: str) -> str:
    """The public SSM parameter holding the recommended AMI release of an EKS AMI type for a minor.

    AL2023: `.../recommended/release_version` (e.g. `1.36.2-20260714`, the form `releaseVersion` takes);
    Bottlerocket: `.../latest/image_version` (e.g. `1.52.0-4e4aec1b`, ditto).
    """
    arch, nvidia, family = wellknown.AMI_TYPES[ami_type]
    ssm_arch = "arm64" if arch == "arm64" else "x86_64"
    if family == "bottlerocket":
        variant = f"aws-k8s-{kubernetes_version}" + ("-nvidia" if nvidia else "")
        return f"/aws/service/bottlerocket/{variant}/{ssm_arch}/latest/image_version"
    flavour = "nvidia" if nvidia else "standard"
    return (
        f"/aws/service/eks/optimized-ami/{kubernetes_version}/amazon-linux-2023/{ssm_arch}/{flavour}/"
        "recommended/release_version"
    )


def node_version(group: NodeGroupArgs, kubernetes_version: str) -> NodeVersion:
    """The version and AMI release parameter of `group` in a cluster at `kubernetes_version`."""
    return NodeVersion(kubernetes_version, release_version_parameter(group.resolved_ami_type, kubernetes_version))


def update_strategy(group: NodeGroupArgs) -> str:
    """How EKS replaces the group's nodes at a version or AMI update: `MINIMAL` for GPU groups, else `DEFAULT`.

    `DEFAULT` surges: EKS raises the Auto Scaling group's size by up to two nodes per Availability Zone and
    launches the new nodes before it drains the old (EKS user guide, "Managed node update behavior"). For a GPU
    group that is up to six more GPU instances for the length of the update, and a group whose nodes come from a
    reservation or a Capacity Block has no capacity to surge into, so its update fails. `MINIMAL` terminates old
    nodes before it launches new ones, `maxUnavailablePercentage` at a time; botocore's `eks` model
    (`NodegroupUpdateConfig.updateStrategy`) names it for "hardware accelerators such as GPUs".
    """
    return "MINIMAL" if group.kind == "gpu" else "DEFAULT"


# What one batch of a node group's update takes at most: EKS waits up to 15 minutes for a node's pods to leave
# (its PodDisruptionBudgets; then the update fails, EKS user guide "Managed node update behavior"), and a new node
# takes several minutes to launch, join and get its GPU stack ready.
NODE_BATCH_MINUTES: Final = 30
# The provider's default wait for a node group update (terraform-provider-aws `aws_eks_node_group`, 60 minutes).
PROVIDER_NODE_GROUP_UPDATE_MINUTES: Final = 60


def update_timeout_minutes(group: NodeGroupArgs) -> int:
    """How long `pulumi up` waits for the group's update: its batches at their longest, never less than the default.

    A batch is `maxUnavailablePercentage` of the group's largest size (at least one node, at most 100, as EKS
    counts it). Past the wait Pulumi reports a failure while EKS carries on, and the next `pulumi up` meets an
    update still in progress; a large GPU group's update can outlast the provider's 60 minutes.
    """
    batch = min(100, max(1, group.max_size * group.max_unavailable_percentage // 100))
    batches = -(-group.max_size // batch)
    return max(PROVIDER_NODE_GROUP_UPDATE_MINUTES, batches * NODE_BATCH_MINUTES)


# --- EKS's order --------------------------------------------------------------------------------------------
Tier = Literal["control plane", "add-ons before nodes", "node groups", "add-ons after nodes", "GPU node groups"]
ORDER: Final[tuple[Tier, ...]] = (
    "control plane",
    "add-ons before nodes",
    "node groups",
    "add-ons after nodes",
    "GPU node groups",
)
"""What a `pulumi up` of a new minor moves, in this order (each tier waits for the ones before it, the last
for the system groups only).

EKS's upgrade guide: the control plane first (nodes and add-ons may be one minor behind it, never ahead),
then the add-ons, then the nodes. The add-ons that need running nodes to become healthy (coredns, the CSI
drivers, the monitoring agents, metrics-server) wait for the system groups at creation, and the same
dependency holds at an upgrade, so they move right after the system groups.

The node groups among themselves follow `cluster.nodeUpgradeOrder`. `parallel` (the default): every group
moves at once, each by its own `maxUnavailablePercentage`, as terraform-aws-eks and EKS Blueprints order them,
and the "GPU node groups" tier is empty. `systemFirst` (EKS's guide): each GPU group waits for every system
group, so the GPU groups form the last tier; they move beside the add-ons after nodes, which wait for the
system groups only. The price of `systemFirst`: the dependency also holds at every create and destroy, where
it puts a GPU group's create and delete on the critical path (docs/upgrades.md gives the timeline model's
minutes).
"""


def waits_for_system_groups(group: NodeGroupArgs, order: NodeUpgradeOrder) -> bool:
    """Whether `group` is created and moved only after every system group: a GPU group at `systemFirst`."""
    return order == "systemFirst" and group.kind == "gpu"


@dataclass(frozen=True)
class UpgradeStep:
    """One tier of the order and what is in it (EKS add-on names, node group names)."""

    tier: Tier
    members: tuple[str, ...]


def upgrade_order(args: PlatformArgs, addons_before: Sequence[str], addons_after: Sequence[str]) -> list[UpgradeStep]:
    """The tiers of `ORDER` for a stack, with the add-ons and node groups in each; empty tiers left out."""
    order = args.cluster.node_upgrade_order
    groups = args.resolved_node_groups
    last = [g.name for g in groups if waits_for_system_groups(g, order)]
    members: dict[Tier, Sequence[str]] = {
        "control plane": [args.cluster_name or "cluster"],
        "add-ons before nodes": addons_before,
        "node groups": [g.name for g in groups if g.name not in last],
        "add-ons after nodes": addons_after,
        "GPU node groups": last,
    }
    return [UpgradeStep(tier, tuple(members[tier])) for tier in ORDER if members[tier]]


# --- the GPU stack against a target minor ---------------------------------------------------------------------


@dataclass(frozen=True)
class PartSupport:
    """A part of the GPU stack and what its upstream says about a Kubernetes minor."""

    part: str
    status: Literal["pass", "warn", "fail"]
    detail: str


def gpu_stack_support(
    target: str, *, gpu: bool, queue: bool, autoscaler: bool, operator: bool = False
) -> list[PartSupport]:
    """Each GPU-stack part the stack runs, judged against `target` by its published range (`versions`).

    `gpu`: the stack has GPU groups (the AMI's driver line, the device plugin); `operator`: the GPU Operator
    manages them (some group has `driver: operator`); `queue`: Kueue and JobSet run; `autoscaler`: its image.
    `fail` below a published range or where a per-minor pin is missing (nothing to install), `warn` past the
    newest minor upstream publishes or tests, `pass` inside the range or where upstream publishes none (said so
    in the detail).
    """
    wanted = minor_of(target)
    parts: list[str] = []
    if gpu:
        parts += ["nvidia-driver", "nvidia-device-plugin"]
    if gpu and operator:
        parts += ["gpu-operator"]
    if queue:
        parts += ["kueue", "jobset"]
    found: list[PartSupport] = []
    for part in parts:
        low, high, source = lifecycle.GPU_STACK_KUBERNETES[part]
        if low and wanted < minor_of(low):
            found.append(PartSupport(part, "fail", f"needs Kubernetes {low} or newer, not {target} ({source})"))
        elif high and wanted > minor_of(high):
            found.append(
                PartSupport(part, "warn", f"tested up to Kubernetes {high}, not {target}: run verify ({source})")
            )
        else:
            bounds = f"{low or 'any'} to {high or 'newest'}"
            found.append(PartSupport(part, "pass", f"{target} is within {bounds} ({source})"))
    if autoscaler:
        image = versions.CLUSTER_AUTOSCALER_IMAGES.get(target)
        if image is None:
            found.append(
                PartSupport(
                    "cluster-autoscaler",
                    "fail",
                    f"no cluster-autoscaler image pinned for {target} (its minor must match the cluster's); "
                    f"pinned: {', '.join(versions.CLUSTER_AUTOSCALER_IMAGES)}",
                )
            )
        else:
            found.append(PartSupport("cluster-autoscaler", "pass", f"{image} for Kubernetes {target}"))
    return found
