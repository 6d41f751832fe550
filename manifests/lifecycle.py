"""What the pins mean over time and together: Kubernetes versions' support, compatibility, aged pins.

Why apart from `versions`: `versions.py` holds the pins (what was chosen upstream, with its source and date),
this module the rules and the compatibility tables that read them: the day every date rule judges by (`today()`),
whether a Kubernetes version is in standard support on a day, which CUDA user space runs on which driver and which
driver each AMI family ships, whether an image can serve or train, which Kubernetes minors each part of the GPU
stack supports, which pins a stack uses and which have passed their vendor's end of support. The tables are facts
read upstream with their sources, like the pins, but they are what the checks decide by, not what Renovate bumps.
It lives in `manifests`, the lowest layer, because the manifest builders and the schema both use these rules.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable
from typing import Final

from gpuplane.manifests import versions, wellknown

# "Today" for every date rule comes from `today()`: tests and what-if runs set GPUPLANE_TODAY=YYYY-MM-DD.
TODAY_ENV: Final = "GPUPLANE_TODAY"


def today() -> datetime.date:
    """The date the version rules judge by: `GPUPLANE_TODAY` when set (tests pin it), else today in UTC."""
    pinned = os.environ.get(TODAY_ENV, "").strip()
    if pinned:
        try:
            return datetime.date.fromisoformat(pinned)
        except ValueError as exc:
            raise ValueError(
                f"{TODAY_ENV}='{pinned}' is not a date like 2026-11-24; allowed: YYYY-MM-DD, or unset it to judge "
                "by today's date"
            ) from exc
    return datetime.datetime.now(datetime.UTC).date()


def past_end_of_support(pin: versions.Pin, on: datetime.date | None = None) -> bool:
    """Whether the vendor's end of support or patch of `pin` is reached on `on` (default `today()`)."""
    if pin.end_of_support is None:
        return False
    return (on or today()) >= datetime.date.fromisoformat(pin.end_of_support)


# --- CUDA, drivers and TensorFlow builds ------------------------------------------------------------------
# NVIDIA driver major that each AMI family ships (what decides which CUDA user space runs there).
# AL2023 NVIDIA AMIs: the 580 branch for every supported Kubernetes version since late 2025
# (awslabs/amazon-eks-ami #2470, #2484, #2496; templates/al2023/variables-default.json
# `nvidia_driver_major_version: "580"`; AMI v20260714: 580.159.03). Bottlerocket NVIDIA variants: 580 too
# (bottlerocket-os/bottlerocket variants/aws-k8s-1.32-nvidia .. aws-k8s-1.36-nvidia/Cargo.toml include
# `kmod-<kernel>-nvidia-r580-tesla`; bottlerocket-kernel-kit #254, 2026-01-29: "All Bottlerocket AMIs are on
# 580"; read 2026-11-26). GFD's `nvidia.com/cuda.driver-version.major` label says what a node really runs.
AMI_DRIVER_MAJOR: Final[dict[str, int]] = {"al2023": 580, "bottlerocket": 580}
# Minimum driver major for each CUDA major's user space (CUDA compatibility docs: 12.x runs on >= 525.60.13
# through minor-version compatibility, 13.x needs >= 580). Re-checked 2026-11-26 for both AMI families:
# both ship 580, so every image here (CUDA 12.5 and 12.9) runs natively on either, and a CUDA 13 image too.
CUDA_MIN_DRIVER: Final[dict[int, int]] = {11: 450, 12: 525, 13: 580}
# What each TensorFlow release is built against: its PyPI `and-cuda` extra (nvidia-cuda-runtime-cu12 and
# nvidia-cudnn-cu12 lower bounds; tensorflow 2.20.0 and 2.21.0 METADATA: runtime >=12.5.82, cudnn >=9.3.0.75,
# read 2026-11-26) and the release .bazelrc (HERMETIC_CUDA_VERSION 12.5.1, HERMETIC_CUDNN_VERSION 9.3.0 from
# 2.18 on). 2.16/2.17: CUDA 12.3, cuDNN 8.9 (tensorflow.org/install/source "tested build configurations").
TENSORFLOW_BUILT_AGAINST: Final[dict[str, tuple[str, str]]] = {
    "2.16": ("12.3", "8.9"),
    "2.17": ("12.3", "8.9"),
    "2.18": ("12.5", "9.3"),
    "2.19": ("12.5", "9.3"),
    "2.20": ("12.5", "9.3"),
    "2.21": ("12.5", "9.3"),
}
# The official TensorFlow GPU wheels from 2.18 on build "sm_60,sm_70,sm_80,sm_89,compute_90" (.bazelrc,
# cuda_clang config; tensorflow/serving master .bazelrc of 2026-07-30 the same): 6.0 is the least GPU they run
# on, and GPUs newer than 8.9 JIT-compile the compute_90 PTX (hence CUDA_CACHE_PATH in the scratch space).
TF_GPU_MIN_COMPUTE_CAPABILITY: Final = 60


