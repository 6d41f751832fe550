"""`gpuplane train` against an in-memory fake of the cluster API: idempotence, ledger, rerun, changed spec."""

from __future__ import annotations

import copy
import json
import shlex
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.infra import config, kube, queue, train
from gpuplane.infra.cli import app
from gpuplane.manifests import queue as queue_manifests

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


class FakeApi:
    """The `KubeApi` calls, on dicts; a JobSet can be 'finished' and 'cleaned by TTL' by the test.

    Deleting an object deletes what names it as owner (by uid), as the API server's garbage collector does;
    Workloads and ProvisioningRequests are stored as Kueue makes them (owner references included).
    """

    def __init__(self) -> None:
        self.jobsets: dict[tuple[str, str], dict[str, Any]] = {}
        self.ledgers: dict[str, dict[str, str]] = {}
        self.created: list[str] = []
        self.deleted: list[str] = []
        self.others: dict[tuple[str, str, str], dict[str, Any]] = {}  # (kind, namespace, name)
        self.pending: list[dict[str, Any]] = []
        self._uids = 0

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        return copy.deepcopy(self.jobsets.get((namespace, name)))

    def create_jobset(self, namespace: str, body: dict[str, Any]) -> None:
        key = (namespace, body["metadata"]["name"])
        assert key not in self.jobsets, "AlreadyExists"
        self._uids += 1
        stored = copy.deepcopy(body)
        stored["metadata"]["uid"] = f"uid-{self._uids}"
        self.jobsets[key] = stored
        self.created.append(key[1])

    def delete_jobset(self, namespace: str, name: str) -> None:
        gone = self.jobsets.pop((namespace, name))
        self.deleted.append(name)
        self._collect(gone["metadata"]["uid"])

    def _collect(self, uid: str) -> None:
        for key, obj in list(self.others.items()):
            if any(o["uid"] == uid for o in obj["metadata"].get("ownerReferences", [])) and key in self.others:
                del self.others[key]
                self._collect(obj["metadata"]["uid"])

    def list_workloads(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        wanted = dict(part.split("=", 1) for part in label_selector.split(",") if part)
        return [
            copy.deepcopy(o)
            for (kind, ns, _), o in self.others.items()
            if kind == "Workload" and ns == namespace and wanted.items() <= o["metadata"].get("labels", {}).items()
        ]

    def pending_workloads(self, namespace: str, local_queue: str) -> list[dict[str, Any]]:
        return copy.deepcopy(self.pending)

    def read_ledger(self, namespace: str) -> dict[str, str]:
        return dict(self.ledgers.get(namespace, {}))

    def write_ledger(self, namespace: str, entries: dict[str, str]) -> None:
        self.ledgers[namespace] = dict(entries)


@pytest.fixture(scope="module")
def dev() -> config.StackConfig:
    return config.load("dev")


def test_submits_once_and_records_the_run(dev):
    api = FakeApi()
    obj = train.build(dev, "mnist")
    first = train.submit(api, obj, now=NOW)
    assert first.action == "submitted" and api.created == [obj["metadata"]["name"]]
    record = json.loads(api.ledgers["ml"][obj["metadata"]["name"]])
    assert record == {
        "specHash": obj["metadata"]["annotations"]["gpuplane.io/spec-hash"],
        "submittedAt": "2026-11-23T12:00:00Z",
    }
    again = train.submit(api, train.build(dev, "mnist"), now=NOW)
    assert again.action == "exists" and again.state.startswith("Submitted")  # Kueue has not made its Workload
    assert len(api.created) == 1


def test_a_run_cleaned_by_its_ttl_is_not_run_again(dev):
    api = FakeApi()
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    api.jobsets.clear()  # the JobSet finished and its TTL deleted it
    outcome = train.submit(api, obj, now=NOW)
    assert outcome.action == "already-ran"
    assert len(api.created) == 1


def test_rerun_replaces_an_existing_run(dev):
    api = FakeApi()
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    name = obj["metadata"]["name"]
    api.jobsets[("ml", name)]["status"] = {"terminalState": "Failed"}
    assert train.submit(api, obj, now=NOW).state == "Failed"
    assert first_state(api, obj) == "Failed"
    outcome = train.submit(api, obj, rerun=True, now=NOW)
    assert outcome.action == "submitted"
    assert api.deleted == [name] and api.created == [name, name]


def test_a_changed_spec_or_run_id_is_a_new_run(dev):
    api = FakeApi()
    train.submit(api, train.build(dev, "mnist"), now=NOW)
    changed = dev.platform.model_copy(deep=True)
    changed.training[0].command.append("--epochs=5")
    other = train.build(config.StackConfig(**{**dev.__dict__, "platform": changed}), "mnist")
    assert train.submit(api, other, now=NOW).action == "submitted"
    assert train.submit(api, train.build(dev, "mnist", run_id="exp-2"), now=NOW).action == "submitted"
    assert len(api.created) == 3 and "mnist-exp-2" in api.created
    assert len(api.ledgers["ml"]) == 3


@pytest.mark.parametrize(
    ("status", "state"),
    [
        ({}, "Running"),
        ({"terminalState": "Completed"}, "Completed"),
        ({"conditions": [{"type": "Failed", "status": "True"}]}, "Failed"),
        ({"conditions": [{"type": "Completed", "status": "False"}]}, "Running"),
    ],
)
def test_jobset_state(status, state):
    assert kube.jobset_state({"status": status}) == state


def test_plan_prints_the_manifest_without_a_cluster(tmp_path):
    result = CliRunner().invoke(app, ["train", "dev", "mnist", "--plan", "--kubeconfig", str(tmp_path / "none")])
    assert result.exit_code == 0, result.output
    doc = next(yaml.safe_load_all(result.output))
    assert doc["kind"] == "JobSet" and doc["metadata"]["name"].startswith("mnist-")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["train", "dev", "nope", "--plan"],
            "no training workload 'nope' in stack 'dev'; gpuplane:training has: mnist",
        ),
        (["train", "dev", "mnist", "--plan", "--run-id", "Bad_ID"], "must be 1-63 lowercase letters"),
    ],
)
def test_bad_input_exits_2(args, message):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def first_state(api: FakeApi, obj: dict[str, Any]) -> str:
    stored = api.get_jobset("ml", obj["metadata"]["name"])
    assert stored is not None
    return queue.run_state(api, stored).state


