"""TfServing component: a model on a shared volume served by TF Serving in one or more variants.

The pure builders are in `gpuplane.manifests.serving` and `gpuplane.manifests.model_import`; the args are
resolved against the platform in `components.plan.serving` (which node groups, which GPU resource, how the
GPU is shared, what cannot run); this module registers the objects.
"""

from __future__ import annotations

import pulumi

from gpuplane.components import kube_objects
from gpuplane.components.cluster import Cluster
from gpuplane.components.config.workloads import ServingArgs
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.serving import model_import_spec, serving_spec
from gpuplane.components.pod_identity import s3_import_role
from gpuplane.manifests import model_import, serving
from gpuplane.manifests.pod_security import check_restricted


class TfServing(pulumi.ComponentResource):
    """A model served by TensorFlow Serving: import Job, config, Deployments, Services, PDBs and HPAs.

    Objects follow the contract in `gpuplane.manifests.serving`. The Deployments wait for the import Job
    (pulumi-kubernetes awaits a Job's completion, bounded by the import's `timeoutMinutes`), so serving
    starts on a model that is there.
    """

    def __init__(
        self,
        name: str,
        args: ServingArgs,
        *,
        context: WorkloadContext,
        cluster: Cluster,
        depends_on: list[pulumi.Resource] | None = None,
        tags: dict[str, str] | None = None,
        metric_store: serving.MetricStore = serving.IN_CLUSTER,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`metric_store`: where the KEDA triggers of variants scaled on a metric query (the stack's backend).

        `tags`: added to the cluster's (the model import's S3 read role carries them).
        """
        super().__init__("gpuplane:index:TfServing", name, None, opts)
        tags = {**cluster.tags, **(tags or {})}
        spec = serving_spec(args, context)  # raises before anything is registered
        imp = model_import_spec(args, context)
        objects = serving.objects(spec, metric_store)
        import_objects = model_import.objects(imp) if imp else []
        check_restricted([*objects, *import_objects])

        base = list(depends_on or [])
        k8s_opts = pulumi.ResourceOptions(
            parent=self, provider=cluster.provider, deleted_with=cluster.resource, depends_on=base
        )
        after: list[pulumi.Resource] = []
        self.import_job: pulumi.Resource | None = None
        if imp is not None:
            sa_obj, cm_obj, policy_obj, job_obj = import_objects
            sa = kube_objects.apply(f"{name}-import-sa", sa_obj, k8s_opts)
            cm = kube_objects.apply(f"{name}-import-script", cm_obj, k8s_opts)
            policy = kube_objects.apply(f"{name}-import-netpol", policy_obj, k8s_opts)
            job_deps: list[pulumi.Resource] = [*base, sa, cm, policy]
            if imp.source.startswith("s3://"):
                job_deps.append(
                    s3_import_role(self, name, imp, cluster=cluster, namespace=context.namespace, tags=tags)
                )
            timeout = f"{imp.deadline_seconds // 60 + 5}m"
            self.import_job = kube_objects.apply(
                f"{name}-import",
                job_obj,
                pulumi.ResourceOptions(
                    parent=self,
                    provider=cluster.provider,
                    deleted_with=cluster.resource,
                    depends_on=job_deps,
                    custom_timeouts=pulumi.CustomTimeouts(create=timeout, update=timeout),
                    # The pod template is immutable: a changed import is a new Job (its name carries a hash).
                    delete_before_replace=True,
                ),
            )
            after.append(self.import_job)
        self.objects: dict[str, pulumi.Resource] = {}
        for obj in objects:
            kind, obj_name = obj["kind"], obj["metadata"]["name"]
            waits = after if kind == "Deployment" else []
            self.objects[f"{kind}/{obj_name}"] = kube_objects.apply(
                f"{name}-{kind.lower()}-{obj_name}",
                obj,
                pulumi.ResourceOptions(
                    parent=self, provider=cluster.provider, deleted_with=cluster.resource, depends_on=[*base, *waits]
                ),
            )
        self.service_name = args.name
        self.uses_hpa = any(v.autoscaling for v in args.variants)
        self.register_outputs({"service": self.service_name, "variants": [v.name for v in args.variants]})
