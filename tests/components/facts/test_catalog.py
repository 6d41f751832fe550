"""The instance-type facts against real sources: botocore's EC2 model and moto's DescribeInstanceTypes data."""

import gzip
import importlib.util
import json
from pathlib import Path

import moto
import pytest

from gpuplane.components.config import NodeGroupArgs
from gpuplane.components.facts import catalog
from gpuplane.components.plan import gpu_nodes, node_template

ROOT = Path(__file__).resolve().parents[3]
MOTO_RESOURCES = Path(moto.__file__).parent / "ec2/resources"
with gzip.open(MOTO_RESOURCES / "instance_types.json.gz") as _data:
    # moto's copy of the EC2 DescribeInstanceTypes answer: the source the shipped data file is generated from.
    MOTO_TYPES = json.loads(_data.read())


def _refresh_script():
    spec = importlib.util.spec_from_file_location("refresh_instance_types", ROOT / "scripts/refresh_instance_types.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_type_of_the_source_is_accepted_or_refused_by_name():
    assert len(MOTO_TYPES) > 1300
    assert set(catalog.CATALOG) | set(catalog.REFUSED) == set(MOTO_TYPES)
    assert not set(catalog.CATALOG) & set(catalog.REFUSED)
    # What gpuplane refuses: Macs and non-NVIDIA accelerators (Inferentia, Trainium, FPGAs, media, Qualcomm).
    assert {n.split(".")[0] for n in catalog.REFUSED} <= {
        "mac1", "mac2", "mac2-m1ultra", "mac2-m2", "mac2-m2pro", "mac-m3ultra", "mac-m4", "mac-m4max", "mac-m4pro",
        "inf1", "inf2", "trn1", "trn1n", "trn2", "trn2u", "f2", "vt1", "dl2q",
    }  # fmt: skip


def test_every_entry_matches_describe_instance_types():
    for entry in catalog.CATALOG.values():
        api = MOTO_TYPES[entry.name]
        where = entry.name
        assert entry.name in catalog.aws_instance_types(), where
        assert entry.vcpus == api["VCpuInfo"]["DefaultVCpus"], where
        assert entry.memory_mib == api["MemoryInfo"]["SizeInMiB"], where
        assert entry.architecture in api["ProcessorInfo"]["SupportedArchitectures"], where
        assert entry.cpu_maker == api["ProcessorInfo"]["Manufacturer"], where
        gpus = (api.get("GpuInfo") or {}).get("Gpus", [])
        if gpus:
            assert gpus[0]["Manufacturer"] == "NVIDIA", where
            assert (entry.gpu_count, entry.gpu_model, entry.gpu_memory_mib) == (
                gpus[0]["Count"],
                gpus[0]["Name"],
                gpus[0]["MemoryInfo"]["SizeInMiB"],
            ), where
        else:
            assert entry.gpu_count == 0 and entry.gpu_model is None, where
        network = api["NetworkInfo"]
        assert entry.efa_supported == network["EfaSupported"], where
        assert entry.max_efa_interfaces == network.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0), where
        assert entry.max_network_cards == network["MaximumNetworkCards"], where
        assert entry.usage_classes == set(api["SupportedUsageClasses"]), where
        assert entry.source.startswith("moto 5.2.5 (PyPI)"), where


@pytest.mark.parametrize(
    ("name", "facts"),
    [
        # The types a newcomer tried, values as DescribeInstanceTypes reports them (moto 5.2.5).
        ("c6a.large", ("x86_64", 2, 4096, 0, None, 0, "AMD", False, 0, 1)),
        ("r5.large", ("x86_64", 2, 16384, 0, None, 0, "Intel", False, 0, 1)),
        ("m5a.xlarge", ("x86_64", 4, 16384, 0, None, 0, "AMD", False, 0, 1)),
        ("g6e.xlarge", ("x86_64", 4, 32768, 1, "L40S", 45776, "AMD", False, 0, 1)),
        ("p5.48xlarge", ("x86_64", 192, 2097152, 8, "H100", 81920, "AMD", True, 32, 32)),
        ("g5.8xlarge", ("x86_64", 32, 131072, 1, "A10G", 22888, "AMD", True, 1, 1)),
        ("p4d.24xlarge", ("x86_64", 96, 1179648, 8, "A100", 40960, "Intel", True, 4, 4)),
        ("g5g.xlarge", ("arm64", 4, 8192, 1, "T4g", 16384, "AWS", False, 0, 1)),
    ],
)
def test_the_types_a_newcomer_tried(name, facts):
    e = catalog.lookup(name)
    assert (
        e.architecture,
        e.vcpus,
        e.memory_mib,
        e.gpu_count,
        e.gpu_model,
        e.gpu_memory_mib,
        e.cpu_maker,
        e.efa_supported,
        e.max_efa_interfaces,
        e.max_network_cards,
    ) == facts
    assert catalog.offered_in(name, "us-east-1") is True


