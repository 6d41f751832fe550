"""Every alert under promtool: it fires when it should, stays silent when it should not, resolves when it clears.

The GPU rules run on the series each backend stores, for both names of the exporter's host label: the
in-cluster Prometheus (the ServiceMonitor's target labels, `node` from its relabeling, the exporter's own
`namespace`/`pod` dropped) and the managed collector (its job's `node`), each with `Hostname` (dcgm-exporter up
to 4.8.2) and `hostname` (after d5e5f51). A scenario's alert must carry the same labels on all four.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.manifests import observability
from tests.manifests.test_observability import BOUNDS, all_rules, needs_promtool, promtool, write_rules

# --- fixture series ------------------------------------------------------------------------------------------
BACKENDS = ("in-cluster", "managedPrometheus")
HOST_LABELS = ("Hostname", "hostname")
SHAPES = [(backend, host) for backend in BACKENDS for host in HOST_LABELS]
NODE = "ip-10-0-1-5.us-west-2.compute.internal"
UUID = "GPU-5b2c9d1e-0000-4000-8000-000000000001"
RUN = {"namespace": "ml", "pod": "train-0"}


def dcgm_labels(backend: str, host: str, *, run: dict[str, str] | None = RUN, **extra: str) -> dict[str, str]:
    """The labels of one GPU's dcgm-exporter series as `backend` stores them, the exporter naming its host `host`."""
    labels = {
        "job": "dcgm-exporter",
        "instance": "10.0.1.77:9400",
        "node": NODE,
        "gpu": "0",
        "UUID": UUID,
        "device": "nvidia0",
        "modelName": "NVIDIA A10G",
        "pci_bus_id": "00000000:00:1E.0",
        "DCGM_FI_DRIVER_VERSION": "580.159.03",
        host: NODE,
    }
    if backend == "in-cluster":  # the Prometheus operator's target labels that its relabelings keep
        labels |= {"endpoint": "metrics", "service": "dcgm-exporter"}
    if run:  # the exporter's labels of the workload holding the GPU (honorLabels / honor_labels)
        labels |= {**run, "container": "trainer"}
    return labels | extra


def series(metric: str, labels: dict[str, str]) -> str:
    return metric + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


GPU_KEY = {"node": NODE, "gpu": "0", "UUID": UUID}


@dataclass(frozen=True)
class Scenario:
    """Input series, and for each evaluation time the alerts (their labels besides severity) expected then."""

    series: list[tuple[str, str]]
    expect: dict[str, list[dict[str, str]]]
    severity: str = ""


# alert -> scenario kind (fires / silent / resolves) -> a function of (backend, host label) giving the scenario.
ScenarioFor = Callable[[str, str], Scenario]
CASES: dict[str, dict[str, ScenarioFor]] = {}


def case(alert: str, kind: str) -> Callable[[ScenarioFor], ScenarioFor]:
    def register(fn: ScenarioFor) -> ScenarioFor:
        CASES.setdefault(alert, {})[kind] = fn
        return fn

    return register


XID_COUNT = "DCGM_EXP_XID_ERRORS_COUNT"
WINDOW = {"window_size_in_ms": "300000"}  # the exporter's default window, 5 minutes: a label of its count


def _count(backend: str, host: str, owner: dict[str, str] | None, **xid: str) -> str:
    """A series of the exporter's windowed XID count for the GPU held by `owner` (with `xid=`: of that code)."""
    return series(XID_COUNT, dcgm_labels(backend, host, run=owner) | WINDOW | xid)


def _xid(
    backend: str, host: str, code: int, *, run: dict[str, str] | None = RUN, at: int = 40, until: int = 100
) -> list[tuple[str, str]]:
    """A GPU without XID until minute `at`, then XID `code` once: the exporter's windowed count, as it writes it.

    While its window (5 minutes) holds the XID the GPU has one series per code, labelled `xid`, of the count;
    before and after, one series of 0 without `xid` (internal/pkg/collector/expcollector.go at 4.5.3-4.8.2).
    """
    return [
        # absent while the window holds the XID (minutes at..at+4)
        (_count(backend, host, run), f"0x{at - 1} _x5 0x{until - at - 6}"),
        (_count(backend, host, run, xid=str(code)), f"_x{at} 1x4"),
    ]


