"""A kubeconfig for a live cluster whose credentials come from `gpuplane token` (no AWS CLI needed)."""

from __future__ import annotations

from typing import Any

import boto3
import botocore.exceptions
import yaml

from gpuplane.infra.aws.session import AwsError, client, explain
from gpuplane.infra.aws.token import EXEC_API_V1BETA1


def token_command(
    cluster_name: str, region: str, profile: str | None = None, role_arns: tuple[str, ...] = ()
) -> tuple[str, list[str]]:
    """The exec command: `gpuplane token` found on PATH, as the stack's profile and roles.

    Why PATH: the file then works for any teammate who installed gpuplane (no absolute path into one
    checkout's virtualenv).
    """
    args = ["token", "--cluster", cluster_name, "--region", region]
    if profile:
        args += ["--profile", profile]
    for arn in role_arns:
        args += ["--role-arn", arn]
    return "gpuplane", args


def build(
    cluster_name: str,
    endpoint: str,
    ca_data: str,
    region: str,
    *,
    profile: str | None = None,
    role_arns: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The kubeconfig document (one cluster, one user, one context, all named after the cluster)."""
    command, args = token_command(cluster_name, region, profile, role_arns)
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "current-context": cluster_name,
        "users": [
            {
                "name": cluster_name,
                "user": {
                    "exec": {
                        "apiVersion": EXEC_API_V1BETA1,
                        "command": command,
                        "args": args,
                        "interactiveMode": "Never",
                        "provideClusterInfo": False,
                    }
                },
            }
        ],
    }


def for_cluster(
    session: boto3.session.Session,
    cluster_name: str,
    region: str,
    *,
    profile: str | None = None,
    role_arns: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Describe the cluster and build its kubeconfig; AwsError when it does not exist or is not ready."""
    try:
        cluster = client(session, "eks").describe_cluster(name=cluster_name)["cluster"]
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            raise AwsError(
                f"EKS cluster '{cluster_name}' does not exist in {region}",
                "Run `pulumi up` for the stack first, or check the stack's region and gpuplane:clusterName",
            ) from None
        raise explain(exc, f"describing cluster {cluster_name}") from None
    except botocore.exceptions.BotoCoreError as exc:
        raise explain(exc, f"describing cluster {cluster_name}") from None
    endpoint = cluster.get("endpoint")
    ca_data = (cluster.get("certificateAuthority") or {}).get("data")
    if not endpoint or not ca_data:
        raise AwsError(
            f"EKS cluster '{cluster_name}' is {cluster.get('status', 'not ready')} and has no endpoint yet",
            "Wait until it is ACTIVE and run again",
        )
    return build(cluster_name, str(endpoint), str(ca_data), region, profile=profile, role_arns=role_arns)


def dump(document: dict[str, Any]) -> str:
    """YAML text of a kubeconfig."""
    return yaml.safe_dump(document, sort_keys=False)
