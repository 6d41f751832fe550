"""TrainingQueue component: Kueue in front of training runs, and the ProvisioningRequest CRD it relies on.

The queue's shape is decided from the stack in components/plan/training_queue.py and built in manifests/queue.py;
this module applies it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from gpuplane.components import kube_objects
from gpuplane.components.config.queue import QueueArgs
from gpuplane.components.control_plane import ControlPlane, deprecated_context, deprecated_keyword
from gpuplane.components.plan.training_queue import check_run, provisioning_supported, queue_spec
from gpuplane.manifests import queue, versions, wellknown
from gpuplane.manifests.namespaces import namespace

__all__ = [
    "QueueArgs",
    "TrainingQueue",
    "check_run",
    "provisioning_request_crd",
    "provisioning_supported",
    "queue_spec",
]


# Which store reads Kueue's metrics (`observability.metrics`): the in-cluster Prometheus through the chart's
# ServiceMonitor, the AWS managed collector through the relay, or none.
METRICS_STORES = ("prometheus", "managedPrometheus", "none")


class TrainingQueue(pulumi.ComponentResource):
    """Kueue (its chart, only the JobSet integration) and the workload namespace's queue objects.

    Order: the ProvisioningRequest CRD (made by the platform before the autoscaler) comes first: Kueue
    checks for its API once at start-up (it waits for JobSet's API by itself). The queue objects depend
    on Kueue's release (its webhooks validate them), so a removal deletes them while Kueue still runs
    and clears its finalizers. On `pulumi destroy` every in-cluster object goes with the cluster (`deletedWith`).
    """

    def __init__(
        self,
        name: str,
        spec: queue.Queue,
        args: QueueArgs,
        *,
        cluster: ControlPlane,
        after: Sequence[pulumi.Resource] | None = None,
        metrics: str = "none",
        vpc_cidr: str | None = None,
        kubernetes_version: str | None = None,
        startup_taints: Sequence[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`metrics`: the store (`observability.metrics`) that reads Kueue's metrics.

        `prometheus`: the in-cluster Prometheus (its CRDs exist: `after` holds its release) scrapes Kueue's HTTPS
        port through the chart's ServiceMonitor. `managedPrometheus`: the AWS managed collector scrapes the
        plain-HTTP relay made here (`queue.metrics_relay_objects`), whose port only `vpc_cidr` may reach (default:
        the cluster's network's CIDR).
        `after`: what Kueue waits for (default `cluster.services_ready`).
        `kubernetes_version`, `startup_taints`: deprecated, the cluster's.
        """
        if metrics not in METRICS_STORES:
            raise ValueError(f"TrainingQueue: metrics={metrics!r} is not one of {', '.join(METRICS_STORES)}")
        if kubernetes_version is not None:
            deprecated_context("TrainingQueue", "kubernetes_version", kubernetes_version, cluster.kubernetes_version)
        if startup_taints is None:
            startup_taints = cluster.startup_taint_keys
        else:
            deprecated_keyword("TrainingQueue", "startup_taints", "pass startup_taints to Cluster(...)")
        if vpc_cidr is None and cluster.network is not None:
            vpc_cidr = cluster.network.cidr
        after = cluster.services_ready if after is None else after
        super().__init__("gpuplane:index:TrainingQueue", name, None, opts)
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=cluster.provider, deleted_with=cluster.resource)
        ns_doc = namespace(wellknown.KUEUE_NAMESPACE, "restricted", cluster.kubernetes_version)
        ns = kube_objects.apply(f"{name}-ns", ns_doc, k8s_opts)
        self.release = kube_objects.HelmRelease(
            f"{name}-kueue",
            name="kueue",
            namespace=wellknown.KUEUE_NAMESPACE,
            chart=wellknown.KUEUE_CHART,
            version=versions.KUEUE_VERSION,
            values=queue.kueue_values(
                spec.namespace,
                pods_ready_timeout=args.pods_ready_timeout,
                requeue_limit=args.requeue_limit,
                startup_taints=startup_taints,
                metrics=metrics,
            ),
            opts=pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[ns, *after])),
        )
        self.metrics_relay: list[pulumi.Resource] = []
        if metrics == "managedPrometheus":
            if vpc_cidr is None:
                raise ValueError("TrainingQueue: metrics='managedPrometheus' needs vpc_cidr (who may reach the relay)")
            relay_opts = pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[ns]))
            for doc in queue.metrics_relay_objects(allowed_cidrs=[vpc_cidr], startup_taints=startup_taints):
                suffix = doc["kind"].lower()
                self.metrics_relay.append(kube_objects.apply(f"{name}-metrics-relay-{suffix}", doc, relay_opts))
        self.objects: list[pulumi.Resource] = []
        objects_opts = pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[self.release]))
        for doc in queue.objects(spec):
            meta: dict[str, Any] = doc["metadata"]
            self.objects.append(kube_objects.apply(f"{name}-{doc['kind'].lower()}-{meta['name']}", doc, objects_opts))
        self.register_outputs({"clusterQueue": spec.name, "localQueue": spec.local_queue})


def provisioning_request_crd(
    name: str, *, cluster: ControlPlane, parent: pulumi.Resource, kubernetes_version: str | None = None
) -> pulumi.Resource:
    """The ProvisioningRequest CRD (not in the autoscaler's chart), applied from the copy in the package.

    The copy is upstream's file at the tag of the autoscaler image pinned for this minor
    (`queue.provisioning_request_crd`): `pulumi up` depends on no host for it, and render writes the very
    object the cluster gets, which the tests check against the Kubernetes schema. `kubernetes_version`:
    deprecated, the cluster's.
    """
    if kubernetes_version is not None:
        deprecated_context(
            "provisioning_request_crd", "kubernetes_version", kubernetes_version, cluster.kubernetes_version
        )
    return kube_objects.apply(
        f"{name}-provisioningrequest-crd",
        queue.provisioning_request_crd(cluster.kubernetes_version),
        pulumi.ResourceOptions(parent=parent, provider=cluster.provider, deleted_with=cluster.resource),
    )
