"""Apply a plain-dict Kubernetes object (from `gpuplane.manifests`) as the matching pulumi_kubernetes resource.

Why typed resources and not a YAML ConfigGroup: a ConfigGroup is a remote component whose objects the
mock run (render, tests) never sees; typed resources carry every field as inputs, so what render writes
is exactly what `pulumi up` applies.
"""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

_KINDS: dict[tuple[str, str], Any] = {
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("v1", "Service"): k8s.core.v1.Service,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("apps/v1", "Deployment"): k8s.apps.v1.Deployment,
    ("batch/v1", "Job"): k8s.batch.v1.Job,
    ("policy/v1", "PodDisruptionBudget"): k8s.policy.v1.PodDisruptionBudget,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): k8s.autoscaling.v2.HorizontalPodAutoscaler,
    ("networking.k8s.io/v1", "Ingress"): k8s.networking.v1.Ingress,
    ("networking.k8s.io/v1", "NetworkPolicy"): k8s.networking.v1.NetworkPolicy,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): k8s.rbac.v1.ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): k8s.rbac.v1.ClusterRoleBinding,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): k8s.apiextensions.v1.CustomResourceDefinition,
}

# Kinds of CRDs whose charts the platform installs (KEDA), applied as CustomResources: the same fields, registered
# under the CRD's own type token (`kubernetes:keda.sh/v1alpha1:ScaledObject`).
_CUSTOM: frozenset[tuple[str, str]] = frozenset(
    {("keda.sh/v1alpha1", "ScaledObject"), ("keda.sh/v1alpha1", "ClusterTriggerAuthentication")}
)


def apply(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """Register `obj` under the Pulumi name `name`; ValueError for a kind this module does not map."""
    key = (obj["apiVersion"], obj["kind"])
    if key in _CUSTOM:
        return k8s.apiextensions.CustomResource(
            name, api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"], spec=obj["spec"], opts=opts
        )
    if key not in _KINDS:
        raise ValueError(f"no pulumi_kubernetes class for {key}; known: {sorted(_KINDS) + sorted(_CUSTOM)}")
    # Top-level fields are Python keyword arguments (snake_case); nested dicts keep the API's camelCase.
    fields = {re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower(): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    resource: pulumi.CustomResource = _KINDS[key](name, opts=opts, **fields)
    return resource