def condition(kind: str, status: str, reason: str = "", message: str = "") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message}


def workload_of(api: FakeApi, obj: dict[str, Any]) -> dict[str, Any]:
    """The Workload Kueue makes for the JobSet: owned by it, labelled with its uid (jobframework/reconciler.go)."""
    stored = api.jobsets[("ml", obj["metadata"]["name"])]
    name = f"jobset-{stored['metadata']['name']}-1a2b3"
    workload = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"wl-{stored['metadata']['uid']}",
            "labels": {"kueue.x-k8s.io/job-uid": stored["metadata"]["uid"]},
            "ownerReferences": [
                {
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "kind": "JobSet",
                    "name": stored["metadata"]["name"],
                    "uid": stored["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "queueName": "training",
            "podSets": [
                {
                    "name": "worker",
                    "count": 2,
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "tensorflow", "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "1"}}}
                            ]
                        }
                    },
                },
                {
                    "name": "chief",
                    "count": 1,
                    "template": {
                        "spec": {"containers": [{"name": "tensorflow", "resources": {"limits": {"cpu": "1"}}}]}
                    },
                },
            ],
        },
        "status": {},
    }
    api.others[("Workload", "ml", name)] = workload
    return workload


# Workload status sequences as Kueue v0.19 writes them (apis/kueue/v1beta2/workload_types.go conditions and
# reasons): queued behind others, quota reserved while the ProvisioningRequest is pending, admitted, pods
# ready, then either finished, or a partial fill evicted by waitForPodsReady and requeued, or deactivated.
HAPPY = [
    (
        {"conditions": [condition("QuotaReserved", "False", "Pending", "couldn't assign flavors: insufficient quota")]},
        [0],
        "Queued (position 1 in its queue; couldn't assign flavors: insufficient quota)",
    ),
    (
        {
            "conditions": [
                condition("QuotaReserved", "True", "QuotaReserved"),
                condition("Admitted", "False", "UnsatisfiedAdmissionChecks"),
            ],
            "admissionChecks": [
                {"name": "gpu-provisioning", "state": "Pending", "message": "Provisioning Request wasn't provisioned"}
            ],
        },
        None,
        "Provisioning (gpu-provisioning: Pending Provisioning Request wasn't provisioned)",
    ),
    (
        {
            "conditions": [
                condition("QuotaReserved", "True"),
                condition("Admitted", "True"),
                condition("PodsReady", "False", "WaitForStart"),
            ]
        },
        None,
        "Admitted (waiting for all pods to be ready)",
    ),
    (
        {
            "conditions": [
                condition("QuotaReserved", "True"),
                condition("Admitted", "True"),
                condition("PodsReady", "True"),
            ]
        },
        None,
        "Running",
    ),
    (
        {
            "conditions": [
                condition("QuotaReserved", "False"),
                condition("Admitted", "False"),
                condition("Finished", "True", "Succeeded", "jobset completed successfully"),
            ]
        },
        None,
        "Completed (jobset completed successfully)",
    ),
]
PARTIAL_FILL = [
    (
        {
            "conditions": [
                condition("QuotaReserved", "True"),
                condition("Admitted", "True"),
                condition("PodsReady", "False", "WaitForStart"),
            ]
        },
        None,
        "Admitted (waiting for all pods to be ready)",
    ),
    (
        {
            "conditions": [
                condition("QuotaReserved", "False", "Pending"),
                condition("Admitted", "False"),
                condition("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout"),
                condition("Requeued", "False", "PodsReadyTimeout"),
            ],
            "requeueState": {"count": 1, "requeueAt": "2026-11-23T12:31:00Z"},
        },
        None,
        "Requeued (evicted (PodsReadyTimeout), requeued 1 time(s), back in the queue at 2026-11-23T12:31:00Z)",
    ),
    (
        {
            "conditions": [
                condition("QuotaReserved", "False", "Pending", "waiting for quota"),
                condition("Evicted", "True", "PodsReadyTimeout"),
                condition("Requeued", "True", "BackoffFinished"),
            ],
            "requeueState": {"count": 1},
        },
        [0],
        "Queued (position 1 in its queue; waiting for quota; requeued 1 time(s))",
    ),
    (
        {
            # As Kueue 0.19 leaves a run past waitForPodsReady's requeue limit: spec.active false, the Evicted
            # reason with its cause, requeueState cleared.
            "conditions": [
                condition("QuotaReserved", "False", "Pending"),
                condition(
                    "Evicted",
                    "True",
                    "DeactivatedDueToRequeuingLimitExceeded",
                    "The workload is deactivated due to exceeding the PodsReady timeout 3 times in a row",
                ),
                condition("Requeued", "False", "DeactivatedDueToRequeuingLimitExceeded"),
            ],
            "active": False,
        },
        None,
        "Deactivated (its pods were not all ready in time, queue.requeueLimit times (The workload is deactivated "
        "due to exceeding the PodsReady timeout 3 times in a row); reactivate it: kubectl -n ml patch "
        'workloads.kueue.x-k8s.io WORKLOAD --type=merge -p \'{"spec":{"active":true}}\'; or `gpuplane train '
        "--rerun` submits it anew)",
    ),
]


