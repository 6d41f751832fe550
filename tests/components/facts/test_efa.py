"""EFA interface layout per GPU instance type against moto's copy of EC2 DescribeInstanceTypes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import botocore.session
import moto
import pytest

from gpuplane.components.facts import catalog, efa

EC2 = botocore.session.get_session().get_service_model("ec2")

with gzip.open(Path(moto.__file__).parent / "ec2/resources/instance_types.json.gz") as _data:
    # moto 5.2.5's copy of the EC2 DescribeInstanceTypes answer: the source the layout is checked against.
    MOTO_TYPES: dict[str, Any] = json.load(_data)


def enum(shape: str) -> set[str]:
    return set(EC2.shape_for(shape).enum)


def layout(name: str) -> list[tuple[int, int, str]]:
    return [(i.network_card_index, i.device_index, i.interface_type) for i in efa.layout_for(name)]


@pytest.mark.parametrize("name", sorted(n for n, e in catalog.CATALOG.items() if e.has_gpu))
def test_layout_fits_every_card_of_describe_instance_types(name):
    """Each interface goes on a card that takes its type; EFA count = MaximumEfaInterfaces; primary on card 0."""
    info = MOTO_TYPES[name]["NetworkInfo"]
    interfaces = efa.layout_for(name)
    if not info.get("EfaSupported"):
        assert interfaces == () and name not in efa.EFA
        return
    cards = {card["NetworkCardIndex"]: card for card in info["NetworkCards"]}
    assert interfaces[0].network_card_index == 0 and interfaces[0].device_index == 0
    assert interfaces[0].interface_type != efa.EFA_ONLY  # EC2 refuses an efa-only primary interface
    for interface in interfaces:
        assert interface.interface_type in cards[interface.network_card_index]["InterfaceTypes"], interface
    assert len({i.network_card_index for i in interfaces}) == len(interfaces)  # one interface per card
    assert efa.EFA[name] == sum(i.is_efa for i in interfaces) == info["EfaInfo"]["MaximumEfaInterfaces"]


def test_p5_p4d_p5en_layouts():
    assert layout("p4d.24xlarge") == [(0, 0, "efa"), (1, 1, "efa-only"), (2, 1, "efa-only"), (3, 1, "efa-only")]
    assert layout("p5.48xlarge") == [(0, 0, "efa")] + [(card, 1, "efa-only") for card in range(1, 32)]
    assert layout("p5en.48xlarge") == [(0, 0, "efa")] + [(card, 1, "efa-only") for card in range(1, 16)]
    assert (efa.EFA["p5.48xlarge"], efa.EFA["p5en.48xlarge"], efa.EFA["p4d.24xlarge"]) == (32, 16, 4)
    assert efa.EFA["g5.8xlarge"] == 1 and layout("g5.8xlarge") == [(0, 0, "efa")]
    assert "g5.xlarge" not in efa.EFA and "g6.xlarge" not in efa.EFA


def test_p6_b300_keeps_the_primary_ena_on_card_zero():
    """p6-b300.48xlarge: card 0 takes `interface` only, EFA on cards 1-16 (17 cards, 16 EFA interfaces)."""
    cards = MOTO_TYPES["p6-b300.48xlarge"]["NetworkInfo"]["NetworkCards"]
    assert cards[0]["InterfaceTypes"] == ["interface"] and len(cards) == 17
    assert layout("p6-b300.48xlarge") == [(0, 0, "interface")] + [(card, 1, "efa-only") for card in range(1, 17)]
    assert efa.EFA["p6-b300.48xlarge"] == 16
    assert not efa.layout_for("p6-b300.48xlarge")[0].is_efa


def _type(cards: list[str], max_efa: int) -> catalog.InstanceType:
    return catalog.InstanceType(
        name="x.test",
        architecture="x86_64",
        vcpus=8,
        memory_mib=1024,
        efa_supported=True,
        max_efa_interfaces=max_efa,
        network_cards=tuple(catalog.NetworkCard(i, 2, frozenset(t.split(",")), 100.0) for i, t in enumerate(cards)),
    )


def test_layout_rules_on_made_up_cards():
    """The rules beyond today's types: a card without EFA is skipped, the EFA maximum is a cap, `efa`-only cards."""
    full = "interface,efa,efa-only"
    got = efa.efa_layout(_type([full, "interface", full, full], max_efa=2))
    assert [(i.network_card_index, i.interface_type) for i in got] == [(0, "efa"), (2, "efa-only")]
    got = efa.efa_layout(_type(["interface", "interface,efa"], max_efa=4))
    assert [(i.network_card_index, i.interface_type) for i in got] == [(0, "interface"), (1, "efa")]
    assert efa.efa_layout(_type(["interface", "interface"], max_efa=1)) == ()  # EfaSupported but no card takes it
    assert efa.efa_interface_count(_type([full], max_efa=0)) == 0


def test_interface_types_are_botocore_enum_values():
    """The types we write are launch-template values and the values `NetworkCardInfo.InterfaceTypes` lists."""
    assert set(efa.INTERFACE_TYPES) <= enum("NetworkInterfaceType")
    card_types = EC2.shape_for("NetworkCardInfo").members["InterfaceTypes"].member
    assert set(efa.INTERFACE_TYPES) <= set(card_types.enum)
