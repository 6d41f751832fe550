"""TfTraining component: the long-lived parts of a training workload; its runs are submitted by `gpuplane train`.

Why `pulumi up` never runs training: pulumi-kubernetes waits for a Job to finish (a whole training run),
and a run deleted by its TTL would be created again by the next `pulumi up --refresh`. So Pulumi owns only
what lives as long as the stack (TensorBoard, its Service and optional Ingress); `training_spec` +
`manifests.training.jobset` build the run, and `gpuplane train` submits it under a name that carries a
hash of the spec or the run id (docs/workloads.md, "Lifecycle").
"""

from __future__ import annotations

from typing import Any

import pulumi

from gpuplane.components import kube_objects
from gpuplane.components.cluster import Cluster
from gpuplane.components.config import PlatformArgs, QueueArgs
from gpuplane.components.config.workloads import TrainingArgs
from gpuplane.components.plan import capacity, placement
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.training_queue import check_one_group, check_run
from gpuplane.components.serving import check_restricted, s3_access
from gpuplane.manifests import model_import, queue, scheduling, training, versions


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
            cuda_major=versions.TENSORFLOW_GPU_CUDA_MAJOR,
            min_compute_capability=args.min_compute_capability,
        )
        fraction = placed.runtime_gpu.get("gpu_memory_fraction")
        efa = capacity.role_efa(placed.groups, gpus)
        resources = role.resources.kubernetes(placed.gpu_resource)
        if efa:
            # An extended resource, like GPUs: a limit, which Kubernetes copies to the request.
            resources["limits"][versions.EFA_RESOURCE] = str(efa)
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


class TfTraining(pulumi.ComponentResource):
    """A training workload's long-lived objects: TensorBoard (and its Ingress when a class is named).

    `run_manifest` is the JobSet that `gpuplane train` submits through the queue (render writes it under
    `manifests/runs/`).
    """

    def __init__(
        self,
        name: str,
        args: TrainingArgs,
        *,
        context: WorkloadContext,
        cluster: Cluster,
        ingress_class: str | None = None,
        queue_args: QueueArgs | None = None,
        depends_on: list[pulumi.Resource] | None = None,
        tags: dict[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpuplane:index:TfTraining", name, None, opts)
        spec = training_spec(args, context)  # raises before anything is registered
        self.run_manifest = queued_run(args, context, queue_args or QueueArgs())
        objects = []
        if args.tensorboard is not None:
            objects = training.tensorboard(spec, args.tensorboard.volume, args.tensorboard.path or args.name)
            if ingress_class:
                objects.append(training.ingress(spec, ingress_class))
        check_restricted([self.run_manifest, *objects])
        k8s_opts = pulumi.ResourceOptions(
            parent=self, provider=cluster.provider, deleted_with=cluster.resource, depends_on=list(depends_on or [])
        )
        if spec.data_import is not None:
            # The run's data-import Job (inside the JobSet) runs as this ServiceAccount with this script;
            # both outlive any one run, so Pulumi owns them (and the S3 read role for s3 sources).
            sa_obj, cm_obj, policy_obj, _job = model_import.objects(spec.data_import)
            for suffix, obj in (("import-sa", sa_obj), ("import-script", cm_obj), ("import-netpol", policy_obj)):
                kube_objects.apply(f"{name}-{suffix}", obj, k8s_opts)
            if spec.data_import.source.startswith("s3://"):
                s3_access(self, name, spec.data_import, cluster=cluster, context=context, tags=tags or {})
        for obj in objects:
            kind, obj_name = obj["kind"], obj["metadata"]["name"]
            kube_objects.apply(f"{name}-{kind.lower()}-{obj_name}", obj, k8s_opts)
        self.run_name = self.run_manifest["metadata"]["name"]
        self.register_outputs({"run": self.run_name})


def run_manifests(args: PlatformArgs) -> dict[str, dict[str, object]]:
    """Every training workload's next run (the JobSet `gpuplane train` would submit), by file name."""
    context = WorkloadContext.of(args)
    runs = {}
    for workload in args.training:
        doc = queued_run(workload, context, args.queue)
        runs[f"jobset-{context.namespace}-{doc['metadata']['name']}.yaml"] = doc
    return runs
