"""The training queue: Kueue objects against the v1beta2 API, quotas from the node groups, the chart's values,
the autoscaler's ProvisioningRequest wiring and order on the plan, refusal of runs no group can hold."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.components.config import PlatformArgs, QueueArgs
from gpuplane.components.plan import training_queue as queue_component
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.training import queued_run, run_manifests
from gpuplane.infra import config, mockrun, render, train
from gpuplane.infra.cli import app
from gpuplane.manifests import pod_security, queue, versions
from tests.conftest import DEV_CLUSTER
from tests.queue import kueue_api

RELEASE = "kubernetes:helm.sh/v3:Release"
CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
MIB = 2**20

GPU_RUN: dict[str, Any] = {
    "name": "bert",
    "strategy": "multiWorkerMirrored",
    "command": ["python", "/data/train.py"],
    "worker": {"replicas": 2, "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}},
}
TWO_GPU_GROUPS = [
    {"name": "system", "instanceTypes": ["m6i.large"], "minSize": 1, "maxSize": 3},
    {"name": "a10", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 0, "maxSize": 2},
    {"name": "a100", "kind": "gpu", "instanceTypes": ["p4d.24xlarge"], "minSize": 0, "maxSize": 1},
]


def per_node(vcpus: int, memory_mib: int) -> tuple[int, int]:
    """Allocatable per node, worked out here from the EKS AL2023 rules (not from the code under test)."""
    max_pods = 110 if vcpus < 30 else 250
    reserved_cpu = sum(([60, 10, 5, 5] + [2.5] * (vcpus - 4))[:vcpus])
    cpu = int(vcpus * 1000 - reserved_cpu - 250)
    memory = memory_mib - (11 * max_pods + 255) - 100 - 400
    return cpu, memory


def quotas(cq: dict[str, Any]) -> dict[str, dict[str, str]]:
    flavors = cq["spec"]["resourceGroups"][0]["flavors"]
    return {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in flavors}


def stack_queue(overrides: dict[str, Any], version: str = "1.35") -> queue.Queue:
    args = PlatformArgs.model_validate({"cluster": {**DEV_CLUSTER, "kubernetesVersion": version}, **overrides})
    return queue_component.queue_spec(
        args.workload_namespace, args.resolved_node_groups, args.queue, kubernetes_version=version
    )


@pytest.fixture
def fixed_autoscaler() -> str:
    """The pinned autoscaler image of the default Kubernetes minor: it must be one with the ProvisioningRequest fix."""
    image = versions.CLUSTER_AUTOSCALER_IMAGES[versions.DEFAULT_KUBERNETES_VERSION]
    assert queue_component.provisioning_supported(versions.DEFAULT_KUBERNETES_VERSION), image
    return image


# --- the API -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("provisioning", [True, False])
def test_every_queue_object_follows_the_v1beta2_api(provisioning):
    spec = stack_queue({"nodeGroups": TWO_GPU_GROUPS})
    spec = queue.Queue(spec.namespace, spec.flavors, provisioning=provisioning)
    docs = queue.objects(spec)
    kinds = [d["kind"] for d in docs]
    expected = ["ResourceFlavor"] * 3 + (["ProvisioningRequestConfig", "AdmissionCheck"] if provisioning else [])
    assert kinds == [*expected, "ClusterQueue", "LocalQueue"]
    for doc in docs:
        assert kueue_api.problems(doc) == [], doc


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("ClusterQueue", ("spec", "cohort"), "shared"),  # v1beta1's name; v1beta2 has cohortName
        ("ClusterQueue", ("spec", "admissionChecks"), ["gpu-provisioning"]),  # removed in v1beta2
        ("ResourceFlavor", ("spec", "nodeSelector"), {"a": "b"}),
        ("LocalQueue", ("spec", "queue"), "x"),
        ("AdmissionCheck", ("spec", "retryDelayMinutes"), 15),  # removed in v1beta2
        ("ProvisioningRequestConfig", ("spec", "managedResource"), ["nvidia.com/gpu"]),
    ],
)
def test_the_schema_refuses_fields_the_api_lacks(kind, path, value):
    spec = stack_queue({"nodeGroups": TWO_GPU_GROUPS})
    docs = queue.objects(queue.Queue(spec.namespace, spec.flavors, provisioning=True))
    doc = copy.deepcopy(next(d for d in docs if d["kind"] == kind))
    doc[path[0]][path[1]] = value
    assert any(path[1] in p for p in kueue_api.problems(doc))


def test_cluster_queue_quotas_follow_the_covered_resources_in_order():
    spec = stack_queue({"nodeGroups": TWO_GPU_GROUPS})
    cq = queue.cluster_queue(spec)
    broken = copy.deepcopy(cq)
    broken["spec"]["resourceGroups"][0]["flavors"][0]["resources"].reverse()
    assert kueue_api.cel_problems(cq) == []
    assert kueue_api.cel_problems(broken)


def test_manager_configuration_follows_the_config_api_and_keeps_to_jobset():
    config_ = queue.manager_config("ml", "40m", 3)
    assert kueue_api.configuration_problems(config_) == []
    assert config_["integrations"] == {"frameworks": ["jobset.x-k8s.io/jobset"]}  # no `pod`: no fail-closed pod webhook
    assert config_["managedJobsNamespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "ml"}}
    assert config_["manageJobsWithoutQueueName"] is False
    assert config_["waitForPodsReady"] == {
        "timeout": "40m",
        "blockAdmission": False,
        "requeuingStrategy": {"timestamp": "Eviction", "backoffLimitCount": 3},
    }
    assert kueue_api.configuration_problems({**config_, "waitForPodsReady": {"enable": True, "timeout": "5m"}})


# --- quotas from the stack -----------------------------------------------------------------------------


def test_dev_quotas_are_what_the_groups_hold_at_max_size():
    cq = queue.cluster_queue(stack_queue({}))
    system_cpu, system_mem = per_node(2, 8192)  # m6i.large, maxSize 3
    gpu_cpu, gpu_mem = per_node(4, 16384)  # g5.xlarge (the smaller of g5.xlarge/2xlarge), maxSize 2
    assert quotas(cq) == {
        "group-system": {"cpu": f"{3 * system_cpu}m", "memory": f"{3 * system_mem}Mi", "nvidia.com/gpu": "0"},
        "group-gpu": {"cpu": f"{2 * gpu_cpu}m", "memory": f"{2 * gpu_mem}Mi", "nvidia.com/gpu": "2"},
    }
    assert quotas(cq)["group-system"]["cpu"] == "5040m"


def test_prod_quotas():
    args = config.load("prod").platform
    spec = queue_component.queue_spec(
        "ml", args.resolved_node_groups, args.queue, kubernetes_version=args.cluster.kubernetes_version
    )
    cpu, mem = per_node(4, 16384)  # m6i.xlarge and g5.xlarge: 4 vCPU, 16 GiB; both maxSize 4
    assert quotas(queue.cluster_queue(spec)) == {
        "group-system": {"cpu": f"{4 * cpu}m", "memory": f"{4 * mem}Mi", "nvidia.com/gpu": "0"},
        "group-gpu": {"cpu": f"{4 * cpu}m", "memory": f"{4 * mem}Mi", "nvidia.com/gpu": "4"},
    }


def test_two_gpu_groups_get_a_flavor_each_with_their_taints_and_the_check():
    spec = stack_queue({"nodeGroups": TWO_GPU_GROUPS})
    spec = queue.Queue(spec.namespace, spec.flavors, provisioning=True)
    cq = queue.cluster_queue(spec)
    big_cpu, big_mem = per_node(96, 1179648)
    assert quotas(cq)["group-a100"] == {"cpu": f"{big_cpu}m", "memory": f"{big_mem}Mi", "nvidia.com/gpu": "8"}
    assert quotas(cq)["group-a10"]["nvidia.com/gpu"] == "2"
    assert cq["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "gpu-provisioning", "onFlavors": ["group-a10", "group-a100"]}]
    }
    flavor = queue.resource_flavor(spec.flavors[2], spec)
    assert flavor["spec"] == {
        "nodeLabels": {"gpuplane.io/node-group": "a100"},
        "nodeTaints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
    }


def test_max_gpus_caps_each_gpu_group_and_groups_training_cannot_use_are_left_out():
    groups = [*TWO_GPU_GROUPS, {"name": "infra", "instanceTypes": ["m6i.large"], "taints": [{"key": "infra"}]}]
    spec = stack_queue({"nodeGroups": groups, "queue": {"maxGpus": 4}})
    cq = queue.cluster_queue(spec)
    assert set(quotas(cq)) == {"group-system", "group-a10", "group-a100"}  # `infra` is tainted for others
    assert quotas(cq)["group-a100"]["nvidia.com/gpu"] == "4" and quotas(cq)["group-a10"]["nvidia.com/gpu"] == "2"


def test_mig_groups_quote_their_own_resource():
    groups = [
        {"name": "system", "instanceTypes": ["m6i.large"]},
        {
            "name": "mig",
            "kind": "gpu",
            "instanceTypes": ["p4d.24xlarge"],
            "driver": "operator",
            "maxSize": 1,
            "sharing": {"mig": {"strategy": "mixed", "profile": "all-1g.5gb"}},
        },
    ]
    spec = stack_queue({"nodeGroups": groups})
    assert spec.covered_resources == ["cpu", "memory", "nvidia.com/mig-1g.5gb"]
    assert quotas(queue.cluster_queue(spec))["group-mig"]["nvidia.com/mig-1g.5gb"] == str(8 * 7)
    assert queue.provisioning_request_config(spec)["spec"]["managedResources"] == ["nvidia.com/mig-1g.5gb"]


# --- ProvisioningRequests: which minors, the autoscaler and the order on the plan -------------------------


@pytest.mark.parametrize(
    ("version", "image", "supported"),
    [
        ("1.32", "v1.32.7", False),  # no fixed 1.32 patch exists
        ("1.33", "v1.33.5", False),
        ("1.33", "v1.33.6", True),
        ("1.34", "v1.34.5", True),
        ("1.35", "v1.35.0", False),
        ("1.35", "v1.35.1", False),
        ("1.35", "v1.35.2", True),
        ("1.36", "v1.36.1", True),
    ],
)
def test_provisioning_requests_only_with_a_fixed_autoscaler_image(monkeypatch, version, image, supported):
    monkeypatch.setitem(versions.CLUSTER_AUTOSCALER_IMAGES, version, image)
    assert queue_component.provisioning_supported(version) is supported
    assert queue_component.provisioning_supported(version, autoscaler=False) is False


def test_plan_orders_the_crd_before_the_autoscaler_and_kueue(run_platform, fixed_autoscaler):
    rec = run_platform({"training": [GPU_RUN]})
    (crd,) = rec.by_type(CRD)
    # From the package, at the pinned image's tag: nothing fetched at `pulumi up`.
    assert "file" not in crd.inputs
    assert crd.inputs["metadata"]["name"] == "provisioningrequests.autoscaling.x-k8s.io"
    shipped = queue.provisioning_request_crd(versions.DEFAULT_KUBERNETES_VERSION)
    assert crd.inputs["spec"] == shipped["spec"]
    assert queue.provisioning_crd_tag(versions.DEFAULT_KUBERNETES_VERSION) == (
        f"cluster-autoscaler-{fixed_autoscaler.removeprefix('v')}"
    )
    releases = {r.inputs["name"]: r for r in rec.by_type(RELEASE)}
    autoscaler, kueue, jobset = releases["cluster-autoscaler"], releases["kueue"], releases["jobset"]
    assert crd.urn in autoscaler.dependencies and crd.urn in kueue.dependencies
    assert jobset.urn not in kueue.dependencies  # Kueue waits for the JobSet API by itself
    values = autoscaler.inputs["values"]
    assert values["image"]["tag"] == fixed_autoscaler
    assert values["extraArgs"]["enable-provisioning-requests"] is True
    assert values["rbac"]["additionalRules"] == [
        {"apiGroups": ["autoscaling.x-k8s.io"], "resources": ["provisioningrequests"], "verbs": ["delete"]}
    ]
    objects = render.kubernetes_objects(rec)
    assert objects["admissioncheck-gpu-provisioning.yaml"]["spec"]["controllerName"] == (
        "kueue.x-k8s.io/provisioning-request"
    )
    prc = objects["provisioningrequestconfig-gpu-provisioning.yaml"]["spec"]
    assert prc["provisioningClassName"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    assert prc["managedResources"] == ["nvidia.com/gpu"]


@pytest.mark.parametrize("version", ["1.32", "1.35"])
def test_without_the_fix_the_queue_admits_by_quota_alone(run_platform, monkeypatch, version):
    monkeypatch.setitem(versions.CLUSTER_AUTOSCALER_IMAGES, "1.35", "v1.35.1")
    # 1.32 left standard support before the suite's "today": only an EXTENDED cluster may pin it.
    policy = {"upgradePolicy": "EXTENDED"} if version == "1.32" else {}
    rec = run_platform({"training": [GPU_RUN], "cluster": {**DEV_CLUSTER, "kubernetesVersion": version, **policy}})
    assert rec.by_type(CRD) == []
    autoscaler = next(r for r in rec.by_type(RELEASE) if r.inputs["name"] == "cluster-autoscaler")
    assert "enable-provisioning-requests" not in autoscaler.inputs["values"]["extraArgs"]
    assert "additionalRules" not in autoscaler.inputs["values"]["rbac"]
    objects = render.kubernetes_objects(rec)
    assert "admissionChecksStrategy" not in objects["clusterqueue-ml-training.yaml"]["spec"]
    assert not any(name.startswith("admissioncheck-") for name in objects)


def test_no_queue_without_training(prod_run):
    assert not any(r.inputs.get("name") == "kueue" for r in prod_run.by_type(RELEASE))
    assert not any(r.type.startswith("kubernetes:kueue.x-k8s.io") for r in prod_run.resources)


# --- the chart and its place in the cluster --------------------------------------------------------------

# charts/kueue/values.yaml at v0.19.2: the keys it documents (top level, and under the subtrees we set).
KUEUE_DOCUMENTED_VALUES = {
    "nameOverride",
    "fullnameOverride",
    "enablePrometheus",
    "enableCertManager",
    "certManager",
    "enableVisibilityAPF",
    "enableMutatingAdmissionPolicy",
    "enableVisibilityAuthReaderRoleBinding",
    "enableKueueViz",
    "kubernetesClusterDomain",
    "controllerManager",
    "managerConfig",
    "metricsService",
    "webhookService",
    "mutatingWebhook",
    "kueueViz",
    "metrics",
    "controllerManager.featureGates",
    "controllerManager.strategy",
    "controllerManager.hostNetwork",
    "controllerManager.dnsPolicy",
    "controllerManager.manager",
    "controllerManager.replicas",
    "controllerManager.imagePullSecrets",
    "controllerManager.readinessProbe",
    "controllerManager.livenessProbe",
    "controllerManager.nodeSelector",
    "controllerManager.tolerations",
    "controllerManager.topologySpreadConstraints",
    "controllerManager.podDisruptionBudget",
    "controllerManager.manager.priorityClassName",
    "controllerManager.manager.image",
    "controllerManager.manager.podAnnotations",
    "controllerManager.manager.logLevel",
    "controllerManager.manager.resources",
    "controllerManager.manager.podSecurityContext",
    "controllerManager.manager.containerSecurityContext",
    "controllerManager.manager.image.repository",
    "controllerManager.manager.image.tag",
    "controllerManager.manager.image.pullPolicy",
    "managerConfig.controllerManagerConfigYaml",
}


def value_paths(values: dict[str, Any], prefix: str = "") -> set[str]:
    paths = set()
    for key, value in values.items():
        path = f"{prefix}{key}"
        paths.add(path)
        if isinstance(value, dict) and path in {
            "controllerManager",
            "controllerManager.manager",
            "managerConfig",
            "controllerManager.manager.image",
        }:
            paths |= value_paths(value, f"{path}.")
    return paths


def test_kueue_release_is_pinned_documented_and_deleted_with_the_cluster(dev_run):
    release = next(r for r in dev_run.by_type(RELEASE) if r.inputs["name"] == "kueue")
    assert release.inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert release.inputs["version"] == "0.19.2" and release.inputs["namespace"] == "kueue-system"
    values = release.inputs["values"]
    assert value_paths(values) <= KUEUE_DOCUMENTED_VALUES, value_paths(values) - KUEUE_DOCUMENTED_VALUES
    assert values["controllerManager"]["manager"]["image"] == {
        "repository": "registry.k8s.io/kueue/kueue",
        "tag": "v0.19.2",
        "pullPolicy": "IfNotPresent",
    }
    assert "hostNetwork" not in values["controllerManager"]  # pod network: reached through the cluster SG
    config_ = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config_ == queue.manager_config("ml", "40m", 3)
    cluster = dev_run.one("aws:eks/cluster:Cluster")
    assert release.deleted_with == cluster.urn


def test_kueue_namespace_enforces_restricted(dev_run):
    ns = next(
        n for n in dev_run.by_type("kubernetes:core/v1:Namespace") if n.inputs["metadata"]["name"] == "kueue-system"
    )
    assert ns.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    # The chart's controller: non-root, RuntimeDefault seccomp, read-only root, no capabilities, no escalation
    # (charts/kueue/values.yaml defaults, which we leave alone): what `restricted` asks for.
    release = next(r for r in dev_run.by_type(RELEASE) if r.inputs["name"] == "kueue")
    assert "podSecurityContext" not in release.inputs["values"]["controllerManager"]["manager"]


def test_webhooks_and_visibility_api_are_reachable_from_the_control_plane(dev_run):
    """EKS puts the cluster security group on nodes whose launch template names none; it admits all traffic
    from the control plane (which has the same group), so 9443 (webhooks) and 8082 (visibility) are open."""
    templates = dev_run.by_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert templates
    for template in templates:
        assert "vpcSecurityGroupIds" not in template.inputs and "securityGroupNames" not in template.inputs
        assert all("securityGroups" not in n for n in template.inputs.get("networkInterfaces", []))
    for group in dev_run.by_type("aws:eks/nodeGroup:NodeGroup"):
        assert "remoteAccess" not in group.inputs


def test_queue_objects_wait_for_kueue_and_go_with_the_cluster(dev_run):
    """Removing training deletes the queue objects while Kueue still runs to clear its finalizers; a destroy
    leaves them to the cluster's deletion (deletedWith), so nothing waits on a finalizer nobody clears."""
    cluster = dev_run.one("aws:eks/cluster:Cluster")
    release = next(r for r in dev_run.by_type(RELEASE) if r.inputs["name"] == "kueue")
    found = [r for r in dev_run.resources if r.type.startswith("kubernetes:kueue.x-k8s.io/v1beta2:")]
    assert {r.type.rsplit(":", 1)[1] for r in found} >= {"ResourceFlavor", "ClusterQueue", "LocalQueue"}
    for resource in found:
        assert release.urn in resource.dependencies, resource.urn
        assert resource.deleted_with == cluster.urn, resource.urn


