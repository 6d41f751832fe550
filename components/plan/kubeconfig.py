"""Kubeconfig for an EKS cluster, built from its outputs (pure; no secrets inside, the token is fetched).

Why exec and not a static token: EKS tokens expire after 15 minutes, and a `pulumi up` that adds GPU
node groups and Helm releases runs longer than that. The exec plugin asks for a fresh token each time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def build_kubeconfig(
    cluster_name: str,
    endpoint: str,
    ca_data: str,
    region: str,
    *,
    profile: str | None = None,
    role_arns: Sequence[str] = (),
) -> str:
    """Return a kubeconfig (JSON, which is valid YAML) that gets tokens as the stack's AWS identity.

    `profile` and `role_arns` are the stack's `aws:profile` and `aws:assumeRoles`: the Kubernetes provider
    must act as the same principal as the AWS provider, or EKS answers with another identity's access
    entries. `aws eks get-token` takes one `--role-arn`; a chain of roles uses `gpuplane token`.
    """
    if len(role_arns) > 1:
        command = "gpuplane"
        args = ["token", "--cluster", cluster_name, "--region", region]
        args += ["--profile", profile] if profile else []
        for arn in role_arns:
            args += ["--role-arn", arn]
    else:
        command = "aws"
        args = ["eks", "get-token", "--cluster-name", cluster_name, "--region", region, "--output", "json"]
        args += ["--profile", profile] if profile else []
        args += ["--role-arn", role_arns[0]] if role_arns else []
    user: dict[str, Any] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": command,
            "args": args,
            "interactiveMode": "Never",
        }
    }
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": cluster_name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}
            ],
            "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
            "current-context": cluster_name,
            "users": [{"name": cluster_name, "user": user}],
        },
        sort_keys=True,
    )
