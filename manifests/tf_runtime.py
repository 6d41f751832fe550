"""Wrap TensorFlow containers with the runtime helper: the manifest side of ``gpuplane-entrypoint.sh``.

Why: TensorFlow sizes its thread pools from the node's CPUs, not the container's limit (up to 30x slower,
several times the memory). The helper script fixes that inside the container; this module makes every
TensorFlow container we deploy use it: the ConfigMap that carries the script, the volume that mounts it,
the command that runs the real command through it, and the Downward API values it reads. It also refuses
containers without CPU and memory limits, because without limits the Downward API reports the node's
capacity, which is the very trap the helper exists for.

Pure Python building plain dicts; no Pulumi import. See docs/runtime.md.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from importlib import resources
from typing import Any, Final

SCRIPT_NAME: Final = "gpuplane-entrypoint.sh"
CONFIGMAP_NAME: Final = "gpuplane-runtime"
VOLUME_NAME: Final = "gpuplane-runtime"
MOUNT_PATH: Final = "/opt/gpuplane"
SCRIPT_PATH: Final = f"{MOUNT_PATH}/{SCRIPT_NAME}"
# Run through /bin/sh, not as an executable: ConfigMap file modes are not honoured everywhere (and
# noexec mounts exist); every image we wrap, tensorflow/serving included, has /bin/sh.
ENTRYPOINT: Final[tuple[str, ...]] = ("/bin/sh", SCRIPT_PATH, "--")

## The helper's inputs (documented in the script's --help and docs/runtime.md).
ENV_CPU_LIMIT: Final = "GPUPLANE_CPU_LIMIT_MILLICORES"
ENV_MEMORY_LIMIT: Final = "GPUPLANE_MEMORY_LIMIT_BYTES"
ENV_GPU_SHARED: Final = "GPUPLANE_GPU_SHARED"
ENV_GPU_FRACTION: Final = "GPUPLANE_GPU_MEMORY_FRACTION"
ENV_TF_ROLES: Final = "GPUPLANE_TF_ROLES"
ENV_TF_JOB_NAME: Final = "GPUPLANE_TF_JOB_NAME"
ENV_TF_SERVICE: Final = "GPUPLANE_TF_SERVICE"
ENV_TF_NAMESPACE: Final = "GPUPLANE_TF_NAMESPACE"
ENV_TF_PORT: Final = "GPUPLANE_TF_PORT"
ENV_TF_ROLE: Final = "GPUPLANE_TF_ROLE"
ENV_GPU_CHECK: Final = "GPUPLANE_GPU_CHECK"
ENV_GPU_MIN_DRIVER: Final = "GPUPLANE_GPU_MIN_DRIVER"
ENV_IMAGE: Final = "GPUPLANE_IMAGE"
# What the helper checks in a container given GPUs (docs/runtime.md, "GPU check"): `devices` needs no Python
# (device nodes, the driver library, its version); `tensorflow` adds TensorFlow's own device list.
GPU_CHECK_DEVICES: Final = "devices"
GPU_CHECK_TENSORFLOW: Final = "tensorflow"

TF_ROLES: Final = ("chief", "worker", "ps", "evaluator")
DEFAULT_TF_PORT: Final = 2222

_DNS_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
# A Kubernetes quantity (resource.Quantity): a signed decimal with an optional suffix.
_QUANTITY = re.compile(r"^(?P<num>[+-]?(\d+\.?\d*|\.\d+))(?P<suffix>[numkMGTPE]|[KMGTPE]i|[eE][+-]?\d+)?$")


def runtime_script() -> str:
    """The helper script's text, read from the installed package (the single copy there is)."""
    return resources.files("gpuplane.manifests").joinpath("runtime", SCRIPT_NAME).read_text(encoding="utf-8")


