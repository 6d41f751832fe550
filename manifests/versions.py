"""Every pinned version and upstream constant of gpuplane, in one place.

Why one module: versions drift, and a pin that is spread over several files gets bumped in one and
forgotten in another. Each value names where it was checked. `components` and `infra` import from here;
`manifests` itself does too, which is why it lives in the lowest layer.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from typing import Final

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
# EKS control-plane price per cluster hour (EKS pricing page; FACTS.md): what EXTENDED costs past the date.
EKS_STANDARD_HOURLY_USD: Final = "0.10"
EKS_EXTENDED_HOURLY_USD: Final = "0.60"
# "Today" for every date rule comes from `today()`: tests and what-if runs set GPUPLANE_TODAY=YYYY-MM-DD.
TODAY_ENV: Final = "GPUPLANE_TODAY"


def today() -> datetime.date:
    """The date the version rules judge by: `GPUPLANE_TODAY` when set (tests pin it), else today in UTC."""
    pinned = os.environ.get(TODAY_ENV, "").strip()
    if pinned:
        try:
            return datetime.date.fromisoformat(pinned)
        except ValueError as exc:
            raise ValueError(f"{TODAY_ENV}='{pinned}' is not a date like 2026-11-24") from exc
    return datetime.datetime.now(datetime.UTC).date()


def standard_support_end(version: str) -> datetime.date:
    """The first day a version is billed as extended support (EKS bills from the start of that day, UTC)."""
    return datetime.date.fromisoformat(KUBERNETES_VERSIONS[version][1])


def in_standard_support(version: str, on: datetime.date | None = None) -> bool:
    """Whether `version` is still in standard support on `on` (default: `today()`)."""
    return (on or today()) < standard_support_end(version)


def newest_in_standard_support(on: datetime.date | None = None) -> str | None:
    """The newest version EKS offers in standard support on `on` (default: `today()`)."""
    offered = [
        v
        for v, (released, _, _) in KUBERNETES_VERSIONS.items()
        if datetime.date.fromisoformat(released) <= (on or today()) and in_standard_support(v, on)
    ]
    return max(offered, key=lambda v: tuple(int(p) for p in v.split(".")), default=None)


# --- EKS managed node group AMI types (botocore `eks` model, shape AMITypes) -------------------------
AMI_AL2023_X86_STANDARD: Final = "AL2023_x86_64_STANDARD"
AMI_AL2023_ARM_STANDARD: Final = "AL2023_ARM_64_STANDARD"
AMI_AL2023_X86_NVIDIA: Final = "AL2023_x86_64_NVIDIA"
AMI_AL2023_ARM_NVIDIA: Final = "AL2023_ARM_64_NVIDIA"
AMI_BOTTLEROCKET_X86: Final = "BOTTLEROCKET_x86_64"
AMI_BOTTLEROCKET_ARM: Final = "BOTTLEROCKET_ARM_64"
AMI_BOTTLEROCKET_X86_NVIDIA: Final = "BOTTLEROCKET_x86_64_NVIDIA"
AMI_BOTTLEROCKET_ARM_NVIDIA: Final = "BOTTLEROCKET_ARM_64_NVIDIA"

# The AMI types gpuplane supports, with (architecture, has NVIDIA driver, OS family).
# AL2 is left out on purpose: EKS publishes no AL2 AMIs for current Kubernetes versions
# (EKS user guide, "eks-optimized AMIs").
AMI_TYPES: Final[dict[str, tuple[str, bool, str]]] = {
    AMI_AL2023_X86_STANDARD: ("x86_64", False, "al2023"),
    AMI_AL2023_ARM_STANDARD: ("arm64", False, "al2023"),
    AMI_AL2023_X86_NVIDIA: ("x86_64", True, "al2023"),
    AMI_AL2023_ARM_NVIDIA: ("arm64", True, "al2023"),
    AMI_BOTTLEROCKET_X86: ("x86_64", False, "bottlerocket"),
    AMI_BOTTLEROCKET_ARM: ("arm64", False, "bottlerocket"),
    AMI_BOTTLEROCKET_X86_NVIDIA: ("x86_64", True, "bottlerocket"),
    AMI_BOTTLEROCKET_ARM_NVIDIA: ("arm64", True, "bottlerocket"),
}

# --- EKS add-ons -------------------------------------------------------------------------------------
# Add-on versions are left to EKS (it picks the default version for the cluster's Kubernetes version),
# because a fixed add-on version is valid for only a few Kubernetes minors. Names from the EKS user guide
# "eks-add-ons"; `before_compute` mirrors terraform-aws-eks: vpc-cni and the pod identity agent must be
# on the cluster before nodes join, coredns needs nodes to become healthy.
ADDON_VPC_CNI: Final = "vpc-cni"
ADDON_KUBE_PROXY: Final = "kube-proxy"
ADDON_COREDNS: Final = "coredns"
ADDON_POD_IDENTITY_AGENT: Final = "eks-pod-identity-agent"
# The coredns add-on's own tolerations (its Deployment in EKS clusters, 2025-2026 builds); repeated in our
# configuration values because setting `tolerations` replaces them.
COREDNS_DEFAULT_TOLERATIONS: Final = (
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
)
# Oldest Pulumi CLI with resource hooks and delete hooks on `pulumi destroy --run-program` (Pulumi release
# notes 3.182.0; pulumi #19933). Also `requiredPulumiVersion` in Pulumi.yaml.
PULUMI_CLI_MIN_VERSION: Final = "3.182.0"

# --- Control plane logging (botocore `eks` model, shape LogType) ------------------------------------
CONTROL_PLANE_LOG_TYPES: Final = ("api", "audit", "authenticator", "controllerManager", "scheduler")

# --- AWS managed IAM policies ------------------------------------------------------------------------
POLICY_EKS_CLUSTER: Final = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
POLICY_EKS_WORKER_NODE: Final = "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
# Pull-only is the narrower successor of ContainerRegistryReadOnly for nodes (EKS user guide, node IAM role).
POLICY_ECR_PULL_ONLY: Final = "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly"
POLICY_EKS_CNI: Final = "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
ACCESS_POLICY_CLUSTER_ADMIN: Final = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"

# --- Labels, taints and autoscaler tags (EKS user guide; terraform-aws-eks; autoscaler #5278) ---------
GPU_PRESENT_LABEL: Final = "nvidia.com/gpu.present"
GPU_RESOURCE: Final = "nvidia.com/gpu"
ACCELERATOR_LABEL: Final = "k8s.amazonaws.com/accelerator"
CA_TAG_PREFIX: Final = "k8s.io/cluster-autoscaler"

# --- EFS and its CSI driver (aws-efs-csi-driver docs and EFS API reference) --------------------------------
ADDON_EFS_CSI: Final = "aws-efs-csi-driver"
EFS_CSI_PROVISIONER: Final = "efs.csi.aws.com"
EFS_CSI_CONTROLLER_SA: Final = "efs-csi-controller-sa"
EFS_CSI_NAMESPACE: Final = "kube-system"
POLICY_EFS_CSI: Final = "arn:aws:iam::aws:policy/service-role/AmazonEFSCSIDriverPolicy"
# The driver removes this taint from a node once its node agent runs there, so pods that mount EFS never
# land on a node before the agent can mount (aws-efs-csi-driver README, "node startup taint").
EFS_STARTUP_TAINT_KEY: Final = "efs.csi.aws.com/agent-not-ready"
NFS_PORT: Final = 2049

# --- NVIDIA GPU stack (NVIDIA k8s-device-plugin and GPU Operator docs) ----------------------------
NVIDIA_NAMESPACE: Final = "nvidia-gpu"
DEVICE_PLUGIN_CHART: Final = "nvidia-device-plugin"
DEVICE_PLUGIN_REPO: Final = "https://nvidia.github.io/k8s-device-plugin"
# chart == app version: tag v0.20.0 (1b826ac, 2026-08-19), in the gh-pages Helm index of 2026-08-20 (bf58428);
# eksctl moved to it the same week (#8840). A 0.20.1 bump was merged upstream, but no 0.20.1 tag or chart
# package was seen: the newest confirmed one is pinned.
DEVICE_PLUGIN_VERSION: Final = "0.20.0"
GPU_OPERATOR_CHART: Final = "gpu-operator"
GPU_OPERATOR_REPO: Final = "https://helm.ngc.nvidia.com/nvidia"
# Tag v25.10.1 (8460187, 2025-12-03); its chart is published on helm.ngc.nvidia.com, which is not reachable
# from here. Newer operator lines exist (v26.7.0 seen, 2026-08): not moved without checking our values.
GPU_OPERATOR_VERSION: Final = "v25.10.1"
DCGM_EXPORTER_CHART: Final = "dcgm-exporter"
DCGM_EXPORTER_REPO: Final = "https://nvidia.github.io/dcgm-exporter/helm-charts"
# Chart 4.4.1 (appVersion 4.4.1) in NVIDIA/dcgm-exporter gh-pages helm-charts/index.yaml, created 2025-08-15.
DCGM_EXPORTER_VERSION: Final = "4.4.1"
DCGM_EXPORTER_PORT: Final = 9400

# NVIDIA driver major that each AMI family ships (what decides which CUDA user space runs there).
# AL2023 NVIDIA AMIs moved to the 580 branch for every supported Kubernetes version in late 2025
# (awslabs/amazon-eks-ami #2470, #2484, #2496); Bottlerocket's NVIDIA variants are counted as 570,
# the older branch, until checked on a node (`nvidia.com/cuda.driver-version.major` from GFD says).
AMI_DRIVER_MAJOR: Final[dict[str, int]] = {"al2023": 580, "bottlerocket": 570}
# Minimum driver major for each CUDA major's user space (CUDA compatibility docs).
CUDA_MIN_DRIVER: Final[dict[int, int]] = {11: 450, 12: 525, 13: 580}

# GFD / NFD labels (gpu-feature-discovery and node-feature-discovery docs) and the device plugin's
# per-node config selector.
LABEL_CUDA_DRIVER_MAJOR: Final = "nvidia.com/cuda.driver-version.major"
# Labels the node group itself sets (and advertises in its ASG node-template tags for scale from zero).
LABEL_NODE_GROUP: Final = "gpuplane.io/node-group"
LABEL_GPUPLANE_CUDA_DRIVER_MAJOR: Final = "gpuplane.io/cuda-driver-major"
LABEL_CPU_PREFIX: Final = "gpuplane.io/cpu-"
# The GPU's CUDA compute capability as major*10+minor (components/facts/catalog.py), set by the group itself.
LABEL_GPU_COMPUTE_CAPABILITY: Final = "gpuplane.io/gpu-compute-capability"
LABEL_DEVICE_PLUGIN_CONFIG: Final = "nvidia.com/device-plugin.config"
LABEL_MIG_CONFIG: Final = "nvidia.com/mig.config"
NFD_CPUID_PREFIX: Final = "feature.node.kubernetes.io/cpu-cpuid."

# --- cluster-autoscaler (kubernetes/autoscaler charts) ---------------------------------------------
CLUSTER_AUTOSCALER_CHART: Final = "cluster-autoscaler"
CLUSTER_AUTOSCALER_REPO: Final = "https://kubernetes.github.io/autoscaler"
CLUSTER_AUTOSCALER_VERSION: Final = (
    "9.59.0"  # chart tag cluster-autoscaler-chart-9.59.0 (5a0b98e, 2026-07-21), appVersion 1.35.0
)
CLUSTER_AUTOSCALER_SA: Final = "cluster-autoscaler"
# The autoscaler's minor must match the cluster's: per minor, the newest patch tag of kubernetes/autoscaler
# (`cluster-autoscaler-<v>` tags, read 2026-11 from a mirror of 2026-08-22; image
# registry.k8s.io/autoscaling/cluster-autoscaler:v<v>). 1.35.2+ and 1.36.1+ carry the ProvisioningRequest
# fix (autoscaler #8855) that the queue (Kueue) needs.
CLUSTER_AUTOSCALER_IMAGES: Final[dict[str, str]] = {
    "1.32": "v1.32.7",  # f645beb, 2026-02-13
    "1.33": "v1.33.6",  # be4b5a1, 2026-07-22
    "1.34": "v1.34.5",  # cb2123e, 2026-07-22
    "1.35": "v1.35.2",  # 2d42588, 2026-07-22
    "1.36": "v1.36.1",  # 35e8a28, 2026-07-22
}

# --- TensorFlow workloads (docs/workloads.md, "Images") -----------------------------------------------
# One TensorFlow line for the platform: 2.20. TensorFlow only promises that a SavedModel loads in the same
# or a newer runtime, so serving (tensorflow/serving 2.20.0, the newest TF Serving release) must be at least
# every training image's TensorFlow; rules in `image_problems` and tests/manifests/test_images.py.


@dataclass(frozen=True)
class TensorFlowImage:
    """What is inside one container image, read from its build files (never assumed from its tag)."""

    image: str
    tensorflow: str
    """TensorFlow in the image (for tensorflow/serving: the TF core the server is built from)."""
    commands: tuple[str, ...]
    """Commands on PATH that roles rely on (`tensorflow_model_server`, `tensorboard`, `python3`)."""
    user: str
    """The image's USER; gpuplane runs every workload as the storage uid anyway."""
    source: str
    """Where the facts were read: repository, file, tag or commit, date."""
    cuda: str | None = None
    """CUDA user space in the image (major.minor[.patch]); None for a CPU image."""
    cudnn: str | None = None
    min_compute_capability: int | None = None
    """Least GPU compute capability (major*10+minor) its kernels are built for; None for a CPU image."""

    @property
    def gpu(self) -> bool:
        """A GPU image: it carries CUDA user space."""
        return self.cuda is not None

    @property
    def cuda_major(self) -> int | None:
        """12 for CUDA 12.x: what decides the driver it needs (CUDA_MIN_DRIVER)."""
        return int(self.cuda.split(".")[0]) if self.cuda else None