def play(api: FakeApi, obj: dict[str, Any], sequence: list[Any]) -> list[str]:
    """Feed the recorded statuses to `train.wait`, one per poll; what it reported, and its final state."""
    workload = workload_of(api, obj)
    steps = iter(sequence)
    reported: list[str] = []

    def advance(_: float = 0) -> None:
        status, position, _expected = next(steps)
        workload["spec"]["active"] = status.pop("active", True)
        workload["status"] = status
        api.pending = (
            []
            if position is None
            else [
                {
                    "metadata": {"name": workload["metadata"]["name"]},
                    "positionInLocalQueue": position[0],
                    "positionInClusterQueue": position[0],
                    "localQueueName": "training",
                }
            ]
        )

    advance()
    final = train.wait(api, "ml", obj["metadata"]["name"], report=reported.append, sleep=advance)
    return [*reported, final]


@pytest.mark.parametrize("sequence", [HAPPY, PARTIAL_FILL], ids=["admitted-and-finished", "partial-fill"])
def test_wait_follows_the_workload_through_the_queue(dev, sequence):
    api = FakeApi()
    obj = train.build(dev, "mnist")
    assert train.submit(api, obj, now=NOW).state == "Queued"  # not "Running": Kueue decides when it starts
    workload = f"jobset-{obj['metadata']['name']}-1a2b3"  # workload_of's name
    expected = [step[2].replace("WORKLOAD", workload) for step in copy.deepcopy(sequence)]
    final = expected[-1].split(" ")[0]
    assert play(api, obj, copy.deepcopy(sequence)) == [*expected, final]