def _xid_cases(alert: str, code: int, severity: str, *, run: dict[str, str] | None) -> None:
    labels = GPU_KEY | {"err_code": str(code)}  # the GPU's alert: no pod, whichever held the GPU

    @case(alert, "fires")
    def fires(backend: str, host: str) -> Scenario:
        return Scenario(_xid(backend, host, code, run=run), {"42m": [labels]}, severity)

    @case(alert, "silent")
    def silent(backend: str, host: str) -> Scenario:
        # A healthy GPU, and a GPU whose XID is another class's: neither raises this alert.
        other = 13 if code != 13 else 95
        healthy = [(_count(backend, host, None), "0x100")]
        return Scenario(healthy + _xid(backend, host, other, run=run), {"42m": [], "90m": []}, severity)

    @case(alert, "resolves")
    def resolves(backend: str, host: str) -> Scenario:
        # 30 minutes after the XID left the exporter's window the alert is gone; a run that starts on the GPU
        # later does not raise it again, and the same XID again (the last-XID gauge would not change) raises it.
        def count(owner: dict[str, str] | None, **xid: str) -> str:
            return _count(backend, host, owner, **xid)

        if run:  # the GPU's series change labels with the run on it (train-0, then train-1 from minute 70)
            later = {"namespace": "ml", "pod": "train-1"}
            xid: list[tuple[str, str]] = [
                (count(run), "0x39 _x5 0x24"),
                (count(run, xid=str(code)), "_x40 1x4"),
                (count(later), "_x70 0x49 _x5 0x20"),
                (count(later, xid=str(code)), "_x120 1x4"),
            ]
        else:  # a node-wide XID: the series name no run
            xid = [(count(None), "0x39 _x5 0x74 _x5 0x20"), (count(None, xid=str(code)), "_x40 1x4 _x75 1x4")]
        return Scenario(xid, {"42m": [labels], "75m": [], "115m": [], "122m": [labels]}, severity)


_xid_cases("GpuXidNeedsNodeRepair", 95, "critical", run=None)
_xid_cases("GpuXidApplicationFault", 13, "warning", run=RUN)
_xid_cases("GpuXidOther", 92, "warning", run=RUN)


def _gpu_gauge_cases(
    alert: str, metric: str, severity: str, bad: str, good: str, cleared: str, at: str, later: str
) -> None:
    @case(alert, "fires")
    def fires(backend: str, host: str) -> Scenario:
        return Scenario([(series(metric, dcgm_labels(backend, host)), bad)], {at: [GPU_KEY]}, severity)

    @case(alert, "silent")
    def silent(backend: str, host: str) -> Scenario:
        return Scenario([(series(metric, dcgm_labels(backend, host)), good)], {at: [], later: []}, severity)

    @case(alert, "resolves")
    def resolves(backend: str, host: str) -> Scenario:
        return Scenario([(series(metric, dcgm_labels(backend, host)), cleared)], {at: [GPU_KEY], later: []}, severity)


# 90 C for 20 minutes fires after 15; 84 C (under the 85 C margin) never; cooling down to 70 C clears it.
_gpu_gauge_cases(
    "GpuTemperatureHigh", "DCGM_FI_DEV_GPU_TEMP", "warning", "70x2 90x40", "84x40", "90x20 70x20", "19m", "30m"
)
# Throttled by heat 20 % of the time (12 s a minute, in ns) fires; 5 % does not; throttling that stops clears.
_gpu_gauge_cases(
    "GpuThermalThrottling",
    "DCGM_FI_DEV_THERMAL_VIOLATION",
    "warning",
    "0+12000000000x60",
    "0+3000000000x60",
    "0+12000000000x25 300000000000x40",
    "24m",
    "40m",
)
# One double-bit error: a critical at once (no waiting for more); none for 30 minutes clears it.
_gpu_gauge_cases(
    "GpuDoubleBitEccError", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "critical", "0x5 1x60", "0x60", "0x5 1x60", "8m", "45m"
)
# A failed row remap holds until the GPU is replaced: the node goes, its series with it.
_gpu_gauge_cases(
    "GpuRowRemapFailed", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "critical", "0x2 1x30", "0x30", "0x2 1x10 _x20", "9m", "25m"
)


