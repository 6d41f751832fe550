"""Generate the README's configuration reference from the config models, so the docs cannot drift.

`python -m gpuplane.infra.docs` rewrites the block between the markers in README.md; a test fails when the README
and the models disagree. The descriptions live where the fields are declared (components/config/).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from gpuplane.components.config import (
    AutoscalerArgs,
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

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"
_SECTIONS: tuple[tuple[str, type[BaseModel], str], ...] = (
    ("Top level", PlatformArgs, "gpuplane:"),
    ("`gpuplane:network`", NetworkArgs, "network."),
    ("`gpuplane:cluster`", ClusterArgs, "cluster."),
    ("`gpuplane:nodeGroups` (a list; each item)", NodeGroupArgs, "nodeGroups[]."),
    ("`taints` of a node group (a list; each item)", Taint, "taints[]."),
    ("`sharing` of a GPU node group", GpuSharingArgs, "sharing."),
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


def update_readme(path: Path = README) -> bool:
    """Rewrite the reference block in `path`; True if it changed."""
    text = path.read_text()
    block = f"{START}\n{config_reference()}\n{END}"
    new = re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    if new != text:
        path.write_text(new)
    return new != text


if __name__ == "__main__":  # pragma: no cover
    print("README.md updated" if update_readme() else "README.md already up to date")
