"""Every pinned upstream release of gpuplane, in one place: data, with its source and the day it was read.

Why one module: versions drift, and a pin that is spread over several files gets bumped in one and forgotten in
another. It holds pins only: each default image and chart as a `Pin` (TensorFlow images as a `TensorFlowImage`,
which adds what is inside the image), the strings derived from them (`*_VERSION`, `*_IMAGE`, ...), and the EKS
Kubernetes version calendar with its default; a test (tests/manifests/test_versions_module.py) fails on anything
else defined here. Renovate's regex managers (renovate.json) read this file. What the pins mean over time and
together (support windows, `today()`, CUDA and driver compatibility) is in `manifests/lifecycle.py`; the names and
numbers the platform's objects agree on (labels, taints, namespaces, ports, policy ARNs) in
`manifests/wellknown.py`; the service prices in `components/facts/prices.py`. It lives in `manifests`, the lowest
layer, because the Kubernetes builders use the pins too.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import ClassVar, Final

# --- Kubernetes on EKS -----------------------------------------------------------------------------
# EKS version lifecycle (EKS user guide "kubernetes-versions", release calendar): standard support is 14
# months from the EKS release, extended support 12 more at $0.60 per cluster hour instead of $0.10. Dates
# for 1.32-1.35 from that calendar (checked 2026-11; endoflife.date/amazon-eks agrees). 1.36: the EKS user
# guide's "kubernetes-versions-standard" page lists "Kubernetes 1.36 is now available in Amazon EKS"
# (checked 2026-11-24); its release calendar row was not readable from here, so its dates are the EKS
# release of 2026-06-02 with standard support to 2027-08-02 as quoted from that calendar by devopsdreams
# (2026-08-16), which is the 14 + 12 month rule applied to 2026-06-02. `aws eks describe-cluster-versions`
# (`gpuplane preflight`) gives the live dates. Upstream 1.37 (2026-08-26) is not offered by EKS as seen here.
# Values: (EKS release, end of standard support, end of extended support), ISO dates, UTC.
KUBERNETES_VERSIONS: Final[dict[str, tuple[str, str, str]]] = {
    "1.32": ("2025-01-23", "2026-03-23", "2027-03-23"),
    "1.33": ("2025-05-29", "2026-07-29", "2027-07-29"),
    "1.34": ("2025-10-02", "2026-12-02", "2027-12-02"),
    "1.35": ("2026-01-27", "2027-03-27", "2028-03-27"),
    "1.36": ("2026-06-02", "2027-08-02", "2028-08-02"),
}
# The newest version in standard support when this pin was set (2026-11-24); a test checks the rule on
# that day, so the suite's verdict does not move with the calendar.
DEFAULT_KUBERNETES_VERSION: Final = "1.36"


# --- Dated pins: what ages, and what Renovate watches ------------------------------------------------
# Every image and chart that gpuplane installs by default is a `Pin`: its release date, the vendor's end of
# support or patch where one is published, and what was read to choose it. `gpuplane render` and
# `gpuplane preflight` warn when a default the stack uses is past its end of support (`lifecycle.py`), and a
# test fails on the real calendar (tests/manifests/test_pins.py), so an aged default is noticed without
# anyone re-reading upstream by hand. renovate.json's regex managers find each pin by the first four
# fields below, written in this order on their own lines (`datasource`, `name`, `package`, `version`, then
# `registry` for Helm charts): keep that layout, or the Renovate test fails.


@dataclass(frozen=True)
class Pin:
    """One upstream release gpuplane uses by default, with the dates that say when it ages."""

    DATASOURCES: ClassVar[tuple[str, ...]] = ("helm", "docker", "github-tags")
    """Renovate datasources of the pins: Helm chart repositories, container registries, GitHub release tags."""

    datasource: str
    """Where Renovate looks for newer releases: one of DATASOURCES."""
    name: str
    """Our name for the pin (unique; Renovate's depName, which its package rules group by)."""
    package: str
    """Chart name (helm), image repository (docker) or owner/repo (github-tags)."""
    version: str
    """The pinned chart version, image tag or git tag."""
    registry: str | None = None
    """The Helm repository URL (helm only)."""
    released: str = ""
    """Release date of this version (ISO), as read from its tag, chart index or registry."""
    end_of_support: str | None = None
    """The vendor's published end of support or patch (ISO; first day past it), None when none is published."""
    source: str = ""
    """What was read, where (repository, file, tag or commit)."""
    read: str = ""
    """The day `source` was read upstream (ISO); required."""
    support: str = ""
    """The vendor's support policy for this release and where it is published; `None published: ...` when none is."""
    estimated: bool = False
    """True when `end_of_support` follows from a published policy and release cadence, not from a published date."""
    newer: str = ""
    """Newer releases known upstream that could not be read here at their tag (and so were not taken), and why."""

    def __post_init__(self) -> None:
        if self.datasource not in self.DATASOURCES:
            raise ValueError(f"pin '{self.name}': datasource '{self.datasource}' is not one of {self.DATASOURCES}")
        if (self.datasource == "helm") != (self.registry is not None):
            raise ValueError(f"pin '{self.name}': a registry is needed by Helm charts and only by them")
        # `released` is required (its default only lets it follow `registry`); `end_of_support` is optional.
        dates = {
            "released": self.released,
            "end_of_support": self.end_of_support or self.released,
            "read": self.read,
        }
        for key, value in dates.items():
            try:
                datetime.date.fromisoformat(value)
            except ValueError as exc:
                raise ValueError(f"pin '{self.name}': {key} '{value}' is not a date like 2026-11-26") from exc
        if not self.support or (self.end_of_support is None) != self.support.startswith("None published"):
            raise ValueError(
                f"pin '{self.name}': support must state the vendor's policy with its source, and start with "
                "'None published' exactly when end_of_support is None"
            )
        if self.estimated and self.end_of_support is None:
            raise ValueError(f"pin '{self.name}': an estimated end of support needs end_of_support")

    @property
    def helm_repository(self) -> str:
        """The Helm repository URL of a chart pin."""
        if self.registry is None:
            raise ValueError(f"pin '{self.name}' is a {self.datasource} pin, not a Helm chart")
        return self.registry

    @property
    def reference(self) -> str:
        """`repository:tag` for an image; `chart@version` for a chart; `owner/repo@tag` for a git tag."""
        return f"{self.package}:{self.version}" if self.datasource == "docker" else f"{self.package}@{self.version}"


# --- NVIDIA GPU stack (NVIDIA k8s-device-plugin and GPU Operator docs) ----------------------------
DEVICE_PLUGIN: Final = Pin(
    datasource="helm",
    name="nvidia-device-plugin",
    package="nvidia-device-plugin",
    version="0.20.1",
    registry="https://nvidia.github.io/k8s-device-plugin",
    released="2026-09-22",
    source="NVIDIA/k8s-device-plugin PR #2057 'update k8s-device-plugin to 0.20.1', merged 2026-09-22 and "
    "cherry-picked to release-0.20; chart pulled from this repository with --version 0.20.1 by users (2026-10). "
    "The 0.20.1 tag and index entry are newer than the stored copy (gh-pages ends 2026-08-20), so the values "
    "were checked against chart 0.20.0 (tag v0.20.0 1b826ac, 2026-08-19; deployments/helm/nvidia-device-plugin/"
    "values.yaml): a patch release.",
    read="2026-11-28",
    support="None published: NVIDIA publishes no support window for the standalone chart (the GPU Operator's "
    "component matrix lists the device plugin each operator release ships, not an end date).",
    newer="No release after 0.20.1 seen; the stored copy of NVIDIA/k8s-device-plugin ends 2026-08-21 (newest tag "
    "v0.20.0, gh-pages 2026-08-20).",
)
GPU_OPERATOR: Final = Pin(
    datasource="helm",
    name="gpu-operator",
    package="gpu-operator",
    version="v26.7.0",
    registry="https://helm.ngc.nvidia.com/nvidia",
    released="2026-08-20",
    source="NVIDIA/gpu-operator tag v26.7.0 (10ee5b3, 2026-08-20): deployments/gpu-operator/values.yaml and "
    "templates read at the tag (new default dcgmExporter.serviceMonitor.enabled: true; clusterPolicy.deployCR "
    "true, gpuCluster (DRA) off; NFD subchart 0.19.0).",
    read="2026-11-28",
    end_of_support="2027-06-12",
    estimated=True,
    support="NVIDIA's GPU Operator platform-support page (cloud-native-docs gpu-operator/latest, 'Life Cycle'): "
    "26.7.x Supported, 26.3.x Deprecated, 25.10.x and lower End of Support; a new major makes the previous one "
    "deprecated (critical bug and CVE fixes only) and ends support for all older ones, so 26.7.x ends with the "
    "second major after it. No date is published: estimated as two majors at the shortest recent interval between "
    "majors (v25.10.0 2025-10-22 to v26.3.0 2026-03-19: 148 days) after v26.7.0.",
    newer="v26.7.1 exists (Chainguard's gpu-operator-26.7 package is fixed in 26.7.1-r1, osv.dev CGA-gg9m-fvrp-gfxc, "
    "2026-10-09), but its tag is not in the stored copy of NVIDIA/gpu-operator (tags end at v26.7.0; mirror "
    "2026-08-23), so its values and CRDs cannot be read: a dot release of the same major, taken when readable.",
)
DEVICE_PLUGIN_CHART: Final = DEVICE_PLUGIN.package
DEVICE_PLUGIN_REPO: Final = DEVICE_PLUGIN.helm_repository
DEVICE_PLUGIN_VERSION: Final = DEVICE_PLUGIN.version
GPU_OPERATOR_CHART: Final = GPU_OPERATOR.package
GPU_OPERATOR_REPO: Final = GPU_OPERATOR.helm_repository
GPU_OPERATOR_VERSION: Final = GPU_OPERATOR.version
DCGM_EXPORTER: Final = Pin(
    datasource="helm",
    name="dcgm-exporter",
    package="dcgm-exporter",
    version="4.8.2",
    registry="https://nvidia.github.io/dcgm-exporter/helm-charts",
    released="2026-05-05",
    source="NVIDIA/dcgm-exporter gh-pages helm-charts/index.yaml (ecd340d, 2026-05-05): chart 4.8.2, appVersion "
    "4.8.2, created 2026-05-05, the newest entry; tag 4.5.3-4.8.2 deployment/values.yaml (image "
    "4.5.3-4.8.2-distroless; serviceMonitor.enabled true by default).",
    read="2026-11-28",
    support="None published: NVIDIA publishes no support window for the standalone dcgm-exporter chart.",
    newer="Charts 4.8.3 and later exist (release data read 2026-11), but the stored copy of NVIDIA/dcgm-exporter ends "
    "with tag 4.5.3-4.8.2 and gh-pages ecd340d (2026-05-05), so they cannot be read. Even when readable: 4.9.0 renames "
    "metrics and changes their units, and main after 4.8.2 (d5e5f51, #655) renames the `Hostname` label to "
    "`hostname`; the alert rules and dashboards name the 4.8 metrics, so the exporter stays on the last compatible "
    "chart until they read both spellings.",
)
DCGM_EXPORTER_CHART: Final = DCGM_EXPORTER.package
DCGM_EXPORTER_REPO: Final = DCGM_EXPORTER.helm_repository
DCGM_EXPORTER_VERSION: Final = DCGM_EXPORTER.version


# --- cluster-autoscaler (kubernetes/autoscaler charts) ---------------------------------------------
CLUSTER_AUTOSCALER: Final = Pin(
    datasource="helm",
    name="cluster-autoscaler-chart",
    package="cluster-autoscaler",
    version="9.59.0",
    registry="https://kubernetes.github.io/autoscaler",
    released="2026-07-21",
    source="kubernetes/autoscaler tag cluster-autoscaler-chart-9.59.0 (5a0b98e, 2026-07-21), appVersion 1.35.0; "
    "still the newest chart tag in the mirror of 2026-08-22 (master's Chart.yaml: 9.59.0).",
    read="2026-11-28",
    support="None published: the chart follows the autoscaler's releases and carries no support window of its own.",
)
CLUSTER_AUTOSCALER_CHART: Final = CLUSTER_AUTOSCALER.package
CLUSTER_AUTOSCALER_REPO: Final = CLUSTER_AUTOSCALER.helm_repository
CLUSTER_AUTOSCALER_VERSION: Final = CLUSTER_AUTOSCALER.version


# The autoscaler's minor must match the cluster's: per minor, the newest patch tag of kubernetes/autoscaler
# (`cluster-autoscaler-<v>` tags; Renovate keeps each pin within its minor). 1.35.2+ and 1.36.1+ carry the
# ProvisioningRequest fix (autoscaler #8855) that the queue (Kueue) needs. An autoscaler minor follows its
# Kubernetes minor, whose EKS dates are KUBERNETES_VERSIONS.
_AUTOSCALER_SUPPORT: Final = (
    "None published: an autoscaler minor follows its Kubernetes minor, whose EKS dates are KUBERNETES_VERSIONS "
    "(the support-window rule of the cluster config refuses a version past them)."
)
CLUSTER_AUTOSCALER_IMAGE_PINS: Final[dict[str, Pin]] = {
    "1.32": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.32",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.32.7",
        released="2026-02-13",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source="kubernetes/autoscaler tag cluster-autoscaler-<version> (f645beb, 2026-02-13), the newest patch of its "
        "minor in the mirror of 2026-08-22.",
    ),
    "1.33": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.33",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.33.6",
        released="2026-07-22",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source="kubernetes/autoscaler tag cluster-autoscaler-<version> (be4b5a1, 2026-07-22), the newest patch of its "
        "minor in the mirror of 2026-08-22.",
    ),
    "1.34": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.34",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.34.5",
        released="2026-07-22",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source="kubernetes/autoscaler tag cluster-autoscaler-<version> (cb2123e, 2026-07-22), the newest patch of its "
        "minor in the mirror of 2026-08-22.",
    ),
    "1.35": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.35",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.35.2",
        released="2026-07-22",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source="kubernetes/autoscaler tag cluster-autoscaler-<version> (2d42588, 2026-07-22), the newest patch of its "
        "minor in the mirror of 2026-08-22.",
    ),
    "1.36": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.36",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.36.1",
        released="2026-07-22",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source="kubernetes/autoscaler tag cluster-autoscaler-<version> (35e8a28, 2026-07-22), the newest patch of its "
        "minor in the mirror of 2026-08-22.",
    ),
}
CLUSTER_AUTOSCALER_IMAGES: Final[dict[str, str]] = {m: p.version for m, p in CLUSTER_AUTOSCALER_IMAGE_PINS.items()}
# Every minor's image is one repository (tests/test_renovate.py holds Renovate's patch-only rule to it).
CLUSTER_AUTOSCALER_IMAGE_REPOSITORY: Final = CLUSTER_AUTOSCALER_IMAGE_PINS[DEFAULT_KUBERNETES_VERSION].package


