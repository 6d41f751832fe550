"""Every pinned version and upstream constant of gpuplane, in one place.

Why one module: versions drift, and a pin that is spread over several files gets bumped in one and
forgotten in another. Each value names where it was checked. `components` and `infra` import from here;
`manifests` itself does too, which is why it lives in the lowest layer.
"""

from __future__ import annotations

from typing import Final

# --- Kubernetes on EKS -----------------------------------------------------------------------------
# EKS version lifecycle (EKS user guide "kubernetes-versions"; endoflife.date/amazon-eks), checked
# 2026-11: standard support is 14 months, extended support 12 more at extra cost per cluster hour.
# Values: (end of standard support, end of extended support), ISO dates.
KUBERNETES_VERSIONS: Final[dict[str, tuple[str, str]]] = {
    "1.32": ("2026-03-23", "2027-03-23"),
    "1.33": ("2026-07-29", "2027-07-29"),
    "1.34": ("2026-12-02", "2027-12-02"),
    "1.35": ("2027-03-27", "2028-03-27"),
}
# The newest version in standard support when this pin was set.
DEFAULT_KUBERNETES_VERSION: Final = "1.35"

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
DEVICE_PLUGIN_VERSION: Final = "0.20.1"  # chart == app version (NVIDIA/k8s-device-plugin releases, 2026)
GPU_OPERATOR_CHART: Final = "gpu-operator"
GPU_OPERATOR_REPO: Final = "https://helm.ngc.nvidia.com/nvidia"
GPU_OPERATOR_VERSION: Final = "v25.10.1"
DCGM_EXPORTER_CHART: Final = "dcgm-exporter"
DCGM_EXPORTER_REPO: Final = "https://nvidia.github.io/dcgm-exporter/helm-charts"
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
# The GPU's CUDA compute capability as major*10+minor (components/catalog.py), set by the group itself.
LABEL_GPU_COMPUTE_CAPABILITY: Final = "gpuplane.io/gpu-compute-capability"
LABEL_DEVICE_PLUGIN_CONFIG: Final = "nvidia.com/device-plugin.config"
LABEL_MIG_CONFIG: Final = "nvidia.com/mig.config"
NFD_CPUID_PREFIX: Final = "feature.node.kubernetes.io/cpu-cpuid."

# --- cluster-autoscaler (kubernetes/autoscaler charts) ---------------------------------------------
CLUSTER_AUTOSCALER_CHART: Final = "cluster-autoscaler"
CLUSTER_AUTOSCALER_REPO: Final = "https://kubernetes.github.io/autoscaler"
CLUSTER_AUTOSCALER_VERSION: Final = "9.59.0"  # newest chart tag seen (cluster-autoscaler-chart-9.59.0)
CLUSTER_AUTOSCALER_SA: Final = "cluster-autoscaler"
# The autoscaler's minor must match the cluster's; one image per supported Kubernetes version.
CLUSTER_AUTOSCALER_IMAGES: Final[dict[str, str]] = {
    "1.32": "v1.32.0",
    "1.33": "v1.33.0",
    "1.34": "v1.34.0",
    "1.35": "v1.35.0",
}

# --- TensorFlow workloads (docs/workloads.md) ---------------------------------------------------------
# tensorflow/serving images (Docker Hub tags `2.19.0`, `2.19.0-gpu`). Read in tensorflow/serving
# `tensorflow_serving/tools/docker/Dockerfile{,.gpu}`: no USER (root unless the pod says otherwise), binary
# /usr/bin/tensorflow_model_server, ENTRYPOINT tf_serving_entrypoint.sh (bash; we bypass it), EXPOSE 8500/8501,
# amd64 only; the -gpu image is FROM nvidia/cuda 12.x (CUDA 12 user space => driver >= 525). The release
# build is compiled with AVX (TensorFlow's release `.bazelrc` config), so CPU nodes need AVX; every x86 type
# in the catalog has AVX2.
TF_SERVING_IMAGE: Final = "tensorflow/serving:2.19.0"
TF_SERVING_GPU_IMAGE: Final = "tensorflow/serving:2.19.0-gpu"
TF_SERVING_BINARY: Final = "/usr/bin/tensorflow_model_server"
TF_SERVING_GPU_CUDA_MAJOR: Final = 12
# The least CUDA compute capability the TensorFlow GPU builds run on, as major*10+minor: "CUDA architectures
# 3.5, 5.0, 6.0, 7.0, 7.5, 8.0 and higher" (tensorflow.org/install/pip, hardware requirements). Every GPU in
# the catalog has more; a custom image declares its own with `minComputeCapability`.
TF_GPU_MIN_COMPUTE_CAPABILITY: Final = 35
TF_SERVING_CPU_FEATURES: Final = ("avx",)
TF_SERVING_GRPC_PORT: Final = 8500
TF_SERVING_REST_PORT: Final = 8501
# Model/data import. amazon/aws-cli (aws/aws-cli `docker/Dockerfile`): amazonlinux:2 + less, groff, jq and
# the bundled CLI; ENTRYPOINT aws. Its python is private to the CLI, and tar/unzip are not promised, so the
# archive handling runs in python:3.13-slim (stdlib tarfile/zipfile/hashlib/urllib) and aws-cli only copies.
AWS_CLI_IMAGE: Final = "amazon/aws-cli:2.31.39"
PYTHON_IMAGE: Final = "python:3.13.9-slim-bookworm"
# kubernetes-sigs/jobset Helm chart (OCI; `helm install jobset oci://registry.k8s.io/jobset/charts/jobset
# --version 0.12.0`, the release with a Kubernetes 1.35 E2E lane), installed only when training is declared.
# ReplicatedJob.dependsOn exists since v0.8 (api/jobset/v1alpha2/jobset_types.go).
JOBSET_CHART: Final = "oci://registry.k8s.io/jobset/charts/jobset"
JOBSET_VERSION: Final = "0.12.0"
JOBSET_NAMESPACE: Final = "jobset-system"
# metrics-server: EKS community add-on name (EKS user guide "community add-ons"); needed by HPAs.
ADDON_METRICS_SERVER: Final = "metrics-server"
# TensorBoard, training and the compare client run in the TensorFlow images (tensorflow/tensorflow ships
# python3, numpy and the tensorboard package). One TF release for all: 2.21.0, the one benchmarks/threads.py measured.
TENSORFLOW_IMAGE: Final = "tensorflow/tensorflow:2.21.0"
TENSORFLOW_GPU_IMAGE: Final = "tensorflow/tensorflow:2.21.0-gpu"
TENSORFLOW_GPU_CUDA_MAJOR: Final = 12
# --- gpuplane compare: the load-test client's image ------------------------------------------------
# The official TensorFlow CPU image (Docker Hub tensorflow/tensorflow; its Dockerfile,
# tensorflow/tools/dockerfiles/dockerfiles/cpu.Dockerfile, installs python3 + pip + tensorflow on Ubuntu
# and sets no USER, so it runs as whatever uid the pod says; `python3` is on PATH). Tag = the TF release
# benchmarks/threads.py measured (2.21.0, PyPI tensorflow-cpu 2.21.0); not pulled here (no registry reachable).
TENSORFLOW_CPU_IMAGE: Final = TENSORFLOW_IMAGE

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
