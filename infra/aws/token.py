"""EKS bearer tokens made with boto3, so kubectl and the Kubernetes provider need no AWS CLI.

The scheme is the one `aws eks get-token` and aws-iam-authenticator use (aws-cli
`awscli/customizations/eks/get_token.py`): a presigned STS `GetCallerIdentity` GET URL, signed with the
header `x-k8s-aws-id: <cluster name>` and `X-Amz-Expires=60`, base64url-encoded without padding and
prefixed with `k8s-aws-v1.`. EKS accepts such a token for 15 minutes; like the AWS CLI we tell the client
it expires after 14, so it asks for a new one in time.
"""

from __future__ import annotations

import base64
import json
import os
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import boto3
import botocore.exceptions

from gpuplane.components.facts import partition
from gpuplane.infra.aws.session import explain

TOKEN_PREFIX: Final = "k8s-aws-v1."
CLUSTER_ID_HEADER: Final = "x-k8s-aws-id"
URL_EXPIRES_S: Final = 60
TOKEN_LIFETIME: Final = timedelta(minutes=14)
EXEC_API_V1BETA1: Final = "client.authentication.k8s.io/v1beta1"
_EXEC_APIS: Final = (EXEC_API_V1BETA1, "client.authentication.k8s.io/v1")


def sts_endpoint(region: str) -> str:
    """The regional STS endpoint EKS expects the token to be signed for (never the global one)."""
    return f"https://{partition.of_region(region).sts_host(region)}"


def presigned_url(session: boto3.session.Session, cluster_name: str, region: str) -> str:
    """A presigned `GetCallerIdentity` URL that carries the cluster name in a signed header."""
    # An explicit endpoint: the token must name the real regional STS host even when AWS_ENDPOINT_URL
    # points the other clients elsewhere. Presigning makes no network call.
    sts = session.client("sts", region_name=region, endpoint_url=sts_endpoint(region))

    def add_cluster_header(request: Any, **_: Any) -> None:
        request.headers[CLUSTER_ID_HEADER] = cluster_name

    sts.meta.events.register("before-sign.sts.GetCallerIdentity", add_cluster_header)
    try:
        return str(
            sts.generate_presigned_url("get_caller_identity", Params={}, ExpiresIn=URL_EXPIRES_S, HttpMethod="GET")
        )
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise explain(exc, f"signing a token for cluster {cluster_name}") from None


def token(session: boto3.session.Session, cluster_name: str, region: str) -> str:
    """The bearer token: `k8s-aws-v1.` + base64url(presigned URL) without `=` padding."""
    url = presigned_url(session, cluster_name, region)
    return TOKEN_PREFIX + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


def exec_api_version() -> str:
    """The ExecCredential apiVersion kubectl asked for (KUBERNETES_EXEC_INFO), else v1beta1."""
    try:
        info = json.loads(os.environ.get("KUBERNETES_EXEC_INFO", "") or "{}")
    except json.JSONDecodeError:
        return EXEC_API_V1BETA1
    asked = info.get("apiVersion") if isinstance(info, dict) else None
    return asked if asked in _EXEC_APIS else EXEC_API_V1BETA1


def exec_credential(
    session: boto3.session.Session, cluster_name: str, region: str, now: datetime | None = None
) -> dict[str, Any]:
    """The `ExecCredential` object a kubeconfig `exec` plugin prints."""
    expires = (now or datetime.now(UTC)) + TOKEN_LIFETIME
    return {
        "kind": "ExecCredential",
        "apiVersion": exec_api_version(),
        "spec": {},
        "status": {
            "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "token": token(session, cluster_name, region),
        },
    }