def test_queue_shows_a_run_deactivated_by_failed_provisioning_and_the_command_that_reactivates_it(dev):
    """Kueue 0.19: past `backoffLimitCount` failed ProvisioningRequests the check is Rejected, the Workload gets a
    DeactivationTarget, then `spec.active: false` and Evicted `DeactivatedDueToAdmissionCheck` (provisioning/
    controller.go, core/workload_controller.go at v0.19.2). `gpuplane queue` names the cause and the fix."""
    api = FakeApi()
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    workload = workload_of(api, obj)
    name = workload["metadata"]["name"]
    rejected = 'AdmissionCheck in Rejected state: "gpu-provisioning" (Provisioning Request failed: out of capacity)'
    # First reconcile: still active, the target condition set.
    workload["status"] = {"conditions": [condition("DeactivationTarget", "True", "AdmissionCheck", rejected)]}
    workload["spec"]["active"] = False
    (row,) = queue.queue_rows(api, "ml", "training")
    fix = f'kubectl -n ml patch workloads.kueue.x-k8s.io {name} --type=merge -p \'{{"spec":{{"active":true}}}}\''
    assert row == {
        "run": obj["metadata"]["name"],
        "state": "Deactivated",
        "detail": f"its GPU nodes could not be provisioned: the ProvisioningRequest failed 6 times ({rejected}); "
        f"reactivate it: {fix}; or `gpuplane train --rerun` submits it anew",
        "gpus": queue.gpu_requests(workload),
    }
    # Then: evicted with the cause in the reason, the message Kueue writes.
    said = f"The workload is deactivated due to {rejected}"
    workload["status"] = {
        "conditions": [
            condition("QuotaReserved", "False", "Pending"),
            condition("Evicted", "True", "DeactivatedDueToAdmissionCheck", said),
            condition("Requeued", "False", "DeactivatedDueToAdmissionCheck"),
        ]
    }
    (row,) = queue.queue_rows(api, "ml", "training")
    assert row["state"] == "Deactivated" and row["detail"].startswith(
        f"its GPU nodes could not be provisioned: the ProvisioningRequest failed 6 times ({said}); reactivate it: "
    )
    # The command is one the API server takes: a merge patch that sets spec.active. Applied, the run is back
    # in the queue (Kueue: Requeued True, Reactivated).
    argv = shlex.split(fix)
    assert argv[:5] == ["kubectl", "-n", "ml", "patch", "workloads.kueue.x-k8s.io"] and argv[5] == name
    assert argv[6:8] == ["--type=merge", "-p"]
    workload["spec"] |= json.loads(argv[8])["spec"]
    workload["status"]["conditions"][2] = condition("Requeued", "True", "Reactivated")
    api.pending = [{"metadata": {"name": name}, "positionInLocalQueue": 0}]
    (row,) = queue.queue_rows(api, "ml", "training")
    assert (row["state"], row["detail"]) == ("Queued", "position 1 in its queue; requeued 1 time(s)")


def test_a_run_deactivated_by_hand_says_so(dev):
    workload = {"metadata": {"name": "w", "namespace": "ml"}, "spec": {"active": False}, "status": {}}
    assert queue.workload_state(workload).detail.startswith("spec.active was set to false; reactivate it: ")


def test_the_provisioning_retries_are_the_stated_ones():
    """6 requests in all (1 + backoffLimitCount), backoff 60, 120, 240, 480, 960 s as Kueue computes it."""
    assert (queue_manifests.PROVISIONING_RETRY_LIMIT, queue_manifests.PROVISIONING_BACKOFF_BASE_SECONDS) == (5, 60)
    waits = [
        min(
            queue_manifests.PROVISIONING_BACKOFF_BASE_SECONDS * 2 ** (n - 1),
            queue_manifests.PROVISIONING_BACKOFF_MAX_SECONDS,
        )
        for n in range(1, queue_manifests.PROVISIONING_RETRY_LIMIT + 1)
    ]
    assert waits == [60, 120, 240, 480, 960] and sum(waits) == 1860


def test_an_existing_run_reports_its_queue_position(dev):
    api = FakeApi()
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    workload = workload_of(api, obj)
    workload["status"] = {"conditions": [condition("QuotaReserved", "False", "Pending", "waiting for quota")]}
    api.pending = [
        {"metadata": {"name": "jobset-other-9z9z9"}, "positionInLocalQueue": 0},
        {"metadata": {"name": workload["metadata"]["name"]}, "positionInLocalQueue": 1},
    ]
    again = train.submit(api, obj, now=NOW)
    assert again.action == "exists" and again.state == "Queued (position 2 in its queue; waiting for quota)"


