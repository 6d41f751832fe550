"""Workspace component: the namespace TensorFlow workloads run in, with the runtime helper beside them."""

from __future__ import annotations

import pulumi

from gpuplane.components import kube_objects
from gpuplane.components.control_plane import ControlPlane, deprecated_context
from gpuplane.manifests.namespaces import namespace
from gpuplane.manifests.tf_runtime import runtime_configmap


class Workspace(pulumi.ComponentResource):
    """A `restricted` Pod Security namespace holding the `gpuplane-runtime` ConfigMap.

    Every TensorFlow container gpuplane wraps mounts the cgroup-aware runtime helper from this
    ConfigMap, and a ConfigMap volume can only be read from its own namespace.
    """

    namespace: pulumi.Output[str]
    namespace_resource: kube_objects.KubeObject
    """For `depends_on` of objects that live in the namespace."""

    def __init__(
        self,
        name: str,
        *,
        namespace_name: str,
        cluster: ControlPlane,
        kubernetes_version: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`namespace_name`: the namespace workloads run in. `kubernetes_version`: deprecated, the cluster's."""
        if kubernetes_version is not None:
            deprecated_context("Workspace", "kubernetes_version", kubernetes_version, cluster.kubernetes_version)
        super().__init__("gpuplane:index:Workspace", name, None, opts)
        # In-cluster only: deleting the cluster deletes them, so a destroy need not wait for each one.
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=cluster.provider, deleted_with=cluster.resource)
        ns_doc = namespace(namespace_name, "restricted", cluster.kubernetes_version)
        ns = kube_objects.apply(f"{name}-ns", ns_doc, k8s_opts)
        kube_objects.apply(
            f"{name}-runtime",
            runtime_configmap(namespace_name),
            pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[ns])),
        )
        self.namespace_resource = ns
        self.namespace = ns.metadata.apply(lambda m: (m or {}).get("name") or namespace_name)
        self.register_outputs({"namespace": self.namespace})
