"""Serving that scales on what loads it: KEDA on the stack's Prometheus for GPU variants, the HPA on CPU stays.

A GPU-bound server never reaches a high CPU utilization; a variant may scale on requests per second, GPU
utilization or p90 latency instead. Checked here: the config's rules, the ScaledObject (its fields as KEDA's CRD
has them, `keda.sh/v1alpha1` at chart 2.20.2), each query parsed by promtool and naming only known metrics, and
what the platform installs for it.
"""

from __future__ import annotations

import pytest

from gpuplane.components.config import ServingArgs
from gpuplane.infra import config, render
from gpuplane.manifests import observability, versions
from tests.conftest import DEV_CLUSTER, stack_config
from tests.manifests.test_observability import metric_names, needs_promtool, promtool, write_rules

GPU = {"name": "gpu", "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}}
CPU = {
    "name": "cpu",
    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}},
    "autoscaling": {"maxReplicas": 3},
}
GPU_RPS = {**GPU, "autoscaling": {"minReplicas": 1, "maxReplicas": 2, "metric": "requestsPerSecond", "target": 40}}


def serving(*variants):
    model = {"name": "m", "import": {"source": "s3://team-models/m/"}}
    return [{"name": "m", "model": model, "variants": list(variants)}]


# The ScaledObject fields KEDA's CRD defines that we use (keda/templates/crds/crd-scaledobjects.yaml, 2.20.2).
SPEC_FIELDS = {"scaleTargetRef", "minReplicaCount", "maxReplicaCount", "triggers"}
TRIGGER_FIELDS = {"type", "metricType", "metadata"}
PROMETHEUS_METADATA = {"serverAddress", "query", "threshold"}


def test_gpu_variant_scales_on_requests_per_second_cpu_variant_keeps_its_hpa(run_platform):
    rec = run_platform({"serving": serving(CPU, GPU_RPS)})
    objects = render.kubernetes_objects(rec)
    assert "horizontalpodautoscaler-ml-m-cpu.yaml" in objects
    assert "horizontalpodautoscaler-ml-m-gpu.yaml" not in objects  # KEDA makes and owns that one
    scaled = objects["scaledobject-ml-m-gpu.yaml"]
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    spec = scaled["spec"]
    assert set(spec) == SPEC_FIELDS
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "m-gpu"}
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (1, 2)
    (trigger,) = spec["triggers"]
    assert set(trigger) == TRIGGER_FIELDS and set(trigger["metadata"]) == PROMETHEUS_METADATA
    assert trigger["type"] == "prometheus" and trigger["metricType"] == "AverageValue"
    assert trigger["metadata"]["serverAddress"] == "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"
    assert trigger["metadata"]["threshold"] == "40"
    assert trigger["metadata"]["query"] == (
        'sum(rate(:tensorflow:serving:request_count{namespace="ml",serving="m",variant="gpu"}[2m]))'
    )
    # The Deployment leaves its replicas to the scaler.
    assert "replicas" not in objects["deployment-ml-m-gpu.yaml"]["spec"]
    releases = {r.inputs["name"]: r for r in rec.by_type("kubernetes:helm.sh/v3:Release")}
    keda = releases["keda"]
    assert (keda.inputs["chart"], keda.inputs["version"]) == ("keda", versions.KEDA_VERSION)
    assert releases["kube-prometheus-stack"].urn in keda.dependencies
    namespaces = {
        n.inputs["metadata"]["name"]: n.inputs["metadata"]["labels"]
        for n in rec.by_type("kubernetes:core/v1:Namespace")
    }
    assert namespaces["keda"]["pod-security.kubernetes.io/enforce"] == "restricted"
    # The ScaledObject is applied after KEDA (its CRD) is there.
    scaled_resource = next(r for r in rec.resources if r.type == "kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert keda.urn in scaled_resource.dependencies


def test_only_cpu_scaling_needs_metrics_server(run_platform):
    rec = run_platform({"serving": serving(GPU_RPS)})
    addons = {a.inputs["addonName"] for a in rec.by_type("aws:eks/addon:Addon")}
    assert "metrics-server" not in addons


@pytest.mark.parametrize(
    ("metric", "target", "metric_type"),
    [("requestsPerSecond", 40, "AverageValue"), ("gpuUtilization", 70, "AverageValue"), ("latencyP90Ms", 200, "Value")],
)
def test_each_signal_has_its_query_and_metric_type(metric, target, metric_type):
    query, kind = observability.scaling_query(metric, "ml", "m", "gpu")
    assert kind == metric_type
    assert metric_names(query) <= observability.KNOWN_METRICS
    assert 'variant="gpu"' in query or 'label_gpuplane_io_variant="gpu"' in query


@needs_promtool
def test_scaling_queries_parse(tmp_path):
    rules = [
        {"record": f"gpuplane:scale{i}", "expr": observability.scaling_query(m, "ml", "m", "gpu")[0]}
        for i, m in enumerate(("requestsPerSecond", "gpuUtilization", "latencyP90Ms"))
    ]
    promtool("check", "rules", str(write_rules(tmp_path, [{"name": "scale", "rules": rules}])), cwd=tmp_path)


@pytest.mark.parametrize(
    ("variant", "key", "needle"),
    [
        (
            {**GPU, "autoscaling": {"maxReplicas": 2, "metric": "requestsPerSecond"}},
            "autoscaling.target",
            "is required",
        ),
        (
            {**GPU, "autoscaling": {"maxReplicas": 2, "metric": "gpuUtilization", "target": 150}},
            "autoscaling.target",
            "above 100 percent",
        ),
        (
            {**CPU, "autoscaling": {"maxReplicas": 2, "metric": "gpuUtilization", "target": 50}},
            "autoscaling.metric",
            "needs a variant with GPUs",
        ),
        ({**CPU, "autoscaling": {"maxReplicas": 2, "target": 50}}, "autoscaling.target", "with metric cpu"),
        (
            {
                **GPU,
                "autoscaling": {"maxReplicas": 2, "metric": "latencyP90Ms", "target": 9, "targetCpuUtilization": 5},
            },
            "autoscaling.targetCpuUtilization",
            "is for metric cpu",
        ),
        ({**GPU, "autoscaling": {"maxReplicas": 2, "metric": "queueLength", "target": 9}}, "autoscaling.metric", "cpu"),
        (
            {**GPU, "autoscaling": {"minReplicas": 0, "maxReplicas": 2, "metric": "latencyP90Ms", "target": 9}},
            "autoscaling.minReplicas",
            "greater than or equal to 1",
        ),
    ],
)
def test_bad_autoscaling_names_the_key(variant, key, needle):
    with pytest.raises(config.ConfigError) as err:
        stack_config({"cluster": DEV_CLUSTER, "serving": serving(variant)})
    message = str(err.value)
    assert f"gpuplane:serving[0].variants[0].{key}" in message, message
    assert needle in message


def test_metric_scaling_needs_the_stacks_prometheus():
    with pytest.raises(config.ConfigError) as err:
        stack_config({"cluster": DEV_CLUSTER, "serving": serving(GPU_RPS), "observability": {"metrics": "none"}})
    message = str(err.value)
    assert "gpuplane:serving[0].variants[0].autoscaling.metric" in message
    assert "observability.metrics: prometheus" in message


def test_cpu_default_target_is_70():
    args = ServingArgs.model_validate(serving(CPU)[0])
    assert args.variants[0].autoscaling is not None
    assert args.variants[0].autoscaling.resolved_target == 70
