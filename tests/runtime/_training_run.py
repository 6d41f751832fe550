"""Run a rendered training run's pods as processes on this machine, each through the runtime helper.

What stays as rendered: each pod's command (the helper, then the program with its arguments), its
environment (Downward API values resolved the way the kubelet would, from the container's limits and the
namespace), `JOB_COMPLETION_INDEX` and hostname. What a test must change to run it here, and nothing more:
- volume mount paths (`/data`, `/logs`) point at folders of the test, `python` at the TensorFlow venv and
  the helper's ConfigMap path at the repository's script;
- `TF_CONFIG` (a test-only override): the helper's own `TF_CONFIG` is read first (`--print`, checked by
  the tests against the rendered layout), then every address in it is mapped to a port on 127.0.0.1 and
  the result is given to the task as a `TF_CONFIG` of its own, which the helper keeps. In a cluster each
  pod has its own address; here all tasks share one host.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpuplane.manifests import tf_runtime
from tests.runtime._support import HELPER, base_env, parse_lines, run_helper

# The process loop the training benchmark uses too (benchmarks/ is a folder of scripts, not a package).
_spec = importlib.util.spec_from_file_location(
    "benchmarks_procs", Path(__file__).resolve().parents[2] / "benchmarks" / "_procs.py"
)
assert _spec is not None and _spec.loader is not None
_procs = sys.modules.setdefault("benchmarks_procs", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(_procs)  # registered first: its dataclasses look their module up
free_ports = _procs.free_ports

_SUFFIX = {"m": Decimal("0.001"), "k": Decimal(1000), "M": Decimal(10**6), "G": Decimal(10**9),
           "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30), "Ti": Decimal(2**40)}  # fmt: skip


def quantity(text: str) -> Decimal:
    """A Kubernetes quantity such as `500m`, `2`, `2Gi` as a number."""
    for suffix in sorted(_SUFFIX, key=len, reverse=True):
        if text.endswith(suffix):
            return Decimal(text[: -len(suffix)]) * _SUFFIX[suffix]
    return Decimal(text)


@dataclass
class Task:
    """One pod of the run: its role, index and what its container runs with."""

    role: str
    index: int
    hostname: str
    command: list[str]
    env: dict[str, str]
    mounts: dict[str, str]  # mount path -> volume name
    tf_config: dict[str, Any] = field(default_factory=dict)


def resolve_env(container: Mapping[str, Any], namespace: str) -> dict[str, str]:
    """The container's env as the kubelet resolves it (the Downward API fields gpuplane uses)."""
    limits = container["resources"]["limits"]
    out: dict[str, str] = {}
    for entry in container.get("env", []):
        if "value" in entry:
            out[entry["name"]] = entry["value"]
            continue
        source = entry["valueFrom"]
        if "resourceFieldRef" in source:
            ref = source["resourceFieldRef"]
            value = quantity(str(limits[ref["resource"].removeprefix("limits.")])) / quantity(ref.get("divisor", "1"))
            out[entry["name"]] = str(int(value.to_integral_value(rounding="ROUND_CEILING")))
        elif source.get("fieldRef", {}).get("fieldPath") == "metadata.namespace":
            out[entry["name"]] = namespace
        else:
            raise AssertionError(f"env {entry['name']}: a source this harness cannot resolve: {source}")
    return out


def tasks(jobset: Mapping[str, Any]) -> list[Task]:
    """Every training pod of a rendered JobSet (the data import, if any, is not a training task)."""
    run, namespace = jobset["metadata"]["name"], jobset["metadata"]["namespace"]
    out = []
    for rjob in jobset["spec"]["replicatedJobs"]:
        if rjob["name"] == "data-import":
            continue
        job = rjob["template"]["spec"]
        pod = job["template"]["spec"]
        (container,) = pod["containers"]
        for index in range(job["completions"]):
            env = resolve_env(container, namespace)
            env.update({"JOB_COMPLETION_INDEX": str(index), "HOSTNAME": f"{run}-{rjob['name']}-0-{index}"})
            out.append(
                Task(
                    role=rjob["name"],
                    index=index,
                    hostname=env["HOSTNAME"],
                    command=[*container["command"], *container.get("args", [])],
                    env=env,
                    mounts={m["mountPath"]: m["name"] for m in container["volumeMounts"]},
                )
            )
    return out


