"""Node auto repair: the config's checks, the plan's defaults, and what the render sends, against botocore's model.

Mocks accept any input; the EKS API model botocore ships is the source of truth for names, limits and the
`RepairAction` enum, so each rendered `nodeRepairConfig` is validated against the `NodeRepairConfig` shape.
"""

from __future__ import annotations

import json
import typing

import botocore.session
import pytest
from botocore.validate import ParamValidator

from gpuplane.components.config import NodeGroupArgs
from gpuplane.components.config.node_repair import REPAIR_ACTIONS, NodeMonitoringCondition, NodeRepairArgs
from gpuplane.components.plan import node_repair
from gpuplane.infra import config
from tests.conftest import DEV_CLUSTER, stack_config

EKS = botocore.session.get_session().get_service_model("eks")
SHAPE = EKS.shape_for("NodeRepairConfig")


def _to_api(value):
    """pulumi_aws names (snake) or Pulumi's recorded inputs (camel) -> the API's camelCase names."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            head, *rest = key.split("_")
            out[head + "".join(p.capitalize() for p in rest)] = _to_api(item)
        return out
    if isinstance(value, list):
        return [_to_api(v) for v in value]
    return value


def _validate(api_value: dict[str, typing.Any]) -> None:
    report = ParamValidator().validate(api_value, SHAPE)
    assert not report.has_errors(), report.generate_report()
    for override in api_value.get("nodeRepairConfigOverrides", []):
        assert set(override) == set(EKS.shape_for("NodeRepairConfigOverrides").members)  # all four required
        assert override["repairAction"] in EKS.shape_for("NodeRepairConfigOverrides").members["repairAction"].enum


def gpu_group(**repair) -> NodeGroupArgs:
    return NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g5.xlarge"], min_size=0, max_size=10, repair=repair)


def test_our_enum_is_the_apis():
    assert set(REPAIR_ACTIONS) == set(EKS.shape_for("NodeRepairConfigOverrides").members["repairAction"].enum)


def test_gpu_group_default_replaces_on_gpu_failures_one_at_a_time():
    cfg = node_repair.repair_config(gpu_group())
    assert cfg["enabled"] is True
    assert cfg["max_unhealthy_node_threshold_count"] == 2  # a fifth of maxSize 10
    assert cfg["max_parallel_nodes_repaired_count"] == 1
    reasons = {o["node_unhealthy_reason"]: o for o in cfg["node_repair_config_overrides"]}
    assert {"NvidiaXID79Error", "NvidiaDoubleBitError", "NvidiaNVLinkError", "DCGMDiagnosticFailure"} <= set(reasons)
    assert {o["repair_action"] for o in reasons.values()} == {"Replace"}
    assert {o["min_repair_wait_time_mins"] for o in reasons.values()} == {10}
    assert {o["node_monitoring_condition"] for o in reasons.values()} == {"AcceleratedHardwareReady"}
    _validate(_to_api(cfg))


@pytest.mark.parametrize(("max_size", "threshold"), [(1, 1), (2, 1), (4, 1), (5, 1), (10, 2), (100, 20)])
def test_threshold_is_a_fifth_of_the_group_and_never_zero(max_size, threshold):
    assert node_repair.default_unhealthy_threshold(max_size) == threshold


def test_cpu_group_keeps_eks_defaults_per_condition():
    cfg = node_repair.repair_config(NodeGroupArgs(name="system", instance_types=["m6i.large"], max_size=3))
    assert cfg == {"enabled": True, "max_unhealthy_node_threshold_count": 1, "max_parallel_nodes_repaired_count": 1}
    _validate(_to_api(cfg))


def test_user_values_win_and_validate():
    cfg = node_repair.repair_config(
        gpu_group(
            maxUnhealthyNodeThresholdPercentage=30,
            maxParallelNodesRepairedPercentage=50,
            nodeRepairConfigOverrides=[
                {
                    "nodeMonitoringCondition": "AcceleratedHardwareReady",
                    "nodeUnhealthyReason": "NvidiaXID13Error",
                    "minRepairWaitTimeMins": 5,
                    "repairAction": "Reboot",
                }
            ],
        )
    )
    assert cfg == {
        "enabled": True,
        "max_unhealthy_node_threshold_percentage": 30,
        "max_parallel_nodes_repaired_percentage": 50,
        "node_repair_config_overrides": [
            {
                "node_monitoring_condition": "AcceleratedHardwareReady",
                "node_unhealthy_reason": "NvidiaXID13Error",
                "min_repair_wait_time_mins": 5,
                "repair_action": "Reboot",
            }
        ],
    }
    _validate(_to_api(cfg))


def test_empty_overrides_keep_eks_defaults_on_a_gpu_group():
    assert "node_repair_config_overrides" not in node_repair.repair_config(gpu_group(nodeRepairConfigOverrides=[]))


def test_disabled():
    assert node_repair.repair_config(gpu_group(enabled=False)) == {"enabled": False}


def test_conditions_are_the_agents():
    assert set(typing.get_args(NodeMonitoringCondition)) >= {"AcceleratedHardwareReady", "KernelReady"}


@pytest.mark.parametrize(
    ("repair", "needle"),
    [
        ({"maxUnhealthyNodeThresholdCount": 2, "maxUnhealthyNodeThresholdPercentage": 20}, "takes one of the two"),
        ({"maxParallelNodesRepairedCount": 1, "maxParallelNodesRepairedPercentage": 20}, "takes one of the two"),
        ({"maxUnhealthyNodeThresholdPercentage": 101}, "less than or equal to 100"),
        ({"maxParallelNodesRepairedCount": 0}, "greater than or equal to 1"),
        ({"enabled": False, "maxParallelNodesRepairedCount": 2}, "maxParallelNodesRepairedCount"),
        (
            {
                "nodeRepairConfigOverrides": [
                    {
                        "nodeMonitoringCondition": "AcceleratedHardwareReady",
                        "nodeUnhealthyReason": "NvidiaXID79Error",
                        "minRepairWaitTimeMins": 10,
                        "repairAction": "Terminate",
                    }
                ]
            },
            "'Replace', 'Reboot' or 'NoAction'",
        ),
        (
            {
                "nodeRepairConfigOverrides": [
                    {"nodeMonitoringCondition": "AcceleratedHardwareReady", "nodeUnhealthyReason": "NvidiaXID79Error"}
                ]
            },
            "minRepairWaitTimeMins: is required",
        ),
        (
            {
                "nodeRepairConfigOverrides": [
                    {
                        "nodeMonitoringCondition": "GpuReady",
                        "nodeUnhealthyReason": "NvidiaXID79Error",
                        "minRepairWaitTimeMins": 10,
                        "repairAction": "Replace",
                    }
                ]
            },
            "AcceleratedHardwareReady",
        ),
        (
            {
                "nodeRepairConfigOverrides": [
                    {
                        "nodeMonitoringCondition": "AcceleratedHardwareReady",
                        "nodeUnhealthyReason": "xid 79",
                        "minRepairWaitTimeMins": 10,
                        "repairAction": "Replace",
                    }
                ]
            },
            "not a node monitoring agent reason",
        ),
    ],
)
def test_bad_repair_config_names_the_key_and_what_is_allowed(repair, needle):
    groups = [
        {"name": "system", "instanceTypes": ["m6i.large"]},
        {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 0, "repair": repair},
    ]
    with pytest.raises(config.ConfigError) as err:
        stack_config({"cluster": DEV_CLUSTER, "nodeGroups": groups})
    message = str(err.value)
    assert "gpuplane:nodeGroups[1].repair" in message
    assert needle in message


def test_direct_caller_gets_the_same_check():
    with pytest.raises(ValueError, match="takes one of the two"):
        NodeRepairArgs(max_parallel_nodes_repaired_count=1, max_parallel_nodes_repaired_percentage=5)


def test_rendered_node_groups_carry_valid_repair_config(request):
    for run in (request.getfixturevalue("dev_run"), request.getfixturevalue("prod_run")):
        groups = run.by_type("aws:eks/nodeGroup:NodeGroup")
        assert groups
        for group in groups:
            repair = group.inputs["nodeRepairConfig"]
            assert repair["enabled"] is True
            _validate(_to_api(repair))
            gpu = group.inputs["labels"].get("gpuplane.io/node-group") == "gpu"
            assert bool(repair.get("nodeRepairConfigOverrides")) == gpu


def test_monitoring_agent_addon_is_installed_with_dcgm_tolerations(request):
    run = request.getfixturevalue("dev_run")
    addons = {a.inputs["addonName"]: a for a in run.by_type("aws:eks/addon:Addon")}
    agent = addons["eks-node-monitoring-agent"]
    values = json.loads(agent.inputs["configurationValues"])
    keys = {t["key"] for t in values["dcgmAgent"]["tolerations"]}
    assert "nvidia.com/gpu" in keys