def _memory(backend: str, host: str, used: str, free: str) -> list[tuple[str, str]]:
    return [
        (series("DCGM_FI_DEV_FB_USED", dcgm_labels(backend, host)), used),
        (series("DCGM_FI_DEV_FB_FREE", dcgm_labels(backend, host)), free),
    ]


@case("GpuMemoryNearFull", "fires")
def _mem_fires(backend: str, host: str) -> Scenario:
    return Scenario(_memory(backend, host, "23000x20", "28x20"), {"15m": [GPU_KEY | RUN]}, "warning")


@case("GpuMemoryNearFull", "silent")
def _mem_silent(backend: str, host: str) -> Scenario:
    return Scenario(_memory(backend, host, "12000x20", "11000x20"), {"15m": []}, "warning")


@case("GpuMemoryNearFull", "resolves")
def _mem_resolves(backend: str, host: str) -> Scenario:
    return Scenario(
        _memory(backend, host, "23000x15 12000x10", "28x15 11000x10"), {"12m": [GPU_KEY | RUN], "20m": []}, "warning"
    )


# --- rules on kube-state-metrics, Kueue and the autoscaler: the same labels on both backends ----------------------
READY = 'kube_node_status_condition{condition="Ready",status="true",node="gpu-1"}'
GPU_CAPACITY = ('kube_node_status_capacity{resource="nvidia_com_gpu",node="gpu-1"}', "1x40")
HW = 'kube_node_status_condition{condition="AcceleratedHardwareReady",status="false",node="gpu-1"}'
NOT_READY = {"node": "gpu-1", "condition": "Ready", "status": "true"}
HW_LABELS = {"node": "gpu-1", "condition": "AcceleratedHardwareReady", "status": "false"}
DOWN = 'up{job="nvidia-dcgm-exporter",instance="10.0.1.5:9400"}'
SCALE_UP = (
    'cluster_autoscaler_failed_gpu_scale_ups_total{reason="cloudProviderError",gpu_resource_name="nvidia.com/gpu",'
    'gpu_name="nvidia-a10g"}'
)
LATENCY = (
    ':tensorflow:serving:request_latency_bucket{{le="{le}",serving="m",variant="cpu",model_name="m",namespace="ml"}}'
)
SERVING = {"serving": "m", "variant": "cpu", "model_name": "m", "namespace": "ml"}
QUEUE = {"cluster_queue": "training"}
PENDING = 'kueue_pending_workloads{{cluster_queue="training",status="{status}",replica_role="standalone"}}'
RESERVING = 'kueue_reserving_active_workloads{cluster_queue="training",replica_role="standalone"}'
ADMITTED = 'kueue_admitted_active_workloads{cluster_queue="training",replica_role="standalone"}'
GROUP = 'node_group="eks-gpu-a10g-5ec9"'


def _latency(slow: int, fast: int, n: int = 30) -> list[tuple[str, str]]:
    # `slow` requests a minute over 1 s (the 2,000,000 us bucket), `fast` under 100 ms.
    return [
        (LATENCY.format(le=le), f"0+{v}x{n}")
        for le, v in (("100000", fast), ("1000000", fast), ("2000000", fast + slow), ("+Inf", fast + slow))
    ]


def _group(target: str, maximum: str, waiting: str) -> list[tuple[str, str]]:
    return [
        (f"cluster_autoscaler_node_group_target_count{{{GROUP}}}", target),
        (f"cluster_autoscaler_node_group_max_count{{{GROUP}}}", maximum),
        ('cluster_autoscaler_unschedulable_pods_count{type="unschedulable"}', waiting),
        ('cluster_autoscaler_unschedulable_pods_count{type="scheduler_unprocessed"}', "0x60"),
    ]


