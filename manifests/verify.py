"""The objects `gpuplane verify` creates in a running cluster: pure builders of plain dicts.

Why here and not in the command: these are Kubernetes objects like every other gpuplane applies, so they go
through the same gates (strict schema validation for every supported Kubernetes version, Pod Security
`restricted`, checkov) in the tests, and `gpuplane verify --plan` prints them without a cluster.

Every probe runs in a namespace of its own that enforces `restricted` (a GPU needs no privilege: the device
plugin mounts it), except the storage probes, which must mount the workload namespace's claims (a claim is
namespaced) and run there, under the same `restricted` level that namespace enforces. Every object carries
the run's label (`gpuplane.io/verify-run`), so `kubectl delete ns,pod -l gpuplane.io/verify-run=<run>`
removes whatever a killed run left, and every pod has an `activeDeadlineSeconds`, so a probe the CLI lost
track of stops on its own.

A probe reports by printing `GPUPLANE-VERIFY key=value` lines on stdout; `parse_report` reads them back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gpuplane.manifests import lifecycle, scheduling, tf_runtime, versions, wellknown, workload_security
from gpuplane.manifests.namespaces import namespace as namespace_doc

RUN_LABEL: Final = "gpuplane.io/verify-run"
CHECK_LABEL: Final = "gpuplane.io/verify-check"
PART_OF: Final = "gpuplane-verify"
NAMESPACE_PREFIX: Final = "gpuplane-verify-"
MARKER: Final = "GPUPLANE-VERIFY"
ZONE_LABEL: Final = "topology.kubernetes.io/zone"
# The run id is a DNS label short enough that `gpuplane-verify-<run>` and `gv-<check>-<run>-<suffix>` stay
# within 63 characters.
_RUN_ID: Final = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")
# Where probes write on a shared volume: one folder per run, removed by the last probe of the run.
STORAGE_DIR: Final = ".gpuplane-verify"
STORAGE_MOUNT: Final = "/data"
# Sequential write/read size for the throughput figure: large enough to leave EFS's first-byte latency
# behind, small enough to cost seconds (EFS elastic throughput bills per GB transferred).
THROUGHPUT_MIB: Final = 64

# checkov checks that do not fit a probe pod; the reason travels with the object, as for the load test.
_CHECKOV_SKIPS: Final = (
    ("CKV_K8S_43", "images are pinned by exact version tag in gpuplane.manifests.versions"),
    ("CKV_K8S_15", "IfNotPresent on a pinned tag is the cheapest correct pull for a one-shot probe"),
    ("CKV_K8S_8", "a one-shot probe has no port to probe; the pod's own exit is its liveness"),
    ("CKV_K8S_9", "a one-shot probe serves nothing; readiness does not apply"),
    ("CKV_K8S_21", "the namespace is the run's own (or the stack's workload namespace), named by the caller"),
)


def check_run_id(run_id: str) -> str:
    """`run_id` itself, or ValueError saying what a run id may be."""
    if not _RUN_ID.match(run_id):
        raise ValueError(f"run id '{run_id}' must be a DNS label of at most 32 characters (lowercase, digits, '-')")
    return run_id


def probe_namespace_name(run_id: str) -> str:
    """The run's own namespace."""
    return NAMESPACE_PREFIX + check_run_id(run_id)


def labels(run_id: str, check: str) -> dict[str, str]:
    """The labels of every object of one check of one run."""
    return {
        "app.kubernetes.io/managed-by": "gpuplane",
        "app.kubernetes.io/part-of": PART_OF,
        RUN_LABEL: check_run_id(run_id),
        CHECK_LABEL: check,
    }


def _annotations() -> dict[str, str]:
    return {f"checkov.io/skip{i}": f"{check}={why}" for i, (check, why) in enumerate(_CHECKOV_SKIPS, start=1)}


def probe_namespace(run_id: str, kubernetes_version: str) -> dict[str, Any]:
    """The run's namespace: Pod Security `restricted` enforced, pinned to the cluster's version."""
    doc = namespace_doc(probe_namespace_name(run_id), "restricted", kubernetes_version)
    doc["metadata"]["labels"].update(labels(run_id, "namespace"))
    return doc


def runtime_configmap(namespace: str, run_id: str) -> dict[str, Any]:
    """The runtime helper's ConfigMap in the probe namespace (a ConfigMap volume reads its own namespace only)."""
    return tf_runtime.runtime_configmap(namespace, labels=labels(run_id, "runtime-helper"))