# --- TensorFlow workloads (docs/workloads.md, "Images") -----------------------------------------------
# One TensorFlow line for the platform: 2.21, decided again on 2026-11-26 (docs/workloads.md, "Images"): the
# newest line where serving (CPU and GPU), CPU training, GPU training and the compare client all exist with
# matching libraries and no default image is past its vendor's end of patch. TensorFlow only promises that a
# SavedModel loads in the same or a newer runtime, so serving must be at least every training image's
# TensorFlow; rules in `image_problems` and tests/manifests/test_images.py. What was read (2026-11-26):
# - PyPI: tensorflow 2.21.0 (wheels uploaded 2026-03-06, Python 3.10-3.13, manylinux_2_27; METADATA: no
#   tensorboard dependency, `and-cuda` extra nvidia-cuda-runtime-cu12 >=12.5.82, nvidia-cudnn-cu12 >=9.3.0.75);
#   tensorflow-serving-api 2.21.0 (uploaded 2026-09-29; requires tensorflow >=2.21.0,<3): TF Serving 2.21.0.
# - tensorflow/serving: the stored copy ends 2026-07-30 (master 9d981c5), before the 2.21.0 tag. Master's
#   Dockerfile.gpu (unchanged since ecb468f, 2026-04-06) is FROM nvidia/cuda:12.5.1-base-ubuntu22.04 with
#   CUDNN_VERSION 9.3.0.75 / libcudnn9-cuda-12, and Dockerfile FROM ubuntu:22.04; .bazelrc builds
#   sm_60,sm_70,sm_80,sm_89,compute_90. The 2.21.0 images' facts are INFERRED from master, not read at the tag:
#   the GPU self-check (exit 3 naming the cause) and `gpuplane verify` confirm them on a cluster.
# - aws/deep-learning-containers (mirror of 2026-08-21): the 2.21 GPU training DLC is built from
#   docker/tensorflow/2.21/Dockerfile.cuda (target sagemaker; bd790b3, 2026-07-09; lock bumped to cuDNN 9.24.0.43
#   by #6418, 2026-07-17, and patched since: #6556 2026-08-13, #6577 2026-08-18).
# - No 2.20 training DLC exists (2.20 is inference only), and the 2.19 one (`...:2.19.0-gpu-py312-cu125-
#   ubuntu22.04-sagemaker`) is past its end of patch (2026-03-11, docs/src/data/tensorflow-training/
#   2.19-gpu-sagemaker.yml): the 2.20 line could only keep it, so the line moved to 2.21.