def _cuda_major(image: versions.TensorFlowImage) -> int:
    """The CUDA major of a default GPU image, which decides the driver its nodes need (`CUDA_MIN_DRIVER`)."""
    if image.cuda_major is None:
        raise ValueError(f"{image.image} is pinned as a GPU image but carries no CUDA")
    return image.cuda_major


# The CUDA major of the default GPU serving and training images: what their pods require of a node's driver.
TF_SERVING_GPU_CUDA_MAJOR: Final = _cuda_major(versions.TF_SERVING_GPU)
TENSORFLOW_GPU_CUDA_MAJOR: Final = _cuda_major(versions.TENSORFLOW_GPU)
# The release build is compiled with AVX (TensorFlow's release `.bazelrc` config), so CPU nodes need AVX;
# every x86 type in the catalog has AVX2.
TF_SERVING_CPU_FEATURES: Final = ("avx",)


# --- Add-ons by region ---------------------------------------------------------------------------------------
# Regions where an add-on is not offered, by region prefix. eksctl pkg/apis/eksctl.io/v1alpha5/
# known_addons.go (4c3ca02, 2025-10-24; unchanged at 99984ad, 2026-08-21) excludes metrics-server in
# cn-north-1, cn-northwest-1, us-gov-west-1, us-gov-east-1 and the ISO regions (which gpuplane refuses
# anyway: components/facts/partition.py). The AWS-managed add-ons are offered in every supported partition.
# `gpuplane preflight` asks DescribeAddonVersions for the live answer in the stack's region.
ADDON_UNAVAILABLE_REGION_PREFIXES: Final[dict[str, tuple[str, ...]]] = {
    wellknown.ADDON_METRICS_SERVER: ("cn-", "us-gov-", "us-iso", "eu-isoe-"),
}


# --- The GPU stack against a Kubernetes minor (what `gpuplane preflight` checks before an upgrade) --------------
# part -> (oldest minor, newest minor, source); "" where upstream publishes no bound. A target outside the range
# warns (newest) or fails (oldest); the autoscaler's image per minor is `versions.CLUSTER_AUTOSCALER_IMAGE_PINS`.
GPU_STACK_KUBERNETES: Final[dict[str, tuple[str, str, str]]] = {
    "nvidia-driver": (
        "1.32",
        "1.36",
        "the 580 branch in the AL2023 NVIDIA AMIs and Bottlerocket's aws-k8s-1.32-nvidia .. aws-k8s-1.36-nvidia "
        "variants (AMI_DRIVER_MAJOR, read 2026-11-26)",
    ),
    "nvidia-device-plugin": (
        "",
        "",
        "NVIDIA publishes no Kubernetes range for the standalone chart; it uses the kubelet's device plugin API "
        "v1beta1, stable since 1.10",
    ),
    "gpu-operator": (
        "1.33",
        "1.36",
        "NVIDIA's GPU Operator platform-support page for v26.7.0, 'Cloud Service Providers', Amazon EKS column: "
        "1.33 to 1.36 for every OS it lists (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/"
        "platform-support.html; source NVIDIA/cloud-native-docs gpu-operator/platform-support.rst at main 52dcb7b, "
        "2026-08-21, whose component matrix and release notes are v26.7.0's; 1.36 added in 26.3.2), read "
        "2026-11-29",
    ),
    "kueue": ("1.29", "", "Kueue README at v0.19.2: 'Requires Kubernetes 1.29 or newer'"),
    "jobset": (
        "1.33",
        "1.36",
        "JobSet README at tag v0.12.0 (f22e565, 2026-05-08; github.com/kubernetes-sigs/jobset): 'Requires a "
        "Kubernetes cluster running one of the last 3 Kubernetes minor versions', 1.34 to 1.36 at the release, "
        "which builds against the 1.36 libraries (CHANGELOG-0.12: Kubernetes dependencies 0.36.0); its release-0.12 "
        "E2E lanes run 1.33, 1.34 and 1.35 (kubernetes/test-infra config/jobs/kubernetes-sigs/jobset/"
        "jobset-presubmit-release-0-12.yaml, 3039433): from the oldest tested to the newest claimed, read 2026-11-29",
    ),
}

