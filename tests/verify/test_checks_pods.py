"""Runtime, storage and serving checks; their in-pod scripts run here (helper on a fake cgroup, local folders)."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import subprocess
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gpuplane.infra.verify import checks_pods as cp
from gpuplane.infra.verify.expect import Expectations, VariantExpect
from gpuplane.infra.verify.model import CheckFailed
from gpuplane.manifests import tf_runtime
from gpuplane.manifests import verify as probes
from tests.runtime._support import HELPER, FakeHost, base_env
from tests.verify.conftest import RUN
from tests.verify.fakes import FakeCluster, Script, healthy_nodes, node, report_lines


def _fail(check, ctx) -> CheckFailed:
    with pytest.raises(CheckFailed) as caught:
        check(ctx)
    assert caught.value.outcome.cause and caught.value.outcome.fix
    return caught.value


# --- runtime helper against the cgroup -----------------------------------------------------------------------


def _runtime_log(dev, tmp_path: Path, cpu_max: str, *, rootfs: Path | None = None) -> str:
    """The runtime probe's own command, through the real helper, on a fake cgroup v2 node of 4 CPUs."""
    pod = probes.runtime_pod("ns", RUN, uid=dev.uid, gid=dev.gid)
    container = pod["spec"]["containers"][0]
    command = list(container["command"])
    assert command[:2] == ["/bin/sh", tf_runtime.SCRIPT_PATH]
    command[1] = str(HELPER)
    host = FakeHost(tmp_path)
    host.v2("/")
    host.write("/sys/fs/cgroup/cpu.max", cpu_max + "\n")
    host.write("/sys/fs/cgroup/memory.max", "536870912\n")
    env = base_env(**host.env, GPUPLANE_VERIFY_ROOTFS=str(rootfs or tmp_path / "no-such-dir"))
    env.update({e["name"]: e["value"] for e in container["env"] if "value" in e})
    # What the kubelet's Downward API gives the helper for this container's limits.
    env |= {"GPUPLANE_CPU_LIMIT_MILLICORES": "1500", "GPUPLANE_MEMORY_LIMIT_BYTES": "536870912"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _as_workload_user(log: str, dev) -> str:
    """The probe here runs as this test's user; in the pod it is the workload uid."""
    return log.replace(f"id={os.getuid()}:{os.getgid()}", f"id={dev.uid}:{dev.gid}")


def test_runtime_passes_when_the_helper_matches_the_cgroup(dev, make_ctx, tmp_path):
    log = _as_workload_user(_runtime_log(dev, tmp_path, "150000 100000"), dev)
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-runtime-"] = Script(logs={"probe": log})
    outcome = cp.check_runtime(make_ctx(dev, cluster))
    assert outcome.status == "pass", outcome
    assert outcome.evidence.startswith("cgroup v2 cpu.max '150000 100000', memory.max 536870912, ")
    assert "helper: intra-op 2, inter-op 1, 1500 millicores, 536870912 bytes; uid:gid 10001:10001, root read-only" in (
        outcome.evidence
    )
    pod = next(o for o in cluster.created if o["kind"] == "Pod")
    assert pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] == probes.RUNTIME_CPU
    assert pod["spec"]["affinity"]["nodeAffinity"]  # on the untainted CPU group
    assert [o["kind"] for o in cluster.created[:2]] == ["Namespace", "ConfigMap"]


def test_runtime_without_a_cfs_quota_fails(dev, make_ctx, tmp_path):
    log = _as_workload_user(_runtime_log(dev, tmp_path, "max 100000"), dev)
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-runtime-"] = Script(logs={"probe": log})
    failure = _fail(cp.check_runtime, make_ctx(dev, cluster)).outcome
    assert failure.evidence.startswith("the cgroup's CPU limit is max 100000, the pod's limit 1500m")
    assert "cpuCFSQuota" in failure.cause


