"""Scheduling helpers: GPU requests, tolerations, CUDA-driver and CPU-feature affinity."""

from __future__ import annotations

import kubernetes_validate
import pytest

from gpuplane.manifests import scheduling


@pytest.mark.parametrize(("cuda", "floor"), [(11, "449"), (12, "524"), (13, "579")])
def test_cuda_affinity_requires_the_minimum_driver(cuda, floor):
    assert scheduling.cuda_requirement(cuda) == {
        "key": "nvidia.com/cuda.driver-version.major",
        "operator": "Gt",
        "values": [floor],
    }


def test_cpu_features_and_full_pod_scheduling_validate():
    sched = scheduling.gpu_pod_scheduling(gpus=2, cuda_major=12, cpu_features=["AVX512F", "AVX512VNNI"])
    assert sched["limits"] == {"nvidia.com/gpu": "2"}
    assert sched["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    (term,) = sched["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"][1:] == [
        {"key": "feature.node.kubernetes.io/cpu-cpuid.AVX512F", "operator": "In", "values": ["true"]},
        {"key": "feature.node.kubernetes.io/cpu-cpuid.AVX512VNNI", "operator": "In", "values": ["true"]},
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {"name": "c", "image": "tensorflow/tensorflow:2.21.0-gpu", "resources": {"limits": sched["limits"]}}
            ],
            "tolerations": sched["tolerations"],
            "affinity": sched["affinity"],
        },
    }
    kubernetes_validate.validate(pod, "1.35", strict=True)


def test_no_requirements_means_no_affinity():
    assert scheduling.node_affinity() is None
    assert "affinity" not in scheduling.gpu_pod_scheduling()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: scheduling.cuda_requirement(10), "CUDA 10 is unknown"),
        (lambda: scheduling.cpu_feature_requirements(["avx512f"]), "CPU feature 'avx512f' is not an NFD cpuid flag"),
        (lambda: scheduling.gpu_limits(0), "GPU count 0 must be at least 1"),
    ],
)
def test_bad_requests_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
