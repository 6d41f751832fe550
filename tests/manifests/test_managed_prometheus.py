"""`observability.metrics: managedPrometheus`: AMP workspace, managed collector, rules, Alertmanager, cost, render.

What is checked against what: the scrape configuration with `promtool check config` and with the collector's
documented limits (`observability.collector_problems`, AMP user guide "Scraper configuration"); every AWS
argument against botocore's `amp` model (tests/test_aws_models.py covers the recorded inputs generally; the
shapes used here are asserted below); the region refusal against botocore's endpoint data.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import botocore.session
import pytest
import yaml
from botocore.validate import ParamValidator

from gpuplane.components.facts import partition, prices
from gpuplane.components.plan import cost
from gpuplane.infra import config as infra_config
from gpuplane.infra import render
from gpuplane.manifests import observability, wellknown
from tests import tools
from tests.conftest import DEV_CLUSTER, assert_topic_key_admits, once_per_session, stack_config

MANAGED = {"observability": {"metrics": "managedPrometheus"}}


@pytest.fixture(scope="session")
def amp_run(tmp_path_factory):
    managed = stack_config({"cluster": DEV_CLUSTER, **MANAGED})
    return once_per_session(tmp_path_factory, "managed-amp-run", lambda: render.run_stack(managed))


# --- the scrape configuration ------------------------------------------------------------------------------------
@pytest.mark.parametrize("workload_namespace", [None, "ml"])
def test_scrape_config_is_within_the_collectors_limits(workload_namespace):
    config = observability.managed_scrape_config(workload_namespace)
    assert observability.collector_problems(config) == []
    jobs = [job["job_name"] for job in config["scrape_configs"]]
    expected = ["dcgm-exporter", "kube-state-metrics", "kueue", "cluster-autoscaler"]
    expected += ["tensorflow-serving"] if workload_namespace else []
    assert jobs == expected


def _promtool_check_config(path: Path) -> subprocess.CompletedProcess[str]:
    promtool = tools.need("promtool")
    return subprocess.run([promtool, "check", "config", str(path)], capture_output=True, text=True, check=False)


@pytest.mark.tool("promtool")
def test_scrape_config_passes_promtool_check_config(tmp_path: Path):
    """promtool parses every job, relabel regex and duration.

    Debian's promtool (2.42.0+ds, what `make check` installs) is built without Kubernetes discovery and refuses
    the key (`field kubernetes_sd_configs not found`): there the discovery blocks are swapped for an empty
    `static_configs` and checked on their own below; an upstream promtool checks the file as written.
    """
    config = observability.managed_scrape_config("ml")
    path = tmp_path / "scrape.yaml"
    path.write_text(observability.to_yaml(config))
    done = _promtool_check_config(path)
    if "field kubernetes_sd_configs not found" in done.stdout + done.stderr:
        for job in config["scrape_configs"]:
            del job["kubernetes_sd_configs"]
            job["static_configs"] = [{"targets": []}]
        path.write_text(observability.to_yaml(config))
        done = _promtool_check_config(path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout + done.stderr


def test_kubernetes_discovery_blocks_use_only_prometheus_fields():
    """What Debian's promtool cannot check: roles and fields of `kubernetes_sd_config` (Prometheus docs)."""
    for job in observability.managed_scrape_config("ml")["scrape_configs"]:
        for sd in job["kubernetes_sd_configs"]:
            assert set(sd) <= {"role", "namespaces", "selectors", "attach_metadata"}
            assert sd["role"] in {"node", "service", "pod", "endpoints", "endpointslice", "ingress"}
            assert set(sd.get("namespaces", {})) <= {"names", "own_namespace"}


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"scrape_interval": "15s"}, "scrapes at most every 30s"),
        ({"static_configs": [{"targets": ["10.0.0.1:9400"]}]}, "static_configs is not taken"),
        ({"tls_config": {"ca_file": "/ca.crt"}}, "tls_config is not taken"),
        ({"kubernetes_sd_configs": []}, "finds no targets with kubernetes_sd_configs"),
        ({"bearer_token_file": "/etc/token"}, "the bearer token must be"),
        ({"authorization": {"type": "Basic"}}, "authorization.type must be Bearer"),
        ({"basic_auth": {"username": "u"}}, "basic_auth is not taken"),
    ],
)
def test_collector_problems_catch_what_the_collector_refuses(change, needle):
    config = observability.managed_scrape_config(None)
    config["scrape_configs"][0].update(change)
    problems = observability.collector_problems(config)
    assert len(problems) == 1 and needle in problems[0], problems


