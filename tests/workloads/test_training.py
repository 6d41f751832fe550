"""Training runs: the JobSet, its Job templates against every Kubernetes version, TF_CONFIG end to end."""

from __future__ import annotations

import copy
import json
from typing import Any

import kubernetes_validate
import pytest

from gpuplane.components.config import PlatformArgs
from gpuplane.components.config.workloads import TrainingArgs
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.training import run_manifests, training_spec
from gpuplane.infra import config, render
from gpuplane.manifests import pod_security, training, versions
from tests.conftest import DEV_CLUSTER
from tests.runtime._support import base_env, printed, run_helper, shell_params

PS: dict[str, Any] = {
    "name": "mnist",
    "strategy": "parameterServer",
    "command": ["python", "/data/train.py"],
    "chief": {"resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "worker": {"replicas": 2, "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}},
    "ps": {"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
    "volumes": [{"volume": "datasets", "mountPath": "/data"}, {"volume": "logs", "mountPath": "/logs"}],
    "dataImport": {"source": "https://example.com/mnist.tar.gz", "path": "mnist"},
    "tensorboard": {},
}


def platform(**overrides: Any) -> PlatformArgs:
    return PlatformArgs.model_validate({"cluster": DEV_CLUSTER, **overrides})


def jobset(spec: dict[str, Any] = PS, run_id: str | None = None) -> dict[str, Any]:
    args = platform(training=[spec])
    return training.jobset(training_spec(args.training[0], WorkloadContext.of(args)), run_id)


def rjobs(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in obj["spec"]["replicatedJobs"]}


