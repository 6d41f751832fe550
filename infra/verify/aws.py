"""The AWS side of `gpuplane verify`: EKS add-on states and what `pulumi destroy` would trip on.

Why a protocol: the add-on check is tested against botocore's Stubber (answers checked against the EKS
model botocore ships), the teardown check against a fake; `StackAws` is the real thing, with the stack's
identity (`aws:profile`, `aws:assumeRoles`) as every other command uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gpuplane.manifests import wellknown

if TYPE_CHECKING:
    from datetime import datetime

    from gpuplane.infra.config import StackConfig
    from gpuplane.infra.verify.amp import Amp


@dataclass(frozen=True)
class Leftover:
    """Something Kubernetes created in AWS that the stack's teardown must remove first."""

    kind: str
    id: str
    name: str
    reason: str


class VerifyAws(Protocol):
    """What `verify` asks of AWS."""

    def addons(self, cluster: str) -> dict[str, dict[str, Any]]:
        """Each installed EKS add-on's `DescribeAddon` answer (`addon` member), by name."""

    def teardown_leftovers(self) -> list[Leftover]:
        """What the janitor's finder sees now (dry run: nothing is deleted)."""

    def amp(self) -> Amp:
        """Amazon Managed Service for Prometheus, with the stack's identity and region (infra/verify/amp.py)."""


class StackAws:
    """`VerifyAws` with the stack's identity."""

    def __init__(
        self, config: StackConfig, session: Callable[[], Any], eks: Any | None = None, cloudwatch: Any | None = None
    ) -> None:
        """`session` makes the boto3 session when a check first needs it (its errors then fail that check)."""
        self._config = config
        self._make_session = session
        self._session: Any = None
        self._eks = eks
        self._cloudwatch = cloudwatch

    def _boto(self) -> Any:
        if self._session is None:
            self._session = self._make_session()
        return self._session

    def _client(self) -> Any:
        if self._eks is None:
            from gpuplane.infra.aws.session import client  # noqa: PLC0415

            self._eks = client(self._boto(), "eks")
        return self._eks

    def addons(self, cluster: str) -> dict[str, dict[str, Any]]:
        """See `VerifyAws.addons` (ListAddons, then DescribeAddon for each)."""
        eks = self._client()
        names: list[str] = []
        token: str | None = None
        while True:
            page = eks.list_addons(clusterName=cluster, **({"nextToken": token} if token else {}))
            names += page.get("addons", [])
            token = page.get("nextToken")
            if not token:
                break
        return {name: eks.describe_addon(clusterName=cluster, addonName=name)["addon"] for name in names}

    def container_insights_metrics(
        self, cluster: str, names: Sequence[str], start: datetime, end: datetime
    ) -> dict[str, dict[str, Any]]:
        """Per name: ListMetrics finds it for the cluster (`listed`), GetMetricData's Maximum per minute (`values`).

        The `checks_cloudwatch.ContainerInsightsAws` seam. ListMetrics with `RecentlyActive: PT3H` (the only value
        the API takes) and the cluster-wide dimension set Container Insights publishes (`ClusterName`).
        """
        if self._cloudwatch is None:
            from gpuplane.infra.aws.session import client  # noqa: PLC0415

            self._cloudwatch = client(self._boto(), "cloudwatch")
        cw = self._cloudwatch
        cluster_dim = [{"Name": "ClusterName", "Value": cluster}]
        found: dict[str, dict[str, Any]] = {}
        for name in names:
            listed = cw.list_metrics(
                Namespace=wellknown.CONTAINER_INSIGHTS_NAMESPACE,
                MetricName=name,
                Dimensions=cluster_dim,
                RecentlyActive="PT3H",
            )
            found[name] = {"listed": bool(listed.get("Metrics")), "values": []}
        queries = [
            {
                "Id": f"m{i}",
                "MetricStat": {
                    "Metric": {
                        "Namespace": wellknown.CONTAINER_INSIGHTS_NAMESPACE,
                        "MetricName": name,
                        "Dimensions": cluster_dim,
                    },
                    "Period": 60,
                    "Stat": "Maximum",
                },
            }
            for i, name in enumerate(names)
        ]
        answer = cw.get_metric_data(MetricDataQueries=queries, StartTime=start, EndTime=end)
        for result in answer.get("MetricDataResults", []):
            found[names[int(result["Id"][1:])]]["values"] = [float(v) for v in result.get("Values", [])]
        return found

    def amp(self) -> Amp:
        """See `VerifyAws.amp`."""
        from gpuplane.infra.aws.session import client  # noqa: PLC0415
        from gpuplane.infra.verify.amp import Amp  # noqa: PLC0415

        session = self._boto()
        return Amp(client(session, "amp"), session.get_credentials, self._config.region)

    def teardown_leftovers(self) -> list[Leftover]:
        """See `VerifyAws.teardown_leftovers` (the janitor's own scan, volumes left out)."""
        from gpuplane.infra.aws import janitor  # noqa: PLC0415

        found = janitor.plan(self._config, self._boto(), include_volumes=False)
        return [Leftover(o.kind, o.id, o.name, o.reason) for o in found.findings.orphans]
