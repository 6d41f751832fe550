"""Instance-type facts: vCPUs, memory, architecture, GPUs, EFA and network cards, for every EC2 instance type.

Why a shipped data file and not a live `DescribeInstanceTypes` call: `gpuplane render` and config validation
run offline, and a node group's AMI type, GPU label, GPU taint and autoscaler `resources/nvidia.com/gpu` tag
must be known before anything is created. Why not a table written by hand: EC2 has about 1,400 types and adds
families every few months; the hand-written table refused common types (c6a, r5, m5a).

The facts come from `data/instance_types.json`, generated from EC2's own `DescribeInstanceTypes` and
`DescribeInstanceTypeOfferings` answers by `scripts/refresh_instance_types.py` (offline from moto's bundled
copy of those answers, or live with credentials); the file records its source and date (`DATA_SOURCE`,
`DATA_DATE`). Numbers are what the API reports (GPU memory as reported, e.g. the A10G's 22888 MiB, not the
marketing 24 GiB). `gpuplane preflight` re-checks offerings against the live API before `pulumi up`.

What no source carries stays a small table of ours, below: CUDA compute capability per GPU model, MIG
support per GPU model, and CPU instruction sets per processor family. A GPU model without a known compute
capability, a non-NVIDIA accelerator and a Mac type are refused by name.

API for other modules (plain values; no Pulumi, no boto3 client, no network): `lookup(name)` ->
`InstanceType` (or ValueError naming the type, the data's source and how to refresh it), `CATALOG` (every type
gpuplane accepts, by name), `compute_capability`, `cpu_features`, `offered_in`, `aws_instance_types`.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal

Architecture = Literal["x86_64", "arm64"]

DATA_FILE: Final = Path(__file__).resolve().parent / "data" / "instance_types.json"
REFRESH_HINT: Final = (
    "refresh it with `python scripts/refresh_instance_types.py` (after bumping moto's pin in pyproject.toml), "
    "or `--from live` with AWS credentials"
)

# GPU models whose driver supports Multi-Instance GPU partitioning (NVIDIA MIG user guide,
# "Supported GPUs": A100, A30, H100, H200, B200 and later data-center parts).
MIG_CAPABLE_GPUS: Final = frozenset({"A100", "A30", "H100", "H200", "B200", "B300"})
# GPU memory each process holds outside TensorFlow's allocator: its CUDA context. A shared GPU unit's budget
# (time-slicing, MPS) is its share of the GPU less this, or N processes each filling 1/N run the GPU out of memory
# (and under MPS the context counts against the client's pinned-memory limit). Measured 527 MiB on an H200 (driver
# 580.159.04, benchmarks/cuda_context.py, 2026-11-30), rounded up to 64 MiB; smaller GPUs' contexts are smaller.
CUDA_CONTEXT_RESERVE_MIB: Final = 576
# The least GPU memory a shared unit must leave TensorFlow after the context: a smaller budget runs no model.
MIN_SHARED_UNIT_BUDGET_MIB: Final = 256
# The driver reports less GPU memory than DescribeInstanceTypes lists (the catalog's `gpu_memory_mib`), and
# TensorFlow multiplies its fraction by what the driver reports: 143,155 of 144,384 MiB on an H200
# (benchmarks/cuda_context.py), less with ECC reserving memory on smaller GPUs. The fraction is sized for a GPU that
# reports only this share of the catalog's figure, so the contexts still fit where the driver reports more.
REPORTED_GPU_MEMORY_FLOOR: Final = 0.9


def reported_gpu_memory_floor_mib(facts: InstanceType) -> float:
    """The least memory (MiB) the driver may report of one of the type's GPUs: what shared units are sized on."""
    return REPORTED_GPU_MEMORY_FLOOR * facts.gpu_memory_mib


# CUDA compute capability of each NVIDIA GPU model EC2 offers, as DescribeInstanceTypes names it (NVIDIA,
# developer.nvidia.com/cuda-gpus, checked 2026-11), as major*10+minor so that node affinity can compare it with
# `Gt` (Kubernetes compares integers only). V100 7.0 (p3dn), T4/T4g 7.5, A100 8.0, A10G 8.6, L4/L40S 8.9,
# H100/H200 9.0, B200 10.0, B300 (Blackwell Ultra) 10.3, RTX PRO 4500/6000 Blackwell 12.0 (g7, g7e).
COMPUTE_CAPABILITY: Final[dict[str, int]] = {
    "V100": 70, "T4": 75, "T4g": 75, "A100": 80, "A10G": 86, "L4": 89, "L40S": 89, "H100": 90, "H200": 90,
    "B200": 100, "B300": 103, "RTX PRO 4500": 120, "RTX PRO Server 6000": 120,
}  # fmt: skip


@dataclass(frozen=True)
class NetworkCard:
    """One network card of an instance type (DescribeInstanceTypes `NetworkInfo.NetworkCards`)."""

    index: int
    max_interfaces: int
    interface_types: frozenset[str]
    """`interface`, and on EFA types `efa` and `efa-only` (an EFA without an IP address)."""
    baseline_gbps: float


