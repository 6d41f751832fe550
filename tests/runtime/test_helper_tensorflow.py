"""TensorFlow really runs with the thread counts the helper exports (installs tensorflow-cpu; slow).

``tf.config.threading.get_intra_op_parallelism_threads()`` reports only values set through that Python
API (it returns 0, "let the runtime decide", when TF_NUM_* configure the pools), so the test counts the
threads of TF's real pools instead: the inter-op pool's threads are named ``tf_Compute``; the intra-op
(Eigen) pool's threads are unnamed and counted against a run with exactly one intra-op thread.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime._support import ROOT, FakeHost, base_env, parse_lines, run_helper

TF_VERSION = "2.21.0"
# Shared with benchmarks/threads.py, so the wheel is installed once per machine (git-ignored).
VENV = ROOT / "benchmarks" / ".cache" / f"tfvenv-{TF_VERSION}"

PROBE = """
import collections, json, os
import tensorflow as tf
x = tf.random.uniform((256, 256))
@tf.function
def f(a):
    return tf.matmul(a, a) + tf.reduce_sum(a)
f(x).numpy()
names = collections.Counter(
    open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")
)
print("PROBE " + json.dumps({
    "inter_pool": names["tf_Compute"],
    "unnamed": names["python"] + names["python3"],
    "getter_intra": tf.config.threading.get_intra_op_parallelism_threads(),
    "version": tf.__version__,
}))
"""

pytestmark = pytest.mark.tensorflow


@pytest.fixture(scope="module")
def tf_python() -> Path:
    # pytest-xdist runs this module and tests/compare/test_end_to_end.py in parallel workers: one builds the
    # venv while the other waits on the lock, then finds it ready.
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / f"{VENV.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _tf_python()


def _tf_python() -> Path:
    python = VENV / "bin" / "python"
    check = [str(python), "-c", f"import tensorflow as t; assert t.__version__ == '{TF_VERSION}'"]
    env = base_env(TF_CPP_MIN_LOG_LEVEL="3")
    if python.exists() and subprocess.run(check, env=env, capture_output=True, check=False).returncode == 0:
        return python
    made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot create a venv for TensorFlow: {made.stderr.decode()[-500:]}")
    pip = [str(python), "-m", "pip", "install", "-q", f"tensorflow-cpu=={TF_VERSION}"]
    done = subprocess.run(pip, capture_output=True, text=True, timeout=1200, check=False)
    if done.returncode != 0:
        pytest.skip(f"pip cannot install tensorflow-cpu=={TF_VERSION} here: {done.stderr[-800:]}")
    return python


def probe(tf_python: Path, env: dict[str, str], through_helper: bool) -> dict[str, int | str]:
    argv = [str(tf_python), "-c", PROBE]
    env = {**env, "TF_CPP_MIN_LOG_LEVEL": "3"}
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
    env = base_env(**host.env)
    exported = parse_lines(run_helper(["--print"], env).stdout)
    intra, inter = int(exported["TF_NUM_INTRAOP_THREADS"]), int(exported["TF_NUM_INTEROP_THREADS"])
    assert (intra, inter) == (4, 1)

    one = probe(tf_python, base_env(TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1"), False)
    helped = probe(tf_python, env, True)
    assert helped["version"] == TF_VERSION
    assert helped["inter_pool"] == inter
    assert int(helped["unnamed"]) - (int(one["unnamed"]) - 1) == intra
    # The Python getter does not see environment-configured pools (documented above).
    assert helped["getter_intra"] == 0


def test_tensorflow_defaults_kept_without_a_limit(tf_python: Path) -> None:
    """On the real cgroup of this machine (no quota here), TF sizes its pools from the affinity mask."""
    env = base_env()
    exported = parse_lines(run_helper(["--print"], env).stdout)
    if "TF_NUM_INTRAOP_THREADS" in exported:
        pytest.skip("this test process runs under a CPU quota below its CPUs")
    one = probe(tf_python, base_env(TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1"), False)
    helped = probe(tf_python, env, True)
    cpus = len(os.sched_getaffinity(0))
    assert int(helped["unnamed"]) - (int(one["unnamed"]) - 1) == cpus
    assert helped["inter_pool"] == cpus
