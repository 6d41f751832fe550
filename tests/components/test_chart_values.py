"""Every Helm value gpuplane sets, in every release of every shape of stack, is one the pinned chart reads.

Helm passes a value the chart never reads without a word: a renamed key after a bump, a misspelt one, or one
under a switched-off part (`grafana.*` with `grafana.enabled: false`: Helm drops the disabled subchart) silently
does nothing. The keys each chart reads at its pinned version are in tests/components/chart_keys/ (written by
scripts/chart_keys.py from the chart's values.yaml and templates, and its subcharts', at the pinned tag, with
the source and date in each file); a pin bumped without a new file fails here. Below a path whose default is
an empty map (a node selector, resources), or a map whose content is ours by the chart's design (FREE_FORM),
any key is accepted; a list is one value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuplane.infra import render
from gpuplane.infra.mockrun import Recording
from gpuplane.manifests import versions
from tests.conftest import DEV_CLUSTER

KEYS_DIR = Path(__file__).resolve().parent / "chart_keys"

# Maps whose keys are ours by the chart's design although its default has content: (chart, path) -> why.
FREE_FORM: dict[tuple[str, str], str] = {
    ("cluster-autoscaler", "extraArgs"): "each key becomes a --key=value flag (templates/deployment.yaml)",
    ("nvidia-device-plugin", "affinity"): "a pod affinity, rendered whole",
    ("nvidia-device-plugin", "config.map"): "the config files by name",
    ("gpu-operator", "devicePlugin.config.data"): "the config files by name (templates/plugin_config.yaml)",
    ("kube-prometheus-stack", "alertmanager.config"): "Alertmanager's own configuration, rendered whole",
}


def chart_keys(chart: str, version: str) -> dict[str, Any]:
    """The keys file of a chart version; a failure naming the script when the pin has none."""
    path = KEYS_DIR / f"{chart}-{version}.json"
    if not path.is_file():
        pytest.fail(f"no {path.name}: run scripts/chart_keys.py for the pinned {chart} {version}")
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def value_paths(values: Any, prefix: str = "", stop: frozenset[str] = frozenset()) -> set[str]:
    """Dotted paths of the leaves, stopping at the `stop` paths and at lists (a list is one value)."""
    if not isinstance(values, dict) or not values or prefix in stop:
        return {prefix}
    found: set[str] = set()
    for key, value in values.items():
        found |= value_paths(value, f"{prefix}.{key}" if prefix else key, stop)
    return found


def lookup(values: Any, path: str) -> Any:
    """The value at a dotted path, or None."""
    for part in path.split("."):
        if not isinstance(values, dict) or part not in values:
            return None
        values = values[part]
    return values


def problems(chart: str, version: str, values: dict[str, Any]) -> list[str]:
    """Each key set that the chart at this version does not read, or reads only when a switch it turns off is on."""
    doc = chart_keys(chart, version)
    keys, open_ = set(doc["keys"]), set(doc["open"])
    free = frozenset(p for (c, p) in FREE_FORM if c == chart)
    paths = value_paths(values, stop=free) - {""}
    found: list[str] = []
    for path in sorted(paths):
        parents = {".".join(path.split(".")[:i]) for i in range(1, path.count(".") + 2)}
        if path not in keys and not parents & (open_ | free):
            found.append(f"{chart} {version}: {path} is not a key the chart reads")
    # Helm drops a subchart whose condition (the first of its paths that is set) is false, values and all.
    for alias, condition in doc["conditions"].items():
        switches = condition.split(",")
        decided = next((lookup(values, c) for c in switches if lookup(values, c) is not None), None)
        under = sorted(p for p in paths if p.startswith(f"{alias}.") and p not in switches)
        if decided is False and under:
            found.append(f"{chart} {version}: {', '.join(under)} set with the {alias} subchart off ({condition})")
    # A part switched off by its own `enabled: false` reads none of its other keys.
    for switch in sorted(p for p in paths if p.endswith(".enabled") and lookup(values, p) is False):
        part = switch.removesuffix(".enabled")
        if doc["conditions"].get(part) == switch:
            continue  # a subchart's own condition: said above
        under = sorted(p for p in paths if p.startswith(f"{part}.") and p != switch)
        if under:
            found.append(f"{chart} {version}: {', '.join(under)} set with {switch} false")
    return found


def releases(recording: Recording) -> dict[str, dict[str, Any]]:
    """The stack's Helm releases by chart name (an OCI chart by its last path segment)."""
    return {r["chart"].rsplit("/", 1)[-1]: r for r in render.helm_releases(recording).values()}