def network_policy(namespace: str, run_id: str) -> dict[str, Any]:
    """No ingress at all to the run's probe pods in `namespace` (they serve nothing; egress stays open).

    Enforced where the VPC CNI's network policy agent runs; elsewhere it states the intent (and checkov's
    CKV2_K8S_6 asks every pod to be covered by one).
    """
    doc = workload_security.network_policy(
        f"gv-deny-ingress-{check_run_id(run_id)}", namespace, {RUN_LABEL: run_id}, []
    )
    doc["metadata"]["labels"].update(labels(run_id, "network-policy"))
    return doc


def standing_objects(run_id: str) -> list[dict[str, Any]]:
    """What the run's namespace holds for every probe: the runtime helper and the ingress policy."""
    namespace = probe_namespace_name(run_id)
    return [runtime_configmap(namespace, run_id), network_policy(namespace, run_id)]


def parse_report(log: str) -> dict[str, str]:
    """The `GPUPLANE-VERIFY key=value` lines of a probe's output (the last value of a key wins)."""
    found: dict[str, str] = {}
    for line in log.splitlines():
        if line.startswith(MARKER + " "):
            key, sep, value = line[len(MARKER) + 1 :].partition("=")
            if sep:
                found[key.strip()] = value.strip()
    return found


def _pod(
    name: str,
    namespace: str,
    run_id: str,
    check: str,
    spec: dict[str, Any],
    *,
    deadline_s: int,
) -> dict[str, Any]:
    if not 1 <= deadline_s <= 86400:
        raise ValueError(f"probe {name}: deadline {deadline_s} s must be 1-86400")
    body = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": deadline_s,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        **spec,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels(run_id, check),
            "annotations": _annotations(),
        },
        "spec": body,
    }


def _resources(cpu: str, memory: str, extra: Mapping[str, str] | None = None) -> dict[str, Any]:
    limits = {"cpu": cpu, "memory": memory, **dict(extra or {})}
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": limits}


# --- the runtime helper in a real cgroup -----------------------------------------------------------------

# Prints what the cgroup says (v2 first, v1 as a fallback) and what the helper exported, after the helper
# ran: the command is wrapped like every TensorFlow container. GPUPLANE_CGROUP_ROOT prefixes the mount point
# in the tests, as it does for the helper.
CGROUP_SCRIPT: Final = r"""
root="${GPUPLANE_CGROUP_ROOT:-}/sys/fs/cgroup"
if [ -r "$root/cpu.max" ]; then cpu=$(cat "$root/cpu.max"); version=2
elif [ -r "$root/cpu/cpu.cfs_quota_us" ]; then
  cpu="$(cat "$root/cpu/cpu.cfs_quota_us") $(cat "$root/cpu/cpu.cfs_period_us")"; version=1
else cpu=unknown; version=unknown; fi
if [ -r "$root/memory.max" ]; then memory=$(cat "$root/memory.max")
elif [ -r "$root/memory/memory.limit_in_bytes" ]; then memory=$(cat "$root/memory/memory.limit_in_bytes")
else memory=unknown; fi
echo "GPUPLANE-VERIFY cgroup.version=$version"
echo "GPUPLANE-VERIFY cgroup.cpu.max=$cpu"
echo "GPUPLANE-VERIFY cgroup.memory.max=$memory"
echo "GPUPLANE-VERIFY nproc=$(nproc 2>/dev/null || echo unknown)"
echo "GPUPLANE-VERIFY id=$(id -u):$(id -g)"
probe="${GPUPLANE_VERIFY_ROOTFS:-}/.gpuplane-verify-write"
if touch "$probe" 2>/dev/null; then echo "GPUPLANE-VERIFY rootfs=writable"; rm -f "$probe"
else echo "GPUPLANE-VERIFY rootfs=read-only"; fi
for v in TF_NUM_INTRAOP_THREADS TF_NUM_INTEROP_THREADS OMP_NUM_THREADS MALLOC_ARENA_MAX \
         GPUPLANE_DETECTED_CPUS GPUPLANE_DETECTED_CPU_MILLICORES GPUPLANE_DETECTED_MEMORY_BYTES; do
  eval "value=\${$v-unset}"
  echo "GPUPLANE-VERIFY env.$v=$value"
done
""".strip()

