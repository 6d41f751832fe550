"""Cross-checks of the workloads against the rest of the platform: one module for stack and direct callers.

Why here and not in the args: whether a variant fits depends on the node groups, whether a model's volume
exists on the storage, whether pods may run as the workload uid on the `restricted` namespace. The Platform
component reports `workload_problems` through `cross_checks.platform_problems` (errors carry the stack key
path), and `plan.serving` / `plan.training` run `check_uid` with `check_serving` / `check_training` for a
TfServing or TfTraining a program builds by hand (the same checks, the same messages).

Allocatable memory and CPU follow the EKS AL2023 AMI (awslabs/amazon-eks-ami, nodeadm
`internal/kubelet/config.go`: kube-reserved memory `11 MiB * maxPods + 255 MiB`, CPU 6% of the first
core, 1% of the second, 0.5% of the next two and 0.25% of the rest; eviction at `memory.available<100Mi`).
maxPods is taken at the EKS ceiling (110 below 30 vCPUs, else 250), which reserves at least as much as
the real ENI-based value: a workload refused here might just fit, one admitted here fits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from gpuplane.components.config.base import FieldError, raise_all
from gpuplane.components.config.workloads import compute_capability
from gpuplane.components.facts import catalog
from gpuplane.components.plan import capacity, gpu_nodes, names
from gpuplane.manifests import lifecycle, scheduling, versions, wellknown
from gpuplane.manifests.workload_security import MIN_WORKLOAD_UID

if TYPE_CHECKING:
    from gpuplane.components.config import NodeGroupArgs, PlatformArgs
    from gpuplane.components.config.workloads import (
        ResourcesArgs,
        RoleArgs,
        ServingArgs,
        ServingVariantArgs,
        TrainingArgs,
    )

MIB: Final = 2**20
# What the DaemonSets on every node request (aws-node, kube-proxy, pod identity agent, EFS CSI node,
# device plugin / DCGM on GPU nodes), rounded up from their charts and add-on manifests.
DAEMONSET_CPU_MILLIS: Final = 250
DAEMONSET_MEMORY_BYTES: Final = 400 * MIB
EVICTION_MEMORY_BYTES: Final = 100 * MIB


def max_pods(vcpus: int) -> int:
    """EKS's recommended ceiling on pods per node (EKS best practices, "max pods")."""
    return 110 if vcpus < 30 else 250


def reserved_cpu_millis(vcpus: int) -> int:
    """kube-reserved CPU of the EKS AMIs (the GKE-derived sliding scale)."""
    cores = [60, 10, 5, 5] + [2.5] * max(0, vcpus - 4)
    return int(sum(cores[:vcpus]) + 0.999)


@dataclass(frozen=True)
class Allocatable:
    """What pods may request on one node of an instance type, after kubelet and DaemonSets."""

    instance_type: str
    cpu_millis: int
    memory_bytes: int
    gpu_units: int

    def describe(self, gpu_resource: str | None = None) -> str:
        """`m6i.large (1.6 CPU, 6.1 GiB, 0 GPUs)`, for error messages."""
        gpus = f", {self.gpu_units} {gpu_resource or 'GPUs'}" if self.gpu_units else ", no GPUs"
        return f"{self.instance_type} ({self.cpu_millis / 1000:.2f} CPU, {self.memory_bytes / 2**30:.1f} GiB{gpus})"


def allocatable(group: NodeGroupArgs) -> Allocatable:
    """The smallest node the group may launch (its instance types may mix): what a pod is sure to get there."""
    nodes = []
    for name in group.instance_types:
        entry = catalog.lookup(name)
        memory = entry.memory_mib * MIB - (11 * max_pods(entry.vcpus) + 255) * MIB - EVICTION_MEMORY_BYTES
        cpu = entry.vcpus * 1000 - reserved_cpu_millis(entry.vcpus) - DAEMONSET_CPU_MILLIS
        units = gpu_nodes.allocatable_units(group) if group.kind == "gpu" else 0
        nodes.append(Allocatable(name, cpu, memory - DAEMONSET_MEMORY_BYTES, units))
    return min(nodes, key=lambda a: (a.cpu_millis, a.memory_bytes))


@dataclass(frozen=True)
class Placement:
    """Where a workload container may run: the groups it fits, and what the GPU group gives it."""

    groups: tuple[NodeGroupArgs, ...]
    gpu_resource: str | None = None
    runtime_gpu: dict[str, object] = field(default_factory=dict)


