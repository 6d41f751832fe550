"""Namespaces with Pod Security Admission labels.

Why every namespace we create says its level explicitly: EKS enforces no Pod Security level by default,
so a namespace without labels runs privileged pods silently. Workload namespaces get `restricted`;
only a namespace that must run privileged agents (the NVIDIA device plugin) gets `privileged`, and then
on purpose, where a reviewer can see it.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

PodSecurityLevel = Literal["privileged", "baseline", "restricted"]
_DNS_LABEL: Final = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def namespace(name: str, level: PodSecurityLevel, kubernetes_version: str) -> dict[str, Any]:
    """A Namespace that enforces, audits and warns at `level`, pinned to the cluster's version.

    Pinning the policy version (`v1.35`, not `latest`) means a control-plane upgrade cannot tighten or
    loosen the checks under running workloads without a reviewed change.
    """
    if not _DNS_LABEL.match(name):
        raise ValueError(f"namespace name '{name}' must be a DNS label (lowercase letters, digits, '-', <= 63 chars)")
    version = f"v{kubernetes_version}"
    labels = {"app.kubernetes.io/managed-by": "gpuplane"}
    for mode in ("enforce", "audit", "warn"):
        labels[f"pod-security.kubernetes.io/{mode}"] = level
        labels[f"pod-security.kubernetes.io/{mode}-version"] = version
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