PLAIN: dict[str, dict[str, Scenario]] = {
    "GpuNodeNotReady": {
        "fires": Scenario([(READY, "1 1 0x20"), GPU_CAPACITY], {"10m": [NOT_READY]}, "critical"),
        # a CPU node that is not Ready is not this alert's
        "silent": Scenario(
            [
                (READY, "1x20"),
                GPU_CAPACITY,
                ('kube_node_status_condition{condition="Ready",status="true",node="cpu-1"}', "0x20"),
                ('kube_node_status_capacity{resource="cpu",node="cpu-1"}', "2x20"),
            ],
            {"10m": []},
            "critical",
        ),
        "resolves": Scenario([(READY, "1 1 0x10 1x20"), GPU_CAPACITY], {"10m": [NOT_READY], "15m": []}, "critical"),
    },
    "GpuNodeHardwareUnhealthy": {
        "fires": Scenario([(HW, "0 0 1x10")], {"5m": [HW_LABELS]}, "critical"),
        "silent": Scenario([(HW, "0x10")], {"5m": []}, "critical"),
        "resolves": Scenario([(HW, "0 0 1x5 0x10")], {"5m": [HW_LABELS], "10m": []}, "critical"),
    },
    "DcgmExporterDown": {
        "fires": Scenario(
            [(DOWN, "1 0x10")], {"8m": [{"job": "nvidia-dcgm-exporter", "instance": "10.0.1.5:9400"}]}, "warning"
        ),
        "silent": Scenario([(DOWN.replace("nvidia-", ""), "1x10")], {"8m": []}, "warning"),
        "resolves": Scenario(
            [(DOWN, "1 0x8 1x10")],
            {"8m": [{"job": "nvidia-dcgm-exporter", "instance": "10.0.1.5:9400"}], "12m": []},
            "warning",
        ),
    },
    "GpuScaleUpFailing": {
        # the autoscaler retries after each back-off and fails again: one more failure every 5 minutes
        "fires": Scenario(
            [(SCALE_UP, "0+0.2x60")], {"30m": [{"gpu_name": "nvidia-a10g", "reason": "cloudProviderError"}]}, "warning"
        ),
        # failures long ago: the counter stands still
        "silent": Scenario([(SCALE_UP, "3x60")], {"30m": []}, "warning"),
        "resolves": Scenario(
            [(SCALE_UP, "0+0.2x35 7x40")],
            {"32m": [{"gpu_name": "nvidia-a10g", "reason": "cloudProviderError"}], "55m": []},
            "warning",
        ),
    },
    "ServingLatencyP99High": {
        "fires": Scenario(_latency(100, 0), {"20m": [SERVING]}, "warning"),
        "silent": Scenario(_latency(0, 100), {"20m": []}, "warning"),
        "resolves": Scenario(
            [(s, v.replace("x30", "x15")) for s, v in _latency(100, 0, 15)], {"14m": [SERVING], "25m": []}, "warning"
        ),
    },
    "TrainingRunsWaiting": {
        "fires": Scenario([(PENDING.format(status="active"), "2x40")], {"35m": [QUEUE]}, "warning"),
        # waiting, admitted, waiting again: the clock starts again
        "silent": Scenario([(PENDING.format(status="active"), "2x20 0 2x20")], {"35m": []}, "warning"),
        "resolves": Scenario([(PENDING.format(status="active"), "2x35 0x10")], {"34m": [QUEUE], "40m": []}, "warning"),
    },
    "TrainingRunsOverQuota": {
        "fires": Scenario([(PENDING.format(status="inadmissible"), "1x40")], {"35m": [QUEUE]}, "warning"),
        # a run waiting in line is not over quota
        "silent": Scenario(
            [(PENDING.format(status="inadmissible"), "0x40"), (PENDING.format(status="active"), "3x40")],
            {"35m": []},
            "warning",
        ),
        "resolves": Scenario(
            [(PENDING.format(status="inadmissible"), "1x35 0x10")], {"34m": [QUEUE], "40m": []}, "warning"
        ),
    },
    "TrainingRunsWaitingForNodes": {
        # two runs hold quota, one is admitted: one waits for its ProvisioningRequest
        "fires": Scenario([(RESERVING, "2x40"), (ADMITTED, "1x40")], {"35m": [QUEUE]}, "warning"),
        "silent": Scenario([(RESERVING, "2x40"), (ADMITTED, "2x40")], {"35m": []}, "warning"),
        "resolves": Scenario([(RESERVING, "2x45"), (ADMITTED, "1x35 2x10")], {"34m": [QUEUE], "40m": []}, "warning"),
    },
    "NodeGroupAtMaxSize": {
        "fires": Scenario(_group("4x30", "4x30", "3x30"), {"20m": [{"node_group": "eks-gpu-a10g-5ec9"}]}, "warning"),
        # at its maximum with nothing waiting is a full group, not a wait; below its maximum the autoscaler adds
        "silent": Scenario(
            [
                *_group("4x30", "4x30", "0x30"),
                ('cluster_autoscaler_node_group_target_count{node_group="eks-cpu"}', "1x30"),
            ],
            {"20m": []},
            "warning",
        ),
        "resolves": Scenario(
            _group("4x30", "4x18 6x12", "3x30"), {"17m": [{"node_group": "eks-gpu-a10g-5ec9"}], "25m": []}, "warning"
        ),
    },
}


