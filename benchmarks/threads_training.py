"""Measure thread settings for distributed TensorFlow training under real CPU quotas, one process per task.

Why this exists: the runtime helper's inference rule (inter-op threads = 1 under a quota) hangs
parameter-server training on its first step (TensorFlow issue #38969, "Thread hang when setting
inter_op_parallelism_threads=1"), and a rule for one kind of work is never assumed for another
(docs/runtime.md). This script runs the example trainer (examples/training/mnist/train.py) as real
multi-process clusters on this machine, each task in its own cgroup with its pod's CPU quota (the dev
stack's `mnist` shapes: chief 1 CPU, 2 workers of 1 CPU, ps 0.5 CPU; mirrored: 3 workers of 1 CPU), for
each strategy and each thread setting:

- ``intra=ceil inter=1``: the inference rule (intra-op = the task's quota rounded up);
- ``intra=ceil inter=2``: the same with two inter-op threads;
- ``TF defaults``: no thread variables (TF sizes both pools from the CPUs it can see).

Every task of a run gets the same kind of setting. A run that does not finish within ``--hang-timeout``
seconds is recorded as hung, with the CPU its processes used over a few seconds at the end (a deadlock
idles, a slow run does not). Cases are shuffled in every repeat (interleaved) and medians of the chief's
training time (the loop only: TF's import is excluded) are reported, with the 1-minute load average seen
during each run. It also records what the helper itself exports inside each task's cgroup.

Run as root: ``python benchmarks/threads_training.py`` (6 to 10 minutes on 2 cores). Uses the
tensorflow-cpu venv of ``benchmarks/threads.py``. Results: ``benchmarks/results/threads_training.json``
and ``benchmarks/RESULTS_threads_training.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import _procs  # benchmarks/_procs.py: the process loop the training test shares
import threads  # benchmarks/threads.py: cgroups, clean environment, machine and version records

ROOT = threads.ROOT
TRAINER = ROOT / "examples" / "training" / "mnist" / "train.py"
MAKE_DATA = ROOT / "examples" / "training" / "mnist" / "make_data.py"

# (role, tasks, CPUs per task): the dev stack's `mnist` workload (stacks/Pulumi.dev.yaml) and a mirrored run
# of the same worker size.
LAYOUTS: dict[str, list[tuple[str, int, float]]] = {
    "parameterServer": [("chief", 1, 1.0), ("worker", 2, 1.0), ("ps", 1, 0.5)],
    "multiWorkerMirrored": [("worker", 3, 1.0)],
}
SETTINGS = ("intra=ceil inter=1", "intra=ceil inter=2", "TF defaults")


def thread_env(setting: str, cpus: float) -> dict[str, str]:
    """The thread variables of ``setting`` for a task limited to ``cpus``."""
    if setting == "TF defaults":
        return {}
    inter = setting.rsplit("=", 1)[1]
    return {"TF_NUM_INTRAOP_THREADS": str(max(1, math.ceil(cpus))), "TF_NUM_INTEROP_THREADS": inter}


def tasks(strategy: str) -> list[tuple[str, int, float]]:
    """(role, index, CPUs) of every task, chief first."""
    return [(role, i, cpus) for role, count, cpus in LAYOUTS[strategy] for i in range(count)]


def helper_env(strategy: str, role: str, index: int) -> dict[str, str]:
    """What the manifests give a training pod (JobSet layout), for the helper's --print."""
    roles = ",".join(f"{r}:{n}" for r, n, _ in LAYOUTS[strategy])
    return {"GPUPLANE_TF_ROLES": roles, "GPUPLANE_TF_ROLE": role, "JOB_COMPLETION_INDEX": str(index),
            "GPUPLANE_TF_JOB_NAME": "mnist-bench"}  # fmt: skip


