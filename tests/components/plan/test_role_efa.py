"""EFA for every training pod that may use it: one request that serves every group it may land on, or a refusal.

One test per mix of groups a GPU role can reach: EFA groups of one share, of different shares (p5.48xlarge 32
interfaces over 8 GPUs, p5en.48xlarge 16, p4d.24xlarge 4), EFA with non-EFA groups, EFA groups that share GPUs,
and a pod too small for one interface; then the same through the stack's validator (the key and the fix) and
the rendered pod (the request, `FI_PROVIDER`, `FI_EFA_USE_HUGE_PAGE`).
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.components.config import NodeGroupArgs
from gpuplane.components.plan import capacity
from gpuplane.infra import config
from gpuplane.manifests import training, wellknown
from tests.conftest import DEV_CLUSTER


def group(name: str, instance_type: str, *, efa: bool = True, **more: Any) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "gpu",
        "instanceTypes": [instance_type],
        "minSize": 0,
        "maxSize": 2,
        "efa": efa,
        **more,
    }


P5 = group("p5", "p5.48xlarge")
P5EN = group("p5en", "p5en.48xlarge")
P4D = group("p4d", "p4d.24xlarge")
P5_PLAIN = group("p5-plain", "p5.48xlarge", efa=False)
G6E = group("g6e", "g6e.48xlarge", efa=False)
P5_SLICED = group("p5-sliced", "p5.48xlarge", sharing={"timeSlicing": {"replicas": 2}})


def args(*groups: dict[str, Any]) -> list[NodeGroupArgs]:
    return [NodeGroupArgs.model_validate(g) for g in groups]


@pytest.mark.parametrize(
    ("groups", "gpus", "interfaces"),
    [
        # EFA groups of one share: the node's interfaces in proportion to the pod's GPUs.
        ((P5,), 8, 32),
        ((P5,), 1, 4),
        # EFA groups of different shares: the smallest, so any of them can take the pod.
        ((P5, P5EN), 8, 16),
        ((P5, P5EN, P4D), 8, 4),
        ((P5, P4D), 2, 1),
        # No EFA anywhere: nothing to ask for, nothing refused.
        ((P5_PLAIN, G6E), 8, 0),
        # A pod without GPUs asks for none, whatever the groups.
        ((P5, P5_PLAIN), 0, 0),
    ],
    ids=["one-share-whole-node", "one-share-one-gpu", "p5-p5en", "p5-p5en-p4d", "p5-p4d-two-gpus", "no-efa", "cpu"],
)
def test_the_smallest_share_of_the_efa_groups(groups, gpus, interfaces):
    assert capacity.role_efa_problem(args(*groups), gpus) is None
    assert capacity.role_efa(args(*groups), gpus) == interfaces


@pytest.mark.parametrize(
    ("groups", "gpus", "fragments"),
    [
        (
            (P5, P5_PLAIN),
            8,
            ["EFA groups ['p5'] and on groups without EFA ['p5-plain']", "nodeGroups: ['p5'] for EFA, or ['p5-plain']"],
        ),
        ((P5, P4D, G6E), 8, ["EFA groups ['p5', 'p4d'] and on groups without EFA ['g6e']"]),
        ((P5_SLICED,), 1, ["share their GPUs ['p5-sliced (time-slicing)']", "set efa: false"]),
        ((P4D,), 1, ["1 GPU(s) per pod earn less than one EFA interface on p4d (4 over 8 GPUs)", "at least 2 GPUs"]),
        ((P5, P4D), 1, ["on p4d (4 over 8 GPUs)", "name groups where they earn one in nodeGroups: ['p5']"]),
    ],
    ids=["efa-and-plain", "two-efa-and-plain", "efa-shared", "share-rounds-to-zero", "share-rounds-to-zero-on-one"],
)
def test_no_request_serves_every_group(groups, gpus, fragments):
    problem = capacity.role_efa_problem(args(*groups), gpus)
    assert problem is not None
    for fragment in fragments:
        assert fragment in problem, problem
    with pytest.raises(ValueError, match="EFA"):
        capacity.role_efa(args(*groups), gpus)


SYSTEM = {"name": "system", "instanceTypes": ["m6i.large"], "minSize": 1, "maxSize": 2}


def run(gpus: int, node_groups: list[str] | None = None) -> dict[str, Any]:
    worker: dict[str, Any] = {"replicas": 2, "resources": {"limits": {"cpu": "8", "memory": "64Gi"}, "gpus": gpus}}
    if node_groups is not None:
        worker["nodeGroups"] = node_groups
    return {"name": "nccl", "strategy": "multiWorkerMirrored", "command": ["python", "train.py"], "worker": worker}


def stack(*groups: dict[str, Any], training_run: dict[str, Any]) -> dict[str, Any]:
    return {
        "gpuplane:cluster": DEV_CLUSTER,
        "gpuplane:nodeGroups": [SYSTEM, *groups],
        "gpuplane:training": [training_run],
        "aws:region": "us-west-2",
    }


def test_the_stack_refuses_a_run_on_efa_and_plain_groups_under_its_node_groups_key():
    with pytest.raises(config.ConfigError) as info:
        config.parse(stack(P5, P5_PLAIN, training_run=run(8)), "test")
    found = [p for p in info.value.problems if "EFA" in p]
    assert len(found) == 1 and found[0].startswith("gpuplane:training[0].worker.nodeGroups: training 'nccl' role "), (
        found
    )
    # The fix it names is accepted: pinned to the EFA group, the run gets the group's whole share.
    config.parse(stack(P5, P5_PLAIN, training_run=run(8, ["p5"])), "test")
    config.parse(stack(P5, P5_PLAIN, training_run=run(8, ["p5-plain"])), "test")


def test_a_run_on_groups_of_different_shares_asks_for_the_smallest():
    from gpuplane.components.plan.placement import WorkloadContext  # noqa: PLC0415
    from gpuplane.components.plan.training import training_spec  # noqa: PLC0415
    from tests.conftest import stack_config  # noqa: PLC0415

    overrides = {"cluster": DEV_CLUSTER, "nodeGroups": [SYSTEM, P5, P5EN], "training": [run(8)]}
    platform = stack_config(overrides).platform
    spec = training_spec(platform.training[0], WorkloadContext.of(platform))
    (worker,) = spec.roles
    assert worker.efa == 16 and worker.resources["limits"][wellknown.EFA_RESOURCE] == "16"
    pod = training.jobset(spec)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    env = pod["containers"][0]["env"]
    assert {"name": "FI_PROVIDER", "value": "efa"} in env
    # No huge pages requested: the EFA provider's buffers come from normal pages (docs/reserved-gpus.md, "EFA").
    assert {"name": "FI_EFA_USE_HUGE_PAGE", "value": "0"} in env
    assert not any(k.startswith("hugepages-") for k in pod["containers"][0]["resources"]["limits"])


def test_a_pod_without_efa_gets_no_libfabric_settings():
    assert training.efa_env(0) == []
    assert [e["name"] for e in training.efa_env(4)] == ["FI_PROVIDER", "FI_EFA_USE_HUGE_PAGE"]