def local_argv(task: Task, volumes: Mapping[str, Path], python: Path) -> list[str]:
    """The container's command with the helper, `python` and the volume paths mapped onto this machine."""
    argv = list(task.command)
    assert argv[: len(tf_runtime.ENTRYPOINT)] == list(tf_runtime.ENTRYPOINT), argv
    argv[1] = str(HELPER)
    out = []
    for arg in argv:
        mapped = str(python) if arg == "python" else arg
        for mount, volume in task.mounts.items():
            if volume in volumes:
                mapped = mapped.replace(f"{mount}/", f"{volumes[volume]}/")
        out.append(mapped)
    return out


def helper_view(task: Task) -> dict[str, str]:
    """What the helper exports for this pod (`--print` with its rendered environment)."""
    done = run_helper(["--print"], base_env(**task.env))
    assert done.returncode == 0, done.stderr
    return parse_lines(done.stdout)


def local_tf_config(views: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """Each task's helper-built TF_CONFIG with every address mapped to its own port on 127.0.0.1."""
    configs = [json.loads(view["TF_CONFIG"]) for view in views]
    addresses = sorted({a for c in configs for members in c["cluster"].values() for a in members})
    local = dict(zip(addresses, (f"127.0.0.1:{p}" for p in free_ports(len(addresses))), strict=True))
    return [
        {"cluster": {r: [local[a] for a in m] for r, m in c["cluster"].items()}, "task": c["task"]} for c in configs
    ]


@dataclass
class Cluster:
    """The started processes of one run, looked up by role and index (`benchmarks/_procs.py` runs them)."""

    tasks: list[Task]
    procs: Any  # _procs.Procs (loaded by path)

    def wait(self, roles: Sequence[str], timeout: float) -> bool:
        """Wait until every task of `roles` has exited; False when `timeout` seconds pass first."""
        return bool(self.procs.wait([label(t) for t in self.tasks if t.role in roles], timeout))

    def wait_for_line(self, role: str, prefix: str, timeout: float) -> bool:
        """Wait until task 0 of `role` prints a line starting with `prefix`; False after `timeout` s or its exit."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(line.startswith(prefix) for line in self.log(role).splitlines()):
                return True
            if self.exit_code(role) is not None:
                return False
            time.sleep(0.5)
        return False

    def log(self, role: str, index: int = 0) -> str:
        return str(self.procs.log(f"{role}-{index}"))

    def exit_code(self, role: str, index: int = 0) -> int | None:
        code: int | None = self.procs.exit_code(f"{role}-{index}")
        return code

    def logs(self) -> str:
        """The tail of every task's output, for failure messages."""
        return "\n".join(f"--- {label(t)}:\n{self.procs.log(label(t))[-1500:]}" for t in self.tasks)

    def stop(self) -> None:
        """Kill every process group of the run (the helper execs, so the group is the task's)."""
        self.procs.stop()


def label(task: Task) -> str:
    return f"{task.role}-{task.index}"


def start(
    run_tasks: Sequence[Task],
    volumes: Mapping[str, Path],
    python: Path,
    logs: Path,
    extra_env: Mapping[str, str] | None = None,
) -> Cluster:
    """Start every task through the helper with its rendered env, its local TF_CONFIG and `extra_env`."""
    configs = local_tf_config([helper_view(t) for t in run_tasks])
    # TensorFlow's AutoGraph leaves a file per converted function under TMPDIR: the run's folder, not /tmp.
    scratch = logs / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    specs = []
    for task, tf_config in zip(run_tasks, configs, strict=True):
        task.tf_config = tf_config
        env = base_env(
            **task.env,
            TF_CONFIG=json.dumps(tf_config),
            TF_CPP_MIN_LOG_LEVEL="2",
            TMPDIR=str(scratch),
            **(extra_env or {}),
        )
        specs.append(_procs.Spec(label(task), local_argv(task, volumes, python), env))
    return Cluster(list(run_tasks), _procs.start(specs, logs))