def test_runtime_helper_disagreeing_with_the_cgroup_fails(dev, make_ctx):
    log = report_lines(
        cgroup__version="2",
        cgroup__cpu__max="150000 100000",
        cgroup__memory__max="536870912",
        nproc="16",
        id="10001:10001",
        rootfs="read-only",
        env__TF_NUM_INTRAOP_THREADS="16",
        env__TF_NUM_INTEROP_THREADS="unset",
        env__OMP_NUM_THREADS="16",
        env__MALLOC_ARENA_MAX="2",
        env__GPUPLANE_DETECTED_CPU_MILLICORES="16000",
        env__GPUPLANE_DETECTED_MEMORY_BYTES="536870912",
    )
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-runtime-"] = Script(logs={"probe": log})
    failure = _fail(cp.check_runtime, make_ctx(dev, cluster)).outcome
    assert failure.evidence.startswith(
        "helper exports differ from the cgroup: GPUPLANE_DETECTED_CPU_MILLICORES=16000 (expected 1500), "
        "OMP_NUM_THREADS=16 (expected 2), TF_NUM_INTEROP_THREADS=unset (expected 1), "
        "TF_NUM_INTRAOP_THREADS=16 (expected 2)"
    )
    assert "misread" in failure.cause


def test_runtime_with_a_writable_root_or_another_uid_fails(dev, make_ctx, tmp_path):
    log = _runtime_log(dev, tmp_path, "150000 100000", rootfs=tmp_path)
    assert "rootfs=writable" in log
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-runtime-"] = Script(logs={"probe": log})
    failure = _fail(cp.check_runtime, make_ctx(dev, cluster)).outcome
    assert f"ran as {os.getuid()}:{os.getgid()} with a writable root" in failure.evidence
    assert "mutating webhook" in failure.cause


def test_runtime_pod_that_fails_to_run(dev, make_ctx):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-runtime-"] = Script(phase="Failed", container_exit=126, logs={"probe": "exec failed"})
    failure = _fail(cp.check_runtime, make_ctx(dev, cluster)).outcome
    assert failure.evidence == "probe pod Failed on system-0: probe: exit 126 (Error)"


@pytest.mark.parametrize(
    ("quota", "usable", "expected"),
    [
        (1.5, 4, ("2", "1")),
        (0.5, 4, ("1", "1")),
        (4.0, 4, ("unset", "unset")),
        (None, 4, ("unset", "unset")),
        (3.5, 2, ("unset", "unset")),
    ],
)
def test_expected_threads_follow_the_inference_rule(quota, usable, expected):
    assert cp.expected_threads(quota, usable) == expected


# --- storage across AZs ----------------------------------------------------------------------------------------


def _storage_logs(dev, root: Path, zones: list[str], *, shared: bool = True) -> list[str]:
    """Each storage probe's script, run here: the zones share one folder per volume (EFS) unless `shared` is off."""
    logs = []
    for index, zone in enumerate(zones):
        mount = root / ("shared" if shared else zone)
        for volume in dev.volumes:
            (mount / volume).mkdir(parents=True, exist_ok=True)
        script = probes.storage_script(
            RUN,
            dev.volumes,
            zone,
            read_from=zones[0] if index else None,
            last=index == len(zones) - 1,
            mount=str(mount),
        )
        done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        logs.append(done.stdout)
    return logs


def _as_workload_owner(logs: list[str], dev) -> list[str]:
    """Files written here belong to this test's user; on EFS the access point makes them the workload's."""
    return [log.replace(f"owner={os.getuid()}:{os.getgid()}", f"owner={dev.uid}:{dev.gid}") for log in logs]


def test_storage_written_in_one_az_reads_in_another(dev, make_ctx, tmp_path):
    expect = dev
    logs = _as_workload_owner(_storage_logs(expect, tmp_path, ["us-west-2a", "us-west-2b"]), dev)
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-storage-0-"] = Script(logs={"probe": logs[0]})
    cluster.scripts["gv-storage-1-"] = Script(logs={"probe": logs[1]})
    outcome = cp.check_storage(make_ctx(expect, cluster))
    assert outcome.status == "pass"
    assert outcome.evidence == (
        "models, datasets, logs: written in us-west-2a, read in us-west-2b, files owned by 10001:10001"
    )
    assert {"models.writeMiBps.us-west-2a", "logs.readMiBps.us-west-2b"} <= set(outcome.timings)
    assert not (tmp_path / "shared" / "models" / probes.STORAGE_DIR / RUN).exists()  # the last probe cleaned up
    pods = [o for o in cluster.created if o["kind"] == "Pod"]
    assert [p["metadata"]["namespace"] for p in pods] == ["ml", "ml"]  # the claims live there
    policy = cluster.created[0]
    assert (policy["kind"], policy["metadata"]["namespace"]) == ("NetworkPolicy", "ml")  # before the pods
    assert policy["spec"] == {"podSelector": {"matchLabels": {probes.RUN_LABEL: RUN}}, "policyTypes": ["Ingress"]}
    zones = [
        p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
            "matchExpressions"
        ][0]["values"]
        for p in pods
    ]
    assert zones == [["us-west-2a"], ["us-west-2b"]]


