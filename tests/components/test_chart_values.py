"""The Helm values of the NVIDIA charts and the cluster-autoscaler's use only keys the pinned chart documents.

A chart ignores a value it does not know without a word, so a renamed key after a bump would silently stop
working. The documented keys below were read in each chart at the pinned tag (its values.yaml, or the template
or Chart.yaml condition that reads a key the values.yaml leaves out), and are recorded per version: bumping a
pin without reading the new chart fails here until the keys are read again. Maps whose content is ours
(a node selector, an affinity, the device plugin's config files) stop the walk.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.infra import render
from gpuplane.infra.mockrun import Recording
from gpuplane.manifests import versions

# (chart, version) -> {documented key path: where it is documented at that tag}. Read 2026-11-26.
DOCUMENTED: dict[tuple[str, str], dict[str, str]] = {
    # NVIDIA/gpu-operator tag v26.7.0 (10ee5b3, 2026-08-20), deployments/gpu-operator/.
    ("gpu-operator", "v26.7.0"): {
        "driver.enabled": "values.yaml",
        "toolkit.enabled": "values.yaml",
        "devicePlugin.config.create": "values.yaml",
        "devicePlugin.config.name": "values.yaml",
        "devicePlugin.config.default": "values.yaml",
        "devicePlugin.config.data": "templates/plugin_config.yaml (data: toYaml .Values.devicePlugin.config.data)",
        "gfd.enabled": "values.yaml",
        "nfd.enabled": "values.yaml (and the node-feature-discovery dependency's condition)",
        "dcgmExporter.enabled": "values.yaml",
        "dcgmExporter.serviceMonitor.enabled": "values.yaml (true by default since v26.7.0)",
        # Read by issue 29 at the same tag (values.yaml `dcgmExporter:`): interval 15s, honorLabels false, env [].
        "dcgmExporter.serviceMonitor.interval": "values.yaml",
        "dcgmExporter.serviceMonitor.honorLabels": "values.yaml",
        "dcgmExporter.env": "values.yaml",
        # Read 2026-11-28 at the same tag: values.yaml `dcgmExporter:` (hostNetwork, serviceMonitor.relabelings,
        # the commented `config:` block), templates/clusterpolicy.yaml (config.name, hostNetwork copied into the
        # ClusterPolicy) and templates/dcgm_exporter_config.yaml (config.create and config.data make the ConfigMap).
        "dcgmExporter.hostNetwork": "values.yaml",
        "dcgmExporter.serviceMonitor.relabelings": "values.yaml",
        "dcgmExporter.config.name": "values.yaml (commented example), templates/clusterpolicy.yaml",
        "dcgmExporter.config.create": "templates/dcgm_exporter_config.yaml",
        "dcgmExporter.config.data": "templates/dcgm_exporter_config.yaml",
        "migManager.enabled": "values.yaml",
        "mig.strategy": "values.yaml",
        "daemonsets.tolerations": "values.yaml",
        "daemonsets.priorityClassName": "values.yaml",
    },
    # NVIDIA/k8s-device-plugin: chart 0.20.1's tag is newer than the stored copy; read at v0.20.0 (1b826ac),
    # deployments/helm/nvidia-device-plugin/, the patch release before it.
    ("nvidia-device-plugin", "0.20.1"): {
        "config.map": "values.yaml",
        "config.default": "values.yaml",
        "gfd.enabled": "values.yaml",
        "nfd.enabled": "Chart.yaml (dependency node-feature-discovery 0.19.0, condition nfd.enabled,gfd.enabled)",
        "nfd.worker.tolerations": "values.yaml",
        "affinity": "values.yaml",
        "tolerations": "values.yaml",
        "priorityClassName": "values.yaml",
    },
    # NVIDIA/dcgm-exporter tag 4.5.3-4.8.2 (691c927), deployment/values.yaml.
    ("dcgm-exporter", "4.8.2"): {
        "nodeSelector": "values.yaml",
        "tolerations": "values.yaml",
        "serviceMonitor.enabled": "values.yaml (true by default)",
        # Read by issue 29 at the same tag: serviceMonitor.interval (15s), .honorLabels (false), extraEnv ([]).
        "serviceMonitor.interval": "values.yaml",
        "serviceMonitor.honorLabels": "values.yaml",
        "extraEnv": "values.yaml",
        "service.port": "values.yaml",
        # Read 2026-11-28 at the same tag: the commented `customMetrics` (templates/metrics-configmap.yaml writes it
        # as the counters file) and serviceMonitor.relabelings (templates/service-monitor.yaml).
        "customMetrics": "values.yaml (commented example), templates/metrics-configmap.yaml",
        "serviceMonitor.relabelings": "values.yaml",
    },
    # kubernetes/autoscaler tag cluster-autoscaler-chart-9.59.0 (5a0b98e), charts/cluster-autoscaler/values.yaml.
    ("cluster-autoscaler", "9.59.0"): {
        "tolerations": "values.yaml",
        "cloudProvider": "values.yaml",
        "awsRegion": "values.yaml",
        "autoDiscovery.clusterName": "values.yaml",
        "autoDiscovery.tags": "values.yaml",
        "image.repository": "values.yaml",
        "image.tag": "values.yaml",
        "rbac.serviceAccount.create": "values.yaml",
        "rbac.serviceAccount.name": "values.yaml",
        "rbac.additionalRules": "values.yaml",
        "priorityClassName": "values.yaml",
        "extraArgs": "values.yaml (each key becomes --key=value, templates/deployment.yaml)",
        # Read by issue 29: false by default; written false (gpuplane applies its own after the stack's CRD).
        "serviceMonitor.enabled": "values.yaml",
    },
}
# Keys whose value is a map of our own (names chosen by us or by Kubernetes, not by the chart).
FREE_FORM = {
    "devicePlugin.config.data",
    "config.map",
    "affinity",
    "nodeSelector",
    "extraArgs",
    "serviceMonitor.selector",
}


def value_paths(values: Any, prefix: str = "") -> set[str]:
    """Dotted paths of the leaves, stopping at free-form maps and at lists (a list is one value)."""
    if not isinstance(values, dict) or not values or prefix in FREE_FORM:
        return {prefix}
    found: set[str] = set()
    for key, value in values.items():
        found |= value_paths(value, f"{prefix}.{key}" if prefix else key)
    return found


def test_the_documented_keys_are_for_the_pinned_versions() -> None:
    """A bump without reading the new chart's keys fails here (renovate.json's NVIDIA group points at it)."""
    charts = (versions.GPU_OPERATOR, versions.DEVICE_PLUGIN, versions.DCGM_EXPORTER, versions.CLUSTER_AUTOSCALER)
    pinned = {(p.package, p.version) for p in charts}
    assert set(DOCUMENTED) == pinned


OPERATOR_STACK: dict[str, Any] = {
    "nodeGroups": [
        {"name": "system", "instanceTypes": ["m6i.large"]},
        {
            "name": "op",
            "kind": "gpu",
            "instanceTypes": ["p4d.24xlarge"],
            "driver": "operator",
            "sharing": {"mig": {"profile": "all-1g.5gb"}},
        },
    ]
}


def releases(recording: Recording) -> dict[str, dict[str, Any]]:
    return {r["chart"]: r for r in render.helm_releases(recording).values()}


@pytest.mark.parametrize("chart", ["nvidia-device-plugin", "dcgm-exporter", "cluster-autoscaler"])
def test_dev_stack_values_use_documented_keys(dev_run: Recording, chart: str) -> None:
    release = releases(dev_run)[chart]
    documented = DOCUMENTED[(chart, release["version"])]
    assert value_paths(release["values"]) - set(documented) == set()


def test_operator_values_use_documented_keys(run_platform: Any) -> None:
    release = releases(run_platform(OPERATOR_STACK))["gpu-operator"]
    documented = DOCUMENTED[("gpu-operator", release["version"])]
    assert value_paths(release["values"]) - set(documented) == set()
    # v26.7.0 turns the ServiceMonitor on by default; gpuplane writes it either way: on where the stack runs the
    # Prometheus operator (metrics on, the default, issue 29), off without it (the CRD would be missing).
    assert release["values"]["dcgmExporter"]["serviceMonitor"]["enabled"] is True
    off = releases(run_platform({**OPERATOR_STACK, "observability": {"metrics": "none"}}))["gpu-operator"]
    assert off["values"]["dcgmExporter"]["serviceMonitor"]["enabled"] is False


def test_an_undocumented_key_is_caught() -> None:
    values = {"dcgmExporter": {"enabled": True, "serviceMonitors": {"enabled": False}}, "devicePlugin": {}}
    assert value_paths(values) - set(DOCUMENTED[("gpu-operator", "v26.7.0")]) == {
        "dcgmExporter.serviceMonitors.enabled",
        "devicePlugin",
    }