def test_deleting_a_run_deletes_its_workload_and_provisioning_request(dev):
    """Kueue owns the Workload by the JobSet and the ProvisioningRequest by the Workload (controller references,
    kueue pkg/controller/jobframework/reconciler.go and admissionchecks/provisioning/controller.go): `--rerun`'s
    delete takes them with it, and the new run gets a new Workload."""
    api = FakeApi()
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    workload = workload_of(api, obj)
    meta = workload["metadata"]
    api.others[("ProvisioningRequest", "ml", f"{meta['name']}-gpu-provisioning-1")] = {
        "metadata": {
            "name": f"{meta['name']}-gpu-provisioning-1",
            "uid": "pr-1",
            "ownerReferences": [{"kind": "Workload", "name": meta["name"], "uid": meta["uid"], "controller": True}],
        }
    }
    train.submit(api, obj, rerun=True, now=NOW)
    assert api.others == {}
    assert first_state(api, obj) == "Submitted"


def test_cluster_api_deletes_runs_with_propagation(monkeypatch):
    """The real client's delete cascades (Foreground), so the garbage collector removes Workload and request."""
    calls: list[dict[str, Any]] = []

    class Custom:
        def delete_namespaced_custom_object(self, *args: Any, **kwargs: Any) -> None:
            calls.append(kwargs)

    api = kube.ClusterApi.__new__(kube.ClusterApi)
    api._custom = Custom()
    api.delete_jobset("ml", "mnist-1")
    assert calls == [{"propagation_policy": "Foreground"}]


def test_queue_rows_list_runs_with_their_gpus(dev):
    api = FakeApi()
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    workload = workload_of(api, obj)
    workload["status"] = {"conditions": [condition("QuotaReserved", "False", "Pending", "waiting for quota")]}
    api.pending = [{"metadata": {"name": workload["metadata"]["name"]}, "positionInLocalQueue": 0}]
    rows = queue.queue_rows(api, "ml", "training")
    assert rows == [
        {
            "run": obj["metadata"]["name"],
            "state": "Queued",
            "detail": "position 1 in its queue; waiting for quota",
            "gpus": 2,
        }
    ]


def test_flavor_usage_sums_admitted_gpus_per_flavor_in_queue_order():
    def admitted(*assignments: tuple[str, str, str], finished: bool = False) -> dict[str, Any]:
        conditions = [condition("Finished", "True", "Succeeded", "done")] if finished else []
        return {
            "status": {
                "conditions": conditions,
                "admission": {
                    "clusterQueue": "ml-training",
                    "podSetAssignments": [
                        {
                            "name": name,
                            "flavors": {"nvidia.com/gpu": flavor, "cpu": flavor},
                            "resourceUsage": {"nvidia.com/gpu": gpus, "cpu": "8"},
                        }
                        for name, flavor, gpus in assignments
                    ],
                },
            }
        }

    workloads = [
        admitted(("worker", "group-p5-block", "16")),
        admitted(("chief", "group-g6-spot", "1"), ("worker", "group-g6-spot", "2")),
        admitted(("worker", "group-p5-block", "8"), finished=True),
        {"status": {"conditions": []}},  # pending: no admission
    ]
    flavors = [("group-p5-block", "reserved", 16), ("group-p4d", "on-demand", 32), ("group-g6-spot", "spot", 4)]
    assert queue.flavor_usage(workloads, flavors) == [
        queue.FlavorUsage("group-p5-block", "reserved", 16, 16),
        queue.FlavorUsage("group-p4d", "on-demand", 0, 32),
        queue.FlavorUsage("group-g6-spot", "spot", 3, 4),
    ]


