"""TensorFlow really runs with the thread counts the helper exports (installs tensorflow-cpu; slow).

``tf.config.threading.get_intra_op_parallelism_threads()`` reports only values set through that Python
API (it returns 0, "let the runtime decide", when TF_NUM_* configure the pools), so the test counts the
threads of the process instead. TensorFlow 2.20 names none of them (2.21 names the inter-op pool's
``tf_Compute``), so pools are told apart by differences: every thread more in a pool is one thread more
in the process, against a run with exactly one intra-op and one inter-op thread.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime._support import ROOT, FakeHost, base_env, parse_lines, run_helper

# benchmarks/ is a folder of scripts, not a package: its venv maker is loaded from its file. Shared with the
# thread benchmarks and `make check`, so the wheel is installed once per machine (git-ignored).
_spec = importlib.util.spec_from_file_location("benchmarks_tfvenv", ROOT / "benchmarks" / "tfvenv.py")
assert _spec is not None and _spec.loader is not None
tfvenv = sys.modules.setdefault("benchmarks_tfvenv", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(tfvenv)
TF_VERSION = tfvenv.TF_VERSION

PROBE = """
import json, os
import tensorflow as tf
x = tf.random.uniform((256, 256))
@tf.function
def f(a):
    return tf.matmul(a, a) + tf.reduce_sum(a)
f(x).numpy()
print("PROBE " + json.dumps({
    "threads": len(os.listdir("/proc/self/task")),
    "getter_intra": tf.config.threading.get_intra_op_parallelism_threads(),
    "version": tf.__version__,
}))
"""

pytestmark = pytest.mark.tensorflow

TRAINING_POD = {"GPUPLANE_TF_ROLES": "chief:1,worker:2,ps:1", "GPUPLANE_TF_ROLE": "ps",
                "GPUPLANE_TF_JOB_NAME": "mnist-1a2b3c4d", "JOB_COMPLETION_INDEX": "0"}  # fmt: skip


@pytest.fixture(scope="module")
def tf_python() -> Path:
    # pytest-xdist runs the TensorFlow modules in parallel workers: one makes the venv while the others wait
    # on its lock, then find it ready (`make check` makes it before the tests start).
    try:
        return tfvenv.ensure(tfvenv.VENV)
    except tfvenv.TFVenvError as exc:
        pytest.skip(str(exc))


def probe(tf_python: Path, env: dict[str, str], through_helper: bool, tmp: Path) -> dict[str, int | str]:
    argv = [str(tf_python), "-c", PROBE]
    # AutoGraph writes the converted `tf.function` as a file under TMPDIR and leaves it there: the test's own
    # folder, not the machine's /tmp (one file per probe, every run).
    env = {**env, "TF_CPP_MIN_LOG_LEVEL": "3", "TMPDIR": str(tmp)}
    done = (
        run_helper(argv, env, timeout=300)
        if through_helper
        else subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("PROBE "))
    return dict(json.loads(line[len("PROBE ") :]))


def test_tensorflow_uses_the_exported_thread_counts(tf_python: Path, tmp_path: Path) -> None:
    host = FakeHost(tmp_path)
    host.v2("/")
    host.write("/sys/fs/cgroup/cpu.max", "350000 100000\n")  # 3.5 CPUs of 8
    host.affinity("0-7")
    serving_env = base_env(**host.env)
    training_env = base_env(**host.env, **TRAINING_POD)
    exported = parse_lines(run_helper(["--print"], serving_env).stdout)
    assert (exported["TF_NUM_INTRAOP_THREADS"], exported["TF_NUM_INTEROP_THREADS"]) == ("4", "1")
    exported = parse_lines(run_helper(["--print"], training_env).stdout)
    assert (exported["TF_NUM_INTRAOP_THREADS"], exported["TF_NUM_INTEROP_THREADS"]) == ("4", "2")

    one = probe(tf_python, base_env(TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1"), False, tmp_path)
    serving = probe(tf_python, serving_env, True, tmp_path)
    training = probe(tf_python, training_env, True, tmp_path)
    assert serving["version"] == TF_VERSION
    assert int(serving["threads"]) - int(one["threads"]) == (4 - 1) + (1 - 1)
    assert int(training["threads"]) - int(serving["threads"]) == 2 - 1  # the training rule's second inter-op thread
    # The Python getter does not see environment-configured pools (documented above).
    assert serving["getter_intra"] == 0


def test_tensorflow_defaults_kept_without_a_limit(tf_python: Path, tmp_path: Path) -> None:
    """On the real cgroup of this machine (no quota here), TF sizes both pools from the affinity mask."""
    env = base_env()
    exported = parse_lines(run_helper(["--print"], env).stdout)
    if "TF_NUM_INTRAOP_THREADS" in exported:
        pytest.skip("this test process runs under a CPU quota below its CPUs")
    one = probe(tf_python, base_env(TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1"), False, tmp_path)
    helped = probe(tf_python, env, True, tmp_path)
    cpus = len(os.sched_getaffinity(0))
    assert int(helped["threads"]) - int(one["threads"]) == 2 * (cpus - 1)
