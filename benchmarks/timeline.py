"""A MODEL of how long `pulumi up` and `pulumi destroy` take: the critical path of a rendered plan.

Nothing here measures a real `up` (no AWS from this machine). The plan's graph is real: it is the graph
the engine would walk, built from `plan.json` the way the engine orders operations. Creates wait for a
resource's dependencies, its provider and its parent; deletes run the other way round (a resource goes
only after everything that depends on it, is parented to it or uses it as provider is gone), and a
resource `deletedWith` a resource that is deleted too is not deleted at all (it costs nothing). The
durations are typical values per resource type, each with where it comes from, and only the ORDER of
magnitude matters: the result to read is WHICH resources sit on the critical path.

Run: .venv/bin/python -m benchmarks.timeline [--plan build/prod/plan.json ...]   (default: dev and prod,
rendered in-process). Prints the path and total per stack, for create, destroy and upgrade, and (for dev and
prod) the totals at each `cluster.nodeUpgradeOrder`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from gpuplane.components.config import NodeUpgradeOrder
from gpuplane.infra import config, render

Operation = Literal["create", "destroy", "upgrade"]

# type token -> (create seconds, delete seconds, source). Typical values, not measurements of ours.
DURATIONS: dict[str, tuple[float, float, str]] = {
    "aws:eks/cluster:Cluster": (
        600,
        300,
        "EKS user guide (create-cluster: 'typically takes 10-15 minutes'); deletes commonly take ~5 min",
    ),
    "aws:eks/nodeGroup:NodeGroup": (
        240,
        300,
        "EKS managed node groups: EC2 boot + join, typically 3-5 min; delete drains and terminates, ~5 min",
    ),
    "aws:eks/addon:Addon": (
        60,
        30,
        "EKS add-ons: ACTIVE once the Deployment/DaemonSet is ready, typically ~1 min",
    ),
    "aws:eks/accessEntry:AccessEntry": (5, 5, "EKS API call, seconds"),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": (5, 5, "EKS API call, seconds"),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": (5, 5, "EKS API call, seconds"),
    "aws:ec2/natGateway:NatGateway": (
        120,
        60,
        "EC2 NAT gateway: pending -> available typically 1-3 min; deleting ~1 min",
    ),
    "aws:ec2/eip:Eip": (5, 5, "EC2 API call, seconds"),
    "aws:ec2/vpc:Vpc": (5, 5, "EC2 API call, seconds"),
    "aws:ec2/subnet:Subnet": (5, 5, "EC2 API call, seconds (destroy-time ENI cleanup is the teardown hooks')"),
    "aws:ec2/internetGateway:InternetGateway": (5, 5, "EC2 API call, seconds"),
    "aws:ec2/routeTable:RouteTable": (5, 5, "EC2 API call, seconds"),
    "aws:ec2/route:Route": (5, 5, "EC2 API call, seconds"),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": (5, 5, "EC2 API call, seconds"),
    "aws:ec2/securityGroup:SecurityGroup": (5, 5, "EC2 API call, seconds"),
    "aws:ec2/launchTemplate:LaunchTemplate": (5, 5, "EC2 API call, seconds"),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": (5, 5, "EC2 API call, seconds"),
    "aws:autoscaling/tag:Tag": (5, 5, "Auto Scaling API call, seconds"),
    "aws:efs/fileSystem:FileSystem": (10, 10, "EFS: creating -> available in seconds"),
    "aws:efs/mountTarget:MountTarget": (
        90,
        60,
        "EFS mount targets: creating -> available typically ~1.5 min; deletion ~1 min",
    ),
    "aws:efs/accessPoint:AccessPoint": (5, 5, "EFS API call, seconds"),
    "aws:efs/backupPolicy:BackupPolicy": (5, 5, "EFS API call, seconds"),
    "aws:efs/fileSystemPolicy:FileSystemPolicy": (5, 5, "EFS API call, seconds"),
    "aws:iam/role:Role": (5, 5, "IAM API call, seconds"),
    "aws:iam/rolePolicy:RolePolicy": (5, 5, "IAM API call, seconds"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": (5, 5, "IAM API call, seconds"),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": (5, 5, "IAM API call, seconds"),
    "aws:kms/key:Key": (5, 5, "KMS API call (deletion is only scheduled), seconds"),
    "aws:kms/alias:Alias": (5, 5, "KMS API call, seconds"),
    "aws:cloudwatch/logGroup:LogGroup": (5, 5, "CloudWatch Logs API call, seconds"),
    "kubernetes:helm.sh/v3:Release": (
        60,
        30,
        "Helm install with wait: pods pulled and Ready, typically ~1 min; uninstall ~30 s",
    ),
    "kubernetes:core/v1:Namespace": (2, 30, "Kubernetes API; a namespace delete waits for its contents"),
}
# A Kubernetes upgrade (one minor, `cluster.kubernetesVersion` raised): only these move (the render of two
# adjacent minors proves it, tests/components/test_upgrade_render.py); everything else costs nothing.
UPGRADE_DURATIONS: dict[str, tuple[float, str]] = {
    "aws:eks/cluster:Cluster": (
        600,
        "EKS user guide (update-cluster): the control plane is replaced in place, typically 8-12 min; a model value",
    ),
    "aws:eks/addon:Addon": (60, "UpdateAddon: the new build rolls out like a create, ~1 min"),
}
# A managed node group's update (EKS user guide "managed-node-update-behavior"): setup (a new launch template
# version), then batches of `maxUnavailablePercentage` of the group (at least one node), each a new node booted
# and joined (the create time, 240 s) and an old one cordoned, drained and terminated (~60 s); an empty group
# only gets the setup.
NODE_GROUP_UPDATE_SETUP = 120.0
NODE_REPLACE = 300.0


def upgrade_duration(resource: Mapping[str, Any]) -> float:
    """Seconds one resource takes to move to a new minor: zero for what does not move."""
    type_ = str(resource["type"])
    if type_ == "aws:eks/nodeGroup:NodeGroup":
        inputs = resource["inputs"]
        nodes = int((inputs.get("scalingConfig") or {}).get("desiredSize") or 0)
        percent = int((inputs.get("updateConfig") or {}).get("maxUnavailablePercentage") or 0)
        batch = max(1, nodes * percent // 100)
        return NODE_GROUP_UPDATE_SETUP + -(-nodes // batch) * NODE_REPLACE
    return UPGRADE_DURATIONS.get(type_, (0.0, ""))[0] if resource["custom"] else 0.0


DEFAULT_DURATION = (2.0, 2.0, "Kubernetes API call (ConfigMap, PV, PVC, StorageClass...), seconds")
NO_DURATION = (0.0, 0.0, "components and providers: no cloud call")


@dataclass(frozen=True)
class Path_:
    """A critical path: its resources in order (URNs), the time each adds, and the total."""

    stack: str
    operation: Operation
    steps: list[tuple[str, str, float]]
    """(URN, type, seconds this step adds)."""
    total: float

    def names(self) -> list[str]:
        """The resource names on the path, in order."""
        return [urn.rsplit("::", 1)[-1] for urn, _, _ in self.steps]

    def types(self) -> list[str]:
        """The type tokens on the path, in order."""
        return [type_ for _, type_, _ in self.steps]


def duration(resource: Mapping[str, Any], operation: Operation) -> float:
    """Modelled seconds of one resource's create or delete."""
    if not resource["custom"] or str(resource["type"]).startswith("pulumi:providers:"):
        return 0.0
    if operation == "upgrade":
        return upgrade_duration(resource)
    create, delete, _ = DURATIONS.get(str(resource["type"]), DEFAULT_DURATION)
    return create if operation == "create" else delete