def _same_on_every_backend(scenario: Scenario) -> ScenarioFor:
    def build(backend: str, host: str) -> Scenario:
        return scenario

    return build


for _alert, _kinds in PLAIN.items():
    for _kind, _scenario in _kinds.items():
        CASES.setdefault(_alert, {})[_kind] = _same_on_every_backend(_scenario)

KINDS = ("fires", "silent", "resolves")
RULES = {r["alert"]: r for g in observability.alert_rule_groups(BOUNDS) for r in g["rules"]}
DCGM_ALERTS = sorted(a for a, r in RULES.items() if "DCGM_" in r["expr"])


def _test_group(alert: str, scenario: Scenario) -> dict[str, Any]:
    severity = scenario.severity or RULES[alert]["labels"]["severity"]
    return {
        "interval": "1m",
        "input_series": [{"series": s, "values": v} for s, v in scenario.series],
        "alert_rule_test": [
            {
                "eval_time": at,
                "alertname": alert,
                "exp_alerts": [{"exp_labels": {"severity": severity, **labels}} for labels in fires],
            }
            for at, fires in scenario.expect.items()
        ],
    }


def _run(tmp_path, alert: str, groups: list[dict[str, Any]]) -> None:
    # promtool compares annotations too; their templates are checked by `promtool check rules` and by
    # `test_summaries_name_labels_every_shape_carries`, so the scenarios compare the labels, which carry what fires.
    # Only the alert's own rule, in its own group, is loaded: promtool evaluates every loaded rule at every step of
    # every test group, and an alert test names one alert; with all 17 rules loaded the 17 runs took 16 CPU
    # seconds, with one rule each 3.3. No rule reads another's result (test_no_rule_reads_another_rules_result),
    # so the answer is the same.
    rules = []
    for group in observability.alert_rule_groups(BOUNDS):
        own = [
            {k: v for k, v in rule.items() if k != "annotations"} for rule in group["rules"] if rule["alert"] == alert
        ]
        if own:
            rules.append({**group, "rules": own})
    write_rules(tmp_path, rules)
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    promtool("test", "rules", "tests.yaml", cwd=tmp_path)


def test_every_alert_has_a_fire_a_silent_and_a_resolve_scenario():
    assert set(CASES) == set(RULES)
    assert {a: sorted(k) for a, k in CASES.items()} == {a: sorted(KINDS) for a in RULES}


def _shapes(alert: str) -> list[tuple[str, str]]:
    return SHAPES if alert in DCGM_ALERTS else [("any", "")]


@needs_promtool
@pytest.mark.parametrize("alert", sorted(RULES))
def test_alert_fires_stays_silent_and_resolves_under_promtool(tmp_path, alert):
    """One promtool test group per scenario (fires, silent, resolves) and, for a DCGM rule, per label shape and
    backend; one promtool run per alert, which names the failing group's alert and evaluation time."""
    _run(tmp_path, alert, [_test_group(alert, CASES[alert][kind](b, h)) for kind in KINDS for b, h in _shapes(alert)])


