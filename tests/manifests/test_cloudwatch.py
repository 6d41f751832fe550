"""`observability.metrics: cloudwatch` and the metrics default per profile and region.

What is checked against what: the alarms' PutMetricAlarm parameters and the dashboard's PutDashboard request
against botocore's `cloudwatch` model (ParamValidator, enums, limits); every metric and dimension set the alarms
and the dashboard name against the Container Insights table in `manifests.cloudwatch.METRICS` (from the
CloudWatch user guide's enhanced-observability metric tables); the add-on's configuration against the chart's
values (aws-observability/helm-charts, chart 6.4.0); the plan under Pulumi mocks for the rest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore.validate import ParamValidator

from gpuplane.components.config import PlatformArgs
from gpuplane.components.config.platform import default_metrics
from gpuplane.components.facts import partition
from gpuplane.components.plan import addons, cost, cross_checks
from gpuplane.infra import config as infra_config
from gpuplane.infra import render
from gpuplane.manifests import cloudwatch, lifecycle, observability, wellknown
from tests.conftest import DEV_CLUSTER, assert_topic_key_admits, once_per_session, stack_config

CW = {"observability": {"metrics": "cloudwatch"}}
MODEL = botocore.session.get_session().get_service_model("cloudwatch")
GPU_OPERATOR_GROUPS = [
    {"name": "system", "instanceTypes": ["m6i.large"]},
    {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "driver": "operator"},
]


def _resources(run) -> list[dict[str, Any]]:
    """plan.json-style resources, as `render.cost_estimate` reads them."""
    return [
        {"urn": r.urn, "type": r.type, "name": r.name, "dependencies": r.dependencies, "inputs": r.inputs}
        for r in run.resources
    ]


@pytest.fixture(scope="session")
def cw_run(tmp_path_factory):
    observed = stack_config({"cluster": DEV_CLUSTER, **CW})
    return once_per_session(tmp_path_factory, "cloudwatch-run", lambda: render.run_stack(observed))


# --- the add-on and its agent's identity -------------------------------------------------------------------------
def _addon(run):
    (addon,) = [
        a
        for a in run.by_type("aws:eks/addon:Addon")
        if a.inputs["addonName"] == wellknown.ADDON_CLOUDWATCH_OBSERVABILITY
    ]
    return addon


def test_the_addon_collects_enhanced_container_insights_with_gpu_metrics_and_no_logs(cw_run):
    values = json.loads(_addon(cw_run).inputs["configurationValues"])
    kubernetes = values["agent"]["config"]["logs"]["metrics_collected"]["kubernetes"]
    assert kubernetes == {"enhanced_container_insights": True, "accelerated_compute_metrics": True}
    assert values["containerLogs"] == {"enabled": False}
    # Only keys the chart's values.yaml has at the top level (chart 6.4.0: agent, containerLogs, dcgmExporter...).
    assert set(values) <= {"agent", "containerLogs", "dcgmExporter", "tolerations", "manager"}


def test_the_agent_gets_its_role_through_the_addons_pod_identity_association(cw_run):
    addon = _addon(cw_run)
    (association,) = addon.inputs["podIdentityAssociations"]
    assert association["serviceAccount"] == wellknown.CLOUDWATCH_AGENT_SA == "cloudwatch-agent"
    role = next(r for r in cw_run.by_type("aws:iam/role:Role") if r.name.endswith("cloudwatch-agent-role"))
    assert association["roleArn"] == role.outputs["arn"]
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert set(trust["Action"]) == {"sts:AssumeRole", "sts:TagSession"}
    (attached,) = [
        a for a in cw_run.by_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment") if a.urn.endswith("agent-policy")
    ]
    assert attached.inputs["policyArn"] == "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"
    assert attached.urn in addon.dependencies  # credentials that can publish before the first pod asks
    assert addon.deleted_with == cw_run.one("aws:eks/cluster:Cluster").urn


def test_no_pod_identity_association_of_our_own_for_the_agent(cw_run):
    """The add-on owns the association (EKS deletes it with the add-on): a second one would conflict."""
    owners = {
        a.inputs["serviceAccount"] for a in cw_run.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    }
    assert wellknown.CLOUDWATCH_AGENT_SA not in owners


def test_the_addon_is_needed_offered_and_checked_by_preflight():
    args = stack_config({"cluster": DEV_CLUSTER, **CW}).platform
    assert addons.NeededAddon(wellknown.ADDON_CLOUDWATCH_OBSERVABILITY, "observability.metrics") in (
        addons.stack_addons(args)
    )
    for region in ("us-west-2", "us-gov-west-1", "cn-north-1"):
        assert lifecycle.addon_offered(wellknown.ADDON_CLOUDWATCH_OBSERVABILITY, region)


# --- one exporter per node -----------------------------------------------------------------------------------------
def test_our_dcgm_exporter_is_off_even_when_the_stack_asks_for_it(run_platform):
    config = stack_config({"cluster": DEV_CLUSTER, "observability": {"metrics": "cloudwatch", "dcgmExporter": True}})
    assert len([w for w in config.warnings if "dcgmExporter" in w]) == 1
    assert "one exporter per node" in config.warnings[-1]
    run = render.run_stack(config)
    releases = {r.inputs["name"] for r in run.by_type("kubernetes:helm.sh/v3:Release")}
    assert "dcgm-exporter" not in releases and "kube-prometheus-stack" not in releases
    # With the GPU Operator, its dcgmExporter is switched off in its values instead.
    operator_run = run_platform({**CW, "nodeGroups": GPU_OPERATOR_GROUPS})
    (operator,) = [
        r for r in operator_run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "gpu-operator"
    ]
    assert operator.inputs["values"]["dcgmExporter"]["enabled"] is False


def test_no_warning_when_dcgm_exporter_is_left_alone_or_the_backend_is_prometheus():
    assert not [w for w in stack_config({"cluster": DEV_CLUSTER, **CW}).warnings if "dcgmExporter" in w]
    prom = stack_config({"cluster": DEV_CLUSTER, "observability": {"metrics": "prometheus", "dcgmExporter": True}})
    assert not [w for w in prom.warnings if "dcgmExporter" in w]


# --- alarms ---------------------------------------------------------------------------------------------------------
TOPIC = "arn:aws:sns:us-west-2:123456789012:gpuplane-test-alerts"


def test_alarms_are_valid_put_metric_alarm_requests():
    validator = ParamValidator()
    shape = MODEL.operation_model("PutMetricAlarm").input_shape
    specs = cloudwatch.alarms("gpuplane-test", TOPIC, cloudwatch.AlarmBounds(gpu_memory_percent=95))
    assert len(specs) == 4
    for spec in specs:
        report = validator.validate(spec, shape)
        assert not report.has_errors(), report.generate_report()
        assert spec["ComparisonOperator"] in MODEL.shape_for("ComparisonOperator").enum
        assert spec["Statistic"] in MODEL.shape_for("Statistic").enum
        # TreatMissingData is a plain string in the model; its documented values (PutMetricAlarm reference):
        assert spec["TreatMissingData"] in {"breaching", "notBreaching", "ignore", "missing"}
        assert spec["Period"] % 60 == 0 and spec["EvaluationPeriods"] * spec["Period"] <= 86400
        assert spec["DatapointsToAlarm"] <= spec["EvaluationPeriods"]
        assert len(spec["AlarmName"]) <= MODEL.shape_for("AlarmName").metadata["max"]
        assert len(spec["AlarmDescription"]) <= MODEL.shape_for("AlarmDescription").metadata["max"]
        # Every metric is one Container Insights publishes, with that dimension set.
        dims = tuple(d["Name"] for d in spec["Dimensions"])
        assert spec["Namespace"] == "ContainerInsights"
        assert dims in cloudwatch.METRICS[spec["MetricName"]], (spec["MetricName"], dims)
        assert spec["AlarmActions"] == spec["OKActions"] == [TOPIC]


def test_alarm_thresholds_come_from_the_observability_bounds(run_platform):
    run = run_platform({"observability": {"metrics": "cloudwatch", "gpuMemoryPercent": 80}})
    alarms = {a.inputs["name"]: a.inputs for a in run.by_type("aws:cloudwatch/metricAlarm:MetricAlarm")}
    memory = alarms["gpuplane-test-gpu-memory-near-full"]
    assert memory["threshold"] == 80.0 and memory["metricName"] == "node_gpu_memory_utilization"
    assert memory["dimensions"] == {"ClusterName": "gpuplane-test"}
    assert set(alarms) == {
        "gpuplane-test-gpu-memory-near-full",
        "gpuplane-test-nodes-failed",
        "gpuplane-test-gpu-temperature-high",
        "gpuplane-test-container-insights-silent",
    }
    assert alarms["gpuplane-test-gpu-temperature-high"]["threshold"] == float(observability.GPU_TEMPERATURE_WARN_C)


def test_recorded_alarms_are_the_specs_and_notify_the_stacks_topic(cw_run):
    (topic,) = cw_run.by_type("aws:sns/topic:Topic")
    assert_topic_key_admits(cw_run, topic, "cloudwatch.amazonaws.com")  # not alias/aws/sns, which CloudWatch can't use
    # The key admits CloudWatch on behalf of the stack's alarms only: every one is named `<cluster>-...`.
    key = next(k for k in cw_run.by_type("aws:kms/key:Key") if k.outputs["arn"] == topic.inputs["kmsMasterKeyId"])
    publish = next(s for s in json.loads(key.inputs["policy"])["Statement"] if s["Sid"] == "EncryptForThePublisher")
    pattern = "arn:aws:cloudwatch:us-west-2:123456789012:alarm:gpuplane-test-*"
    assert publish["Condition"]["ArnLike"] == {"aws:SourceArn": pattern}
    alarms = cw_run.by_type("aws:cloudwatch/metricAlarm:MetricAlarm")
    assert alarms and all(a.inputs["name"].startswith("gpuplane-test-") for a in alarms)
    specs = {
        s["AlarmName"]: cloudwatch.alarm_args(s)
        for s in cloudwatch.alarms("gpuplane-test", topic.outputs["arn"], cloudwatch.AlarmBounds(95))
    }
    for alarm in cw_run.by_type("aws:cloudwatch/metricAlarm:MetricAlarm"):
        expected = specs[alarm.inputs["name"]]
        for key, value in expected.items():
            camel = "".join(w if i == 0 else w.capitalize() for i, w in enumerate(key.split("_")))
            camel = {"okActions": "okActions"}.get(camel, camel)
            assert alarm.inputs[camel] == value, key


def test_a_user_topic_is_used_as_given(run_platform):
    topic = "arn:aws:sns:us-west-2:123456789012:oncall"
    run = run_platform({"observability": {"metrics": "cloudwatch", "alertTopicArn": topic}})
    assert not run.by_type("aws:sns/topic:Topic")
    for alarm in run.by_type("aws:cloudwatch/metricAlarm:MetricAlarm"):
        assert alarm.inputs["alarmActions"] == [topic]


# --- the dashboard --------------------------------------------------------------------------------------------------
def test_dashboard_is_a_valid_put_dashboard_request_with_known_metrics(cw_run):
    (board,) = cw_run.by_type("aws:cloudwatch/dashboard:Dashboard")
    body = board.inputs["dashboardBody"]
    request = {"DashboardName": board.inputs["dashboardName"], "DashboardBody": body}
    report = ParamValidator().validate(request, MODEL.operation_model("PutDashboard").input_shape)
    assert not report.has_errors(), report.generate_report()
    document = json.loads(body)
    assert len(body.encode()) < 100_000  # PutDashboard's documented body limit (100 KB)
    named = cloudwatch.dashboard_metrics(document)
    assert len(named) >= 10
    for metric, dims in named:
        assert dims in cloudwatch.METRICS[metric], (metric, dims)
    for widget in document["widgets"]:
        assert widget["type"] == "metric" and widget["x"] + widget["width"] <= 24
        assert widget["properties"]["region"] == "us-west-2"
    assert "gpuplane-test" in body


def test_dashboard_metrics_rejects_what_it_does_not_know():
    board = cloudwatch.dashboard("c", "us-west-2")
    board["widgets"][0]["properties"]["metrics"].append(["AWS/EC2", "CPUUtilization", "InstanceId", "i-1"])
    with pytest.raises(ValueError, match="AWS/EC2"):
        cloudwatch.dashboard_metrics(board)
    board = cloudwatch.dashboard("c", "us-west-2")
    board["widgets"][0]["properties"]["metrics"][0][1] = "node_gpu_utilisation"
    assert ("node_gpu_utilisation", ("ClusterName",)) in cloudwatch.dashboard_metrics(board)
    assert "node_gpu_utilisation" not in cloudwatch.METRICS


# --- serving's autoscaling with this backend -------------------------------------------------------------------------
def _serving(metric: str, target: int | None = None) -> list[dict[str, Any]]:
    scaling = {"minReplicas": 1, "maxReplicas": 2, "metric": metric}
    if target is not None:
        scaling["target"] = target
    variant = {
        "name": "gpu",
        "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1},
        "autoscaling": scaling,
    }
    return [{"name": "m", "model": {"name": "m", "import": {"source": "s3://team-models/m/"}}, "variants": [variant]}]


@pytest.mark.parametrize("metric", ["requestsPerSecond", "latencyP90Ms", "gpuUtilization"])
def test_prometheus_signals_are_refused_with_cloudwatch_naming_key_value_and_allowed(metric):
    with pytest.raises(infra_config.ConfigError) as err:
        stack_config({"cluster": DEV_CLUSTER, **CW, "serving": _serving(metric, 40)})
    (line,) = [p for p in err.value.problems if "autoscaling.metric" in p]
    assert line.startswith("gpuplane:serving[0].variants[0].autoscaling.metric:")
    assert f"'{metric}'" in line and "'cloudwatch'" in line and "allowed with cloudwatch: cpu" in line


def test_cpu_scaling_renders_with_cloudwatch():
    config = stack_config({"cluster": DEV_CLUSTER, **CW, "serving": _serving("cpu")})
    assert cross_checks.platform_problems(config.platform) == []


# --- the default backend, per profile and region -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("profile", "region", "expected"),
    [
        ("dev", "us-west-2", "prometheus"),
        ("dev", "us-gov-west-1", "prometheus"),
        ("dev", "cn-north-1", "prometheus"),
        ("prod", "us-west-2", "managedPrometheus"),
        ("prod", "us-gov-west-1", "managedPrometheus"),
        ("prod", "cn-north-1", "prometheus"),
        ("prod", "cn-northwest-1", "prometheus"),
    ],
)
def test_default_metrics_by_profile_and_region(profile, region, expected):
    args = PlatformArgs.model_validate({"profile": profile, "cluster": DEV_CLUSTER}, context={"region": region})
    assert args.observability.metrics == expected
    offered = region in partition.service_regions("amp")
    assert default_metrics(profile, offered) == expected


def test_a_set_backend_wins_over_the_default():
    args = PlatformArgs.model_validate(
        {"profile": "prod", "observability": {"metrics": "cloudwatch"}}, context={"region": "us-west-2"}
    )
    assert args.observability.metrics == "cloudwatch"
    args = PlatformArgs.model_validate({"profile": "prod", "observability": {"retention": "3d"}})
    assert (args.observability.metrics, args.observability.retention) == ("managedPrometheus", "3d")


def test_the_stack_file_region_picks_the_default():
    assert stack_config({"profile": "prod"}).platform.observability.metrics == "managedPrometheus"
    assert stack_config({"cluster": DEV_CLUSTER}).platform.observability.metrics == "prometheus"


def test_the_shipped_stacks_get_the_profile_defaults():
    assert infra_config.load("dev").platform.observability.metrics == "prometheus"
    assert infra_config.load("prod").platform.observability.metrics == "managedPrometheus"


# --- cost ------------------------------------------------------------------------------------------------------------
def test_cloudwatch_cost_line_scales_with_nodes_and_counts_alarms_and_the_dashboard(cw_run):
    usage = cost.usage_from_resources("us-west-2", _resources(cw_run))
    assert usage.cloudwatch_agent and (usage.cloudwatch_alarms, usage.cloudwatch_dashboards) == (4, 1)
    (line,) = [x for x in cost.estimate(usage).lines if x.item == "CloudWatch Container Insights"]
    per_node = cost.CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE * 60 / 1e6 * 0.21
    fixed = (4 * 0.10 + 3.00) / 730
    idle_nodes = sum(g.idle_nodes for g in usage.groups)
    max_nodes = sum(g.max_size for g in usage.groups)
    assert line.idle == pytest.approx(idle_nodes * per_node + fixed, abs=1e-4)
    assert line.max == pytest.approx(max_nodes * per_node + fixed, abs=1e-4)
    assert any("not read from AWS" in n for n in line.notes)
    assert any(n.startswith("observability.metrics choices") for n in line.notes)


def test_each_choices_added_cost_is_on_the_render(dev_run):
    usage = cost.usage_from_resources("us-west-2", _resources(dev_run))
    choices = cost.metrics_choices(usage)
    volume = 10 * 0.08 / 730  # its 10 GiB gp3 volume (dev's 7d retention), rounded like every line
    assert choices["prometheus"] == (round(volume, 4), round(volume, 4))
    assert choices["managedPrometheus"][0] == cost.amp_line(1, 1).idle > choices["cloudwatch"][0] > 0
    caption = render.cost_caption(cost.estimate(usage).as_dict())
    assert "observability.metrics choices for this stack" in caption and "cloudwatch $" in caption


# --- the render's summary and stack.md -------------------------------------------------------------------------------
def test_render_names_the_backend_alarms_and_dashboard(cw_run, tmp_path: Path):
    facts = render.observability_summary(cw_run)
    assert facts["metrics"] == "cloudwatch"
    assert facts["alerts"] == [
        "gpuplane-test-container-insights-silent",
        "gpuplane-test-gpu-memory-near-full",
        "gpuplane-test-gpu-temperature-high",
        "gpuplane-test-nodes-failed",
    ]
    assert facts["dashboards"] == ["CloudWatch gpuplane-test-gpus"]
    out = tmp_path / "out"
    render.write(stack_config({"cluster": DEV_CLUSTER, **CW}), out)
    assert "Metrics: cloudwatch (the amazon-cloudwatch-observability add-on" in (out / "stack.md").read_text()
    board = json.loads((out / "observability" / "cloudwatch" / "gpuplane-test-gpus.json").read_text())
    assert board == cloudwatch.dashboard("gpuplane-test", "us-west-2")
    alarms = json.loads((out / "observability" / "cloudwatch" / "alarms.json").read_text())
    assert [a["name"] for a in alarms] == facts["alerts"]
    planned = json.loads((out / "tfplan.json").read_text())
    types = {r["type"] for r in planned["resource_changes"]}
    assert {"aws_cloudwatch_metric_alarm", "aws_cloudwatch_dashboard", "aws_eks_addon"} <= types