RUNTIME_CPU: Final = "1500m"
RUNTIME_MEMORY: Final = "512Mi"


def runtime_pod(
    namespace: str,
    run_id: str,
    *,
    uid: int,
    gid: int,
    cpu: str = RUNTIME_CPU,
    memory: str = RUNTIME_MEMORY,
    node_groups: Sequence[str] = (),
    deadline_s: int = 600,
) -> dict[str, Any]:
    """A pod with CPU limit `cpu` whose command runs through the runtime helper and prints both sides.

    The image is the small Python one (it has `/bin/sh`, `nproc`, `cat`): the helper is POSIX sh, and the
    question is what the cgroup of a real node says, not what TensorFlow does with it.
    """
    container = {
        "name": "probe",
        "image": versions.PYTHON_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-c", CGROUP_SCRIPT],
        "env": workload_security.scratch_env(),
        "resources": _resources(cpu, memory),
        "securityContext": workload_security.container_security_context(),
        "volumeMounts": [workload_security.scratch_mount()],
    }
    spec: dict[str, Any] = {
        "securityContext": workload_security.pod_security_context(uid, gid),
        "containers": [container],
        "volumes": [workload_security.scratch_volume(size_limit="64Mi")],
    }
    if node_groups:
        spec["affinity"] = scheduling.node_group_affinity(node_groups)
    wrapped = tf_runtime.wrap_pod_spec(spec)
    return _pod(f"gv-runtime-{run_id}", namespace, run_id, "runtime", wrapped, deadline_s=deadline_s)


# --- a GPU through the workloads' own images -------------------------------------------------------------

# Runs after the helper's own GPU check passed (GPUPLANE_GPU_CHECK=tensorflow): what TensorFlow sees, the
# driver the node injected and the GPU's compute capability, as the training image reports them.
GPU_PYTHON: Final = r"""
import glob, os, re
print("GPUPLANE-VERIFY tf.version=" + __import__("tensorflow").__version__, flush=True)
import tensorflow as tf
gpus = tf.config.list_physical_devices("GPU")
print("GPUPLANE-VERIFY tf.gpus=%d" % len(gpus))
if gpus:
    details = tf.config.experimental.get_device_details(gpus[0])
    cc = details.get("compute_capability") or (0, 0)
    print("GPUPLANE-VERIFY gpu.name=%s" % details.get("device_name", ""))
    print("GPUPLANE-VERIFY gpu.compute_capability=%d" % (cc[0] * 10 + cc[1]))
driver = ""
# "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03 ..." (proprietary module) or
# "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04 ..." (open module): the first version.
try:
    text = open(os.environ.get("GPUPLANE_PROC_ROOT", "/proc") + "/driver/nvidia/version").read()
    driver = re.search(r"\b(\d{3,}\.\d+(?:\.\d+)?)\b", text.splitlines()[0]).group(1)
except Exception:
    dirs = ("/usr/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib")
    libs = [os.path.basename(p) for d in dirs for p in glob.glob(d + "/libcuda.so.*.*")]
    driver = libs[0].split("libcuda.so.", 1)[1] if libs else ""
print("GPUPLANE-VERIFY gpu.driver=" + driver)
for name in ("TF_FORCE_GPU_ALLOW_GROWTH", "GPUPLANE_GPU_MEMORY_FRACTION", "NVIDIA_VISIBLE_DEVICES"):
    print("GPUPLANE-VERIFY env.%s=%s" % (name, os.environ.get(name, "unset")))
""".strip()
SERVING_SCRIPT: Final = f'echo "{MARKER} serving.gpu_check=passed"'


@dataclass(frozen=True)
class GpuProbe:
    """What the GPU probe of one GPU group needs: where to land and what the group promises."""

    group: str
    resource: str = wellknown.GPU_RESOURCE
    taints: tuple[tuple[str, str, str], ...] = ()
    """(key, value, effect) of every taint of the group, all tolerated."""
    gpu_shared: bool = False
    memory_fraction: float | None = None
    extra_labels: Mapping[str, str] = field(default_factory=dict)


