"""Every Kubernetes API call the CLI makes (`train`, `queue`, `compare`), through the official `kubernetes` client.

Why one module: loading the kubeconfig `gpuplane kubeconfig` writes (its `exec` plugin is `gpuplane token`),
telling "not found" from a failure, creating objects and waiting for them are the same plumbing for every
command that talks to a cluster. The commands' own logic (idempotence and the run ledger of `train`, the
load-test plan of `compare`) is tested against in-memory fakes of the APIs here; only this module talks
to a cluster, and it imports the client only when a command really does.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from gpuplane.infra.kubeaccess import ClusterError, KubeconfigError, KubeError, Source, connect

__all__ = ["ClusterError", "KubeError", "KubeconfigError", "Source"]

JOBSET_GROUP = "jobset.x-k8s.io"
JOBSET_VERSION = "v1alpha2"
JOBSET_PLURAL = "jobsets"
LEDGER = "gpuplane-runs"
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta2"
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
VISIBILITY_VERSION = "v1beta2"
# How long a pod may stay unschedulable before a run gives up, when the cluster-autoscaler has not said
# whether it will add a node (a scale-up from zero takes a few minutes; EKS GPU nodes up to ten).
UNSCHEDULABLE_LIMIT_S = 600
# cluster-autoscaler's events on a pending pod (processors/status/eventing_scale_up_processor.go,
# kubernetes/autoscaler at 16c271a): `NotTriggerScaleUp` ("pod didn't trigger scale-up: <reasons>") when no
# node group could take the pod, `TriggeredScaleUp` when a node is on its way. Reported by the component
# `cluster-autoscaler`.
NOT_TRIGGER_SCALE_UP = "NotTriggerScaleUp"
TRIGGERED_SCALE_UP = "TriggeredScaleUp"
AUTOSCALER_COMPONENT = "cluster-autoscaler"


def api_client(source: Source, timeout: tuple[float, float] | None = None) -> Any:
    """A checked API client for `source` (infra/kubeaccess.py: trust, `/version`); KubeError otherwise."""
    return (connect(source, timeout) if timeout else connect(source)).api


def _missing(exc: Exception) -> bool:
    return getattr(exc, "status", None) == 404 and type(exc).__name__ == "ApiException"


# --- training runs (JobSets) and their ledger: `gpuplane train` -----------------------------------------


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

    def __init__(self, source: Source) -> None:
        from kubernetes import client  # noqa: PLC0415

        self.connection = connect(source)
        api = self.connection.api
        self._custom = client.CustomObjectsApi(api)
        self._core = client.CoreV1Api(api)

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        """See `KubeApi.get_jobset`."""
        try:
            found: dict[str, Any] = self._custom.get_namespaced_custom_object(
                JOBSET_GROUP, JOBSET_VERSION, namespace, JOBSET_PLURAL, name
            )
        except Exception as exc:
            if _missing(exc):
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
            if _missing(exc):
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
            if not _missing(exc):
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


# --- one-shot Jobs that own their inputs: `gpuplane compare` --------------------------------------------


class JobObjects(Protocol):
    """What a one-shot run creates: a ConfigMap and a NetworkPolicy named like its Job, then the Job."""

    @property
    def namespace(self) -> str:
        """Where all of them live."""

    @property
    def configmap(self) -> dict[str, Any]:
        """The run's inputs."""

    @property
    def network_policy(self) -> dict[str, Any]:
        """What the run's pod may reach."""

    @property
    def job(self) -> dict[str, Any]:
        """The Job (its `activeDeadlineSeconds` bounds the run)."""