@dataclass(frozen=True)
class TensorFlowImage:
    """What is inside one container image, read from its build files (never assumed from its tag)."""

    pin: Pin
    """The image: repository, tag, release date, end of patch and what was read."""
    tensorflow: str
    """TensorFlow in the image (for tensorflow/serving: the TF core the server is built from)."""
    commands: tuple[str, ...]
    """Commands on PATH that roles rely on (`tensorflow_model_server`, `tensorboard`, `python3`)."""
    user: str
    """The image's USER; gpuplane runs every workload as the storage uid anyway."""
    cuda: str | None = None
    """CUDA user space in the image (major.minor[.patch]); None for a CPU image."""
    cudnn: str | None = None
    min_compute_capability: int | None = None
    """Least GPU compute capability (major*10+minor) its kernels are built for; None for a CPU image."""
    entrypoint: str = ""
    """The image's ENTRYPOINT, which our `command` replaces (the runtime helper execs the real command)."""
    inferred: bool = False
    """True when the facts come from the build files before the tag, not at the tag (say so in the docs)."""

    @property
    def image(self) -> str:
        """The image reference, `repository:tag`."""
        return self.pin.reference

    @property
    def source(self) -> str:
        """Where the facts were read (the pin's source)."""
        return self.pin.source

    @property
    def gpu(self) -> bool:
        """A GPU image: it carries CUDA user space."""
        return self.cuda is not None

    @property
    def cuda_major(self) -> int | None:
        """12 for CUDA 12.x: what decides the driver it needs (`lifecycle.CUDA_MIN_DRIVER`)."""
        return int(self.cuda.split(".")[0]) if self.cuda else None


