"""Fake clusters and AWS for `gpuplane verify`: they answer as a healthy or a broken cluster would, as API JSON.

A probe pod's fate is scripted by the prefix of its name (`gv-gpu-`, `gv-runtime-`, `gv-storage-0-`...):
how many polls it stays Pending, whether the scheduler and the autoscaler refuse it, the node it lands on,
its final phase and each container's log. Everything created and deleted is recorded for the clean-up tests.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuplane.infra import config as stack_config
from gpuplane.infra.verify import aws as verify_aws
from gpuplane.infra.verify.amp import Amp
from gpuplane.infra.verify.cluster import ClusterUnreachable
from gpuplane.infra.verify.expect import Expectations, from_config
from gpuplane.manifests import verify as probes
from gpuplane.manifests import wellknown
from tests import shipped

ROOT = Path(__file__).resolve().parents[2]
T0 = "2026-11-26T10:00:00Z"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\S+ ")


def stack_expect(stack: str = "dev") -> Expectations:
    """The shipped stack's promises."""
    return from_config(stack_config.load(stack, shipped.STACKS))


def node(
    name: str,
    group: str,
    *,
    zone: str = "us-west-2a",
    ready: bool = True,
    labels: dict[str, str] | None = None,
    taints: tuple[tuple[str, str, str], ...] = (),
    allocatable: dict[str, str] | None = None,
    created: str = T0,
    ready_at: str = T0,
) -> dict[str, Any]:
    """A node as `kubectl get node -o json` shows it."""
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": created,
            "labels": {wellknown.LABEL_NODE_GROUP: group, probes.ZONE_LABEL: zone, **(labels or {})},
        },
        "spec": {"taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints]},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": ready_at,
                    "message": "kubelet is posting ready status" if ready else "container runtime network not ready",
                }
            ],
            "allocatable": {"cpu": "1930m", "memory": "7Gi", **(allocatable or {})},
        },
    }


def healthy_nodes(expect: Expectations, *, gpu_nodes: bool = False) -> list[dict[str, Any]]:
    """Two Ready nodes per CPU group (one per AZ), GPU groups at zero unless `gpu_nodes`."""
    made = []
    for group in expect.groups:
        if group.is_gpu and not gpu_nodes:
            continue
        for i, zone in enumerate(("us-west-2a", "us-west-2b")):
            extra = {group.gpu_resource: str(group.gpu_units)} if group.is_gpu else {}
            made.append(
                node(
                    f"{group.name}-{i}",
                    group.name,
                    zone=zone,
                    labels=group.labels,
                    taints=group.taints,
                    allocatable=extra,
                )
            )
    return made


def pod(name: str, namespace: str, node_name: str, *, ready: bool = True, phase: str = "Running") -> dict[str, Any]:
    """A system pod."""
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"nodeName": node_name},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


@dataclass
class Script:
    """How a probe pod behaves."""

    phase: str = "Succeeded"
    logs: dict[str, str] = field(default_factory=dict)
    node: str = "system-0"
    pending_polls: int = 0
    unschedulable: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    never_ends: bool = False
    waiting_reason: str = ""
    on_schedule: Any = None
    """Called with the fake when the pod is placed (e.g. to add the node that scaled up)."""
    container_exit: int = 0
    started_at: str = "2026-11-26T10:04:00Z"
    scheduled_at: str = "2026-11-26T10:03:00Z"


class FakePrometheus:
    """Prometheus's HTTP API as the service proxy returns it: instant queries over given series, the targets.

    `series`: metric name -> label sets that have a recent sample. It answers the few query shapes the samples
    check writes (`NAME`, `count(NAME)`, `count by (L) (NAME)`, `up{job=~"RE"}` with an optional `node`), so
    each test states what the store holds, not what each query should return. `arrive_after`: metric -> the
    number of looks before its series appear (samples arriving while the check polls).
    """

    def __init__(
        self,
        series: dict[str, list[dict[str, str]]] | None = None,
        targets: list[dict[str, Any]] | None = None,
        *,
        arrive_after: dict[str, int] | None = None,
    ) -> None:
        self.series = series or {}
        self.targets = targets or []
        self.arrive_after = arrive_after or {}
        self.looks: dict[str, int] = {}
        self.calls: list[tuple[str, str, int | str, str, dict[str, str]]] = []

    def answer(self, path: str, query: dict[str, str]) -> str:
        if path == "api/v1/targets":
            return json.dumps({"status": "success", "data": {"activeTargets": self.targets, "droppedTargets": []}})
        promql = query["query"]
        if match := re.fullmatch(r'up\{job=~"([^"]+)"(?:, node="([^"]+)")?\}', promql):
            job, node = re.compile(match.group(1)), match.group(2)
            up: list[dict[str, Any]] = [
                {"metric": labels, "value": [1.0, labels.get("up", "1")]}
                for labels in self.series.get("up", [])
                if job.fullmatch(labels.get("job", "")) and (node is None or labels.get("node") == node)
            ]
            return json.dumps({"status": "success", "data": {"resultType": "vector", "result": up}})
        match = re.fullmatch(r"(?:count(?: by \((\w*)\) )?\()?([:\w]+)\)?", promql)
        assert match, promql
        by, name = match.group(1), match.group(2)
        self.looks[name] = self.looks.get(name, 0) + 1
        found = self.series.get(name, []) if self.looks[name] > self.arrive_after.get(name, 0) else []
        result: list[dict[str, Any]]
        if not promql.startswith("count"):
            result = [{"metric": {**s, "__name__": name}, "value": [1.0, "0"]} for s in found]
        elif by:
            groups: dict[str, int] = {}
            for s in found:
                groups[s.get(by, "")] = groups.get(s.get(by, ""), 0) + 1
            result = [{"metric": {by: k}, "value": [1.0, str(v)]} for k, v in groups.items()]
        else:
            result = [{"metric": {}, "value": [1.0, str(len(found))]}] if found else []
        return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})