def test_collector_problems_catch_a_short_global_interval_and_unknown_sections():
    config = observability.managed_scrape_config(None)
    config["global"]["scrape_interval"] = "10s"
    config["remote_write"] = [{"url": "http://x"}]
    problems = observability.collector_problems(config)
    assert any("global.scrape_interval is 10s" in p for p in problems)
    assert any("top-level key 'remote_write'" in p for p in problems)


def test_bearer_auth_from_the_service_account_token_is_taken():
    config = observability.managed_scrape_config(None)
    config["scrape_configs"][0]["authorization"] = {
        "type": "Bearer",
        "credentials_file": observability.COLLECTOR_TOKEN_FILE,
    }
    assert observability.collector_problems(config) == []


def test_scrape_jobs_give_the_labels_the_rules_and_dashboards_join_on():
    jobs = {job["job_name"]: job for job in observability.managed_scrape_config("ml")["scrape_configs"]}
    serving_targets = {r.get("target_label") for r in jobs["tensorflow-serving"]["relabel_configs"]}
    assert {"namespace", "pod", "variant", "serving"} <= serving_targets
    assert jobs["tensorflow-serving"]["metrics_path"] == wellknown.TF_SERVING_METRICS_PATH
    assert jobs["dcgm-exporter"]["honor_labels"] is True  # the GPU's pod/namespace, not the exporter's
    # The DCGM-exporter-down alert matches the job by the exporter's Service name, as with the ServiceMonitor.
    assert {"source_labels": ["__meta_kubernetes_service_name"], "target_label": "job"} in jobs["dcgm-exporter"][
        "relabel_configs"
    ]


def test_the_autoscaler_job_reads_its_charts_service_with_the_in_cluster_job_name():
    jobs = {job["job_name"]: job for job in observability.managed_scrape_config(None)["scrape_configs"]}
    job = jobs["cluster-autoscaler"]
    # plain HTTP, no auth (the autoscaler's --address :8085, http.ListenAndServe): nothing but discovery and labels
    assert set(job) == {"job_name", "kubernetes_sd_configs", "relabel_configs", "metric_relabel_configs"}
    assert job["kubernetes_sd_configs"] == [{"role": "endpoints", "namespaces": {"names": ["kube-system"]}}]
    assert job["relabel_configs"] == [
        {
            "source_labels": ["__meta_kubernetes_service_name"],
            "regex": "cluster-autoscaler-aws-cluster-autoscaler",
            "action": "keep",
        },
        {"source_labels": ["__meta_kubernetes_endpoint_port_name"], "regex": "http", "action": "keep"},
        # what the in-cluster ServiceMonitor's job is (the Service's name): the same queries on both stores
        {"target_label": "job", "replacement": observability.AUTOSCALER_METRICS_JOB},
    ]
    # the loop-timing histogram is dropped before AMP bills it; nothing the dashboards, rules or verify read is
    (drop,) = job["metric_relabel_configs"]
    assert drop["action"] == "drop" and drop["source_labels"] == ["__name__"]
    dropped = re.compile(drop["regex"])
    assert dropped.fullmatch("cluster_autoscaler_function_duration_seconds_bucket")
    assert dropped.fullmatch("cluster_autoscaler_function_duration_quantile_seconds")
    assert not [m for m in observability.KNOWN_METRICS if dropped.fullmatch(m)]


def test_the_autoscaler_has_no_service_monitor_and_does_not_wait_for_the_stack(amp_run):
    releases = {r.inputs["name"]: r for r in amp_run.by_type("kubernetes:helm.sh/v3:Release")}
    autoscaler = releases[wellknown.CLUSTER_AUTOSCALER_RELEASE]
    assert autoscaler.inputs["values"]["serviceMonitor"] == {"enabled": False}
    assert amp_run.by_type("kubernetes:monitoring.coreos.com/v1:ServiceMonitor") == []
    assert autoscaler.inputs["values"]["extraArgs"]["emit-per-nodegroup-metrics"] is True
    assert releases["kube-prometheus-stack"].urn not in autoscaler.dependencies