def test_serving_import_jobs_wait_for_kueue(dev_run):
    """Kueue's Job webhook is fail-closed in the workload namespace: a Job created before Kueue runs would fail."""
    release = next(r for r in dev_run.by_type(RELEASE) if r.inputs["name"] == "kueue")
    jobs = dev_run.by_type("kubernetes:batch/v1:Job")
    assert jobs and all(release.urn in j.dependencies for j in jobs)


# --- runs: label, suspension, refusal ------------------------------------------------------------------


def test_every_run_is_submitted_queued_and_suspended(dev_run):
    runs = run_manifests(config.load("dev").platform)
    for obj in [*runs.values(), train.build(config.load("dev"), "mnist", run_id="exp-1")]:
        assert obj["metadata"]["labels"][queue.QUEUE_LABEL] == "training"
        assert obj["spec"]["suspend"] is True


def test_a_run_no_gpu_group_can_hold_is_refused_at_render():
    big = {**GPU_RUN, "worker": {**GPU_RUN["worker"], "replicas": 3}}  # dev's GPU group: 2 nodes, 1 GPU each
    raw = {"aws:region": "us-west-2", "gpuplane:cluster": DEV_CLUSTER, "gpuplane:training": [big]}
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    [problem] = [p for p in info.value.problems if p.startswith("gpuplane:training[0].worker.replicas:")]
    assert "fit no single GPU group" in problem and "'gpu' holds 2 GPU(s) on 2 node(s)" in problem
    assert "the run needs 3 node(s)" in problem