_UBUNTU_2204_SUPPORT: Final = (
    "Ubuntu 22.04 LTS, the image's base, leaves standard support at the end of May 2027 (ubuntu.com/about/"
    "release-cycle, as cited by containerbase/base#6611; endoflife.date copies give April 2027): no more security "
    "updates for its packages without Ubuntu Pro, which the image does not carry; 2027-06-01 is the first day past "
    "it. TensorFlow itself publishes no end of support for a release."
)
_TF_SERVING_NEWER: Final = (
    "The 2.21.0 tag is not in the stored copy of tensorflow/serving (tags end at 2.20.0; master 2026-07-30), which is "
    "why the image facts are inferred; no later serving release seen."
)

TF_SERVING_CPU: Final = TensorFlowImage(
    pin=Pin(
        datasource="docker",
        name="tensorflow-serving",
        package="tensorflow/serving",
        version="2.21.0",
        released="2026-09-29",
        source="tensorflow-serving-api 2.21.0 on PyPI (uploaded 2026-09-29, requires tensorflow>=2.21.0): the TF "
        "Serving 2.21.0 release. Image facts INFERRED from tensorflow/serving master of 2026-07-30 (9d981c5; "
        "tag 2.21.0 not in the stored copy): tensorflow_serving/tools/docker/Dockerfile FROM ubuntu:22.04, "
        "/usr/bin/tensorflow_model_server, no USER line.",
        read="2026-11-28",
        end_of_support="2027-06-01",
        support=_UBUNTU_2204_SUPPORT,
        newer=_TF_SERVING_NEWER,
    ),
    tensorflow="2.21.0",
    commands=("tensorflow_model_server",),
    user="root (no USER line)",
    entrypoint="/usr/bin/tf_serving_entrypoint.sh",
    inferred=True,
)
TF_SERVING_GPU: Final = TensorFlowImage(
    pin=Pin(
        datasource="docker",
        name="tensorflow-serving-gpu",
        package="tensorflow/serving",
        version="2.21.0-gpu",
        released="2026-09-29",
        source="TF Serving 2.21.0 (tensorflow-serving-api 2.21.0 on PyPI, 2026-09-29). Image facts INFERRED from "
        "tensorflow/serving master of 2026-07-30 (Dockerfile.gpu unchanged since ecb468f, 2026-04-06): FROM "
        "nvidia/cuda:12.5.1-base-ubuntu22.04, CUDNN_VERSION 9.3.0.75 (libcudnn9-cuda-12), cuda-compat-12-5; "
        ".bazelrc sm_60,sm_70,sm_80,sm_89,compute_90.",
        read="2026-11-28",
        end_of_support="2027-06-01",
        support=_UBUNTU_2204_SUPPORT,
        newer=_TF_SERVING_NEWER,
    ),
    tensorflow="2.21.0",
    commands=("tensorflow_model_server",),
    user="root (no USER line)",
    cuda="12.5.1",
    cudnn="9.3",
    min_compute_capability=60,
    entrypoint="/usr/bin/tf_serving_entrypoint.sh",
    inferred=True,
)
# CPU training and the compare client. tensorflow/build tensorflow_runtime_dockerfiles/cpu.Dockerfile (a65b114,
# 2023-07-13; the folder's last change 40dbd9d, 2024-12-10, adds the deadsnakes PPA; used for every release
# tag): ubuntu:22.04, python3.11 (TF 2.21 has cp311 wheels), `pip install tensorflow==<v>`; cpu.requirements.txt
# is empty. TF 2.21 dropped its tensorboard dependency, so this image has no `tensorboard` command.
TENSORFLOW_CPU: Final = TensorFlowImage(
    pin=Pin(
        datasource="docker",
        name="tensorflow",
        package="tensorflow/tensorflow",
        version="2.21.0",
        released="2026-03-06",
        source="tensorflow/build tensorflow_runtime_dockerfiles/cpu.Dockerfile (a65b114, 2023-07-13; folder last "
        "changed 40dbd9d, 2024-12-10) with tensorflow==2.21.0 (PyPI, 2026-03-06; METADATA has no tensorboard "
        "dependency): FROM ubuntu:22.04.",
        read="2026-11-28",
        end_of_support="2027-06-01",
        support=_UBUNTU_2204_SUPPORT,
        newer="No TensorFlow release after 2.21.0 seen on PyPI (tensorflow 2.21.0, 2026-03-06).",
    ),
    tensorflow="2.21.0",
    commands=("python3",),
    user="root (no USER line)",
)
# TensorBoard. A TensorBoard reads the event files of any TensorFlow line, and TF 2.21 images ship none, so it
# keeps the 2.20 CPU image, whose TensorFlow requires `tensorboard~=2.20.0` (tensorflow 2.20.0 wheel METADATA).
# Renovate keeps it on 2.20 (renovate.json); it is no training image, so the serving >= training rule ignores it.
TENSORBOARD: Final = TensorFlowImage(
    pin=Pin(
        datasource="docker",
        name="tensorboard",
        package="tensorflow/tensorflow",
        version="2.20.0",
        released="2025-08-13",
        source="tensorflow/build tensorflow_runtime_dockerfiles/cpu.Dockerfile (a65b114, 2023-07-13) with "
        "tensorflow==2.20.0 (PyPI, 2025-08-13), whose METADATA requires tensorboard~=2.20.0 (tensorboard 2.20.0 "
        "on PyPI, 2025-07-17): FROM ubuntu:22.04.",
        read="2026-11-28",
        end_of_support="2027-06-01",
        support=_UBUNTU_2204_SUPPORT,
        newer="Kept on the 2.20 line on purpose: TensorFlow 2.21 images have no tensorboard command.",
    ),
    tensorflow="2.20.0",
    commands=("python3", "tensorboard"),
    user="root (no USER line)",
)
# GPU training. The official `tensorflow/tensorflow:2.18.0-gpu` .. `2.21.0-gpu` images are built from
# tensorflow/build gpu.Dockerfile (fdd023e, unchanged since 2023-11-20): nvidia/cuda:12.3.0-base + libcudnn8
# 8.9.6.50, which TF >= 2.18 (CUDA 12.5, cuDNN 9.3) cannot use: TensorFlow finds no GPU (tensorflow/build
# #221). AWS's TF 2.21 Deep Learning Container matches its TensorFlow (CUDA 12.9.1 >= 12.5, cuDNN 9.24 >= 9.3)
# and is patched to 2027-07-10. It is published for SageMaker only ("We only build sm image for tensorflow",
# PR #4789); on EKS: our `command` replaces its ENTRYPOINT (`bash -m /usr/local/bin/entrypoint.sh`: telemetry,
# then the CUDA forward-compat shim, which the 580 driver does not need for CUDA 12.9), and it runs as our uid
# under Pod Security `restricted` (no USER line; /opt/venv is root-owned and world-readable). It ships no
# `tensorboard` (the lock file has none). Every role of a run that has GPUs uses this one image, the CPU roles
# (ps) included, so the tasks of one run never mix TensorFlow versions (docs/workloads.md).
TENSORFLOW_GPU: Final = TensorFlowImage(
    pin=Pin(
        datasource="docker",
        name="tensorflow-training-gpu",
        package="public.ecr.aws/deep-learning-containers/tensorflow-training",
        version="2.21.0-gpu-py312-cu129-amzn2023-sagemaker",
        released="2026-07-10",
        end_of_support="2027-07-10",
        source="aws/deep-learning-containers (mirror of 2026-08-21): docs/src/data/tensorflow-training/"
        "2.21-gpu-sagemaker.yml (584c677, 2026-07-10): public, ga 2026-07-10, eop 2027-07-10; "
        "docker/tensorflow/2.21/Dockerfile.cuda (bd790b3, 2026-07-09): FROM nvidia/cuda:12.9.1-runtime-amzn2023, "
        "Python 3.12 venv /opt/venv on PATH, TF 2.21.0, cuDNN from nvidia-cudnn-cu12 (uv.lock 9.24.0.43 since #6418, "
        "2026-07-17), NCCL 2.30.7, EFA 1.49.0, no USER line, ENTRYPOINT bash -m /usr/local/bin/entrypoint.sh; "
        ".github/config/image/tensorflow/2.21-sagemaker-cuda.yml: cuda_version 12.9.1. Still the newest TensorFlow "
        "training image there (e0eceda, 2026-08-21; its 2.21 build files patched since: #6556, #6577, same tag).",
        read="2026-11-28",
        support="AWS Deep Learning Containers support policy: each image lists its end of patch (`eop`) in "
        "docs/src/data/tensorflow-training/2.21-gpu-sagemaker.yml: 2027-07-10.",
    ),
    tensorflow="2.21.0",
    commands=("python3",),
    user="root (no USER line)",
    cuda="12.9.1",
    cudnn="9.24",
    min_compute_capability=60,
    entrypoint="bash -m /usr/local/bin/entrypoint.sh",
)
TENSORFLOW_IMAGES: Final = (TF_SERVING_CPU, TF_SERVING_GPU, TENSORFLOW_CPU, TENSORBOARD, TENSORFLOW_GPU)