def _untolerated(group: NodeGroupArgs, gpus: int) -> bool:
    # GPU pods tolerate the GPU taint; nothing tolerates the user's own NoSchedule/NoExecute taints.
    return any(
        t.effect in ("NoSchedule", "NoExecute") and not (gpus and t.key == wellknown.GPU_TAINT.key)
        for t in group.all_taints
    )


class PlacementError(ValueError):
    """No node group takes the container; `requirement` says which of its settings no group meets.

    One of `nodeGroups` (the groups it names), `gpus`, `cpu`, `memory` (its size), `resources` (each fits
    somewhere, never all on one node), `image` (what the TensorFlow image needs: amd64, AVX, a driver for its
    CUDA) and `minComputeCapability`. The callers turn it into the user's key path.
    """

    def __init__(self, requirement: str, message: str) -> None:
        super().__init__(message)
        self.requirement = requirement


@dataclass(frozen=True)
class _Need:
    """One requirement a node group must meet: the key that sets it, the need in words, the group's value."""

    requirement: str
    words: str
    meets: Callable[[NodeGroupArgs], bool]
    value: Callable[[NodeGroupArgs], tuple[float, str]]


def _capability(group: NodeGroupArgs) -> int:
    return catalog.compute_capability(group.instance) or 0


def _common_cpu_features(group: NodeGroupArgs) -> set[str]:
    return set.intersection(*(set(catalog.cpu_features(catalog.lookup(t))) for t in group.instance_types))


def _needs(
    gpus: int,
    *,
    cuda_major: int | None,
    cpu_features: Sequence[str],
    architecture: str,
    min_compute_capability: int | None,
) -> list[_Need]:
    """The requirements in the order they are applied (the first one no group meets is reported)."""
    kind = "gpu" if gpus else "cpu"
    needs = [
        _Need(
            "gpus",
            f"a {kind} group without a NoSchedule/NoExecute taint it cannot tolerate",
            lambda g: g.kind == kind and not _untolerated(g, gpus),
            lambda g: (0, f"{g.kind}{', tainted' if _untolerated(g, gpus) else ''}"),
        ),
        _Need(
            "image",
            f"architecture {architecture} (what the TensorFlow images are built for)",
            lambda g: g.architecture == architecture,
            lambda g: (0, g.architecture),
        ),
    ]
    if cuda_major is not None:
        driver = lifecycle.CUDA_MIN_DRIVER[cuda_major]
        needs.append(
            _Need(
                "image",
                f"an NVIDIA driver >= {driver} (the image's CUDA {cuda_major})",
                lambda g: gpu_nodes.driver_major(g) >= driver,
                lambda g: (gpu_nodes.driver_major(g), f"driver {gpu_nodes.driver_major(g)}"),
            )
        )
    if gpus and min_compute_capability is not None:
        need = min_compute_capability
        needs.append(
            _Need(
                "minComputeCapability",
                f"GPU compute capability >= {need // 10}.{need % 10}",
                lambda g: _capability(g) >= need,
                lambda g: (_capability(g), f"{_capability(g) // 10}.{_capability(g) % 10}"),
            )
        )
    if cpu_features:
        wanted = set(cpu_features)
        needs.append(
            _Need(
                "image",
                f"CPU features {'+'.join(cpu_features)} (what the TensorFlow images are built for)",
                lambda g: wanted <= _common_cpu_features(g),
                lambda g: (
                    len(wanted & _common_cpu_features(g)),
                    "+".join(sorted(wanted & _common_cpu_features(g))) or "none of them",
                ),
            )
        )
    return needs


def _groups_have(need: _Need, groups: Sequence[NodeGroupArgs]) -> str:
    """`8.6 (gpu), 7.5 (g4)`: each group's value for the need, best first."""
    ranked = sorted(groups, key=lambda g: need.value(g)[0], reverse=True)
    return ", ".join(f"{need.value(g)[1]} ({g.name})" for g in ranked)


