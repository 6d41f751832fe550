"""The manifest side of the runtime helper: ConfigMap, wrapped containers, TF cluster layouts."""

from __future__ import annotations

import copy
import math
import re
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from gpuplane.manifests.tf_runtime import (
    ENTRYPOINT,
    SCRIPT_PATH,
    TFCluster,
    runtime_configmap,
    runtime_script,
    runtime_volume,
    wrap_container,
    wrap_pod_spec,
)

K8S_VERSION = "1.33"
ROOT = Path(__file__).resolve().parents[2]
SCRIPT_FILE = ROOT / "manifests" / "runtime" / "gpuplane-entrypoint.sh"


def validate(obj: dict[str, Any]) -> None:
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def container(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "trainer",
        "image": "tensorflow/tensorflow:2.21.0",
        "command": ["python", "train.py"],
        "args": ["--epochs", "3"],
        "resources": {"limits": {"cpu": "1500m", "memory": "4Gi"}, "requests": {"cpu": "1", "memory": "4Gi"}},
    }
    base.update(overrides)
    return base


def pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": spec}


## ConfigMap and volume


def test_configmap_carries_the_script_verbatim() -> None:
    cm = runtime_configmap("ml", labels={"team": "vision"})
    validate(cm)
    assert cm["metadata"] == {
        "name": "gpuplane-runtime",
        "namespace": "ml",
        "labels": {
            "team": "vision",
            "app.kubernetes.io/name": "gpuplane-runtime",
            "app.kubernetes.io/managed-by": "gpuplane",
        },
    }
    assert cm["data"] == {"gpuplane-entrypoint.sh": SCRIPT_FILE.read_text()}
    assert runtime_script() == SCRIPT_FILE.read_text()
    assert runtime_script().startswith("#!/bin/sh\n")


def test_configmap_name_and_namespace_are_checked() -> None:
    assert runtime_configmap("ml", name="rt")["metadata"]["name"] == "rt"
    with pytest.raises(ValueError, match="namespace 'ML_team' must be a DNS label"):
        runtime_configmap("ML_team")


def test_volume() -> None:
    assert runtime_volume("rt") == {
        "name": "gpuplane-runtime",
        "configMap": {
            "name": "rt",
            "defaultMode": 0o555,
            "items": [{"key": "gpuplane-entrypoint.sh", "path": "gpuplane-entrypoint.sh"}],
        },
    }


## wrap_container


def test_wrap_container_with_its_own_command() -> None:
    original = container()
    before = copy.deepcopy(original)
    wrapped = wrap_container(original)
    assert original == before  # not modified
    assert wrapped["command"] == ["/bin/sh", "/opt/gpuplane/gpuplane-entrypoint.sh", "--", "python", "train.py"]
    assert wrapped["args"] == ["--epochs", "3"]
    assert wrapped["env"] == [
        {
            "name": "GPUPLANE_CPU_LIMIT_MILLICORES",
            "valueFrom": {"resourceFieldRef": {"containerName": "trainer", "resource": "limits.cpu", "divisor": "1m"}},
        },
        {
            "name": "GPUPLANE_MEMORY_LIMIT_BYTES",
            "valueFrom": {
                "resourceFieldRef": {"containerName": "trainer", "resource": "limits.memory", "divisor": "1"}
            },
        },
    ]
    assert wrapped["volumeMounts"] == [{"name": "gpuplane-runtime", "mountPath": "/opt/gpuplane", "readOnly": True}]
    assert wrapped["resources"] == original["resources"]
    validate(pod({"containers": [wrapped], "volumes": [runtime_volume()]}))


def test_wrap_serving_container_with_explicit_command() -> None:
    """tensorflow/serving's ENTRYPOINT is a script we cannot see: the real command is passed in."""
    serving = container(
        name="serving",
        image="tensorflow/serving:2.19.1",
        args=["--port=8500", "--rest_api_port=8501", "--model_name=resnet", "--model_base_path=/models/resnet"],
    )
    del serving["command"]
    wrapped = wrap_container(serving, command=["tensorflow_model_server"], gpu_memory_fraction=0.5)
    assert wrapped["command"] == [*ENTRYPOINT, "tensorflow_model_server"]
    assert wrapped["args"] == serving["args"]
    assert {"name": "GPUPLANE_GPU_MEMORY_FRACTION", "value": "0.5"} in wrapped["env"]
    validate(pod({"containers": [wrapped], "volumes": [runtime_volume()]}))


