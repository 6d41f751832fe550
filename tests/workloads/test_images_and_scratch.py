"""Which image each workload runs, that serving loads what training exports, and the scratch space.

Every container of every pod template gpuplane builds has HOME in its /tmp emptyDir, and every container
given a GPU has the CUDA kernel cache there too, in an emptyDir sized for it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from gpuplane.components.config import PlatformArgs
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.serving import model_import_spec, serving_spec
from gpuplane.components.plan.training import training_spec
from gpuplane.infra import config
from gpuplane.manifests import loadtest, model_import, scheduling, serving, training, versions, workload_security
from tests.conftest import DEV_CLUSTER

GROUPS = [
    {"name": "system", "instanceTypes": ["m6i.xlarge"]},
    {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.2xlarge"], "minSize": 0},
]
CPU_VARIANT = {"name": "cpu", "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}}
GPU_VARIANT = {"name": "gpu", "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}}
SERVING = {
    "name": "resnet",
    "model": {"name": "resnet", "import": {"source": "https://example.com/resnet.tar.gz"}},
    "variants": [CPU_VARIANT, GPU_VARIANT],
}
TRAINING = {
    "name": "mnist",
    "strategy": "parameterServer",
    "command": ["python3", "/data/train.py"],
    "chief": {"resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "worker": {"replicas": 2, "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}},
    "ps": {"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
    "volumes": [{"volume": "datasets", "mountPath": "/data"}],
    "dataImport": {"source": "https://example.com/mnist.tar.gz", "path": "mnist"},
    "tensorboard": {},
}


# A model served from the export of the training above: the pair the TensorFlow rule compares.
EXPORTING = {
    **TRAINING,
    "volumes": [*TRAINING["volumes"], {"volume": "models", "mountPath": "/models"}],
    "export": {"volume": "models", "path": "mnist-export"},
}
FROM_TRAINING = {**SERVING, "model": {"name": "resnet", "fromTraining": "mnist", "path": "mnist-export"}}


def platform(**overrides: Any) -> PlatformArgs:
    return PlatformArgs.model_validate({"cluster": DEV_CLUSTER, "nodeGroups": GROUPS, **overrides})


def problems(overrides: dict[str, Any]) -> list[str]:
    raw: dict[str, Any] = {"aws:region": "us-west-2", "gpuplane:cluster": DEV_CLUSTER, "gpuplane:nodeGroups": GROUPS}
    raw.update({f"gpuplane:{k}": v for k, v in overrides.items()})
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, "test")
    return info.value.problems


# --- which image ------------------------------------------------------------------------------------


def test_default_images_per_role():
    args = platform(serving=[SERVING], training=[TRAINING])
    context = WorkloadContext.of(args)
    variants = {v.name: v for v in serving_spec(args.serving[0], context).variants}
    assert variants["cpu"].image == versions.TF_SERVING_CPU.image == "tensorflow/serving:2.21.0"
    assert variants["gpu"].image == versions.TF_SERVING_GPU.image == "tensorflow/serving:2.21.0-gpu"
    spec = training_spec(args.training[0], context)
    # A run with GPU workers runs every role (the CPU-only chief and ps too) on the GPU image: one TF per run.
    assert spec.image == versions.TENSORFLOW_GPU.image
    board = training.tensorboard(spec, "logs", "mnist")[1]["spec"]["template"]["spec"]["containers"][0]
    # TensorBoard runs the 2.20 CPU image: TF 2.21 images ship no `tensorboard` command.
    assert board["image"] == versions.TENSORBOARD.image == "tensorflow/tensorflow:2.20.0"
    assert board["command"][0] == "tensorboard" and "tensorboard" in versions.TENSORBOARD.commands
    cpu_only = {**TRAINING, "worker": {"replicas": 2, "resources": {"limits": {"cpu": "2", "memory": "8Gi"}}}}
    assert training_spec(platform(training=[cpu_only]).training[0], context).image == versions.TENSORFLOW_CPU.image


def test_defaults_serve_what_they_train():
    platform(serving=[FROM_TRAINING], training=[EXPORTING])  # no error: 2.21 serves 2.21 exports


def test_an_older_serving_image_than_training_is_refused_naming_both():
    old = {**CPU_VARIANT, "image": "registry.example.com/serving:2.19.1", "tensorflowVersion": "2.19.1"}
    found = problems(
        {"serving": [{**FROM_TRAINING, "variants": [old]}], "training": [EXPORTING | {"worker": CPU_WORKER}]}
    )
    assert found == [
        "gpuplane:serving[0].variants[0].image: serving 'resnet' variant 'cpu' runs TensorFlow 2.19.1 "
        "(registry.example.com/serving:2.19.1), older than TensorFlow 2.21.0 of training[0] "
        "(tensorflow/tensorflow:2.21.0, training 'mnist'): a SavedModel loads only in the same or a newer "
        "TensorFlow; serve with a newer image or train with an older one"
    ]


CPU_WORKER = {"replicas": 2, "resources": {"limits": {"cpu": "2", "memory": "8Gi"}}}


def test_a_newer_training_image_than_serving_is_refused():
    newer = {**EXPORTING, "image": "registry.example.com/train:2.22.0", "tensorflowVersion": "2.22.0"}
    found = problems({"serving": [FROM_TRAINING], "training": [newer]})
    assert any(
        p.startswith("gpuplane:serving[0].variants[0].image: serving 'resnet' variant 'cpu' runs TensorFlow 2.21.0")
        and "older than TensorFlow 2.22.0 of training[0] (registry.example.com/train:2.22.0" in p
        for p in found
    ), found


def test_an_image_without_a_declared_version_cannot_be_checked_and_says_so():
    named = {**EXPORTING, "image": "registry.example.com/train:7"}
    found = problems({"serving": [FROM_TRAINING], "training": [named]})
    assert found == [
        "gpuplane:training[0].tensorflowVersion: cannot know whether serving 'resnet' (tensorflow/serving:2.21.0) "
        "loads what training 'mnist' (registry.example.com/train:7) exports: registry.example.com/train:7 declares "
        'no TensorFlow version; set training[0].tensorflowVersion (e.g. "2.21.0")'
    ]
    declared = {**named, "tensorflowVersion": "2.21.0"}
    platform(serving=[FROM_TRAINING], training=[declared])  # declared and not newer: accepted


def test_a_model_from_elsewhere_is_not_compared_with_the_stacks_training():
    """Serving mobilenet from TF Hub has nothing to do with training mnist: no rule links them (issue 26)."""
    digest = "registry.example.com/serving@sha256:" + "a" * 64
    unrelated = {**SERVING, "variants": [{**CPU_VARIANT, "image": digest}]}
    platform(
        serving=[unrelated],
        training=[{**TRAINING, "image": "registry.example.com/train:2.99.0", "tensorflowVersion": "2.99.0"}],
    )


@pytest.mark.parametrize(
    ("serving", "training", "expected"),
    [
        (
            {**FROM_TRAINING, "model": {"name": "resnet", "fromTraining": "cifar"}},
            EXPORTING,
            "gpuplane:serving[0].model.fromTraining: 'cifar' is not a training workload of this stack; allowed: mnist",
        ),
        (
            FROM_TRAINING,
            TRAINING,
            "gpuplane:training[0].export: serving 'resnet' loads the export of training 'mnist' "
            "(serving[0].model.fromTraining): say where its program writes it, e.g. export: "
            "{volume: models, path: mnist-export}",
        ),
        (
            {**FROM_TRAINING, "model": {"name": "resnet", "fromTraining": "mnist", "path": "elsewhere"}},
            EXPORTING,
            "gpuplane:serving[0].model.path: serving 'resnet' reads models:elsewhere, but training 'mnist' writes "
            "its export to models:mnist-export; make them the same",
        ),
        (
            FROM_TRAINING,
            {**EXPORTING, "volumes": TRAINING["volumes"]},
            "gpuplane:training[0].export.volume: 'models' is not mounted in training 'mnist' (volumes: datasets)",
        ),
        (
            {
                **FROM_TRAINING,
                "model": {"name": "resnet", "import": {"source": "https://e.com/m.tar.gz"}, "fromTraining": "mnist"},
            },
            EXPORTING,
            "gpuplane:serving[0].model.fromTraining: 'mnist' and `import` both say where the model comes from",
        ),
    ],
    ids=["unknown-training", "no-export", "other-path", "export-not-mounted", "import-too"],
)
def test_a_model_from_a_training_reads_where_it_writes(serving, training, expected):
    found = problems({"serving": [serving], "training": [training]})
    assert any(p.startswith(expected) for p in found), found


def test_a_named_image_alone_needs_no_version():
    """Without training in the stack there is nothing to compare: a named serving image is fine as it is."""
    platform(serving=[{**SERVING, "variants": [{**CPU_VARIANT, "image": "registry.example.com/serving:9"}]}])


def test_a_version_without_an_image_is_refused():
    found = problems({"training": [{**TRAINING, "tensorflowVersion": "2.20.0"}]})
    assert found[0].startswith("gpuplane:training[0].tensorflowVersion: '2.20.0' describes an image you name")


def test_a_version_that_is_not_one_is_refused():
    found = problems({"training": [{**TRAINING, "image": "r/t:1", "tensorflowVersion": "latest"}]})
    assert found[0].startswith("gpuplane:training[0].tensorflowVersion:")
    assert "is not a TensorFlow version like 2.20.0" in found[0]


# --- the GPU check in the manifests ----------------------------------------------------------------------


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}


def test_gpu_containers_carry_the_check_and_cpu_containers_do_not():
    args = platform(serving=[SERVING], training=[TRAINING])
    context = WorkloadContext.of(args)
    for variant in serving_spec(args.serving[0], context).variants:
        env = env_of(serving.pod_spec(serving_spec(args.serving[0], context), variant)["containers"][0])
        if variant.gpus:
            assert env["GPUPLANE_GPU_CHECK"] == "devices"  # tensorflow/serving has no Python
            assert env["GPUPLANE_IMAGE"] == variant.image
            assert env["GPUPLANE_GPU_MIN_DRIVER"] == "525"
        else:
            assert "GPUPLANE_GPU_CHECK" not in env
    jobs = {r["name"]: r for r in training.jobset(training_spec(args.training[0], context))["spec"]["replicatedJobs"]}
    worker = env_of(jobs["worker"]["template"]["spec"]["template"]["spec"]["containers"][0])
    assert worker["GPUPLANE_GPU_CHECK"] == "tensorflow"
    assert worker["GPUPLANE_IMAGE"] == versions.TENSORFLOW_GPU.image
    for role in ("chief", "ps"):
        assert "GPUPLANE_GPU_CHECK" not in env_of(jobs[role]["template"]["spec"]["template"]["spec"]["containers"][0])


def test_the_sagemaker_gpu_training_image_on_eks():
    """The 2.21 GPU DLC is built for SageMaker only: on EKS our command replaces its entrypoint, and every role
    runs as the storage uid under Pod Security `restricted` (the image has no USER line: it would run as root).
    """
    assert versions.TENSORFLOW_GPU.image.endswith("-sagemaker")
    assert versions.TENSORFLOW_GPU.user.startswith("root") and "entrypoint.sh" in versions.TENSORFLOW_GPU.entrypoint
    args = platform(training=[TRAINING])
    jobs = {
        r["name"]: r
        for r in training.jobset(training_spec(args.training[0], WorkloadContext.of(args)))["spec"]["replicatedJobs"]
    }
    for role in ("chief", "worker", "ps"):
        pod = jobs[role]["template"]["spec"]["template"]["spec"]
        container = pod["containers"][0]
        assert container["image"] == versions.TENSORFLOW_GPU.image  # one TensorFlow for every role of the run
        # Our command, not the image's `bash -m /usr/local/bin/entrypoint.sh` (telemetry and the CUDA compat
        # shim, which the 580 driver does not need for CUDA 12.9): the runtime helper, then the user's command.
        assert container["command"] == [
            "/bin/sh",
            "/opt/gpuplane/gpuplane-entrypoint.sh",
            "--",
            "python3",
            "/data/train.py",
        ]
        security = {**pod.get("securityContext", {}), **container["securityContext"]}
        assert security["runAsNonRoot"] is True and security["runAsUser"] > 10000  # the image's root is never used
        assert security["allowPrivilegeEscalation"] is False and security["capabilities"] == {"drop": ["ALL"]}
        assert security["readOnlyRootFilesystem"] is True and env_of(container)["HOME"] == "/tmp"


def test_gpu_check_false_is_the_opt_out():
    args = platform(
        serving=[{**SERVING, "variants": [{**GPU_VARIANT, "gpuCheck": False}]}],
        training=[{**TRAINING, "gpuCheck": False}],
    )
    context = WorkloadContext.of(args)
    spec = serving_spec(args.serving[0], context)
    assert "GPUPLANE_GPU_CHECK" not in env_of(serving.pod_spec(spec, spec.variants[0])["containers"][0])
    jobs = {r["name"]: r for r in training.jobset(training_spec(args.training[0], context))["spec"]["replicatedJobs"]}
    assert "GPUPLANE_GPU_CHECK" not in env_of(jobs["worker"]["template"]["spec"]["template"]["spec"]["containers"][0])


# --- HOME and the CUDA cache in the scratch space, on every pod template ------------------------------------


def every_pod_spec(objects: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, pod spec) for every pod template anywhere in `objects`."""

    def walk(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
        if isinstance(node, dict):
            if "containers" in node:
                yield where, node
            for key, value in node.items():
                yield from walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                yield from walk(value, f"{where}[{index}]")

    for obj in objects:
        yield from walk(obj, f"{obj['kind']}/{obj['metadata']['name']}")


def all_workload_objects() -> list[dict[str, Any]]:
    args = platform(serving=[SERVING], training=[TRAINING])
    context = WorkloadContext.of(args)
    spec = training_spec(args.training[0], context)
    imp = model_import_spec(args.serving[0], context)
    assert imp is not None
    objects = [
        *serving.objects(serving_spec(args.serving[0], context)),
        *model_import.objects(imp),
        training.jobset(spec),
        *training.tensorboard(spec, "logs", "mnist"),
        loadtest.job("ml", "r1", servings=["resnet"], uid=10001, gid=10001, active_deadline_s=600, with_inputs=True),
        loadtest.uploader_pod("ml", "r1", uid=10001, gid=10001),
    ]
    return copy.deepcopy(objects)


def scratch_of(what: str, mounts: dict[str, str], empty_dirs: dict[str, Any], path: str) -> dict[str, Any]:
    """The emptyDir `path` is on in a container (its longest mount prefix); fails naming the container."""
    owners = [p for p in mounts if path == p or path.startswith(p.rstrip("/") + "/")]
    assert owners, f"{what}: {path} is on no mount"
    volume = mounts[max(owners, key=len)]
    assert volume in empty_dirs, f"{what}: {path} is on {volume}, not an emptyDir"
    return dict(empty_dirs[volume])


def test_every_container_has_home_and_gpu_containers_the_kernel_cache_in_an_empty_dir():
    specs = list(every_pod_spec(all_workload_objects()))
    assert len(specs) >= 8  # 2 serving variants, import, 4 JobSet jobs, TensorBoard, load test, uploader
    gpu_containers = 0
    for where, pod in specs:
        empty_dirs = {v["name"]: v["emptyDir"] for v in pod.get("volumes", []) if "emptyDir" in v}
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            what = f"{where} container {container['name']}"
            mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
            env = env_of(container)

            assert "HOME" in env, f"{what}: no HOME"
            scratch_of(what, mounts, empty_dirs, env["HOME"])
            limits = container.get("resources", {}).get("limits", {})
            if any("gpu" in key for key in limits):
                gpu_containers += 1
                cache = scratch_of(what, mounts, empty_dirs, env["CUDA_CACHE_PATH"])
                assert int(env["CUDA_CACHE_MAXSIZE"]) == workload_security.CUDA_CACHE_MAX_BYTES
                room = scheduling.memory_bytes(cache["sizeLimit"])
                assert room >= workload_security.CUDA_CACHE_MAX_BYTES + 2**30, f"{what}: {cache} too small"
    assert gpu_containers == 2  # the GPU serving variant and the GPU workers
