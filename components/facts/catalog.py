"""Instance-type facts: vCPUs, memory, architecture and GPUs, one entry per EC2 instance type.

Why a catalog and not a live `DescribeInstanceTypes` call: `gpuplane render` and config validation run
offline, and a node group's AMI type, GPU label, GPU taint and autoscaler `resources/nvidia.com/gpu` tag
must be known before anything is created. Each family below names its source; the numbers are what
`ec2:DescribeInstanceTypes` returns (GPU memory as reported, e.g. the A10G's 22888 MiB, not the marketing
24 GiB), and `tests/components/facts/test_catalog.py` checks every entry against moto's copy of that API
answer. `gpuplane preflight` re-checks offerings against the live API before `pulumi up`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Final, Literal

import botocore.session

Architecture = Literal["x86_64", "arm64"]

# GPU models whose driver supports Multi-Instance GPU partitioning (NVIDIA MIG user guide,
# "Supported GPUs": A100, A30, H100, H200, B200 and later data-center parts).
MIG_CAPABLE_GPUS: Final = frozenset({"A100", "A30", "H100", "H200", "B200", "B300"})
# CUDA compute capability of each GPU model in the catalog (NVIDIA, developer.nvidia.com/cuda-gpus), as
# major*10+minor so that node affinity can compare it with `Gt` (Kubernetes compares integers only).
COMPUTE_CAPABILITY: Final[dict[str, int]] = {
    "T4": 75, "T4g": 75, "A10G": 86, "L4": 89, "L40S": 89, "A100": 80, "H100": 90, "H200": 90, "B200": 100,
}  # fmt: skip


def compute_capability(entry: InstanceType) -> int | None:
    """The instance's GPU compute capability as major*10+minor (86 for 8.6); None without a GPU."""
    return COMPUTE_CAPABILITY[entry.gpu_model] if entry.gpu_model else None


_SRC_ACCEL: Final = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html"
_SRC_GP: Final = "https://docs.aws.amazon.com/ec2/latest/instancetypes/gp.html"
_SRC_CO: Final = "https://docs.aws.amazon.com/ec2/latest/instancetypes/co.html"
_SRC_MO: Final = "https://docs.aws.amazon.com/ec2/latest/instancetypes/mo.html"


@dataclass(frozen=True)
class InstanceType:
    """What gpuplane needs to know about one EC2 instance type."""

    name: str
    architecture: Architecture
    vcpus: int
    memory_mib: int
    gpu_count: int = 0
    gpu_model: str | None = None
    gpu_memory_mib: int = 0
    """Memory of ONE GPU, as `DescribeInstanceTypes` reports it (MiB)."""
    source: str = ""

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


def _gpu(  # noqa: PLR0917 - one positional row per catalog entry keeps the table readable
    name: str, arch: Architecture, vcpus: int, mem: int, count: int, model: str, gmem: int
) -> InstanceType:
    return InstanceType(name, arch, vcpus, mem, count, model, gmem, _SRC_ACCEL)


def _cpu(name: str, arch: Architecture, vcpus: int, mem: int) -> InstanceType:
    family = name.split(".", 1)[0]
    source = _SRC_CO if family.startswith("c") else _SRC_MO if family.startswith("r") else _SRC_GP
    return InstanceType(name, arch, vcpus, mem, source=source)