def _prerequisites(resources: Sequence[Mapping[str, Any]]) -> dict[str, set[str]]:
    """URN -> URNs that must be created first: dependencies, provider and parent (engine order)."""
    urns = {str(r["urn"]) for r in resources}
    before: dict[str, set[str]] = {}
    for resource in resources:
        needs = set(resource["dependencies"])
        if resource.get("provider"):
            needs.add(str(resource["provider"]).rsplit("::", 1)[0])
        if resource.get("parent"):
            needs.add(str(resource["parent"]))
        before[str(resource["urn"])] = needs & urns
    return before


@dataclass(frozen=True)
class Schedule:
    """When each resource's create or delete would start and end (seconds), as the engine would order them."""

    cost: dict[str, float]
    """URN -> seconds its own operation takes (0 for a delete skipped because of `deletedWith`)."""
    finish: dict[str, float]
    """URN -> when its operation ends: the latest end among what must go before it, plus its cost."""
    via: dict[str, str | None]
    """URN -> the prerequisite that ends last (the previous step of its longest chain)."""

    def start(self, urn: str) -> float:
        """When the operation on `urn` begins."""
        return self.finish[urn] - self.cost[urn]


def schedule(plan: Mapping[str, Any], operation: Operation, *, deleted_with: bool = True) -> Schedule:
    """Start and end of every resource's create or destroy, with unlimited parallelism (the engine's default).

    `deleted_with=False` models the destroy as if no resource were `deletedWith` (the comparison).
    """
    resources: list[Mapping[str, Any]] = list(plan["resources"])
    by_urn = {str(r["urn"]): r for r in resources}
    before = _prerequisites(resources)
    if operation == "destroy":
        after: dict[str, set[str]] = {urn: set() for urn in by_urn}
        for urn, needs in before.items():
            for need in needs:
                after[need].add(urn)  # `need` is deleted only after `urn`
        before = after
    cost: dict[str, float] = {}
    for urn, resource in by_urn.items():
        skipped = deleted_with and operation == "destroy" and resource.get("deletedWith") in by_urn
        cost[urn] = 0.0 if skipped else duration(resource, operation)
    finish: dict[str, float] = {}
    via: dict[str, str | None] = {}

    def visit(urn: str, stack: tuple[str, ...] = ()) -> float:
        if urn in finish:
            return finish[urn]
        if urn in stack:
            raise ValueError(f"dependency cycle through {urn}")
        best, best_urn = 0.0, None
        for prior in sorted(before[urn]):
            done = visit(prior, (*stack, urn))
            if done > best:
                best, best_urn = done, prior
        finish[urn] = best + cost[urn]
        via[urn] = best_urn
        return finish[urn]

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(by_urn)))
    for urn in sorted(by_urn):
        visit(urn)
    return Schedule(cost, finish, via)