@dataclass(frozen=True)
class InstanceType:
    """What gpuplane knows about one EC2 instance type."""

    name: str
    architecture: Architecture
    vcpus: int
    memory_mib: int
    gpu_count: int = 0
    gpu_model: str | None = None
    gpu_memory_mib: int = 0
    """Memory of ONE GPU, as `DescribeInstanceTypes` reports it (MiB)."""
    cpu_maker: str = ""
    """`Intel`, `AMD` or `AWS` (Graviton), as `ProcessorInfo.Manufacturer` reports it."""
    efa_supported: bool = False
    max_efa_interfaces: int = 0
    network_cards: tuple[NetworkCard, ...] = ()
    max_network_interfaces: int = 0
    usage_classes: frozenset[str] = frozenset({"on-demand"})
    """`on-demand`, `spot`, `capacity-block`: how the type can be bought."""
    regions: frozenset[str] = frozenset()
    """Regions that offer the type (of the regions the data covers: `covered_regions()`)."""
    current_generation: bool = True
    bare_metal: bool = False
    source: str = ""
    """Where the facts came from (the data file's source line)."""

    @property
    def family(self) -> str:
        """The part before the dot, e.g. `g5` for `g5.xlarge`."""
        return self.name.split(".", 1)[0]

    @property
    def has_gpu(self) -> bool:
        """True for NVIDIA GPU instance types."""
        return self.gpu_count > 0

    @property
    def mig_capable(self) -> bool:
        """Whether the GPU can be partitioned with MIG."""
        return self.gpu_model in MIG_CAPABLE_GPUS

    @property
    def max_network_cards(self) -> int:
        """How many network cards the type has (one EFA interface per card for full EFA bandwidth)."""
        return len(self.network_cards)

    @property
    def spot_supported(self) -> bool:
        """Whether EC2 sells the type as spot."""
        return "spot" in self.usage_classes


def compute_capability(entry: InstanceType) -> int | None:
    """The instance's GPU compute capability as major*10+minor (86 for 8.6); None without a GPU."""
    return COMPUTE_CAPABILITY[entry.gpu_model] if entry.gpu_model else None


# --- CPU instruction sets per processor family (ours: no API reports them) --------------------------------
# From the processor each family runs (EC2 instance type pages, docs.aws.amazon.com/ec2/latest/instancetypes/):
# Intel Xeon from Skylake (5th-generation families: c5, m5, r5...) on has AVX-512; AMD EPYC from Zen 4
# (7th-generation families: m7a, c7a, r7a, hpc7a, and the 8a families) on has it, Zen 1-3 (t3a, m5a, m6a, g5,
# g6, g6e, gr6, p5, p5e...) does not. These Intel families carry an older generation digit but run Skylake or
# newer: t3 (Skylake/Cascade Lake), g4dn, p4d, p4de, z1d, i3en, d3, d3en, x2idn, x2iedn, x2iezn, i4i, p3dn,
# u-3tb1, u-6tb1. Families before Haswell (no AVX2): c1, m1, m2, t1 (no AVX either), c3, m3, r3, i2, g2, cr1.
# Graviton (arm64) has none of these.
_INTEL_AVX512_OLD_DIGIT: Final = frozenset(
    {"t3", "g4dn", "p4d", "p4de", "z1d", "i3en", "d3", "d3en", "x2idn", "x2iedn", "x2iezn", "i4i", "p3dn",
     "u-3tb1", "u-6tb1"}
)  # fmt: skip
_NO_AVX: Final = frozenset({"c1", "m1", "m2", "t1"})
_NO_AVX2: Final = frozenset({"c3", "m3", "r3", "i2", "g2", "cr1"})
_GENERATION_RE: Final = re.compile(r"^[a-z]+-?(\d+)")


def cpu_features(entry: InstanceType) -> frozenset[str]:
    """Lower-case CPU features (`avx`, `avx2`, `avx512f`) an image may need, for node labels and affinity.

    Why gpuplane labels these itself: NFD labels exist only on running nodes where NFD runs, and a pod whose
    affinity needs one never makes the cluster-autoscaler scale a group up from zero.
    """
    if entry.architecture != "x86_64" or entry.family in _NO_AVX:
        return frozenset()
    if entry.family in _NO_AVX2:
        return frozenset({"avx"})
    features = {"avx", "avx2"}
    match = _GENERATION_RE.match(entry.family)
    generation = int(match.group(1)) if match else 0
    if (entry.cpu_maker == "Intel" and (generation >= 5 or entry.family in _INTEL_AVX512_OLD_DIGIT)) or (
        entry.cpu_maker == "AMD" and generation >= 7
    ):
        features.add("avx512f")
    return frozenset(features)


# --- the data file ------------------------------------------------------------------------------------------


@cache
def _data() -> dict[str, Any]:
    with DATA_FILE.open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


DATA_SOURCE: Final[str] = _data()["source"]
DATA_DATE: Final[str] = _data()["generated"]