def test_network_cards_and_offerings_for_the_efa_and_capacity_issues():
    p5 = catalog.lookup("p5.48xlarge")
    assert [c.index for c in p5.network_cards] == list(range(32))
    assert all(c.interface_types == {"interface", "efa", "efa-only"} for c in p5.network_cards)
    assert p5.network_cards[0].baseline_gbps == 100.0
    assert {"on-demand", "spot", "capacity-block"} <= p5.usage_classes and p5.spot_supported
    assert catalog.lookup("g5.xlarge").network_cards[0].interface_types == {"interface"}
    # Offerings per region from DescribeInstanceTypeOfferings: p5.48xlarge is not sold in af-south-1.
    with gzip.open(MOTO_RESOURCES / "instance_type_offerings/region/af-south-1.json.gz") as f:
        af = {o["InstanceType"] for o in json.loads(f.read())}
    assert catalog.offered_in("p5.48xlarge", "af-south-1") is ("p5.48xlarge" in af)
    assert catalog.offered_in("m5.large", "af-south-1") is True
    assert catalog.offered_in("m5.large", "cn-north-1") is None  # not covered by the data: unknown, not False


def test_facts_that_node_groups_rely_on():
    g5 = catalog.lookup("g5.xlarge")
    assert (g5.gpu_count, g5.gpu_model, g5.gpu_memory_mib, g5.architecture) == (1, "A10G", 22888, "x86_64")
    assert catalog.lookup("g5g.xlarge").architecture == "arm64"
    assert catalog.lookup("p4d.24xlarge").mig_capable
    assert not catalog.lookup("g5.xlarge").mig_capable


def test_unknown_refused_and_missing_types_get_different_errors(monkeypatch):
    with pytest.raises(ValueError, match=r"'g9\.huge' is not an EC2 instance type"):
        catalog.lookup("g9.huge")
    with pytest.raises(ValueError, match=r"'inf2\.xlarge' carries AWS Inferentia2, which gpuplane does not support"):
        catalog.lookup("inf2.xlarge")
    with pytest.raises(ValueError, match=r"'mac2\.metal' is a Mac instance"):
        catalog.lookup("mac2.metal")
    # A type the EC2 API knows and the data lacks: the error names the data's source and date and how to refresh.
    missing = sorted(catalog.aws_instance_types() - set(catalog.CATALOG) - set(catalog.REFUSED))[0]
    with pytest.raises(ValueError, match=r"valid EC2 instance type but gpuplane's instance data \(moto 5\.2\.5") as e:
        catalog.lookup(missing)
    assert catalog.DATA_DATE in str(e.value) and "scripts/refresh_instance_types.py" in str(e.value)


def test_a_gpu_model_without_a_compute_capability_is_refused_by_name():
    raw = {"architectures": ["x86_64"], "gpus": [{"count": 1, "maker": "NVIDIA", "name": "Z9", "memoryMiB": 1}]}
    reason = catalog._refusal("z9.xlarge", raw)
    assert reason is not None and "NVIDIA Z9" in reason and "compute capability" in reason
    amd = {"architectures": ["x86_64"], "gpus": [{"count": 1, "maker": "AMD", "name": "Radeon Pro V520"}]}
    assert "AMD Radeon Pro V520" in str(catalog._refusal("g4ad.xlarge", amd))


def test_every_gpu_model_has_a_compute_capability_and_groups_label_it():
    models = {e.gpu_model for e in catalog.CATALOG.values() if e.gpu_model}
    assert models <= set(catalog.COMPUTE_CAPABILITY)
    assert {"T4", "A10G", "L4", "L40S", "A100", "H100", "H200", "B200"} <= models
    group = NodeGroupArgs(name="gpu", kind="gpu", instance_types=["g5.xlarge"])
    assert gpu_nodes.node_labels(group, gpu_operator=False)["gpuplane.io/gpu-compute-capability"] == "86"
    tags = node_template.autoscaler_tags(group, "c")
    assert tags["k8s.io/cluster-autoscaler/node-template/label/gpuplane.io/gpu-compute-capability"] == "86"