# --- the stack under mocks ---------------------------------------------------------------------------------------
def test_workspace_collector_rules_and_alertmanager_are_created(amp_run):
    (workspace,) = amp_run.by_type("aws:amp/workspace:Workspace")
    # AWS owned key: a workspace with a customer managed key cannot take the managed collector
    assert "kmsKeyArn" not in workspace.inputs
    assert not [k for k in amp_run.by_type("aws:kms/key:Key") if "aps.us-west-2.amazonaws.com" in k.inputs["policy"]]
    (scraper,) = amp_run.by_type("aws:amp/scraper:Scraper")
    eks = scraper.inputs["source"]["eks"]
    (cluster,) = amp_run.by_type("aws:eks/cluster:Cluster")
    assert eks["clusterArn"] == cluster.outputs["arn"]
    assert len(eks["subnetIds"]) >= 2 and eks["subnetIds"] == cluster.inputs["vpcConfig"]["subnetIds"]
    assert len(eks["securityGroupIds"]) == 1
    assert scraper.inputs["destination"]["amp"]["workspaceArn"] == workspace.outputs["arn"]
    config = yaml.safe_load(scraper.inputs["scrapeConfiguration"])
    assert observability.collector_problems(config) == []
    (rules,) = amp_run.by_type("aws:amp/ruleGroupNamespace:RuleGroupNamespace")
    groups = yaml.safe_load(rules.inputs["data"])["groups"]
    assert groups == observability.alert_rule_groups(observability.AlertBounds())
    assert rules.inputs["workspaceId"] == workspace.id
    (definition,) = amp_run.by_type("aws:amp/alertManagerDefinition:AlertManagerDefinition")
    alertmanager = yaml.safe_load(yaml.safe_load(definition.inputs["definition"])["alertmanager_config"])
    (topic,) = amp_run.by_type("aws:sns/topic:Topic")
    (sns,) = alertmanager["receivers"][1]["sns_configs"]
    assert sns["topic_arn"] == topic.outputs["arn"] and sns["sigv4"] == {"region": "us-west-2"}


def test_the_topic_lets_this_workspace_publish(amp_run):
    (topic,) = amp_run.by_type("aws:sns/topic:Topic")
    assert_topic_key_admits(amp_run, topic, "aps.amazonaws.com")
    (policy,) = amp_run.by_type("aws:sns/topicPolicy:TopicPolicy")
    (statement,) = json.loads(policy.inputs["policy"])["Statement"]
    (workspace,) = amp_run.by_type("aws:amp/workspace:Workspace")
    assert statement["Principal"] == {"Service": "aps.amazonaws.com"}
    assert statement["Action"] == ["sns:Publish", "sns:GetTopicAttributes"]
    assert statement["Condition"]["ArnEquals"] == {"aws:SourceArn": workspace.outputs["arn"]}
    # The topic's key admits AMP for this workspace only, as the topic's policy does.
    key = next(k for k in amp_run.by_type("aws:kms/key:Key") if k.outputs["arn"] == topic.inputs["kmsMasterKeyId"])
    publish = next(s for s in json.loads(key.inputs["policy"])["Statement"] if s["Sid"] == "EncryptForThePublisher")
    assert publish["Condition"]["ArnLike"] == {"aws:SourceArn": workspace.outputs["arn"]}


def test_the_rendered_alertmanager_names_the_topic_by_an_arn_of_snss_form(amp_run):
    """SNS topic ARNs are `arn:<partition>:sns:<region>:<account>:<name>`, with no `topic/` (SNS API reference,
    CreateTopic's TopicArn; topic names: 1-256 letters, digits, `-` and `_`). The render's placeholder for the
    stack's topic must have that form: observability/alertmanager.yaml is read (and copied) by people.
    """
    (topic,) = amp_run.by_type("aws:sns/topic:Topic")
    arn = topic.outputs["arn"]
    assert re.fullmatch(r"arn:aws:sns:us-west-2:[0-9]{12}:[A-Za-z0-9_-]{1,256}", arn), arn
    assert arn.rsplit(":", 1)[1] == topic.inputs["name"]
    definition = yaml.safe_load(render.observability_files(amp_run)["alertmanager.yaml"])
    assert f"topic_arn: {arn}" in definition["alertmanager_config"]