def place(
    what: str,
    *,
    cpu_millis: int,
    memory_bytes: int,
    gpus: int,
    groups: Sequence[NodeGroupArgs],
    named: Sequence[str] | None = None,
    cuda_major: int | None = None,
    cpu_features: Sequence[str] = (),
    architecture: str = "x86_64",
    min_compute_capability: int | None = None,
) -> Placement:
    """The node groups a container of this size fits; PlacementError naming `what` and the requirement otherwise.

    The requirements are applied one at a time; the first one that leaves no group is the one reported, with
    each group's value for it (the best first). When the container names its groups and another group
    would meet the requirement, the names are what is wrong (`nodeGroups`).
    """
    by_name = {g.name: g for g in groups}
    if named is not None:
        unknown = [n for n in named if n not in by_name]
        if unknown:
            raise PlacementError(
                "nodeGroups", f"{what}: node group(s) {unknown} do not exist; groups: {sorted(by_name)}"
            )
    if gpus and not any(g.kind == "gpu" for g in groups):
        raise PlacementError("gpus", f"{what}: asks for {gpus} GPU(s) but the stack has no GPU node group (kind: gpu)")
    candidates = [by_name[n] for n in named] if named is not None else list(groups)
    pool = list(groups)  # every group, through the same requirements: would another group do?
    needs = _needs(
        gpus,
        cuda_major=cuda_major,
        cpu_features=cpu_features,
        architecture=architecture,
        min_compute_capability=min_compute_capability,
    )
    for need in needs:
        passed = [g for g in candidates if need.meets(g)]
        pool_passed = [g for g in pool if need.meets(g)]
        if not passed:
            if named is not None and pool_passed:
                raise PlacementError(
                    "nodeGroups",
                    f"{what}: none of the groups it names has {need.words}; named: "
                    f"{_groups_have(need, candidates)}; groups that have it: {[g.name for g in pool_passed]}",
                )
            have = _groups_have(need, candidates)
            raise PlacementError(need.requirement, f"{what}: no node group has {need.words}; groups have {have}")
        candidates, pool = passed, pool_passed
    return _fit(what, candidates, cpu_millis=cpu_millis, memory_bytes=memory_bytes, gpus=gpus)


def _fit(what: str, candidates: Sequence[NodeGroupArgs], *, cpu_millis: int, memory_bytes: int, gpus: int) -> Placement:
    """Of the groups it may run on, those with a node big enough; PlacementError naming the size that fits none."""
    sizes = {g.name: allocatable(g) for g in candidates}
    fits = [
        g
        for g in candidates
        if cpu_millis <= sizes[g.name].cpu_millis
        and memory_bytes <= sizes[g.name].memory_bytes
        and gpus <= sizes[g.name].gpu_units
    ]
    if not fits:
        largest = max(sizes.values(), key=lambda a: (a.gpu_units, a.cpu_millis, a.memory_bytes))
        if gpus > max(a.gpu_units for a in sizes.values()):
            requirement = "gpus"
        elif cpu_millis > max(a.cpu_millis for a in sizes.values()):
            requirement = "cpu"
        elif memory_bytes > max(a.memory_bytes for a in sizes.values()):
            requirement = "memory"
        else:
            requirement = "resources"
        raise PlacementError(
            requirement,
            f"{what}: requests {cpu_millis / 1000:g} CPU, {memory_bytes / 2**30:.2f} GiB"
            + (f", {gpus} GPU(s)" if gpus else "")
            + f" fit no node; the largest it could have had: {largest.describe()} "
            "(after kubelet and system DaemonSet reservations)",
        )
    if gpus:
        resources = {gpu_nodes.gpu_resource_name(g) for g in fits}
        settings = [gpu_nodes.runtime_gpu_settings(g) for g in fits]
        if len(resources) > 1 or any(s != settings[0] for s in settings):
            raise PlacementError(
                "nodeGroups",
                f"{what}: fits GPU groups {[g.name for g in fits]} that share GPUs differently; "
                "pick one with nodeGroups",
            )
        return Placement(tuple(fits), resources.pop(), dict(settings[0]))
    return Placement(tuple(fits))


@dataclass(frozen=True)
class WorkloadContext:
    """The platform facts a workload is checked and built against."""

    namespace: str
    node_groups: tuple[NodeGroupArgs, ...]
    volumes: tuple[str, ...]
    uid: int
    gid: int
    kubernetes_version: str = versions.DEFAULT_KUBERNETES_VERSION

    @classmethod
    def of(cls, args: PlatformArgs) -> WorkloadContext:
        """From validated platform args."""
        return cls(
            namespace=args.workload_namespace,
            node_groups=tuple(args.resolved_node_groups),
            volumes=tuple(args.storage.volume_names) if args.storage.enabled else (),
            uid=args.storage.uid,
            gid=args.storage.gid,
            kubernetes_version=args.cluster.kubernetes_version,
        )


def check_volume(volume: str, context: WorkloadContext, where: str) -> None:
    """A named volume exists on the stack's storage."""
    if volume not in context.volumes:
        defined = ", ".join(context.volumes) or "none (storage.enabled is false)"
        raise FieldError(where, f"volume '{volume}' is not defined in storage.volumes; defined: {defined}")


