"""TrainingQueue component: Kueue in front of training runs, with queues derived from the node groups.

What is decided here, from the stack (manifests/queue.py builds the objects):
- which node groups training may use (every group whose taints a training pod could tolerate: untainted
  CPU groups, and GPU groups whose only blocking taint is the GPU taint) and what each holds at maxSize;
- whether GPU flavors go through the ProvisioningRequest admission check: only when the autoscaler is
  installed and its image for the cluster's minor has the JSON client fix (`provisioning_supported`);
  on older minors (1.32) the queue admits by quota alone (docs/workloads.md, "The training queue");
- whether a run can ever be admitted whole (`check_run`): its GPU pods must fit one GPU group at maxSize.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpuplane.components import gpu_plan, workload_checks
from gpuplane.components.cluster import Cluster
from gpuplane.components.args_base import FieldError
from gpuplane.components.config import NodeGroupArgs, PlatformArgs
from gpuplane.components.queue_args import GPU_BOOT_ALLOWANCE_SECONDS, QueueArgs, duration_seconds
from gpuplane.manifests import queue, scheduling, versions
from gpuplane.manifests.namespaces import namespace
from gpuplane.manifests.training import Training

__all__ = ["QueueArgs", "TrainingQueue", "check_queue", "check_run", "flavor", "provisioning_supported", "queue_spec"]


def _version_tuple(tag: str) -> tuple[int, ...]:
    return tuple(int(p) for p in tag.lstrip("v").split("."))


def provisioning_supported(kubernetes_version: str, *, autoscaler: bool = True) -> bool:
    """Whether the cluster-autoscaler we install for this minor handles ProvisioningRequests.

    It must be installed, and its pinned image at or past the patch that fixed the ProvisioningRequest
    client (versions.PROVISIONING_REQUEST_FIXED); 1.32 has no such patch.
    """
    fixed = versions.PROVISIONING_REQUEST_FIXED.get(kubernetes_version)
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
            t.effect in ("NoSchedule", "NoExecute") and not (g.kind == "gpu" and t.key == versions.GPU_RESOURCE)
            for t in g.all_taints
        )
    ]


def flavor(group: NodeGroupArgs, max_gpus: int | None = None) -> queue.Flavor:
    """The group as a flavor: its name label, its blocking taints, what it holds at maxSize.

    Per node: the fit check's allocatable (smallest instance type, after the kubelet reservation, the
    eviction threshold and the system DaemonSets). `max_gpus` caps the group's GPU quota.
    """
    node = workload_checks.allocatable(group)
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
        node_labels={versions.LABEL_NODE_GROUP: group.name},
        taints=taints,
        cpu_millis=node.cpu_millis * group.max_size,
        memory_bytes=node.memory_bytes * group.max_size,
        gpus=gpus,
        gpu_resource=gpu_plan.gpu_resource_name(group) if group.kind == "gpu" else None,
    )


def queue_spec(
    namespace_name: str,
    groups: Sequence[NodeGroupArgs],
    args: QueueArgs,
    *,
    kubernetes_version: str,
    autoscaler: bool = True,
) -> queue.Queue:
    """The workload namespace's queue, from the node groups and the queue settings."""
    flavors = tuple(flavor(g, args.max_gpus if g.kind == "gpu" else None) for g in training_groups(groups))
    return queue.Queue(
        namespace=namespace_name,
        flavors=flavors,
        provisioning=provisioning_supported(kubernetes_version, autoscaler=autoscaler),
    )


@dataclass(frozen=True)
class _GpuRole:
    name: str
    count: int
    cpu_millis: int
    memory_bytes: int
    gpus: int
    groups: tuple[str, ...]


def _gpu_roles(run: Training) -> list[_GpuRole]:
    roles = []
    for role in run.roles:
        if not role.gpus:
            continue
        requests = role.resources["requests"]
        terms = role.affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        groups = next(
            e["values"] for e in terms[0]["matchExpressions"] if e["key"] == versions.LABEL_NODE_GROUP
        )
        roles.append(
            _GpuRole(
                role.name,
                role.count,
                scheduling.cpu_millicores(requests["cpu"]),
                scheduling.memory_bytes(requests["memory"]),
                role.gpus,
                tuple(groups),
            )
        )
    return roles