TF_SERVING_IMAGE: Final = TF_SERVING_CPU.image
TF_SERVING_GPU_IMAGE: Final = TF_SERVING_GPU.image
TENSORFLOW_IMAGE: Final = TENSORFLOW_CPU.image
TENSORFLOW_GPU_IMAGE: Final = TENSORFLOW_GPU.image
TENSORFLOW_CPU_IMAGE: Final = TENSORFLOW_IMAGE
TENSORBOARD_IMAGE: Final = TENSORBOARD.image


# Model/data import. amazon/aws-cli (aws/aws-cli `docker/Dockerfile`): amazonlinux:2023 + less, groff,
# findutils, jq and the bundled CLI; ENTRYPOINT aws. Its python is private to the CLI, and tar/unzip are not
# promised, so the archive handling runs in python:3.13-slim (stdlib tarfile/zipfile/hashlib/urllib) and
# aws-cli only copies.
AWS_CLI: Final = Pin(
    datasource="docker",
    name="aws-cli",
    package="amazon/aws-cli",
    version="2.36.7",
    released="2026-07-23",
    source="aws/aws-cli tag 2.36.7 (73fb33b, 2026-07-23), the newest 2.x tag in the mirror of 2026-07-23: "
    "docker/Dockerfile FROM public.ecr.aws/amazonlinux/amazonlinux:2023, ENTRYPOINT /usr/local/bin/aws. "
    "The CLI publishes no end of support for a release; its image's base does.",
    read="2026-11-28",
    end_of_support="2029-07-01",
    support="The image's base, Amazon Linux 2023, is supported until 2029-06-30 (Amazon Linux 2023 FAQ, as quoted in "
    "AshokBhat/notes wiki 'Amazon Linux', 2026-08-07): 2029-07-01 is the first day past it.",
    newer="aws-cli 2.x releases almost daily (later than 2.36.7 exist), but the stored copy of aws/aws-cli ends "
    "2026-07-24, so no later tag's docker/Dockerfile (base and entrypoint) cannot be read.",
)
AWS_CLI_IMAGE: Final = AWS_CLI.reference
# Debian 13 (trixie) rather than 12 (bookworm): bookworm's regular security support ended 2026-06-10 (LTS
# only after that), trixie is Debian's stable release. Both install ca-certificates in the slim image.
PYTHON: Final = Pin(
    datasource="docker",
    name="python",
    package="python",
    version="3.13.14-slim-trixie",
    released="2026-06-10",
    end_of_support="2029-11-01",
    source="docker-library/python 3.13/slim-trixie/Dockerfile (f79aea5, 2026-06-10): FROM debian:trixie-slim, "
    "PYTHON_VERSION 3.13.14, installs ca-certificates, CMD python3; versions.json 3.13 = 3.13.14 (mirror of "
    "2026-06-23). Python 3.13 reaches end of life on 2029-10-31 (PEP 719: October 2029; the day as "
    "python/devguide's release cycle and endoflife.date give it, quoted in microsoft/azurelinux#16819), so "
    "2029-11-01 is the first day without fixes.",
    read="2026-11-28",
    support="Python 3.13: PEP 719 (end of life October 2029; 2029-10-31 by python/devguide's release cycle).",
    newer="The stored copy of docker-library/python ends 2026-06-24 (3.13.14 the newest 3.13): later 3.13 patches "
    "cannot be read there.",
)
PYTHON_IMAGE: Final = PYTHON.reference
# kubernetes-sigs/jobset Helm chart (OCI: wellknown.JOBSET_CHART; `helm install jobset <chart>
# --version 0.12.0`), installed only when training is declared; chart version = the release tag without `v`.
# ReplicatedJob.dependsOn exists since v0.8 (api/jobset/v1alpha2/jobset_types.go).
JOBSET: Final = Pin(
    datasource="github-tags",
    name="jobset",
    package="kubernetes-sigs/jobset",
    version="v0.12.0",
    released="2026-05-08",
    source="kubernetes-sigs/jobset tag v0.12.0 (f22e565, 2026-05-08), the release with a Kubernetes 1.35 E2E "
    "lane; still the newest tag in the mirror of 2026-08-22 (v0.13.0-devel after it).",
    read="2026-11-28",
    support="None published: JobSet's RELEASE.md (tag v0.12.0) maintains only the previous minor while the next is "
    "developed, so v0.12 leaves maintenance when v0.13.0 ships, and aims for a minor at least every four months; "
    "v0.13.0 was still being prepared on 2026-09-10 (kubernetes-sigs/jobset#1317) and its date is unknown here.",
    newer="None seen: v0.13.0's release issue was open on 2026-09-10.",
)
JOBSET_VERSION: Final = JOBSET.version.removeprefix("v")


