"""ClusterAutoscaler component: scales node groups, GPU groups from zero, with its IAM via Pod Identity."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuplane.components import kube_objects
from gpuplane.components.config import AutoscalerArgs
from gpuplane.components.control_plane import ControlPlane, deprecated_context, deprecated_keyword
from gpuplane.components.plan import iam_policies
from gpuplane.components.pod_identity import pod_identity_role
from gpuplane.manifests import versions, wellknown

# Which store reads the autoscaler's metrics (`observability.metrics`): the in-cluster Prometheus through a
# ServiceMonitor of ours (manifests/observability.py `autoscaler_service_monitor`), the AWS managed collector
# through its own job (`managed_scrape_config`), or none (`cloudwatch` reads no Prometheus endpoint of it).
METRICS_STORES = ("prometheus", "managedPrometheus", "none")


def autoscaler_values(
    args: AutoscalerArgs,
    *,
    cluster_name: str,
    region: str,
    kubernetes_version: str,
    startup_taints: Sequence[str],
    provisioning_requests: bool = False,
    metrics: str = "none",
) -> dict[str, Any]:
    """Values of the cluster-autoscaler chart: auto-discovery by the tags every node group's ASG carries.

    `provisioning_requests`: also serve Kueue's ProvisioningRequests (training queue; components/queue.py
    decides, from the image, whether this minor can).
    `metrics`: the store that reads the autoscaler (`METRICS_STORES`). With either Prometheus store it also emits
    its per-node-group gauges (`--emit-per-nodegroup-metrics`, off by default: which node group is in back-off
    after a failed scale-up). The chart's own ServiceMonitor stays off, written so: with it the release would need
    the stack's CRD and wait for the stack, whose pods may wait for a node only the autoscaler adds; the
    Observability component applies the same ServiceMonitor after the stack instead.
    """
    if metrics not in METRICS_STORES:
        raise ValueError(f"autoscaler_values: metrics={metrics!r} is not one of {', '.join(METRICS_STORES)}")
    extra: dict[str, Any] = {
        "balance-similar-node-groups": True,
        "skip-nodes-with-system-pods": False,
        "expander": args.expander,
        "scale-down-unneeded-time": args.scale_down_unneeded_time,
    }
    # Nodes carry startup taints only until an agent starts; a template with them would block scale-up.
    # The flag repeats once per taint; the chart turns `startup-taint_1` into another `--startup-taint`.
    for index, taint in enumerate(startup_taints):
        extra["startup-taint" if index == 0 else f"startup-taint_{index}"] = taint
    rbac: dict[str, Any] = {"serviceAccount": {"create": True, "name": wellknown.CLUSTER_AUTOSCALER_SA}}
    if metrics != "none":
        extra["emit-per-nodegroup-metrics"] = True
    if provisioning_requests:
        extra["enable-provisioning-requests"] = True
        # The chart (>= 9.57) grants get/list/watch/update/patch on provisioningrequests; the autoscaler also
        # deletes them (provisioningrequest/provreqclient/client.go, DeleteProvisioningRequest).
        rbac["additionalRules"] = [
            {
                "apiGroups": [wellknown.PROVISIONING_REQUEST_API.split("/")[0]],
                "resources": ["provisioningrequests"],
                "verbs": ["delete"],
            }
        ]
    return {
        # It mounts no EFS volume: tolerating the startup taints lets it start before the EFS node agent.
        "tolerations": [{"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints],
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {
            "clusterName": cluster_name,
            "tags": [f"{wellknown.CA_TAG_PREFIX}/enabled", f"{wellknown.CA_TAG_PREFIX}/{cluster_name}"],
        },
        # The chart's default repository (values.yaml at cluster-autoscaler-chart-9.59.0), named so that the render
        # shows the whole image a pin stands for (its end-of-support check matches `repository:tag`).
        "image": {
            "repository": versions.CLUSTER_AUTOSCALER_IMAGE_REPOSITORY,
            "tag": versions.CLUSTER_AUTOSCALER_IMAGES[kubernetes_version],
        },
        "rbac": rbac,
        "priorityClassName": "system-cluster-critical",
        "extraArgs": extra,
        "serviceMonitor": {"enabled": False},
    }


class ClusterAutoscaler(pulumi.ComponentResource):
    """The upstream cluster-autoscaler chart, allowed to change only this cluster's Auto Scaling groups."""

    role_arn: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: AutoscalerArgs | None = None,
        *,
        cluster: ControlPlane,
        after: Sequence[pulumi.Resource] | None = None,
        provisioning_requests: bool = False,
        metrics: str = "none",
        tags: dict[str, str] | None = None,
        region: str | None = None,
        kubernetes_version: str | None = None,
        startup_taints: Sequence[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`args`: its settings (default `AutoscalerArgs()`); region, minor and startup taints are the cluster's.

        `after`: what the autoscaler waits for (default `cluster.services_ready`: coredns and the system node
        groups; add the ProvisioningRequest CRD when serving them): never GPU groups.
        `provisioning_requests`: serve ProvisioningRequests (their CRD must be among `after`).
        `metrics`: the store that reads its metrics (`autoscaler_values`). Nothing of the metrics stack is needed
        first: its ServiceMonitor is the Observability component's (`autoscaler=True`).
        `tags`: added to the cluster's.
        `region`, `kubernetes_version`, `startup_taints`: deprecated, the cluster's.
        """
        args = args or AutoscalerArgs()
        if region is not None:
            deprecated_context("ClusterAutoscaler", "region", region, cluster.region)
        if kubernetes_version is not None:
            deprecated_context(
                "ClusterAutoscaler", "kubernetes_version", kubernetes_version, cluster.kubernetes_version
            )
        if startup_taints is None:
            startup_taints = cluster.startup_taint_keys
        else:
            deprecated_keyword("ClusterAutoscaler", "startup_taints", "pass startup_taints to Cluster(...)")
        after = cluster.services_ready if after is None else after
        super().__init__("gpuplane:index:ClusterAutoscaler", name, None, opts)
        tags = {**cluster.tags, **(tags or {})}
        association = pod_identity_role(
            name,
            parent=self,
            cluster=cluster,
            namespace=wellknown.CLUSTER_AUTOSCALER_NAMESPACE,
            service_account=wellknown.CLUSTER_AUTOSCALER_SA,
            policy=_scoped_policy(cluster.eks_name, cluster.region),
            description=f"cluster-autoscaler of {cluster.eks_name}",
            tags=tags,
        )
        kube_objects.HelmRelease(
            f"{name}-release",
            name=wellknown.CLUSTER_AUTOSCALER_RELEASE,
            namespace=wellknown.CLUSTER_AUTOSCALER_NAMESPACE,
            chart=versions.CLUSTER_AUTOSCALER_CHART,
            version=versions.CLUSTER_AUTOSCALER_VERSION,
            repo=versions.CLUSTER_AUTOSCALER_REPO,
            values=autoscaler_values(
                args,
                cluster_name=cluster.eks_name,
                region=cluster.region,
                kubernetes_version=cluster.kubernetes_version,
                startup_taints=startup_taints,
                provisioning_requests=provisioning_requests,
                metrics=metrics,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=cluster.provider,
                depends_on=[association, *cluster.before_compute, *after],
                # An in-cluster object: deleting the cluster deletes it (no effect outside the cluster).
                deleted_with=cluster.resource,
            ),
        )
        self.role_arn = association.role_arn
        self.register_outputs({"roleArn": association.role_arn})


def _scoped_policy(cluster_name: str, region: str) -> pulumi.Output[str]:
    """The autoscaler policy with this account's and partition's ARNs (two invokes, no resources)."""
    identity = aws.get_caller_identity_output()
    partition = aws.get_partition_output()
    return pulumi.Output.all(identity.account_id, partition.partition).apply(
        lambda v: iam_policies.cluster_autoscaler_policy(cluster_name, partition=v[1], region=region, account_id=v[0])
    )
