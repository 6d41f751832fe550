"""`cluster.nodeUpgradeOrder`: which node groups wait for which, in plan.json, at each value; a bad value refused.

At `parallel` no node group waits for another; at `systemFirst` every GPU group waits for every system group
(the untainted CPU groups) and nothing else changes: a tainted CPU group and the system groups still move at
once. The timeline model prices the difference (benchmarks/timeline.py, `order_totals`).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from gpuplane import Cluster, ClusterArgs, Network, NodeGroupArgs
from gpuplane.infra import config, mockrun, render
from gpuplane.infra.cli import app

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ROOT = Path(__file__).resolve().parents[2]
GROUPS: list[dict[str, Any]] = [
    {"name": "system-a", "instanceTypes": ["m6i.large"]},
    {"name": "system-b", "instanceTypes": ["m6i.large"]},
    {"name": "batch", "instanceTypes": ["c6i.xlarge"], "minSize": 0, "taints": [{"key": "team/batch"}]},
    {"name": "gpu-a", "kind": "gpu", "instanceTypes": ["g6.xlarge"], "minSize": 0},
    {"name": "gpu-b", "kind": "gpu", "instanceTypes": ["g6e.xlarge"], "minSize": 0},
]


def raw_config(order: str | None) -> dict[str, Any]:
    cluster: dict[str, Any] = {"endpointPublicAccess": False}
    if order is not None:
        cluster["nodeUpgradeOrder"] = order
    return {"aws:region": "us-west-2", "gpuplane:cluster": cluster, "gpuplane:nodeGroups": GROUPS}


def waits_among_groups(order: str | None) -> dict[str, set[str]]:
    """Node group -> the node groups its `dependencies` in plan.json name (by the group's name)."""
    stack = config.parse(raw_config(order), "dev")
    plan = render.plan_document(stack, render.run_stack(stack))
    groups = {r["urn"]: r for r in plan["resources"] if r["type"] == NODE_GROUP}
    assert len(groups) == len(GROUPS)

    def name(resource: dict[str, Any]) -> str:
        return str(resource["inputs"]["labels"]["gpuplane.io/node-group"])

    return {name(r): {name(groups[d]) for d in r["dependencies"] if d in groups} for r in groups.values()}


@pytest.mark.parametrize("order", [None, "parallel"])
def test_at_parallel_no_node_group_waits_for_another(order: str | None) -> None:
    assert waits_among_groups(order) == {g["name"]: set() for g in GROUPS}


def test_at_system_first_every_gpu_group_waits_for_every_system_group_and_only_them() -> None:
    assert waits_among_groups("systemFirst") == {
        "system-a": set(),
        "system-b": set(),
        "batch": set(),
        "gpu-a": {"system-a", "system-b"},
        "gpu-b": {"system-a", "system-b"},
    }


def test_a_bad_order_is_refused_with_the_key_the_value_and_what_is_allowed(tmp_path: Path) -> None:
    with pytest.raises(config.ConfigError) as caught:
        config.parse(raw_config("gpuLast"), "dev")
    assert caught.value.problems == [
        "gpuplane:cluster.nodeUpgradeOrder: Input should be 'parallel' or 'systemFirst' (got 'gpuLast')"
    ]
    # The command line: exit 2, the same line, nothing written.
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.bad.yaml").write_text(
        "config:\n  aws:region: us-west-2\n  gpuplane:cluster:\n    endpointPublicAccess: false\n"
        "    nodeUpgradeOrder: gpuLast\n"
    )
    result = CliRunner().invoke(app, ["render", "bad", "--out", str(tmp_path / "out"), "--stacks-dir", str(stacks)])
    assert result.exit_code == 2
    assert "gpuplane:cluster.nodeUpgradeOrder: Input should be 'parallel' or 'systemFirst' (got 'gpuLast')" in " ".join(
        result.output.split()
    )
    assert not (tmp_path / "out").exists()
    # A program's own ClusterArgs: the same rule, before any resource.
    with pytest.raises(ValidationError, match=r"node_upgrade_order\n  Input should be 'parallel' or 'systemFirst'"):
        ClusterArgs(public_access_cidrs=["198.51.100.0/24"], node_upgrade_order="gpuLast")


def test_a_program_that_adds_a_gpu_group_before_any_system_group_at_system_first_is_told_the_order() -> None:
    args = ClusterArgs(public_access_cidrs=["198.51.100.0/24"], node_upgrade_order="systemFirst")

    def program() -> dict[str, Any]:
        cluster = Cluster("eks", args, network=Network("net"))
        cluster.add_node_group(NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g6.xlarge"], min_size=0))
        return {}

    with pytest.raises(
        ValueError, match=r"node group 'gpu' is a GPU group and cluster\.nodeUpgradeOrder is 'systemFirst'"
    ):
        mockrun.run(program, "team", "dev", "us-west-2", {"aws:region": "us-west-2"})


def timeline() -> ModuleType:
    spec = importlib.util.spec_from_file_location("timeline", ROOT / "benchmarks" / "timeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_the_timeline_model_puts_a_gpu_group_behind_a_system_group_at_system_first() -> None:
    model = timeline()
    raw = raw_config(None)
    plans = {order: model.render_plan("dev", order, raw) for order in ("parallel", "systemFirst")}

    def slow_groups(order: str, operation: str) -> list[str]:
        """The node groups on the critical path, as the role each plays: system, gpu or batch."""
        path = model.critical_path(plans[order], operation)
        return [
            name.removeprefix("gpuplane-dev-").removesuffix("-ng").removesuffix("-a").removesuffix("-b")
            for name, type_, (_, _, secs) in zip(path.names(), path.types(), path.steps, strict=True)
            if type_ == NODE_GROUP and secs >= 60
        ]

    # Create: one system group on the path, or a system group and then a GPU group after it.
    assert slow_groups("parallel", "create") == ["system"]
    assert slow_groups("systemFirst", "create") == ["system", "gpu"]
    # Destroy: every group at once, or the other way round: a GPU group's delete before a system group's.
    assert slow_groups("parallel", "destroy") in (["system"], ["gpu"], ["batch"])
    assert slow_groups("systemFirst", "destroy") == ["gpu", "system"]
    totals = model.order_totals("dev", raw)
    for order, plan in plans.items():
        assert totals[order] == {op: model.critical_path(plan, op).total for op in ("create", "destroy", "upgrade")}
    assert totals["systemFirst"]["destroy"] - totals["parallel"]["destroy"] == 300  # one node group's delete
    assert totals["systemFirst"]["create"] > totals["parallel"]["create"]