# --- Kueue: the training queue -----------------------------------------------------------------------
# Chart `oci://registry.k8s.io/kueue/charts/kueue` (charts/kueue/README.md), version = the tag without the `v`;
# its values.yaml in git points at the staging image (`us-central1-docker.pkg.dev/k8s-staging-images/kueue/
# kueue:release-0.19`): hack/helm-chart-package.sh rewrites it to `registry.k8s.io/kueue/kueue:<tag>` with
# pullPolicy IfNotPresent when packaging a release, and we set the same explicitly. "Requires Kubernetes 1.29 or
# newer" (README.md). API `kueue.x-k8s.io/v1beta2` (the storage version since v0.16; apis/kueue/v1beta2,
# config/components/crd/bases at the tag).
# Why not 0.20 (checked again 2026-11-28): Kueue v0.20.0 exists (it stops serving v1beta1, kueue #13957; we use
# v1beta2), but the stored copy of kubernetes-sigs/kueue ends 2026-08-22 (c90ed70), before the v0.20.0 tag and the
# later 0.19 patches: their charts and CRDs cannot be read at the tag, and the queue's objects are checked against
# the pinned release's CRDs (tests/queue/kueue_api.py). RELEASE.md keeps N-1 and N-2 while N is developed, so 0.19
# leaves maintenance when 0.21 ships: the pin's estimated end of support says when, and a render warns from then.
KUEUE: Final = Pin(
    datasource="github-tags",
    name="kueue",
    package="kubernetes-sigs/kueue",
    version="v0.19.2",
    released="2026-08-20",
    source="kubernetes-sigs/kueue tag v0.19.2 (8eab687, 2026-08-20): charts/kueue, config/components/crd/bases, "
    "apis/kueue/v1beta2 read at the tag.",
    read="2026-11-28",
    end_of_support="2026-12-06",
    estimated=True,
    support="kubernetes-sigs/kueue RELEASE.md (tag v0.19.2): one minor every two months, a slip of at most two weeks "
    "that does not move the next target; while minor N is developed, N-1 and N-2 are maintained, so 0.19 leaves "
    "maintenance when v0.21.0 ships. No date is published: estimated from v0.19.0 (2026-07-22) as two cadences "
    "later (2026-11-22) plus the two weeks of slip.",
    newer="Checked again 2026-11-29: v0.19.4 (promoted 2026-09-10, kubernetes/k8s.io#9917) up to v0.19.14, v0.20.0 "
    "up to v0.20.7 and v0.21.0-rc.3 exist (release notes on newreleases.io; no v0.21.0 final seen, so 0.19 is "
    "still maintained and the estimate above stands). The stored copy of kubernetes-sigs/kueue still ends "
    "2026-08-22 (c90ed70; tags end at v0.19.2), so the charts and CRDs of later releases cannot be read at their "
    "tags, and the queue's objects are checked against the pinned release's CRDs. For the bump: take v0.20.6 or "
    "later, not an earlier "
    "0.20 (v0.20.6's notes, kueue #18411: after an upgrade to 0.20 the API server could not start its watch cache "
    "for the ClusterQueue, LocalQueue and Workload CRDs, the conversion webhook being gone); 0.20 stops serving "
    "v1beta1 (gpuplane writes v1beta2) and its notes rename no chart key gpuplane sets.",
)
KUEUE_VERSION: Final = KUEUE.version.removeprefix("v")
KUEUE_IMAGE_TAG: Final = KUEUE.version