def helper_threads(procs: Path, env: Mapping[str, str]) -> str:
    """The thread part of what the helper exports inside the cgroup of ``procs`` for a pod with ``env``."""
    script = 'echo $$ > "$1" && exec sh "$2" --print'
    done = subprocess.run(
        ["sh", "-c", script, "sh", str(procs), str(threads.HELPER)],
        env={**threads.clean_env(), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return threads.thread_part(found)


def cpu_seconds(pids: Sequence[int]) -> float:
    """User + system CPU seconds of the live processes among ``pids``."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def run_cluster(
    tf_python: Path,
    tree: threads.CgroupTree,
    strategy: str,
    setting: str,
    data_dir: Path,
    work: Path,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Start every task of one run in its cgroup, wait for the end (or the hang timeout), stop them all."""
    layout = tasks(strategy)
    ports = _procs.free_ports(len(layout))
    cluster: dict[str, list[str]] = {}
    for (role, _, _), port in zip(layout, ports, strict=True):
        cluster.setdefault(role, []).append(f"127.0.0.1:{port}")
    model_dir = Path(tempfile.mkdtemp(prefix="run-", dir=work))
    argv = [str(tf_python), str(TRAINER), f"--data-dir={data_dir}", f"--model-dir={model_dir}",
            f"--epochs={args.epochs}", f"--steps-per-epoch={args.steps}"]  # fmt: skip
    specs = []
    started = time.monotonic()
    load_before = float(Path("/proc/loadavg").read_text().split()[0])
    for role, index, _ in layout:
        tf_config = {"cluster": cluster, "task": {"type": role, "index": index}}
        env = {**threads.clean_env(), "TF_CONFIG": json.dumps(tf_config), "TF_CPP_MIN_LOG_LEVEL": "2",
               **thread_env(setting, dict((r, c) for r, _, c in LAYOUTS[strategy])[role])}  # fmt: skip
        label = f"{role}-{index}"
        # The task writes its pid into its cgroup, then becomes the trainer (same pid).
        script = 'echo $$ > "$1" && shift && exec "$@"'
        specs.append(_procs.Spec(label, ["sh", "-c", script, "sh", str(tree.procs(label)), *argv], env))
    procs = _procs.start(specs, model_dir / "logs")
    labels = [spec.label for spec in specs]
    waited = ["chief-0"] if "chief-0" in labels else labels
    result: dict[str, Any] = {"strategy": strategy, "setting": setting, "loadavg1_start": load_before}
    if procs.wait(waited, max(1.0, args.hang_timeout - (time.monotonic() - started))):
        result["wall_s"] = round(time.monotonic() - started, 1)
        result["exit_codes"] = [procs.exit_code(label) for label in waited]
    else:
        before = cpu_seconds(procs.pids)
        time.sleep(5)
        result["hung"] = True
        result["cpu_pct_at_timeout"] = round(100 * (cpu_seconds(procs.pids) - before) / 5, 1)
        result["wall_s"] = round(time.monotonic() - started, 1)
    result["loadavg1_end"] = float(Path("/proc/loadavg").read_text().split()[0])
    procs.stop()
    for label in labels:
        out = procs.log(label)
        for line in out.splitlines():
            if line.startswith("FINAL "):
                result["final"] = json.loads(line[len("FINAL ") :])
        if label in waited and procs.exit_code(label) not in (0, -9) and "final" not in result:
            result["error"] = f"{label}: {out[-1500:]}"
    if "final" in result:
        result["train_s"] = result["final"]["seconds"]
        result["test_accuracy"] = result["final"]["test_accuracy"]
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hang-repeats", type=int, default=2, help="repeats of the settings expected to hang")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=100, help="steps per epoch")
    parser.add_argument("--hang-timeout", type=float, default=120.0, help="seconds before a run counts as hung")
    parser.add_argument("--tf-venv", type=Path, default=threads.DEFAULT_VENV)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "threads_training.json")
    parser.add_argument("--markdown", type=Path, default=ROOT / "benchmarks" / "RESULTS_threads_training.md")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--shares", type=int, default=8192, help="v1 cpu.shares of the benchmark's cgroup")
    args = parser.parse_args(argv)

    found = threads.find_cpu_hierarchy()
    if isinstance(found, str):
        print(f"SKIPPED: benchmarks/threads_training.py cannot run here: {found}.", file=sys.stderr)
        return 0
    version, mount = found
    tf_python = threads.ensure_tf_python(args.tf_venv)
    rng = random.Random(args.seed)
    started = time.time()
    quotas = {f"{role}-{i}": cpus for s in LAYOUTS for role, i, cpus in tasks(s)}
    runs: list[dict[str, Any]] = []
    helper: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="gpuplane-train-bench-") as tmp:
        work = Path(tmp)
        data_dir = work / "data"
        subprocess.run([sys.executable, str(MAKE_DATA), f"--out={data_dir}"], check=True, capture_output=True)
        with threads.cgroup_tree(version, mount, quotas, args.shares) as tree:
            for strategy in LAYOUTS:
                helper[strategy] = {
                    f"{role}-{i}": helper_threads(tree.procs(f"{role}-{i}"), helper_env(strategy, role, i))
                    for role, i, _ in tasks(strategy)
                }
            cases = [(s, setting) for s in LAYOUTS for setting in SETTINGS]
            for repeat in range(max(args.repeats, args.hang_repeats)):
                order = [
                    c
                    for c in cases
                    if repeat < (args.hang_repeats if c == ("parameterServer", SETTINGS[0]) else args.repeats)
                ]
                rng.shuffle(order)
                for strategy, setting in order:
                    result = run_cluster(tf_python, tree, strategy, setting, data_dir, work, args)
                    result["repeat"] = repeat
                    runs.append(result)
                    outcome = "HUNG" if result.get("hung") else f"train {result.get('train_s', '?')} s"
                    print(
                        f"[{time.time() - started:5.0f}s] r{repeat} {strategy:<19} {setting:<19} {outcome} "
                        f"(wall {result['wall_s']} s, load {result['loadavg1_end']:.1f})"
                        + (f" ERROR {result['error'][-300:]}" if "error" in result else ""),
                        file=sys.stderr,
                    )
    report = {
        "summary": summarize(runs),
        "helper": helper,
        "machine": threads.machine(version),
        "versions": threads.versions(tf_python),
        "parameters": {
            "layouts": LAYOUTS,
            "epochs": args.epochs,
            "steps_per_epoch": args.steps,
            "batch_per_worker": 64,
            "repeats": args.repeats,
            "hang_repeats": args.hang_repeats,
            "hang_timeout_s": args.hang_timeout,
            "cpu_shares": args.shares,
            "period_us": threads.PERIOD_US,
            "wall_s": round(time.time() - started),
        },
        "runs": runs,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    threads.write_markdown(args.markdown, markdown(report))
    print(markdown(report))
    return 0


def summarize(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per strategy and setting: runs, hangs, median training seconds, spread, accuracy, load."""
    rows = []
    for strategy in LAYOUTS:
        for setting in SETTINGS:
            mine = [r for r in runs if r["strategy"] == strategy and r["setting"] == setting]
            if not mine:
                continue
            done = [float(r["train_s"]) for r in mine if "train_s" in r]
            rows.append(
                {
                    "strategy": strategy,
                    "setting": setting,
                    "runs": len(mine),
                    "hung": sum(1 for r in mine if r.get("hung")),
                    "failed": sum(1 for r in mine if "error" in r),
                    "median_train_s": threads.median(done),
                    "spread": threads.spread(done),
                    "median_wall_s": threads.median([float(r["wall_s"]) for r in mine if "train_s" in r]),
                    "cpu_pct_when_hung": [r["cpu_pct_at_timeout"] for r in mine if r.get("hung")],
                    "test_accuracy": threads.median([float(r["test_accuracy"]) for r in mine if "test_accuracy" in r]),
                    "median_load": threads.median([float(r["loadavg1_end"]) for r in mine]),
                }
            )
    return rows


def markdown(report: Mapping[str, Any]) -> str:
    """The results file: the table first, then where and how it was measured."""
    m, v, p = report["machine"], report["versions"], report["parameters"]
    lines = [
        "# Thread settings for distributed TensorFlow training under CPU quotas: measured",
        "",
        "Generated by `benchmarks/threads_training.py` (raw runs in `benchmarks/results/threads_training.json`).",
        f"`examples/training/mnist/train.py`, {p['epochs']} epochs of {p['steps_per_epoch']} steps, batch "
        f"{p['batch_per_worker']} per worker, every task a process in its own cgroup with its pod's CPU quota. "
        "Training seconds: the chief's training loop and test evaluation (TF's import excluded), median of "
        "interleaved repeats. **Measured under contention**: other sessions shared the 2 cores (load column).",
        "",
        "| strategy | setting (every task) | runs | hung | median training s | spread | median wall s "
        "| test accuracy | median load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["summary"]:
        hung = f"{r['hung']}" + (
            f" (CPU {', '.join(f'{c:g}%' for c in r['cpu_pct_when_hung'])} at the timeout)" if r["hung"] else ""
        )
        if r["runs"] == r["hung"]:
            figures = "- | - | - | -"
        else:
            figures = (
                f"{r['median_train_s']:.1f} | {r['spread']:.0%} | {r['median_wall_s']:.1f} | {r['test_accuracy']:.3f}"
            )
        lines.append(
            f"| {r['strategy']} | {r['setting']} | {r['runs']} | {hung} | {figures} | {r['median_load']:.1f} |"
        )
    lines += [
        "",
        "Hung: no result within the hang timeout; the CPU figure is what all the run's processes used together",
        "over 5 s at the timeout (a deadlock idles). Spread: (max - min) / median of the finished runs.",
        "",
        "What the helper exports in each task's cgroup (a training pod: `GPUPLANE_TF_ROLES` set):",
        "",
    ]
    for strategy, by_task in report["helper"].items():
        lines.append(f"- {strategy}: " + "; ".join(f"{task}: {found}" for task, found in by_task.items()))
    layouts = "; ".join(
        f"{s}: " + ", ".join(f"{role} x{n} at {cpus:g} CPU" for role, n, cpus in layout)
        for s, layout in p["layouts"].items()
    )
    lines += [
        "",
        "## Where",
        "",
        f"- CPU: {m['cpu_model']}, {m['usable_cpus']} usable CPUs, {m['memory_gib']} GiB memory, "
        f"kernel {m['kernel']}, cgroup v{m['cgroup_version']} quotas (period {p['period_us']} us).",
        f"- TensorFlow {v['tensorflow']} (tensorflow-cpu), Keras {v['keras']}, NumPy {v['numpy']}, "
        f"Python {v['python']}.",
        f"- Tasks: {layouts}. All tasks on one machine, on 127.0.0.1 ports.",
        f"- Repeats: {p['repeats']} ({p['hang_repeats']} for the setting that hangs), hang timeout "
        f"{p['hang_timeout_s']:g} s; cpu.shares {p['cpu_shares']} on the benchmark's cgroup.",
        f"- Wall time: {p['wall_s']} s.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
