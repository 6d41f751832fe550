"""TfTraining component: the long-lived parts of a training workload; its runs are submitted by `gpuplane train`.

Why `pulumi up` never runs training: pulumi-kubernetes waits for a Job to finish (a whole training run),
and a run deleted by its TTL would be created again by the next `pulumi up --refresh`. So Pulumi owns only
what lives as long as the stack (TensorBoard, its Service and optional Ingress); `components.plan.training`
builds the run (pure: `gpuplane train` loads no Pulumi), and `gpuplane train` submits it under a name that carries a
hash of the spec or the run id (docs/workloads.md, "Lifecycle").
"""

from __future__ import annotations

import pulumi

from gpuplane.components import kube_objects
from gpuplane.components.cluster import Cluster
from gpuplane.components.config import QueueArgs
from gpuplane.components.config.workloads import TrainingArgs
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.training import queued_run, training_spec
from gpuplane.components.pod_identity import s3_import_role
from gpuplane.manifests import model_import, training
from gpuplane.manifests.pod_security import check_restricted


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
        """`tags`: added to the cluster's (the data import's S3 read role carries them)."""
        super().__init__("gpuplane:index:TfTraining", name, None, opts)
        tags = {**cluster.tags, **(tags or {})}
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
                s3_import_role(self, name, spec.data_import, cluster=cluster, namespace=context.namespace, tags=tags)
        for obj in objects:
            kind, obj_name = obj["kind"], obj["metadata"]["name"]
            kube_objects.apply(f"{name}-{kind.lower()}-{obj_name}", obj, k8s_opts)
        self.run_name = self.run_manifest["metadata"]["name"]
        # The run itself too: a program of one's own renders it under manifests/runs/ like the project's.
        self.register_outputs({"run": self.run_name, "runManifest": self.run_manifest})