class SlowDelete(FakeApi):
    """A foreground delete: the JobSet stays (Terminating) for a few polls while its Workload's finalizer clears."""

    def __init__(self, polls: int) -> None:
        super().__init__()
        self.polls = polls
        self.terminating: dict[tuple[str, str], dict[str, Any]] = {}

    def delete_jobset(self, namespace: str, name: str) -> None:
        self.terminating[(namespace, name)] = self.jobsets[(namespace, name)]
        super().delete_jobset(namespace, name)

    def get_jobset(self, namespace: str, name: str) -> dict[str, Any] | None:
        if (namespace, name) in self.terminating:
            if self.polls > 0:
                self.polls -= 1
                return copy.deepcopy(self.terminating[(namespace, name)])
            del self.terminating[(namespace, name)]
        return super().get_jobset(namespace, name)

    def create_jobset(self, namespace: str, body: dict[str, Any]) -> None:
        assert (namespace, body["metadata"]["name"]) not in self.terminating, "AlreadyExists (still terminating)"
        super().create_jobset(namespace, body)


def test_rerun_waits_for_the_old_run_to_be_gone(dev):
    api = SlowDelete(polls=0)
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    api.polls = 3
    slept: list[float] = []
    outcome = train.submit(api, obj, rerun=True, now=NOW, sleep=slept.append)
    assert outcome.action == "submitted" and slept == [2.0, 2.0, 2.0]  # three polls found it terminating


def test_rerun_gives_up_on_a_run_that_stays(dev):
    api = SlowDelete(polls=0)
    obj = train.build(dev, "mnist")
    train.submit(api, obj, now=NOW)
    api.polls = 1000
    with pytest.raises(train.StillDeleting, match="still being deleted after 10 s"):
        train.submit(api, obj, rerun=True, now=NOW, sleep=lambda _: None, gone_timeout=10)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["queue", "prod"], 2, "stack 'prod' declares no training (gpuplane:training): it has no queue"),
        (
            ["queue", "dev", "--kubeconfig", "/nonexistent/kubeconfig"],
            2,
            "kubeconfig /nonexistent/kubeconfig does not exist; write it with `gpuplane kubeconfig dev` first",
        ),
    ],
)
def test_queue_command_refuses_without_a_queue_or_a_cluster(args, code, message):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == code, result.output
    assert message in result.output and "Traceback" not in result.output


def test_cluster_api_reads_pending_workloads_from_the_visibility_api():
    """The LocalQueue's `pendingworkloads` subresource of the aggregated visibility API (v1beta2)."""
    seen: list[tuple[Any, ...]] = []

    class Client:
        def call_api(self, path: str, method: str, params: dict[str, str], **kwargs: Any) -> dict[str, Any]:
            seen.append((path.format(**params), method, kwargs["response_types_map"]))
            return {"items": [{"metadata": {"name": "jobset-a"}, "positionInLocalQueue": 0}]}

    class Custom:
        api_client = Client()

    api = kube.ClusterApi.__new__(kube.ClusterApi)
    api._custom = Custom()
    assert api.pending_workloads("ml", "training") == [{"metadata": {"name": "jobset-a"}, "positionInLocalQueue": 0}]
    assert seen == [
        (
            "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/training/pendingworkloads",
            "GET",
            {200: "object"},
        )
    ]


def test_queue_command_finds_the_project_and_its_kubeconfig_like_train(tmp_path, monkeypatch):
    """From a subfolder of another team's project: its stack, its namespace, `.gpuplane/<stack>/kubeconfig`."""
    from tests import team_project  # noqa: PLC0415

    team = team_project.make(tmp_path / "team")
    path = team / ".gpuplane" / "dev" / "kubeconfig"
    path.parent.mkdir(parents=True)
    path.write_text("apiVersion: v1\nkind: Config\n")
    seen: list[Any] = []

    class Cluster(FakeApi):
        def __init__(self, source: kube.Source) -> None:
            super().__init__()
            seen.append(source.path)

        def list_workloads(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
            seen.append(namespace)
            return [
                {
                    "metadata": {"name": "jobset-mnist-1", "ownerReferences": [{"kind": "JobSet", "name": "mnist-1"}]},
                    "spec": {"queueName": "training", "podSets": []},
                    "status": {"conditions": [condition("Admitted", "True"), condition("PodsReady", "True")]},
                }
            ]

    monkeypatch.setattr(kube, "ClusterApi", Cluster)
    monkeypatch.chdir(team / "src" / "deep")
    result = CliRunner().invoke(app, ["queue", "dev"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert seen == [path, "ml"]
    assert "mnist-1" in result.output and "Running" in result.output
    # The dev stack's one GPU group (spot), with its quota and nothing admitted in this fake.
    assert "GPUs per flavor" in result.output and "group-gpu" in result.output and "spot" in result.output
