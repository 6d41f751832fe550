"""Metrics, alert rules and dashboards: rules unit-tested with promtool, every query parsed and its names known.

promtool comes from Debian's `prometheus` package (`.ci/run` installs it); without it the promtool tests skip
with a message saying so, and the rest still runs.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.components.config import ObservabilityArgs
from gpuplane.infra import config as infra_config
from gpuplane.manifests import observability, serving, versions, wellknown
from tests import tools
from tests.conftest import DEV_CLUSTER, stack_config

# A tool of .ci/tools: skipped where missing, a failure where CI requires it (tests/tools.py).
needs_promtool = pytest.mark.tool("promtool")
BOUNDS = observability.AlertBounds(serving_p99_ms=500, queue_wait_minutes=30, gpu_memory_percent=95)

# The fields of the Prometheus operator's CRDs (monitoring.coreos.com/v1, prometheus-operator v0.93) that these
# objects may use: a typo in a field the operator would drop silently fails here.
_ALLOWED: dict[str, set[str]] = {
    "PodMonitor.spec": {"selector", "podMetricsEndpoints", "namespaceSelector", "jobLabel", "podTargetLabels"},
    "PodMonitor.endpoint": {"port", "path", "interval", "scheme", "relabelings", "honorLabels", "scrapeTimeout"},
    "ServiceMonitor.spec": {"selector", "endpoints", "namespaceSelector", "jobLabel", "targetLabels"},
    # tlsConfig and bearerTokenFile (deprecated in favour of `authorization`, still served) as Kueue's chart uses them.
    "ServiceMonitor.endpoint": {
        *("port", "path", "interval", "scheme", "relabelings", "honorLabels", "scrapeTimeout"),
        *("tlsConfig", "bearerTokenFile"),
    },
    "tlsConfig": {"insecureSkipVerify", "serverName", "ca", "cert", "keySecret"},
    "relabeling": {"sourceLabels", "targetLabel", "regex", "replacement", "action", "separator", "modulus"},
    "PrometheusRule.spec": {"groups"},
    "PrometheusRule.group": {"name", "rules", "interval", "limit"},
    "PrometheusRule.rule": {"alert", "record", "expr", "for", "labels", "annotations", "keep_firing_for"},
}


def monitoring_problems(obj: dict[str, Any]) -> list[str]:
    """What the Prometheus operator's CRD would not take in `obj` (fields we use, names, durations)."""
    problems: list[str] = []

    def extra(where: str, value: dict[str, Any]) -> None:
        unknown = set(value) - _ALLOWED[where]
        if unknown:
            problems.append(f"{where}: unknown {sorted(unknown)}")

    if set(obj) != {"apiVersion", "kind", "metadata", "spec"} or obj["apiVersion"] != wellknown.MONITORING_API:
        problems.append(f"top level: {sorted(obj)} {obj.get('apiVersion')}")
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", obj["metadata"]["name"]):
        problems.append(f"name {obj['metadata']['name']}")
    spec = obj["spec"]
    if obj["kind"] in {"PodMonitor", "ServiceMonitor"}:
        kind = obj["kind"]
        extra(f"{kind}.spec", spec)
        for endpoint in spec["podMetricsEndpoints" if kind == "PodMonitor" else "endpoints"]:
            extra(f"{kind}.endpoint", endpoint)
            if not re.fullmatch(r"[0-9]+(ms|s|m|h)", endpoint.get("interval", "30s")):
                problems.append(f"interval {endpoint['interval']}")
            for relabel in endpoint.get("relabelings", []):
                extra("relabeling", relabel)
            if "tlsConfig" in endpoint:
                extra("tlsConfig", endpoint["tlsConfig"])
    elif obj["kind"] == "PrometheusRule":
        extra("PrometheusRule.spec", spec)
        for group in spec["groups"]:
            extra("PrometheusRule.group", group)
            for rule in group["rules"]:
                extra("PrometheusRule.rule", rule)
    else:
        problems.append(f"kind {obj['kind']} not expected")
    return problems