# What each TensorFlow release is built against: its PyPI `and-cuda` extra (nvidia-cuda-runtime-cu12 and
# nvidia-cudnn-cu12 lower bounds; tensorflow 2.20.0 METADATA: runtime >=12.5.82, cudnn >=9.3.0.75) and the
# release .bazelrc (HERMETIC_CUDA_VERSION 12.5.1, HERMETIC_CUDNN_VERSION 9.3.0 from 2.18 on). 2.16/2.17:
# CUDA 12.3, cuDNN 8.9 (tensorflow.org/install/source "tested build configurations").
TENSORFLOW_BUILT_AGAINST: Final[dict[str, tuple[str, str]]] = {
    "2.16": ("12.3", "8.9"),
    "2.17": ("12.3", "8.9"),
    "2.18": ("12.5", "9.3"),
    "2.19": ("12.5", "9.3"),
    "2.20": ("12.5", "9.3"),
}
# The official TensorFlow GPU wheels from 2.18 on build "sm_60,sm_70,sm_80,sm_89,compute_90" (.bazelrc,
# cuda_clang config; tensorflow/serving 2.20.0 .bazelrc the same): 6.0 is the least GPU they run on, and
# GPUs newer than 8.9 JIT-compile the compute_90 PTX (hence CUDA_CACHE_PATH in the scratch space).
TF_GPU_MIN_COMPUTE_CAPABILITY: Final = 60

