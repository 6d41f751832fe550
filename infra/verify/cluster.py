"""The Kubernetes side of `gpuplane verify`: the calls it makes (a protocol), and the real client.

Why a protocol of plain dicts (the API's own JSON, camelCase): the checks are tested against fake clusters
that answer as a healthy or a broken cluster would, written as the JSON `kubectl get -o json` shows, with no
client objects to mimic. `KubeCluster` is the only code here that talks to a cluster; it builds on
`infra.kube` (the kubeconfig `gpuplane kubeconfig` writes, the autoscaler's refusal on a pending pod).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Final, Protocol

from gpuplane.infra import kube

# (connect, read) seconds of every API call: a dropped packet or a server that stops answering fails the call
# instead of holding its check (the runner also abandons a check past its deadline, but a thread left in a
# read is a thread the process carries to its end).
REQUEST_TIMEOUT: Final = (10.0, 30.0)


class ClusterUnreachable(Exception):
    """The API server did not answer (network, endpoint access, credentials): the message says which."""


class VerifyCluster(Protocol):
    """What `verify` asks of a cluster."""

    def server_version(self) -> str:
        """`major.minor` of the API server (ClusterUnreachable when it does not answer)."""

    def list_nodes(self) -> list[dict[str, Any]]:
        """Every node."""

    def list_pods(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        """Pods in `namespace` ('' for all namespaces), optionally by label."""

    def read_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The pod, or None when it does not exist."""

    def pod_log(self, namespace: str, name: str, container: str, *, timestamps: bool = False) -> str:
        """One container's log ('' when it has none yet).

        `timestamps`: each line starts with the RFC 3339 time the runtime received it (`timestamps=true`).
        """

    def pod_events(self, namespace: str, name: str) -> list[dict[str, Any]]:
        """Events about the pod."""

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The JobSet, or None when it does not exist (as `kube.KubeApi.get_jobset`)."""

    def list_workloads(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        """Kueue Workloads in the namespace, optionally by label (as `kube.KubeApi.list_workloads`)."""

    def service_proxy_get(
        self, namespace: str, service: str, port: int | str, path: str, query: dict[str, str] | None = None
    ) -> str:
        """GET `path` (with `query`) of a Service through the API server's service proxy; the body as text.

        `GET /api/v1/namespaces/{ns}/services/http:{service}:{port}/proxy/{path}`: needs `get` on
        `services/proxy` in `namespace` (cluster-admin has it). Raises on an error status (the API's
        `ApiException`, its `status` and `body` set: 503 when no endpoint of the Service is ready).
        """

    def create(self, obj: dict[str, Any]) -> None:
        """Create a Namespace, ConfigMap, NetworkPolicy, Pod or JobSet."""

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        """Delete it (nothing happens when it is already gone)."""


def _when(text: Any) -> datetime | None:
    if isinstance(text, datetime):
        return text if text.tzinfo else text.replace(tzinfo=UTC)
    if not text:
        return None
    return datetime.fromisoformat(str(text).replace("Z", "+00:00"))


def event_view(event: dict[str, Any]) -> SimpleNamespace:
    """An event dict as the attribute object `kube.latest_scale_up_refusal` reads."""
    return SimpleNamespace(
        reason=event.get("reason"),
        message=event.get("message", ""),
        reporting_component=event.get("reportingComponent"),
        source=SimpleNamespace(component=(event.get("source") or {}).get("component")),
        last_timestamp=_when(event.get("lastTimestamp")),
        event_time=_when(event.get("eventTime")),
        first_timestamp=_when(event.get("firstTimestamp")),
        metadata=SimpleNamespace(creation_timestamp=_when((event.get("metadata") or {}).get("creationTimestamp"))),
    )


def scale_up_refusal(events: list[dict[str, Any]]) -> str:
    """The cluster-autoscaler's latest word on a pod when it is a refusal ('' otherwise)."""
    return kube.latest_scale_up_refusal([event_view(e) for e in events])


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    """The status condition of type `kind` ({} when absent)."""
    for found in (obj.get("status") or {}).get("conditions") or []:
        if found.get("type") == kind:
            return dict(found)
    return {}


def unschedulable_message(pod: dict[str, Any]) -> str:
    """The scheduler's message when the pod cannot be scheduled, else ''."""
    scheduled = condition(pod, "PodScheduled")
    if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
        return str(scheduled.get("message") or "unschedulable")
    return ""


