"""Render warns when a program's GPU group has no device plugin or nothing to scale it from zero (issue 28)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gpuplane import Cluster, ClusterArgs, Network, NetworkArgs, NodeGroupArgs
from gpuplane.infra import mockrun
from gpuplane.infra.wiring import gpu_wiring_warnings


def program(gpu: NodeGroupArgs, *, plugin: bool, autoscaler: bool) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        tags = {"team": "vision"}
        network = Network("net", NetworkArgs(az_count=2), tags=tags)
        cluster_args = ClusterArgs(public_access_cidrs=["198.51.100.0/24"])
        cluster = Cluster("eks", cluster_args, network=network, tags=tags)
        cluster.add_node_group(NodeGroupArgs(name="system", instance_types=["t3.large"]))
        cluster.add_node_group(gpu)
        if plugin:
            cluster.add_gpu_support(dcgm_exporter=False)
        if autoscaler:
            cluster.add_autoscaler()
        return {}

    return run


def warnings_of(gpu: NodeGroupArgs, *, plugin: bool, autoscaler: bool) -> list[str]:
    program_ = program(gpu, plugin=plugin, autoscaler=autoscaler)
    recording = mockrun.run(program_, "team", "dev", "us-west-2", {"aws:region": "us-west-2"})
    return gpu_wiring_warnings(recording)


AL2023 = NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g6.xlarge"], min_size=0, max_size=2)


def test_a_bare_gpu_group_gets_both_warnings_naming_the_group_and_the_fix():
    warnings = warnings_of(AL2023, plugin=False, autoscaler=False)
    assert len(warnings) == 2
    plugin, scaler = warnings
    assert plugin.startswith("GPU node group(s) gpu: no NVIDIA device plugin is installed")
    assert "add cluster.add_gpu_support() after the node groups" in plugin
    assert scaler.startswith("GPU node group(s) gpu: minSize 0 and no cluster autoscaler")
    assert "add cluster.add_autoscaler()" in scaler


def test_the_wired_program_has_no_warning():
    assert warnings_of(AL2023, plugin=True, autoscaler=True) == []


@pytest.mark.parametrize(
    ("gpu", "plugin", "autoscaler", "expected"),
    [
        # A group that keeps a node needs no autoscaler to get one; it still needs the plugin.
        (AL2023.model_copy(update={"min_size": 1}), False, False, ["no NVIDIA device plugin"]),
        # Bottlerocket NVIDIA runs its own plugin: never advise a second one.
        (
            NodeGroupArgs(
                name="gpu", kind="gpu", instance_types=["g6.xlarge"], ami_type="BOTTLEROCKET_x86_64_NVIDIA", min_size=0
            ),
            False,
            False,
            ["minSize 0 and no cluster autoscaler"],
        ),
        (AL2023, True, False, ["minSize 0 and no cluster autoscaler"]),
    ],
)
def test_each_warning_only_when_its_piece_is_missing(gpu, plugin, autoscaler, expected):
    warnings = warnings_of(gpu, plugin=plugin, autoscaler=autoscaler)
    assert len(warnings) == len(expected)
    assert all(e in w for e, w in zip(expected, warnings, strict=True))