def gpu_pod(
    namespace: str,
    run_id: str,
    probe: GpuProbe,
    *,
    uid: int,
    gid: int,
    deadline_s: int = 1800,
) -> dict[str, Any]:
    """One unit of the group's GPU resource, checked by the serving image (init) and the training image.

    The init container holds the same unit (kubelet hands an init container's devices on to the app
    containers), so one allocatable unit is enough for both checks: the serving image's helper check (device
    nodes, driver library, driver version; no Python there) and then TensorFlow's device list in the
    training image, with the helper's `tensorflow` check before it. Each image's CUDA needs the driver major
    `lifecycle.CUDA_MIN_DRIVER` gives its CUDA major.
    """
    gpu = scheduling.gpu_limits(1, probe.resource)
    serving = tf_runtime.wrap_container(
        {
            "name": "serving",
            "image": versions.TF_SERVING_GPU_IMAGE,
            "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/sh", "-c", SERVING_SCRIPT],
            "env": workload_security.scratch_env(gpu=True),
            "resources": _resources("500m", "512Mi", gpu),
            "securityContext": workload_security.container_security_context(),
            "volumeMounts": [workload_security.scratch_mount()],
        },
        gpu_check=tf_runtime.GPU_CHECK_DEVICES,
        min_driver=lifecycle.CUDA_MIN_DRIVER[lifecycle.TF_SERVING_GPU_CUDA_MAJOR],
        gpu_shared=probe.gpu_shared,
        gpu_memory_fraction=probe.memory_fraction,
    )
    training = tf_runtime.wrap_container(
        {
            "name": "tensorflow",
            "image": versions.TENSORFLOW_GPU_IMAGE,
            "imagePullPolicy": "IfNotPresent",
            "command": ["python3", "-c", GPU_PYTHON],
            "env": [*workload_security.scratch_env(gpu=True), {"name": "TF_CPP_MIN_LOG_LEVEL", "value": "2"}],
            "resources": _resources("1", "4Gi", gpu),
            "securityContext": workload_security.container_security_context(),
            "volumeMounts": [workload_security.scratch_mount()],
        },
        gpu_check=tf_runtime.GPU_CHECK_TENSORFLOW,
        min_driver=lifecycle.CUDA_MIN_DRIVER[lifecycle.TENSORFLOW_GPU_CUDA_MAJOR],
        gpu_shared=probe.gpu_shared,
        gpu_memory_fraction=probe.memory_fraction,
    )
    tolerations = scheduling.gpu_tolerations()
    for key, value, effect in probe.taints:
        toleration = {"key": key, "operator": "Equal", "value": value, "effect": effect}
        if not value:
            toleration = {"key": key, "operator": "Exists", "effect": effect}
        if toleration not in tolerations:
            tolerations.append(toleration)
    spec = {
        "securityContext": workload_security.pod_security_context(uid, gid),
        "nodeSelector": {wellknown.LABEL_NODE_GROUP: probe.group, **dict(probe.extra_labels)},
        "tolerations": tolerations,
        "initContainers": [serving],
        "containers": [training],
        "volumes": [
            workload_security.scratch_volume(size_limit=workload_security.GPU_SCRATCH_SIZE),
            tf_runtime.runtime_volume(),
        ],
    }
    return _pod(
        f"gv-gpu-{probe.group}-{run_id}"[:63].rstrip("-"),
        namespace,
        run_id,
        f"gpu-{probe.group}",
        spec,
        deadline_s=deadline_s,
    )


# --- shared storage across zones ---------------------------------------------------------------------------


def storage_script(
    run_id: str, volumes: Sequence[str], zone: str, *, read_from: str | None, last: bool, mount: str = STORAGE_MOUNT
) -> str:
    """Write a token into each volume from `zone`; read the one written from `read_from`; report ids and speed.

    `last`: this pod is the run's last on the volume and removes the run's folder. `mount`: where the volumes
    are mounted (`<mount>/<volume>`; the tests point it at local folders).
    """
    lines = ["set -u", f"mib={THROUGHPUT_MIB}"]
    for volume in volumes:
        folder = f"{mount}/{volume}/{STORAGE_DIR}/{run_id}"
        key = volume.replace("-", "_")
        lines += [
            f'mkdir -p "{folder}" || echo "{MARKER} {key}.error=cannot create {folder}"',
            f'echo "{run_id}-{zone}" > "{folder}/{zone}.token" && echo "{MARKER} {key}.wrote={zone}"',
            f'echo "{MARKER} {key}.owner=$(stat -c %u:%g "{folder}/{zone}.token" 2>/dev/null)"',
            f'start=$(date +%s%N); dd if=/dev/zero of="{folder}/{zone}.bin" bs=1M count=$mib conv=fsync 2>/dev/null;'
            f' end=$(date +%s%N); echo "{MARKER} {key}.write_ms=$(( (end - start) / 1000000 ))"',
            f'start=$(date +%s%N); dd if="{folder}/{zone}.bin" of=/dev/null bs=1M 2>/dev/null;'
            f' end=$(date +%s%N); echo "{MARKER} {key}.read_ms=$(( (end - start) / 1000000 ))"',
            f'rm -f "{folder}/{zone}.bin"',
        ]
        if read_from is not None:
            lines.append(
                f'echo "{MARKER} {key}.read_{read_from.replace("-", "_")}=$(cat "{folder}/{read_from}.token" 2>&1)"'
            )
        if last:
            lines.append(f'rm -rf "{folder}"')
    return "\n".join(lines)


