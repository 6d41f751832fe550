"""The instance-type catalog against real sources: botocore's EC2 model and moto's DescribeInstanceTypes data."""

import gzip
import json
from pathlib import Path

import moto
import pytest

from gpuplane.components.config import NodeGroupArgs
from gpuplane.components.facts import catalog
from gpuplane.components.plan import gpu_nodes, node_template

with gzip.open(Path(moto.__file__).parent / "ec2/resources/instance_types.json.gz") as _data:
    # moto's copy of the EC2 DescribeInstanceTypes answer: an independent source of truth for the catalog.
    MOTO_TYPES = json.loads(_data.read())


@pytest.mark.parametrize("entry", catalog.CATALOG.values(), ids=lambda e: e.name)
def test_entry_matches_describe_instance_types(entry):
    api = MOTO_TYPES[entry.name]
    assert entry.name in catalog.aws_instance_types()
    assert entry.vcpus == api["VCpuInfo"]["DefaultVCpus"]
    assert entry.memory_mib == api["MemoryInfo"]["SizeInMiB"]
    assert entry.architecture in api["ProcessorInfo"]["SupportedArchitectures"]
    gpus = (api.get("GpuInfo") or {}).get("Gpus", [])
    if gpus:
        assert gpus[0]["Manufacturer"] == "NVIDIA"
        assert (entry.gpu_count, entry.gpu_model, entry.gpu_memory_mib) == (
            gpus[0]["Count"],
            gpus[0]["Name"],
            gpus[0]["MemoryInfo"]["SizeInMiB"],
        )
    else:
        assert entry.gpu_count == 0 and entry.gpu_model is None
    assert entry.source.startswith("https://docs.aws.amazon.com/ec2/latest/instancetypes/")


def test_facts_that_node_groups_rely_on():
    g5 = catalog.lookup("g5.xlarge")
    assert (g5.gpu_count, g5.gpu_model, g5.gpu_memory_mib, g5.architecture) == (1, "A10G", 22888, "x86_64")
    assert catalog.lookup("g5g.xlarge").architecture == "arm64"
    assert catalog.lookup("p4d.24xlarge").mig_capable
    assert not catalog.lookup("g5.xlarge").mig_capable


def test_unknown_and_uncatalogued_types_get_different_errors():
    with pytest.raises(ValueError, match=r"'g9\.huge' is not an EC2 instance type"):
        catalog.lookup("g9.huge")
    with pytest.raises(ValueError, match=r"valid EC2 instance type but gpuplane's catalog has no facts.*g5"):
        catalog.lookup("x2iedn.xlarge")


def test_every_gpu_model_has_a_compute_capability_and_groups_label_it():
    models = {e.gpu_model for e in catalog.CATALOG.values() if e.gpu_model}
    assert models <= set(catalog.COMPUTE_CAPABILITY)
    group = NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g5.xlarge"])
    assert gpu_nodes.node_labels(group, gpu_operator=False)["gpuplane.io/gpu-compute-capability"] == "86"
    tags = node_template.autoscaler_tags(group, "c")
    assert tags["k8s.io/cluster-autoscaler/node-template/label/gpuplane.io/gpu-compute-capability"] == "86"
