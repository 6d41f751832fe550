"""A training run cannot hang forever: every role's Job carries a deadline by default; the stack raises or removes it.

Why per Job: JobSet (v0.12, the pinned API) has no deadline of its own; a Job's `activeDeadlineSeconds`
counts from its start, Pending time included, and restarts from zero after a suspension (docs/workloads.md).
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from gpuplane.infra import config, train
from gpuplane.manifests import training, versions
from tests.conftest import DEV_CLUSTER

PS: dict[str, Any] = {
    "name": "mnist",
    "strategy": "parameterServer",
    "command": ["python", "/data/mnist/train.py", "--model-dir=/logs/mnist"],
    "chief": {"resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "worker": {"replicas": 2, "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "ps": {"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
    "volumes": [{"volume": "datasets", "mountPath": "/data"}, {"volume": "logs", "mountPath": "/logs"}],
    "dataImport": {"source": "https://example.com/mnist.tar.gz", "path": "mnist", "timeoutMinutes": 20},
}


def stack(**overrides: Any) -> config.StackConfig:
    raw = {"aws:region": "us-west-2", "gpuplane:cluster": DEV_CLUSTER, "gpuplane:training": [{**PS, **overrides}]}
    return config.parse(raw, "test")


def deadlines(obj: dict[str, Any]) -> dict[str, int | None]:
    return {r["name"]: r["template"]["spec"].get("activeDeadlineSeconds") for r in obj["spec"]["replicatedJobs"]}


def test_the_dev_run_has_the_default_deadline_on_every_role() -> None:
    """What `gpuplane train dev mnist --plan` prints: one day on the chief, the workers and the ps."""
    obj = train.build(config.load("dev"), "mnist")
    assert deadlines(obj) == {"chief": 86400, "worker": 86400, "ps": 86400}
    assert training.DEFAULT_ACTIVE_DEADLINE_SECONDS == 86400


def test_the_stack_raises_the_deadline() -> None:
    obj = train.build(stack(activeDeadlineSeconds=3 * 86400), "mnist")
    # The data import keeps its own limit (timeoutMinutes); the roles start when it completes.
    assert deadlines(obj) == {"data-import": 20 * 60, "chief": 259200, "worker": 259200, "ps": 259200}


def test_zero_removes_the_deadline() -> None:
    obj = train.build(stack(activeDeadlineSeconds=0), "mnist")
    assert deadlines(obj) == {"data-import": 20 * 60, "chief": None, "worker": None, "ps": None}
    for job in training.job_templates_as_jobs(obj):
        assert kubernetes_validate.validate(job, max(versions.KUBERNETES_VERSIONS), strict=True)


def test_a_changed_deadline_is_a_new_run() -> None:
    first = train.build(stack(), "mnist")["metadata"]["name"]
    assert train.build(stack(activeDeadlineSeconds=7200), "mnist")["metadata"]["name"] != first


@pytest.mark.parametrize(
    ("value", "fragment"),
    [(-1, "greater than or equal to 0"), ("1d", "valid integer"), (None, "valid integer"), (1.5, "valid integer")],
)
def test_bad_deadlines_are_refused_naming_the_key(value: Any, fragment: str) -> None:
    with pytest.raises(config.ConfigError) as info:
        stack(activeDeadlineSeconds=value)
    found = [p for p in info.value.problems if p.startswith("gpuplane:training[0].activeDeadlineSeconds:")]
    assert found and fragment in found[0], info.value.problems
