"""The well-known names and numbers the platform's objects agree on, each defined once.

Labels, taints, resource names, namespaces, ports, API versions, add-on names, AMI types, log types, managed
policy ARNs and type tokens. Why a module of their own: these values are fixed by an upstream (EKS, AWS IAM,
Kubernetes, a chart's templates) or chosen once by gpuplane, and they do not age the way a pinned release does,
so they live apart from the dated pins (`versions.py`, which Renovate bumps) and from the rules that judge the
pins (`lifecycle.py`). Each value names where it was checked. The name follows Kubernetes' own "well-known
labels, annotations and taints"; not `platform`, which is the `Platform` component (`components/platform.py`)
and a module of the standard library. It lives in `manifests`, the lowest layer, because the Kubernetes
builders, the schema, the plan, the components and `infra` all read it; it imports nothing of gpuplane.
"""

from __future__ import annotations

from typing import Final, NamedTuple

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
# the version EKS marks default for the minor, as terraform-aws-eks resolves them), never pinned in versions.py: a
# fixed version is valid for only a few minors, AWS publishes eksbuilds every few weeks, Renovate cannot read them
# and no credential-free source lists them. Every add-on then carries `addonVersion` for the stack's minor, so a new
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
DCGM_EXPORTER_PORT: Final = 9400

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

# --- TensorFlow Serving (tensorflow/serving: the image's binary, its gRPC and REST ports) -------------------
TF_SERVING_BINARY: Final = "/usr/bin/tensorflow_model_server"
TF_SERVING_GRPC_PORT: Final = 8500
TF_SERVING_REST_PORT: Final = 8501
# TF Serving's Prometheus endpoint, on the REST port when started with `--monitoring_config_file`
# (tensorflow_serving/config/monitoring_config.proto).
TF_SERVING_METRICS_PATH: Final = "/monitoring/prometheus/metrics"

# --- JobSet (kubernetes-sigs/jobset): its chart, installed only when training is declared ---------------------
# `helm install jobset oci://registry.k8s.io/jobset/charts/jobset --version <tag without v>`.
JOBSET_CHART: Final = "oci://registry.k8s.io/jobset/charts/jobset"
JOBSET_NAMESPACE: Final = "jobset-system"
# metrics-server: EKS community add-on name (EKS user guide "community add-ons"); needed by HPAs.
ADDON_METRICS_SERVER: Final = "metrics-server"

# --- Kueue: the training queue -----------------------------------------------------------------------
# Chart `oci://registry.k8s.io/kueue/charts/kueue` (charts/kueue/README.md), version = the tag without the `v`;
# its values.yaml in git points at the staging image (`us-central1-docker.pkg.dev/k8s-staging-images/kueue/
# kueue:release-0.19`): hack/helm-chart-package.sh rewrites it to `registry.k8s.io/kueue/kueue:<tag>` with
# pullPolicy IfNotPresent when packaging a release, and we set the same explicitly. API `kueue.x-k8s.io/v1beta2`
# (the storage version since v0.16; apis/kueue/v1beta2, config/components/crd/bases at the tag).
KUEUE_CHART: Final = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_IMAGE_REPOSITORY: Final = "registry.k8s.io/kueue/kueue"
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

# --- EFA: Elastic Fabric Adapter for multi-node training -----------------------------------------------
# The extended resource the EFA device plugin registers (aws/eks-charts stable/aws-efa-k8s-device-plugin), and
# the label of ours its DaemonSet's nodeSelector names, so it runs on EFA groups only.
EFA_RESOURCE: Final = "vpc.amazonaws.com/efa"
LABEL_EFA: Final = "gpuplane.io/efa"

# --- Observability and node health -----------------------------------------------------------------------
# kube-prometheus-stack's namespace, the Prometheus operator's API, and Grafana's dashboard sidecar label
# (values.yaml `grafana.sidecar.dashboards.label: grafana_dashboard`).
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
# KEDA (kedacore/charts keda, API `keda.sh/v1alpha1`: keda/templates/crds/crd-scaledobjects.yaml).
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