def test_in_cluster_only_kube_state_metrics_runs(amp_run):
    (stack,) = [
        r for r in amp_run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "kube-prometheus-stack"
    ]
    values = stack.inputs["values"]
    assert values["prometheus"] == {"enabled": False} and values["alertmanager"] == {"enabled": False}
    assert values["grafana"]["enabled"] is False and values["nodeExporter"] == {"enabled": False}
    assert "kube-state-metrics" in values and values["crds"] == {"enabled": True}
    # No in-cluster Alertmanager: no Pod Identity role for it, no PrometheusRule object.
    assert not [r for r in amp_run.by_type("aws:iam/role:Role") if r.urn.endswith("metrics-alerts-role")]
    assert not amp_run.by_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule")


def test_no_access_entry_of_ours_for_the_collector(amp_run):
    """AMP creates the collector's access entry itself on an `API` cluster; one of ours would collide."""
    (cluster,) = amp_run.by_type("aws:eks/cluster:Cluster")
    assert cluster.inputs["accessConfig"]["authenticationMode"] in {"API", "API_AND_CONFIG_MAP"}
    assert cluster.inputs["vpcConfig"]["endpointPrivateAccess"] is True  # the collector reaches the API privately
    assert not [e for e in amp_run.by_type("aws:eks/accessEntry:AccessEntry") if "collector" in e.urn]


def test_render_files_and_summary(amp_run):
    files = render.observability_files(amp_run)
    assert observability.collector_problems(yaml.safe_load(files["scrape.yaml"])) == []
    assert "rules-gpuplane.yaml" in files and "alertmanager.yaml" in files
    summary = render.observability_summary(amp_run)
    assert summary["metrics"] == "managedPrometheus"
    names = [r["alert"] for g in observability.alert_rule_groups(observability.AlertBounds()) for r in g["rules"]]
    assert summary["alerts"] == sorted(n for n in names if n)


def test_cost_has_an_amp_line_at_the_stated_sample_rate():
    resources = [
        {"type": "aws:amp/workspace:Workspace", "urn": "w", "inputs": {}},
        {"type": "aws:amp/scraper:Scraper", "urn": "s", "inputs": {}},
    ]
    usage = cost.usage_from_resources("us-west-2", resources)
    line = cost.amp_line(1, 1)
    ingestion = cost.AMP_ESTIMATE_SAMPLES_PER_SECOND * 3600 / 1e7 * float(prices.AMP_INGESTION_PER_10M_SAMPLES_USD)
    assert line.idle == line.max
    assert line.idle == pytest.approx(ingestion + float(prices.AMP_COLLECTOR_HOURLY_USD), abs=0.01)
    assert f"{cost.AMP_ESTIMATE_SAMPLES_PER_SECOND} samples/s" in line.notes[0]
    assert prices.AMP_PRICES_DATE in line.notes[0]
    assert (usage.amp_workspaces, usage.amp_collectors) == (1, 1)


# --- where it is offered -----------------------------------------------------------------------------------------
def test_amp_is_offered_where_botocore_says_and_not_in_aws_cn():
    regions = partition.service_regions("amp")
    assert "us-west-2" in regions and "us-gov-west-1" in regions
    assert not [r for r in regions if r.startswith("cn-")]


def test_aws_cn_is_refused_with_the_key_and_the_alternatives():
    with pytest.raises(infra_config.ConfigError) as err:
        stack_config({"cluster": DEV_CLUSTER, **MANAGED}, region="cn-north-1")
    message = str(err.value)
    assert "gpuplane:observability.metrics" in message and "not offered in cn-north-1" in message
    assert "prometheus" in message


# --- against botocore's `amp` model --------------------------------------------------------------------------------
def _check_pattern(model, shape_name: str, value: str) -> None:
    shape = model.shape_for(shape_name)
    pattern = shape.metadata.get("pattern")
    assert pattern is None or re.search(pattern, value), (shape_name, pattern, value)
    assert shape.metadata.get("min", 0) <= len(value) <= shape.metadata.get("max", 10**9), (shape_name, value)


