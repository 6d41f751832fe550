"""Every pinned version and upstream constant of gpuplane, in one place: data, with its source and date.

Why one module: versions drift, and a pin that is spread over several files gets bumped in one and
forgotten in another. Each value names where it was checked. `components` and `infra` import from here;
`manifests` itself does too, which is why it lives in the lowest layer. The rules that read these values
(Kubernetes versions' support, TensorFlow compatibility, which pins have aged) are in `manifests/lifecycle.py`;
only `today()`, the day every date rule judges by, stays here because each `Pin` ages against it.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from typing import Final, NamedTuple

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
# EKS control-plane price per cluster hour (EKS pricing page): what EXTENDED costs past the date.
EKS_STANDARD_HOURLY_USD: Final = "0.10"
EKS_EXTENDED_HOURLY_USD: Final = "0.60"
# Service list prices the cost estimate uses (components/plan/cost.py), us-east-1, USD, as of this date; most
# US regions charge the same, others up to about a third more (the estimate says so). Sources: the AWS pricing
# pages for VPC (NAT gateway per hour; public IPv4 address per hour, since 2024-02), EFS (Standard storage per
# GB-month), Elastic Load Balancing (NLB and ALB per hour, before capacity units), EBS (gp3 per GB-month) and
# KMS (customer managed key per month); read 2026-11 through restatements of those pages, not the pages
# themselves: re-check them before relying on a figure. Usage-based charges (NAT and EFS data processed, load
# balancer capacity units, data transfer, log ingestion) are left out of the estimate on purpose.
SERVICE_PRICES_DATE: Final = "2026-11-26"
NAT_GATEWAY_HOURLY_USD: Final = "0.045"
PUBLIC_IPV4_HOURLY_USD: Final = "0.005"
EFS_STANDARD_GB_MONTH_USD: Final = "0.30"
LOAD_BALANCER_HOURLY_USD: Final = "0.0225"
EBS_GP3_GB_MONTH_USD: Final = "0.08"
KMS_KEY_MONTHLY_USD: Final = "1.00"
# Amazon Managed Service for Prometheus (`observability.metrics: managedPrometheus`), us-east-1, USD: metric
# samples ingested (first tier, up to 2 billion a month), storage per GB-month, and the AWS managed collector
# per collector-hour. Source: aws.amazon.com/prometheus/pricing. Read 2026-11-26 through the stored copies this
# project can reach: the page's text (billing is per sample ingested, per GB-month stored, per query sample
# processed, and for the collector "the number of hours it is turned on and the number of samples collected";
# free tier 40M samples, 10 GB, 200B query samples) but not its price table, which is rendered client-side. The
# figures below are the published first-tier prices as known, cross-checked against one user's bill
# (tianzhui.cloud, "Selectively Forward Prometheus Metrics From Agents to AMP": 700M samples -> US$65, i.e.
# $0.93/10M); the collector's per-sample charge is not in the estimate. Re-check against the page or the Price
# List API (service code AmazonPrometheus) before relying on them.
# The render estimates ingestion at `AMP_ESTIMATE_SAMPLES_PER_SECOND` (about 30,000 active series scraped every
# 30 s: a few GPU nodes with DCGM's default counters, kube-state-metrics and a few serving pods) and storage at
# `AMP_BYTES_PER_SAMPLE` (Prometheus's compressed TSDB stores about 1-2 bytes a sample).
AMP_PRICES_DATE: Final = "2026-11-26"
AMP_INGESTION_PER_10M_SAMPLES_USD: Final = "0.90"
AMP_STORAGE_GB_MONTH_USD: Final = "0.03"
AMP_COLLECTOR_HOURLY_USD: Final = "0.04"
AMP_ESTIMATE_SAMPLES_PER_SECOND: Final = 1000
AMP_BYTES_PER_SAMPLE: Final = 2
# Amazon CloudWatch Container Insights with enhanced observability for EKS (`observability.metrics: cloudwatch`),
# USD, us-east-1: billed per observation (a data point the agent collects), not per metric or log byte (CloudWatch
# user guide, "Container Insights with enhanced observability metrics" for EKS, stored copy read 2026-11-26, says
# "charged per observation"; the figure per million is from aws.amazon.com/cloudwatch/pricing as known on
# 2026-11-26 and NOT read from the page in this session: an estimate, re-check it). Metric alarms per alarm-month
# (standard resolution) and dashboards per dashboard-month (the first 3 of an account are free; counted here).
# `CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE` is ours: about 60 node-level data points plus about 10 pods with
# about 25 pod and container data points each, once a minute (the metric tables of that page); GPU nodes add
# about 10 per GPU.
CLOUDWATCH_PRICES_DATE: Final = "2026-11-26"
CLOUDWATCH_PER_MILLION_OBSERVATIONS_USD: Final = "0.21"
CLOUDWATCH_ALARM_MONTHLY_USD: Final = "0.10"
CLOUDWATCH_DASHBOARD_MONTHLY_USD: Final = "3.00"
CLOUDWATCH_OBSERVATIONS_PER_NODE_MINUTE: Final = 310
HOURS_PER_MONTH: Final = 730  # AWS's own convention for monthly figures (pricing calculator)
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


# --- Dated pins: what ages, and what Renovate watches ------------------------------------------------
# Every image and chart that gpuplane installs by default is a `Pin`: its release date, the vendor's end of
# support or patch where one is published, and what was read to choose it. `gpuplane render` and
# `gpuplane preflight` warn when a default the stack uses is past its end of support on `today()`, and a
# test fails on the real calendar (tests/manifests/test_pins.py), so an aged default is noticed without
# anyone re-reading upstream by hand. renovate.json's regex managers find each pin by the first four
# fields below, written in this order on their own lines (`datasource`, `name`, `package`, `version`, then
# `registry` for Helm charts): keep that layout, or the Renovate test fails.
PIN_DATASOURCES: Final = ("helm", "docker", "github-tags")
"""Renovate datasources of the pins: Helm chart repositories, container registries, GitHub release tags."""


@dataclass(frozen=True)
class Pin:
    """One upstream release gpuplane uses by default, with the dates that say when it ages."""

    datasource: str
    """Where Renovate looks for newer releases: one of PIN_DATASOURCES."""
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
        if self.datasource not in PIN_DATASOURCES:
            raise ValueError(f"pin '{self.name}': datasource '{self.datasource}' is not one of {PIN_DATASOURCES}")
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

    def past_end_of_support(self, on: datetime.date | None = None) -> bool:
        """Whether the vendor's end of support or patch is reached on `on` (default `today()`)."""
        if self.end_of_support is None:
            return False
        return (on or today()) >= datetime.date.fromisoformat(self.end_of_support)


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
# Add-on versions: looked up per Kubernetes minor at `pulumi up` (`aws.eks.get_addon_version`, not most recent:
# the version EKS marks default for the minor, as terraform-aws-eks resolves them), never pinned here: a fixed
# version is valid for only a few minors, AWS publishes eksbuilds every few weeks, Renovate cannot read them and
# no credential-free source lists them. Every add-on then carries `addonVersion` for the stack's minor, so a new
# `kubernetesVersion` moves them too (components/addon_versions.py; the render shows the minor it asked for).
# `gpuplane preflight` reads DescribeAddonVersions for the same minor. Names from the EKS user guide
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
# The Pulumi type token of a Helm release (pulumi-kubernetes `helm.v3.Release`): how the render, the wiring checks
# and the cost estimate find the charts in a recorded plan.
HELM_RELEASE: Final = "kubernetes:helm.sh/v3:Release"