def nodes_needed(roles: Sequence[_GpuRole], node: workload_checks.Allocatable) -> int:
    """Nodes of this size that hold every pod of `roles`, each role packed on its own nodes (an upper bound)."""
    total = 0
    for role in roles:
        per_node = min(node.cpu_millis // role.cpu_millis, node.memory_bytes // role.memory_bytes)
        per_node = min(per_node, node.gpu_units // role.gpus)
        total += math.ceil(role.count / per_node) if per_node else math.inf  # type: ignore[assignment]
    return total


def check_run(run: Training, groups: Sequence[NodeGroupArgs], args: QueueArgs) -> None:
    """ValueError unless one GPU group, at maxSize (and within the queue's GPU cap), holds all the run's GPU pods.

    The ProvisioningRequest asks the autoscaler for every GPU pod at once and it scales up only a group
    that can hold them all within its maximum (a request no group can hold waits 7 days before it fails);
    our groups carry their own name label, so the autoscaler never treats two as similar. Without the
    check (quota alone) the same run would also never get all its GPUs in one group. So a run whose GPU
    pods need more than one group, or two different GPU groups, is refused.
    """
    roles = _gpu_roles(run)
    if not roles:
        return
    by_name = {g.name: g for g in groups}
    common = set.intersection(*(set(r.groups) for r in roles))
    total = sum(r.count * r.gpus for r in roles)
    holds: list[str] = []
    for name in sorted(common):
        group = by_name[name]
        node = workload_checks.allocatable(group)
        need = nodes_needed(roles, node)
        quota = flavor(group, args.max_gpus).gpus
        if need <= group.max_size and total <= quota:
            return
        cap = f", queue.maxGpus {args.max_gpus}" if args.max_gpus is not None and quota < node.gpu_units * group.max_size else ""
        holds.append(
            f"'{name}' holds {node.gpu_units * group.max_size} GPU(s) on {group.max_size} node(s) of "
            f"{node.describe()}{cap}; the run needs {need if need != math.inf else 'more'} node(s)"
        )
    pods = ", ".join(f"{r.count} {r.name} x {r.gpus} GPU" for r in roles)
    where = "; ".join(holds) if holds else f"its GPU roles share no GPU group ({[list(r.groups) for r in roles]})"
    raise ValueError(
        f"training '{run.name}': its GPU pods ({pods}; {total} GPU(s) in all) fit no single GPU group at its "
        f"maxSize: {where}. A run is admitted whole on one group: raise that group's maxSize (or queue.maxGpus), "
        "or make the run smaller"
    )


class TrainingQueue(pulumi.ComponentResource):
    """Kueue (its chart, only the JobSet integration) and the workload namespace's queue objects.

    Order: the ProvisioningRequest CRD (made by the platform before the autoscaler) and the JobSet
    controller come first, Kueue reads both once at start-up; the queue objects depend on Kueue's release
    (its webhooks validate them), so a removal deletes them while Kueue still runs and clears its
    finalizers. On `pulumi destroy` every in-cluster object goes with the cluster (`deletedWith`).
    """

    def __init__(
        self,
        name: str,
        spec: queue.Queue,
        args: QueueArgs,
        *,
        cluster: Cluster,
        kubernetes_version: str,
        startup_taints: Sequence[str],
        after: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpuplane:index:TrainingQueue", name, None, opts)
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=cluster.provider, deleted_with=cluster.resource)
        ns_doc = namespace(versions.KUEUE_NAMESPACE, "restricted", kubernetes_version)
        ns = k8s.core.v1.Namespace(f"{name}-ns", metadata=ns_doc["metadata"], opts=k8s_opts)
        self.release = k8s.helm.v3.Release(
            f"{name}-kueue",
            name="kueue",
            namespace=versions.KUEUE_NAMESPACE,
            chart=versions.KUEUE_CHART,
            version=versions.KUEUE_VERSION,
            values=queue.kueue_values(
                spec.namespace,
                pods_ready_timeout=args.pods_ready_timeout,
                requeue_limit=args.requeue_limit,
                startup_taints=startup_taints,
            ),
            opts=pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[ns, *after])),
        )
        self.objects: list[pulumi.Resource] = []
        objects_opts = pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[self.release]))
        for doc in queue.objects(spec):
            meta: dict[str, Any] = doc["metadata"]
            self.objects.append(
                k8s.apiextensions.CustomResource(
                    f"{name}-{doc['kind'].lower()}-{meta['name']}",
                    api_version=doc["apiVersion"],
                    kind=doc["kind"],
                    metadata=meta,
                    spec=doc["spec"],
                    opts=objects_opts,
                )
            )
        self.register_outputs({"clusterQueue": spec.name, "localQueue": spec.local_queue})


def provisioning_request_crd(
    name: str, *, cluster: Cluster, kubernetes_version: str, parent: pulumi.Resource
) -> pulumi.Resource:
    """The ProvisioningRequest CRD at the autoscaler image's tag (not in its chart), applied from the tag's file.

    The file is fetched by the Kubernetes provider at `pulumi up` (the render records its URL): the CRD is
    upstream's, at the version of the image that reads it.
    """
    image = versions.CLUSTER_AUTOSCALER_IMAGES[kubernetes_version]
    return k8s.yaml.v2.ConfigFile(
        f"{name}-provisioningrequest-crd",
        file=versions.PROVISIONING_REQUEST_CRD_URL.format(version=image.lstrip("v")),
        opts=pulumi.ResourceOptions(parent=parent, provider=cluster.provider, deleted_with=cluster.resource),
    )


def check_queue(args: PlatformArgs) -> None:
    """The queue cross-checks of a platform (PlatformArgs' validator): FieldError with the stack key path.

    Every training run must be admissible whole (`check_run`), and `queue.podsReadyTimeout` must leave a
    run's data import its whole timeout plus a GPU node's boot, or Kueue would evict runs that are fine.
    """
    if not args.training:
        return
    from gpuplane.components.training import training_spec  # noqa: PLC0415 - training imports this module
    from gpuplane.components.workload_checks import WorkloadContext  # noqa: PLC0415 - idem

    timeout = duration_seconds(args.queue.pods_ready_timeout)
    context = WorkloadContext.of(args)
    for index, workload in enumerate(args.training):
        data = workload.data_import
        if data is not None and timeout < data.timeout_minutes * 60 + GPU_BOOT_ALLOWANCE_SECONDS:
            raise FieldError(
                "queue.podsReadyTimeout",
                f"'{args.queue.pods_ready_timeout}' is shorter than training[{index}].dataImport.timeoutMinutes "
                f"({data.timeout_minutes}m) plus 10m for a GPU node's boot: the roles start only after the import, "
                f"and Kueue would evict the run first; use at least {data.timeout_minutes + 10}m",
            )
        spec = training_spec(workload, context)
        try:
            check_run(spec, context.node_groups, args.queue)
        except ValueError as exc:
            role = next((r.name for r in spec.roles if r.gpus), "worker")
            raise FieldError(f"training[{index}].{role}.replicas", str(exc)) from exc