def critical_path(plan: Mapping[str, Any], operation: Operation, *, deleted_with: bool = True) -> Path_:
    """The longest chain of modelled durations through the plan's graph, for create or destroy.

    `deleted_with=False` models the destroy as if no resource were `deletedWith` (the comparison).
    """
    by_urn = {str(r["urn"]): r for r in plan["resources"]}
    timing = schedule(plan, operation, deleted_with=deleted_with)
    end = max(sorted(by_urn), key=lambda urn: timing.finish[urn])
    chain: list[str] = []
    current: str | None = end
    while current is not None:
        chain.append(current)
        current = timing.via[current]
    chain.reverse()
    steps = [(u, str(by_urn[u]["type"]), timing.cost[u]) for u in chain if timing.cost[u] > 0]
    return Path_(str(plan.get("stack", "")), operation, steps, timing.finish[end])


DESTROY_PHASES = {
    "node groups": ("aws:eks/nodeGroup:NodeGroup",),
    "cluster": ("aws:eks/cluster:Cluster",),
    "network": ("aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/internetGateway:InternetGateway"),
}
"""The three things a destroy must do one after another: DeleteCluster refuses while node groups exist, and
the subnets and VPC cannot go while the cluster's network interfaces use them."""


def destroy_phases(plan: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """Phase -> (first start, last end) of its resources' deletes, in seconds from the start of the destroy."""
    timing = schedule(plan, "destroy")
    phases: dict[str, tuple[float, float]] = {}
    for phase, types in DESTROY_PHASES.items():
        urns = [str(r["urn"]) for r in plan["resources"] if r["type"] in types]
        if urns:
            phases[phase] = (min(timing.start(u) for u in urns), max(timing.finish[u] for u in urns))
    return phases


def render_plan(
    stack: str, node_upgrade_order: str | None = None, raw: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """plan.json of a shipped stack (or of the config map `raw`), rendered in-process under mocks.

    `node_upgrade_order`: sets `cluster.nodeUpgradeOrder` over the stack's own.
    """
    raw = dict(config.read_stack_file(stack) if raw is None else raw)
    if node_upgrade_order is not None:
        key = f"{config.NAMESPACE}:cluster"
        raw[key] = {**(raw.get(key) or {}), "nodeUpgradeOrder": node_upgrade_order}
    stack_config = config.parse(raw, config.stack_short_name(stack))
    return render.plan_document(stack_config, render.run_stack(stack_config))


NODE_UPGRADE_ORDERS: tuple[str, ...] = get_args(NodeUpgradeOrder)
"""The values of `cluster.nodeUpgradeOrder`, compared by `order_report`."""


def order_totals(stack: str, raw: Mapping[str, Any] | None = None) -> dict[str, dict[Operation, float]]:
    """`cluster.nodeUpgradeOrder` value -> operation -> modelled seconds, for a shipped stack (or `raw`)."""
    operations: tuple[Operation, ...] = ("create", "destroy", "upgrade")
    return {
        order: {op: critical_path(plan, op).total for op in operations}
        for order in NODE_UPGRADE_ORDERS
        for plan in [render_plan(stack, order, raw)]
    }


def order_report(stack: str, raw: Mapping[str, Any] | None = None) -> str:
    """Markdown: create, destroy and upgrade totals of a shipped stack (or `raw`) at each node upgrade order."""
    totals = order_totals(stack, raw)
    lines = [
        f"**{stack}, cluster.nodeUpgradeOrder (model, min)**",
        "",
        "| order | create | destroy | upgrade |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {order} | " + " | ".join(f"{totals[order][op] / 60:.1f}" for op in ("create", "destroy", "upgrade")) + " |"
        for order in NODE_UPGRADE_ORDERS
    ]
    extra = {op: (totals["systemFirst"][op] - totals["parallel"][op]) / 60 for op in ("create", "destroy", "upgrade")}
    lines.append(
        "| systemFirst costs | " + " | ".join(f"+{extra[op]:.1f}" for op in ("create", "destroy", "upgrade")) + " |"
    )
    return "\n".join(lines)


def report(path: Path_) -> str:
    """Markdown: the path, one row per step, and the total."""
    lines = [
        f"**{path.stack}, {path.operation}: {path.total / 60:.1f} min (model)**",
        "",
        "| step | type | adds (s) |",
        "|---|---|---|",
    ]
    lines += [f"| {urn.rsplit('::', 1)[-1]} | `{type_}` | {secs:g} |" for urn, type_, secs in path.steps]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the create and destroy critical paths of dev and prod (or of the given plan.json files)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--plan", action="append", type=Path, help="a rendered plan.json (repeatable)")
    args = parser.parse_args(argv)
    plans = [json.loads(p.read_text()) for p in args.plan] if args.plan else [render_plan(s) for s in ("dev", "prod")]
    print("Durations are a MODEL (typical values per resource type, sources in DURATIONS), not measurements.\n")
    for plan in plans:
        for operation in ("create", "destroy", "upgrade"):
            print(report(critical_path(plan, operation)), end="\n\n")
        phases = "; ".join(f"{k} {a / 60:.1f}-{b / 60:.1f} min" for k, (a, b) in destroy_phases(plan).items())
        print(f"{plan.get('stack', '')}, destroy phases (start-end): {phases}", end="\n\n")
        without = critical_path(plan, "destroy", deleted_with=False)
        print(f"{without.stack}, destroy if nothing were deletedWith the cluster: {without.total / 60:.1f} min")
        print(" -> ".join(without.names()), end="\n\n")
    if not args.plan:
        for stack in ("dev", "prod"):
            print(order_report(stack), end="\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
