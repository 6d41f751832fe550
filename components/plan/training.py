"""Training decisions: a `TrainingArgs` resolved into its run (the queued JobSet) and the run's spec.

Pure (no Pulumi): `gpuplane train` builds and submits the run from here without loading Pulumi, render lists
the same runs under `manifests/runs/`, and `TfTraining` registers only the long-lived parts (TensorBoard).
"""

from __future__ import annotations

from typing import Any

from gpuplane.components.config import PlatformArgs, QueueArgs
from gpuplane.components.config.workloads import TrainingArgs
from gpuplane.components.plan import capacity, placement
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.training_queue import check_one_group, check_run
from gpuplane.manifests import lifecycle, model_import, queue, scheduling, training, wellknown


def training_spec(args: TrainingArgs, context: WorkloadContext) -> training.Training:
    """Resolve `args` against the platform (placement, GPU settings); FieldError/ValueError if it cannot run."""
    placement.check_uid(context)
    placement.check_training(args, context)
    roles = []
    for name, role in args.roles():
        placed = placement.role_placement(args, name, role, context)
        gpus = role.resources.gpus
        extra = placement.image_requirements(
            gpus=gpus,
            cuda_major=lifecycle.TENSORFLOW_GPU_CUDA_MAJOR,
            min_compute_capability=args.min_compute_capability,
        )
        fraction = placed.runtime_gpu.get("gpu_memory_fraction")
        efa = capacity.role_efa(placed.groups, gpus)
        resources = role.resources.kubernetes(placed.gpu_resource)
        if efa:
            # An extended resource, like GPUs: a limit, which Kubernetes copies to the request.
            resources["limits"][wellknown.EFA_RESOURCE] = str(efa)
        roles.append(
            training.Role(
                name=name,
                count=role.replicas,
                resources=resources,
                affinity=scheduling.node_group_affinity([g.name for g in placed.groups], extra),
                gpus=gpus,
                gpu_shared=bool(placed.runtime_gpu.get("gpu_shared")),
                gpu_memory_fraction=float(fraction) if isinstance(fraction, int | float) else None,
                efa=efa,
            )
        )
    data = args.data_import
    imp = (
        model_import.Import(
            workload=args.name,
            namespace=context.namespace,
            source=data.source,
            volume=data.volume,
            path=data.path,
            uid=context.uid,
            gid=context.gid,
            sha256=data.sha256,
            kind="data",
            deadline_seconds=data.timeout_minutes * 60,
            max_bytes=data.max_unpacked_bytes,
            max_files=data.max_files,
            max_ratio=data.max_expansion_ratio,
        )
        if data
        else None
    )
    return training.Training(
        name=args.name,
        namespace=context.namespace,
        strategy=args.strategy,
        # One image for every role of the run (the ps too): the tasks never mix TensorFlow versions.
        image=placement.training_tensorflow(args)[0],
        command=tuple(args.command),
        roles=tuple(roles),
        uid=context.uid,
        gid=context.gid,
        mounts={m.volume: m.mount_path for m in args.volumes},
        ttl_seconds=args.ttl_seconds_after_finished,
        backoff_limit=args.backoff_limit,
        active_deadline_seconds=args.active_deadline_seconds,
        data_import=imp,
        gpu_check=args.gpu_check,
    )


def queued_run(
    args: TrainingArgs, context: WorkloadContext, queue_args: QueueArgs, run_id: str | None = None
) -> dict[str, Any]:
    """The run `gpuplane train` submits: the JobSet, labelled with the queue and suspended until admitted.

    ValueError when the run could never be admitted whole (`check_run`), FieldError when Kueue could split
    its GPU roles across groups (`check_one_group`; the stack's validator refuses both first).
    """
    spec = training_spec(args, context)
    check_run(args, context, queue_args)
    check_one_group(args, context, queue_args)
    return queue.queued(training.jobset(spec, run_id or args.run_id))


def run_manifests(args: PlatformArgs) -> dict[str, dict[str, object]]:
    """Every training workload's next run (the JobSet `gpuplane train` would submit), by file name."""
    context = WorkloadContext.of(args)
    runs = {}
    for workload in args.training:
        doc = queued_run(workload, context, args.queue)
        runs[f"jobset-{context.namespace}-{doc['metadata']['name']}.yaml"] = doc
    return runs