def covered_regions() -> frozenset[str]:
    """The regions whose offerings the data file holds."""
    return frozenset(_data()["regions"])


def _refusal(name: str, raw: dict[str, Any]) -> str | None:
    """Why gpuplane cannot run nodes of this type, or None."""
    if "x86_64" not in raw["architectures"] and "arm64" not in raw["architectures"]:
        return f"'{name}' is a Mac instance ({', '.join(raw['architectures'])}); EKS nodes need x86_64 or arm64"
    if raw.get("accelerators"):
        return (
            f"'{name}' carries {', '.join(raw['accelerators'])}, which gpuplane does not support "
            "(NVIDIA GPUs only); use a GPU type such as g5, g6, g6e or p5, or a CPU type"
        )
    gpus = raw.get("gpus", [])
    if len(gpus) > 1 or any(g["maker"] != "NVIDIA" for g in gpus):
        makers = ", ".join(f"{g['maker']} {g['name']}" for g in gpus)
        return f"'{name}' has {makers} GPUs; gpuplane supports one NVIDIA GPU model per type"
    if gpus and gpus[0]["name"] not in COMPUTE_CAPABILITY:
        return (
            f"'{name}' has NVIDIA {gpus[0]['name']} GPUs, whose CUDA compute capability gpuplane does not know; "
            f"known: {', '.join(sorted(COMPUTE_CAPABILITY))} (add it to catalog.COMPUTE_CAPABILITY)"
        )
    return None


def _entry(name: str, raw: dict[str, Any]) -> InstanceType:
    covered = covered_regions()
    regions = frozenset(raw["regions"]) if "regions" in raw else covered - frozenset(raw.get("exceptRegions", []))
    gpu = raw["gpus"][0] if raw.get("gpus") else None
    return InstanceType(
        name=name,
        architecture="x86_64" if "x86_64" in raw["architectures"] else "arm64",
        vcpus=raw["vcpus"],
        memory_mib=raw["memoryMiB"],
        gpu_count=gpu["count"] if gpu else 0,
        gpu_model=gpu["name"] if gpu else None,
        gpu_memory_mib=gpu["memoryMiB"] if gpu else 0,
        cpu_maker=raw["cpu"],
        efa_supported="efaInterfaces" in raw,
        max_efa_interfaces=raw.get("efaInterfaces", 0),
        network_cards=tuple(
            NetworkCard(i, card[0], frozenset(card[1].split(",")), float(card[2]))
            for i, card in enumerate(raw["networkCards"])
        ),
        max_network_interfaces=raw["maxNetworkInterfaces"],
        usage_classes=frozenset(raw["usageClasses"]),
        regions=regions,
        current_generation=raw["currentGeneration"],
        bare_metal=raw["bareMetal"],
        source=f"{DATA_SOURCE}, {DATA_DATE}",
    )


def _load() -> tuple[dict[str, InstanceType], dict[str, str]]:
    accepted: dict[str, InstanceType] = {}
    refused: dict[str, str] = {}
    for name, raw in _data()["types"].items():
        reason = _refusal(name, raw)
        if reason is None:
            accepted[name] = _entry(name, raw)
        else:
            refused[name] = reason
    return accepted, refused


_LOADED: Final = _load()
CATALOG: Final[dict[str, InstanceType]] = _LOADED[0]
"""Every instance type gpuplane accepts, by name."""
REFUSED: Final[dict[str, str]] = _LOADED[1]
"""Instance types the data knows and gpuplane refuses (Mac, non-NVIDIA accelerators), with the reason."""


@cache
def aws_instance_types() -> frozenset[str]:
    """Every instance type name the EC2 API accepts, from the API model that botocore ships.

    This is the source of truth for "does AWS know this type at all", independent of our data file.
    """
    # Here, not at import: the catalog itself is our data file and needs no botocore (about 0.3 s to import).
    from gpuplane.components.facts import partition  # noqa: PLC0415

    model = partition.botocore_session().get_service_model("ec2")
    return frozenset(model.shape_for("InstanceType").enum)


def lookup(name: str) -> InstanceType:
    """Return the facts for `name`, or raise ValueError saying what is wrong and what is allowed."""
    if name in CATALOG:
        return CATALOG[name]
    if name in REFUSED:
        raise ValueError(REFUSED[name])
    if name not in aws_instance_types():
        close = difflib.get_close_matches(name, sorted(aws_instance_types()), n=1, cutoff=0.75)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ValueError(f"'{name}' is not an EC2 instance type (not in the EC2 API model){hint}")
    raise ValueError(
        f"'{name}' is a valid EC2 instance type but gpuplane's instance data ({DATA_SOURCE}, {DATA_DATE}) "
        f"has no facts for it; {REFRESH_HINT}"
    )


def offered_in(name: str, region: str) -> bool | None:
    """Whether `region` offers the type: True/False, or None when the data does not cover `region`."""
    if region not in covered_regions():
        return None
    return region in lookup(name).regions
