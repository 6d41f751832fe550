"""What a program that composes the components by hand forgot: render's warnings about GPU groups.

Why: a GPU node group alone is an EC2 group with NVIDIA drivers. Without a device plugin its nodes never
advertise `nvidia.com/gpu`, so no GPU pod is ever scheduled; with `minSize: 0` and no cluster autoscaler
nothing ever starts a node. `Platform` installs both; a program that builds its node groups itself (the
README's program, `examples/gpu-cluster`) must add them (`cluster.add_gpu_support()`,
`cluster.add_autoscaler()`), and render says so, naming the group, what is missing and the one-line fix.
Warnings, not errors: a team may run its own device plugin or autoscaler outside the program (then the
warning names what to check).

Bottlerocket NVIDIA groups run the AMI's own device plugin: no device-plugin warning for them, and never
advice to add a second one.
"""

from __future__ import annotations

from gpuplane.infra import mockrun
from gpuplane.manifests import versions, wellknown
from gpuplane.manifests.wellknown import HELM_RELEASE

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AUTOSCALER_COMPONENT = "gpuplane:index:ClusterAutoscaler"
# Charts that install the NVIDIA device plugin (the GPU Operator runs it as one of its operands).
PLUGIN_CHARTS = frozenset({versions.DEVICE_PLUGIN_CHART, versions.GPU_OPERATOR_CHART})


def _group_name(resource: mockrun.RecordedResource) -> str:
    labels = resource.inputs.get("labels") or {}
    return str(labels.get(wellknown.LABEL_NODE_GROUP) or resource.inputs.get("nodeGroupName") or resource.name)


def _is_gpu(resource: mockrun.RecordedResource) -> bool:
    labels = resource.inputs.get("labels") or {}
    return "NVIDIA" in str(resource.inputs.get("amiType", "")) or labels.get("nvidia.com/gpu.present") == "true"


def gpu_wiring_warnings(recording: mockrun.Recording) -> list[str]:
    """One warning per missing piece, naming the GPU groups it leaves without GPUs or without nodes."""
    gpu = [r for r in recording.by_type(NODE_GROUP) if _is_gpu(r)]
    if not gpu:
        return []
    charts = {str(r.inputs.get("chart")) for r in recording.by_type(HELM_RELEASE)}
    warnings: list[str] = []
    plugin_managed = sorted(
        _group_name(r) for r in gpu if not str(r.inputs.get("amiType", "")).startswith("BOTTLEROCKET")
    )
    if plugin_managed and not charts & PLUGIN_CHARTS:
        warnings.append(
            f"GPU node group(s) {', '.join(plugin_managed)}: no NVIDIA device plugin is installed, so their nodes "
            "never advertise nvidia.com/gpu and no GPU pod is scheduled; add cluster.add_gpu_support() after the "
            "node groups (or GpuEnablement('gpu-stack', cluster=cluster): from gpuplane import GpuEnablement), or "
            "build the stack with Platform, which installs it"
        )
    autoscaled = bool(recording.by_type(AUTOSCALER_COMPONENT)) or versions.CLUSTER_AUTOSCALER_CHART in charts
    from_zero = sorted(_group_name(r) for r in gpu if (r.inputs.get("scalingConfig") or {}).get("minSize") == 0)
    if from_zero and not autoscaled:
        warnings.append(
            f"GPU node group(s) {', '.join(from_zero)}: minSize 0 and no cluster autoscaler, so nothing ever starts "
            "a node for a pending GPU pod; add cluster.add_autoscaler() (or ClusterAutoscaler('autoscaler', "
            "cluster=cluster): from gpuplane import ClusterAutoscaler), or give the group minSize >= 1"
        )
    return warnings
