"""GpuEnablement component: what makes GPUs allocatable — device plugin or GPU Operator, GFD, DCGM."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import yaml

from gpuplane.components import kube_objects
from gpuplane.components.control_plane import ControlPlane, deprecated_context, deprecated_keyword
from gpuplane.components.plan.gpu_nodes import GpuPlan
from gpuplane.manifests import observability, scheduling, versions, wellknown
from gpuplane.manifests.namespaces import namespace


def _dump(config: dict[str, Any]) -> str:
    return yaml.safe_dump(config, sort_keys=True)


def _tolerations(startup_taints: Sequence[str]) -> list[dict[str, str]]:
    """Tolerate the GPU taint, and startup taints of other agents (these pods need no EFS)."""
    tolerations = [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        *scheduling.gpu_tolerations(),
    ]
    tolerations += [{"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints]
    return tolerations


def device_plugin_values(plan: GpuPlan, startup_taints: Sequence[str] = ()) -> dict[str, Any]:
    """Values of the nvidia-device-plugin chart: GPU nodes of plugin-managed groups only, GFD on.

    Affinity is on gpuplane's own `gpuplane.io/device-plugin=true` label, which only AL2023 NVIDIA groups
    carry: never on CPU nodes (eksctl #8858's crash loop), never on Bottlerocket (it runs its own
    plugin), and never waiting on NFD labels that are not there yet (device-plugin #708).
    """
    tolerations = _tolerations(startup_taints)
    return {
        "config": {"map": {name: _dump(cfg) for name, cfg in plan.plugin_configs().items()}, "default": "default"},
        "gfd": {"enabled": True},
        "nfd": {
            "enabled": True,
            # NFD's worker labels CPU features (AVX-512...) on every node, GPU nodes included; the chart's
            # default toleration is for `nvidia.com/gpu=present`, not the `nvidia.com/gpu=true` taint we use.
            "worker": {"tolerations": tolerations},
        },
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "gpuplane.io/device-plugin", "operator": "In", "values": ["true"]}
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": tolerations,
        "priorityClassName": "system-node-critical",
    }


def gpu_operator_values(
    plan: GpuPlan,
    *,
    dcgm_exporter: bool,
    startup_taints: Sequence[str] = (),
    metrics: bool = False,
    remote_hostengine: bool = False,
) -> dict[str, Any]:
    """Values of the gpu-operator chart, set not to fight the EKS NVIDIA AMIs, which have driver and toolkit.

    The operator's driver and toolkit containers stay off (GPU Operator docs: on EKS accelerated AMIs set
    `driver.enabled=false`, `toolkit.enabled=false`); it brings the device plugin, GFD, the MIG manager
    and DCGM, on the AMI's driver. v26.7.0 turned `dcgmExporter.serviceMonitor.enabled` on by default; a
    ServiceMonitor needs the Prometheus operator's CRD, which this cluster does not have (the operator then
    only skips it, controllers/object_controls.go at v26.7.0), so it is set off: the exporter's Service is
    what a scraper reads, as with the standalone dcgm-exporter chart.
    """
    strategies = {g.sharing.mig.strategy for g in plan.gpu_groups if g.sharing.mig}
    return {
        "driver": {"enabled": False},
        "toolkit": {"enabled": False},
        "devicePlugin": {
            "config": {
                "create": True,
                "name": "gpuplane-device-plugin-config",
                "default": "default",
                "data": {name: _dump(cfg) for name, cfg in plan.plugin_configs().items()},
            }
        },
        "gfd": {"enabled": True},
        "nfd": {"enabled": True},
        # serviceMonitor written on or off: v26.7 turns it on by default, which needs the Prometheus CRDs.
        "dcgmExporter": {
            "enabled": dcgm_exporter,
            "serviceMonitor": observability.dcgm_service_monitor_values(metrics),
            **observability.dcgm_exporter_metrics_values(remote_hostengine=remote_hostengine, operator=True),
            **observability.dcgm_counters_values(operator=True),
        },
        "migManager": {"enabled": plan.mig},
        "mig": {"strategy": "mixed" if "mixed" in strategies else "single"},
        "daemonsets": {"tolerations": _tolerations(startup_taints), "priorityClassName": "system-node-critical"},
    }


def dcgm_exporter_values(
    startup_taints: Sequence[str] = (), *, metrics: bool = False, remote_hostengine: bool = False
) -> dict[str, Any]:
    """Values of the dcgm-exporter chart: GPU nodes only; never the chart's ServiceMonitor.

    The chart's ServiceMonitor would make the release wait for the stack's CRDs; with Prometheus the
    Observability component applies the same one after the stack (`observability.dcgm_service_monitor`), so
    `metrics` changes nothing here. `remote_hostengine`: use the EKS node monitoring agent's DCGM host engine,
    one engine per node (`manifests.observability.dcgm_exporter_metrics_values`).
    """
    env = observability.dcgm_exporter_metrics_values(remote_hostengine=remote_hostengine)["env"]
    return {
        "nodeSelector": {wellknown.GPU_PRESENT_LABEL: "true"},
        "tolerations": _tolerations(startup_taints),
        "serviceMonitor": observability.dcgm_service_monitor_values(False),
        "service": {"port": wellknown.DCGM_EXPORTER_PORT},
        **observability.dcgm_counters_values(operator=False),
        **({"extraEnv": env} if env else {}),
    }


def efa_device_plugin_values(startup_taints: Sequence[str] = ()) -> dict[str, Any]:
    """Values of the aws-efa-k8s-device-plugin chart: on EFA groups only, tolerating the GPU taint.

    The chart's own required affinity lists every EFA instance type; our nodeSelector narrows it to the
    groups with `efa: true` (an EFA-capable type in a group without EFA interfaces has nothing to offer).
    """
    return {
        "nodeSelector": {wellknown.LABEL_EFA: "true"},
        "tolerations": [
            *scheduling.gpu_tolerations(),
            *({"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints),
        ],
    }


class GpuEnablement(pulumi.ComponentResource):
    """Installs what the cluster's GPU groups need, once per cluster, in one privileged namespace.

    The namespace `nvidia-gpu` is the only one relaxed to the `privileged` Pod Security level: the device
    plugin, GFD, NFD and DCGM exporter need host access. Nothing is installed when no group needs it
    (Bottlerocket-only clusters run the AMI's own plugin).
    """

    releases: list[str]

    def __init__(
        self,
        name: str,
        plan: GpuPlan | None = None,
        *,
        cluster: ControlPlane,
        dcgm_exporter: bool = True,
        metrics: bool = False,
        remote_hostengine: bool = False,
        after: Sequence[pulumi.Resource] | None = None,
        kubernetes_version: str | None = None,
        startup_taints: Sequence[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`plan`: what to install for which groups (default: the node groups added to `cluster` so far).

        `dcgm_exporter`: GPU metrics from every GPU node (default on). `metrics`: the Prometheus Operator's CRDs
        exist (its release among `after`): the exporter gets a ServiceMonitor. `remote_hostengine`: the node
        monitoring agent runs the DCGM host engine on the GPU nodes; the exporter connects to it.
        `after`: what the charts wait for (default `cluster.services_ready`: coredns and the system groups).
        Never the GPU groups: a DaemonSet with no GPU node yet is ready at once, and a GPU node's boot must not
        hold up `up`.
        `kubernetes_version`, `startup_taints`: deprecated, the cluster's.
        """
        if kubernetes_version is not None:
            deprecated_context("GpuEnablement", "kubernetes_version", kubernetes_version, cluster.kubernetes_version)
        if startup_taints is None:
            startup_taints = cluster.startup_taint_keys
        else:
            deprecated_keyword("GpuEnablement", "startup_taints", "pass startup_taints to Cluster(...)")
        plan = plan if plan is not None else GpuPlan(tuple(cluster.node_group_args))
        after = cluster.services_ready if after is None else after
        super().__init__("gpuplane:index:GpuEnablement", name, None, opts)
        charts: list[tuple[str, str, str, str, dict[str, Any]]] = []
        if plan.operator:
            values = gpu_operator_values(
                plan,
                dcgm_exporter=dcgm_exporter,
                startup_taints=startup_taints,
                metrics=metrics,
                remote_hostengine=remote_hostengine,
            )
            charts.append(
                (
                    "gpu-operator",
                    versions.GPU_OPERATOR_CHART,
                    versions.GPU_OPERATOR_REPO,
                    versions.GPU_OPERATOR_VERSION,
                    values,
                )
            )
        elif plan.standalone_plugin:
            values = device_plugin_values(plan, startup_taints)
            charts.append(
                (
                    "nvidia-device-plugin",
                    versions.DEVICE_PLUGIN_CHART,
                    versions.DEVICE_PLUGIN_REPO,
                    versions.DEVICE_PLUGIN_VERSION,
                    values,
                )
            )
        if dcgm_exporter and not plan.operator and plan.gpu_groups:
            charts.append(
                (
                    "dcgm-exporter",
                    versions.DCGM_EXPORTER_CHART,
                    versions.DCGM_EXPORTER_REPO,
                    versions.DCGM_EXPORTER_VERSION,
                    dcgm_exporter_values(startup_taints, metrics=metrics, remote_hostengine=remote_hostengine),
                )
            )
        if any(g.efa for g in plan.gpu_groups):
            charts.append(
                (
                    "aws-efa-k8s-device-plugin",
                    versions.EFA_DEVICE_PLUGIN_CHART,
                    versions.EFA_DEVICE_PLUGIN_REPO,
                    versions.EFA_DEVICE_PLUGIN_VERSION,
                    efa_device_plugin_values(startup_taints),
                )
            )
        self.releases = [release for release, *_ in charts]
        if charts:
            ns_doc = namespace(wellknown.NVIDIA_NAMESPACE, "privileged", cluster.kubernetes_version)
            ns = kube_objects.apply(
                f"{name}-ns",
                ns_doc,
                pulumi.ResourceOptions(parent=self, provider=cluster.provider, deleted_with=cluster.resource),
            )
            for release, chart, repo, version, values in charts:
                kube_objects.HelmRelease(
                    f"{name}-{release}",
                    name=release,
                    namespace=wellknown.NVIDIA_NAMESPACE,
                    chart=chart,
                    version=version,
                    repo=repo,
                    values=values,
                    create_namespace=False,
                    opts=pulumi.ResourceOptions(
                        parent=self,
                        provider=cluster.provider,
                        depends_on=[ns, *after],
                        deleted_with=cluster.resource,
                    ),
                )
        self.register_outputs({"releases": self.releases})
