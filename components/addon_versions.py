"""The `addonVersion` of every EKS add-on: EKS's default for the cluster's Kubernetes minor, looked up at `up`.

Why a lookup and not EKS's choice at creation: an add-on without `addonVersion` keeps the version it was
created with forever, so raising `kubernetesVersion` would leave kube-proxy and coredns built for the old
minor. With the version resolved per minor, the same change moves every add-on after the control plane
(each depends on the cluster). The render answers the lookup offline with a placeholder naming the minor.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpuplane.components.plan.addons import version_query


def addon_version(addon_name: str, kubernetes_version: str, parent: pulumi.Resource) -> pulumi.Output[str]:
    """`addonVersion` of `addon_name` in a cluster at `kubernetes_version` (the minor, from the stack)."""
    query = version_query(addon_name, kubernetes_version)
    return aws.eks.get_addon_version_output(
        addon_name=query.addon_name,
        kubernetes_version=query.kubernetes_version,
        most_recent=query.most_recent,
        opts=pulumi.InvokeOutputOptions(parent=parent),
    ).version