SYSTEM = {"name": "system", "instanceTypes": ["m6i.large"]}
OPERATOR_STACK: dict[str, Any] = {
    "nodeGroups": [
        SYSTEM,
        {
            "name": "op",
            "kind": "gpu",
            "instanceTypes": ["p4d.24xlarge"],
            "driver": "operator",
            "sharing": {"mig": {"profile": "all-1g.5gb"}},
        },
    ]
}
# An EFA group, a model scaled on its request rate (KEDA) and a training run: the EFA plugin, KEDA, Kueue, JobSet.
EFA_STACK: dict[str, Any] = {
    "cluster": DEV_CLUSTER,
    "nodeGroups": [
        SYSTEM,
        {"name": "p5", "kind": "gpu", "instanceTypes": ["p5.48xlarge"], "minSize": 0, "maxSize": 2, "efa": True},
    ],
    "serving": [
        {
            "name": "m",
            "model": {"name": "m", "import": {"source": "s3://team-models/m/"}},
            "variants": [
                {
                    "name": "gpu",
                    "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1},
                    "autoscaling": {"maxReplicas": 2, "metric": "requestsPerSecond", "target": 40},
                }
            ],
        }
    ],
    "training": [
        {
            "name": "nccl",
            "strategy": "multiWorkerMirrored",
            "command": ["python", "train.py"],
            "worker": {"replicas": 2, "resources": {"limits": {"cpu": "8", "memory": "64Gi"}, "gpus": 8}},
        }
    ],
}
# Every shape the releases take: the shipped stacks, each metrics backend, GPU Operator mode, EFA with KEDA.
SHAPES: dict[str, dict[str, Any] | None] = {
    "dev": None,
    "prod": None,
    "prometheus-without-grafana": {"observability": {"metrics": "prometheus", "grafana": False}},
    "managedPrometheus": {"observability": {"metrics": "managedPrometheus"}},
    "cloudwatch": {"observability": {"metrics": "cloudwatch"}},
    "no-metrics": {"observability": {"metrics": "none"}},
    "operator": OPERATOR_STACK,
    "operator-no-metrics": {**OPERATOR_STACK, "observability": {"metrics": "none"}},
    "efa-keda-queue": EFA_STACK,
    "efa-keda-amp": {**EFA_STACK, "observability": {"metrics": "managedPrometheus"}},
}


@pytest.fixture(scope="session")
def shape_releases(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, dict[str, Any]]]:
    """The releases of every shape (one mock run each), once per test session, also across xdist workers: the
    slowest-first order (tests/slowest.py) puts some of this module's tests at the front and leaves the rest in
    place, so a module-scoped fixture was torn down between them and its ten renders made again, four times a
    run; once per process, they were still made by every worker that ran one of its tests."""
    from tests.conftest import once_per_session, stack_config  # noqa: PLC0415

    def make() -> dict[str, dict[str, dict[str, Any]]]:
        found: dict[str, dict[str, dict[str, Any]]] = {}
        for shape, overrides in SHAPES.items():
            if overrides is None:
                found[shape] = releases(request.getfixturevalue(f"{shape}_run"))
            else:
                found[shape] = releases(render.run_stack(stack_config({"cluster": DEV_CLUSTER, **overrides})))
        return found

    return once_per_session(tmp_path_factory, "chart-shape-releases", make)


def test_every_release_of_every_shape_sets_only_keys_its_chart_reads(shape_releases) -> None:
    found = [
        f"{shape}: {problem}"
        for shape, by_chart in shape_releases.items()
        for chart, release in by_chart.items()
        for problem in problems(chart, release["version"], release["values"] or {})
    ]
    assert found == []


