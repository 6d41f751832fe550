"""The EFA interface layout of an instance type: which interface each network card gets (a pure rule).

Why here and not a live lookup: `gpuplane render` and config validation run offline, and the launch
template of an EFA node group (its `network_interfaces`) and the refusal of `efa: true` on a type without
EFA must be decided before anything exists. The facts are the catalog's (`catalog.InstanceType`:
`efa_supported`, `max_efa_interfaces`, and `network_cards[i].interface_types`, which is what
`ec2:DescribeInstanceTypes` returns per card in `NetworkInfo.NetworkCards[].InterfaceTypes`, generated from
moto's copy of that answer by scripts/refresh_instance_types.py); nothing is repeated here. Only GPU types
get a layout: `efa: true` is a GPU group setting.

The layout follows each card's allowed interface types, not a fixed pattern, because the cards differ:
on p4d/p5/p5en/p6-b200 every card takes `interface`, `efa` and `efa-only`, while p6-b300.48xlarge has 17
cards whose card 0 takes `interface` only (EFA on cards 1-16; `MaximumEfaInterfaces` 16). A fixed `efa` on
card 0 is refused by EC2 there (aws/aws-parallelcluster#7143, 2025-12: "P6-B300 has 17 network cards, of
which the primary network card (network card index 0) only supports ENA").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gpuplane.components.facts import catalog

# ec2 `NetworkInterfaceType` values used here (botocore's enum; tests/components/facts/test_efa.py checks).
# `efa`: EFA with ENA (an IP address); `efa-only`: EFA without an IP address (uses none of the subnet's
# addresses; needs VPC CNI >= 1.18.5); `interface`: plain ENA.
ENA: Final = "interface"
EFA_WITH_ENA: Final = "efa"
EFA_ONLY: Final = "efa-only"
INTERFACE_TYPES: Final = (ENA, EFA_WITH_ENA, EFA_ONLY)


@dataclass(frozen=True)
class EfaInterface:
    """One launch-template network interface of an EFA node: which card, which device index, which type."""

    network_card_index: int
    device_index: int
    interface_type: str

    @property
    def is_efa(self) -> bool:
        """Whether this interface is an EFA device (what `vpc.amazonaws.com/efa` counts)."""
        return self.interface_type in (EFA_WITH_ENA, EFA_ONLY)


def efa_layout(entry: catalog.InstanceType) -> tuple[EfaInterface, ...]:
    """The interfaces of an EFA node of this type, one per network card; empty when it has no EFA.

    - Card 0 carries the primary interface (device index 0: the node's IP address lives there, and EC2
      refuses an `efa-only` primary): `efa` where card 0 allows EFA, else the plain `interface` (p6-b300).
    - Every other card whose types allow EFA gets device index 1 and `efa-only` (or `efa` on a card that
      allows only that), which takes no IP address from the subnet (a p5.48xlarge with 32 `efa`
      interfaces would use 32 private IPs per node before any pod). A card without EFA gets nothing: the
      VPC CNI adds ENA interfaces itself when it needs addresses.
    - No more EFA interfaces than `MaximumEfaInterfaces`.

    The device indexes are those of terraform-aws-eks' `modules/eks-managed-node-group`
    (`device_index = i == 0 ? 0 : 1`, `efa-only` beyond card 0); the per-card choice is the EC2 user
    guide's ("Maximize network bandwidth on instances with multiple network cards": the primary on card 0,
    `efa-only` on the next unused cards where the card supports EFA).
    """
    if not entry.efa_supported or not entry.network_cards:
        return ()
    layout: list[EfaInterface] = []
    efa_count = 0
    for card in entry.network_cards:
        types = card.interface_types
        if card.index == 0:
            primary = EFA_WITH_ENA if EFA_WITH_ENA in types and efa_count < entry.max_efa_interfaces else ENA
            layout.append(EfaInterface(0, 0, primary))
            efa_count += primary == EFA_WITH_ENA
            continue
        if efa_count >= entry.max_efa_interfaces:
            break
        kind = EFA_ONLY if EFA_ONLY in types else EFA_WITH_ENA if EFA_WITH_ENA in types else None
        if kind is None:
            continue
        layout.append(EfaInterface(card.index, 1, kind))
        efa_count += 1
    return tuple(layout) if efa_count else ()


def efa_interface_count(entry: catalog.InstanceType) -> int:
    """EFA devices a node of this type gets with `efa_layout` (the `vpc.amazonaws.com/efa` it advertises)."""
    return sum(interface.is_efa for interface in efa_layout(entry))


# Every GPU type of the catalog that gets an EFA layout, with its EFA device count.
EFA: Final[dict[str, int]] = {
    name: count for name, entry in catalog.CATALOG.items() if entry.has_gpu and (count := efa_interface_count(entry))
}


def efa_types() -> list[str]:
    """Every GPU type with EFA, sorted (for error messages)."""
    return sorted(EFA)


def layout_for(instance_type: str) -> tuple[EfaInterface, ...]:
    """The EFA layout of a GPU type by name; empty when it has no EFA (or is not a GPU type)."""
    return efa_layout(catalog.CATALOG[instance_type]) if instance_type in EFA else ()