def test_a_run_over_the_gpu_cap_is_refused():
    raw = {
        "aws:region": "us-west-2",
        "gpuplane:cluster": DEV_CLUSTER,
        "gpuplane:queue": {"maxGpus": 1},
        "gpuplane:training": [GPU_RUN],
    }
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    assert any("queue.maxGpus 1" in p for p in info.value.problems), info.value.problems


def test_a_run_that_fits_one_group_of_two_is_admissible():
    args = PlatformArgs.model_validate(
        {
            "cluster": DEV_CLUSTER,
            "nodeGroups": TWO_GPU_GROUPS,
            "training": [{**GPU_RUN, "worker": {**GPU_RUN["worker"], "replicas": 4}}],
        }
    )
    run = queued_run(args.training[0], WorkloadContext.of(args), args.queue)
    assert run["spec"]["suspend"] is True  # 4 GPUs: only the a100 group (8 per node) holds them


def test_gpuplane_train_refuses_a_run_no_group_can_hold(tmp_path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    big = {**GPU_RUN, "worker": {**GPU_RUN["worker"], "replicas": 3}}
    doc = {"config": {"aws:region": "us-west-2", "gpuplane:cluster": DEV_CLUSTER, "gpuplane:training": [big]}}
    (stacks / "Pulumi.big.yaml").write_text(yaml.safe_dump(doc))
    result = CliRunner().invoke(app, ["train", "big", "bert", "--plan", "--stacks-dir", str(stacks)])
    assert result.exit_code == 2, result.output
    assert "fit no single GPU group" in result.output and "Traceback" not in result.output


def test_check_run_directly(monkeypatch):
    args = PlatformArgs.model_validate({"cluster": DEV_CLUSTER, "nodeGroups": TWO_GPU_GROUPS, "training": [GPU_RUN]})
    context = WorkloadContext.of(args)
    queue_component.check_run(args.training[0], context, QueueArgs())
    with pytest.raises(ValueError, match="fit no single GPU group"):
        queue_component.check_run(args.training[0], context, QueueArgs(max_gpus=1))


@pytest.mark.parametrize(
    ("timeout", "import_minutes", "fragment"),
    [
        ("5m", None, "shorter than 10m"),
        ("30m", 30, "use at least 40m"),
        ("1h", 45, None),
    ],
)
def test_pods_ready_timeout_covers_gpu_boot_and_the_data_import(timeout, import_minutes, fragment):
    run = dict(GPU_RUN)
    if import_minutes is not None:
        run["dataImport"] = {"source": "https://example.com/d.tar.gz", "path": "d", "timeoutMinutes": import_minutes}
        run["volumes"] = [{"volume": "datasets", "mountPath": "/data"}]
    raw = {
        "aws:region": "us-west-2",
        "gpuplane:cluster": DEV_CLUSTER,
        "gpuplane:queue": {"podsReadyTimeout": timeout},
        "gpuplane:training": [run],
    }
    if fragment is None:
        assert config.parse(raw, "test").platform.queue.pods_ready_timeout == timeout
        return
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    matching = [p for p in info.value.problems if p.startswith("gpuplane:queue.podsReadyTimeout:")]
    assert matching and fragment in matching[0], info.value.problems


def test_render_shows_the_queue_objects_in_strict_form(dev_run):
    objects = render.kubernetes_objects(dev_run)
    kueue = {k: v for k, v in objects.items() if v["apiVersion"].startswith("kueue.x-k8s.io/")}
    assert set(kueue) >= {
        "resourceflavor-group-system.yaml",
        "resourceflavor-group-gpu.yaml",
        "clusterqueue-ml-training.yaml",
        "localqueue-ml-training.yaml",
    }
    for name, doc in kueue.items():
        assert kueue_api.problems(doc) == [], name


def test_plan_of_a_run_lists_the_queued_jobset_and_the_queue_objects():
    result = CliRunner().invoke(app, ["train", "dev", "mnist", "--plan"])
    assert result.exit_code == 0, result.output
    docs = list(yaml.safe_load_all(result.output))
    assert docs[0]["kind"] == "JobSet" and docs[0]["spec"]["suspend"] is True
    assert [d["kind"] for d in docs[1:]][-2:] == ["ClusterQueue", "LocalQueue"]
    assert docs[-1]["metadata"]["name"] == docs[0]["metadata"]["labels"][queue.QUEUE_LABEL]


def test_mockrun_records_the_crd_component(run_platform, fixed_autoscaler):
    rec: mockrun.Recording = run_platform({"training": [GPU_RUN]})
    (crd,) = rec.by_type(CRD)
    cluster = rec.one("aws:eks/cluster:Cluster")
    assert crd.deleted_with == cluster.urn


# charts/kueue/values.yaml at v0.19.2: the controller's securityContexts (we leave them at their defaults).
KUEUE_CHART_POD_SECURITY = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
KUEUE_CHART_CONTAINER_SECURITY = {
    "readOnlyRootFilesystem": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}


def test_the_kueue_controller_pod_as_the_chart_renders_it_is_admitted_by_restricted(dev_run):
    """templates/manager/manager.yaml at v0.19.2 with our values: secret, configMap and emptyDir volumes, the
    chart's securityContexts, our tolerations, no hostNetwork."""
    values = next(r for r in dev_run.by_type(RELEASE) if r.inputs["name"] == "kueue").inputs["values"]
    manager = values["controllerManager"]["manager"]
    assert "podSecurityContext" not in manager and "containerSecurityContext" not in manager
    image = manager["image"]
    pod = {
        "securityContext": KUEUE_CHART_POD_SECURITY,
        "tolerations": values["controllerManager"]["tolerations"],
        "containers": [
            {
                "name": "manager",
                "image": f"{image['repository']}:{image['tag']}",
                "ports": [{"containerPort": p} for p in (8082, 9443, 8443)],
                "securityContext": KUEUE_CHART_CONTAINER_SECURITY,
            }
        ],
        "volumes": [
            {"name": "cert", "secret": {"secretName": "kueue-webhook-server-cert"}},
            {"name": "manager-config", "configMap": {"name": "kueue-manager-config"}},
            {"name": "visibility", "emptyDir": {}},
        ],
    }
    if values["controllerManager"].get("hostNetwork"):
        pod["hostNetwork"] = True
    assert pod_security.violations(pod) == []
    assert pod_security.violations({**pod, "hostNetwork": True})  # the checker would catch the host network
