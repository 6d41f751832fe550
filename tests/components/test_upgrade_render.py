"""The same stack rendered at two adjacent minors: exactly what changes, and in which order it moves.

Changing `cluster.kubernetesVersion` from 1.35 to 1.36 in the prod stack must move the control plane, every
EKS add-on (its `addonVersion` for the new minor) and every managed node group (`version` and the AMI
`releaseVersion` of the new minor), and nothing else on the AWS side; and each must move after the control
plane, the node groups after the add-ons nodes need. At `cluster.nodeUpgradeOrder: parallel` (the default) the
system and GPU groups move at once; at `systemFirst` the same render moves the same inputs, and each GPU group
moves after the system groups.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from gpuplane.infra import config, mockrun, render
from gpuplane.manifests import versions, wellknown
from tests.conftest import once_per_session
from tests.shipped import PROD

ADDON = "aws:eks/addon:Addon"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
CLUSTER = "aws:eks/cluster:Cluster"


def render_at(version: str, order: str | None = None) -> mockrun.Recording:
    raw: dict[str, Any] = yaml.safe_load(PROD.read_text())["config"]
    raw["gpuplane:cluster"] = {**raw["gpuplane:cluster"], "kubernetesVersion": version}
    if order is not None:
        raw["gpuplane:cluster"]["nodeUpgradeOrder"] = order
    return render.run_stack(config.parse(raw, "prod"))


@pytest.fixture(scope="session")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[mockrun.Recording, mockrun.Recording]:
    assert yaml.safe_load(PROD.read_text())["config"]["gpuplane:cluster"]["kubernetesVersion"] == "1.35"
    assert "nodeUpgradeOrder" not in yaml.safe_load(PROD.read_text())["config"]["gpuplane:cluster"]
    return once_per_session(tmp_path_factory, "upgrade-both", lambda: (render_at("1.35"), render_at("1.36")))


@pytest.fixture(scope="session")
def system_first(tmp_path_factory: pytest.TempPathFactory) -> tuple[mockrun.Recording, mockrun.Recording]:
    return once_per_session(
        tmp_path_factory,
        "upgrade-system-first",
        lambda: (render_at("1.35", "systemFirst"), render_at("1.36", "systemFirst")),
    )


def changes(old: mockrun.Recording, new: mockrun.Recording) -> dict[str, tuple[str, list[str]]]:
    """URN -> (type, the input keys whose values differ)."""
    before = {r.urn: r for r in old.resources}
    assert set(before) == {r.urn for r in new.resources}, "a new minor must not add or remove resources"
    found = {}
    for resource in new.resources:
        was = before[resource.urn].inputs
        keys = sorted(k for k in {*was, *resource.inputs} if was.get(k) != resource.inputs.get(k))
        if keys:
            found[resource.urn] = (resource.type, keys)
    return found


@pytest.mark.parametrize("renders", ["both", "system_first"])
def test_every_add_on_and_node_group_moves_to_the_new_minor_and_nothing_else_on_aws(
    request: pytest.FixtureRequest, renders: str
) -> None:
    old, new = request.getfixturevalue(renders)
    changed = changes(old, new)
    aws_changes = {urn: c for urn, c in changed.items() if c[0].startswith("aws:")}
    expected = {r.urn for r in new.resources if r.type in {ADDON, NODE_GROUP, CLUSTER}}
    assert set(aws_changes) == expected
    for urn, (type_, keys) in aws_changes.items():
        resource = new.get(urn)
        if type_ == CLUSTER:
            assert keys == ["version"] and resource.inputs["version"] == "1.36"
        elif type_ == ADDON:
            assert keys == ["addonVersion"]
            name = resource.inputs["addonName"]
            assert resource.inputs["addonVersion"] == f"[default of {name} for 1.36]"
            assert old.get(urn).inputs["addonVersion"] == f"[default of {name} for 1.35]"
        else:
            assert keys == ["releaseVersion", "version"]
            assert resource.inputs["version"] == "1.36"
            assert "/1.36/" in resource.inputs["releaseVersion"] and "/1.35/" in old.get(urn).inputs["releaseVersion"]
    assert len([c for c in aws_changes.values() if c[0] == ADDON]) >= 5
    assert len([c for c in aws_changes.values() if c[0] == NODE_GROUP]) >= 2


@pytest.mark.parametrize("renders", ["both", "system_first"])
def test_in_cluster_changes_are_only_what_follows_the_minor(request: pytest.FixtureRequest, renders: str) -> None:
    """Pod Security labels pin the policy version; the autoscaler's image matches the minor."""
    old, new = request.getfixturevalue(renders)
    kube = {urn: c for urn, c in changes(old, new).items() if not c[0].startswith("aws:")}
    for urn, (type_, keys) in kube.items():
        assert type_ in {"kubernetes:core/v1:Namespace", "kubernetes:helm.sh/v3:Release"}, urn
        if type_ == "kubernetes:core/v1:Namespace":
            assert keys == ["metadata"], urn
            labels = new.get(urn).inputs["metadata"]["labels"]
            assert labels["pod-security.kubernetes.io/enforce-version"] == "v1.36"
        else:
            assert keys == ["values"], urn
            assert new.get(urn).inputs["values"]["image"]["tag"] == versions.CLUSTER_AUTOSCALER_IMAGES["1.36"]


