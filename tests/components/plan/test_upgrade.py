"""A Kubernetes upgrade by changing one version: the path, the nodes' versions, the GPU stack's ranges."""

from __future__ import annotations

import pytest

from gpuplane.components.config import NodeGroupArgs
from gpuplane.components.plan import addons, upgrade
from gpuplane.manifests import lifecycle, wellknown
from tests.conftest import stack_config


@pytest.mark.parametrize(
    ("running", "target", "path"),
    [
        ("1.35", "1.35", []),
        ("1.35", "1.36", ["1.36"]),
        ("1.33", "1.36", ["1.34", "1.35", "1.36"]),
        ("1.35.4", "v1.36", ["1.36"]),
    ],
)
def test_the_path_is_every_minor_in_between_the_target_last(running: str, target: str, path: list[str]) -> None:
    assert upgrade.upgrade_path(running, target) == path


def test_one_minor_is_one_step_and_more_is_refused_with_the_path() -> None:
    assert upgrade.jump_problem("1.35", "1.36") is None
    assert upgrade.jump_problem("1.36", "1.36") is None
    problem = upgrade.jump_problem("1.33", "1.36")
    assert problem is not None
    assert "3 minors ahead" in problem
    assert "1.33 -> 1.34 -> 1.35 -> 1.36" in problem
    assert "set '1.34'" in problem


def test_a_downgrade_has_no_path() -> None:
    problem = upgrade.jump_problem("1.36", "1.35")
    assert problem is not None and "never downgrades" in problem and "'1.36'" in problem


@pytest.mark.parametrize("bad", ["1", "one.two", "", "1.x"])
def test_a_version_that_is_not_one_is_named(bad: str) -> None:
    with pytest.raises(ValueError, match=f"'{bad}' is not a Kubernetes version"):
        upgrade.minor_of(bad)


@pytest.mark.parametrize(
    ("ami_type", "parameter"),
    [
        (
            wellknown.AMI_AL2023_X86_NVIDIA,
            "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/nvidia/recommended/release_version",
        ),
        (
            wellknown.AMI_AL2023_ARM_STANDARD,
            "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/arm64/standard/recommended/release_version",
        ),
        (
            wellknown.AMI_BOTTLEROCKET_X86_NVIDIA,
            "/aws/service/bottlerocket/aws-k8s-1.36-nvidia/x86_64/latest/image_version",
        ),
        (wellknown.AMI_BOTTLEROCKET_ARM, "/aws/service/bottlerocket/aws-k8s-1.36/arm64/latest/image_version"),
    ],
)
def test_the_release_version_is_the_recommended_ami_release_of_the_minor(ami_type: str, parameter: str) -> None:
    assert upgrade.release_version_parameter(ami_type, "1.36") == parameter


def test_a_node_group_is_told_the_cluster_minor() -> None:
    group = NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g6.xlarge"], min_size=0, max_size=2)
    node = upgrade.node_version(group, "1.35")
    assert node.version == "1.35"
    assert node.release_parameter == upgrade.release_version_parameter(group.resolved_ami_type, "1.35")
    assert "/1.35/" in node.release_parameter and "/nvidia/" in node.release_parameter


def test_the_order_puts_every_node_group_before_the_add_ons_that_need_nodes() -> None:
    args = stack_config({"cluster": {"publicAccessCidrs": ["198.51.100.7/32"]}}).platform
    before, after = addons.by_nodes(args)
    assert set(before) == set(addons.BEFORE_NODES)
    assert wellknown.ADDON_COREDNS in after
    steps = upgrade.upgrade_order(args, before, after)
    # At the default `parallel` order every group is in one tier, and the GPU groups' own tier is empty.
    assert args.cluster.node_upgrade_order == "parallel"
    assert [s.tier for s in steps] == ["control plane", "add-ons before nodes", "node groups", "add-ons after nodes"]
    assert set(steps[2].members) == {g.name for g in args.resolved_node_groups}
    assert {g.name for g in args.system_node_groups} < set(steps[2].members)
    assert set(steps[3].members) == set(after)


def test_at_system_first_the_gpu_groups_are_the_last_tier() -> None:
    args = stack_config(
        {"cluster": {"publicAccessCidrs": ["198.51.100.7/32"], "nodeUpgradeOrder": "systemFirst"}}
    ).platform
    before, after = addons.by_nodes(args)
    steps = upgrade.upgrade_order(args, before, after)
    assert [s.tier for s in steps] == list(upgrade.ORDER)
    gpu = {g.name for g in args.resolved_node_groups if g.kind == "gpu"}
    assert gpu and set(steps[-1].members) == gpu
    assert set(steps[2].members) == {g.name for g in args.resolved_node_groups} - gpu
    assert {g.name for g in args.system_node_groups} <= set(steps[2].members)


@pytest.mark.parametrize(
    ("order", "kind", "waits"),
    [("parallel", "gpu", False), ("systemFirst", "gpu", True), ("systemFirst", "cpu", False)],
)
def test_only_a_gpu_group_at_system_first_waits_for_the_system_groups(order: str, kind: str, waits: bool) -> None:
    types = ["g6.xlarge"] if kind == "gpu" else ["m6i.large"]
    group = NodeGroupArgs(name="pool", kind=kind, instance_types=types, min_size=0)
    assert upgrade.waits_for_system_groups(group, order) is waits  # type: ignore[arg-type]


