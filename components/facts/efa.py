"""EFA facts per GPU instance type: how many EFA interfaces it takes and how many network cards it has.

Why here and not a live lookup: `gpuplane render` and config validation run offline, and the launch
template of an EFA node group (one interface per network card) and the refusal of `efa: true` on a type
without EFA must be decided before anything exists. The numbers are what `ec2:DescribeInstanceTypes`
returns in `NetworkInfo` (`EfaSupported`, `EfaInfo.MaximumEfaInterfaces`, `MaximumNetworkCards`), read from
the instance data the catalog ships (`catalog.InstanceType.max_efa_interfaces` / `.max_network_cards`,
generated from moto's copy of that answer by scripts/refresh_instance_types.py); `tests/components/facts/
test_efa.py` checks every GPU type against moto's copy directly. Only GPU types are listed: `efa: true` is
a GPU group setting (issue 31).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gpuplane.components.facts import catalog

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


# Every GPU type of the catalog with `EfaSupported: true` whose card 0 takes an `efa` interface (the layout
# of `efa_interfaces`), with its numbers. Left out: types whose card 0 has no EFA (p6-b300.48xlarge:
# `interface` only on card 0, EFA on cards 1-16, per DescribeInstanceTypes): the layout below would put an
# `efa` interface where EC2 refuses one, so `efa: true` on them is refused until the layout follows the
# cards' `InterfaceTypes`.
EFA: Final[dict[str, EfaFacts]] = {
    name: EfaFacts(entry.max_efa_interfaces, entry.max_network_cards)
    for name, entry in catalog.CATALOG.items()
    if entry.has_gpu
    and entry.efa_supported
    and entry.network_cards
    and PRIMARY_EFA_INTERFACE in entry.network_cards[0].interface_types
}


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
