"""Generate the docs that restate code, so they cannot drift: the config reference and the table of pins.

`python -m gpuplane.infra.docs` rewrites the block between the markers in README.md (every config key, from the
config models; the descriptions live where the fields are declared, components/config/) and in docs/versions.md
(every pinned image and chart, from manifests/versions.py). A test fails when a document and the code disagree.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from gpuplane.components.config import (
    AutoscalerArgs,
    CapacityReservationArgs,
    ClusterArgs,
    GpuSharingArgs,
    MigArgs,
    NetworkArgs,
    NodeGroupArgs,
    NodeRepairArgs,
    ObservabilityArgs,
    PlatformArgs,
    QueueArgs,
    RepairOverrideArgs,
    StorageArgs,
    Taint,
    VolumeArgs,
)
from gpuplane.manifests import versions

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"
VERSIONS_DOC = README.parent / "docs" / "versions.md"
PINS_START, PINS_END = "<!-- pins:start -->", "<!-- pins:end -->"
_SECTIONS: tuple[tuple[str, type[BaseModel], str], ...] = (
    ("Top level", PlatformArgs, "gpuplane:"),
    ("`gpuplane:network`", NetworkArgs, "network."),
    ("`gpuplane:cluster`", ClusterArgs, "cluster."),
    ("`gpuplane:nodeGroups` (a list; each item)", NodeGroupArgs, "nodeGroups[]."),
    ("`taints` of a node group (a list; each item)", Taint, "taints[]."),
    ("`sharing` of a GPU node group", GpuSharingArgs, "sharing."),
    ("`capacityReservation` of a node group", CapacityReservationArgs, "capacityReservation."),
    ("`sharing.mig`", MigArgs, "sharing.mig."),
    ("`repair` of a node group (EKS node auto repair)", NodeRepairArgs, "repair."),
    ("`repair.nodeRepairConfigOverrides` (a list; each item)", RepairOverrideArgs, "nodeRepairConfigOverrides[]."),
    ("`gpuplane:storage`", StorageArgs, "storage."),
    ("`volumes` of the storage (a list; each item)", VolumeArgs, "storage.volumes[]."),
    ("`gpuplane:autoscaler`", AutoscalerArgs, "autoscaler."),
    ("`gpuplane:observability`", ObservabilityArgs, "observability."),
    ("`gpuplane:queue` (training stacks only)", QueueArgs, "queue."),
)


def config_reference() -> str:
    """Markdown tables of every config key with its description and default."""
    parts = []
    for title, model, prefix in _SECTIONS:
        rows = [
            f"| `{prefix}{field.alias or name}` | {field.description} |" for name, field in model.model_fields.items()
        ]
        parts.append(f"**{title}**\n\n| key | meaning and default |\n|---|---|\n" + "\n".join(rows))
    return "\n\n".join(parts)


def pin_table() -> str:
    """One row per pin of manifests/versions.py: what it is, its version, release date, end of support, source."""
    rows = []
    for pin in versions.PINS:
        end = pin.end_of_support or "none published"
        source = pin.source.replace("|", "\\|")
        rows.append(f"| `{pin.name}` | {pin.datasource} | `{pin.reference}` | {pin.released} | {end} | {source} |")
    header = "| pin | kind | image or chart | released | end of support | what was read |\n|---|---|---|---|---|---|"
    return header + "\n" + "\n".join(rows)


def _rewrite(path: Path, start: str, end: str, content: str) -> bool:
    text = path.read_text()
    block = f"{start}\n{content}\n{end}"
    new = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    if new != text:
        path.write_text(new)
    return new != text


def update_readme(path: Path = README) -> bool:
    """Rewrite the reference block in `path`; True if it changed."""
    return _rewrite(path, START, END, config_reference())


def update_versions_doc(path: Path = VERSIONS_DOC) -> bool:
    """Rewrite the table of pins in `path`; True if it changed."""
    return _rewrite(path, PINS_START, PINS_END, pin_table())


if __name__ == "__main__":  # pragma: no cover
    print("README.md updated" if update_readme() else "README.md already up to date")
    print("docs/versions.md updated" if update_versions_doc() else "docs/versions.md already up to date")