TF_SERVING_CPU: Final = TensorFlowImage(
    image="tensorflow/serving:2.20.0",
    tensorflow="2.20.0",
    commands=("tensorflow_model_server",),
    user="root (no USER line)",
    source="tensorflow/serving tag 2.20.0 (bc7e9d2, 2026-04-23): tensorflow_serving/tools/docker/Dockerfile, "
    "FROM ubuntu:22.04, /usr/bin/tensorflow_model_server; WORKSPACE org_tensorflow 72fbba3 (TF 2.20)",
)
TF_SERVING_GPU: Final = TensorFlowImage(
    image="tensorflow/serving:2.20.0-gpu",
    tensorflow="2.20.0",
    commands=("tensorflow_model_server",),
    user="root (no USER line)",
    source="tensorflow/serving tag 2.20.0 (bc7e9d2, 2026-04-23): Dockerfile.gpu FROM "
    "nvidia/cuda:12.5.1-base-ubuntu22.04, libcudnn9-cuda-12 (Dockerfile.devel-gpu pins 9.3.0.75); "
    ".bazelrc TF_CUDA_COMPUTE_CAPABILITIES sm_60,sm_70,sm_80,sm_89,compute_90",
    cuda="12.5.1",
    cudnn="9.3",
    min_compute_capability=60,
)
# CPU training, TensorBoard and the compare client. tensorflow/build tensorflow_runtime_dockerfiles/
# cpu.Dockerfile (a65b114, 2023-07-13; used for every release tag): ubuntu:22.04, python3.11, `pip install
# tensorflow==<v>`; TF 2.20 requires `tensorboard~=2.20.0` (its wheel METADATA), so the image ships the
# `tensorboard` command (2.21 dropped that dependency: no `tensorboard` in 2.21 images).
TENSORFLOW_CPU: Final = TensorFlowImage(
    image="tensorflow/tensorflow:2.20.0",
    tensorflow="2.20.0",
    commands=("python3", "tensorboard"),
    user="root (no USER line)",
    source="tensorflow/build tensorflow_runtime_dockerfiles/cpu.Dockerfile (a65b114, 2023-07-13) with "
    "tensorflow==2.20.0, whose METADATA requires tensorboard~=2.20.0",
)
# GPU training. The official `tensorflow/tensorflow:2.18.0-gpu` .. `2.21.0-gpu` images are built from
# tensorflow/build gpu.Dockerfile (fdd023e, unchanged since 2023-11-20): nvidia/cuda:12.3.0-base + libcudnn8
# 8.9.6.50, which TF >= 2.18 (CUDA 12.5, cuDNN 9.3) cannot use: TensorFlow finds no GPU (tensorflow/build
# #221). AWS's Deep Learning Container for TF 2.19 matches its TensorFlow, and its CUDA 12.5.1 + cuDNN
# 9.3.0.75 are exactly what TF 2.20 is built against; TF 2.19 <= serving's 2.20. There is no TF 2.20
# training DLC (2.19 and 2.21 only). Every role of a run that has GPUs uses this one image, the CPU roles
# (ps) included, so the tasks of one run never mix TensorFlow versions (docs/workloads.md).
TENSORFLOW_GPU: Final = TensorFlowImage(
    image="public.ecr.aws/deep-learning-containers/tensorflow-training:2.19.0-gpu-py312-cu125-ubuntu22.04-sagemaker",
    tensorflow="2.19.0",
    commands=("python3", "tensorboard"),
    user="root (no USER line)",
    source="aws/deep-learning-containers tensorflow/training/docker/2.19/py3/cu125/Dockerfile.gpu (last "
    "d959022, 2026-02-16): FROM nvidia/cuda:12.5.1-base-ubuntu22.04, CUDNN=9.3.0.75, TF 2.19.0 wheel, "
    "Python 3.12; docs/src/data/tensorflow-training/2.19-gpu-sagemaker.yml: public, GA 2025-03-11, "
    "patched until 2026-03-11",
    cuda="12.5.1",
    cudnn="9.3",
    min_compute_capability=60,
)
TENSORFLOW_IMAGES: Final = (TF_SERVING_CPU, TF_SERVING_GPU, TENSORFLOW_CPU, TENSORFLOW_GPU)