# --- What the training queue, EFA and the program need of the tools around them -----------------------------
# Images whose ProvisioningRequest client speaks JSON (a CRD has no protobuf encoding; without it the autoscaler
# cannot write the Accepted condition and never scales up: autoscaler issue #8855). Read in git at each tag
# (`restConfig.ContentType = "application/json"` in cluster-autoscaler/main.go or builder/clients.go): present in
# 1.33.6, 1.34.5, 1.35.2 (cherry-picks #10014-#10016, 2026-07-21/22) and 1.36.0+; absent in 1.32.7 (the last 1.32
# patch, 2026-02-13), 1.33.5, 1.34.4, 1.35.0 and 1.35.1. The oldest fixed patch per minor:
PROVISIONING_REQUEST_FIXED: Final[dict[str, str]] = {
    "1.33": "v1.33.6",
    "1.34": "v1.34.5",
    "1.35": "v1.35.2",
    "1.36": "v1.36.0",
}

# Oldest Pulumi CLI with resource hooks and delete hooks on `pulumi destroy --run-program` (Pulumi release
# notes 3.182.0; pulumi #19933). Also `requiredPulumiVersion` in Pulumi.yaml.
PULUMI_CLI_MIN_VERSION: Final = "3.182.0"


def standard_support_end(version: str) -> datetime.date:
    """The first day a version is billed as extended support (EKS bills from the start of that day, UTC)."""
    return datetime.date.fromisoformat(versions.KUBERNETES_VERSIONS[version][1])


def in_standard_support(version: str, on: datetime.date | None = None) -> bool:
    """Whether `version` is still in standard support on `on` (default: `today()`)."""
    return (on or today()) < standard_support_end(version)


def newest_in_standard_support(on: datetime.date | None = None) -> str | None:
    """The newest version EKS offers in standard support on `on` (default: `today()`)."""
    offered = [
        v
        for v, (released, _, _) in versions.KUBERNETES_VERSIONS.items()
        if datetime.date.fromisoformat(released) <= (on or today()) and in_standard_support(v, on)
    ]
    return max(offered, key=lambda v: tuple(int(p) for p in v.split(".")), default=None)


def supported_version_advice(on: datetime.date | None = None) -> str:
    """What to move to on `on`: the newest version in standard support, or, when none of the table is, what to do.

    Every message that refuses or warns about a Kubernetes version ends with this, so none of them can name a
    version that has itself left standard support.
    """
    day = on or today()
    newest = newest_in_standard_support(day)
    if newest is not None:
        return f"use {newest}, the newest version in standard support"
    table = versions.KUBERNETES_VERSIONS
    last = max(table, key=lambda v: tuple(int(p) for p in v.split(".")))
    return (
        f"no version this gpuplane knows ({', '.join(table)}) is in EKS standard support on {day} "
        f"(the newest, {last}, left it on {table[last][1]}): move to a newer gpuplane, whose table "
        "lists the versions EKS offers now (`aws eks describe-cluster-versions` lists them too)"
    )


def tf_minor(version: str) -> tuple[int, int]:
    """`2.20.0` -> (2, 20): TensorFlow's compatibility promise is per minor release."""
    parts = version.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise ValueError(f"'{version}' is not a TensorFlow version like 2.20.0")
    return int(parts[0]), int(parts[1])


def _at_least(have: str, need: str) -> bool:
    """`have` is the same major and at least the minor of `need` (CUDA and cuDNN are compatible that way)."""
    h, n = tf_minor(have), tf_minor(need)
    return h[0] == n[0] and h[1] >= n[1]