class ProxyError(Exception):
    """What the real client raises for an error status (`ApiException`: `status`, `body`)."""

    def __init__(self, status: int, body: str = "") -> None:
        super().__init__(f"({status}) Reason: proxy error")
        self.status = status
        self.body = body


class FakeCluster:
    """`VerifyCluster` answering from in-memory state."""

    def __init__(self, nodes: list[dict[str, Any]], pods: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.version = "1.36"
        self.unreachable: str | None = None
        self.nodes = nodes
        self.system_pods = pods or {}
        self.scripts: dict[str, Script] = {}
        self.created: list[dict[str, Any]] = []
        self.deleted: list[tuple[str, str | None, str]] = []
        self.live: dict[tuple[str, str], dict[str, Any]] = {}
        self.polls: dict[str, int] = {}
        self.fail_delete: set[str] = set()
        self.jobsets: dict[tuple[str, str], dict[str, Any]] = {}
        self.jobset_states: list[str] = []
        """What each poll of the training run shows: a state of `queue.workload_state`, or `none`/`gone`."""
        self.jobset_polls = 0
        self.run_pods: list[dict[str, Any]] = []
        """The training run's pods, listed by label (`jobset.sigs.k8s.io/...=...`) once the run is admitted."""
        self.log_reads: list[tuple[str, str, bool]] = []
        self.prometheus: FakePrometheus | None = None
        """What the service proxy reaches (None: the Service has no endpoint, HTTP 503)."""
        self.proxy_error: ProxyError | None = None
        self.lock = threading.Lock()

    # --- the protocol ---
    def server_version(self) -> str:
        if self.unreachable:
            raise ClusterUnreachable(self.unreachable)
        return self.version

    def list_nodes(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.nodes)

    def list_pods(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        wanted = dict(term.split("=", 1) for term in label_selector.split(",") if "=" in term)
        labelled = [
            p
            for p in self.run_pods
            if p["metadata"]["namespace"] == namespace
            and all((p["metadata"].get("labels") or {}).get(k) == v for k, v in wanted.items())
        ]
        return copy.deepcopy(self.system_pods.get(namespace, []) + labelled)

    def _script(self, name: str) -> Script:
        if name in self.scripts:  # a script for exactly this pod wins over a prefix
            return self.scripts[name]
        for prefix, script in self.scripts.items():
            if name.startswith(prefix):
                return script
        return Script()

    def read_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        for run_pod in self.run_pods:
            if (run_pod["metadata"]["namespace"], run_pod["metadata"]["name"]) == (namespace, name):
                return copy.deepcopy(run_pod)
        with self.lock:
            body = self.live.get((namespace, name))
            if body is None:
                return None
            script = self._script(name)
            self.polls[name] = self.polls.get(name, 0) + 1
            current = copy.deepcopy(body)
            current["metadata"]["creationTimestamp"] = "2026-11-26T10:00:00Z"
            status: dict[str, Any] = {"phase": "Pending", "conditions": []}
            if script.never_ends or self.polls[name] <= script.pending_polls:
                if script.unschedulable:
                    status["conditions"].append(
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "reason": "Unschedulable",
                            "message": script.unschedulable,
                        }
                    )
                if script.waiting_reason:
                    status["containerStatuses"] = [
                        {"name": "probe", "state": {"waiting": {"reason": script.waiting_reason, "message": "x"}}}
                    ]
                current["status"] = status
                return current
            if script.on_schedule is not None:
                script.on_schedule(self)
                script.on_schedule = None
            current["spec"]["nodeName"] = script.node
            status["phase"] = script.phase
            status["conditions"].append(
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": script.scheduled_at}
            )
            terminated = {"exitCode": script.container_exit, "startedAt": script.started_at, "reason": "Completed"}
            if script.phase == "Failed":
                terminated["reason"] = "Error"
            status["containerStatuses"] = [{"name": "probe", "state": {"terminated": terminated}}]
            current["status"] = status
            return current

    def pod_log(self, namespace: str, name: str, container: str, *, timestamps: bool = False) -> str:
        """The scripted log; a scripted line may start with its timestamp, which only `timestamps` keeps."""
        self.log_reads.append((name, container, timestamps))
        text = self._script(name).logs.get(container, "")
        if timestamps:
            return text
        return "\n".join(STAMP.sub("", line) for line in text.splitlines())

    def pod_events(self, namespace: str, name: str) -> list[dict[str, Any]]:
        return copy.deepcopy(self._script(name).events)

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            if self.jobset_states and (namespace, name) in self.jobsets:
                self.jobset_polls += 1
            jobset = self.jobsets.get((namespace, name))
            if jobset is None or not self.jobset_states:
                return copy.deepcopy(jobset)
            step = self.jobset_states[min(self.jobset_polls - 1, len(self.jobset_states) - 1)]
            if step == "gone":
                self.jobsets.pop((namespace, name))
                return None
            current = copy.deepcopy(jobset)
            current["metadata"]["uid"] = "uid-1"
            current["metadata"]["creationTimestamp"] = T0
            if step in ("Completed", "Failed"):
                current["status"] = {"terminalState": step}
            return current

    def list_workloads(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        assert label_selector == "kueue.x-k8s.io/job-uid=uid-1"
        step = self.jobset_states[min(self.jobset_polls - 1, len(self.jobset_states) - 1)]
        if step.startswith("Deactivated"):
            # As Kueue 0.19 leaves it past waitForPodsReady's requeue limit (requeueState cleared on deactivation),
            # or ("DeactivatedAdmissionCheck") once the ProvisioningRequest check failed its last retry.
            cause = step.removeprefix("Deactivated") or "RequeuingLimitExceeded"
            evicted = {"type": "Evicted", "status": "True", "reason": f"DeactivatedDueTo{cause}"}
            return [{"metadata": {"name": "w"}, "spec": {"active": False}, "status": {"conditions": [evicted]}}]
        conditions = {
            "Queued": [],
            "Provisioning": [("QuotaReserved", "True")],
            "Admitted": [("QuotaReserved", "True"), ("Admitted", "True")],
            "Running": [("QuotaReserved", "True"), ("Admitted", "True"), ("PodsReady", "True")],
            "Completed": [("Admitted", "True")],
            "Failed": [("Admitted", "True")],
        }.get(step)
        if conditions is None:  # "none": Kueue has not made the Workload yet
            return []
        status: dict[str, Any] = {"conditions": [{"type": t, "status": s} for t, s in conditions]}
        if step == "Provisioning":
            status["admissionChecks"] = [{"name": "gpu-provisioning", "state": "Pending", "message": "waiting"}]
        return [{"metadata": {"name": "w"}, "spec": {"active": True}, "status": status}]

    def service_proxy_get(
        self, namespace: str, service: str, port: int | str, path: str, query: dict[str, str] | None = None
    ) -> str:
        if self.proxy_error is not None:
            raise self.proxy_error
        if self.prometheus is None:
            raise ProxyError(503, "no endpoints available for service")
        self.prometheus.calls.append((namespace, service, port, path, dict(query or {})))
        return self.prometheus.answer(path, dict(query or {}))

    def create(self, obj: dict[str, Any]) -> None:
        with self.lock:
            if obj["kind"] == "JobSet":
                self.jobsets[(obj["metadata"]["namespace"], obj["metadata"]["name"])] = copy.deepcopy(obj)
            self.created.append(obj)
            if obj["kind"] == "Pod":
                self.live[(obj["metadata"]["namespace"], obj["metadata"]["name"])] = copy.deepcopy(obj)

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        if name in self.fail_delete:
            raise RuntimeError("Forbidden: deletecollection denied")
        with self.lock:
            self.deleted.append((kind, namespace, name))
            self.live.pop((namespace or "", name), None)
            self.jobsets.pop((namespace or "", name), None)


class FakeAws:
    """`VerifyAws` answering from given values (an exception to raise, or the answers)."""

    def __init__(
        self,
        addons: dict[str, dict[str, Any]] | None = None,
        leftovers: list[verify_aws.Leftover] | None = None,
        error: Exception | None = None,
        amp: Amp | None = None,
    ) -> None:
        self._addons = addons or {}
        self._leftovers = leftovers or []
        self._error = error
        self._amp = amp

    def amp(self) -> Amp:
        if self._error:
            raise self._error
        assert self._amp is not None, "this test gave FakeAws no Amp"
        return self._amp

    def addons(self, cluster: str) -> dict[str, dict[str, Any]]:
        if self._error:
            raise self._error
        return copy.deepcopy(self._addons)

    def teardown_leftovers(self) -> list[verify_aws.Leftover]:
        if self._error:
            raise self._error
        return list(self._leftovers)


def active_addons(expect: Expectations) -> dict[str, dict[str, Any]]:
    """Every expected add-on ACTIVE."""
    return {n: {"addonName": n, "addonVersion": "v1.0.0-eksbuild.1", "status": "ACTIVE"} for n in expect.addons}


def report_lines(**values: str) -> str:
    """A probe's log: `GPUPLANE-VERIFY key=value` lines (keys use `__` for `.`)."""
    return "\n".join(f"{probes.MARKER} {k.replace('__', '.')}={v}" for k, v in values.items())