# --- Control plane logging (botocore `eks` model, shape LogType) ------------------------------------
CONTROL_PLANE_LOG_TYPES: Final = ("api", "audit", "authenticator", "controllerManager", "scheduler")

# --- AWS managed IAM policies ------------------------------------------------------------------------
POLICY_EKS_CLUSTER: Final = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
POLICY_EKS_WORKER_NODE: Final = "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
# Pull-only is the narrower successor of ContainerRegistryReadOnly for nodes (EKS user guide, node IAM role).
POLICY_ECR_PULL_ONLY: Final = "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly"
POLICY_EKS_CNI: Final = "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
# The CloudWatch agent's role (`observability.metrics: cloudwatch`): the AWS-managed policy the add-on's documentation
# attaches (PutMetricData, the log-group calls for its performance log events, EC2 Describe* for node metadata);
# AWS keeps it in step with the agent's releases, which a narrower inline policy of ours would have to follow.
POLICY_CLOUDWATCH_AGENT: Final = "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"
ACCESS_POLICY_CLUSTER_ADMIN: Final = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"

# --- Labels, taints and autoscaler tags (EKS user guide; terraform-aws-eks; autoscaler #5278) ---------
GPU_PRESENT_LABEL: Final = "nvidia.com/gpu.present"
GPU_RESOURCE: Final = "nvidia.com/gpu"


