"""TF_CONFIG for Indexed Jobs: parameter-server and multi-worker layouts, same as the Python side."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from gpuplane.manifests.tf_runtime import TFCluster
from tests.runtime._support import FakeHost, printed, shell_params


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    return FakeHost(tmp_path)


def tf_config(host: FakeHost, shell: Sequence[str] = ("sh",), **env: str) -> str | None:
    settings, _ = printed(host, shell, **env)
    return settings.get("TF_CONFIG")


PS_ENV = {
    "GPUPLANE_TF_ROLES": "chief:1,worker:2,ps:1",
    "GPUPLANE_TF_JOB_NAME": "mnist",
    "GPUPLANE_TF_SERVICE": "mnist-hl",
    "GPUPLANE_TF_NAMESPACE": "ml",
}


@pytest.mark.parametrize("shell", shell_params())
@pytest.mark.parametrize(
    ("index", "task"),
    [(0, ("chief", 0)), (1, ("worker", 0)), (2, ("worker", 1)), (3, ("ps", 0))],
)
def test_parameter_server_layout(host: FakeHost, shell: Sequence[str], index: int, task: tuple[str, int]) -> None:
    raw = tf_config(host, shell, **PS_ENV, JOB_COMPLETION_INDEX=str(index))
    assert raw is not None
    assert json.loads(raw) == {
        "cluster": {
            "chief": ["mnist-0.mnist-hl.ml.svc:2222"],
            "worker": ["mnist-1.mnist-hl.ml.svc:2222", "mnist-2.mnist-hl.ml.svc:2222"],
            "ps": ["mnist-3.mnist-hl.ml.svc:2222"],
        },
        "task": {"type": task[0], "index": task[1]},
    }
    # The Python side builds exactly the same bytes.
    cluster = TFCluster.parse("mnist", PS_ENV["GPUPLANE_TF_ROLES"], service="mnist-hl")
    assert raw == cluster.tf_config_json(index, "ml")


@pytest.mark.parametrize("index", [0, 1, 2])
def test_multi_worker_layout(host: FakeHost, index: int) -> None:
    """MultiWorkerMirroredStrategy: workers only, worker 0 acts as chief."""
    raw = tf_config(
        host,
        GPUPLANE_TF_ROLES="worker:3",
        GPUPLANE_TF_JOB_NAME="bert",
        GPUPLANE_TF_PORT="12345",
        JOB_COMPLETION_INDEX=str(index),
    )
    assert raw == json.dumps(
        {
            "cluster": {"worker": [f"bert-{i}.bert:12345" for i in range(3)]},
            "task": {"type": "worker", "index": index},
        },
        separators=(",", ":"),
    )


def test_evaluator_has_a_task_but_no_cluster_entry(host: FakeHost) -> None:
    env = {"GPUPLANE_TF_ROLES": "chief:1,worker:1,evaluator:1", "GPUPLANE_TF_JOB_NAME": "j"}
    raw = tf_config(host, **env, JOB_COMPLETION_INDEX="2")
    assert raw is not None
    assert json.loads(raw) == {
        "cluster": {"chief": ["j-0.j:2222"], "worker": ["j-1.j:2222"]},
        "task": {"type": "evaluator", "index": 0},
    }
    assert raw == TFCluster.parse("j", env["GPUPLANE_TF_ROLES"]).tf_config_json(2)


def test_job_name_from_hostname(host: FakeHost) -> None:
    """Without GPUPLANE_TF_JOB_NAME the pod hostname <job>-<index> gives it."""
    raw = tf_config(host, GPUPLANE_TF_ROLES="worker:2", HOSTNAME="resnet-train-1", JOB_COMPLETION_INDEX="1")
    assert raw is not None
    assert json.loads(raw)["cluster"] == {
        "worker": ["resnet-train-0.resnet-train:2222", "resnet-train-1.resnet-train:2222"]
    }


def test_user_tf_config_wins(host: FakeHost) -> None:
    mine = '{"cluster":{},"task":{}}'
    assert tf_config(host, **PS_ENV, JOB_COMPLETION_INDEX="0", TF_CONFIG=mine) == mine


def test_no_roles_no_tf_config(host: FakeHost) -> None:
    assert tf_config(host, JOB_COMPLETION_INDEX="0") is None


def test_leading_zero_index(host: FakeHost) -> None:
    raw = tf_config(host, **PS_ENV, JOB_COMPLETION_INDEX="03")
    assert raw is not None
    assert json.loads(raw)["task"] == {"type": "ps", "index": 0}
