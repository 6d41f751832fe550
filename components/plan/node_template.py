"""What a node group tells EKS and the cluster-autoscaler about its nodes: pure, tested logic.

Why the autoscaler tags: a group at size 0 has no node for the autoscaler to inspect, so it reads the
labels, taints and extended resources a new node would have from tags on the Auto Scaling group. EKS
managed node groups do not copy their labels/taints there (autoscaler #5278, #903; eksctl adds them
with `propagateASGTags`); without them a pending GPU pod never scales a GPU group up from zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from gpuplane.components.config import NodeGroupArgs, Taint, TaintEffect
from gpuplane.components.plan import capacity, gpu_nodes
from gpuplane.manifests import wellknown

# Kubernetes taint effect -> the EKS API's enum (botocore `eks` model, shape TaintEffect).
EKS_TAINT_EFFECTS: Final[dict[TaintEffect, str]] = {
    "NoSchedule": "NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
}


def eks_taints(group: NodeGroupArgs, startup_taints: Sequence[Taint] = ()) -> list[dict[str, str]]:
    """The group's taints, plus startup taints, in the shape `aws.eks.NodeGroup(taints=...)` takes."""
    taints = [*group.all_taints, *(t for t in startup_taints if all(t.key != g.key for g in group.all_taints))]
    return [{"key": t.key, "value": t.value, "effect": EKS_TAINT_EFFECTS[t.effect]} for t in taints]


def eks_writes_too(key: str, cluster_name: str) -> bool:
    """Whether EKS also writes this Auto Scaling group tag: the two discovery tags of every managed node group.

    The EKS user guide ("Simplify node lifecycle with managed node groups"): nodes of a managed node group "are
    automatically tagged for auto-discovery by the Kubernetes Cluster Autoscaler". Deleting our Tag resource of such
    a key (DeleteTags) would also remove EKS's: the autoscaler would stop finding the group, and its IAM condition
    on `k8s.io/cluster-autoscaler/<cluster>` would stop matching. So those are kept when their resource goes.
    """
    prefix = wellknown.CA_TAG_PREFIX
    return key in (f"{prefix}/enabled", f"{prefix}/{cluster_name}")


def autoscaler_tags(group: NodeGroupArgs, cluster_name: str, *, gpu_operator: bool = False) -> dict[str, str]:
    """Tags for the group's Auto Scaling group: discovery plus the node template for scale from zero.

    The GPU resource is what a node really advertises after sharing (8 GPUs time-sliced 4 ways are 32
    `nvidia.com/gpu`), or the autoscaler would misjudge how many pods a new node takes.
    """
    prefix = wellknown.CA_TAG_PREFIX
    tags = {
        f"{prefix}/enabled": "true",
        f"{prefix}/{cluster_name}": "owned",
    }
    for key, value in sorted(node_labels(group, gpu_operator=gpu_operator).items()):
        tags[f"{prefix}/node-template/label/{key}"] = value
    for taint in group.all_taints:
        tags[f"{prefix}/node-template/taint/{taint.key}"] = f"{taint.value}:{taint.effect}"
    if group.kind == "gpu":
        resource = gpu_nodes.gpu_resource_name(group)
        tags[f"{prefix}/node-template/resources/{resource}"] = str(gpu_nodes.allocatable_units(group))
    # EFA interfaces: a pod asking for `vpc.amazonaws.com/efa` must scale an EFA group up from zero too.
    for resource, count in capacity.efa_resources(group).items():
        tags[f"{prefix}/node-template/resources/{resource}"] = str(count)
    tags[f"{prefix}/node-template/label/kubernetes.io/arch"] = "arm64" if group.architecture == "arm64" else "amd64"
    return tags


def node_labels(group: NodeGroupArgs, *, gpu_operator: bool = False) -> dict[str, str]:
    """Every label EKS puts on the group's nodes: the GPU plan's, plus the EFA label of an EFA group."""
    return {**gpu_nodes.node_labels(group, gpu_operator=gpu_operator), **capacity.efa_labels(group)}
