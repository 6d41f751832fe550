"""The image table (`versions.TensorFlowImage`) and its rules: each pinned image can do its role."""

from __future__ import annotations

import dataclasses

import pytest

from gpuplane.manifests import lifecycle, versions


# The official TF 2.20 GPU image, as tensorflow/build's gpu.Dockerfile builds it: the case the rules exist for.
def image_pin(reference: str) -> versions.Pin:
    """A docker pin for an image the tests make up."""
    package, tag = reference.rsplit(":", 1)
    return versions.Pin(
        datasource="docker",
        name=package,
        package=package,
        version=tag,
        released="2026-01-01",
        read="2026-11-28",
        support="None published: an image the tests make up.",
    )


OFFICIAL_2_20_GPU = versions.TensorFlowImage(
    pin=image_pin("tensorflow/tensorflow:2.20.0-gpu"),
    tensorflow="2.20.0",
    commands=("python3", "tensorboard"),
    user="root",
    cuda="12.3.0",
    cudnn="8.9",
    min_compute_capability=60,
)


def test_every_image_records_its_facts_and_source() -> None:
    for image in versions.TENSORFLOW_IMAGES:
        lifecycle.tf_minor(image.tensorflow)
        assert image.commands and image.user
        assert image.pin.read == "2026-11-28" and image.pin.released in image.source  # what was read, and when
        assert image.image.endswith(":" + image.pin.version)
        if image.gpu:
            assert image.cudnn and image.min_compute_capability and image.cuda_major == 12
        # An image whose facts were not read at its tag says so where the docs and the operator see it.
        assert image.inferred == ("INFERRED" in image.source)


@pytest.mark.parametrize(
    ("image", "tf", "cuda", "cudnn", "commands", "entrypoint", "inferred", "end_of_patch"),
    [
        (
            versions.TF_SERVING_CPU,
            "2.21.0",
            None,
            None,
            ("tensorflow_model_server",),
            "tf_serving_entrypoint.sh",
            True,
            "2027-06-01",
        ),
        (
            versions.TF_SERVING_GPU,
            "2.21.0",
            "12.5.1",
            "9.3",
            ("tensorflow_model_server",),
            "tf_serving_entrypoint.sh",
            True,
            "2027-06-01",
        ),
        (versions.TENSORFLOW_CPU, "2.21.0", None, None, ("python3",), "", False, "2027-06-01"),
        (versions.TENSORBOARD, "2.20.0", None, None, ("python3", "tensorboard"), "", False, "2027-06-01"),
        (versions.TENSORFLOW_GPU, "2.21.0", "12.9.1", "9.24", ("python3",), "entrypoint.sh", False, "2027-07-10"),
    ],
)
def test_image_facts(
    image: versions.TensorFlowImage,
    tf: str,
    cuda: str | None,
    cudnn: str | None,
    commands: tuple[str, ...],
    entrypoint: str,
    inferred: bool,
    end_of_patch: str | None,
) -> None:
    """Per image: TF version, CUDA, cuDNN, the driver branch it needs, commands, user, entrypoint, end of patch.

    The Ubuntu 22.04 images end with their base's standard support; the DLC with its own end of patch.
    """
    assert (image.tensorflow, image.cuda, image.cudnn, image.commands) == (tf, cuda, cudnn, commands)
    assert image.user.startswith("root") and image.entrypoint.endswith(entrypoint)
    assert (image.inferred, image.pin.end_of_support) == (inferred, end_of_patch)
    if image.gpu:
        # CUDA 12 user space: driver >= 525 (minor-version compatibility); both AMI families ship 580.
        need = lifecycle.CUDA_MIN_DRIVER[image.cuda_major or 0]
        assert need == 525 and all(major >= need for major in lifecycle.AMI_DRIVER_MAJOR.values())


@pytest.mark.parametrize(
    ("image", "role"),
    [
        (versions.TF_SERVING_CPU, "serving"),
        (versions.TF_SERVING_GPU, "serving"),
        (versions.TENSORFLOW_CPU, "training"),
        (versions.TENSORBOARD, "tensorboard"),
        (versions.TENSORFLOW_GPU, "training-gpu"),
        (versions.TENSORFLOW_GPU, "training"),
    ],
)
def test_each_pinned_image_can_do_its_role(image: versions.TensorFlowImage, role: str) -> None:
    assert lifecycle.image_problems(image, role) == []