def test_the_shapes_cover_every_release_gpuplane_installs(shape_releases) -> None:
    installed = {chart for by_chart in shape_releases.values() for chart in by_chart}
    assert installed == {
        "kube-prometheus-stack",
        "keda",
        "aws-efa-k8s-device-plugin",
        "dcgm-exporter",
        "kueue",
        "jobset",
        "gpu-operator",
        "nvidia-device-plugin",
        "cluster-autoscaler",
    }


def test_a_keys_file_for_every_pinned_chart_version() -> None:
    """A bump without reading the new chart fails here (scripts/chart_keys.py writes the file)."""
    pinned = {
        ("gpu-operator", versions.GPU_OPERATOR.version),
        ("nvidia-device-plugin", versions.DEVICE_PLUGIN.version),
        ("dcgm-exporter", versions.DCGM_EXPORTER.version),
        ("cluster-autoscaler", versions.CLUSTER_AUTOSCALER.version),
        ("kube-prometheus-stack", versions.KUBE_PROMETHEUS_STACK.version),
        ("keda", versions.KEDA.version),
        ("aws-efa-k8s-device-plugin", versions.EFA_DEVICE_PLUGIN.version),
        ("kueue", versions.KUEUE_VERSION),
        ("jobset", versions.JOBSET_VERSION),
    }
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in KEYS_DIR.glob("*.json")]
    assert {(d["chart"], d["version"]) for d in docs} == pinned
    for doc in docs:
        assert doc["sources"] and doc["read"] and doc["written_by"] == "scripts/chart_keys.py", doc["chart"]


def test_operator_service_monitor_follows_the_metrics_backend(shape_releases) -> None:
    # v26.7.0 turns the ServiceMonitor on by default; gpuplane writes it either way: on where the stack runs the
    # Prometheus operator (metrics on, the default), off without it (the CRD would be missing).
    on = shape_releases["operator"]["gpu-operator"]["values"]
    assert on["dcgmExporter"]["serviceMonitor"]["enabled"] is True
    off = shape_releases["operator-no-metrics"]["gpu-operator"]["values"]
    assert lookup(off, "dcgmExporter.serviceMonitor.enabled") is not True


def test_grafana_off_sets_no_other_grafana_key(shape_releases) -> None:
    for shape in ("prod", "prometheus-without-grafana", "managedPrometheus"):
        grafana = shape_releases[shape]["kube-prometheus-stack"]["values"]["grafana"]
        assert grafana == {"enabled": False}, shape
    assert shape_releases["dev"]["kube-prometheus-stack"]["values"]["grafana"]["enabled"] is True


def test_the_check_catches_what_helm_would_drop() -> None:
    stack = versions.KUBE_PROMETHEUS_STACK.version
    assert problems("kube-prometheus-stack", stack, {"grafana": {"enabled": False, "tolerations": [{}]}}) == [
        f"kube-prometheus-stack {stack}: grafana.tolerations set with the grafana subchart off (grafana.enabled)",
    ]
    dcgm = versions.DCGM_EXPORTER.version
    assert problems("dcgm-exporter", dcgm, {"serviceMonitor": {"enabled": False, "interval": "30s"}}) == [
        f"dcgm-exporter {dcgm}: serviceMonitor.interval set with serviceMonitor.enabled false"
    ]
    assert problems("kube-prometheus-stack", stack, {"prometheus": {"prometheusSpec": {"retentionn": "1d"}}}) == [
        f"kube-prometheus-stack {stack}: prometheus.prometheusSpec.retentionn is not a key the chart reads"
    ]
    operator = versions.GPU_OPERATOR.version
    assert problems("gpu-operator", operator, {"dcgmExporter": {"serviceMonitors": {"enabled": False}}}) == [
        f"gpu-operator {operator}: dcgmExporter.serviceMonitors.enabled is not a key the chart reads"
    ]
    # Below an empty-map default (a node selector) and a free-form map, any key is the user's.
    assert problems("dcgm-exporter", versions.DCGM_EXPORTER.version, {"nodeSelector": {"a/b": "c"}}) == []
    autoscaler = versions.CLUSTER_AUTOSCALER.version
    assert problems("cluster-autoscaler", autoscaler, {"extraArgs": {"expander": "least-waste"}}) == []