def closure(recording: mockrun.Recording, urn: str) -> set[str]:
    """Every URN `urn` waits for, directly or through what it waits for."""
    seen: set[str] = set()
    todo = list(recording.get(urn).dependencies)
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(recording.get(current).dependencies)
    return seen


def test_the_order_is_control_plane_add_ons_node_groups_then_add_ons_that_need_nodes(
    both: tuple[mockrun.Recording, mockrun.Recording],
) -> None:
    _, new = both
    cluster = new.one(CLUSTER).urn
    addons = {r.inputs["addonName"]: r.urn for r in new.by_type(ADDON)}
    groups = {r.name: r.urn for r in new.by_type(NODE_GROUP)}
    system, gpu = groups["gpuplane-prod-system-ng"], groups["gpuplane-prod-gpu-ng"]
    for urn in [*addons.values(), *groups.values()]:
        assert cluster in closure(new, urn), urn
    for name in (wellknown.ADDON_VPC_CNI, wellknown.ADDON_KUBE_PROXY, wellknown.ADDON_POD_IDENTITY_AGENT):
        for group in (system, gpu):
            assert addons[name] in closure(new, group), name
            assert group not in closure(new, addons[name]), name
    # coredns and the other add-ons that need nodes move after the system groups; every group moves at once
    # (NodeGroup's `after` says why), so neither group waits for the other.
    for name in (wellknown.ADDON_COREDNS, wellknown.ADDON_EFS_CSI, wellknown.ADDON_NODE_MONITORING_AGENT):
        assert system in closure(new, addons[name]), name
    assert gpu not in closure(new, system)
    assert system not in closure(new, gpu)
    assert addons[wellknown.ADDON_COREDNS] not in closure(new, gpu)


def test_at_system_first_gpu_groups_move_after_system_groups_after_add_ons_after_the_control_plane(
    system_first: tuple[mockrun.Recording, mockrun.Recording],
) -> None:
    _, new = system_first
    cluster = new.one(CLUSTER).urn
    addons = {r.inputs["addonName"]: r.urn for r in new.by_type(ADDON)}
    groups = {r.name: r.urn for r in new.by_type(NODE_GROUP)}
    system, gpu = groups["gpuplane-prod-system-ng"], groups["gpuplane-prod-gpu-ng"]
    before_nodes = [
        addons[n] for n in (wellknown.ADDON_VPC_CNI, wellknown.ADDON_KUBE_PROXY, wellknown.ADDON_POD_IDENTITY_AGENT)
    ]
    # control plane <- add-ons before nodes <- system group <- GPU group: each waits for the one before it.
    assert all(cluster in closure(new, a) for a in before_nodes)
    assert set(before_nodes) <= closure(new, system)
    assert system in new.get(gpu).dependencies
    assert {cluster, *before_nodes, system} <= closure(new, gpu)
    # and never the other way round.
    assert gpu not in closure(new, system)
    assert not {system, gpu} & set().union(*(closure(new, a) for a in before_nodes))
    # coredns and the other add-ons that need nodes wait for the system groups, not for the GPU groups, which
    # do not wait for them either (they move beside each other).
    for name in (wellknown.ADDON_COREDNS, wellknown.ADDON_EFS_CSI, wellknown.ADDON_NODE_MONITORING_AGENT):
        assert system in closure(new, addons[name]), name
        assert gpu not in closure(new, addons[name]), name
        assert addons[name] not in closure(new, gpu), name
