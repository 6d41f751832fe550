"""Render warns when a program's GPU group has no device plugin or nothing to scale it from zero (issue 28)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from gpuplane import (
    AutoscalerArgs,
    Cluster,
    ClusterArgs,
    ClusterAutoscaler,
    GpuEnablement,
    GpuPlan,
    Network,
    NetworkArgs,
    NodeGroup,
    NodeGroupArgs,
)
from gpuplane.infra import mockrun
from gpuplane.infra.wiring import gpu_wiring_warnings


def program(gpu: NodeGroupArgs, *, plugin: bool, autoscaler: bool) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        name, tags = "team-dev", {"team": "vision"}
        network = Network("net", NetworkArgs(az_count=2), cluster_name=name, tags=tags)
        cluster_args = ClusterArgs(public_access_cidrs=["198.51.100.0/24"])
        cluster = Cluster(
            "eks", cluster_args, cluster_name=name, subnet_ids=network.private_subnet_ids, region="us-west-2", tags=tags
        )
        system_args = NodeGroupArgs(name="system", instance_types=["t3.large"])
        system = NodeGroup("system", system_args, cluster=cluster, subnet_ids=network.private_subnet_ids, tags=tags)
        NodeGroup("gpu", gpu, cluster=cluster, subnet_ids=network.private_subnet_ids, tags=tags)
        services: Sequence[Any] = [
            *system.node_group_resources,
            *cluster.add_compute_addons(system.node_group_resources),
        ]
        version = cluster_args.kubernetes_version
        if plugin:
            GpuEnablement(
                "gpu-stack",
                GpuPlan((system_args, gpu)),
                cluster=cluster,
                kubernetes_version=version,
                dcgm_exporter=False,
                startup_taints=[],
                after=services,
            )
        if autoscaler:
            ClusterAutoscaler(
                "autoscaler",
                AutoscalerArgs(),
                cluster=cluster,
                region="us-west-2",
                kubernetes_version=version,
                startup_taints=[],
                after=services,
            )
        return {}

    return run


def warnings_of(gpu: NodeGroupArgs, *, plugin: bool, autoscaler: bool) -> list[str]:
    recording = mockrun.run(program(gpu, plugin=plugin, autoscaler=autoscaler), "team", "dev", "us-west-2")
    return gpu_wiring_warnings(recording)


AL2023 = NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g6.xlarge"], min_size=0, max_size=2)


def test_a_bare_gpu_group_gets_both_warnings_naming_the_group_and_the_fix():
    warnings = warnings_of(AL2023, plugin=False, autoscaler=False)
    assert len(warnings) == 2
    plugin, scaler = warnings
    assert plugin.startswith("GPU node group(s) gpu: no NVIDIA device plugin is installed")
    assert "GpuEnablement('gpu', GpuPlan((system_args, gpu_args)), cluster=cluster, ...)" in plugin
    assert scaler.startswith("GPU node group(s) gpu: minSize 0 and no cluster autoscaler")
    assert "ClusterAutoscaler('autoscaler', AutoscalerArgs(), cluster=cluster, ...)" in scaler


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