def promtool(*args: str, cwd: Path) -> str:
    done = subprocess.run([tools.need("promtool"), *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def write_rules(tmp_path: Path, groups: list[dict[str, Any]], name: str = "rules.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    return path


def all_rules() -> list[dict[str, Any]]:
    return [r for g in observability.alert_rule_groups(BOUNDS) for r in g["rules"]]


def all_expressions() -> list[str]:
    exprs = [r["expr"] for g in observability.alert_rule_groups(BOUNDS) for r in g["rules"]]
    for dashboard in observability.dashboards().values():
        exprs += observability.dashboard_expressions(dashboard)
    return exprs


# --- rules ---------------------------------------------------------------------------------------------------
@needs_promtool
def test_rules_pass_promtool_check(tmp_path):
    out = promtool("check", "rules", str(write_rules(tmp_path, observability.alert_rule_groups(BOUNDS))), cwd=tmp_path)
    assert f"SUCCESS: {len(all_rules())} rules found" in out


def test_bounds_come_from_the_config():
    groups = observability.alert_rule_groups(observability.AlertBounds(serving_p99_ms=250, queue_wait_minutes=90))
    rules = {r["alert"]: r for g in groups for r in g["rules"]}
    assert rules["ServingLatencyP99High"]["expr"].endswith("> 250")
    for waiting in ("TrainingRunsWaiting", "TrainingRunsOverQuota", "TrainingRunsWaitingForNodes"):
        assert rules[waiting]["for"] == "90m"


# --- every expression parses and queries only known metrics ---------------------------------------------------
@needs_promtool
def test_every_expression_parses(tmp_path):
    groups = [
        {
            "name": "parse",
            "rules": [{"record": f"gpuplane:check{i}", "expr": e} for i, e in enumerate(all_expressions())],
        }
    ]
    promtool("check", "rules", str(write_rules(tmp_path, groups, "parse.yaml")), cwd=tmp_path)


_FUNCTIONS = {
    "sum", "avg", "max", "min", "rate", "histogram_quantile", "by", "on", "group_left", "and", "or", "unless",
    "max_over_time", "increase", "le", "humanize", "offset", "label_replace",
}  # fmt: skip


def metric_names(expr: str) -> set[str]:
    """Metric names of a PromQL expression: identifiers outside braces, strings and label lists, not keywords."""
    bare = re.sub(r"\{[^}]*\}", "", expr)
    bare = re.sub(r'"[^"]*"', "", bare)
    bare = re.sub(r"\b(by|on|group_left|without)\s*\([^)]*\)", "", bare)
    bare = re.sub(r"\[[^\]]*\]", "", bare)
    names = set(re.findall(r"(?<![\w:])([A-Za-z_:][\w:]*)", bare))
    return {n for n in names if n not in _FUNCTIONS and not re.fullmatch(r"[0-9.e+-]+", n)}


def test_metric_names_are_parsed_as_expected():
    expr = 'histogram_quantile(0.99, sum by (a, le) (rate(:tensorflow:serving:request_latency_bucket{x="1"}[5m])))'
    assert metric_names(expr) == {":tensorflow:serving:request_latency_bucket"}
    assert metric_names('label_replace(max_over_time(m{x="1"}[5m]), "err_code", "$1", "xid", "(.+)")') == {"m"}


def test_every_expression_queries_only_known_metrics():
    unknown = {name for expr in all_expressions() for name in metric_names(expr)} - observability.KNOWN_METRICS
    assert unknown == set()


# --- dashboards ------------------------------------------------------------------------------------------------
def test_dashboards_are_json_with_the_datasource_as_a_variable():
    boards = observability.dashboards()
    assert set(boards) == {"gpuplane-gpus.json", "gpuplane-serving.json", "gpuplane-queue.json"}
    for board in boards.values():
        text = json.dumps(board)
        assert json.loads(text) == board
        assert board["templating"]["list"][0] == {
            "name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"
        }  # fmt: skip
        for panel in board["panels"]:
            assert panel["datasource"]["uid"] == "${datasource}"
            assert panel["targets"]
        assert len({p["id"] for p in board["panels"]}) == len(board["panels"])


def test_gpu_use_per_run_and_per_model_is_one_query():
    exprs = observability.dashboard_expressions(observability.dashboards()["gpuplane-gpus.json"])
    assert any("label_jobset_sigs_k8s_io_jobset_name" in e and "DCGM_FI_DEV_GPU_UTIL" in e for e in exprs)
    assert any("label_gpuplane_io_variant" in e and "DCGM_FI_DEV_GPU_UTIL" in e for e in exprs)
    # kube-state-metrics must copy those pod labels, or the joins are empty.
    values = observability.stack_values(retention="7d", grafana=True, tolerations=[])
    allow = values["kube-state-metrics"]["metricLabelsAllowlist"][0]
    for label in ("jobset.sigs.k8s.io/jobset-name", "gpuplane.io/variant", "app.kubernetes.io/instance"):
        assert label in allow


def test_serving_dashboard_shows_variants_side_by_side():
    exprs = observability.dashboard_expressions(observability.dashboards()["gpuplane-serving.json"])
    assert all("variant" in e for e in exprs)
    assert sum("histogram_quantile" in e for e in exprs) == 3


def test_dashboard_config_map_is_what_grafanas_sidecar_loads():
    doc = observability.dashboard_config_map(
        "gpuplane-gpus.json", observability.dashboards()["gpuplane-gpus.json"], "monitoring"
    )
    assert doc["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(doc["data"]["gpuplane-gpus.json"])["uid"] == "gpuplane-gpus"


# --- what the stack renders -----------------------------------------------------------------------------------
def test_serving_monitor_matches_the_serving_pods():
    monitor = observability.serving_pod_monitor("ml")
    assert monitoring_problems(monitor) == []
    assert monitor["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/name": serving.APP_NAME}
    endpoint = monitor["spec"]["podMetricsEndpoints"][0]
    assert endpoint["port"] == "http" and endpoint["path"] == "/monitoring/prometheus/metrics"


def test_tf_serving_starts_with_its_prometheus_endpoint():
    assert serving.monitoring_config() == (
        'prometheus_config {\n  enable: true\n  path: "/monitoring/prometheus/metrics"\n}\n'
    )


def test_monitoring_problems_catches_a_typo():
    rule = observability.prometheus_rule(
        "x", "monitoring", [{"name": "g", "rules": [{"alert": "A", "expr": "1", "fro": "5m"}]}]
    )
    assert monitoring_problems(rule) == ["PrometheusRule.rule: unknown ['fro']"]


def test_dev_render_has_the_stack_rules_dashboards_and_monitors(dev_run):
    releases = {r.inputs["name"]: r.inputs for r in dev_run.by_type("kubernetes:helm.sh/v3:Release")}
    stack = releases["kube-prometheus-stack"]
    assert (stack["chart"], stack["version"]) == ("kube-prometheus-stack", versions.KUBE_PROMETHEUS_STACK_VERSION)
    spec = stack["values"]["prometheus"]["prometheusSpec"]
    assert spec["serviceMonitorSelectorNilUsesHelmValues"] is False and spec["ruleSelectorNilUsesHelmValues"] is False
    # dcgm-exporter's and Kueue's charts make no ServiceMonitor (it would need the stack's CRDs at install): their
    # releases do not wait for the stack; ours, applied after the stack, select their Services.
    dcgm = next(r for r in dev_run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "dcgm-exporter")
    kueue = next(r for r in dev_run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "kueue")
    assert dcgm.inputs["values"]["serviceMonitor"]["enabled"] is False
    assert releases["kueue"]["values"]["enablePrometheus"] is False
    stack_urn = next(
        r.urn for r in dev_run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "kube-prometheus-stack"
    )
    assert stack_urn not in dcgm.dependencies and stack_urn not in kueue.dependencies
    monitors = {
        r.inputs["metadata"]["name"]: r for r in dev_run.by_type("kubernetes:monitoring.coreos.com/v1:ServiceMonitor")
    }
    for monitor_name, builder in (
        ("kueue", observability.kueue_service_monitor),
        ("dcgm-exporter", observability.dcgm_service_monitor),
    ):
        monitor = monitors[monitor_name]
        assert stack_urn in monitor.dependencies
        assert monitor.inputs["metadata"]["namespace"] == "monitoring"
        assert monitor.inputs["spec"] == builder()["spec"]
    assert monitors["kueue"].inputs["spec"]["namespaceSelector"] == {"matchNames": ["kueue-system"]}
    assert monitors["kueue"].inputs["spec"]["endpoints"][0]["scheme"] == "https"
    assert monitors["dcgm-exporter"].inputs["spec"]["selector"]["matchLabels"] == {
        "app.kubernetes.io/name": "dcgm-exporter",
        "app.kubernetes.io/instance": "dcgm-exporter",
    }
    kinds = {r.inputs["kind"] for r in dev_run.resources if r.type.startswith("kubernetes:monitoring.coreos.com")}
    assert kinds == {"PrometheusRule", "PodMonitor", "ServiceMonitor"}
    serving_pods = [r for r in dev_run.by_type("kubernetes:apps/v1:Deployment") if "tfserving" in json.dumps(r.inputs)]
    assert serving_pods
    for deployment in serving_pods:
        args = deployment.inputs["spec"]["template"]["spec"]["containers"][0]["args"]
        assert "--monitoring_config_file=/etc/tfserving/monitoring.config" in " ".join(args)


def test_every_in_cluster_scrape_of_dcgm_exporter_gives_node_and_drops_the_exporters_own_pod(dev_run):
    # The rules and dashboards group GPU series by `node` and name the run by `namespace`/`pod`. The Prometheus
    # operator labels a target of a pod-backed Service with `pod`, `namespace` and `container` (the exporter's own)
    # and gives no `node`: only the relabelings do. Both ways of asking for the scrape must carry them: our
    # ServiceMonitor (the standalone exporter's path, what the dev stack applies) and the chart's or the GPU
    # Operator's `serviceMonitor` values.
    (monitor,) = [
        r
        for r in dev_run.by_type("kubernetes:monitoring.coreos.com/v1:ServiceMonitor")
        if r.inputs["metadata"]["name"] == "dcgm-exporter"
    ]
    (endpoint,) = monitor.inputs["spec"]["endpoints"]
    for scrape in (endpoint, observability.dcgm_service_monitor_values(True)):
        assert scrape["honorLabels"] is True  # the workload's namespace/pod, as the exporter writes them
        assert scrape["interval"] == "30s"
        assert scrape["relabelings"] == [
            {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"},
            {"action": "labeldrop", "regex": "namespace|pod|container"},
        ]


def _release(recording, name):
    return next(r for r in recording.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == name)


def test_the_autoscaler_is_scraped_through_a_service_monitor_after_the_crds_without_waiting_for_them(dev_run):
    autoscaler = _release(dev_run, wellknown.CLUSTER_AUTOSCALER_RELEASE)
    values = autoscaler.inputs["values"]
    assert autoscaler.inputs["namespace"] == "kube-system"
    assert values["extraArgs"]["emit-per-nodegroup-metrics"] is True  # the back-off gauge per node group
    # the chart's ServiceMonitor stays off: the autoscaler does not wait for the stack, whose pods may need a
    # node only it adds; ours follows the stack's CRD
    assert values["serviceMonitor"] == {"enabled": False}
    stack = _release(dev_run, "kube-prometheus-stack")
    assert stack.urn not in autoscaler.dependencies
    (monitor,) = [
        r
        for r in dev_run.by_type("kubernetes:monitoring.coreos.com/v1:ServiceMonitor")
        if r.inputs["metadata"]["name"] == "cluster-autoscaler"
    ]
    assert stack.urn in monitor.dependencies
    assert monitor.inputs["spec"] == observability.autoscaler_service_monitor()["spec"]
    # the stack reads ServiceMonitors of every namespace and label
    spec = stack.inputs["values"]["prometheus"]["prometheusSpec"]
    assert spec["serviceMonitorSelectorNilUsesHelmValues"] is False


def test_the_autoscalers_service_monitor_selects_the_charts_service():
    monitor = observability.autoscaler_service_monitor()
    assert monitoring_problems(monitor) == []
    assert monitor["metadata"]["namespace"] == "kube-system"
    # chart 9.59.0 _helpers.tpl "cluster-autoscaler.instance-name" (release, <cloudProvider>-<chart name>), the
    # labels of its Service (templates/service.yaml), whose port `http` (service.portName) targets 8085
    assert monitor["spec"]["selector"] == {
        "matchLabels": {
            "app.kubernetes.io/instance": "cluster-autoscaler",
            "app.kubernetes.io/name": "aws-cluster-autoscaler",
        }
    }
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["kube-system"]}
    assert monitor["spec"]["endpoints"] == [{"port": "http", "path": "/metrics", "interval": "30s"}]
    # the operator names the job after the Service (fullname <release>-<cloudProvider>-cluster-autoscaler); the
    # managed collector writes the same job
    assert observability.AUTOSCALER_METRICS_JOB == "cluster-autoscaler-aws-cluster-autoscaler"


def test_the_queue_dashboard_says_why_a_run_waits_for_a_node():
    exprs = observability.dashboard_expressions(observability.dashboards()["gpuplane-queue.json"])
    used = {name for e in exprs for name in metric_names(e)}
    assert set(observability.AUTOSCALER_METRICS) - used == {"cluster_autoscaler_nodes_count"}
    assert any("by (node_group, reason)" in e and "backoff_status" in e for e in exprs)
    assert observability.failed_gpu_scale_ups("30m") in exprs  # the GPU's failures, from every autoscaler minor


def test_metrics_none_installs_nothing_and_says_so_to_the_exporters(run_platform):
    rec = run_platform({"observability": {"metrics": "none"}})
    releases = {r.inputs["name"]: r.inputs for r in rec.by_type("kubernetes:helm.sh/v3:Release")}
    assert "kube-prometheus-stack" not in releases
    # Written off, not left to the chart: GPU Operator v26.7's default is on, and there would be no CRD.
    assert releases["dcgm-exporter"]["values"]["serviceMonitor"]["enabled"] is False
    autoscaler = releases[wellknown.CLUSTER_AUTOSCALER_RELEASE]["values"]
    assert autoscaler["serviceMonitor"] == {"enabled": False}
    assert "emit-per-nodegroup-metrics" not in autoscaler["extraArgs"]
    assert not [r for r in rec.resources if r.type.startswith("kubernetes:monitoring.coreos.com")]


@pytest.mark.parametrize("bad", ["7", "0d", "seven days", "-1d"])
def test_bad_retention_is_refused(bad):
    with pytest.raises(ValueError, match="not a Prometheus duration"):
        ObservabilityArgs(retention=bad)


# --- notifications ---------------------------------------------------------------------------------------------
@pytest.mark.tool("amtool")
def test_alertmanager_config_passes_amtool(tmp_path):
    path = tmp_path / "alertmanager.yaml"
    config = observability.alertmanager_config("arn:aws:sns:us-west-2:123456789012:gpuplane-dev-alerts", "us-west-2")
    path.write_text(yaml.safe_dump(config))
    done = subprocess.run(
        [tools.need("amtool"), "check-config", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 receivers" in done.stdout


def test_alerts_go_to_the_stacks_sns_topic_through_pod_identity(dev_run):
    (topic,) = dev_run.by_type("aws:sns/topic:Topic")
    assert topic.inputs["name"] == "gpuplane-dev-alerts"
    assert topic.inputs["kmsMasterKeyId"] == "alias/aws/sns"
    associations = {
        (a.inputs["namespace"], a.inputs["serviceAccount"]): a
        for a in dev_run.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    }
    association = associations[("monitoring", observability.ALERTMANAGER_SA)]
    role = next(r for r in dev_run.by_type("aws:iam/role:Role") if r.urn.endswith("metrics-alerts-role"))
    policies = dev_run.by_type("aws:iam/rolePolicy:RolePolicy")
    policy = next(p for p in policies if p.urn.endswith("metrics-alerts-policy"))
    assert json.loads(policy.inputs["policy"])["Statement"] == [
        {"Effect": "Allow", "Action": ["sns:Publish"], "Resource": [topic.outputs["arn"]]}
    ]
    assert association.inputs["roleArn"] == role.outputs["arn"]
    stack = next(
        r for r in dev_run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "kube-prometheus-stack"
    )
    assert association.urn in stack.dependencies  # Alertmanager starts with its credentials in place
    alertmanager = stack.inputs["values"]["alertmanager"]
    assert alertmanager["serviceAccount"]["name"] == observability.ALERTMANAGER_SA
    (sns,) = alertmanager["config"]["receivers"][1]["sns_configs"]
    assert sns["topic_arn"] == topic.outputs["arn"] and sns["sigv4"] == {"region": "us-west-2"}


def test_a_named_topic_is_used_and_none_is_created(run_platform):
    arn = "arn:aws:sns:us-west-2:123456789012:team-pager"
    rec = run_platform({"observability": {"alertTopicArn": arn}})
    assert rec.by_type("aws:sns/topic:Topic") == []
    policy = next(p for p in rec.by_type("aws:iam/rolePolicy:RolePolicy") if p.urn.endswith("metrics-alerts-policy"))
    assert json.loads(policy.inputs["policy"])["Statement"][0]["Resource"] == [arn]


@pytest.mark.parametrize(
    ("arn", "needle"),
    [
        ("arn:aws:sns:eu-west-1:123456789012:team-pager", "is in eu-west-1, the stack in us-west-2"),
        ("arn:aws:sqs:us-west-2:123456789012:queue", "is not an SNS topic ARN"),
    ],
)
def test_a_bad_topic_is_refused_with_its_key(arn, needle):
    with pytest.raises(infra_config.ConfigError) as err:
        stack_config({"cluster": DEV_CLUSTER, "observability": {"alertTopicArn": arn}})
    assert "gpuplane:observability.alertTopicArn" in str(err.value) and needle in str(err.value)