# --- EFA: Elastic Fabric Adapter for multi-node training -----------------------------------------------
# aws/eks-charts `stable/aws-efa-k8s-device-plugin`, Chart.yaml at commit bfe91c4 (2026-07-21, "add latest EFA
# instance types (#1337)"): chart version `v0.5.30` (the chart's own version carries the `v`), appVersion and
# image tag `v0.5.20` (released 2026-06-15, commit 2a58b2d). Repository https://aws.github.io/eks-charts. Its
# DaemonSet runs privileged with hostNetwork (values.yaml `securityContext`), registers `vpc.amazonaws.com/efa`,
# and has a required node affinity on its own list of EFA instance types (`supportedInstanceLabels`); we add a
# nodeSelector on our EFA label so it runs on EFA groups only. The image is pulled from EKS's us-west-2 ECR
# (602401143452), the chart's default. The EKS user guide also describes an EFA DRA driver for Kubernetes
# 1.34+; gpuplane keeps the device plugin: it works on every minor the project supports (1.32+), and the
# training pods request a plain extended resource the autoscaler's node template can advertise at zero.
EFA_DEVICE_PLUGIN: Final = Pin(
    datasource="helm",
    name="aws-efa-k8s-device-plugin",
    package="aws-efa-k8s-device-plugin",
    version="v0.5.30",
    registry="https://aws.github.io/eks-charts",
    released="2026-07-21",
    source="aws/eks-charts stable/aws-efa-k8s-device-plugin/Chart.yaml at bfe91c4 (2026-07-21, the newest commit "
    "touching it): version v0.5.30, appVersion v0.5.20 (image bump commit 2a58b2d, 2026-06-15); values.yaml and "
    "templates/daemonset.yaml at the same commit.",
    read="2026-11-28",
    support="None published: aws/eks-charts publishes no support window for the chart.",
    newer="None seen: the stored copy of aws/eks-charts ends 2026-08-07 with this chart unchanged since bfe91c4.",
)
EFA_DEVICE_PLUGIN_CHART: Final = EFA_DEVICE_PLUGIN.package
EFA_DEVICE_PLUGIN_REPO: Final = EFA_DEVICE_PLUGIN.helm_repository
EFA_DEVICE_PLUGIN_VERSION: Final = EFA_DEVICE_PLUGIN.version