_ENTRIES: Final[tuple[InstanceType, ...]] = (
    # g4dn
    _gpu("g4dn.xlarge", "x86_64", 4, 16384, 1, "T4", 16384),
    _gpu("g4dn.2xlarge", "x86_64", 8, 32768, 1, "T4", 16384),
    _gpu("g4dn.4xlarge", "x86_64", 16, 65536, 1, "T4", 16384),
    _gpu("g4dn.8xlarge", "x86_64", 32, 131072, 1, "T4", 16384),
    _gpu("g4dn.12xlarge", "x86_64", 48, 196608, 4, "T4", 16384),
    _gpu("g4dn.16xlarge", "x86_64", 64, 262144, 1, "T4", 16384),
    # g5
    _gpu("g5.xlarge", "x86_64", 4, 16384, 1, "A10G", 22888),
    _gpu("g5.2xlarge", "x86_64", 8, 32768, 1, "A10G", 22888),
    _gpu("g5.4xlarge", "x86_64", 16, 65536, 1, "A10G", 22888),
    _gpu("g5.8xlarge", "x86_64", 32, 131072, 1, "A10G", 22888),
    _gpu("g5.12xlarge", "x86_64", 48, 196608, 4, "A10G", 22888),
    _gpu("g5.16xlarge", "x86_64", 64, 262144, 1, "A10G", 22888),
    _gpu("g5.24xlarge", "x86_64", 96, 393216, 4, "A10G", 22888),
    _gpu("g5.48xlarge", "x86_64", 192, 786432, 8, "A10G", 22888),
    # g5g
    _gpu("g5g.xlarge", "arm64", 4, 8192, 1, "T4g", 16384),
    _gpu("g5g.2xlarge", "arm64", 8, 16384, 1, "T4g", 16384),
    _gpu("g5g.4xlarge", "arm64", 16, 32768, 1, "T4g", 16384),
    _gpu("g5g.8xlarge", "arm64", 32, 65536, 1, "T4g", 16384),
    _gpu("g5g.16xlarge", "arm64", 64, 131072, 2, "T4g", 16384),
    # g6
    _gpu("g6.xlarge", "x86_64", 4, 16384, 1, "L4", 22888),
    _gpu("g6.2xlarge", "x86_64", 8, 32768, 1, "L4", 22888),
    _gpu("g6.4xlarge", "x86_64", 16, 65536, 1, "L4", 22888),
    _gpu("g6.8xlarge", "x86_64", 32, 131072, 1, "L4", 22888),
    _gpu("g6.12xlarge", "x86_64", 48, 196608, 4, "L4", 22888),
    _gpu("g6.16xlarge", "x86_64", 64, 262144, 1, "L4", 22888),
    _gpu("g6.24xlarge", "x86_64", 96, 393216, 4, "L4", 22888),
    _gpu("g6.48xlarge", "x86_64", 192, 786432, 8, "L4", 22888),
    # g6e
    _gpu("g6e.xlarge", "x86_64", 4, 32768, 1, "L40S", 45776),
    _gpu("g6e.2xlarge", "x86_64", 8, 65536, 1, "L40S", 45776),
    _gpu("g6e.4xlarge", "x86_64", 16, 131072, 1, "L40S", 45776),
    _gpu("g6e.8xlarge", "x86_64", 32, 262144, 1, "L40S", 45776),
    _gpu("g6e.12xlarge", "x86_64", 48, 393216, 4, "L40S", 45776),
    _gpu("g6e.16xlarge", "x86_64", 64, 524288, 1, "L40S", 45776),
    _gpu("g6e.24xlarge", "x86_64", 96, 786432, 4, "L40S", 45776),
    _gpu("g6e.48xlarge", "x86_64", 192, 1572864, 8, "L40S", 45776),
    # gr6
    _gpu("gr6.4xlarge", "x86_64", 16, 131072, 1, "L4", 22888),
    _gpu("gr6.8xlarge", "x86_64", 32, 262144, 1, "L4", 22888),
    # p4d
    _gpu("p4d.24xlarge", "x86_64", 96, 1179648, 8, "A100", 40960),
    # p4de
    _gpu("p4de.24xlarge", "x86_64", 96, 1179648, 8, "A100", 81920),
    # p5
    _gpu("p5.4xlarge", "x86_64", 16, 262144, 1, "H100", 81920),
    _gpu("p5.48xlarge", "x86_64", 192, 2097152, 8, "H100", 81920),
    # p5e
    _gpu("p5e.48xlarge", "x86_64", 192, 2097152, 8, "H200", 144384),
    # p5en
    _gpu("p5en.48xlarge", "x86_64", 192, 2097152, 8, "H200", 144384),
    # p6-b200
    _gpu("p6-b200.48xlarge", "x86_64", 192, 2097152, 8, "B200", 183359),
    # t3
    _cpu("t3.nano", "x86_64", 2, 512),
    _cpu("t3.micro", "x86_64", 2, 1024),
    _cpu("t3.small", "x86_64", 2, 2048),
    _cpu("t3.medium", "x86_64", 2, 4096),
    _cpu("t3.large", "x86_64", 2, 8192),
    _cpu("t3.xlarge", "x86_64", 4, 16384),
    _cpu("t3.2xlarge", "x86_64", 8, 32768),
    # t3a
    _cpu("t3a.nano", "x86_64", 2, 512),
    _cpu("t3a.micro", "x86_64", 2, 1024),
    _cpu("t3a.small", "x86_64", 2, 2048),
    _cpu("t3a.medium", "x86_64", 2, 4096),
    _cpu("t3a.large", "x86_64", 2, 8192),
    _cpu("t3a.xlarge", "x86_64", 4, 16384),
    _cpu("t3a.2xlarge", "x86_64", 8, 32768),
    # t4g
    _cpu("t4g.nano", "arm64", 2, 512),
    _cpu("t4g.micro", "arm64", 2, 1024),
    _cpu("t4g.small", "arm64", 2, 2048),
    _cpu("t4g.medium", "arm64", 2, 4096),
    _cpu("t4g.large", "arm64", 2, 8192),
    _cpu("t4g.xlarge", "arm64", 4, 16384),
    _cpu("t4g.2xlarge", "arm64", 8, 32768),
    # m5
    _cpu("m5.large", "x86_64", 2, 8192),
    _cpu("m5.xlarge", "x86_64", 4, 16384),
    _cpu("m5.2xlarge", "x86_64", 8, 32768),
    _cpu("m5.4xlarge", "x86_64", 16, 65536),
    _cpu("m5.8xlarge", "x86_64", 32, 131072),
    _cpu("m5.12xlarge", "x86_64", 48, 196608),
    _cpu("m5.16xlarge", "x86_64", 64, 262144),
    _cpu("m5.24xlarge", "x86_64", 96, 393216),
    # m6i
    _cpu("m6i.large", "x86_64", 2, 8192),
    _cpu("m6i.xlarge", "x86_64", 4, 16384),
    _cpu("m6i.2xlarge", "x86_64", 8, 32768),
    _cpu("m6i.4xlarge", "x86_64", 16, 65536),
    _cpu("m6i.8xlarge", "x86_64", 32, 131072),
    _cpu("m6i.12xlarge", "x86_64", 48, 196608),
    _cpu("m6i.16xlarge", "x86_64", 64, 262144),
    _cpu("m6i.24xlarge", "x86_64", 96, 393216),
    _cpu("m6i.32xlarge", "x86_64", 128, 524288),
    # m6a
    _cpu("m6a.large", "x86_64", 2, 8192),
    _cpu("m6a.xlarge", "x86_64", 4, 16384),
    _cpu("m6a.2xlarge", "x86_64", 8, 32768),
    _cpu("m6a.4xlarge", "x86_64", 16, 65536),
    _cpu("m6a.8xlarge", "x86_64", 32, 131072),
    _cpu("m6a.12xlarge", "x86_64", 48, 196608),
    _cpu("m6a.16xlarge", "x86_64", 64, 262144),
    _cpu("m6a.24xlarge", "x86_64", 96, 393216),
    _cpu("m6a.32xlarge", "x86_64", 128, 524288),
    _cpu("m6a.48xlarge", "x86_64", 192, 786432),
    # m7i
    _cpu("m7i.large", "x86_64", 2, 8192),
    _cpu("m7i.xlarge", "x86_64", 4, 16384),
    _cpu("m7i.2xlarge", "x86_64", 8, 32768),
    _cpu("m7i.4xlarge", "x86_64", 16, 65536),
    _cpu("m7i.8xlarge", "x86_64", 32, 131072),
    _cpu("m7i.12xlarge", "x86_64", 48, 196608),
    _cpu("m7i.16xlarge", "x86_64", 64, 262144),
    _cpu("m7i.24xlarge", "x86_64", 96, 393216),
    _cpu("m7i.48xlarge", "x86_64", 192, 786432),
    # m7a
    _cpu("m7a.medium", "x86_64", 1, 4096),
    _cpu("m7a.large", "x86_64", 2, 8192),
    _cpu("m7a.xlarge", "x86_64", 4, 16384),
    _cpu("m7a.2xlarge", "x86_64", 8, 32768),
    _cpu("m7a.4xlarge", "x86_64", 16, 65536),
    _cpu("m7a.8xlarge", "x86_64", 32, 131072),
    _cpu("m7a.12xlarge", "x86_64", 48, 196608),
    _cpu("m7a.16xlarge", "x86_64", 64, 262144),
    _cpu("m7a.24xlarge", "x86_64", 96, 393216),
    _cpu("m7a.32xlarge", "x86_64", 128, 524288),
    _cpu("m7a.48xlarge", "x86_64", 192, 786432),
    # m6g
    _cpu("m6g.medium", "arm64", 1, 4096),
    _cpu("m6g.large", "arm64", 2, 8192),
    _cpu("m6g.xlarge", "arm64", 4, 16384),
    _cpu("m6g.2xlarge", "arm64", 8, 32768),
    _cpu("m6g.4xlarge", "arm64", 16, 65536),
    _cpu("m6g.8xlarge", "arm64", 32, 131072),
    _cpu("m6g.12xlarge", "arm64", 48, 196608),
    _cpu("m6g.16xlarge", "arm64", 64, 262144),
    # m7g
    _cpu("m7g.medium", "arm64", 1, 4096),
    _cpu("m7g.large", "arm64", 2, 8192),
    _cpu("m7g.xlarge", "arm64", 4, 16384),
    _cpu("m7g.2xlarge", "arm64", 8, 32768),
    _cpu("m7g.4xlarge", "arm64", 16, 65536),
    _cpu("m7g.8xlarge", "arm64", 32, 131072),
    _cpu("m7g.12xlarge", "arm64", 48, 196608),
    _cpu("m7g.16xlarge", "arm64", 64, 262144),
    # c5
    _cpu("c5.large", "x86_64", 2, 4096),
    _cpu("c5.xlarge", "x86_64", 4, 8192),
    _cpu("c5.2xlarge", "x86_64", 8, 16384),
    _cpu("c5.4xlarge", "x86_64", 16, 32768),
    _cpu("c5.9xlarge", "x86_64", 36, 73728),
    _cpu("c5.12xlarge", "x86_64", 48, 98304),
    _cpu("c5.18xlarge", "x86_64", 72, 147456),
    _cpu("c5.24xlarge", "x86_64", 96, 196608),
    # c6i
    _cpu("c6i.large", "x86_64", 2, 4096),
    _cpu("c6i.xlarge", "x86_64", 4, 8192),
    _cpu("c6i.2xlarge", "x86_64", 8, 16384),
    _cpu("c6i.4xlarge", "x86_64", 16, 32768),
    _cpu("c6i.8xlarge", "x86_64", 32, 65536),
    _cpu("c6i.12xlarge", "x86_64", 48, 98304),
    _cpu("c6i.16xlarge", "x86_64", 64, 131072),
    _cpu("c6i.24xlarge", "x86_64", 96, 196608),
    _cpu("c6i.32xlarge", "x86_64", 128, 262144),
    # c7i
    _cpu("c7i.large", "x86_64", 2, 4096),
    _cpu("c7i.xlarge", "x86_64", 4, 8192),
    _cpu("c7i.2xlarge", "x86_64", 8, 16384),
    _cpu("c7i.4xlarge", "x86_64", 16, 32768),
    _cpu("c7i.8xlarge", "x86_64", 32, 65536),
    _cpu("c7i.12xlarge", "x86_64", 48, 98304),
    _cpu("c7i.16xlarge", "x86_64", 64, 131072),
    _cpu("c7i.24xlarge", "x86_64", 96, 196608),
    _cpu("c7i.48xlarge", "x86_64", 192, 393216),
    # c6g
    _cpu("c6g.medium", "arm64", 1, 2048),
    _cpu("c6g.large", "arm64", 2, 4096),
    _cpu("c6g.xlarge", "arm64", 4, 8192),
    _cpu("c6g.2xlarge", "arm64", 8, 16384),
    _cpu("c6g.4xlarge", "arm64", 16, 32768),
    _cpu("c6g.8xlarge", "arm64", 32, 65536),
    _cpu("c6g.12xlarge", "arm64", 48, 98304),
    _cpu("c6g.16xlarge", "arm64", 64, 131072),
    # c7g
    _cpu("c7g.medium", "arm64", 1, 2048),
    _cpu("c7g.large", "arm64", 2, 4096),
    _cpu("c7g.xlarge", "arm64", 4, 8192),
    _cpu("c7g.2xlarge", "arm64", 8, 16384),
    _cpu("c7g.4xlarge", "arm64", 16, 32768),
    _cpu("c7g.8xlarge", "arm64", 32, 65536),
    _cpu("c7g.12xlarge", "arm64", 48, 98304),
    _cpu("c7g.16xlarge", "arm64", 64, 131072),
    # r6i
    _cpu("r6i.large", "x86_64", 2, 16384),
    _cpu("r6i.xlarge", "x86_64", 4, 32768),
    _cpu("r6i.2xlarge", "x86_64", 8, 65536),
    _cpu("r6i.4xlarge", "x86_64", 16, 131072),
    _cpu("r6i.8xlarge", "x86_64", 32, 262144),
    _cpu("r6i.12xlarge", "x86_64", 48, 393216),
    _cpu("r6i.16xlarge", "x86_64", 64, 524288),
    _cpu("r6i.24xlarge", "x86_64", 96, 786432),
    _cpu("r6i.32xlarge", "x86_64", 128, 1048576),
    # r7i
    _cpu("r7i.large", "x86_64", 2, 16384),
    _cpu("r7i.xlarge", "x86_64", 4, 32768),
    _cpu("r7i.2xlarge", "x86_64", 8, 65536),
    _cpu("r7i.4xlarge", "x86_64", 16, 131072),
    _cpu("r7i.8xlarge", "x86_64", 32, 262144),
    _cpu("r7i.12xlarge", "x86_64", 48, 393216),
    _cpu("r7i.16xlarge", "x86_64", 64, 524288),
    _cpu("r7i.24xlarge", "x86_64", 96, 786432),
    _cpu("r7i.48xlarge", "x86_64", 192, 1572864),
    # r7g
    _cpu("r7g.medium", "arm64", 1, 8192),
    _cpu("r7g.large", "arm64", 2, 16384),
    _cpu("r7g.xlarge", "arm64", 4, 32768),
    _cpu("r7g.2xlarge", "arm64", 8, 65536),
    _cpu("r7g.4xlarge", "arm64", 16, 131072),
    _cpu("r7g.8xlarge", "arm64", 32, 262144),
    _cpu("r7g.12xlarge", "arm64", 48, 393216),
    _cpu("r7g.16xlarge", "arm64", 64, 524288),
)

