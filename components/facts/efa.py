"""EFA facts per GPU instance type: how many EFA interfaces it takes and how many network cards it has.

Why a table here and not a lookup: `gpuplane render` and config validation run offline, and the launch
template of an EFA node group (one interface per network card) and the refusal of `efa: true` on a type
without EFA must be decided before anything exists. The numbers are what `ec2:DescribeInstanceTypes`
returns in `NetworkInfo` (`EfaSupported`, `EfaInfo.MaximumEfaInterfaces`, `MaximumNetworkCards`);
`tests/components/facts/test_efa.py` checks every GPU type of the catalog against moto's bundled copy of that
answer (moto 5.2.5, `moto/ec2/resources/instance_types.json.gz`), both ways: a type listed here has EFA
there with these numbers, and a GPU type of the catalog missing here has no EFA there.

Kept apart from `catalog.py` on purpose (issue 31): issue 28 regenerates the catalog from the same moto
data; these two numbers then become fields of its `InstanceType` and this module reads them from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# EFA user guide, "Supported instance types" and "Maximize network bandwidth": one EFA interface per
# network card; the primary card's interface is `efa` (EFA and IP), the others may be `efa-only`
# (EFA without an IP address: they use none of the subnet's addresses; needs VPC CNI >= 1.18.5).
INTERFACE_TYPES: Final = ("interface", "efa", "efa-only")
PRIMARY_EFA_INTERFACE: Final = "efa"
SECONDARY_EFA_INTERFACE: Final = "efa-only"


@dataclass(frozen=True)
class EfaFacts:
    """The EFA side of one instance type's `NetworkInfo`."""

    max_efa_interfaces: int
    """`EfaInfo.MaximumEfaInterfaces`."""
    network_cards: int
    """`MaximumNetworkCards`."""

    @property
    def interfaces(self) -> int:
        """Interfaces a node of this type gets: one per network card, as many as EFA allows."""
        return min(self.max_efa_interfaces, self.network_cards)


# (MaximumEfaInterfaces, MaximumNetworkCards) for the catalog's GPU types with EfaSupported: true.
_EFA: Final[dict[str, tuple[int, int]]] = {
    "g4dn.8xlarge": (1, 1), "g4dn.12xlarge": (1, 1), "g4dn.16xlarge": (1, 1),
    "g5.8xlarge": (1, 1), "g5.12xlarge": (1, 1), "g5.16xlarge": (1, 1), "g5.24xlarge": (1, 1),
    "g5.48xlarge": (1, 1),
    "g6.8xlarge": (1, 1), "g6.12xlarge": (1, 1), "g6.16xlarge": (1, 1), "g6.24xlarge": (1, 1),
    "g6.48xlarge": (1, 1),
    "g6e.8xlarge": (1, 1), "g6e.12xlarge": (1, 1), "g6e.16xlarge": (1, 1), "g6e.24xlarge": (2, 2),
    "g6e.48xlarge": (4, 4),
    "gr6.8xlarge": (1, 1),
    "p4d.24xlarge": (4, 4), "p4de.24xlarge": (4, 4),
    "p5.4xlarge": (1, 1), "p5.48xlarge": (32, 32), "p5e.48xlarge": (32, 32), "p5en.48xlarge": (16, 16),
    "p6-b200.48xlarge": (8, 8),
}  # fmt: skip

EFA: Final[dict[str, EfaFacts]] = {name: EfaFacts(*numbers) for name, numbers in _EFA.items()}


def efa_facts(instance_type: str) -> EfaFacts | None:
    """The type's EFA facts, or None when it has no EFA."""
    return EFA.get(instance_type)


def efa_types() -> list[str]:
    """Every type known to support EFA, sorted (for error messages)."""
    return sorted(EFA)


@dataclass(frozen=True)
class EfaInterface:
    """One launch-template network interface of an EFA node: which card, which device index, which type."""

    network_card_index: int
    device_index: int
    interface_type: str


def efa_interfaces(facts: EfaFacts) -> list[EfaInterface]:
    """The interfaces of an EFA node, one per network card.

    Card 0 carries the primary interface (device index 0, `efa`: the node's IP address lives there);
    every other card gets device index 1 and `efa-only`, which takes no IP address from the subnet (a
    p5.48xlarge with 32 `efa` interfaces would use 32 private IPs per node before any pod). The layout is
    the one of the EFA user guide ("Maximize network bandwidth") and terraform-aws-eks'
    `modules/eks-managed-node-group` (`device_index = i == 0 ? 0 : 1`, `efa-only` beyond card 0).
    """
    return [
        EfaInterface(
            network_card_index=card,
            device_index=0 if card == 0 else 1,
            interface_type=PRIMARY_EFA_INTERFACE if card == 0 else SECONDARY_EFA_INTERFACE,
        )
        for card in range(facts.interfaces)
    ]
