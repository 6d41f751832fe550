"""The training queue's plan, from the stack: which groups become flavors, their quotas, the check, what fits.

Pure logic (no Pulumi, no import of the config package at run time: PlatformArgs' validator calls
`check_queue`). What is decided here (manifests/queue.py builds the objects, components/queue.py applies them):
- which node groups training may use (every group whose taints a training pod could tolerate: untainted
  CPU groups, and GPU groups whose only blocking taint is the GPU taint) and what each holds at maxSize;
- whether GPU flavors go through the ProvisioningRequest admission check: only when the autoscaler is
  installed and its image for the cluster's minor has the JSON client fix (`provisioning_supported`);
  on older minors (1.32) the queue admits by quota alone (docs/workloads.md, "The training queue");
- whether a run can ever be admitted whole (`check_run`): its GPU pods must fit one GPU group at maxSize;
- whether Kueue, picking a flavor per role, could split its GPU roles across groups (`check_one_group`):
  refused, the user names the group (docs/reserved-gpus.md, "One group per run").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from gpuplane.components.config.base import FieldError
from gpuplane.components.config.common import duration_seconds
from gpuplane.components.plan import capacity, gpu_nodes, placement
from gpuplane.manifests import lifecycle, queue, versions, wellknown

if TYPE_CHECKING:
    from gpuplane.components.config import NodeGroupArgs, QueueArgs
    from gpuplane.components.config.workloads import TrainingArgs
    from gpuplane.components.plan.placement import WorkloadContext


# The roles' pods are created only after a run's data import (up to its timeoutMinutes): the timeout must
# cover that import plus a GPU node's boot.
GPU_BOOT_ALLOWANCE_SECONDS: Final = 10 * 60


def _version_tuple(tag: str) -> tuple[int, ...]:
    return tuple(int(p) for p in tag.lstrip("v").split("."))


def provisioning_supported(kubernetes_version: str, *, autoscaler: bool = True) -> bool:
    """Whether the cluster-autoscaler we install for this minor handles ProvisioningRequests.

    It must be installed, and its pinned image at or past the patch that fixed the ProvisioningRequest
    client (lifecycle.PROVISIONING_REQUEST_FIXED); 1.32 has no such patch.
    """
    fixed = lifecycle.PROVISIONING_REQUEST_FIXED.get(kubernetes_version)
    image = versions.CLUSTER_AUTOSCALER_IMAGES.get(kubernetes_version)
    if not autoscaler or fixed is None or image is None:
        return False
    return _version_tuple(image) >= _version_tuple(fixed)


def training_groups(groups: Sequence[NodeGroupArgs]) -> list[NodeGroupArgs]:
    """Node groups a training pod could land on: no blocking taint but the GPU taint on a GPU group."""
    return [
        g
        for g in groups
        if not any(
            t.effect in ("NoSchedule", "NoExecute") and not (g.kind == "gpu" and t.key == wellknown.GPU_TAINT.key)
            for t in g.all_taints
        )
    ]


def flavor(group: NodeGroupArgs, max_gpus: int | None = None) -> queue.Flavor:
    """The group as a flavor: its name label, its blocking taints, what it holds at maxSize.

    Per node: the fit check's allocatable (smallest instance type, after the kubelet reservation, the
    eviction threshold and the system DaemonSets). `max_gpus` caps the group's GPU quota.
    """
    node = placement.allocatable(group)
    gpus = node.gpu_units * group.max_size if group.kind == "gpu" else 0
    if max_gpus is not None:
        gpus = min(gpus, max_gpus)
    taints = tuple(
        {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
        for t in group.all_taints
        if t.effect in ("NoSchedule", "NoExecute")
    )
    return queue.Flavor(
        group=group.name,
        node_labels={wellknown.LABEL_NODE_GROUP: group.name},
        taints=taints,
        cpu_millis=node.cpu_millis * group.max_size,
        memory_bytes=node.memory_bytes * group.max_size,
        gpus=gpus,
        gpu_resource=gpu_nodes.gpu_resource_name(group) if group.kind == "gpu" else None,
        efa=group.efa_interfaces * group.max_size,
    )


def queue_spec(
    namespace_name: str,
    groups: Sequence[NodeGroupArgs],
    args: QueueArgs,
    *,
    kubernetes_version: str,
    autoscaler: bool = True,
) -> queue.Queue:
    """The workload namespace's queue, from the node groups and the queue settings.

    Flavors are listed reserved first, then on-demand, then spot (`capacity.capacity_rank`; the stack's
    order within each kind): Kueue tries a ClusterQueue's flavors in order and admits a PodSet to the first
    whose quota it fits (flavor fungibility, `manifests/queue.py`), so reserved GPUs, paid for whether used
    or not, are spent before on-demand ones, and spot ones last.
    """
    ordered = sorted(training_groups(groups), key=capacity.capacity_rank)
    flavors = tuple(flavor(g, args.max_gpus if g.kind == "gpu" else None) for g in ordered)
    return queue.Queue(
        namespace=namespace_name,
        flavors=flavors,
        provisioning=provisioning_supported(kubernetes_version, autoscaler=autoscaler),
    )


@dataclass(frozen=True)
class GpuRole:
    """A role of a run that asks for GPUs: its pods and the GPU groups it may use."""

    name: str
    count: int
    cpu_millis: int
    memory_bytes: int
    gpus: int
    groups: tuple[str, ...]


def gpu_roles(training: TrainingArgs, context: WorkloadContext) -> list[GpuRole]:
    """The run's GPU roles (the pods a ProvisioningRequest manages), with the groups each fits."""
    roles = []
    for name, role in training.roles():
        if not role.resources.gpus:
            continue
        placed = placement.role_placement(training, name, role, context)
        roles.append(
            GpuRole(
                name=name,
                count=role.replicas,
                cpu_millis=role.resources.cpu_request_millis,
                memory_bytes=role.resources.memory_request_bytes,
                gpus=role.resources.gpus,
                groups=tuple(g.name for g in placed.groups),
            )
        )
    return roles