def test_storage_not_shared_across_azs_fails(dev, make_ctx, tmp_path):
    expect = dev
    logs = _as_workload_owner(_storage_logs(expect, tmp_path, ["us-west-2a", "us-west-2b"], shared=False), dev)
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-storage-0-"] = Script(logs={"probe": logs[0]})
    cluster.scripts["gv-storage-1-"] = Script(logs={"probe": logs[1]})
    failure = _fail(cp.check_storage, make_ctx(expect, cluster)).outcome
    assert failure.evidence.startswith("models: written in us-west-2a, read in us-west-2b as 'cat: ")
    assert "mount target" in failure.cause and "describe-mount-targets" in failure.fix


def test_storage_in_one_az_says_what_it_could_not_prove(dev, make_ctx, tmp_path):
    expect = dev
    logs = _as_workload_owner(_storage_logs(expect, tmp_path, ["us-west-2a"]), dev)
    nodes = [node("system-0", "system", zone="us-west-2a", labels=dev.group("system").labels)]
    cluster = FakeCluster(nodes)
    cluster.scripts["gv-storage-0-"] = Script(logs={"probe": logs[0]})
    outcome = cp.check_storage(make_ctx(expect, cluster))
    assert outcome.status == "pass"
    assert "RWX across AZs NOT proven: Ready CPU nodes are in one AZ" in outcome.evidence
    assert len([o for o in cluster.created if o["kind"] == "Pod"]) == 1


def test_storage_in_one_az_states_what_second_az_would_cost(dev, make_ctx, tmp_path):
    logs = _as_workload_owner(_storage_logs(dev, tmp_path, ["us-west-2a"]), dev)
    cluster = FakeCluster([node("system-0", "system", zone="us-west-2a", labels=dev.group("system").labels)])
    cluster.scripts["gv-storage-0-"] = Script(logs={"probe": logs[0]})
    outcome = cp.check_storage(make_ctx(dev, cluster))
    system = dev.group("system")
    # dev's system group: m6i.large on demand plus its 50 GiB root volume, us-east-1's price; 5 min for the
    # check and 10 min of scale-down delay.
    assert system.usd_per_node_hour == pytest.approx(0.096 + 50 * 0.08 / 730, abs=1e-4)
    assert outcome.evidence.endswith(
        "RWX across AZs NOT proven: Ready CPU nodes are in one AZ (run again with --second-az to start one more "
        "node of group system for about 15 min (the check, then the autoscaler's scale-down delay of 10m): about "
        f"$0.03 ({system.price_basis}); or scale the system group to 2 nodes)"
    )
    assert not [o for o in cluster.created if o["metadata"]["name"].startswith("gv-second-az-")]


def test_storage_in_one_az_with_the_cpu_groups_full_says_what_to_raise(dev, make_ctx, tmp_path):
    logs = _as_workload_owner(_storage_logs(dev, tmp_path, ["us-west-2a"]), dev)
    labels = dev.group("system").labels
    cluster = FakeCluster([node(f"system-{i}", "system", zone="us-west-2a", labels=labels) for i in range(3)])
    cluster.scripts["gv-storage-0-"] = Script(logs={"probe": logs[0]})
    outcome = cp.check_storage(make_ctx(dev, cluster))
    assert outcome.evidence.endswith(
        "Ready CPU nodes are in one AZ (every untainted CPU group is at its maxSize: raise one's maxSize, then run "
        "again with --second-az)"
    )


SECOND_NODE_WAIT = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
SCALED = {
    "reason": "TriggeredScaleUp",
    "message": "pod triggered scale-up: [{eks-system 1->2 (max: 3)}]",
    "source": {"component": "cluster-autoscaler"},
    "lastTimestamp": "2026-11-26T10:00:05Z",
}