class TaintSpec(NamedTuple):
    """A Kubernetes node taint as (key, value, effect), in Kubernetes' spelling of the effect."""

    key: str
    value: str
    effect: str


# The taint every GPU node group carries unless its `gpuTaint` is false: only pods that tolerate it (GPU
# workloads, the GPU operator's daemons) land on GPU nodes, so CPU pods never take a GPU node's slots. The
# schema adds it to a group's taints (`NodeGroupArgs.all_taints`); `scheduling.gpu_tolerations()` is the one
# toleration of it. Keyed by the GPU resource name, as EKS's ExtendedResourceToleration tolerates it for
# `nvidia.com/gpu` requests.
GPU_TAINT: Final = TaintSpec(key=GPU_RESOURCE, value="true", effect="NoSchedule")
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
# --- EBS CSI driver: the in-cluster Prometheus's volume (`observability.metrics: prometheus`) ---------------------
# The `aws-ebs-csi-driver` EKS add-on (EKS user guide "ebs-csi", "Store Kubernetes volumes with Amazon EBS"), its
# controller's service account, and the AWS-managed policy the guide attaches to its role (as the EKS Blueprints
# and data-on-eks do); the version is EKS's default for the cluster, like every add-on here.
ADDON_EBS_CSI: Final = "aws-ebs-csi-driver"
EBS_CSI_PROVISIONER: Final = "ebs.csi.aws.com"
EBS_CSI_CONTROLLER_SA: Final = "ebs-csi-controller-sa"
EBS_CSI_NAMESPACE: Final = "kube-system"
POLICY_EBS_CSI: Final = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"

# --- NVIDIA GPU stack (NVIDIA k8s-device-plugin and GPU Operator docs) ----------------------------
NVIDIA_NAMESPACE: Final = "nvidia-gpu"
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
DCGM_EXPORTER_PORT: Final = 9400

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
CLUSTER_AUTOSCALER_SA: Final = "cluster-autoscaler"
# Its release (components/autoscaler.py) and the metrics endpoint the chart puts in front of it (chart 9.59.0,
# templates/_helpers.tpl `cluster-autoscaler.fullname`: `<release>-<cloudProvider>-cluster-autoscaler` when that
# differs from the release name; templates/service.yaml: port `service.portName` "http" -> 8085). The autoscaler
# serves `/metrics` on `--address` (default ":8085") with a plain `http.ListenAndServe` and no authentication
# (cluster-autoscaler/main.go and config/flags/flags.go at cluster-autoscaler-1.32.7 ... 1.36.1, read 2026-11-26).
CLUSTER_AUTOSCALER_RELEASE: Final = "cluster-autoscaler"
CLUSTER_AUTOSCALER_NAMESPACE: Final = "kube-system"
CLUSTER_AUTOSCALER_SERVICE: Final = f"{CLUSTER_AUTOSCALER_RELEASE}-aws-cluster-autoscaler"
CLUSTER_AUTOSCALER_METRICS_PORT: Final = 8085
CLUSTER_AUTOSCALER_METRICS_PORT_NAME: Final = "http"
CLUSTER_AUTOSCALER_IMAGE_REPOSITORY: Final = "registry.k8s.io/autoscaling/cluster-autoscaler"