def image_problems(image: versions.TensorFlowImage, role: str) -> list[str]:
    """Why `image` cannot do `role` ("serving", "training", "training-gpu", "tensorboard"); [] when it can."""
    problems = []
    if role == "serving" and "tensorflow_model_server" not in image.commands:
        problems.append(f"{image.image} has no tensorflow_model_server")
    if role in ("training", "training-gpu") and "python3" not in image.commands:
        problems.append(f"{image.image} has no python3")
    if role == "tensorboard" and "tensorboard" not in image.commands:
        problems.append(f"{image.image} has no tensorboard command")
    if role == "training-gpu" or (role == "serving" and image.gpu):
        built = TENSORFLOW_BUILT_AGAINST.get(".".join(map(str, tf_minor(image.tensorflow))))
        if not image.gpu or image.cudnn is None:
            problems.append(f"{image.image} has no CUDA user space")
        elif built is None:
            problems.append(f"{image.image}: TensorFlow {image.tensorflow} has no known CUDA/cuDNN build facts")
        elif not (_at_least(image.cuda or "", built[0]) and _at_least(image.cudnn, built[1])):
            problems.append(
                f"{image.image} carries CUDA {image.cuda} / cuDNN {image.cudnn}, but TensorFlow "
                f"{image.tensorflow} is built against CUDA {built[0]} / cuDNN {built[1]}: it would find no GPU"
            )
    return problems


def serving_loads(serving_tf: str, training_tf: str) -> bool:
    """A SavedModel exported by TensorFlow `training_tf` is promised to load in a `serving_tf` server."""
    return tf_minor(serving_tf) >= tf_minor(training_tf)


def addon_offered(addon: str, region: str) -> bool:
    """Whether EKS offers `addon` in `region`, by `ADDON_UNAVAILABLE_REGION_PREFIXES`."""
    return not region.startswith(ADDON_UNAVAILABLE_REGION_PREFIXES.get(addon, ()))


# How a release pinned by its git tag shows in a render: the chart that follows the tag, at its version.
_CHART_OF_TAG: Final[dict[str, tuple[str, str]]] = {
    versions.JOBSET.name: (wellknown.JOBSET_CHART, versions.JOBSET_VERSION),
    versions.KUEUE.name: (wellknown.KUEUE_CHART, versions.KUEUE_VERSION),
}


def pins_in_use(images: Iterable[str], charts: Iterable[tuple[str, str]]) -> list[versions.Pin]:
    """The pins a stack uses: the images its objects run and the (chart, version) of its Helm releases.

    A workload that names its own image uses no pin, and so gets no warning about ours.
    """
    image_set, chart_set = set(images), set(charts)
    used = []
    for pin in versions.PINS:
        if pin.datasource == "docker":
            hit = pin.reference in image_set
        elif pin.datasource == "helm":
            hit = (pin.package, pin.version) in chart_set
        else:
            hit = _CHART_OF_TAG.get(pin.name) in chart_set
        if hit:
            used.append(pin)
    return used


# The defaults a stack can replace with an image of its own, and the key that does it: for any other pin (a chart,
# an add-on's image) the only way to a supported version is a newer gpuplane, and a warning must not suggest more.
OWN_IMAGE_KEY: Final[dict[str, str]] = {
    "tensorflow-serving": "serving[].variants[].image",
    "tensorflow-serving-gpu": "serving[].variants[].image",
    "tensorflow": "training[].image",
    "tensorflow-training-gpu": "training[].image",
}


def what_to_do(pin: versions.Pin) -> str:
    """What a user can do about `pin` once it has aged: a newer gpuplane, and their own image where a key allows."""
    key = OWN_IMAGE_KEY.get(pin.name)
    return "move to a newer gpuplane" + (f", or name a supported image yourself ({key})" if key else "")


def end_of_support_warnings(pins: Iterable[versions.Pin], on: datetime.date | None = None) -> list[str]:
    """One line per pin past its vendor's end of support or patch on `on` (default `today()`).

    A date gpuplane estimated from the vendor's release policy (no date published) is worded as what it is: the
    release may get no more patches, and the vendor's own releases say whether it still does.
    """
    day = on or today()
    return [
        (
            f"{pin.reference} ({pin.name}) is past its estimated end of support, {pin.end_of_support} (estimated "
            f"from the vendor policy; today is {day}): it may get no more security patches; see the vendor's "
            f"releases, or {what_to_do(pin)}"
            if pin.estimated
            else f"{pin.reference} ({pin.name}) is past its end of support since {pin.end_of_support} (today is "
            f"{day}): no security patches; {what_to_do(pin)}"
        )
        for pin in pins
        if past_end_of_support(pin, day)
    ]