@pytest.mark.parametrize(
    ("limits", "missing"),
    [
        ({"memory": "1Gi"}, "resources.limits.cpu must be set"),
        ({"cpu": "2"}, "resources.limits.memory must be set"),
        ({}, "resources.limits.cpu and resources.limits.memory must be set"),
    ],
)
def test_limits_are_required(limits: dict[str, str], missing: str) -> None:
    with pytest.raises(ValueError, match=f"container 'trainer': {missing}.*node's capacity"):
        wrap_container(container(resources={"limits": limits, "requests": {"cpu": "1"}}))


@pytest.mark.parametrize(
    ("cpu", "memory", "message"),
    [
        ("0", "1Gi", "resources.limits.cpu '0' must be positive"),
        ("-1", "1Gi", "resources.limits.cpu '-1' must be positive"),
        ("two", "1Gi", "resources.limits.cpu 'two' is not a Kubernetes quantity"),
        ("1", "0", "resources.limits.memory '0' must be positive"),
        ("1", "lots", "resources.limits.memory 'lots' is not a Kubernetes quantity"),
    ],
)
def test_limits_must_be_positive_quantities(cpu: str, memory: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"container 'trainer': {message}")):
        wrap_container(container(resources={"limits": {"cpu": cpu, "memory": memory}}))


def test_unknown_command_names_the_container() -> None:
    c = container(name="serving")
    del c["command"]
    with pytest.raises(ValueError, match=r"container 'serving': cannot tell what to exec.*command=\[\.\.\.\]"):
        wrap_container(c)


def test_command_given_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="container 'trainer': has command"):
        wrap_container(container(), command=["python"])


def test_wrapping_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="container 'trainer' is already wrapped"):
        wrap_container(wrap_container(container()))


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5])
def test_gpu_fraction_range(fraction: float) -> None:
    with pytest.raises(ValueError, match=r"gpu_memory_fraction .* must be in \(0, 1\]"):
        wrap_container(container(), gpu_memory_fraction=fraction)


def test_user_env_wins_and_is_not_duplicated() -> None:
    c = container(env=[{"name": "GPUPLANE_CPU_LIMIT_MILLICORES", "value": "500"}, {"name": "A", "value": "b"}])
    wrapped = wrap_container(c, gpu_shared=True)
    names = [e["name"] for e in wrapped["env"]]
    assert names == ["GPUPLANE_CPU_LIMIT_MILLICORES", "A", "GPUPLANE_MEMORY_LIMIT_BYTES", "GPUPLANE_GPU_SHARED"]
    assert wrapped["env"][0] == {"name": "GPUPLANE_CPU_LIMIT_MILLICORES", "value": "500"}
    assert wrapped["env"][-1] == {"name": "GPUPLANE_GPU_SHARED", "value": "true"}


def test_training_env() -> None:
    cluster = TFCluster("mnist", (("chief", 1), ("worker", 2), ("ps", 1)), service="mnist-hl", port=2223)
    wrapped = wrap_container(container(), tf_cluster=cluster)
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in wrapped["env"]}
    assert env["GPUPLANE_TF_ROLES"] == "chief:1,worker:2,ps:1"
    assert env["GPUPLANE_TF_JOB_NAME"] == "mnist"
    assert env["GPUPLANE_TF_SERVICE"] == "mnist-hl"
    assert env["GPUPLANE_TF_PORT"] == "2223"
    assert env["GPUPLANE_TF_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}


def test_indexed_job_with_wrapped_pod_validates() -> None:
    cluster = TFCluster.parse("mnist", "chief:1,worker:2,ps:1")
    spec = wrap_pod_spec(
        {"subdomain": cluster.service_name, "restartPolicy": "Never", "containers": [container()]},
        tf_cluster=cluster,
    )
    job: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {
            "completionMode": "Indexed",
            "completions": cluster.size,
            "parallelism": cluster.size,
            "successPolicy": {"rules": [{"succeededIndexes": "0"}]},
            "template": {"spec": spec},
        },
    }
    validate(job)
    assert cluster.size == 4


## wrap_pod_spec


def test_wrap_pod_spec_wraps_named_containers_and_adds_the_volume() -> None:
    sidecar = {"name": "log", "image": "busybox", "command": ["tail", "-f", "/dev/null"]}
    serving = container(name="serving")
    del serving["command"]
    init = {"name": "fetch", "image": "busybox", "command": ["true"]}
    spec = {"initContainers": [init], "containers": [serving, sidecar], "volumes": [{"name": "m", "emptyDir": {}}]}
    out = wrap_pod_spec(spec, only=["serving"], commands={"serving": ["tensorflow_model_server"]}, configmap_name="rt")
    assert out["containers"][0]["command"] == [*ENTRYPOINT, "tensorflow_model_server"]
    assert out["containers"][1] == sidecar  # not a TF container: untouched, no limits needed
    assert out["initContainers"] == [init]
    assert out["volumes"] == [{"name": "m", "emptyDir": {}}, runtime_volume("rt")]
    validate(pod(out))


