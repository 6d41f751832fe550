"""The README documents every config key with its default, generated from the models."""

from __future__ import annotations

import re

from gpuplane.components.config import CapacityReservationArgs, ClusterArgs, NetworkArgs, NodeGroupArgs, PlatformArgs
from gpuplane.infra import docs
from gpuplane.manifests import versions


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


def test_the_pin_table_is_current():
    """docs/versions.md lists every pin of manifests/versions.py as the code has it."""
    assert docs.pin_table() in docs.VERSIONS_DOC.read_text(), "run: python -m gpuplane.infra.docs"


def test_the_pin_table_has_a_row_per_pin():
    rows = [line for line in docs.pin_table().splitlines()[2:]]
    assert len(rows) == len(versions.PINS)
    for row, pin in zip(rows, versions.PINS, strict=True):
        assert row.startswith(f"| `{pin.name}` | {pin.datasource} | `{pin.reference}` | {pin.released} | ")
        assert f"| {pin.end_of_support or 'none published'} |" in row


# Images the docs name on purpose although they are not pins: the official -gpu images, rejected for GPU training.
NAMED_NOT_PINNED = {"tensorflow/tensorflow:2.18.0-gpu", "tensorflow/tensorflow:2.21.0-gpu"}


def test_the_docs_name_only_current_images():
    """An image of a pinned repository in README.md or docs/*.md is the pinned tag (no stale tag after a bump)."""
    pinned = {p.reference for p in versions.PINS if p.datasource == "docker"}
    stale = []
    for doc in [docs.README, *sorted((docs.README.parent / "docs").glob("*.md"))]:
        text = doc.read_text()
        for package in {p.package for p in versions.PINS if p.datasource == "docker"}:
            for match in re.finditer(re.escape(package) + r":([A-Za-z0-9._-]+)", text):
                reference = f"{package}:{match.group(1)}"
                if reference not in pinned | NAMED_NOT_PINNED:
                    stale.append(f"{doc.name}:{text.count(chr(10), 0, match.start()) + 1}: {reference}")
    assert stale == []