def test_recorded_inputs_are_valid_amp_api_requests(amp_run):
    """The requests pulumi_aws sends, rebuilt from the recorded inputs, pass botocore's validator for `amp`."""
    model = botocore.session.get_session().get_service_model("amp")
    (workspace,) = amp_run.by_type("aws:amp/workspace:Workspace")
    (scraper,) = amp_run.by_type("aws:amp/scraper:Scraper")
    (rules,) = amp_run.by_type("aws:amp/ruleGroupNamespace:RuleGroupNamespace")
    (definition,) = amp_run.by_type("aws:amp/alertManagerDefinition:AlertManagerDefinition")
    eks = scraper.inputs["source"]["eks"]
    requests = {
        "CreateWorkspace": {"alias": workspace.inputs["alias"]},
        "CreateScraper": {
            "alias": scraper.inputs["alias"],
            "scrapeConfiguration": {"configurationBlob": scraper.inputs["scrapeConfiguration"].encode()},
            "source": {
                "eksConfiguration": {
                    "clusterArn": eks["clusterArn"],
                    "subnetIds": eks["subnetIds"],
                    "securityGroupIds": eks["securityGroupIds"],
                }
            },
            "destination": {"ampConfiguration": {"workspaceArn": scraper.inputs["destination"]["amp"]["workspaceArn"]}},
        },
        "CreateRuleGroupsNamespace": {
            "workspaceId": rules.inputs["workspaceId"],
            "name": rules.inputs["name"],
            "data": rules.inputs["data"].encode(),
        },
        "CreateAlertManagerDefinition": {
            "workspaceId": definition.inputs["workspaceId"],
            "data": definition.inputs["definition"].encode(),
        },
    }
    validator = ParamValidator()
    for operation, params in requests.items():
        report = validator.validate(params, model.operation_model(operation).input_shape)
        assert not report.has_errors(), (operation, report.generate_report())
    _check_pattern(model, "WorkspaceAlias", workspace.inputs["alias"])
    _check_pattern(model, "ScraperAlias", scraper.inputs["alias"])
    _check_pattern(model, "RuleGroupsNamespaceName", rules.inputs["name"])
    _check_pattern(model, "ClusterArn", eks["clusterArn"])
    _check_pattern(model, "WorkspaceArn", scraper.inputs["destination"]["amp"]["workspaceArn"])
    _check_pattern(model, "WorkspaceId", rules.inputs["workspaceId"])


# --- KEDA reads the workspace with SigV4 through Pod Identity ----------------------------------------------------
GPU_RPS = {
    "name": "gpu",
    "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1},
    "autoscaling": {"minReplicas": 1, "maxReplicas": 2, "metric": "requestsPerSecond", "target": 40},
}


@pytest.fixture(scope="session")
def amp_keda_run(tmp_path_factory):
    serving = [
        {"name": "m", "model": {"name": "m", "import": {"source": "s3://team-models/m/"}}, "variants": [GPU_RPS]}
    ]
    managed = stack_config({"cluster": DEV_CLUSTER, **MANAGED, "serving": serving})
    return once_per_session(tmp_path_factory, "managed-keda-run", lambda: render.run_stack(managed))