def test_wrap_pod_spec_unknown_container() -> None:
    with pytest.raises(ValueError, match=r"no container named \['ghost'\]; the pod has \['trainer'\]"):
        wrap_pod_spec({"containers": [container()]}, only=["ghost"])


## TFCluster


def test_tf_cluster_layout() -> None:
    cluster = TFCluster.parse("job", "chief:1, worker:2, ps:1", port=2222)
    assert cluster.size == 4
    assert [cluster.task(i) for i in range(4)] == [("chief", 0), ("worker", 0), ("worker", 1), ("ps", 0)]
    assert cluster.tf_config(2, "ns") == {
        "cluster": {
            "chief": ["job-0.job.ns.svc:2222"],
            "worker": ["job-1.job.ns.svc:2222", "job-2.job.ns.svc:2222"],
            "ps": ["job-3.job.ns.svc:2222"],
        },
        "task": {"type": "worker", "index": 1},
    }
    with pytest.raises(ValueError, match="index 4 is outside the job's 4 tasks"):
        cluster.task(4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"job_name": "Job", "roles": (("worker", 1),)}, "job_name 'Job' must be a DNS label"),
        ({"job_name": "j", "roles": ()}, "roles is empty"),
        ({"job_name": "j", "roles": (("boss", 1),)}, "unknown role 'boss'"),
        ({"job_name": "j", "roles": (("chief", 2),)}, "exactly one chief"),
        ({"job_name": "j", "roles": (("worker", 0),)}, "worker count 0 must be a positive integer"),
        ({"job_name": "j", "roles": (("worker", 1), ("worker", 1))}, "appears twice"),
        ({"job_name": "j", "roles": (("worker", 1),), "port": 0}, "port 0 must be between 1 and 65535"),
        ({"job_name": "j", "roles": (("worker", 1),), "service": "a.b"}, "service 'a.b' must be a DNS label"),
    ],
)
def test_tf_cluster_validation(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TFCluster(**kwargs)


@pytest.mark.parametrize("roles", ["chief", "chief:x", "chief:1,"])
def test_tf_cluster_parse_errors(roles: str) -> None:
    with pytest.raises(ValueError, match="is not 'role:count'"):
        TFCluster.parse("j", roles)


## The wrapped container, run: what the kubelet would do with it.


def _downward(quantity: str, divisor: str) -> str:
    """resourceFieldRef resolution: ceil(quantity / divisor), for the quantities used below."""
    units = {"m": Decimal("0.001"), "Gi": Decimal(2**30), "Mi": Decimal(2**20), "": Decimal(1)}

    def parse(q: str) -> Decimal:
        for suffix in ("Gi", "Mi", "m"):
            if q.endswith(suffix):
                return Decimal(q[: -len(suffix)]) * units[suffix]
        return Decimal(q)

    return str(math.ceil(parse(quantity) / parse(divisor)))


def test_wrapped_command_runs_the_helper_with_the_injected_limits(tmp_path: Path) -> None:
    """Resolve the Downward API env as the kubelet does and run the wrapped command for real."""
    wrapped = wrap_container(container(command=["env"], args=[]))
    limits = wrapped["resources"]["limits"]
    env = {"PATH": "/usr/bin:/bin", "GPUPLANE_PROC_ROOT": str(tmp_path), "GPUPLANE_CGROUP_ROOT": str(tmp_path)}
    (tmp_path / "self").mkdir()
    (tmp_path / "self" / "status").write_text("Cpus_allowed_list:\t0-7\n")
    for entry in wrapped["env"]:
        ref = entry["valueFrom"]["resourceFieldRef"]
        env[entry["name"]] = _downward(limits[ref["resource"].split(".")[1]], ref["divisor"])
    argv = [part.replace(SCRIPT_PATH, str(SCRIPT_FILE)) for part in wrapped["command"]]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, check=True)
    seen = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert env["GPUPLANE_CPU_LIMIT_MILLICORES"] == "1500"
    assert seen["GPUPLANE_DETECTED_CPU_MILLICORES"] == "1500"
    assert seen["GPUPLANE_DETECTED_MEMORY_BYTES"] == str(4 * 2**30)
    assert (seen["TF_NUM_INTRAOP_THREADS"], seen["TF_NUM_INTEROP_THREADS"]) == ("2", "1")