def runtime_configmap(
    namespace: str, *, name: str = CONFIGMAP_NAME, labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The ConfigMap that carries the helper; one per namespace that runs wrapped containers.

    Args:
        namespace: where the wrapped pods run (a ConfigMap volume only reads its own namespace).
        name: the ConfigMap's name; default ``gpuplane-runtime``. Pass the same to ``wrap_container``.
        labels: extra labels; ``app.kubernetes.io/name: gpuplane-runtime`` and
            ``app.kubernetes.io/managed-by: gpuplane`` are always set.

    """
    _check_dns_label("namespace", namespace)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                **dict(labels or {}),
                "app.kubernetes.io/name": "gpuplane-runtime",
                "app.kubernetes.io/managed-by": "gpuplane",
            },
        },
        "data": {SCRIPT_NAME: runtime_script()},
    }


def runtime_volume(configmap_name: str = CONFIGMAP_NAME) -> dict[str, Any]:
    """The pod volume that mounts the helper's ConfigMap (read-only, mode 0555)."""
    return {
        "name": VOLUME_NAME,
        "configMap": {
            "name": configmap_name,
            "defaultMode": 0o555,
            "items": [{"key": SCRIPT_NAME, "path": SCRIPT_NAME}],
        },
    }


@dataclass(frozen=True)
class TFCluster:
    """The layout of a distributed TensorFlow training run as one Indexed Job.

    Pod ``<job_name>-<i>`` gets ``JOB_COMPLETION_INDEX=i`` from Kubernetes; indexes are handed to the
    roles in the order given, so ``(("chief", 1), ("worker", 2), ("ps", 1))`` makes index 0 the chief,
    1 and 2 workers 0 and 1, and 3 ps 0. Put the chief first: a Job ``successPolicy`` of
    ``succeededIndexes: "0"`` then ends the Job when the chief finishes (ps and workers never exit).
    Addresses are ``<job_name>-<i>.<service>.<namespace>.svc:<port>`` through a headless Service.

    Args:
        job_name: the Indexed Job's name (a DNS label: it prefixes every pod hostname).
        roles: ``(role, count)`` pairs in index order; roles are chief (at most one), worker, ps,
            evaluator (which gets a task but, as in TensorFlow and Kubeflow, is not in the cluster).
        service: the headless Service (``spec.template.spec.subdomain``); default ``job_name``.
        port: the port every task listens on; default 2222 (Kubeflow's TFJob port).

    """

    job_name: str
    roles: tuple[tuple[str, int], ...]
    service: str | None = None
    port: int = DEFAULT_TF_PORT
    jobset: bool = False
    """JobSet layout: one Indexed Job per role; `job_name` is the JobSet's name and task i of role r is
    pod `<job_name>-<r>-0-<i>` (JobSet names Jobs `<jobset>-<replicatedJob>-<jobIndex>`)."""

    def __post_init__(self) -> None:
        _check_dns_label("TFCluster.job_name", self.job_name)
        if self.service is not None:
            _check_dns_label("TFCluster.service", self.service)
        if not 1 <= self.port <= 65535:
            raise ValueError(f"TFCluster.port {self.port} must be between 1 and 65535")
        if not self.roles:
            raise ValueError(f"TFCluster.roles is empty; give (role, count) pairs with roles from {TF_ROLES}")
        seen: set[str] = set()
        for role, count in self.roles:
            if role not in TF_ROLES:
                raise ValueError(f"TFCluster.roles: unknown role {role!r}, must be one of: {TF_ROLES}")
            if role in seen:
                raise ValueError(f"TFCluster.roles: role {role!r} appears twice")
            seen.add(role)
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"TFCluster.roles: {role} count {count!r} must be a positive integer")
            if role == "chief" and count != 1:
                raise ValueError(f"TFCluster.roles: TensorFlow allows exactly one chief, got {count}")

    @classmethod
    def parse(cls, job_name: str, roles: str, **kwargs: Any) -> TFCluster:
        """Build from the helper's own notation, e.g. ``"chief:1,worker:2,ps:1"``."""
        pairs = []
        for item in roles.split(","):
            role, sep, count = item.strip().partition(":")
            if not sep or not count.isdigit():
                raise ValueError(f"TFCluster roles {roles!r}: {item!r} is not 'role:count'")
            pairs.append((role, int(count)))
        return cls(job_name, tuple(pairs), **kwargs)

    @property
    def size(self) -> int:
        """How many pods: the Job's ``completions`` and ``parallelism`` (all tasks run at once)."""
        return sum(count for _, count in self.roles)

    @property
    def service_name(self) -> str:
        """The headless Service the addresses go through."""
        return self.service or self.job_name

    def roles_env(self) -> str:
        """The value of ``GPUPLANE_TF_ROLES``."""
        return ",".join(f"{role}:{count}" for role, count in self.roles)

    def host(self, role: str, index: int) -> str:
        """The pod hostname of task `index` of `role`."""
        if self.jobset:
            return f"{self.job_name}-{role}-0-{index}"
        first = 0
        for name, count in self.roles:
            if name == role:
                return f"{self.job_name}-{first + index}"
            first += count
        raise ValueError(f"role {role!r} is not in {self.roles_env()}")

    def task(self, index: int) -> tuple[str, int]:
        """(role, index within the role) of the pod with ``JOB_COMPLETION_INDEX`` ``index``."""
        first = 0
        for role, count in self.roles:
            if first <= index < first + count:
                return role, index - first
            first += count
        raise ValueError(f"index {index} is outside the job's {self.size} tasks ({self.roles_env()})")

    def tf_config(self, index: int, namespace: str | None = None, role: str | None = None) -> dict[str, Any]:
        """The ``TF_CONFIG`` the helper builds for pod ``index`` (same keys, same order).

        Without ``namespace`` the addresses rely on the pod's DNS search path (``<host>.<service>``).
        In the JobSet layout ``role`` names the pod's role and ``index`` is its ``JOB_COMPLETION_INDEX``.
        """
        domain = f".{self.service_name}" + (f".{namespace}.svc" if namespace else "")
        cluster: dict[str, list[str]] = {}
        for name, count in self.roles:
            if name != "evaluator":
                cluster[name] = [f"{self.host(name, i)}{domain}:{self.port}" for i in range(count)]
        if self.jobset:
            counts = dict(self.roles)
            if role not in counts or not 0 <= index < counts[role]:
                raise ValueError(f"task {index} of role {role!r} is not in {self.roles_env()}")
            task_role, role_index = role, index
        else:
            task_role, role_index = self.task(index)
        return {"cluster": cluster, "task": {"type": task_role, "index": role_index}}

    def tf_config_json(self, index: int, namespace: str | None = None, role: str | None = None) -> str:
        """``tf_config`` serialized exactly as the helper writes it."""
        return json.dumps(self.tf_config(index, namespace, role), separators=(",", ":"))