def test_the_gpu_roles_never_use_an_image_whose_libraries_miss_its_tensorflow() -> None:
    problems = lifecycle.image_problems(OFFICIAL_2_20_GPU, "training-gpu")
    assert problems == [
        "tensorflow/tensorflow:2.20.0-gpu carries CUDA 12.3.0 / cuDNN 8.9, but TensorFlow 2.20.0 is built "
        "against CUDA 12.5 / cuDNN 9.3: it would find no GPU"
    ]
    # The 2.17 image of the same Dockerfile matches its own TensorFlow.
    older = dataclasses.replace(OFFICIAL_2_20_GPU, pin=image_pin("t:2.17.0-gpu"), tensorflow="2.17.0")
    assert lifecycle.image_problems(older, "training-gpu") == []


def test_a_cpu_image_is_no_gpu_training_image() -> None:
    assert lifecycle.image_problems(versions.TENSORFLOW_CPU, "training-gpu") == [
        "tensorflow/tensorflow:2.21.0 has no CUDA user space"
    ]


def test_tensorboard_needs_the_command() -> None:
    """TF 2.21 images have no `tensorboard` (the dependency was dropped): the rule says so, for both 2.21 images."""
    assert lifecycle.image_problems(versions.TENSORFLOW_CPU, "tensorboard") == [
        "tensorflow/tensorflow:2.21.0 has no tensorboard command"
    ]
    assert lifecycle.image_problems(versions.TENSORFLOW_GPU, "tensorboard") == [
        f"{versions.TENSORFLOW_GPU_IMAGE} has no tensorboard command"
    ]


def test_serving_loads_what_every_pinned_training_image_exports() -> None:
    for serving in (versions.TF_SERVING_CPU, versions.TF_SERVING_GPU):
        for training in (versions.TENSORFLOW_CPU, versions.TENSORFLOW_GPU):
            assert lifecycle.serving_loads(serving.tensorflow, training.tensorflow)


@pytest.mark.parametrize(
    ("serving", "training", "loads"),
    [("2.20.0", "2.20.0", True), ("2.20.0", "2.19.0", True), ("2.20", "2.21.0", False), ("2.19.1", "2.20", False)],
)
def test_serving_loads_only_same_or_older(serving: str, training: str, loads: bool) -> None:
    assert lifecycle.serving_loads(serving, training) is loads


def test_one_tensorflow_line() -> None:
    """Serving (CPU and GPU), CPU and GPU training and the compare client share TF 2.21; TensorBoard reads any."""
    line = {
        image.tensorflow
        for image in (
            versions.TF_SERVING_CPU,
            versions.TF_SERVING_GPU,
            versions.TENSORFLOW_CPU,
            versions.TENSORFLOW_GPU,
        )
    }
    assert line == {"2.21.0"}
    assert versions.TENSORFLOW_CPU_IMAGE == versions.TENSORFLOW_IMAGE == versions.TENSORFLOW_CPU.image
    assert versions.TENSORBOARD_IMAGE == "tensorflow/tensorflow:2.20.0"


def test_the_serving_rule_on_the_new_line() -> None:
    """2.21 serving loads 2.21 exports and older ones; a 2.22 export is refused; TensorBoard is no training image."""
    assert lifecycle.serving_loads(versions.TF_SERVING_CPU.tensorflow, versions.TENSORFLOW_GPU.tensorflow)
    assert lifecycle.serving_loads("2.21.0", "2.20.0")
    assert not lifecycle.serving_loads(versions.TF_SERVING_GPU.tensorflow, "2.22.0")


def test_no_default_image_is_past_its_end_of_patch_on_the_pinned_day() -> None:
    """On the day these pins were set (the suite's pinned today) every TensorFlow image is patched."""
    assert [i.image for i in versions.TENSORFLOW_IMAGES if lifecycle.past_end_of_support(i.pin)] == []
    # The image this replaced was not: AWS stopped patching the 2.19 training DLC on 2026-03-11.
    old = versions.Pin(
        datasource="docker",
        name="old",
        package="public.ecr.aws/deep-learning-containers/tensorflow-training",
        version="2.19.0-gpu-py312-cu125-ubuntu22.04-sagemaker",
        released="2025-03-11",
        end_of_support="2026-03-11",
        read="2026-11-26",
        support="AWS Deep Learning Containers: eop 2026-03-11 (2.19-gpu-sagemaker.yml).",
    )
    assert lifecycle.past_end_of_support(old)


@pytest.mark.parametrize("bad", ["2", "two.twenty", "", "2.x.0"])
def test_tf_minor_refuses_what_is_not_a_version(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a TensorFlow version"):
        lifecycle.tf_minor(bad)