def test_parameter_server_jobset_shape():
    obj = jobset()
    jobs = rjobs(obj)
    assert list(jobs) == ["data-import", "chief", "worker", "ps"]
    spec = obj["spec"]
    assert spec["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["chief"]}
    assert spec["network"] == {
        "enableDNSHostnames": True,
        "subdomain": obj["metadata"]["name"],
        "publishNotReadyAddresses": True,
    }
    assert spec["ttlSecondsAfterFinished"] == 86400
    assert "dependsOn" not in jobs["data-import"]
    for role in ("chief", "worker", "ps"):
        assert jobs[role]["dependsOn"] == [{"name": "data-import", "status": "Complete"}]
        job = jobs[role]["template"]["spec"]
        assert job["completionMode"] == "Indexed"
        assert job["podFailurePolicy"]["rules"] == [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
        ]
        assert job["activeDeadlineSeconds"] == training.DEFAULT_ACTIVE_DEADLINE_SECONDS  # test_training_deadline.py
    assert jobs["worker"]["template"]["spec"]["completions"] == jobs["worker"]["template"]["spec"]["parallelism"] == 2
    worker = jobs["worker"]["template"]["spec"]["template"]["spec"]
    assert worker["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert worker["containers"][0]["image"] == versions.TENSORFLOW_GPU_IMAGE
    ps = jobs["ps"]["template"]["spec"]["template"]["spec"]
    assert "nvidia.com/gpu" not in ps["containers"][0]["resources"]["limits"] and "tolerations" not in ps
    assert obj["metadata"]["annotations"][training.SUBMITTED_BY_ANNOTATION].startswith("gpuplane train")


def test_mirrored_succeeds_when_all_workers_do():
    spec = {"name": "bert", "strategy": "multiWorkerMirrored", "command": ["python", "t.py"], "worker": PS["worker"]}
    obj = jobset(spec)
    assert list(rjobs(obj)) == ["worker"]
    assert obj["spec"]["successPolicy"]["targetReplicatedJobs"] == ["worker"]


def test_run_name_follows_the_spec_or_the_run_id():
    first, same = jobset(), jobset(copy.deepcopy(PS))
    assert first["metadata"]["name"] == same["metadata"]["name"]
    changed = jobset({**PS, "command": ["python", "/data/train.py", "--epochs=3"]})
    assert changed["metadata"]["name"] != first["metadata"]["name"]
    assert jobset(run_id="exp-7")["metadata"]["name"] == "mnist-exp-7"


@pytest.mark.parametrize("version", sorted(versions.KUBERNETES_VERSIONS))
def test_every_job_template_validates_strictly(version):
    for job in training.job_templates_as_jobs(jobset()):
        assert kubernetes_validate.validate(job, version, strict=True), job["metadata"]["name"]


def test_jobset_fields_are_those_of_the_pinned_api():
    assert training.unknown_jobset_fields(jobset()) == []
    bad = jobset()
    bad["spec"]["replicatedJobs"][1]["dependsOn"].append({"name": "ps", "status": "Running"})
    bad["spec"]["sucessPolicy"] = {}
    found = training.unknown_jobset_fields(bad)
    assert "spec.sucessPolicy" in found
    assert any("replicatedJobs[1].dependsOn" in f for f in found)


def test_every_run_pod_is_restricted():
    assert pod_security.object_violations(jobset()) == []


@pytest.mark.parametrize("shell", shell_params())
@pytest.mark.parametrize(("role", "index"), [("chief", 0), ("worker", 0), ("worker", 1), ("ps", 0)])
def test_tf_config_end_to_end_through_the_helper(shell, role, index):
    """The env the JobSet gives a pod, run through the real helper, yields the addresses JobSet's DNS serves."""
    obj = jobset()
    run = obj["metadata"]["name"]
    pod = rjobs(obj)[role]["template"]["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"] if "value" in e}
    settings, _ = printed(None, shell, **env, GPUPLANE_TF_NAMESPACE="ml", JOB_COMPLETION_INDEX=str(index))
    tf_config = json.loads(settings["TF_CONFIG"])
    domain = f".{run}.ml.svc:2222"
    assert tf_config == {
        "cluster": {
            "chief": [f"{run}-chief-0-0{domain}"],
            "worker": [f"{run}-worker-0-0{domain}", f"{run}-worker-0-1{domain}"],
            "ps": [f"{run}-ps-0-0{domain}"],
        },
        "task": {"type": role, "index": index},
    }
    # The same bytes as the Python side.
    cluster = training.cluster(
        training_spec(platform(training=[PS]).training[0], WorkloadContext.of(platform(training=[PS]))), run
    )
    assert settings["TF_CONFIG"] == cluster.tf_config_json(index, "ml", role)


def test_dev_render_writes_the_run_and_tensorboard(dev_run):
    runs = run_manifests(config.load("dev").platform)
    [(name, obj)] = runs.items()
    assert name.startswith("jobset-ml-mnist-") and obj["kind"] == "JobSet"
    objects = render.kubernetes_objects(dev_run)
    assert "deployment-ml-mnist-tensorboard.yaml" in objects
    assert not any(v.get("kind") == "JobSet" for v in objects.values())  # never a Pulumi resource
    release = next(r for r in dev_run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs.get("name") == "jobset")
    assert release.inputs["version"] == versions.JOBSET_VERSION


def problems(training_spec_: dict[str, Any]) -> list[str]:
    raw = {"aws:region": "us-west-2", "gpuplane:cluster": DEV_CLUSTER, "gpuplane:training": [training_spec_]}
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    return info.value.problems


@pytest.mark.parametrize(
    ("case", "change", "key", "fragment"),
    [
        (
            "zero workers",
            {"worker": {"replicas": 0, "resources": PS["ps"]["resources"]}},
            "training[0].worker.replicas",
            "greater than or equal to 1",
        ),
        ("ps with mirrored", {"strategy": "multiWorkerMirrored"}, "training[0].ps", "workers only"),
        ("parameterServer without ps", {"ps": None}, "training[0].ps", "is required"),
        (
            "missing volume",
            {"volumes": [{"volume": "scratch", "mountPath": "/s"}]},
            "training[0].volumes[0].volume",
            "'scratch' is not defined",
        ),
        ("unpinned image", {"image": "tensorflow/tensorflow:latest"}, "training[0].image", "not pinned"),
        (
            "http data import",
            {"dataImport": {"source": "http://x/d.tar.gz", "path": "d"}},
            "training[0].dataImport.source",
            "https://",
        ),
        (
            "worker too big",
            {"worker": {"resources": {"limits": {"cpu": "64", "memory": "8Gi"}, "gpus": 1}}},
            "training[0].worker.resources.limits.cpu",
            "fit no node",
        ),
    ],
)
def test_bad_training_input(case, change, key, fragment):
    spec = {k: v for k, v in {**PS, **change}.items() if v is not None}
    found = problems(spec)
    matching = [p for p in found if p.startswith(f"gpuplane:{key}:")]
    assert matching and any(fragment in p for p in matching), found


def test_serving_and_training_names_are_unique_together():
    raw = {
        "aws:region": "us-west-2",
        "gpuplane:cluster": DEV_CLUSTER,
        "gpuplane:serving": [
            {
                "name": "mnist",
                "model": {"name": "m"},
                "variants": [{"name": "cpu", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
            }
        ],
        "gpuplane:training": [PS],
    }
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    assert any(
        p.startswith("gpuplane:training[0].name: 'mnist' is already used by serving[0]") for p in info.value.problems
    )


def test_direct_caller_is_refused_the_same_way():
    args = platform(nodeGroups=[{"name": "system", "instanceTypes": ["m6i.large"]}])
    with pytest.raises(ValueError, match="no GPU node group"):
        training_spec(TrainingArgs.model_validate(PS), WorkloadContext.of(args))


def test_tensorboard_ingress_only_with_an_ingress_class(run_platform):
    without = render.kubernetes_objects(run_platform({"training": [PS]}))
    assert not any(v["kind"] == "Ingress" for v in without.values())
    objects = render.kubernetes_objects(run_platform({"training": [PS], "ingressClass": "alb"}))
    ingress = objects["ingress-ml-mnist-tensorboard.yaml"]["spec"]
    assert ingress["ingressClassName"] == "alb"
    backend = ingress["rules"][0]["http"]["paths"][0]["backend"]["service"]
    service = objects["service-ml-mnist-tensorboard.yaml"]
    assert backend["name"] == service["metadata"]["name"]
    pod = objects["deployment-ml-mnist-tensorboard.yaml"]["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"] == {"claimName": "logs", "readOnly": True}


@pytest.mark.parametrize(
    ("role", "index", "warning"), [("ps", 1, "task 1 is not in"), ("evaluator", 0, "task 0 is not in")]
)
def test_helper_refuses_a_task_outside_the_run(role, index, warning):
    env = base_env(
        GPUPLANE_TF_ROLES="chief:1,worker:2,ps:1",
        GPUPLANE_TF_JOB_NAME="mnist-1a2b3c4d",
        GPUPLANE_TF_ROLE=role,
        JOB_COMPLETION_INDEX=str(index),
    )
    done = run_helper(["--print"], env)
    assert done.returncode == 0
    assert "TF_CONFIG=" not in done.stdout
    assert warning in done.stderr


def test_data_import_identity_and_script_outlive_runs(run_platform):
    spec = {**PS, "dataImport": {"source": "s3://team-data/mnist/", "path": "mnist"}}
    rec = run_platform({"training": [spec]})
    objects = render.kubernetes_objects(rec)
    assert objects["serviceaccount-ml-mnist-import.yaml"]["automountServiceAccountToken"] is False
    assert "configmap-ml-mnist-import-script.yaml" in objects
    association = rec.one(
        "aws:eks/podIdentityAssociation:PodIdentityAssociation", "gpuplane-test-training-mnist-import-identity"
    )
    assert association.inputs["serviceAccount"] == "mnist-import"
    run = jobset(spec)
    pod = rjobs(run)["data-import"]["template"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "mnist-import"
    assert pod["initContainers"][0]["image"] == versions.AWS_CLI_IMAGE