def _one_az(dev, *, new_zone: str = "us-west-2b", events: list[Any] | None = None, never: bool = False):
    labels = dev.group("system").labels
    cluster = FakeCluster([node("system-0", "system", zone="us-west-2a", labels=labels)])
    cluster.scripts["gv-second-az-"] = Script(
        node="system-new",
        pending_polls=2,
        never_ends=never,
        unschedulable=SECOND_NODE_WAIT,
        events=events if events is not None else [SCALED],
        on_schedule=lambda fake: fake.nodes.append(
            node("system-new", "system", zone=new_zone, labels=labels, created="2026-11-26T10:01:00Z")
        ),
    )
    return cluster


def test_second_az_starts_a_node_in_another_az_and_proves_rwx_across_azs(dev, make_ctx, tmp_path):
    logs = _as_workload_owner(_storage_logs(dev, tmp_path, ["us-west-2a", "us-west-2b"]), dev)
    cluster = _one_az(dev)
    cluster.scripts["gv-storage-0-"] = Script(logs={"probe": logs[0]})
    cluster.scripts["gv-storage-1-"] = Script(logs={"probe": logs[1]}, node="system-new")
    ctx = make_ctx(dev, cluster)
    ctx.second_az = True
    outcome = cp.check_storage(ctx)
    assert outcome.status == "pass", outcome.evidence
    system = dev.group("system")
    # The node has run 90 s (10:01:00 to the context's 10:02:30), then the 10 min delay: (90 + 600) s.
    assert outcome.evidence == (
        "models, datasets, logs: written in us-west-2a, read in us-west-2b, files owned by 10001:10001 (second "
        "node system-new in us-west-2b, started for this check: it stays up for the autoscaler's scale-down delay "
        f"(10m) after the run; with the 2 min it has run, about $0.02: {system.price_basis})"
    )
    assert outcome.details["zones"] == ["us-west-2a", "us-west-2b"]
    assert outcome.timings["secondNodeReady"] == 6.0  # seen Ready at the third poll, 3 s apart
    placeholder = next(o for o in cluster.created if o["metadata"]["name"] == f"gv-second-az-{RUN}")
    assert placeholder["metadata"]["namespace"] == probes.probe_namespace_name(RUN)  # restricted
    terms = placeholder["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "gpuplane.io/node-group", "operator": "In", "values": ["system"]},
        {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["system-0"]},
    ]
    # Removed with the rest of the run (the node itself goes after the autoscaler's delay).
    assert ctx.objects.clean_up() == []
    assert ("Pod", probes.probe_namespace_name(RUN), f"gv-second-az-{RUN}") in cluster.deleted


def test_second_az_fails_with_the_autoscalers_reason(dev, make_ctx):
    refused = {
        "reason": "NotTriggerScaleUp",
        "message": "pod didn't trigger scale-up: 1 max node group size reached",
        "source": {"component": "cluster-autoscaler"},
        "lastTimestamp": "2026-11-26T10:00:10Z",
    }
    cluster = _one_az(dev, events=[refused], never=True)
    ctx = make_ctx(dev, cluster)
    ctx.second_az = True
    failure = _fail(cp.check_storage, ctx).outcome
    assert failure.evidence == (
        "--second-az: the cluster-autoscaler will not add a CPU node: pod didn't trigger scale-up: 1 max node "
        "group size reached"
    )
    assert "maxSize" in failure.cause and "maxSize" in failure.fix
    assert not [o for o in cluster.created if o["metadata"]["name"].startswith("gv-storage-")]


def test_second_az_fails_when_the_new_node_lands_in_the_same_az(dev, make_ctx):
    cluster = _one_az(dev, new_zone="us-west-2a")
    ctx = make_ctx(dev, cluster)
    ctx.second_az = True
    failure = _fail(cp.check_storage, ctx).outcome
    assert failure.evidence == ("--second-az: the new node system-new is in us-west-2a too; RWX across AZs not proven")
    assert "same AZ" in failure.cause and "describe-auto-scaling-groups" in failure.fix