TF_SERVING_IMAGE: Final = TF_SERVING_CPU.image
TF_SERVING_GPU_IMAGE: Final = TF_SERVING_GPU.image
TF_SERVING_BINARY: Final = "/usr/bin/tensorflow_model_server"
TF_SERVING_GPU_CUDA_MAJOR: Final = 12
# The release build is compiled with AVX (TensorFlow's release `.bazelrc` config), so CPU nodes need AVX;
# every x86 type in the catalog has AVX2.
TF_SERVING_CPU_FEATURES: Final = ("avx",)
TF_SERVING_GRPC_PORT: Final = 8500
TF_SERVING_REST_PORT: Final = 8501
TENSORFLOW_IMAGE: Final = TENSORFLOW_CPU.image
TENSORFLOW_GPU_IMAGE: Final = TENSORFLOW_GPU.image
TENSORFLOW_GPU_CUDA_MAJOR: Final = 12
TENSORFLOW_CPU_IMAGE: Final = TENSORFLOW_IMAGE


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


def image_problems(image: TensorFlowImage, role: str) -> list[str]:
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


# Model/data import. amazon/aws-cli (aws/aws-cli `docker/Dockerfile`): amazonlinux:2023 + less, groff,
# findutils, jq and the bundled CLI; ENTRYPOINT aws. Its python is private to the CLI, and tar/unzip are not
# promised, so the archive handling runs in python:3.13-slim (stdlib tarfile/zipfile/hashlib/urllib) and
# aws-cli only copies.
# aws/aws-cli tag 2.31.39 (eead68b, 2025-11-18), docker/Dockerfile FROM amazonlinux:2023.
AWS_CLI_IMAGE: Final = "amazon/aws-cli:2.31.39"
# docker-library/python 3.13/slim-bookworm/Dockerfile, PYTHON_VERSION 3.13.9 (3f2d7e4, 2025-10-14).
PYTHON_IMAGE: Final = "python:3.13.9-slim-bookworm"
# kubernetes-sigs/jobset Helm chart (OCI; `helm install jobset oci://registry.k8s.io/jobset/charts/jobset
# --version 0.12.0`, tag v0.12.0 f22e565, 2026-05-08, the release with a Kubernetes 1.35 E2E lane), installed
# only when training is declared.
# ReplicatedJob.dependsOn exists since v0.8 (api/jobset/v1alpha2/jobset_types.go).
JOBSET_CHART: Final = "oci://registry.k8s.io/jobset/charts/jobset"
JOBSET_VERSION: Final = "0.12.0"
JOBSET_NAMESPACE: Final = "jobset-system"
# metrics-server: EKS community add-on name (EKS user guide "community add-ons"); needed by HPAs.
ADDON_METRICS_SERVER: Final = "metrics-server"
# Regions where an add-on is not offered, by region prefix. eksctl pkg/apis/eksctl.io/v1alpha5/
# known_addons.go (4c3ca02, 2025-10-24; unchanged at 99984ad, 2026-08-21) excludes metrics-server in
# cn-north-1, cn-northwest-1, us-gov-west-1, us-gov-east-1 and the ISO regions (which gpuplane refuses
# anyway: components/facts/partition.py). The AWS-managed add-ons are offered in every supported partition.
# `gpuplane preflight` asks DescribeAddonVersions for the live answer in the stack's region.
ADDON_UNAVAILABLE_REGION_PREFIXES: Final[dict[str, tuple[str, ...]]] = {
    ADDON_METRICS_SERVER: ("cn-", "us-gov-", "us-iso", "eu-isoe-"),
}


