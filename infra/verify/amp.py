"""Amazon Managed Service for Prometheus as `gpuplane verify` reads it, and a SigV4-signed PromQL query.

What it reads: the stack's workspace, its collector, rules and Alertmanager.

Why a class over a botocore client: the calls are tested against botocore's Stubber, which checks every
request and answer against the `amp` service model botocore ships (1.44.x: `ListWorkspaces` with its `alias`
prefix filter, `ListScrapers` with `filters` such as `alias`, `DescribeRuleGroupsNamespace`,
`DescribeAlertManagerDefinition`, their `status.statusCode`/`statusReason`). The query is plain HTTP (AMP's
Prometheus-compatible API, `POST <prometheusEndpoint>api/v1/query`), signed with `botocore.auth.SigV4Auth` for
the service `aps` (the model's `signingName`) with the session's own credentials, and sent with urllib: no HTTP
library beyond the standard one.

IAM the caller needs: `aps:ListWorkspaces`, `aps:DescribeWorkspace`, `aps:ListScrapers`,
`aps:DescribeRuleGroupsNamespace`, `aps:DescribeAlertManagerDefinition`, `aps:QueryMetrics`.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlencode

from gpuplane.infra.verify.promapi import QueryError, prometheus_answer

SIGNING_NAME: Final = "aps"
RULES_NAMESPACE: Final = "gpuplane"
"""The rule groups namespace the stack creates (`components/observability.py` `_managed`)."""


def _not_found(exc: Exception) -> bool:
    return bool(getattr(exc, "response", {}).get("Error", {}).get("Code") == "ResourceNotFoundException")


class Amp:
    """The AMP calls `verify` makes, with one botocore `amp` client and the session's credentials."""

    def __init__(
        self,
        client: Any,
        credentials: Callable[[], Any],
        region: str,
        urlopen: Callable[..., Any] = urllib.request.urlopen,
    ) -> None:
        """`credentials`: returns botocore credentials (the session's `get_credentials`), read for each query."""
        self._client = client
        self._credentials = credentials
        self.region = region
        self._urlopen = urlopen

    def workspaces(self, alias: str) -> list[dict[str, Any]]:
        """Workspaces whose alias is exactly `alias` (`ListWorkspaces` filters by prefix only)."""
        found: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            page = self._client.list_workspaces(alias=alias, **({"nextToken": token} if token else {}))
            found += [w for w in page.get("workspaces", []) if w.get("alias") == alias]
            token = page.get("nextToken")
            if not token:
                return found

    def workspace(self, workspace_id: str) -> dict[str, Any] | None:
        """`DescribeWorkspace` (with `prometheusEndpoint`), or None when it does not exist."""
        try:
            return dict(self._client.describe_workspace(workspaceId=workspace_id)["workspace"])
        except Exception as exc:
            if _not_found(exc):
                return None
            raise

    def scrapers(self, alias: str) -> list[dict[str, Any]]:
        """Collectors whose alias is `alias` (`ListScrapers` with the `alias` filter), every status."""
        found: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            page = self._client.list_scrapers(filters={"alias": [alias]}, **({"nextToken": token} if token else {}))
            found += list(page.get("scrapers", []))
            token = page.get("nextToken")
            if not token:
                return found

    def rule_groups_namespace(self, workspace_id: str, name: str = RULES_NAMESPACE) -> dict[str, Any] | None:
        """`DescribeRuleGroupsNamespace`, or None when the workspace has no such namespace."""
        try:
            return dict(
                self._client.describe_rule_groups_namespace(workspaceId=workspace_id, name=name)["ruleGroupsNamespace"]
            )
        except Exception as exc:
            if _not_found(exc):
                return None
            raise

    def alertmanager(self, workspace_id: str) -> dict[str, Any] | None:
        """`DescribeAlertManagerDefinition`, or None when the workspace has none."""
        try:
            return dict(
                self._client.describe_alert_manager_definition(workspaceId=workspace_id)["alertManagerDefinition"]
            )
        except Exception as exc:
            if _not_found(exc):
                return None
            raise

    def query(self, endpoint: str, promql: str, *, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """An instant query (`POST <endpoint>api/v1/query`, form-encoded), SigV4-signed for `aps` in `region`.

        `QueryError` on an HTTP error (403: the caller lacks `aps:QueryMetrics`) or a Prometheus error answer.
        """
        from botocore.auth import SigV4Auth  # noqa: PLC0415
        from botocore.awsrequest import AWSRequest  # noqa: PLC0415

        credentials = self._credentials()
        if credentials is None:
            raise QueryError("no AWS credentials to sign the query with")
        url = f"{endpoint.rstrip('/')}/api/v1/query"
        body = urlencode({"query": promql})
        request = AWSRequest(
            method="POST", url=url, data=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
        )
        SigV4Auth(credentials.get_frozen_credentials(), SIGNING_NAME, self.region).add_auth(request)
        sent = urllib.request.Request(url, data=body.encode(), headers=dict(request.headers.items()), method="POST")
        try:
            with self._urlopen(sent, timeout=timeout_s) as answer:
                text = answer.read().decode("utf-8", errors="replace")
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", errors="replace")[:300]
            raise QueryError(f"HTTP {exc.code} from {url}: {detail}") from None
        except OSError as exc:
            raise QueryError(f"{url}: {exc}") from None
        return prometheus_answer(text)
