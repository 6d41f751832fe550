"""Serving decisions: a `ServingArgs` resolved against the platform into what the manifest builders take.

Pure (no Pulumi): `TfServing` registers what these return, and the tests and `gpuplane compare` read the same
specs without loading Pulumi. Which node groups, which GPU resource, how the GPU is shared:
`components.plan.placement`; the objects themselves: `gpuplane.manifests.serving` and `.model_import`.
"""

from __future__ import annotations

from gpuplane.components.config.workloads import ServingArgs
from gpuplane.components.plan import placement
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.manifests import lifecycle, model_import, scheduling, serving


def serving_spec(args: ServingArgs, context: WorkloadContext) -> serving.Serving:
    """Resolve `args` into the manifest builder's input (placement, GPU settings, HPA)."""
    placement.check_uid(context)
    placement.check_serving(args, context)
    variants = []
    for variant in args.variants:
        placed = placement.variant_placement(args, variant, context)
        gpus = variant.resources.gpus
        extra = placement.image_requirements(
            gpus=gpus,
            cuda_major=lifecycle.TF_SERVING_GPU_CUDA_MAJOR,
            min_compute_capability=variant.min_compute_capability,
        )
        fraction = placed.runtime_gpu.get("gpu_memory_fraction")
        hpa = variant.autoscaling
        variants.append(
            serving.Variant(
                name=variant.name,
                replicas=variant.replicas,
                resources=variant.resources.kubernetes(placed.gpu_resource),
                affinity=scheduling.node_group_affinity([g.name for g in placed.groups], extra),
                image=placement.serving_tensorflow(variant)[0],
                gpus=gpus,
                gpu_shared=bool(placed.runtime_gpu.get("gpu_shared")),
                gpu_memory_fraction=float(fraction) if isinstance(fraction, int | float) else None,
                hpa=(hpa.min_replicas, hpa.max_replicas, hpa.resolved_target) if hpa else None,
                scale_on=hpa.metric if hpa else "cpu",
                gpu_check=variant.gpu_check,
            )
        )
    batching = args.batching
    return serving.Serving(
        name=args.name,
        namespace=context.namespace,
        model_name=args.model.name,
        volume=args.model.volume,
        model_path=args.model.resolved_path,
        uid=context.uid,
        gid=context.gid,
        variants=tuple(variants),
        batching=serving.Batching(**batching.model_dump()) if batching else None,
        poll_seconds=args.file_system_poll_wait_seconds,
    )


def model_import_spec(args: ServingArgs, context: WorkloadContext) -> model_import.Import | None:
    """The model's import Job input, when the model has an `import`."""
    source = args.model.import_
    if source is None:
        return None
    return model_import.Import(
        workload=args.name,
        namespace=context.namespace,
        source=source.source,
        volume=args.model.volume,
        path=args.model.resolved_path,
        version=args.model.version,
        uid=context.uid,
        gid=context.gid,
        sha256=source.sha256,
        deadline_seconds=source.timeout_minutes * 60,
        max_bytes=source.max_unpacked_bytes,
        max_files=source.max_files,
        max_ratio=source.max_expansion_ratio,
    )
