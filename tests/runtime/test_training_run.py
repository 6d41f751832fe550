"""A rendered training run, trained for real: every pod a process here, through the runtime helper.

The runs are what `gpuplane train dev mnist --plan` prints (the dev stack's parameter-server run) and the
same workload as a multi-worker mirrored run, both built by the project's own code. The program is the
example (`examples/training/mnist/train.py`), brought onto the datasets volume the way a user would: its
archive (`make_data.py --archive`) through the data import's own script, over HTTPS. Each run must train to the end
within a time limit that fails the test instead of hanging it, and the parameter-server run must hang on
the old rule (one inter-op thread per task: TensorFlow issue #38969). See tests/runtime/_training_run.py
for what is rendered and what is mapped onto this machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuplane.components.config.workloads import TrainingArgs
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.training import training_spec
from gpuplane.infra import config as stack_config
from gpuplane.infra import train
from gpuplane.manifests import tf_runtime, training
from tests import shipped
from tests.runtime import _training_run as run
from tests.runtime._support import ROOT
from tests.runtime.test_helper_tensorflow import tf_python  # noqa: F401 - the fixture, shared
from tests.workloads.import_harness import Server, tls_files

pytestmark = pytest.mark.tensorflow

EXAMPLE = ROOT / "examples" / "training" / "mnist"
IMPORT_SCRIPT = ROOT / "manifests" / "runtime" / "gpuplane-import.py"
# TF's import alone takes 10-40 s per process on a busy 2-core machine; training itself a few seconds.
TRAIN_LIMIT_S = 420
# The old rule's run: the cluster forms (the chief prints its first line), then no epoch ever ends: a deadlock,
# its processes idle. With the training rule the same run trains all three epochs in about 4 s after TensorFlow's
# import (4.1 s median under contention, benchmarks/RESULTS_threads_training_tf2.21.md), so 20 s without the
# first epoch's end is five times a whole run.
HANG_WAIT_S = 20


def dev_jobset(strategy: str) -> dict[str, Any]:
    """The dev stack's `mnist` run as `gpuplane train dev mnist --plan` builds it; mirrored: its workers only."""
    config = stack_config.load("dev", shipped.STACKS)
    if strategy == "parameterServer":
        return train.build(config, "mnist")
    (mnist,) = [t for t in config.platform.training if t.name == "mnist"]
    doc = mnist.model_dump(by_alias=True, exclude_none=True)
    doc.update({"strategy": "multiWorkerMirrored", "name": "mnist-mirrored"})
    doc.pop("chief"), doc.pop("ps")
    args = TrainingArgs.model_validate(doc)
    return training.jobset(training_spec(args, WorkloadContext.of(config.platform)))


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example as a user uploads it: `mnist/train.py` and the data in one .tar.gz."""
    path = tmp_path_factory.mktemp("upload") / "mnist-example.tar.gz"
    subprocess.run([sys.executable, str(EXAMPLE / "make_data.py"), f"--archive={path}"], check=True)
    return path


@pytest.fixture(scope="module")
def source_url(archive: Path) -> Iterator[str]:
    """The archive served over loopback HTTPS (a test CA; the import accepts https:// and s3:// only)."""
    server = Server(routes={f"/{archive.name}": archive.read_bytes()})
    yield f"{server.url}/{archive.name}"
    server.close()


def volumes(tmp_path: Path, source_url: str) -> dict[str, Path]:
    """The datasets and logs volumes, with the example imported into datasets/mnist by the data import."""
    vols = {"datasets": tmp_path / "datasets", "logs": tmp_path / "logs"}
    for path in vols.values():
        path.mkdir()
    env = {"GPUPLANE_IMPORT_SOURCE": source_url, "GPUPLANE_IMPORT_DEST": str(vols["datasets"] / "mnist"),
           "GPUPLANE_IMPORT_KIND": "data", "GPUPLANE_IMPORT_STAGING": str(tmp_path / "staging"),
           "SSL_CERT_FILE": str(tls_files()[0]), "PATH": "/usr/bin:/bin"}  # fmt: skip
    done = subprocess.run([sys.executable, str(IMPORT_SCRIPT)], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (vols["datasets"] / "mnist" / "train.py").read_bytes() == (EXAMPLE / "train.py").read_bytes()
    return vols


READ_SCALARS = """
import json, sys
import tensorflow as tf
from pathlib import Path
steps = {}
for path in sorted(Path(sys.argv[1]).glob("events.out.tfevents.*")):
    for event in tf.compat.v1.train.summary_iterator(str(path)):
        for value in event.summary.value:
            assert value.metadata.plugin_data.plugin_name == "scalars", value
            assert tf.make_ndarray(value.tensor).dtype.name == "float32", value
            steps.setdefault(value.tag, []).append(event.step)
print(json.dumps(steps))
"""


def scalars(python: Path, folder: Path) -> dict[str, list[int]]:
    """Tag -> steps of the TensorBoard scalars in `folder`, read back with TensorFlow's own event reader."""
    done = subprocess.run([str(python), "-c", READ_SCALARS, str(folder)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def final(cluster: run.Cluster, role: str) -> dict[str, Any]:
    lines = [line for line in cluster.log(role).splitlines() if line.startswith("FINAL ")]
    assert lines, cluster.logs()
    return dict(json.loads(lines[-1][len("FINAL ") :]))


@pytest.mark.parametrize(
    ("strategy", "roles", "waits_for"),
    [
        ("parameterServer", {"chief": 1, "worker": 2, "ps": 1}, ["chief"]),
        ("multiWorkerMirrored", {"worker": 2}, ["worker"]),
    ],
)
def test_rendered_run_trains_to_the_end(
    tf_python: Path,  # noqa: F811 - the fixture
    tmp_path: Path,
    source_url: str,
    strategy: str,
    roles: dict[str, int],
    waits_for: list[str],
) -> None:
    jobset = dev_jobset(strategy)
    pods = run.tasks(jobset)
    assert {r: sum(1 for t in pods if t.role == r) for r in roles} == roles
    name, namespace = jobset["metadata"]["name"], jobset["metadata"]["namespace"]
    layout = tuple((r, n) for r, n in roles.items())
    cluster_layout = tf_runtime.TFCluster(name, layout, service=name, port=tf_runtime.DEFAULT_TF_PORT, jobset=True)
    for task in pods:
        view = run.helper_view(task)
        # The helper's TF_CONFIG is the rendered layout (pod DNS names); only the test maps them to ports.
        assert json.loads(view["TF_CONFIG"]) == cluster_layout.tf_config(task.index, namespace, task.role)
        # The training rule: never fewer than 2 inter-op threads in a task of a multi-task run.
        assert int(view.get("TF_NUM_INTEROP_THREADS", "2")) >= 2, (task.role, view)
    vols = volumes(tmp_path, source_url)
    cluster = run.start(pods, vols, tf_python, tmp_path / "out")
    try:
        finished = cluster.wait(waits_for, TRAIN_LIMIT_S)
        assert finished, f"no end within {TRAIN_LIMIT_S} s:\n{cluster.logs()}"
        for task in pods:
            if task.role in waits_for:
                assert cluster.exit_code(task.role, task.index) == 0, cluster.logs()
        result = final(cluster, waits_for[0])
    finally:
        cluster.stop()
    assert result["strategy"] == strategy
    assert result["test_accuracy"] >= 0.9, result
    model_dir = vols["logs"] / "mnist"  # the rendered --model-dir=/logs/mnist
    assert result["checkpoint"] == str(model_dir / "checkpoints" / "ckpt-3")
    assert (model_dir / "checkpoints" / "ckpt-3.index").is_file()
    # TensorBoard's scalars, written without the `tensorboard` package (TF 2.21 images do not carry it).
    assert scalars(tf_python, model_dir / "train") == {
        "loss": [1, 2, 3],
        "accuracy": [1, 2, 3],
        "test_accuracy": [3],
    }
    assert list((model_dir / "train").glob("events.out.tfevents.*"))


def test_parameter_server_run_hangs_on_the_old_rule(
    tf_python: Path,  # noqa: F811 - the fixture
    tmp_path: Path,
    source_url: str,
) -> None:
    """One inter-op thread per task (what the inference rule exported under these quotas) never trains.

    The old rule is given as the tasks' own variables (the helper keeps a user's setting and warns); the
    run must not finish an epoch in HANG_WAIT_S seconds after its cluster formed, while the same run with
    the training rule (the test above) trains all three epochs in a few seconds.
    """
    pods = run.tasks(dev_jobset("parameterServer"))
    old_rule = {"TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}  # every task's quota is <= 1 CPU
    cluster = run.start(pods, volumes(tmp_path, source_url), tf_python, tmp_path / "out", extra_env=old_rule)
    try:
        formed = cluster.wait_for_line("chief", "chief:0 connected", TRAIN_LIMIT_S)
        assert formed, f"the chief never started:\n{cluster.logs()}"
        assert not cluster.wait(["chief"], HANG_WAIT_S), f"trained on the old rule:\n{cluster.logs()}"
        assert "epoch 1/" not in cluster.log("chief"), cluster.logs()
        assert "#38969" in cluster.log("chief")  # the helper's warning about the user's setting
    finally:
        cluster.stop()
