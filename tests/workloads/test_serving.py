"""TfServing as the dev stack renders it: the contract, probes, env, mounts, placement, PDB, HPA, import."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuplane.components.plan.iam_policies import s3_read_policy
from gpuplane.infra import render
from gpuplane.manifests import serving as serving_manifests
from gpuplane.manifests import tf_runtime
from gpuplane.manifests.model_import import Import

CPU = {
    "name": "cpu",
    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}},
}


@pytest.fixture(scope="module")
def objects(dev_run) -> dict[str, dict[str, Any]]:
    return render.kubernetes_objects(dev_run)


def pod(objects: dict[str, dict[str, Any]], variant: str) -> dict[str, Any]:
    return objects[f"deployment-ml-mobilenet-{variant}.yaml"]["spec"]["template"]["spec"]


def test_contract_names_ports_and_labels(objects):
    for variant in ("cpu", "gpu"):
        deployment = objects[f"deployment-ml-mobilenet-{variant}.yaml"]
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == "tensorflow-serving"
        assert labels["app.kubernetes.io/instance"] == "mobilenet"
        assert labels["gpuplane.io/variant"] == variant
        service = objects[f"service-ml-mobilenet-{variant}.yaml"]["spec"]
        assert service["type"] == "ClusterIP"
        assert {(p["name"], p["port"]) for p in service["ports"]} == {("grpc", 8500), ("http", 8501)}
        # The Service selects exactly this variant's pods.
        assert service["selector"].items() <= labels.items()
        assert deployment["spec"]["selector"]["matchLabels"] == service["selector"]
    shared = objects["service-ml-mobilenet.yaml"]["spec"]
    assert shared["selector"] == {
        "app.kubernetes.io/name": "tensorflow-serving",
        "app.kubernetes.io/instance": "mobilenet",
    }


def test_server_runs_through_the_runtime_helper_with_the_model_config(objects):
    container = pod(objects, "cpu")["containers"][0]
    assert container["command"] == [*tf_runtime.ENTRYPOINT, "/usr/bin/tensorflow_model_server"]
    assert "--model_config_file=/etc/tfserving/models.config" in container["args"]
    assert "--file_system_poll_wait_seconds=60" in container["args"]
    assert "--enable_grpc_healthcheck_service=true" in container["args"]
    env = {e["name"]: e for e in container["env"]}
    assert env[tf_runtime.ENV_CPU_LIMIT]["valueFrom"]["resourceFieldRef"]["resource"] == "limits.cpu"
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/models"]["readOnly"] is True and mounts["/opt/gpuplane"]["readOnly"] is True
    assert "/tmp" in mounts
    volumes = {v["name"]: v for v in pod(objects, "cpu")["volumes"]}
    assert volumes["model"]["persistentVolumeClaim"] == {"claimName": "models", "readOnly": True}
    config = objects["configmap-ml-mobilenet-tfserving.yaml"]["data"]["models.config"]
    assert 'name: "mobilenet"' in config and 'base_path: "/models/mobilenet"' in config


def test_probes_reflect_a_loaded_model(objects):
    container = pod(objects, "gpu")["containers"][0]
    assert container["startupProbe"]["httpGet"] == {"path": "/v1/models/mobilenet", "port": "http"}
    assert container["startupProbe"]["periodSeconds"] * container["startupProbe"]["failureThreshold"] == 900
    assert container["readinessProbe"]["httpGet"]["path"] == "/v1/models/mobilenet"
    assert container["livenessProbe"]["grpc"] == {"port": 8500}


def test_security_context_is_restricted_and_matches_the_efs_user(objects):
    spec = pod(objects, "cpu")
    assert spec["securityContext"]["runAsUser"] == 10001 and spec["securityContext"]["runAsGroup"] == 10001
    ctx = spec["containers"][0]["securityContext"]
    assert ctx["readOnlyRootFilesystem"] is True and ctx["capabilities"] == {"drop": ["ALL"]}
    assert spec["automountServiceAccountToken"] is False


def test_gpu_variant_placement(objects):
    spec = pod(objects, "gpu")
    container = spec["containers"][0]
    assert container["image"] == "tensorflow/serving:2.21.0-gpu"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    exprs = {e["key"]: e for e in terms[0]["matchExpressions"]}
    assert exprs["gpuplane.io/node-group"]["values"] == ["gpu"]
    assert exprs["gpuplane.io/cuda-driver-major"] == {
        "key": "gpuplane.io/cuda-driver-major",
        "operator": "Gt",
        "values": ["524"],
    }
    assert exprs["gpuplane.io/cpu-avx"]["values"] == ["true"]
    cpu_exprs = pod(objects, "cpu")["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert cpu_exprs["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["system"]
    assert "tolerations" not in pod(objects, "cpu")


def test_affinity_labels_are_advertised_for_scale_from_zero(dev_run, objects):
    """Every label a workload requires is in its group's ASG node-template tags."""
    tags: dict[str, str] = {}
    for r in dev_run.by_type("aws:autoscaling/tag:Tag"):
        tag = r.inputs["tag"]
        tags[tag["key"]] = tag["value"]
    for variant in ("cpu", "gpu"):
        terms = pod(objects, variant)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        for expr in terms["nodeSelectorTerms"][0]["matchExpressions"]:
            assert f"k8s.io/cluster-autoscaler/node-template/label/{expr['key']}" in tags, expr