def nodes_needed(roles: Sequence[GpuRole], node: placement.Allocatable) -> int | None:
    """Nodes of this size that hold every pod of `roles`, each role on nodes of its own (an upper bound).

    None when a pod of some role does not fit the node at all.
    """
    total = 0
    for role in roles:
        per_node = min(
            node.cpu_millis // max(role.cpu_millis, 1),
            node.memory_bytes // max(role.memory_bytes, 1),
            node.gpu_units // role.gpus,
        )
        if per_node < 1:
            return None
        total += -(-role.count // per_node)
    return total


def holding_groups(training: TrainingArgs, context: WorkloadContext, args: QueueArgs) -> list[str]:
    """The GPU groups that hold every GPU pod of the run at maxSize (and within queue.maxGpus), in the queue's order.

    Only groups every GPU role may use count (a pod's node affinity decides which flavors Kueue may give
    it); the order is the ClusterQueue's (`queue_spec`: reserved, on-demand, spot, the stack's order
    within each), so the first is the one Kueue tries first. Empty for a run without GPUs.
    """
    roles = gpu_roles(training, context)
    if not roles:
        return []
    ordered = sorted(context.node_groups, key=capacity.capacity_rank)
    total = sum(r.count * r.gpus for r in roles)
    holds = []
    for group in ordered:
        if not all(group.name in r.groups for r in roles):
            continue
        need = nodes_needed(roles, placement.allocatable(group))
        if need is not None and need <= group.max_size and total <= flavor(group, args.max_gpus).gpus:
            holds.append(group.name)
    return holds


def check_run(training: TrainingArgs, context: WorkloadContext, args: QueueArgs) -> None:
    """ValueError unless one GPU group, at maxSize (and within the queue's GPU cap), holds all the run's GPU pods.

    The ProvisioningRequest asks the autoscaler for every GPU pod at once and it scales up only a group
    that can hold them all within its maximum (a request no group can hold waits 7 days before it fails);
    our groups carry their own name label, so the autoscaler never treats two as similar. Without the
    check (quota alone) such a run would never get all its GPUs in one group either. So a run whose GPU
    pods need more than one group, or two different GPU groups, is refused.
    """
    roles = gpu_roles(training, context)
    if not roles or holding_groups(training, context, args):
        return
    by_name = {g.name: g for g in context.node_groups}
    common = set.intersection(*(set(r.groups) for r in roles))
    if not common:
        # Not a size problem: no maxSize makes roles pinned to different groups meet in one.
        named = ", ".join(f"{r.name}: {list(r.groups)}" for r in roles)
        keys = " and ".join(f"{r.name}.nodeGroups" for r in roles)
        raise FieldError(
            f"{roles[-1].name}.nodeGroups",
            f"training '{training.name}': its GPU roles may use no GPU group in common ({named}); a run is "
            f"admitted whole on one group: name the same group in {keys}",
        )
    total = sum(r.count * r.gpus for r in roles)
    holds: list[str] = []
    for name in sorted(common):
        group = by_name[name]
        node = placement.allocatable(group)
        need = nodes_needed(roles, node)
        full = node.gpu_units * group.max_size
        quota = flavor(group, args.max_gpus).gpus
        cap = f", queue.maxGpus {args.max_gpus}" if quota < full else ""
        holds.append(
            f"'{name}' holds {full} GPU(s) on {group.max_size} node(s) of {node.describe()}{cap}; "
            f"the run needs {need if need is not None else 'more'} node(s)"
        )
    pods = ", ".join(f"{r.count} {r.name} x {r.gpus} GPU" for r in roles)
    where = "; ".join(holds) if holds else f"its GPU roles share no GPU group ({[list(r.groups) for r in roles]})"
    raise ValueError(
        f"training '{training.name}': its GPU pods ({pods}; {total} GPU(s) in all) fit no single GPU group at its "
        f"maxSize: {where}. A run is admitted whole on one group: raise that group's maxSize (or queue.maxGpus), "
        "or make the run smaller"
    )


def check_one_group(training: TrainingArgs, context: WorkloadContext, args: QueueArgs) -> None:
    """FieldError (`<role>.nodeGroups`) when Kueue could admit the run's GPU roles to different groups.

    Kueue assigns a flavor per PodSet (one per JobSet replicatedJob, so per role) and tries each role's
    flavors in the queue's order on its own: with two GPU roles (a `parameterServer` run's chief and
    workers) that may use more than one group, the chief can fit the reserved group and the workers only
    the next one, and the run is split across groups. A run with one GPU role (`multiWorkerMirrored`, or a
    parameterServer run with a CPU chief) is one GPU PodSet: one flavor, so one group, and it keeps the
    fallback from the reserved group to the next.

    Why a refusal, and neither Kueue nor an automatic pin (docs/reserved-gpus.md, "One group per run"; read
    in kubernetes-sigs/kueue at tag v0.19.2, the pinned version, on 2026-11-26):
    - Kueue's one way to give several PodSets one flavor is the PodSet group
      (`spec.podSets[].topologyRequest.podSetGroupName`, pkg/scheduler/flavorassigner/flavorassigner.go),
      set from the `kueue.x-k8s.io/podset-group-name` annotation, which the webhook refuses without a
      required or preferred topology (pkg/controller/jobframework/tas_validation.go): it is Topology Aware
      Scheduling. TAS places pods on the Ready nodes that exist (pkg/cache/scheduler/tas_nodes_cache.go,
      `sync`; tas_flavor.go, `snapshot`) and waits for provisioning only on flavors behind the
      ProvisioningRequest check (pkg/scheduler/flavorassigner/tas_flavorassigner.go,
      `podSetTopologyRequest`). Where the queue admits by quota alone (Kubernetes 1.32's autoscaler, or
      no autoscaler) a group at zero nodes would never admit a run; and a TAS flavor takes only PodSets
      that ask for a topology (`checkPodSetAndFlavorMatchForTAS`), so every GPU pod's placement would
      change. The wrong tool for groups that scale from zero.
    - Pinning the run to the first group that holds it would drop the fallback without the user deciding
      it; gpuplane already asks the user to choose with `nodeGroups` where its own choice would change what
      a run gets (placement.py: GPU groups that share GPUs differently). So the user picks, told how.
    """
    roles = gpu_roles(training, context)
    anywhere = sorted({g for r in roles for g in r.groups})
    if len(roles) < 2 or len(anywhere) < 2:
        return
    holds = holding_groups(training, context, args) or anywhere
    first = holds[0]
    role = next(r for r in roles if set(r.groups) != {first})
    names = [r.name for r in roles]
    keep = "worker" if "worker" in names else names[0]
    drop = [n for n in names if n != keep]
    pins = " and ".join(f"{n}.nodeGroups" for n in names)
    no_gpu = " and ".join(f"{n}.resources.gpus" for n in drop)
    raise FieldError(
        f"{role.name}.nodeGroups",
        f"training '{training.name}': its GPU roles ({', '.join(names)}) may use GPU groups {anywhere}, and Kueue "
        "picks a group for each role on its own (one flavor per PodSet), so they could start in different groups. "
        f"Allowed: one group for every GPU role ({pins}: [{first}]; the groups that hold the whole run, in the "
        f"queue's order: {', '.join(holds)}), or GPUs on the {keep} role only (remove {no_gpu}), which keeps its "
        'fallback from group to group (docs/reserved-gpus.md, "One group per run")',
    )


def check_queue(context: WorkloadContext, args: QueueArgs, trainings: Sequence[TrainingArgs]) -> None:
    """The queue cross-checks of a platform (PlatformArgs' validator): FieldError with the stack key path.

    Every training run must be admissible whole (`check_run`) and its GPU pods must land in one group
    whichever flavor Kueue picks for each role (`check_one_group`), and `queue.podsReadyTimeout` must leave a
    run's data import its whole timeout plus a GPU node's boot, or Kueue would evict runs that are fine.
    """
    timeout = duration_seconds(args.pods_ready_timeout)
    for index, training in enumerate(trainings):
        data = training.data_import
        if data is not None and timeout < data.timeout_minutes * 60 + GPU_BOOT_ALLOWANCE_SECONDS:
            raise FieldError(
                "queue.podsReadyTimeout",
                f"'{args.pods_ready_timeout}' is shorter than training[{index}].dataImport.timeoutMinutes "
                f"({data.timeout_minutes}m) plus 10m for a GPU node's boot: the roles start only after the import, "
                f"and Kueue would evict the run first; use at least {data.timeout_minutes + 10}m",
            )
        try:
            check_run(training, context, args)
        except placement.PlacementError:
            # A role no group takes: `placement.training_problems` names it under the role's own key already.
            continue
        except FieldError as exc:
            raise FieldError(f"training[{index}].{exc.field}", exc.message) from exc
        except ValueError as exc:
            role = next((name for name, r in training.roles() if r.resources.gpus), "worker")
            raise FieldError(f"training[{index}].{role}.replicas", str(exc)) from exc
        try:
            check_one_group(training, context, args)
        except FieldError as exc:
            raise FieldError(f"training[{index}].{exc.field}", exc.message) from exc
