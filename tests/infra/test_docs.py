"""The README documents every config key with its default, generated from the models."""

from __future__ import annotations

from gpuplane.components.config import CapacityReservationArgs, ClusterArgs, NetworkArgs, NodeGroupArgs, PlatformArgs
from gpuplane.infra import docs


def test_readme_config_reference_is_current():
    text = docs.README.read_text()
    assert docs.config_reference() in text, "run: python -m gpuplane.infra.docs"


def test_every_key_is_documented_with_a_default():
    reference = docs.config_reference()
    for model in (PlatformArgs, NetworkArgs, ClusterArgs, NodeGroupArgs, CapacityReservationArgs):
        for name, field in model.model_fields.items():
            assert f"{field.alias or name}`" in reference
            assert field.description, f"{model.__name__}.{name} has no description"
            if not field.is_required():
                assert "Default" in field.description or "See " in field.description, f"{model.__name__}.{name}"