# --- Observability and node health -----------------------------------------------------------------------
# A block of its own, apart from the pins other issues bump. Each pin: the release's date and what was read.
# kube-prometheus-stack 88.5.3 (Chart.yaml at prometheus-community/helm-charts cf408a2, last changed
# 2026-08-21; appVersion v0.93.1 of prometheus-operator). Prometheus, Alertmanager, the operator and its CRDs
# (ServiceMonitor, PodMonitor, PrometheusRule), kube-state-metrics, node-exporter and Grafana; values.yaml there:
# `serviceMonitorSelectorNilUsesHelmValues`, `podMonitorSelectorNilUsesHelmValues`, `ruleSelectorNilUsesHelmValues`
# (default true: only objects labelled with the release are read) and Grafana's dashboard sidecar
# (`grafana.sidecar.dashboards.label: grafana_dashboard`, `labelValue: "1"`, `searchNamespace: ALL`).
KUBE_PROMETHEUS_STACK: Final = Pin(
    datasource="helm",
    name="kube-prometheus-stack",
    package="kube-prometheus-stack",
    version="88.5.3",
    registry="https://prometheus-community.github.io/helm-charts",
    released="2026-08-21",
    source="prometheus-community/helm-charts charts/kube-prometheus-stack/Chart.yaml at cf408a2 (repository tip "
    "2026-08-22; the file last changed 2026-08-21): version 88.5.3, appVersion v0.93.1; values.yaml and the crds "
    "subchart at the same commit.",
    read="2026-11-28",
    support="None published: prometheus-community publishes no support window for kube-prometheus-stack releases.",
    newer="Several majors after 88.5.3 exist (release data read 2026-11), but the stored copy of "
    "prometheus-community/helm-charts ends 2026-08-22 (newest kube-prometheus-stack tag 88.5.3), so their values "
    "and CRDs cannot be read; a major bump also needs the alert rules and dashboards re-checked.",
)
KUBE_PROMETHEUS_STACK_CHART: Final = KUBE_PROMETHEUS_STACK.package
KUBE_PROMETHEUS_STACK_REPO: Final = KUBE_PROMETHEUS_STACK.helm_repository
KUBE_PROMETHEUS_STACK_VERSION: Final = KUBE_PROMETHEUS_STACK.version
# KEDA 2.20.2 (kedacore/charts keda/Chart.yaml, version and appVersion 2.20.2, last changed 2026-07-31; mirror at
# 1444d00, 2026-08-13): scales a serving variant on a PromQL query (its `prometheus` trigger) by creating and
# owning the variant's HPA. Its pods run non-root, no capabilities, read-only root, RuntimeDefault seccomp
# (values.yaml `securityContext`/`podSecurityContext`), which `restricted` admits. API `keda.sh/v1alpha1`
# (keda/templates/crds/crd-scaledobjects.yaml).
KEDA: Final = Pin(
    datasource="helm",
    name="keda",
    package="keda",
    version="2.20.2",
    registry="https://kedacore.github.io/charts",
    released="2026-07-31",
    source="kedacore/charts keda/Chart.yaml at 1444d00 (repository tip 2026-08-13; the file last changed "
    "2026-07-31, cbb9bb8): version and appVersion 2.20.2; values.yaml and templates/crds/crd-scaledobjects.yaml "
    "at the same commit.",
    read="2026-11-28",
    end_of_support="2027-03-01",
    estimated=True,
    support="kedacore/keda SECURITY.md: KEDA supports 'the n-2 version minor version of the current major release', "
    "so 2.20 is supported until 2.23 ships; ROADMAP.md: 'a new KEDA version every 3 months'. No date is published: "
    "estimated as three cadences after 2.20.0 (kedacore/charts tag v2.20.0, 2026-06-01).",
    newer="KEDA chart 2.21.1 exists (kedacore/charts discussion #937; 2.21.0 before it), but the stored copy of "
    "kedacore/charts ends 2026-08-22 (newest tag v2.20.2), so its values and CRDs cannot be read.",
)
KEDA_CHART: Final = KEDA.package
KEDA_REPO: Final = KEDA.helm_repository
KEDA_VERSION: Final = KEDA.version

# --- Every pin, and which of them have aged ------------------------------------------------------------
PINS: Final[tuple[Pin, ...]] = (
    GPU_OPERATOR,
    DEVICE_PLUGIN,
    DCGM_EXPORTER,
    CLUSTER_AUTOSCALER,
    *CLUSTER_AUTOSCALER_IMAGE_PINS.values(),
    *(image.pin for image in TENSORFLOW_IMAGES),
    AWS_CLI,
    PYTHON,
    JOBSET,
    KUEUE,
    EFA_DEVICE_PLUGIN,
    KUBE_PROMETHEUS_STACK,
    KEDA,
)
"""Every default upstream release, one entry each (tests/manifests/test_pins.py checks that none is missed)."""