def test_add_on_versions_are_eks_default_for_the_minor_not_the_newest() -> None:
    query = addons.version_query(wellknown.ADDON_KUBE_PROXY, "1.36")
    assert (query.addon_name, query.kubernetes_version, query.most_recent) == ("kube-proxy", "1.36", False)


def by_part(found: list[upgrade.PartSupport]) -> dict[str, tuple[str, str]]:
    return {p.part: (p.status, p.detail) for p in found}


def test_gpu_stack_at_136_passes_and_says_where_upstream_publishes_no_range() -> None:
    found = by_part(upgrade.gpu_stack_support("1.36", gpu=True, operator=True, queue=True, autoscaler=True))
    assert set(found) == {
        "nvidia-driver",
        "nvidia-device-plugin",
        "gpu-operator",
        "kueue",
        "jobset",
        "cluster-autoscaler",
    }
    assert {status for status, _ in found.values()} == {"pass"}
    assert found["nvidia-driver"][1].startswith("1.36 is within 1.32 to 1.36")
    assert found["nvidia-device-plugin"][1].startswith("1.36 is within any to newest (NVIDIA publishes no Kubernetes")
    assert found["gpu-operator"][1].startswith("1.36 is within 1.33 to 1.36 (NVIDIA's GPU Operator platform-support")
    assert found["jobset"][1].startswith("1.36 is within 1.33 to 1.36 (JobSet README at tag v0.12.0")
    assert found["cluster-autoscaler"] == ("pass", "v1.36.1 for Kubernetes 1.36")


def test_the_gpu_operator_is_judged_only_where_it_runs_and_by_its_eks_range() -> None:
    assert "gpu-operator" not in by_part(upgrade.gpu_stack_support("1.36", gpu=True, queue=False, autoscaler=False))
    older = by_part(upgrade.gpu_stack_support("1.32", gpu=True, operator=True, queue=True, autoscaler=False))
    assert older["gpu-operator"][0] == "fail" and older["gpu-operator"][1].startswith(
        "needs Kubernetes 1.33 or newer, not 1.32 (NVIDIA's GPU Operator platform-support page for v26.7.0"
    )
    assert older["jobset"][0] == "fail" and "needs Kubernetes 1.33 or newer, not 1.32" in older["jobset"][1]
    assert older["nvidia-driver"][0] == "pass" and older["kueue"][0] == "pass"
    newer = by_part(upgrade.gpu_stack_support("1.37", gpu=True, operator=True, queue=True, autoscaler=False))
    for part in ("gpu-operator", "jobset", "nvidia-driver"):
        assert newer[part][0] == "warn" and newer[part][1].startswith("tested up to Kubernetes 1.36, not 1.37"), part


def test_gpu_stack_below_a_published_minimum_fails_and_a_minor_without_an_autoscaler_image_fails() -> None:
    found = by_part(upgrade.gpu_stack_support("1.28", gpu=False, queue=True, autoscaler=False))
    assert found["kueue"][0] == "fail" and "1.29 or newer" in found["kueue"][1]
    assert "nvidia-driver" not in found
    later = by_part(upgrade.gpu_stack_support("1.37", gpu=True, queue=False, autoscaler=True))
    assert (
        later["cluster-autoscaler"][0] == "fail"
        and "no cluster-autoscaler image pinned for 1.37" in later["cluster-autoscaler"][1]
    )
    assert later["nvidia-driver"][0] == "warn"


def test_every_part_of_the_table_names_its_source_and_bounds_parse() -> None:
    for part, (low, high, source) in lifecycle.GPU_STACK_KUBERNETES.items():
        assert source, part
        for bound in (low, high):
            if bound:
                upgrade.minor_of(bound)


def _group(kind: str, max_size: int, percent: int = 33) -> NodeGroupArgs:
    types = ["g5.xlarge"] if kind == "gpu" else ["m6i.large"]
    return NodeGroupArgs.model_validate(
        {"name": kind, "kind": kind, "instanceTypes": types, "maxSize": max_size, "maxUnavailablePercentage": percent}
    )


def test_gpu_groups_are_updated_without_a_surge_and_cpu_groups_as_eks_defaults() -> None:
    assert upgrade.update_strategy(_group("gpu", 2)) == "MINIMAL"
    assert upgrade.update_strategy(_group("cpu", 3)) == "DEFAULT"


@pytest.mark.parametrize(
    ("max_size", "percent", "minutes"),
    [
        (2, 33, 60),  # two batches of one node: within the provider's default
        (10, 33, 120),  # batches of 3: four of them
        (20, 10, 300),  # batches of 2: ten
        (200, 100, 60),  # one batch (at most 100 nodes at once, as EKS counts)
    ],
)
def test_a_node_groups_update_wait_covers_its_batches(max_size: int, percent: int, minutes: int) -> None:
    assert upgrade.update_timeout_minutes(_group("gpu", max_size, percent)) == minutes


def test_the_plan_gives_each_group_its_strategy_and_wait(dev_run) -> None:
    groups = {r.inputs["nodeGroupNamePrefix"].rstrip("-"): r for r in dev_run.by_type("aws:eks/nodeGroup:NodeGroup")}
    assert groups["gpu"].inputs["updateConfig"]["updateStrategy"] == "MINIMAL"
    assert groups["system"].inputs["updateConfig"]["updateStrategy"] == "DEFAULT"
    # dev's system group: up to 3 nodes, one at a time (33 %); its GPU group: up to 2
    assert {n: g.custom_timeouts for n, g in groups.items()} == {"system": {"update": "90m"}, "gpu": {"update": "60m"}}