# The autoscaler's failed scale-ups as each pinned minor writes them (cluster-autoscaler/metrics/metrics.go):
# up to 1.35 the GPU counter and a plain counter by reason; 1.36 both, the plain one with the GPU's labels (and the
# GPU counter deprecated); a later minor hides the deprecated one.
GPU_LABELS = 'reason="cloudProviderError",gpu_resource_name="nvidia.com/gpu",gpu_name="nvidia-a10g"'
FAILED_GPU = f"cluster_autoscaler_failed_gpu_scale_ups_total{{{GPU_LABELS}}}"
FAILED_PLAIN_1_35 = 'cluster_autoscaler_failed_scale_ups_total{reason="cloudProviderError"}'
FAILED_PLAIN_1_36 = f'cluster_autoscaler_failed_scale_ups_total{{{GPU_LABELS},dra_drivers=""}}'
FAILED_CPU_1_36 = (
    'cluster_autoscaler_failed_scale_ups_total{reason="timeout",gpu_resource_name="",gpu_name="",dra_drivers=""}'
)
AUTOSCALER_SHAPES = {
    "1.32-1.35": [FAILED_GPU, FAILED_PLAIN_1_35],
    "1.36": [FAILED_GPU, FAILED_PLAIN_1_36],
    "after the GPU counter is hidden": [FAILED_PLAIN_1_36],
}


@needs_promtool
def test_gpu_scale_up_failures_alert_once_from_every_autoscaler_minor(tmp_path):
    """Every minor's series fire `GpuScaleUpFailing` once, with the same labels (1.36 counts each failure in both
    counters: it must not fire twice), and a scale-up failure of a group without GPUs fires nothing."""
    fires = {"30m": [{"gpu_name": "nvidia-a10g", "reason": "cloudProviderError"}], "5m": []}
    groups = [
        _test_group("GpuScaleUpFailing", Scenario([(s, "0+0.2x60") for s in shape], fires))
        for shape in AUTOSCALER_SHAPES.values()
    ]
    groups.append(_test_group("GpuScaleUpFailing", Scenario([(FAILED_CPU_1_36, "0+0.2x60")], {"30m": []})))
    _run(tmp_path, "GpuScaleUpFailing", groups)


@needs_promtool
@pytest.mark.parametrize("alert", ["GpuXidApplicationFault", "GpuXidNeedsNodeRepair"])
def test_an_xid_is_one_alert_when_another_run_takes_the_gpu_within_the_window(tmp_path, alert):
    """The exporter labels each scrape with whoever holds the GPU then: the faulting run at minute 40, its retry
    from minute 42, both inside the exporter's window. One alert, the GPU's; the retry is not blamed."""
    code = "13" if alert == "GpuXidApplicationFault" else "95"
    retry = {"namespace": "ml", "pod": "train-0-retry"}

    def count(owner: dict[str, str], **xid: str) -> str:
        return _count("in-cluster", "Hostname", owner, **xid)

    scenario = Scenario(
        [
            (count(RUN), "0x39"),
            (count(RUN, xid=code), "_x40 1x1"),
            (count(retry, xid=code), "_x42 1x2"),
            (count(retry), "_x45 0x30"),
        ],
        {"43m": [GPU_KEY | {"err_code": code}], "80m": []},
    )
    _run(tmp_path, alert, [_test_group(alert, scenario)])


@needs_promtool
def test_a_code_of_zero_is_no_xid(tmp_path):
    """DCGM's 0 is "no XID": a window holding a 0 sample is not an unclassified XID."""
    zero = _count("in-cluster", "Hostname", None, xid="0")
    _run(tmp_path, "GpuXidOther", [_test_group("GpuXidOther", Scenario([(zero, "1x30")], {"20m": []}))])