def volume_problems(volumes: Sequence[tuple[str, str]], context: WorkloadContext) -> list[FieldError]:
    """(volume, key) pairs whose volume the stack's storage does not define."""
    problems = []
    for volume, where in volumes:
        try:
            check_volume(volume, context, where)
        except FieldError as exc:
            problems.append(exc)
    return problems


def image_compute_capability(declared: str | None) -> int:
    """The compute capability a TensorFlow GPU image needs: what the user declared, else the TF builds' own."""
    return compute_capability(declared) if declared else lifecycle.TF_GPU_MIN_COMPUTE_CAPABILITY


def image_requirements(*, gpus: int, cuda_major: int, min_compute_capability: str | None) -> list[dict[str, Any]]:
    """Node affinity for a TensorFlow image's needs, on labels the node group sets itself.

    The group advertises these labels in its ASG node-template tags, so the autoscaler can scale it up
    from zero for the pod: CPU features on every node, and on GPU nodes the driver's CUDA major and the
    GPU's compute capability (major*10+minor, so `Gt` compares integers).
    """
    requirements = [
        {"key": scheduling.cpu_label(f), "operator": "In", "values": ["true"]}
        for f in lifecycle.TF_SERVING_CPU_FEATURES
    ]
    if gpus:
        driver = lifecycle.CUDA_MIN_DRIVER[cuda_major]
        capability = image_compute_capability(min_compute_capability)
        requirements += [
            {"key": wellknown.LABEL_GPUPLANE_CUDA_DRIVER_MAJOR, "operator": "Gt", "values": [str(driver - 1)]},
            {"key": wellknown.LABEL_GPU_COMPUTE_CAPABILITY, "operator": "Gt", "values": [str(capability - 1)]},
        ]
    return requirements


def _image_placement(
    what: str,
    resources: ResourcesArgs,
    node_groups: list[str] | None,
    *,
    cuda_major: int,
    min_compute_capability: str | None,
    context: WorkloadContext,
) -> Placement:
    """Where a container of a TensorFlow image runs: amd64, AVX, and on GPUs the image's CUDA and capability."""
    gpus = resources.gpus
    return place(
        what,
        cpu_millis=resources.cpu_request_millis,
        memory_bytes=resources.memory_request_bytes,
        gpus=gpus,
        groups=context.node_groups,
        named=node_groups,
        cuda_major=cuda_major if gpus else None,
        cpu_features=lifecycle.TF_SERVING_CPU_FEATURES,
        min_compute_capability=image_compute_capability(min_compute_capability),
    )


def variant_placement(serving: ServingArgs, variant: ServingVariantArgs, context: WorkloadContext) -> Placement:
    """Where one serving variant runs (the tensorflow/serving image, `-gpu` with GPUs)."""
    return _image_placement(
        f"serving '{serving.name}' variant '{variant.name}'",
        variant.resources,
        variant.node_groups,
        cuda_major=lifecycle.TF_SERVING_GPU_CUDA_MAJOR,
        min_compute_capability=variant.min_compute_capability,
        context=context,
    )


def _resource_key(requirement: str, resources: ResourcesArgs) -> str:
    """The key under a variant or role that sets what a PlacementError says no group meets."""
    if requirement in ("cpu", "memory"):
        return f"resources.{'requests' if requirement in resources.requests else 'limits'}.{requirement}"
    return {"gpus": "resources.gpus"}.get(requirement, requirement)


def serving_problems(serving: ServingArgs, context: WorkloadContext, prefix: str = "") -> list[FieldError]:
    """Everything about one ServingArgs that depends on the platform, each a FieldError with its key path."""
    problems = volume_problems([(serving.model.volume, f"{prefix}model.volume")], context)
    for index, variant in enumerate(serving.variants):
        try:
            variant_placement(serving, variant, context)
        except PlacementError as exc:
            key = _resource_key(exc.requirement, variant.resources)
            problems.append(FieldError(f"{prefix}variants[{index}].{key}", str(exc)))
    return problems + names.problems(names.serving_names(serving, prefix))


def check_serving(serving: ServingArgs, context: WorkloadContext, prefix: str = "") -> None:
    """All of `serving_problems` at once (FieldError, or FieldErrors for several)."""
    raise_all(serving_problems(serving, context, prefix))


