"""Which EKS add-ons a stack installs, which config key needs each, and whether AWS offers it in a region.

Why one place: the render refuses a stack that needs an add-on its region does not have (metrics-server is
not offered in the China and GovCloud regions), and `gpuplane preflight` asks EKS (DescribeAddonVersions)
about exactly the same list; a list kept twice would drift. The offering table is in
`manifests/lifecycle.py` (`ADDON_UNAVAILABLE_REGION_PREFIXES`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.manifests import lifecycle, wellknown

if TYPE_CHECKING:
    from gpuplane.components.config import PlatformArgs


@dataclass(frozen=True)
class NeededAddon:
    """An EKS add-on the stack creates, and the config key that makes it do so."""

    name: str
    key: str


def stack_addons(args: PlatformArgs) -> list[NeededAddon]:
    """Every EKS add-on a `pulumi up` of `args` creates, in creation order."""
    needed = [
        NeededAddon(wellknown.ADDON_POD_IDENTITY_AGENT, "cluster"),
        NeededAddon(wellknown.ADDON_VPC_CNI, "cluster"),
        NeededAddon(wellknown.ADDON_KUBE_PROXY, "cluster"),
        NeededAddon(wellknown.ADDON_COREDNS, "cluster"),
    ]
    if args.storage.enabled:
        needed.append(NeededAddon(wellknown.ADDON_EFS_CSI, "storage.enabled"))
    if args.observability.metrics == "prometheus":
        # The in-cluster Prometheus keeps its data on an EBS volume (manifests/observability.py).
        needed.append(NeededAddon(wellknown.ADDON_EBS_CSI, "observability.metrics"))
    repaired = [f"nodeGroups[{i}].repair" for i, g in enumerate(args.resolved_node_groups) if g.repair.enabled]
    if repaired:
        # Node auto repair acts on the conditions this agent sets (EKS user guide "node-health").
        needed.append(NeededAddon(wellknown.ADDON_NODE_MONITORING_AGENT, repaired[0]))
    if args.observability.metrics == "cloudwatch":
        needed.append(NeededAddon(wellknown.ADDON_CLOUDWATCH_OBSERVABILITY, "observability.metrics"))
    scaled = [
        f"serving[{i}].variants[{j}].autoscaling"
        for i, serving in enumerate(args.serving)
        for j, variant in enumerate(serving.variants)
        if variant.autoscaling is not None and variant.autoscaling.metric == "cpu"
    ]
    if scaled:
        needed.append(NeededAddon(wellknown.ADDON_METRICS_SERVER, scaled[0]))
    return needed


def region_problems(args: PlatformArgs, region: str) -> list[tuple[str, str]]:
    """(key, message) for each add-on the stack needs that EKS does not offer in `region`.

    Refused rather than replaced by an upstream chart: the regions without the add-on are the ones whose
    nodes often cannot reach the upstream registries either (registry.k8s.io from cn-*), and a silent
    substitute would be a second, unpinned way to run the same component (docs/operations.md).
    """
    problems = []
    for addon in stack_addons(args):
        if not lifecycle.addon_offered(addon.name, region):
            problems.append(
                (
                    addon.key,
                    f"needs the EKS add-on '{addon.name}', which AWS does not offer in {region} (eksctl excludes it "
                    "in the China, GovCloud and ISO regions); "
                    + (
                        "remove autoscaling from the variant (fixed replicas) or deploy the stack in another region"
                        if addon.name == wellknown.ADDON_METRICS_SERVER
                        else "deploy the stack in another region"
                    ),
                )
            )
    return problems


# The add-ons a node needs before it joins (terraform-aws-eks `before_compute`): the rest need running nodes.
BEFORE_NODES: tuple[str, ...] = (
    wellknown.ADDON_POD_IDENTITY_AGENT,
    wellknown.ADDON_VPC_CNI,
    wellknown.ADDON_KUBE_PROXY,
)


@dataclass(frozen=True)
class VersionQuery:
    """How an add-on's `addonVersion` is found: EKS's default for the cluster's minor (`get_addon_version`).

    Not the most recent: EKS marks as default the build it has qualified for the minor, and a newer build
    may still be rolling out; the same lookup terraform-aws-eks makes.
    """

    addon_name: str
    kubernetes_version: str
    most_recent: bool = False


def version_query(addon_name: str, kubernetes_version: str) -> VersionQuery:
    """The lookup of `addon_name`'s version for a cluster at `kubernetes_version`."""
    return VersionQuery(addon_name, kubernetes_version)


def by_nodes(args: PlatformArgs) -> tuple[list[str], list[str]]:
    """The stack's add-ons split into those installed before the nodes and those that need nodes."""
    names = [a.name for a in stack_addons(args)]
    return [n for n in names if n in BEFORE_NODES], [n for n in names if n not in BEFORE_NODES]