def seconds_between(start: Any, end: Any) -> float | None:
    """Seconds from one API timestamp to another (None when either is missing)."""
    a, b = _when(start), _when(end)
    return None if a is None or b is None else (b - a).total_seconds()


class KubeCluster:
    """`VerifyCluster` on a real cluster, through the official client."""

    def __init__(self, api: Any, request_timeout: tuple[float, float] = REQUEST_TIMEOUT) -> None:
        """`api`: a `kubernetes.client.ApiClient` (how the CLI builds it is `from_kubeconfig`'s business).

        `request_timeout`: (connect, read) seconds of every call; a read that stalls longer fails the call.
        """
        from kubernetes import client  # noqa: PLC0415

        self._api = api
        self._t = request_timeout
        self._core = client.CoreV1Api(self._api)
        self._version = client.VersionApi(self._api)
        self._networking = client.NetworkingV1Api(self._api)
        self._custom = client.CustomObjectsApi(self._api)

    @classmethod
    def from_kubeconfig(
        cls, kubeconfig: kube.Source | Path, request_timeout: tuple[float, float] = REQUEST_TIMEOUT
    ) -> KubeCluster:
        """On the cluster of `kubeconfig`; `kube.KubeError` when it cannot be used (infra/kubeaccess.py).

        A `kube.Source` (the project's, trusted only as gpuplane wrote it), or a path the user named (used as
        kubectl would).
        """
        source = kubeconfig if isinstance(kubeconfig, kube.Source) else kube.Source(kubeconfig, "STACK", None)
        return cls(kube.api_client(source, request_timeout), request_timeout)

    def _json(self, obj: Any) -> Any:
        return self._api.sanitize_for_serialization(obj)

    @staticmethod
    def _raw(answer: Any) -> Any:
        """The API's JSON as it came (`_preload_content=False`): no client models built and turned back.

        A list of 30,000 nodes takes seconds of CPU through the models; the checks read the JSON anyway.
        """
        return json.loads(bytes(answer.data) or b"{}")

    def server_version(self) -> str:
        """See `VerifyCluster.server_version`."""
        try:
            info = self._version.get_code(_request_timeout=self._t)
        except Exception as exc:
            raise ClusterUnreachable(f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}") from None
        minor = "".join(ch for ch in str(info.minor) if ch.isdigit())
        return f"{info.major}.{minor}"

    def list_nodes(self) -> list[dict[str, Any]]:
        """See `VerifyCluster.list_nodes`."""
        found = self._core.list_node(_preload_content=False, _request_timeout=self._t)
        return list(self._raw(found).get("items") or [])

    def list_pods(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        """See `VerifyCluster.list_pods`."""
        if namespace:
            found = self._core.list_namespaced_pod(
                namespace, label_selector=label_selector, _preload_content=False, _request_timeout=self._t
            )
        else:
            found = self._core.list_pod_for_all_namespaces(
                label_selector=label_selector, _preload_content=False, _request_timeout=self._t
            )
        return list(self._raw(found).get("items") or [])

    def read_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """See `VerifyCluster.read_pod`."""
        try:
            found: dict[str, Any] = self._json(
                self._core.read_namespaced_pod(name, namespace, _request_timeout=self._t)
            )
        except Exception as exc:
            if getattr(exc, "status", None) == 404:
                return None
            raise
        return found

    def pod_log(self, namespace: str, name: str, container: str, *, timestamps: bool = False) -> str:
        """See `VerifyCluster.pod_log`.

        Read raw and decoded here: the client 36.0.x returns the log as the repr of its bytes ("b'...'", with
        the newlines escaped; kubernetes-client/python#2596, seen here with 36.0.3).
        """
        try:
            # The client writes the flag as `True`, which the API server's strconv.ParseBool accepts.
            stamped = {"timestamps": True} if timestamps else {}
            answer = self._core.read_namespaced_pod_log(
                name, namespace, container=container, _preload_content=False, _request_timeout=self._t, **stamped
            )
            return bytes(answer.data).decode("utf-8", errors="replace")
        except Exception as exc:
            if getattr(exc, "status", None) in (400, 404):  # not started yet, or gone
                return ""
            raise

    def pod_events(self, namespace: str, name: str) -> list[dict[str, Any]]:
        """See `VerifyCluster.pod_events`."""
        found = self._core.list_namespaced_event(
            namespace,
            field_selector=f"involvedObject.kind=Pod,involvedObject.name={name}",
            _request_timeout=self._t,
        )
        return list(self._json(found).get("items") or [])

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        """See `VerifyCluster.get_jobset`."""
        try:
            found: dict[str, Any] = self._custom.get_namespaced_custom_object(
                kube.JOBSET_GROUP, kube.JOBSET_VERSION, namespace, kube.JOBSET_PLURAL, name, _request_timeout=self._t
            )
        except Exception as exc:
            if getattr(exc, "status", None) == 404:
                return None
            raise
        return found

    def list_workloads(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        """See `VerifyCluster.list_workloads`."""
        found = self._custom.list_namespaced_custom_object(
            kube.KUEUE_GROUP,
            kube.KUEUE_VERSION,
            namespace,
            "workloads",
            label_selector=label_selector,
            _request_timeout=self._t,
        )
        return list(found.get("items") or [])

    def service_proxy_get(
        self, namespace: str, service: str, port: int | str, path: str, query: dict[str, str] | None = None
    ) -> str:
        """See `VerifyCluster.service_proxy_get`.

        Through `ApiClient.call_api` with the path written here, not the generated
        `CoreV1Api.connect_get_namespaced_service_proxy_with_path` (kubernetes client 36.0.3, read in its
        core_v1_api.py): that one quotes its `path` argument whole (`api/v1/query` becomes `api%2Fv1%2Fquery`,
        `safe_chars_for_path_param` being '') and takes no query parameters but its own `path2`, so a PromQL
        query could not be passed. Same URL template, verb, `Accept` and `BearerToken` auth as that method.
        """
        from urllib.parse import quote  # noqa: PLC0415

        resource = (
            f"/api/v1/namespaces/{quote(namespace, safe='')}/services/"
            f"{quote(f'http:{service}:{port}', safe=':')}/proxy/{quote(path.lstrip('/'), safe='/')}"
        )
        answer = self._api.call_api(
            resource,
            "GET",
            query_params=list((query or {}).items()),
            header_params={"Accept": "*/*"},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _return_http_data_only=True,
            _request_timeout=self._t,
        )
        return bytes(answer.data).decode("utf-8", errors="replace")

    def create(self, obj: dict[str, Any]) -> None:
        """See `VerifyCluster.create`."""
        kind, namespace = obj["kind"], obj["metadata"].get("namespace")
        if kind == "Namespace":
            self._core.create_namespace(obj, _request_timeout=self._t)
        elif kind == "ConfigMap":
            self._core.create_namespaced_config_map(namespace, obj, _request_timeout=self._t)
        elif kind == "Pod":
            self._core.create_namespaced_pod(namespace, obj, _request_timeout=self._t)
        elif kind == "NetworkPolicy":
            self._networking.create_namespaced_network_policy(namespace, obj, _request_timeout=self._t)
        elif kind == "JobSet":
            self._custom.create_namespaced_custom_object(
                kube.JOBSET_GROUP, kube.JOBSET_VERSION, namespace, kube.JOBSET_PLURAL, obj, _request_timeout=self._t
            )
        else:
            raise ValueError(f"verify creates Namespaces, ConfigMaps, NetworkPolicies, Pods and JobSets, not {kind}")

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        """See `VerifyCluster.delete`."""
        try:
            if kind == "Namespace":
                self._core.delete_namespace(name, _request_timeout=self._t)
            elif kind == "ConfigMap":
                self._core.delete_namespaced_config_map(name, namespace, _request_timeout=self._t)
            elif kind == "Pod":
                self._core.delete_namespaced_pod(name, namespace, grace_period_seconds=0, _request_timeout=self._t)
            elif kind == "NetworkPolicy":
                self._networking.delete_namespaced_network_policy(name, namespace, _request_timeout=self._t)
            elif kind == "JobSet":  # foreground: its Jobs, pods, Workload and ProvisioningRequest go first
                self._custom.delete_namespaced_custom_object(
                    kube.JOBSET_GROUP,
                    kube.JOBSET_VERSION,
                    namespace,
                    kube.JOBSET_PLURAL,
                    name,
                    propagation_policy="Foreground",
                    _request_timeout=self._t,
                )
            else:
                raise ValueError(
                    f"verify deletes Namespaces, ConfigMaps, NetworkPolicies, Pods and JobSets, not {kind}"
                )
        except Exception as exc:
            if getattr(exc, "status", None) != 404:
                raise
