"""The few Kubernetes API calls `gpuplane train` makes, through the official `kubernetes` client.

Why a thin layer: the command's logic (idempotence, the run ledger, reruns) is tested against an
in-memory fake of `KubeApi`; only this module talks to a cluster. The kubeconfig is the one
`gpuplane kubeconfig` writes (its `exec` plugin is `gpuplane token`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

JOBSET_GROUP = "jobset.x-k8s.io"
JOBSET_VERSION = "v1alpha2"
JOBSET_PLURAL = "jobsets"
LEDGER = "gpuplane-runs"
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta2"
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
VISIBILITY_VERSION = "v1beta2"


class KubeApi(Protocol):
    """What the train command needs from a cluster."""

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The JobSet, or None when it does not exist."""

    def create_jobset(self, namespace: str, body: dict[str, Any]) -> None:
        """Create it (fails if it exists)."""

    def delete_jobset(self, namespace: str, name: str) -> None:
        """Delete it (and, through owner references, its Jobs and pods)."""

    def read_ledger(self, namespace: str) -> dict[str, str]:
        """The run ledger's entries (run name -> JSON record); empty when there is none."""

    def write_ledger(self, namespace: str, entries: dict[str, str]) -> None:
        """Create or replace the run ledger."""

    def list_workloads(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        """Kueue Workloads in the namespace (one per queued JobSet), optionally by label."""

    def pending_workloads(self, namespace: str, local_queue: str) -> list[dict[str, Any]]:
        """The LocalQueue's pending Workloads with their positions (Kueue's visibility API)."""


class ClusterApi:
    """`KubeApi` on a real cluster."""

    def __init__(self, kubeconfig: Path | None = None) -> None:
        from kubernetes import client, config  # noqa: PLC0415 - only the command that talks to a cluster loads it

        config.load_kube_config(config_file=str(kubeconfig) if kubeconfig else None)
        self._client = client
        self._custom = client.CustomObjectsApi()
        self._core = client.CoreV1Api()

    def _missing(self, exc: Exception) -> bool:
        return isinstance(exc, self._client.ApiException) and exc.status == 404

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        """See `KubeApi.get_jobset`."""
        try:
            found: dict[str, Any] = self._custom.get_namespaced_custom_object(
                JOBSET_GROUP, JOBSET_VERSION, namespace, JOBSET_PLURAL, name
            )
        except Exception as exc:
            if self._missing(exc):
                return None
            raise
        return found

    def create_jobset(self, namespace: str, body: dict[str, Any]) -> None:
        """See `KubeApi.create_jobset`."""
        self._custom.create_namespaced_custom_object(JOBSET_GROUP, JOBSET_VERSION, namespace, JOBSET_PLURAL, body)

    def delete_jobset(self, namespace: str, name: str) -> None:
        """See `KubeApi.delete_jobset` (foreground: the Jobs and pods go first)."""
        self._custom.delete_namespaced_custom_object(
            JOBSET_GROUP, JOBSET_VERSION, namespace, JOBSET_PLURAL, name, propagation_policy="Foreground"
        )

    def read_ledger(self, namespace: str) -> dict[str, str]:
        """See `KubeApi.read_ledger`."""
        try:
            cm = self._core.read_namespaced_config_map(LEDGER, namespace)
        except Exception as exc:
            if self._missing(exc):
                return {}
            raise
        return dict(cm.data or {})

    def write_ledger(self, namespace: str, entries: dict[str, str]) -> None:
        """See `KubeApi.write_ledger` (replace, or create the first time)."""
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": LEDGER,
                "namespace": namespace,
                "labels": {"app.kubernetes.io/managed-by": "gpuplane"},
            },
            "data": entries,
        }
        try:
            self._core.replace_namespaced_config_map(LEDGER, namespace, body)
        except Exception as exc:
            if not self._missing(exc):
                raise
            self._core.create_namespaced_config_map(namespace, body)

    def list_workloads(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        """See `KubeApi.list_workloads`."""
        found = self._custom.list_namespaced_custom_object(
            KUEUE_GROUP, KUEUE_VERSION, namespace, "workloads", label_selector=label_selector
        )
        return list(found.get("items") or [])

    def pending_workloads(self, namespace: str, local_queue: str) -> list[dict[str, Any]]:
        """See `KubeApi.pending_workloads` (GET .../localqueues/<name>/pendingworkloads)."""
        # A subresource of an aggregated API: the generic custom-object calls would escape the '/'.
        summary = self._custom.api_client.call_api(
            f"/apis/{VISIBILITY_GROUP}/{VISIBILITY_VERSION}/namespaces/{{namespace}}/localqueues/{{name}}/pendingworkloads",
            "GET",
            {"namespace": namespace, "name": local_queue},
            header_params={"Accept": "application/json"},
            response_types_map={200: "object"},
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
        )
        return list((summary or {}).get("items") or [])


def jobset_state(obj: dict[str, Any]) -> str:
    """`Completed`, `Failed`, `Suspended` or `Running`, from the JobSet's status."""
    status = obj.get("status") or {}
    if status.get("terminalState"):
        return str(status["terminalState"])
    for condition in status.get("conditions") or []:
        if condition.get("status") == "True" and condition.get("type") in ("Completed", "Failed", "Suspended"):
            return str(condition["type"])
    return "Running"


def ledger_record(spec_hash: str, submitted_at: str) -> str:
    """One ledger entry: what was submitted and when."""
    return json.dumps({"specHash": spec_hash, "submittedAt": submitted_at}, sort_keys=True)