def role_placement(training: TrainingArgs, role: str, args: RoleArgs, context: WorkloadContext) -> Placement:
    """Where one training role runs (the tensorflow/tensorflow image, `-gpu` with GPUs)."""
    return _image_placement(
        f"training '{training.name}' role '{role}'",
        args.resources,
        args.node_groups,
        cuda_major=lifecycle.TENSORFLOW_GPU_CUDA_MAJOR,
        min_compute_capability=training.min_compute_capability,
        context=context,
    )


def training_problems(training: TrainingArgs, context: WorkloadContext, prefix: str = "") -> list[FieldError]:
    """Everything about one TrainingArgs that depends on the platform, each a FieldError with its key path."""
    volumes = [(m.volume, f"{prefix}volumes[{i}].volume") for i, m in enumerate(training.volumes)]
    if training.data_import is not None:
        volumes.append((training.data_import.volume, f"{prefix}dataImport.volume"))
    if training.tensorboard is not None:
        volumes.append((training.tensorboard.volume, f"{prefix}tensorboard.volume"))
    problems = volume_problems(volumes, context)
    reported: set[str] = set()
    for role, args in training.roles():
        try:
            placed = role_placement(training, role, args, context)
            efa_problem = capacity.role_efa_problem(placed.groups, args.resources.gpus)
            if efa_problem is not None:
                raise PlacementError("nodeGroups", f"training '{training.name}' role '{role}': {efa_problem}")
        except PlacementError as exc:
            # The image and its compute capability are the workload's, not the role's: said once.
            if exc.requirement in ("image", "minComputeCapability"):
                key = f"{prefix}{exc.requirement}"
                if key in reported:
                    continue
                reported.add(key)
            else:
                key = f"{prefix}{role}.{_resource_key(exc.requirement, args.resources)}"
            problems.append(FieldError(key, str(exc)))
    return problems + names.problems(names.training_names(training, prefix))


def check_training(training: TrainingArgs, context: WorkloadContext, prefix: str = "") -> None:
    """All of `training_problems` at once (FieldError, or FieldErrors for several)."""
    raise_all(training_problems(training, context, prefix))


def uid_problems(context: WorkloadContext) -> list[FieldError]:
    """Workload pods run as the storage uid/gid, which `restricted` pods need above 10000."""
    return [
        FieldError(
            f"storage.{key}",
            f"{value} is below {MIN_WORKLOAD_UID}: workloads run as this id under Pod Security "
            f"'restricted' (non-root, clear of image users); use {MIN_WORKLOAD_UID} or more",
        )
        for key, value in (("uid", context.uid), ("gid", context.gid))
        if value < MIN_WORKLOAD_UID
    ]


def serving_tensorflow(variant: ServingVariantArgs) -> tuple[str, str | None]:
    """(image, its TensorFlow version or None when a named image declares none) of one serving variant."""
    if variant.image:
        return variant.image, variant.tensorflow_version
    pinned = versions.TF_SERVING_GPU if variant.resources.gpus else versions.TF_SERVING_CPU
    return pinned.image, pinned.tensorflow


def training_image(training: TrainingArgs) -> versions.TensorFlowImage | None:
    """The pinned image a training run uses (GPU image when any role has GPUs), None for a named image."""
    if training.image:
        return None
    gpus = any(role.resources.gpus for _, role in training.roles())
    return versions.TENSORFLOW_GPU if gpus else versions.TENSORFLOW_CPU


def training_tensorflow(training: TrainingArgs) -> tuple[str, str | None]:
    """(image, its TensorFlow version or None when a named image declares none) of one training workload."""
    pinned = training_image(training)
    if pinned is None:
        return str(training.image), training.tensorflow_version
    return pinned.image, pinned.tensorflow


