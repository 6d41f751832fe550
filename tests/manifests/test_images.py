"""The image table (`versions.TensorFlowImage`) and its rules: each pinned image can do its role."""

from __future__ import annotations

import pytest

from gpuplane.manifests import versions

# The official TF 2.20 GPU image, as tensorflow/build's gpu.Dockerfile builds it: the case the rules exist for.
OFFICIAL_2_20_GPU = versions.TensorFlowImage(
    image="tensorflow/tensorflow:2.20.0-gpu",
    tensorflow="2.20.0",
    commands=("python3", "tensorboard"),
    user="root",
    source="tensorflow/build gpu.Dockerfile fdd023e",
    cuda="12.3.0",
    cudnn="8.9",
    min_compute_capability=60,
)


def test_every_image_records_its_facts_and_source() -> None:
    for image in versions.TENSORFLOW_IMAGES:
        versions.tf_minor(image.tensorflow)
        assert image.commands and image.user
        assert any(ch.isdigit() for ch in image.source) and ("20" in image.source)  # a commit/tag and a date
        if image.gpu:
            assert image.cudnn and image.min_compute_capability and image.cuda_major == 12


@pytest.mark.parametrize(
    ("image", "role"),
    [
        (versions.TF_SERVING_CPU, "serving"),
        (versions.TF_SERVING_GPU, "serving"),
        (versions.TENSORFLOW_CPU, "training"),
        (versions.TENSORFLOW_CPU, "tensorboard"),
        (versions.TENSORFLOW_GPU, "training-gpu"),
    ],
)
def test_each_pinned_image_can_do_its_role(image: versions.TensorFlowImage, role: str) -> None:
    assert versions.image_problems(image, role) == []


def test_the_gpu_roles_never_use_an_image_whose_libraries_miss_its_tensorflow() -> None:
    problems = versions.image_problems(OFFICIAL_2_20_GPU, "training-gpu")
    assert problems == [
        "tensorflow/tensorflow:2.20.0-gpu carries CUDA 12.3.0 / cuDNN 8.9, but TensorFlow 2.20.0 is built "
        "against CUDA 12.5 / cuDNN 9.3: it would find no GPU"
    ]
    # The 2.17 image of the same Dockerfile matches its own TensorFlow.
    older = versions.TensorFlowImage(**{**OFFICIAL_2_20_GPU.__dict__, "image": "t:2.17.0-gpu", "tensorflow": "2.17.0"})
    assert versions.image_problems(older, "training-gpu") == []


def test_a_cpu_image_is_no_gpu_training_image() -> None:
    assert versions.image_problems(versions.TENSORFLOW_CPU, "training-gpu") == [
        "tensorflow/tensorflow:2.20.0 has no CUDA user space"
    ]


def test_tensorboard_needs_the_command() -> None:
    """TF 2.21 images have no `tensorboard` (the dependency was dropped): the rule says so."""
    tf221 = versions.TensorFlowImage(
        image="tensorflow/tensorflow:2.21.0", tensorflow="2.21.0", commands=("python3",), user="root", source="x 2026"
    )
    assert versions.image_problems(tf221, "tensorboard") == ["tensorflow/tensorflow:2.21.0 has no tensorboard command"]


def test_serving_loads_what_every_pinned_training_image_exports() -> None:
    for serving in (versions.TF_SERVING_CPU, versions.TF_SERVING_GPU):
        for training in (versions.TENSORFLOW_CPU, versions.TENSORFLOW_GPU):
            assert versions.serving_loads(serving.tensorflow, training.tensorflow)


@pytest.mark.parametrize(
    ("serving", "training", "loads"),
    [("2.20.0", "2.20.0", True), ("2.20.0", "2.19.0", True), ("2.20", "2.21.0", False), ("2.19.1", "2.20", False)],
)
def test_serving_loads_only_same_or_older(serving: str, training: str, loads: bool) -> None:
    assert versions.serving_loads(serving, training) is loads


def test_one_tensorflow_line() -> None:
    """Serving, CPU training, TensorBoard and the compare client share TF 2.20; GPU training is not newer."""
    assert {versions.TF_SERVING_CPU.tensorflow, versions.TF_SERVING_GPU.tensorflow} == {"2.20.0"}
    assert versions.TENSORFLOW_CPU.tensorflow == "2.20.0"
    assert versions.TENSORFLOW_CPU_IMAGE == versions.TENSORFLOW_IMAGE == versions.TENSORFLOW_CPU.image
    assert versions.tf_minor(versions.TENSORFLOW_GPU.tensorflow) <= (2, 20)


@pytest.mark.parametrize("bad", ["2", "two.twenty", "", "2.x.0"])
def test_tf_minor_refuses_what_is_not_a_version(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a TensorFlow version"):
        versions.tf_minor(bad)