def wrap_container(
    container: Mapping[str, Any],
    *,
    command: Sequence[str] | None = None,
    configmap_name: str = CONFIGMAP_NAME,
    gpu_shared: bool = False,
    gpu_memory_fraction: float | None = None,
    tf_cluster: TFCluster | None = None,
    tf_role: str | None = None,
    gpu_check: str | None = None,
    min_driver: int | None = None,
) -> dict[str, Any]:
    """Return a copy of ``container`` that runs its real command through the runtime helper.

    The container must set ``resources.limits.cpu`` and ``resources.limits.memory``. The helper needs
    to know what to exec, and Kubernetes cannot tell it what the image's ENTRYPOINT is, so either the
    container has a ``command`` (its ``args`` follow it, as in Kubernetes) or ``command`` is given here
    (the image's ENTRYPOINT, e.g. ``["tensorflow_model_server"]``; the container's ``args`` follow it).
    Env entries the container already has are kept and win over the ones added here.
    Add ``runtime_volume(configmap_name)`` to the pod, or use ``wrap_pod_spec``.

    Args:
        container: a Kubernetes container spec (plain dict); not modified.
        command: the real command when the container has none; default ``None``.
        configmap_name: the helper's ConfigMap; default ``gpuplane-runtime``.
        gpu_shared: the GPU is shared with other processes (time-slicing, MPS): the helper then sets
            ``TF_FORCE_GPU_ALLOW_GROWTH=true``; default ``False``.
        gpu_memory_fraction: this process's share of GPU memory, in (0, 1]; passed to
            ``tensorflow_model_server`` as ``--per_process_gpu_memory_fraction``; below 1 it also means
            shared. Default ``None`` (TF takes all GPU memory).
        tf_cluster: the training layout, to build ``TF_CONFIG``; default ``None`` (not training).
        tf_role: the container's role in a JobSet-layout ``tf_cluster``; default ``None``.
        gpu_check: ``"devices"`` or ``"tensorflow"``: the helper refuses to start the command when the
            container cannot use its GPU (exit 3, one message naming the cause and the image); default
            ``None`` (no check: a CPU container, or the workload opted out).
        min_driver: the least NVIDIA driver major the image's CUDA needs, checked with ``gpu_check``.

    Raises:
        ValueError: naming the container, when limits are missing or the command is unknown.

    """
    name = str(container.get("name") or "")
    if not name:
        raise ValueError("wrap_container: the container has no name")
    where = f"container {name!r}"
    limits = (container.get("resources") or {}).get("limits") or {}
    missing = [r for r in ("cpu", "memory") if r not in limits]
    if missing:
        raise ValueError(
            f"{where}: resources.limits.{' and resources.limits.'.join(missing)} must be set: without "
            "limits the Downward API reports the node's capacity and TensorFlow sizes its threads for the "
            "whole node"
        )
    for resource in ("cpu", "memory"):
        _check_positive_quantity(f"{where}: resources.limits.{resource}", limits[resource])

    own_command = list(container.get("command") or [])
    if own_command[: len(ENTRYPOINT)] == list(ENTRYPOINT):
        raise ValueError(f"{where} is already wrapped with the runtime helper")
    if own_command and command is not None:
        raise ValueError(f"{where}: has command {own_command} and command={list(command)} was given too; pass only one")
    real = own_command or list(command or [])
    if not real:
        raise ValueError(
            f"{where}: cannot tell what to exec: the container has no 'command' and the image's "
            "ENTRYPOINT is unknown here; pass command=[...] (e.g. ['tensorflow_model_server'])"
        )
    if not all(isinstance(part, str) and part for part in real):
        raise ValueError(f"{where}: command {real!r} must be non-empty strings")
    if gpu_memory_fraction is not None and not 0 < gpu_memory_fraction <= 1:
        raise ValueError(f"{where}: gpu_memory_fraction {gpu_memory_fraction} must be in (0, 1]")
    if gpu_check not in (None, GPU_CHECK_DEVICES, GPU_CHECK_TENSORFLOW):
        raise ValueError(
            f"{where}: gpu_check {gpu_check!r} must be None, {GPU_CHECK_DEVICES!r} or {GPU_CHECK_TENSORFLOW!r}"
        )

    wrapped = copy.deepcopy(dict(container))
    wrapped["command"] = [*ENTRYPOINT, *real]  # the container's args, if any, follow as before

    env: list[dict[str, Any]] = list(wrapped.get("env") or [])
    present = {entry.get("name") for entry in env}

    def add(entry: dict[str, Any]) -> None:
        if entry["name"] not in present:
            env.append(entry)
            present.add(entry["name"])

    add(_resource_env(ENV_CPU_LIMIT, name, "limits.cpu", "1m"))
    add(_resource_env(ENV_MEMORY_LIMIT, name, "limits.memory", "1"))
    if gpu_shared:
        add({"name": ENV_GPU_SHARED, "value": "true"})
    if gpu_memory_fraction is not None:
        add({"name": ENV_GPU_FRACTION, "value": repr(float(gpu_memory_fraction))})
    if gpu_check is not None:
        add({"name": ENV_GPU_CHECK, "value": gpu_check})
        add({"name": ENV_IMAGE, "value": str(container.get("image") or "")})
        if min_driver is not None:
            add({"name": ENV_GPU_MIN_DRIVER, "value": str(min_driver)})
    if tf_cluster is not None:
        add({"name": ENV_TF_ROLES, "value": tf_cluster.roles_env()})
        add({"name": ENV_TF_JOB_NAME, "value": tf_cluster.job_name})
        add({"name": ENV_TF_SERVICE, "value": tf_cluster.service_name})
        add({"name": ENV_TF_NAMESPACE, "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}})
        add({"name": ENV_TF_PORT, "value": str(tf_cluster.port)})
        if tf_cluster.jobset:
            if tf_role not in dict(tf_cluster.roles):
                raise ValueError(
                    f"{where}: tf_role {tf_role!r} must be one of the cluster's roles {tf_cluster.roles_env()}"
                )
            add({"name": ENV_TF_ROLE, "value": str(tf_role)})
    wrapped["env"] = env

    mounts: list[dict[str, Any]] = list(wrapped.get("volumeMounts") or [])
    if any(m.get("mountPath") == MOUNT_PATH or m.get("name") == VOLUME_NAME for m in mounts):
        raise ValueError(f"{where}: already mounts {VOLUME_NAME!r} or something at {MOUNT_PATH}")
    mounts.append({"name": VOLUME_NAME, "mountPath": MOUNT_PATH, "readOnly": True})
    wrapped["volumeMounts"] = mounts
    return wrapped


def wrap_pod_spec(
    pod_spec: Mapping[str, Any],
    *,
    commands: Mapping[str, Sequence[str]] | None = None,
    only: Sequence[str] | None = None,
    configmap_name: str = CONFIGMAP_NAME,
    gpu_shared: bool = False,
    gpu_memory_fraction: float | None = None,
    tf_cluster: TFCluster | None = None,
    tf_role: str | None = None,
    gpu_check: str | None = None,
    min_driver: int | None = None,
) -> dict[str, Any]:
    """Return a copy of ``pod_spec`` whose containers run through the helper, with its volume added.

    Args:
        pod_spec: a Kubernetes PodSpec (plain dict); not modified.
        commands: real commands by container name, for containers without a ``command``.
        only: names of the containers to wrap; default all of ``containers`` (never init containers).
        configmap_name: as in ``wrap_container``.
        gpu_shared: as in ``wrap_container``, for every wrapped container.
        gpu_memory_fraction: as in ``wrap_container``, for every wrapped container.
        tf_cluster: as in ``wrap_container``.
        tf_role: as in ``wrap_container``.
        gpu_check: as in ``wrap_container``, for every wrapped container.
        min_driver: as in ``wrap_container``.

    Raises:
        ValueError: for an unknown container name, or as ``wrap_container`` does.

    """
    commands = dict(commands or {})
    containers = list(pod_spec.get("containers") or [])
    names = [str(c.get("name")) for c in containers]
    wanted = list(only) if only is not None else names
    unknown = sorted((set(wanted) | set(commands)) - set(names))
    if unknown:
        raise ValueError(f"wrap_pod_spec: no container named {unknown}; the pod has {names}")
    spec = copy.deepcopy(dict(pod_spec))
    spec["containers"] = [
        wrap_container(
            c,
            command=commands.get(str(c.get("name"))),
            configmap_name=configmap_name,
            gpu_shared=gpu_shared,
            gpu_memory_fraction=gpu_memory_fraction,
            tf_cluster=tf_cluster,
            tf_role=tf_role,
            gpu_check=gpu_check,
            min_driver=min_driver,
        )
        if c.get("name") in wanted
        else copy.deepcopy(c)
        for c in containers
    ]
    volumes = list(spec.get("volumes") or [])
    if any(v.get("name") == VOLUME_NAME for v in volumes):
        raise ValueError(f"wrap_pod_spec: the pod already has a volume named {VOLUME_NAME!r}")
    spec["volumes"] = [*volumes, runtime_volume(configmap_name)]
    return spec


def _resource_env(env_name: str, container: str, resource: str, divisor: str) -> dict[str, Any]:
    # divisor 1m for CPU: the exact limit in millicores (divisor 1 would round 1.5 CPUs up to 2).
    ref = {"containerName": container, "resource": resource, "divisor": divisor}
    return {"name": env_name, "valueFrom": {"resourceFieldRef": ref}}


def _check_dns_label(what: str, value: str) -> None:
    if not isinstance(value, str) or not _DNS_LABEL.match(value):
        raise ValueError(
            f"{what} {value!r} must be a DNS label: lowercase letters, digits and '-', at most 63 characters"
        )


def _check_positive_quantity(what: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"{what} {value!r} is not a Kubernetes quantity")
    match = _QUANTITY.match(str(value).strip())
    try:
        number = Decimal(match.group("num")) if match else None
    except InvalidOperation:
        number = None
    if number is None:
        raise ValueError(f"{what} {value!r} is not a Kubernetes quantity (e.g. '1500m', '2', '4Gi')")
    if number <= 0:
        raise ValueError(f"{what} {value!r} must be positive")