def addon_offered(addon: str, region: str) -> bool:
    """Whether EKS offers `addon` in `region`, by the table above."""
    return not region.startswith(ADDON_UNAVAILABLE_REGION_PREFIXES.get(addon, ()))


# --- Kueue: the training queue (issue 21) -------------------------------------------------------------
# kubernetes-sigs/kueue v0.19.2 (tag commit 8eab687, 2026-08-20). Chart `oci://registry.k8s.io/kueue/charts/kueue`
# (charts/kueue/README.md), version without the `v`; its values.yaml in git points at the staging image
# (`us-central1-docker.pkg.dev/k8s-staging-images/kueue/kueue:release-0.19`): hack/helm-chart-package.sh rewrites
# it to `registry.k8s.io/kueue/kueue:<tag>` with pullPolicy IfNotPresent when packaging a release, and we set
# the same explicitly. "Requires Kubernetes 1.29 or newer" (README.md). API `kueue.x-k8s.io/v1beta2` (the
# storage version since v0.16; apis/kueue/v1beta2, config/components/crd/bases at the tag).
KUEUE_CHART: Final = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_VERSION: Final = "0.19.2"
KUEUE_IMAGE_REPOSITORY: Final = "registry.k8s.io/kueue/kueue"
KUEUE_IMAGE_TAG: Final = "v0.19.2"
KUEUE_NAMESPACE: Final = "kueue-system"
KUEUE_API: Final = "kueue.x-k8s.io/v1beta2"
# Visibility API (aggregated APIService `v1beta2.visibility.kueue.x-k8s.io`, charts/kueue/templates/visibility;
# VisibilityOnDemand is beta and on by default since v0.9, pkg/features/kube_features.go).
KUEUE_VISIBILITY_API: Final = "visibility.kueue.x-k8s.io/v1beta2"
# The controller listens on 9443 (webhooks) and 8082 (visibility), charts/kueue/templates/manager/manager.yaml.
KUEUE_WEBHOOK_PORT: Final = 9443
KUEUE_VISIBILITY_PORT: Final = 8082
# The JobSet integration's framework name (apis/config/v1beta2/configuration_types.go, Integrations).
KUEUE_JOBSET_FRAMEWORK: Final = "jobset.x-k8s.io/jobset"
# ProvisioningRequest admission check (apis/kueue/v1beta2/provisioningrequestconfig_types.go).
KUEUE_PROVISIONING_CONTROLLER: Final = "kueue.x-k8s.io/provisioning-request"