def test_second_az_with_every_cpu_group_at_its_max_fails_before_creating_anything(dev, make_ctx):
    labels = dev.group("system").labels
    nodes = [node(f"system-{i}", "system", zone="us-west-2a", labels=labels) for i in range(3)]  # dev: maxSize 3
    cluster = FakeCluster(nodes)
    ctx = make_ctx(dev, cluster)
    ctx.second_az = True
    failure = _fail(cp.check_storage, ctx).outcome
    assert failure.evidence == "--second-az: every untainted CPU group (system) is at its maxSize"
    assert "maxSize" in failure.fix and cluster.created == []


def test_second_az_is_not_used_when_nodes_are_in_two_azs_already(dev, make_ctx, tmp_path):
    logs = _as_workload_owner(_storage_logs(dev, tmp_path, ["us-west-2a", "us-west-2b"]), dev)
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-storage-0-"] = Script(logs={"probe": logs[0]})
    cluster.scripts["gv-storage-1-"] = Script(logs={"probe": logs[1]})
    ctx = make_ctx(dev, cluster)
    ctx.second_az = True
    outcome = cp.check_storage(ctx)
    assert outcome.status == "pass" and "second node" not in outcome.evidence
    assert not [o for o in cluster.created if o["metadata"]["name"].startswith("gv-second-az-")]


def test_second_az_waiting_past_the_deadline_fails_and_is_cleaned_up(dev, make_ctx):
    from gpuplane.infra.verify.runner import execute  # noqa: PLC0415

    cluster = _one_az(dev, never=True)
    ctx = make_ctx(dev, cluster, deadline_s=60)
    ctx.second_az = True
    check = next(c for c in cp.pod_checks(dev) if c.name == "storage")
    outcome = execute(check, ctx, lambda: "second node: waiting for the autoscaler, 57 s")
    assert outcome.status == "fail" and outcome.evidence.startswith("no result within 600 s; last seen: second")
    assert ctx.objects.clean_up() == []
    assert ("Pod", probes.probe_namespace_name(RUN), f"gv-second-az-{RUN}") in cluster.deleted


def test_storage_owned_by_another_uid_fails(dev, make_ctx, tmp_path):
    logs = _storage_logs(dev, tmp_path, ["us-west-2a", "us-west-2b"])
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-storage-0-"] = Script(logs={"probe": logs[0]})
    cluster.scripts["gv-storage-1-"] = Script(logs={"probe": logs[1]})
    failure = _fail(cp.check_storage, make_ctx(dev, cluster)).outcome
    assert f"models: files written from us-west-2a belong to {os.getuid()}:{os.getgid()}, not 10001:10001" in (
        failure.evidence
    )
    assert "POSIX user" in failure.cause


def test_storage_without_volumes_is_skipped(dev, make_ctx):
    outcome = cp.check_storage(make_ctx(dataclasses.replace(dev, volumes=()), FakeCluster([])))
    assert outcome.status == "skipped" and "storage.enabled" in outcome.evidence


# --- serving -------------------------------------------------------------------------------------------------


def _started(dev: Expectations) -> Expectations:
    """dev with its GPU variant started (`replicas: 1`): shipped parked at 0, it is not probed until then."""
    return dataclasses.replace(
        dev, variants=(*dev.variants, VariantExpect("mobilenet", "gpu", "mobilenet", "mobilenet-gpu"))
    )


def test_a_variant_parked_at_zero_replicas_is_not_probed(dev):
    assert [(v.serving, v.variant) for v in dev.variants] == [("mobilenet", "cpu")]


def test_serving_passes_when_every_variant_is_available_and_predicts(dev, make_ctx):
    dev = _started(dev)
    cluster = FakeCluster(healthy_nodes(dev))
    lines: dict[str, str] = {}
    for name in ("mobilenet-cpu", "mobilenet-gpu"):
        lines |= {f"{name}.state": "AVAILABLE", f"{name}.predict": "200", f"{name}.input": "x DT_FLOAT [224, 224, 3]"}
    cluster.scripts["gv-serving-"] = Script(logs={"probe": report_lines(**lines)})
    outcome = cp.check_serving(make_ctx(dev, cluster))
    assert outcome.evidence == (
        "mobilenet-cpu AVAILABLE, predict 200 (x DT_FLOAT [224, 224, 3]); "
        "mobilenet-gpu AVAILABLE, predict 200 (x DT_FLOAT [224, 224, 3])"
    )
    pod = next(o for o in cluster.created if o["kind"] == "Pod")
    urls = pod["spec"]["containers"][0]["command"][-1]
    assert "http://mobilenet-gpu.ml.svc:8501/v1/models/mobilenet" in urls


