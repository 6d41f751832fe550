"""EFA facts per GPU instance type against moto's copy of EC2 DescribeInstanceTypes (issue 31)."""

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
    # moto 5.2.5's copy of the EC2 DescribeInstanceTypes answer: the source the EFA table is checked against.
    MOTO_TYPES: dict[str, Any] = json.load(_data)


def enum(shape: str) -> set[str]:
    return set(EC2.shape_for(shape).enum)


@pytest.mark.parametrize("name", sorted(n for n, e in catalog.CATALOG.items() if e.has_gpu))
def test_efa_facts_match_describe_instance_types(name):
    info = MOTO_TYPES[name]["NetworkInfo"]
    facts = efa.efa_facts(name)
    if not info.get("EfaSupported"):
        assert facts is None
        return
    if "efa" not in info["NetworkCards"][0]["InterfaceTypes"]:
        # EFA only beyond card 0 (p6-b300.48xlarge): refused until the layout follows each card's types.
        assert facts is None and name == "p6-b300.48xlarge"
        return
    assert facts is not None
    assert facts.max_efa_interfaces == info["EfaInfo"]["MaximumEfaInterfaces"]
    assert facts.network_cards == info["MaximumNetworkCards"] == len(info["NetworkCards"])
    # Each card takes the interface types we give it.
    for card in info["NetworkCards"][: facts.interfaces]:
        wanted = efa.PRIMARY_EFA_INTERFACE if card["NetworkCardIndex"] == 0 else efa.SECONDARY_EFA_INTERFACE
        assert wanted in card["InterfaceTypes"]


def test_issue_facts_p5_p4d_g5():
    assert efa.EFA["p5.48xlarge"].interfaces == 32
    assert efa.EFA["p4d.24xlarge"].interfaces == 4
    assert efa.EFA["g5.8xlarge"].interfaces == 1
    assert efa.efa_facts("g5.xlarge") is None
    assert efa.efa_facts("g6.xlarge") is None


def test_interface_layout_efa_on_card_zero_efa_only_after():
    layout = efa.efa_interfaces(efa.EFA["p4d.24xlarge"])
    assert [(i.network_card_index, i.device_index, i.interface_type) for i in layout] == [
        (0, 0, "efa"),
        (1, 1, "efa-only"),
        (2, 1, "efa-only"),
        (3, 1, "efa-only"),
    ]
    assert set(efa.INTERFACE_TYPES) <= enum("NetworkInterfaceType")