def _autoscaler_source(commit: str, released: str) -> str:
    return (
        f"kubernetes/autoscaler tag cluster-autoscaler-<version> ({commit}, {released}), the newest patch of its minor "
        "in the mirror of 2026-08-22."
    )


_AUTOSCALER_SUPPORT: Final = (
    "None published: an autoscaler minor follows its Kubernetes minor, whose EKS dates are KUBERNETES_VERSIONS "
    "(the support-window rule of the cluster config refuses a version past them)."
)


# The autoscaler's minor must match the cluster's: per minor, the newest patch tag of kubernetes/autoscaler
# (`cluster-autoscaler-<v>` tags; Renovate keeps each pin within its minor). 1.35.2+ and 1.36.1+ carry the
# ProvisioningRequest fix (autoscaler #8855) that the queue (Kueue) needs.
CLUSTER_AUTOSCALER_IMAGE_PINS: Final[dict[str, Pin]] = {
    "1.32": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.32",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.32.7",
        released="2026-02-13",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source=_autoscaler_source("f645beb", "2026-02-13"),
    ),
    "1.33": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.33",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.33.6",
        released="2026-07-22",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source=_autoscaler_source("be4b5a1", "2026-07-22"),
    ),
    "1.34": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.34",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.34.5",
        released="2026-07-22",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source=_autoscaler_source("cb2123e", "2026-07-22"),
    ),
    "1.35": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.35",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.35.2",
        released="2026-07-22",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source=_autoscaler_source("2d42588", "2026-07-22"),
    ),
    "1.36": Pin(
        datasource="docker",
        name="cluster-autoscaler-1.36",
        package="registry.k8s.io/autoscaling/cluster-autoscaler",
        version="v1.36.1",
        released="2026-07-22",
        read="2026-11-28",
        support=_AUTOSCALER_SUPPORT,
        source=_autoscaler_source("35e8a28", "2026-07-22"),
    ),
}
CLUSTER_AUTOSCALER_IMAGES: Final[dict[str, str]] = {m: p.version for m, p in CLUSTER_AUTOSCALER_IMAGE_PINS.items()}


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
        """12 for CUDA 12.x: what decides the driver it needs (CUDA_MIN_DRIVER)."""
        return int(self.cuda.split(".")[0]) if self.cuda else None


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
# kubernetes-sigs/jobset Helm chart (OCI; `helm install jobset oci://registry.k8s.io/jobset/charts/jobset
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
JOBSET_CHART: Final = "oci://registry.k8s.io/jobset/charts/jobset"
JOBSET_VERSION: Final = JOBSET.version.removeprefix("v")
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