# --- ProvisioningRequests in the cluster-autoscaler (kubernetes/autoscaler) ---------------------------
# The CRD is not in the chart: apply `cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests
# .yaml` at the image's tag (served v1 (storage) and v1beta1 at 1.32.7 ... 1.36.1). Kueue checks once at start-up
# whether the API exists (cmd/kueue/main.go, ServerSupportsProvisioningRequest), so the CRD comes first.
PROVISIONING_REQUEST_CRD_URL: Final = (
    "https://raw.githubusercontent.com/kubernetes/autoscaler/cluster-autoscaler-{version}/cluster-autoscaler/apis/"
    "config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"
)
PROVISIONING_REQUEST_API: Final = "autoscaling.x-k8s.io/v1"
# `best-effort-atomic-scale-up` scales up (autoscaler PR #6824); `check-capacity` never does, so it cannot serve
# groups at zero. On AWS the scale-up is one IncreaseSize of one group: AwsNodeGroup.AtomicIncreaseSize returns
# ErrNotImplemented (cloudprovider/aws/aws_cloud_provider.go) and the executor falls back to the plain increase
# (core/scaleup/orchestrator/executor.go). A request nothing can satisfy expires after 7 days
# (processors/provreq/processor.go, defaultExpirationTime), all at cluster-autoscaler-1.35.2.
PROVISIONING_CLASS: Final = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
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