CATALOG: Final[dict[str, InstanceType]] = {entry.name: entry for entry in _ENTRIES}


@cache
def aws_instance_types() -> frozenset[str]:
    """Every instance type name the EC2 API accepts, from the API model that botocore ships.

    This is the source of truth for "does AWS know this type at all", independent of our catalog.
    """
    model = botocore.session.get_session().get_service_model("ec2")
    return frozenset(model.shape_for("InstanceType").enum)


# x86 instruction-set extensions per family, from the processor each family runs (EC2 instance type pages
# above: Intel Xeon Skylake/Cascade Lake/Ice Lake/Sapphire Rapids have AVX-512; AMD EPYC before Zen 4
# (t3a, m6a, g5, g6, g6e, gr6, p5, p5e) does not; m7a is Zen 4 with AVX-512). Graviton (arm64) has none of these.
_AVX512_FAMILIES: Final = frozenset(
    {"c5", "m5", "t3", "c6i", "m6i", "r6i", "c7i", "m7i", "r7i", "m7a", "g4dn", "p4d", "p4de", "p5en"}
)


def cpu_features(entry: InstanceType) -> frozenset[str]:
    """Lower-case CPU features (`avx`, `avx2`, `avx512f`) an image may need, for node labels and affinity.

    Why gpuplane labels these itself: NFD labels exist only on running nodes where NFD runs, and a pod whose
    affinity needs one never makes the cluster-autoscaler scale a group up from zero.
    """
    if entry.architecture != "x86_64":
        return frozenset()
    features = {"avx", "avx2"}  # every x86 family in the catalog is Haswell/Zen 1 or newer
    if entry.family in _AVX512_FAMILIES:
        features.add("avx512f")
    return frozenset(features)


def lookup(name: str) -> InstanceType:
    """Return the catalog entry for `name`, or raise ValueError saying what is wrong and what is allowed."""
    if name in CATALOG:
        return CATALOG[name]
    if name not in aws_instance_types():
        raise ValueError(f"'{name}' is not an EC2 instance type (not in the EC2 API model)")
    families = sorted({entry.family for entry in _ENTRIES})
    raise ValueError(
        f"'{name}' is a valid EC2 instance type but gpuplane's catalog has no facts for it; "
        f"supported families: {', '.join(families)}"
    )