# --- The GPU stack against a Kubernetes minor (what `gpuplane preflight` checks before an upgrade) --------------
# part -> (oldest minor, newest minor, source); "" where upstream publishes no bound. A target outside the range
# warns (newest) or fails (oldest); the autoscaler's image per minor is CLUSTER_AUTOSCALER_IMAGE_PINS.
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
    newer="v0.19.4 (promoted 2026-09-10, kubernetes/k8s.io#9917) and v0.20.0 exist, but the stored copy of "
    "kubernetes-sigs/kueue ends 2026-08-22 (c90ed70; tags end at v0.19.2), so their charts and CRDs cannot be read, "
    "and the queue's objects are checked against the pinned release's CRDs.",
)
KUEUE_CHART: Final = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_VERSION: Final = KUEUE.version.removeprefix("v")
KUEUE_IMAGE_REPOSITORY: Final = "registry.k8s.io/kueue/kueue"
KUEUE_IMAGE_TAG: Final = KUEUE.version
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
# The CRD is not in the chart: `cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml`
# at the image's tag, shipped in the package (manifests/crds/, manifests/queue.py `provisioning_request_crd`;
# served v1 (storage) and v1beta1 at 1.32.7 ... 1.36.1). Kueue checks once at start-up whether the API exists
# (cmd/kueue/main.go, ServerSupportsProvisioningRequest), so the CRD comes first.
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
EFA_RESOURCE: Final = "vpc.amazonaws.com/efa"
LABEL_EFA: Final = "gpuplane.io/efa"
# `efa-only` interfaces (no IP address) need the VPC CNI at 1.18.5 or later (EFA user guide, "EFA-only").
VPC_CNI_MIN_FOR_EFA_ONLY: Final = "v1.18.5"

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
MONITORING_NAMESPACE: Final = "monitoring"
MONITORING_API: Final = "monitoring.coreos.com/v1"
GRAFANA_DASHBOARD_LABEL: Final = "grafana_dashboard"
# EKS node monitoring agent add-on (aws/eks-node-monitoring-agent v1.7.0, 2026-08-04; chart values.yaml and
# configuration.schema.json): sets the NodeConditions node auto repair acts on. Its node agent tolerates every
# taint; its `dcgm-server` DaemonSet (nv-hostengine, localhost:5555 on the node) has no tolerations by default,
# so it is given ours (`dcgmAgent.tolerations`, in the add-on's configuration schema).
ADDON_NODE_MONITORING_AGENT: Final = "eks-node-monitoring-agent"
# Amazon CloudWatch Observability add-on (`observability.metrics: cloudwatch`): the CloudWatch agent (Container
# Insights with enhanced observability), its operator and its own dcgm-exporter on NVIDIA instance types, built
# from aws-observability/helm-charts charts/amazon-cloudwatch-observability (chart 6.4.0 at 71a298f, 2026-08-07:
# values.yaml `agent`, `containerLogs`, `dcgmExporter`; templates/linux/dcgm-exporter-daemonset.yaml). Not
# pinned: like every EKS add-on of the stack, EKS installs its default version for the cluster's Kubernetes
# version, and `gpuplane preflight` asks DescribeAddonVersions whether the region offers it. The agent's service
# account in the add-on's namespace is the one its Pod Identity association names.
ADDON_CLOUDWATCH_OBSERVABILITY: Final = "amazon-cloudwatch-observability"
CLOUDWATCH_NAMESPACE: Final = "amazon-cloudwatch"
CLOUDWATCH_AGENT_SA: Final = "cloudwatch-agent"
CONTAINER_INSIGHTS_NAMESPACE: Final = "ContainerInsights"
DCGM_HOSTENGINE_PORT: Final = 5555
# TF Serving's Prometheus endpoint, on the REST port when started with `--monitoring_config_file`
# (tensorflow_serving/config/monitoring_config.proto).
TF_SERVING_METRICS_PATH: Final = "/monitoring/prometheus/metrics"
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
KEDA_NAMESPACE: Final = "keda"
KEDA_API: Final = "keda.sh/v1alpha1"
# The operator's service account (keda/values.yaml `serviceAccount.operator.name`, 1444d00, chart 2.20.2): the one
# its Pod Identity association names when KEDA reads Amazon Managed Service for Prometheus.
KEDA_OPERATOR_SA: Final = "keda-operator"
# The ClusterTriggerAuthentication the ScaledObjects name with `observability.metrics: managedPrometheus`.
KEDA_AMP_AUTH: Final = "gpuplane-amp"
# The stack's Prometheus Service: `<fullname>-prometheus` on 9090, fullname `kube-prometheus-stack` for the release
# of that name (kube-prometheus-stack templates/prometheus/service.yaml).
PROMETHEUS_URL: Final = f"http://kube-prometheus-stack-prometheus.{MONITORING_NAMESPACE}.svc:9090"

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
