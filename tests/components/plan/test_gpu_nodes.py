"""Pure GPU facts: units, memory per unit, plugin configs, labels, CUDA support, autoscaler resources."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpuplane.components.config import NodeGroupArgs
from gpuplane.components.facts import catalog
from gpuplane.components.plan import gpu_nodes
from gpuplane.components.plan.node_template import autoscaler_tags
from gpuplane.manifests import lifecycle, tf_runtime

CA = "k8s.io/cluster-autoscaler/node-template"


def gpu(name: str = "gpu", types: tuple[str, ...] = ("g5.xlarge",), **kw) -> NodeGroupArgs:
    return NodeGroupArgs.model_validate({"name": name, "kind": "gpu", "instanceTypes": list(types), **kw})


@pytest.mark.parametrize(
    ("group", "units", "memory", "fraction", "resource"),
    [
        # TensorFlow's fraction is a unit's share less a CUDA context (576 MiB) of the least memory the driver may
        # report (0.9 of the catalog's): 1/4 - 576 / (0.9 * 22888) = 0.2220, 1/3 - 576 / (0.9 * 45776) = 0.3193
        (gpu(), 1, 22888, 1.0, "nvidia.com/gpu"),
        (gpu(sharing={"timeSlicing": {"replicas": 4}}), 4, 5722, 0.222, "nvidia.com/gpu"),
        (gpu(types=("g6e.xlarge",), sharing={"mps": {"replicas": 3}}), 3, 15258, 0.319, "nvidia.com/gpu"),
        (
            gpu(types=("p4de.24xlarge",), driver="operator", sharing={"mig": {"profile": "all-1g.10gb"}}),
            8 * 7,
            10240,
            1.0,
            "nvidia.com/gpu",
        ),
        (
            gpu(
                types=("p5.48xlarge",),
                driver="operator",
                sharing={"mig": {"profile": "all-3g.40gb", "strategy": "mixed"}},
            ),
            8 * 2,
            40960,
            1.0,
            "nvidia.com/mig-3g.40gb",
        ),
    ],
)
def test_units_and_memory_per_unit(group, units, memory, fraction, resource):
    assert gpu_nodes.allocatable_units(group) == units
    assert gpu_nodes.memory_per_unit_mib(group) == memory
    assert gpu_nodes.memory_fraction(group) == fraction
    assert gpu_nodes.gpu_resource_name(group) == resource
    assert autoscaler_tags(group, "c")[f"{CA}/resources/{resource}"] == str(units)


def test_device_plugin_config_per_sharing_mode():
    assert gpu_nodes.device_plugin_config(gpu()) == {"version": "v1", "flags": {"migStrategy": "none"}}
    ts = gpu_nodes.device_plugin_config(gpu(sharing={"timeSlicing": {"replicas": 4}}))
    assert ts["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    assert ts["sharing"]["timeSlicing"]["failRequestsGreaterThanOne"] is True
    mps = gpu_nodes.device_plugin_config(gpu(sharing={"mps": {"replicas": 2}}))
    assert mps["sharing"] == {
        "mps": {"renameByDefault": False, "resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}
    }
    mig = gpu(
        types=("p4d.24xlarge",), driver="operator", sharing={"mig": {"profile": "all-2g.10gb", "strategy": "mixed"}}
    )
    assert gpu_nodes.device_plugin_config(mig) == {"version": "v1", "flags": {"migStrategy": "mixed"}}


def test_labels_select_the_groups_plugin_config_and_expose_the_memory_share():
    labels = gpu_nodes.node_labels(gpu(sharing={"timeSlicing": {"replicas": 4}}), gpu_operator=False)
    assert labels["nvidia.com/device-plugin.config"] == "gpu"
    assert labels["gpuplane.io/device-plugin"] == "true"
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["gpuplane.io/gpu-sharing"] == "time-slicing"
    assert labels["gpuplane.io/gpu-memory-per-unit-mib"] == "5722"
    assert labels["gpuplane.io/gpu-memory-fraction"] == "0.222"
    assert labels["gpuplane.io/cuda-driver-major"] == "580"
    cpu = NodeGroupArgs(name="system", instance_types=["m6i.large"], labels={"team": "ml"})
    assert gpu_nodes.node_labels(cpu, gpu_operator=False) == {
        "gpuplane.io/node-group": "system",
        "gpuplane.io/cpu-avx": "true",
        "gpuplane.io/cpu-avx2": "true",
        "gpuplane.io/cpu-avx512f": "true",
        "team": "ml",
    }


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        (["m6i.large"], {"avx", "avx2", "avx512f"}),
        (["g5.xlarge"], {"avx", "avx2"}),  # AMD EPYC Zen 2: no AVX-512
        (["m6i.large", "m6a.large"], {"avx", "avx2"}),  # a node may be either: the intersection
        (["m7g.large"], set()),  # Graviton
    ],
)
def test_cpu_feature_labels_are_what_every_instance_type_has(types, expected):
    kind = "gpu" if types[0].startswith("g5") else "cpu"
    labels = gpu_nodes.node_labels(NodeGroupArgs(name="grp", kind=kind, instance_types=types), gpu_operator=False)
    assert {k.removeprefix("gpuplane.io/cpu-") for k in labels if k.startswith("gpuplane.io/cpu-")} == expected


def test_bottlerocket_runs_its_own_plugin():
    rocket = gpu(amiType="BOTTLEROCKET_x86_64_NVIDIA")
    labels = gpu_nodes.node_labels(rocket, gpu_operator=False)
    assert "gpuplane.io/device-plugin" not in labels and "nvidia.com/device-plugin.config" not in labels
    plan = gpu_nodes.GpuPlan((rocket,))
    assert not plan.standalone_plugin and not plan.operator
    assert gpu_nodes.node_labels(rocket, gpu_operator=True)["nvidia.com/gpu.deploy.operands"] == "false"
    mixed = gpu_nodes.GpuPlan((rocket, gpu(name="al")))
    assert mixed.standalone_plugin
    assert set(mixed.plugin_configs()) == {"default", "al"}


def test_operator_mode_does_not_fight_the_ami():
    ami_group = gpu(name="ami")
    operated = gpu(name="op", types=("p4d.24xlarge",), driver="operator")
    plan = gpu_nodes.GpuPlan((ami_group, operated))
    assert plan.operator and not plan.standalone_plugin
    for group in (ami_group, operated):
        labels = gpu_nodes.node_labels(group, gpu_operator=True)
        assert labels["nvidia.com/gpu.deploy.driver"] == "false"
        assert labels["nvidia.com/gpu.deploy.container-toolkit"] == "false"
        assert "gpuplane.io/device-plugin" not in labels
    assert gpu_nodes.driver_major(operated) == 580
    assert gpu_nodes.node_labels(ami_group, gpu_operator=False)["k8s.amazonaws.com/accelerator"] == "nvidia-a10g"
    assert gpu_nodes.node_labels(operated, gpu_operator=True)["k8s.amazonaws.com/accelerator"] == "nvidia-a100"


def test_cuda_support_by_driver(monkeypatch):
    al2023, rocket = gpu(name="al"), gpu(name="br", amiType="BOTTLEROCKET_x86_64_NVIDIA")
    # Both AMI families ship the 580 branch (Bottlerocket variants' kmod-*-nvidia-r580-tesla), so CUDA 13 runs on both.
    assert gpu_nodes.check_cuda(12, [al2023, rocket]) == ["al", "br"]
    assert gpu_nodes.check_cuda(13, [al2023, rocket]) == ["al", "br"]
    # A family on an older branch (Bottlerocket before 2026: 570) is refused CUDA 13, naming the group and driver.
    monkeypatch.setitem(lifecycle.AMI_DRIVER_MAJOR, "bottlerocket", 570)
    assert gpu_nodes.check_cuda(13, [al2023, rocket]) == ["al"]
    with pytest.raises(
        ValueError, match=r"no GPU group's driver supports CUDA 13 \(needs driver >= 580\); groups: br \(driver 570\)"
    ):
        gpu_nodes.check_cuda(13, [rocket])
    with pytest.raises(ValueError, match=r"CUDA 14 is unknown; known CUDA majors: \[11, 12, 13\]"):
        gpu_nodes.check_cuda(14, [al2023])


def test_workloads_get_their_memory_share_through_the_runtime_helper():
    container = {
        "name": "serve",
        "image": "tensorflow/serving:2.19.0-gpu",
        "resources": {"limits": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}},
    }
    shared = gpu(sharing={"timeSlicing": {"replicas": 4}})
    assert gpu_nodes.runtime_gpu_settings(shared) == {"gpu_shared": True, "gpu_memory_fraction": 0.222}
    assert gpu_nodes.runtime_gpu_settings(gpu()) == {"gpu_shared": False, "gpu_memory_fraction": None}
    wrapped = tf_runtime.wrap_container(
        container, command=["tensorflow_model_server"], **gpu_nodes.runtime_gpu_settings(shared)
    )
    env = {e["name"]: e.get("value") for e in wrapped["env"]}
    assert env["GPUPLANE_GPU_SHARED"] == "true"
    assert env["GPUPLANE_GPU_MEMORY_FRACTION"] == "0.222"
    script = Path(tf_runtime.__file__).parent / "runtime" / tf_runtime.SCRIPT_NAME
    printed = subprocess.run(
        ["sh", str(script), "--print"],
        env={"PATH": "/usr/bin:/bin", "GPUPLANE_GPU_SHARED": "true", "GPUPLANE_GPU_MEMORY_FRACTION": "0.222"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "TF_FORCE_GPU_ALLOW_GROWTH=true" in printed.splitlines()


def test_every_shared_gpu_unit_leaves_its_context_room_on_every_gpu_of_the_catalog():
    """On every GPU EC2 offers, at the fewest and the most pods the config allows, N units' TensorFlow budgets
    (the fraction of the memory the driver reports, here its least) and their CUDA contexts fit in the GPU, and the
    budget is a usable fraction (> 0)."""
    by_gpu: dict[tuple[str | None, int], str] = {}
    for facts in catalog.CATALOG.values():
        if facts.gpu_count and facts.architecture == "x86_64":
            by_gpu.setdefault((facts.gpu_model, facts.gpu_memory_mib), facts.name)
    assert len(by_gpu) >= 5
    for (model, listed), instance in sorted(by_gpu.items(), key=str):
        reported = catalog.reported_gpu_memory_floor_mib(catalog.lookup(instance))  # TensorFlow's base, at least
        most = int(reported) // (catalog.CUDA_CONTEXT_RESERVE_MIB + catalog.MIN_SHARED_UNIT_BUDGET_MIB)
        for mode, limit in (("timeSlicing", 64), ("mps", 48)):
            for replicas in sorted({2, min(most, limit)}):
                group = gpu(types=(instance,), sharing={mode: {"replicas": replicas}})
                fraction = gpu_nodes.memory_fraction(group)
                assert 0 < fraction < 1, (model, mode, replicas)
                for memory in (reported, listed):  # the driver reports between the floor and the listed size
                    used = fraction * memory + catalog.CUDA_CONTEXT_RESERVE_MIB
                    assert used * replicas <= memory, (model, mode, replicas, memory)
            if most < limit:
                with pytest.raises(ValueError, match=rf"replicas.*at most {most}"):
                    gpu(types=(instance,), sharing={mode: {"replicas": most + 1}})