def test_a_variant_that_refuses_its_predict_call_fails(dev, make_ctx):
    dev = _started(dev)
    lines = {
        "mobilenet-cpu.state": "AVAILABLE",
        "mobilenet-cpu.predict": "200",
        "mobilenet-gpu.state": "AVAILABLE",
        "mobilenet-gpu.predict": '400 {"error": "Expected image (JPEG, PNG, or GIF), got unknown format"}',
        "mobilenet-gpu.input": "image_bytes DT_STRING []",
    }
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-serving-"] = Script(logs={"probe": report_lines(**lines)})
    failure = _fail(cp.check_serving, make_ctx(dev, cluster)).outcome
    assert failure.evidence.startswith('mobilenet-gpu: predict 400 {"error": "Expected image')
    assert "JPEG only" in failure.cause


def test_a_variant_not_available_fails(dev, make_ctx):
    dev = _started(dev)
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-serving-"] = Script(
        logs={"probe": report_lines(**{"mobilenet-cpu.state": "AVAILABLE", "mobilenet-gpu.error": "timed out"})}
    )
    failure = _fail(cp.check_serving, make_ctx(dev, cluster)).outcome
    assert failure.evidence == "mobilenet-gpu: timed out"
    assert "kubectl -n ml get deploy,pods" in failure.fix


def test_serving_without_variants_is_skipped(dev, make_ctx):
    outcome = cp.check_serving(make_ctx(dataclasses.replace(dev, variants=()), FakeCluster([])))
    assert outcome.status == "skipped"


# --- the HTTP probe's script against local servers; TensorBoard -----------------------------------------------


METADATA = {
    "tensor": {
        "inputs": {
            "x": {
                "dtype": "DT_FLOAT",
                "tensor_shape": {"dim": [{"size": "-1"}, {"size": "4"}, {"size": "-1"}, {"size": "3"}]},
            }
        }
    },
    "image": {"inputs": {"image_bytes": {"dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1"}]}}}},
    "huge": {"inputs": {"v": {"dtype": "DT_FLOAT", "tensor_shape": {"dim": [{"size": "-1"}] * 6}}}},
}
PREDICT_BODIES: list[dict[str, Any]] = []


class _Handler(BaseHTTPRequestHandler):
    """TF Serving's REST answers for models `tensor` and `image`, a page at `/`, 404 elsewhere."""

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        model = self.path.split("/")[3] if self.path.startswith("/v1/models/") else ""
        if model in METADATA and self.path.endswith("/metadata"):
            metadata = {"signature_def": {"signature_def": {"serving_default": METADATA[model]}}}
            self._send(200, json.dumps({"model_spec": {"name": model}, "metadata": metadata}).encode())
        elif model in METADATA:
            self._send(200, b'{"model_version_status": [{"version": "1", "state": "AVAILABLE"}]}')
        elif self.path == "/":
            self._send(200, b"<html>TensorBoard</html>")
        else:
            self._send(404, b'{"error": "Servable not found"}')

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        PREDICT_BODIES.append(body)
        instance = body["instances"][0]
        if "image_bytes" in instance:
            data = base64.b64decode(instance["image_bytes"]["b64"])
            ok = data.startswith(b"\x89PNG") and zlib.decompress(data[data.index(b"IDAT") + 4 : -16])
            self._send(200 if ok else 400, b'{"predictions": [[0.5]]}' if ok else b'{"error": "bad image"}')
        else:
            self._send(200, b'{"predictions": [[0.1, 0.9]]}')

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def local_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_the_http_probe_script_reports_states_predictions_statuses_and_errors(local_server):
    urls = {
        "tensor": f"{local_server}/v1/models/tensor",
        "image": f"{local_server}/v1/models/image",
        "huge": f"{local_server}/v1/models/huge",
        "other": f"{local_server}/v1/models/other",
        "mnist-tensorboard": f"{local_server}/",
        "down": "http://127.0.0.1:9/",
    }
    pod = probes.http_pod("ns", RUN, "serving", urls, uid=10001, gid=10001)
    command = pod["spec"]["containers"][0]["command"]
    assert command[:2] == ["python3", "-c"]
    PREDICT_BODIES.clear()
    done = subprocess.run([sys.executable, *command[1:]], capture_output=True, text=True, timeout=60, check=False)
    report = probes.parse_report(done.stdout)
    assert report["tensor.state"] == "AVAILABLE" and report["tensor.status"] == "200"
    assert report["tensor.predict"] == "200" and report["tensor.input"] == "x DT_FLOAT [4, -1, 3]"
    assert report["image.predict"] == "200" and report["image.input"] == "image_bytes DT_STRING []"
    image_body, tensor_body = PREDICT_BODIES  # the URLs are passed sorted by name
    assert tensor_body["signature_name"] == "serving_default"
    x = tensor_body["instances"][0]["x"]
    assert (len(x), len(x[0]), len(x[0][0]), x[0][0][0]) == (4, 32, 3, 0.0)  # unknown dimensions are 32
    assert set(image_body["instances"][0]["image_bytes"]) == {"b64"}
    assert report["huge.predict"] == "skipped: an input of 33554432 values is too large to fake"
    assert report["other.status"] == "404" and "other.state" not in report
    assert report["mnist-tensorboard.status"] == "200" and "mnist-tensorboard.state" not in report
    assert "refused" in report["down.error"].lower()