def test_hpa_pdb_and_metrics_server(dev_run, objects):
    hpa = objects["horizontalpodautoscaler-ml-mobilenet-cpu.yaml"]["spec"]
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "mobilenet-cpu"}
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (1, 3)
    assert hpa["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 70}
    assert "replicas" not in objects["deployment-ml-mobilenet-cpu.yaml"]["spec"]  # the HPA owns it
    assert objects["deployment-ml-mobilenet-gpu.yaml"]["spec"]["replicas"] == 0  # parked: dev idles without GPUs
    assert not any(k.startswith("poddisruptionbudget-ml-mobilenet") for k in objects)  # one replica: no PDB
    addon = dev_run.one("aws:eks/addon:Addon", "gpuplane-dev-addon-metrics-server")
    assert addon.inputs["addonName"] == "metrics-server"


def test_deployments_wait_for_the_import_job(dev_run):
    job = next(
        r for r in dev_run.by_type("kubernetes:batch/v1:Job") if r.name == "gpuplane-dev-serving-mobilenet-import"
    )
    assert job.inputs["metadata"]["name"].startswith("mobilenet-import-")
    assert "ttlSecondsAfterFinished" not in job.inputs["spec"]
    for r in dev_run.by_type("kubernetes:apps/v1:Deployment"):
        if r.inputs["metadata"]["name"].startswith("mobilenet-"):
            assert job.urn in r.dependencies


def test_pdb_with_two_replicas_and_s3_import(run_platform):
    rec = run_platform(
        {
            "serving": [
                {
                    "name": "resnet",
                    "model": {"name": "resnet", "import": {"source": "s3://team-models/resnet/"}},
                    "batching": {"maxBatchSize": 16},
                    "variants": [{**CPU, "replicas": 2}],
                }
            ]
        }
    )
    objects = render.kubernetes_objects(rec)
    pdb = objects["poddisruptionbudget-ml-resnet-cpu.yaml"]["spec"]
    assert pdb == {
        "maxUnavailable": 1,
        "selector": {
            "matchLabels": serving_manifests.Serving("resnet", "ml", "m", "v", "p", 10001, 10001, ()).selector("cpu")
        },
    }
    batching = objects["configmap-ml-resnet-tfserving.yaml"]["data"]["batching.config"]
    assert "max_batch_size { value: 16 }" in batching
    assert "num_batch_threads { value: 1 }" in batching  # the 1-CPU limit, not the node's cores
    association = rec.one(
        "aws:eks/podIdentityAssociation:PodIdentityAssociation", "gpuplane-test-serving-resnet-import-identity"
    )
    assert association.inputs["serviceAccount"] == "resnet-import" and association.inputs["namespace"] == "ml"
    read = rec.one("aws:iam/rolePolicy:RolePolicy", "gpuplane-test-serving-resnet-import-read")
    # The pod gets credentials only once they can read: the association waits for the policy.
    assert read.urn in association.dependencies
    policy = json.loads(read.inputs["policy"])
    assert policy["Statement"][0]["Resource"] == ["arn:aws:s3:::team-models/resnet/*"]
    job = next(v for k, v in objects.items() if k.startswith("job-ml-resnet-import-"))
    init = job["spec"]["template"]["spec"]["initContainers"][0]
    assert init["image"].startswith("amazon/aws-cli:") and "--recursive" in init["command"][2]


@pytest.mark.parametrize(
    ("key", "objects_", "listing"),
    [("m/model.tar.gz", "arn:aws:s3:::b/m/model.tar.gz", "m/model.tar.gz"), ("m/", "arn:aws:s3:::b/m/*", "m/*")],
)
def test_s3_read_policy_is_scoped(key, objects_, listing):
    statements = json.loads(s3_read_policy("b", key))["Statement"]
    assert statements[0] == {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": [objects_]}
    assert statements[1]["Condition"] == {"StringLike": {"s3:prefix": [listing]}}


def test_import_job_name_changes_with_what_its_immutable_template_carries():
    a = Import("m", "ml", "https://h/a.tar.gz", "models", "m", 10001, 10001, version=1)
    same = Import("m", "ml", "https://h/a.tar.gz", "models", "m", 10001, 10001, version=1)
    other = Import("m", "ml", "https://h/b.tar.gz", "models", "m", 10001, 10001, version=1)
    newer = Import("m", "ml", "https://h/a.tar.gz", "models", "m", 10001, 10001, version=2)
    # The deadline (the script's download deadline is in the pod template) and the caps decide the result too.
    slower = Import("m", "ml", "https://h/a.tar.gz", "models", "m", 10001, 10001, version=1, deadline_seconds=60)
    bigger = Import("m", "ml", "https://h/a.tar.gz", "models", "m", 10001, 10001, version=1, max_bytes=1 << 40)
    assert a.job_name == same.job_name
    assert len({a.job_name, other.job_name, newer.job_name, slower.job_name, bigger.job_name}) == 5


def test_shared_gpu_unit_gets_its_memory_fraction(run_platform):
    groups = [
        {"name": "system", "instanceTypes": ["m6i.large"]},
        {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "sharing": {"timeSlicing": {"replicas": 4}}},
    ]
    rec = run_platform(
        {
            "nodeGroups": groups,
            "serving": [
                {
                    "name": "resnet",
                    "model": {"name": "resnet"},
                    "variants": [{"name": "gpu", "resources": {"limits": {"cpu": "1", "memory": "2Gi"}, "gpus": 1}}],
                }
            ],
        }
    )
    spec = render.kubernetes_objects(rec)["deployment-ml-resnet-gpu.yaml"]["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    assert env[tf_runtime.ENV_GPU_SHARED] == "true"
    assert env[tf_runtime.ENV_GPU_FRACTION] == "0.222"  # 1/4 - 576 / (0.9 * 22888): the share less a CUDA context


def test_prod_ships_no_workloads(prod_run):
    objects = render.kubernetes_objects(prod_run)
    assert not any(
        v["kind"] in ("Deployment", "Job") and v["metadata"].get("namespace") == "ml" for v in objects.values()
    )
    assert not prod_run.by_type("gpuplane:index:TfServing") and not prod_run.by_type("gpuplane:index:TfTraining")


def test_workloads_wait_for_nodes_and_coredns(dev_run):
    coredns = next(a for a in dev_run.by_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "coredns")
    job = next(
        r for r in dev_run.by_type("kubernetes:batch/v1:Job") if r.name == "gpuplane-dev-serving-mobilenet-import"
    )
    assert coredns.urn in job.dependencies
    groups = {g.name: g.urn for g in dev_run.by_type("aws:eks/nodeGroup:NodeGroup")}
    # The import runs on a system node; a GPU group's boot is never on the way to serving.
    assert groups["gpuplane-dev-system-ng"] in job.dependencies
    assert groups["gpuplane-dev-gpu-ng"] not in job.dependencies


def test_pulumi_does_not_wait_for_queued_deployments(objects):
    for name in (
        "deployment-ml-mobilenet-cpu.yaml",
        "deployment-ml-mobilenet-gpu.yaml",
        "deployment-ml-mnist-tensorboard.yaml",
    ):
        assert objects[name]["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    job = next(v for k, v in objects.items() if k.startswith("job-ml-mobilenet-import-"))
    assert "pulumi.com/skipAwait" not in job["metadata"]["annotations"]  # the import is awaited, bounded


def test_s3_read_policy_follows_the_partition():
    statements = json.loads(s3_read_policy("b", "models/", "aws-cn"))["Statement"]
    assert statements[0]["Resource"] == ["arn:aws-cn:s3:::b/models/*"]
    assert statements[1]["Resource"] == ["arn:aws-cn:s3:::b"]


def test_pulumi_up_waits_for_no_workload_nor_its_service(dev_run):
    # A workload's pod may wait for a node the autoscaler adds (or stay unready a while): pulumi-kubernetes would
    # wait for the Deployment's readiness and for the Service's endpoints to be ready, then fail the `up`.
    objects = render.kubernetes_objects(dev_run)
    waited = [
        f"{o['kind']} {o['metadata']['name']}"
        for o in objects.values()
        if o["kind"] in ("Deployment", "Service") and o["metadata"].get("namespace") == "ml"
        if o["metadata"].get("annotations", {}).get("pulumi.com/skipAwait") != "true"
    ]
    kinds = {o["kind"] for o in objects.values() if o["metadata"].get("namespace") == "ml"}
    assert {"Deployment", "Service"} <= kinds
    assert waited == []