def export_problems(serving: Sequence[ServingArgs], training: Sequence[TrainingArgs]) -> list[FieldError]:
    """A serving model that names a training (`model.fromTraining`) reads where that training writes its export."""
    by_name = {run.name: (index, run) for index, run in enumerate(training)}
    problems: list[FieldError] = []
    for s_index, one in enumerate(serving):
        model, key = one.model, f"serving[{s_index}].model"
        if model.from_training is None:
            continue
        if model.from_training not in by_name:
            known = ", ".join(sorted(by_name)) or "none"
            problems.append(
                FieldError(
                    f"{key}.fromTraining",
                    f"'{model.from_training}' is not a training workload of this stack; allowed: {known}",
                )
            )
            continue
        t_index, run = by_name[model.from_training]
        if run.export is None:
            problems.append(
                FieldError(
                    f"training[{t_index}].export",
                    f"serving '{one.name}' loads the export of training '{run.name}' ({key}.fromTraining): say where "
                    f"its program writes it, e.g. export: {{volume: {model.volume}, path: {model.resolved_path}}}",
                )
            )
            continue
        mounted = [v.volume for v in run.volumes]
        if run.export.volume not in mounted:
            problems.append(
                FieldError(
                    f"training[{t_index}].export.volume",
                    f"'{run.export.volume}' is not mounted in training '{run.name}' (volumes: "
                    f"{', '.join(mounted) or 'none'}); mount it so its program can write the export there",
                )
            )
        if (run.export.volume, run.export.path) != (model.volume, model.resolved_path):
            problems.append(
                FieldError(
                    f"{key}.path",
                    f"serving '{one.name}' reads {model.volume}:{model.resolved_path}, but training '{run.name}' "
                    f"writes its export to {run.export.volume}:{run.export.path}; make them the same",
                )
            )
    return problems


def serving_loads_training_problems(
    serving: Sequence[ServingArgs], training: Sequence[TrainingArgs]
) -> list[FieldError]:
    """A serving model from a training's export runs a TensorFlow at least the training's; each error names both.

    TensorFlow promises only that a SavedModel loads in the same or a newer runtime. Only the pairs the config
    links are compared (`model.fromTraining`): a model from elsewhere (TF Hub) has nothing to do with the
    stack's training, and an image of its own then needs no declared version.
    """
    problems: list[FieldError] = export_problems(serving, training)
    for s_index, one in enumerate(serving):
        for v_index, variant in enumerate(one.variants):
            s_image, s_tf = serving_tensorflow(variant)
            key = f"serving[{s_index}].variants[{v_index}]"
            for t_index, run in enumerate(training):
                if run.name != one.model.from_training:
                    continue
                t_image, t_tf = training_tensorflow(run)
                where = f"training[{t_index}] ({t_image}"
                if s_tf is None or t_tf is None:
                    unknown, unknown_key = (s_image, key) if s_tf is None else (t_image, f"training[{t_index}]")
                    problems.append(
                        FieldError(
                            f"{unknown_key}.tensorflowVersion",
                            f"cannot know whether serving '{one.name}' ({s_image}) loads what training "
                            f"'{run.name}' ({t_image}) exports: {unknown} declares no TensorFlow version; set "
                            f'{unknown_key}.tensorflowVersion (e.g. "{versions.TENSORFLOW_CPU.tensorflow}")',
                        )
                    )
                elif not lifecycle.serving_loads(s_tf, t_tf):
                    problems.append(
                        FieldError(
                            f"{key}.image",
                            f"serving '{one.name}' variant '{variant.name}' runs TensorFlow {s_tf} ({s_image}), older "
                            f"than TensorFlow {t_tf} of {where}, training '{run.name}'): a SavedModel loads only in "
                            "the same or a newer TensorFlow; serve with a newer image or train with an older one",
                        )
                    )
    first: dict[str, FieldError] = {}
    for problem in problems:  # one line per key: an image without a version is said once
        first.setdefault(problem.field, problem)
    return list(first.values())


def check_uid(context: WorkloadContext) -> None:
    """All of `uid_problems` at once."""
    raise_all(uid_problems(context))


def workload_problems(
    context: WorkloadContext, serving: Sequence[ServingArgs], training: Sequence[TrainingArgs]
) -> list[FieldError]:
    """Every workload cross-check of a platform, every problem (`cross_checks.platform_problems` reports them).

    It receives the facts (`WorkloadContext`) instead of the platform args, so a component that has only a
    context (TfServing, TfTraining added to a running platform) runs the same checks.
    """
    if not serving and not training:
        return []
    problems = uid_problems(context)
    seen: dict[str, str] = {}
    workloads: list[tuple[str, int, ServingArgs | TrainingArgs]] = [("serving", i, w) for i, w in enumerate(serving)]
    workloads += [("training", i, w) for i, w in enumerate(training)]
    for section, index, workload in workloads:
        key = f"{section}[{index}]"
        if workload.name in seen:
            problems.append(
                FieldError(
                    f"{key}.name", f"'{workload.name}' is already used by {seen[workload.name]}; names must be unique"
                )
            )
        else:
            seen[workload.name] = key
    for index, one in enumerate(serving):
        problems += serving_problems(one, context, prefix=f"serving[{index}].")
    for index, run in enumerate(training):
        problems += training_problems(run, context, prefix=f"training[{index}].")
    return problems + serving_loads_training_problems(serving, training)