# The AVX-512 families of the hand-written catalog this data replaced, and its x86 families without AVX-512:
# the rule must keep every one of them as it was.
_OLD_AVX512 = ["c5", "m5", "t3", "c6i", "m6i", "r6i", "c7i", "m7i", "r7i", "m7a", "g4dn", "p4d", "p4de", "p5en"]
_OLD_AVX2_ONLY = ["t3a", "m6a", "g5", "g6", "g6e", "gr6", "p5", "p5e"]


def test_cpu_features_keep_the_hand_written_catalogs_answers():
    for name, entry in catalog.CATALOG.items():
        if entry.family in _OLD_AVX512:
            assert catalog.cpu_features(entry) == {"avx", "avx2", "avx512f"}, name
        elif entry.family in _OLD_AVX2_ONLY:
            assert catalog.cpu_features(entry) == {"avx", "avx2"}, name
    assert catalog.cpu_features(catalog.lookup("m7g.large")) == frozenset()
    # The newly accepted families follow the processor rule: Intel Skylake+ and AMD Zen 4+ have AVX-512.
    assert "avx512f" in catalog.cpu_features(catalog.lookup("r5.large"))
    assert "avx512f" in catalog.cpu_features(catalog.lookup("c7a.large"))
    assert "avx512f" not in catalog.cpu_features(catalog.lookup("c6a.large"))
    assert "avx512f" not in catalog.cpu_features(catalog.lookup("m5a.large"))
    assert catalog.cpu_features(catalog.lookup("c3.large")) == {"avx"}
    assert catalog.cpu_features(catalog.lookup("m1.small")) == frozenset()


def test_the_newcomers_types_render_in_a_node_group():
    for types, kind in ((["c6a.large"], "cpu"), (["r5.large"], "cpu"), (["m5a.large"], "cpu"), (["g6e.xlarge"], "gpu")):
        group = NodeGroupArgs(name="group", kind=kind, instance_types=types)
        assert group.instance.name == types[0]


def test_the_refresh_script_on_a_small_fixture(tmp_path):
    script = _refresh_script()
    types = {n: MOTO_TYPES[n] for n in ("p5.48xlarge", "c6a.large", "inf2.xlarge")}
    offerings = {"us-east-1": ["p5.48xlarge", "c6a.large"], "us-west-2": ["c6a.large"], "eu-west-1": []}
    document = script.build(types, offerings, "fixture", "2026-01-02")
    text = script.dumps(document)
    assert json.loads(text) == document
    assert len(text.splitlines()) == 5 + 3 + 2  # header lines, one line per type, closing lines
    assert (document["source"], document["generated"]) == ("fixture", "2026-01-02")
    assert document["regions"] == ["eu-west-1", "us-east-1", "us-west-2"]
    p5 = document["types"]["p5.48xlarge"]
    assert (p5["vcpus"], p5["memoryMiB"], p5["efaInterfaces"], len(p5["networkCards"])) == (192, 2097152, 32, 32)
    assert p5["gpus"] == [{"count": 8, "maker": "NVIDIA", "name": "H100", "memoryMiB": 81920}]
    assert p5["regions"] == ["us-east-1"]
    # The shorter list is kept: offered in 2 of the 3 regions is written as "every region but eu-west-1".
    assert document["types"]["c6a.large"]["exceptRegions"] == ["eu-west-1"]
    assert document["types"]["inf2.xlarge"]["accelerators"] == ["AWS Inferentia2"]
    out = tmp_path / "types.json"
    assert script.main(["--out", str(out), "--date", "2026-01-02"]) == 0
    assert json.loads(out.read_text())["types"]["g5.xlarge"]["gpus"][0]["name"] == "A10G"


def test_the_shipped_file_is_what_the_script_makes_from_the_pinned_moto():
    script = _refresh_script()
    shipped = catalog.DATA_FILE.read_text()
    types, offerings, source = script.from_moto()
    assert shipped == script.dumps(script.build(types, offerings, source, catalog.DATA_DATE))