def test_tensorboard_passes_when_its_page_answers(dev, make_ctx):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-tensorboard-"] = Script(logs={"probe": report_lines(**{"mnist-tensorboard.status": "200"})})
    outcome = cp.check_tensorboard(make_ctx(dev, cluster))
    assert outcome.evidence == "mnist-tensorboard 200 (HTTP status of its page)"
    pod = next(o for o in cluster.created if o["kind"] == "Pod")
    assert "http://mnist-tensorboard.ml.svc:6006/" in pod["spec"]["containers"][0]["command"][-1]


def test_tensorboard_not_answering_fails(dev, make_ctx):
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-tensorboard-"] = Script(
        logs={"probe": report_lines(**{"mnist-tensorboard.error": "<urlopen error timed out>"})}
    )
    failure = _fail(cp.check_tensorboard, make_ctx(dev, cluster)).outcome
    assert failure.evidence == "mnist-tensorboard <urlopen error timed out>"
    assert "app.kubernetes.io/name=tensorboard" in failure.fix


def test_no_tensorboard_is_skipped(dev, make_ctx):
    outcome = cp.check_tensorboard(make_ctx(dataclasses.replace(dev, tensorboards=()), FakeCluster([])))
    assert outcome.status == "skipped"


def test_a_predict_too_large_to_fake_does_not_fail_the_check(dev, make_ctx):
    dev = _started(dev)
    lines: dict[str, str] = {}
    for name in ("mobilenet-cpu", "mobilenet-gpu"):
        lines |= {f"{name}.state": "AVAILABLE", f"{name}.predict": "skipped: an input of 33554432 values is too large"}
    cluster = FakeCluster(healthy_nodes(dev))
    cluster.scripts["gv-serving-"] = Script(logs={"probe": report_lines(**lines)})
    outcome = cp.check_serving(make_ctx(dev, cluster))
    assert outcome.status == "pass" and "predict skipped: an input of 33554432 values" in outcome.evidence


def test_second_az_cost_names_the_dearest_group_that_may_get_the_node(dev):
    system = dev.group("system")
    big = dataclasses.replace(system, name="big", usd_per_node_hour=2.0, price_basis="m6i.8xlarge (on-demand $2/h)")
    unpriced = dataclasses.replace(system, name="odd", usd_per_node_hour=None, price_basis="no price for x")
    assert cp.second_az_cost(dev, [system, big, unpriced]) == (
        "one more node of group big for about 15 min (the check, then the autoscaler's scale-down delay of 10m): "
        "about $0.50 (m6i.8xlarge (on-demand $2/h))"
    )
    assert cp.second_az_cost(dev, [unpriced]) == "one more node of odd for about 15 min (no price in the price table)"
