"""Kubeconfig for an EKS cluster, built from its outputs (pure; no secrets inside, the token is fetched).

Why exec and not a static token: EKS tokens expire after 15 minutes, and a `pulumi up` that adds GPU
node groups and Helm releases runs longer than that. The exec plugin asks for a fresh token each time.
"""

from __future__ import annotations

import json
from typing import Any


def build_kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """Return a kubeconfig (JSON, which is valid YAML) that gets tokens with `aws eks get-token`."""
    user: dict[str, Any] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "aws",
            "args": [
                "eks",
                "get-token",
                "--cluster-name",
                cluster_name,
                "--region",
                region,
                "--output",
                "json",
            ],
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