def _tar_of(files: Sequence[Path]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in files:
            tar.add(path, arcname=path.name)
    return buffer.getvalue()


def pod_log(core: Any, name: str, namespace: str, container: str) -> str:
    """The container's log as text, read raw and decoded here.

    Why not the client's own decoding: kubernetes 36.0.x returns the log as the repr of its bytes
    (`"b'...'"`, newlines escaped; kubernetes-client/python#2596, seen with 36.0.3, the pinned client), so a
    summary line in it would never be found. `_preload_content=False` hands back the HTTP response.
    """
    answer = core.read_namespaced_pod_log(name, namespace, container=container, _preload_content=False)
    return bytes(answer.data).decode("utf-8", errors="replace")


class JobRunner:
    """Runs a one-shot Job with its ConfigMap and NetworkPolicy, waits for it, and reads its log."""

    def __init__(self, source: Source) -> None:
        from kubernetes import client  # noqa: PLC0415

        self.connection = connect(source)
        api = self.connection.api
        self.core = client.CoreV1Api(api)
        self.batch = client.BatchV1Api(api)
        self.networking = client.NetworkingV1Api(api)

    def prepare(self, run: JobObjects) -> None:
        """Create the ConfigMap and the NetworkPolicy (before any pod of the run exists)."""
        self.core.create_namespaced_config_map(run.namespace, run.configmap)
        self.networking.create_namespaced_network_policy(run.namespace, run.network_policy)

    def clean_up(self, run: JobObjects) -> None:
        """Delete what `prepare` made, when the run stops before its Job exists to own them."""
        name = run.configmap["metadata"]["name"]
        self.core.delete_namespaced_config_map(name, run.namespace)
        self.networking.delete_namespaced_network_policy(name, run.namespace)

    def upload(self, pod: dict[str, Any], files: Sequence[Path], target: str, log: Callable[[str], None]) -> None:
        """Create the uploader pod, stream a tar of `files` into `target` over exec, delete the pod."""
        from kubernetes.stream import stream  # noqa: PLC0415

        namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.core.create_namespaced_pod(namespace, pod)
        try:
            deadline = time.monotonic() + 300
            while self.core.read_namespaced_pod(name, namespace).status.phase != "Running":
                if time.monotonic() > deadline:
                    raise RuntimeError(f"uploader pod {namespace}/{name} did not start within 300 s")
                time.sleep(2)
            log(f"uploading {len(files)} images to datasets:{target}")
            data = _tar_of(files)
            # The exec stream cannot signal end-of-input on every API server version, so `head -c` reads
            # exactly the tar's length and then lets tar see EOF and the command exit.
            script = f"mkdir -p '{target}' && head -c {len(data)} | tar -x -f - -C '{target}'"
            session = stream(
                self.core.connect_get_namespaced_pod_exec,
                name,
                namespace,
                command=["sh", "-c", script],
                stdin=True,
                stdout=True,
                stderr=True,
                tty=False,
                _preload_content=False,
                binary=True,
            )
            for offset in range(0, len(data), 1 << 20):
                session.write_stdin(data[offset : offset + (1 << 20)])
            errors = b""
            deadline = time.monotonic() + 300
            while session.is_open() and time.monotonic() < deadline:
                session.update(timeout=5)
                if session.peek_stderr():
                    errors += session.read_stderr()
            code = session.returncode
            session.close()
            if code != 0:
                text = errors.decode(errors="replace") if isinstance(errors, bytes) else str(errors)
                raise RuntimeError(f"upload into datasets:{target} failed (exit {code}): {text[-1000:]}")
        finally:
            self.core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)

    def run_job(self, run: JobObjects, progress: Callable[[str], None]) -> str:
        """Create the Job, hand it the ConfigMap and NetworkPolicy (its TTL deletes all three), wait, read the log.

        A pod that cannot be scheduled fails the run as soon as the cluster-autoscaler says no node group can
        take it (`NotTriggerScaleUp`, with its reasons), else after `UNSCHEDULABLE_LIMIT_S`.
        """
        namespace, name = run.namespace, run.job["metadata"]["name"]
        created = self.batch.create_namespaced_job(namespace, run.job)
        owner = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": name,
            "uid": created.metadata.uid,
            "blockOwnerDeletion": False,
        }
        owned = {"metadata": {"ownerReferences": [owner]}}
        self.core.patch_namespaced_config_map(name, namespace, owned)
        self.networking.patch_namespaced_network_policy(name, namespace, owned)
        started = time.monotonic()
        limit = run.job["spec"]["activeDeadlineSeconds"]
        while True:
            status = self.batch.read_namespaced_job_status(name, namespace).status
            pods = self.core.list_namespaced_pod(namespace, label_selector=f"job-name={name}").items
            pod, waiting = unschedulable(pods)
            elapsed = time.monotonic() - started
            if waiting:
                refusal = self.scale_up_refusal(namespace, pod)
                if refusal:
                    raise RuntimeError(
                        f"job {namespace}/{name} cannot be scheduled ({waiting}) and the cluster-autoscaler will "
                        f"not add a node: {refusal}"
                    )
                if elapsed > UNSCHEDULABLE_LIMIT_S:
                    raise RuntimeError(f"job {namespace}/{name} cannot be scheduled: {waiting}")
            phase = pods[0].status.phase if pods else "no pod yet"
            progress(
                f"job {name}: {phase}, {elapsed:.0f} s of at most {limit} s" + (f" ({waiting})" if waiting else "")
            )
            if status.succeeded or status.failed:
                break
            time.sleep(3)
        if not pods:
            raise RuntimeError(f"job {namespace}/{name} finished without a pod")
        return pod_log(self.core, pods[0].metadata.name, namespace, "client")

    def scale_up_refusal(self, namespace: str, pod: str) -> str:
        """The autoscaler's reason when its latest word on `pod` is that no node will come; else ''."""
        events = self.core.list_namespaced_event(
            namespace, field_selector=f"involvedObject.kind=Pod,involvedObject.name={pod}"
        ).items
        return latest_scale_up_refusal(events)


def unschedulable(pods: Sequence[Any]) -> tuple[str, str]:
    """(pod name, the scheduler's message) of the first pod that cannot be scheduled; ('', '') if none."""
    for pod in pods:
        for condition in pod.status.conditions or []:
            if condition.type == "PodScheduled" and condition.status == "False" and condition.reason == "Unschedulable":
                return str(pod.metadata.name), str(condition.message)
    return "", ""


def latest_scale_up_refusal(events: Sequence[Any]) -> str:
    """The message of the autoscaler's latest scale-up event on a pod when it is `NotTriggerScaleUp`, else ''.

    Only the autoscaler's own events count (another component reusing the reason is not its verdict), and
    only its latest: a `TriggeredScaleUp` after a refusal means a node is coming after all.
    """
    verdicts = [
        e
        for e in events
        if e.reason in (NOT_TRIGGER_SCALE_UP, TRIGGERED_SCALE_UP) and _reporter(e) in ("", AUTOSCALER_COMPONENT)
    ]
    if not verdicts:
        return ""
    latest = max(verdicts, key=_when)
    return str(latest.message) if latest.reason == NOT_TRIGGER_SCALE_UP else ""


def _reporter(event: Any) -> str:
    source = getattr(event, "source", None)
    return str(getattr(event, "reporting_component", None) or getattr(source, "component", None) or "")


def _when(event: Any) -> datetime:
    for attribute in ("last_timestamp", "event_time", "first_timestamp"):
        value = getattr(event, attribute, None)
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=UTC)
    created = getattr(getattr(event, "metadata", None), "creation_timestamp", None)
    if isinstance(created, datetime):
        return created if created.tzinfo else created.replace(tzinfo=UTC)
    return datetime.min.replace(tzinfo=UTC)