def storage_pod(
    namespace: str,
    run_id: str,
    volumes: Sequence[str],
    zone: str,
    *,
    uid: int,
    gid: int,
    read_from: str | None = None,
    last: bool = True,
    index: int = 0,
    deadline_s: int = 600,
) -> dict[str, Any]:
    """A pod in `zone` that mounts every named volume read-write and runs `storage_script`."""
    if not volumes:
        raise ValueError("storage probe: no volume to check")
    mounts = [{"name": v, "mountPath": f"{STORAGE_MOUNT}/{v}"} for v in volumes]
    pod_volumes = [{"name": v, "persistentVolumeClaim": {"claimName": v}} for v in volumes]
    spec = {
        "securityContext": workload_security.pod_security_context(uid, gid),
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": [zone]}]}
                    ]
                }
            }
        },
        "containers": [
            {
                "name": "probe",
                "image": versions.PYTHON_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "command": ["/bin/sh", "-c", storage_script(run_id, volumes, zone, read_from=read_from, last=last)],
                "env": workload_security.scratch_env(),
                "resources": _resources("250m", "128Mi"),
                "securityContext": workload_security.container_security_context(),
                "volumeMounts": [*mounts, workload_security.scratch_mount()],
            }
        ],
        "volumes": [*pod_volumes, workload_security.scratch_volume(size_limit="64Mi")],
    }
    return _pod(f"gv-storage-{index}-{run_id}", namespace, run_id, "storage", spec, deadline_s=deadline_s)


# --- a second node in another AZ, for the storage check (`--second-az`) -----------------------------------

HOSTNAME_LABEL: Final = "kubernetes.io/hostname"


def second_node_pod(
    namespace: str,
    run_id: str,
    *,
    uid: int,
    gid: int,
    node_groups: Sequence[str],
    avoid_nodes: Sequence[str],
    deadline_s: int = 1800,
) -> dict[str, Any]:
    """A small pod that fits no node there is now, so the cluster-autoscaler adds one to a CPU group.

    Required node affinity: one of `node_groups` (labels the groups advertise in their ASG node-template
    tags, so a scale-up is simulated) and a hostname that is none of `avoid_nodes` (the nodes there are now).
    Not a zone rule: the cluster-autoscaler builds an ASG's template node in the ASG's first AZ only
    (cluster-autoscaler cloudprovider/aws/aws_manager.go `getAsgTemplate`, read 2026-11 in the stored copy),
    so "not this zone" can be refused when that first AZ is the one the nodes are in. A new hostname always
    fits the template; the Auto Scaling group then launches the instance in its AZ with the fewest instances
    (AZ balancing), which is another AZ whenever the group spans one. The check reads the new node's zone.
    The pod only sleeps; removed with the run, the node goes after the autoscaler's scale-down delay.
    """
    if not node_groups:
        raise ValueError("second-node pod: no CPU node group to add a node to")
    extra = [{"key": HOSTNAME_LABEL, "operator": "NotIn", "values": sorted(avoid_nodes)}] if avoid_nodes else []
    spec = {
        "securityContext": workload_security.pod_security_context(uid, gid),
        "affinity": scheduling.node_group_affinity(node_groups, extra),
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {
                "name": "probe",
                "image": versions.PYTHON_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "command": ["/bin/sh", "-c", f"echo '{MARKER} second_node=started'; exec sleep {deadline_s}"],
                "env": workload_security.scratch_env(),
                "resources": _resources("100m", "64Mi"),
                "securityContext": workload_security.container_security_context(),
                "volumeMounts": [workload_security.scratch_mount()],
            }
        ],
        "volumes": [workload_security.scratch_volume(size_limit="16Mi")],
    }
    return _pod(f"gv-second-az-{run_id}", namespace, run_id, "storage", spec, deadline_s=deadline_s)