def test_keda_queries_the_workspace_signed_with_its_pod_identity(amp_keda_run):
    objects = render.kubernetes_objects(amp_keda_run)
    (trigger,) = objects["scaledobject-ml-m-gpu.yaml"]["spec"]["triggers"]
    (workspace,) = amp_keda_run.by_type("aws:amp/workspace:Workspace")
    assert trigger["metadata"]["serverAddress"] == workspace.outputs["prometheusEndpoint"].rstrip("/")
    assert trigger["metadata"]["awsRegion"] == "us-west-2"
    assert trigger["authenticationRef"] == {"name": wellknown.KEDA_AMP_AUTH, "kind": "ClusterTriggerAuthentication"}
    (auth,) = [
        r for r in amp_keda_run.resources if r.type == "kubernetes:keda.sh/v1alpha1:ClusterTriggerAuthentication"
    ]
    assert auth.inputs["spec"] == {"podIdentity": {"provider": "aws", "identityOwner": "keda"}}
    scaled = next(r for r in amp_keda_run.resources if r.type == "kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert auth.urn in scaled.dependencies
    associations = {
        (a.inputs["namespace"], a.inputs["serviceAccount"]): a
        for a in amp_keda_run.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    }
    association = associations[("keda", wellknown.KEDA_OPERATOR_SA)]
    policy = next(p for p in amp_keda_run.by_type("aws:iam/rolePolicy:RolePolicy") if p.urn.endswith("keda-amp-policy"))
    (statement,) = json.loads(policy.inputs["policy"])["Statement"]
    assert statement["Action"][0] == "aps:QueryMetrics" and statement["Resource"] == [workspace.outputs["arn"]]
    keda = next(r for r in amp_keda_run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "keda")
    assert association.urn in keda.dependencies  # the operator starts with its credentials in place


def test_amp_query_address_drops_the_trailing_slash():
    endpoint = "https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-1234/"
    assert observability.amp_query_address(endpoint) == endpoint[:-1]


def test_metric_scaling_without_a_store_is_refused_naming_both_backends():
    serving = [
        {"name": "m", "model": {"name": "m", "import": {"source": "s3://team-models/m/"}}, "variants": [GPU_RPS]}
    ]
    with pytest.raises(infra_config.ConfigError) as err:
        stack_config({"cluster": DEV_CLUSTER, "observability": {"metrics": "none"}, "serving": serving})
    assert "set observability.metrics: prometheus or managedPrometheus" in str(err.value)


# --- Grafana ----------------------------------------------------------------------------------------------------
def test_dashboards_pick_the_amp_data_source(amp_run):
    """The dashboards' variable lists Prometheus-type data sources; the rendered AMP data source is one."""
    files = render.observability_files(amp_run)
    datasource = yaml.safe_load(files["grafana-datasource.yaml"])["datasources"][0]
    (workspace,) = amp_run.by_type("aws:amp/workspace:Workspace")
    assert datasource["type"] == "prometheus"
    assert datasource["url"] == workspace.outputs["prometheusEndpoint"].rstrip("/")
    assert datasource["jsonData"]["sigV4Auth"] is True and datasource["jsonData"]["sigV4Region"] == "us-west-2"
    assert {f"dashboards/{name}" for name in observability.dashboards()} <= set(files)
    for dashboard in observability.dashboards().values():
        (variable,) = dashboard["templating"]["list"]
        assert (variable["type"], variable["query"]) == ("datasource", datasource["type"])
        for panel in dashboard["panels"]:
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}


def test_the_whole_render_writes_the_amp_files_plan_and_cost(tmp_path: Path):
    """`gpuplane render`'s writer end to end: tfplan.json knows the AMP types, cost.json prices them."""
    out = tmp_path / "out"
    render.write(stack_config({"cluster": DEV_CLUSTER, **MANAGED}), out)
    names = {str(p.relative_to(out)) for p in (out / "observability").rglob("*") if p.is_file()}
    assert {
        "observability/scrape.yaml",
        "observability/rules-gpuplane.yaml",
        "observability/alertmanager.yaml",
    } <= names
    assert {f"observability/dashboards/{name}" for name in observability.dashboards()} <= names
    tfplan = (out / "tfplan.json").read_text()
    for terraform_type in ("aws_prometheus_workspace", "aws_prometheus_scraper", "aws_prometheus_rule_group_namespace"):
        assert terraform_type in tfplan
    lines = {line["item"]: line for line in json.loads((out / "cost.json").read_text())["lines"]}
    assert lines["managed Prometheus (AMP)"]["idle"] == cost.amp_line(1, 1).idle
    assert "Metrics: managedPrometheus" in (out / "stack.md").read_text()


# --- the rule groups and the Alertmanager definition, as AMP receives them ---------------------------------------
@pytest.mark.tool("promtool")
def test_the_workspaces_rule_file_passes_promtool_check_rules(amp_run, tmp_path: Path):
    promtool = tools.need("promtool")
    path = tmp_path / "rules.yaml"
    path.write_text(render.observability_files(amp_run)["rules-gpuplane.yaml"])
    done = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.tool("amtool")
def test_the_workspaces_alertmanager_config_passes_amtool(amp_run, tmp_path: Path):
    amtool = tools.need("amtool")
    definition = yaml.safe_load(render.observability_files(amp_run)["alertmanager.yaml"])
    assert set(definition) == {"alertmanager_config"}  # AMP's format: the config as one YAML string under that key
    path = tmp_path / "alertmanager.yaml"
    path.write_text(definition["alertmanager_config"])
    done = subprocess.run([amtool, "check-config", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 receivers" in done.stdout