def test_no_rule_reads_another_rules_result():
    """Each alert is tested with its own rule loaded alone: that holds while no rule is a recording rule and no
    expression reads `ALERTS` (another alert's state) or a recorded series."""
    rules = all_rules()
    assert all("alert" in r and "record" not in r for r in rules)
    assert [r["alert"] for r in rules if re.search(r"\bALERTS(_FOR_STATE)?\b", r["expr"])] == []


def test_an_application_xid_pages_nobody():
    """XID 13 (a kernel's own fault) must not raise a critical alert: its class's is a warning."""
    classes = {x: c for c in observability.XID_CLASSES for x in c.xids}
    assert classes[13].severity == classes[31].severity == classes[43].severity == classes[45].severity == "warning"
    assert {classes[x].severity for x in (48, 63, 64, 74, 79, 95, 119, 120)} == {"critical"}
    critical = [c for c in observability.XID_CLASSES if c.severity == "critical"]
    assert [c.alert for c in critical] == ["GpuXidNeedsNodeRepair"]
    # no XID in two classes, and the catch-all excludes every classified one
    codes = [x for c in observability.XID_CLASSES for x in c.xids]
    assert len(codes) == len(set(codes))
    assert RULES["GpuXidOther"]["expr"].count("|") == len(codes) - 1


def test_the_silent_xid_scenarios_raise_another_class():
    """The silent case of one XID class is a firing case of another: each XID lands in exactly one alert."""
    scenario = CASES["GpuXidApplicationFault"]["silent"]("in-cluster", "Hostname")
    codes = {m for s, _ in scenario.series for m in re.findall(r'xid="([0-9]+)"', s)}
    assert codes == {"95"}
    assert "95" in RULES["GpuXidNeedsNodeRepair"]["expr"]


def test_every_dcgm_rule_keys_on_node_never_on_the_exporters_host_label():
    for alert in DCGM_ALERTS:
        rule = RULES[alert]
        assert "by (node, gpu, UUID" in rule["expr"], alert
        assert not re.search(r"\b[Hh]ostname\b", rule["expr"] + rule["annotations"]["summary"]), alert
    for board in observability.dashboards().values():
        for panel in board["panels"]:
            for target in panel["targets"]:
                assert not re.search(r"[Hh]ostname", target["legendFormat"] + target["expr"]), panel["title"]


def test_summaries_name_labels_every_shape_carries():
    """A summary's `$labels.x` is on the alert in every label shape, so no summary goes blank after a bump."""
    for alert, kinds in CASES.items():
        used = set(re.findall(r"\$labels\.(\w+)", RULES[alert]["annotations"]["summary"]))
        for backend, host in _shapes(alert):
            for labels in kinds["fires"](backend, host).expect.values():
                for fired in labels:
                    assert used <= set(fired), (alert, backend, host, used - set(fired))


def test_every_rule_waits_and_says_who_acts():
    for alert, rule in RULES.items():
        assert rule.get("for"), alert
        assert rule["annotations"]["runbook"], alert
        assert rule["labels"]["severity"] in {"critical", "warning"}


def test_the_xid_alerts_count_each_xid_by_code_and_gpu():
    expr = RULES["GpuXidApplicationFault"]["expr"]
    assert 'DCGM_EXP_XID_ERRORS_COUNT{xid=~"8|13|31|43|45|94",xid!="",xid!="0"}' in expr
    assert f"[{observability.XID_WINDOW}]" in expr
    assert expr.startswith("max by (node, gpu, UUID, err_code)")  # the GPU's alert, not a pod's
    # the exporter counts XIDs only when its counters file names the count
    assert "DCGM_EXP_XID_ERRORS_COUNT, counter," in observability.dcgm_counters_csv()


def test_the_operations_guide_has_a_row_per_alert_saying_who_acts():
    text = (Path(__file__).parents[2] / "docs" / "operations.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| (critical|warning), [^|]+\| ([^|]+) \| ([^|]+) \|$", text, re.MULTILINE)
    assert {alert for alert, *_ in rows} == set(RULES)
    for alert, severity, means, who in rows:
        assert RULES[alert]["labels"]["severity"] == severity, alert
        assert means.strip() and re.match(r"(platform|the (run's|team|model's))", who.strip()), alert