# --- HTTP from inside the cluster: serving's model status, TensorBoard -----------------------------------

# GET each URL; print its HTTP status. For TF Serving's model-status answer also the versions' states, and
# when a version is AVAILABLE one predict call shaped by the model's signature (as `gpuplane compare`'s client
# reads it: the first input of `serving_default`): zeros for a numeric input (unknown dimensions 32), an
# 8x8 PNG made here for an encoded-image input (DT_STRING, sent as {"b64": ...}).
HTTP_PYTHON: Final = r"""
import base64, json, struct, sys, urllib.error, urllib.request, zlib

def say(name, key, value):
    print("GPUPLANE-VERIFY %s.%s=%s" % (name, key, str(value).replace("\n", " ")[:300]), flush=True)

def png(side=8):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80\x80\x80" * side for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")

def zeros(dims, integer):
    if not dims:
        return 0 if integer else 0.0
    return [zeros(dims[1:], integer) for _ in range(dims[0] if dims[0] > 0 else 32)]

def predict(name, url):
    with urllib.request.urlopen(url + "/metadata", timeout=10) as answer:
        signature = json.load(answer)["metadata"]["signature_def"]["signature_def"]["serving_default"]
    first = sorted(signature["inputs"])[0]
    tensor = signature["inputs"][first]
    dims = [int(d.get("size", -1)) for d in tensor.get("tensor_shape", {}).get("dim", [])][1:]
    size = 1
    for d in dims:
        size *= d if d > 0 else 32
    say(name, "input", "%s %s %s" % (first, tensor.get("dtype"), dims))
    if size > 2**20:  # a probe of 128 MiB cannot build that many zeros as JSON
        say(name, "predict", "skipped: an input of %d values is too large to fake" % size)
        return
    if tensor.get("dtype") == "DT_STRING":
        instance = {"b64": base64.b64encode(png()).decode()}
    else:
        instance = zeros(dims, tensor.get("dtype", "").startswith(("DT_INT", "DT_UINT")))
    body = json.dumps({"signature_name": "serving_default", "instances": [{first: instance}]}).encode()
    request = urllib.request.Request(url + ":predict", body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            found = json.load(answer)
        say(name, "predict", "200" if "predictions" in found or "outputs" in found else "no predictions")
    except urllib.error.HTTPError as exc:
        say(name, "predict", "%d %s" % (exc.code, exc.read()[:200].decode(errors="replace")))

for name, url in json.loads(sys.argv[1]).items():
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            say(name, "status", answer.status)
            body = answer.read()
        try:
            states = [v.get("state") for v in json.loads(body).get("model_version_status", [])]
        except (ValueError, AttributeError):
            continue
        say(name, "state", ",".join(s or "" for s in states) or "none")
        if "AVAILABLE" in states:
            predict(name, url)
    except urllib.error.HTTPError as exc:
        say(name, "status", exc.code)
    except Exception as exc:
        say(name, "error", exc)
""".strip()


def http_pod(namespace: str, run_id: str, check: str, urls: Mapping[str, str], *, uid: int, gid: int) -> dict[str, Any]:
    """A pod that GETs each URL (`name -> URL`) and reports its status (and TF Serving's model states)."""
    import json  # noqa: PLC0415 - only this builder serialises

    spec = {
        "securityContext": workload_security.pod_security_context(uid, gid),
        "containers": [
            {
                "name": "probe",
                "image": versions.PYTHON_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "command": ["python3", "-c", HTTP_PYTHON, json.dumps(dict(urls), sort_keys=True)],
                "env": workload_security.scratch_env(),
                "resources": _resources("250m", "128Mi"),
                "securityContext": workload_security.container_security_context(),
                "volumeMounts": [workload_security.scratch_mount()],
            }
        ],
        "volumes": [workload_security.scratch_volume(size_limit="64Mi")],
    }
    return _pod(f"gv-{check}-{run_id}", namespace, run_id, check, spec, deadline_s=300)
