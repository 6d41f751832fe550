"""`gpuplane render`: write everything a stack would create to files, offline, deterministically.

Contract (DESIGN.md, "Offline render"): `plan.json`, `manifests/` (one Kubernetes object per file),
`helm/` (one file per Helm release), a picture of the stack (`stack.md`, Mermaid, which GitHub and most
editors draw) and a summary table on the terminal. The output directory is replaced atomically, so a
failed render never leaves half of one behind, and invalid config writes nothing at all.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from gpuplane.infra import mockrun, program, tfplan
from gpuplane.infra.config import StackConfig

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
# Resources drawn in the picture; everything else is counted in its component's box.
_PICTURE_TYPES = {
    "aws:ec2/vpc:Vpc",
    "aws:ec2/subnet:Subnet",
    "aws:ec2/natGateway:NatGateway",
    "aws:eks/cluster:Cluster",
    "aws:eks/addon:Addon",
    "aws:eks/nodeGroup:NodeGroup",
    "aws:kms/key:Key",
    "aws:efs/fileSystem:FileSystem",
    "aws:efs/mountTarget:MountTarget",
    HELM_RELEASE,
    "kubernetes:core/v1:Namespace",
    "kubernetes:core/v1:PersistentVolumeClaim",
}
# Resources of these types are drawn one node each, named by this input, instead of counted together.
_NAMED_BY = {"aws:eks/addon:Addon": "addonName", HELM_RELEASE: "name"}


def _picture_key(r: mockrun.RecordedResource) -> tuple[str | None, str, str]:
    field = _NAMED_BY.get(r.type)
    return (r.parent, r.type, str(r.inputs.get(field, "")) if field else "")


def run_stack(config: StackConfig) -> mockrun.Recording:
    """Run the gpuplane program for `config` under mocks."""
    return mockrun.run(lambda: program.build(config), config.project, config.stack, config.region)


def plan_document(config: StackConfig, recording: mockrun.Recording) -> dict[str, Any]:
    """The `plan.json` document: config, resources (sorted by URN) and outputs."""
    resources = [
        {
            "urn": r.urn,
            "type": r.type,
            "name": r.name,
            "custom": r.custom,
            "parent": r.parent,
            "dependencies": r.dependencies,
            "provider": r.provider,
            "protect": r.protect,
            "retainOnDelete": r.retain_on_delete,
            "inputs": r.inputs,
        }
        for r in sorted(recording.resources, key=lambda r: r.urn)
    ]
    return {
        "project": config.project,
        "stack": config.stack,
        "config": {"aws:region": config.region, **_config_json(config)},
        "resources": resources,
        "outputs": recording.outputs,
    }


def _config_json(config: StackConfig) -> dict[str, Any]:
    data = config.platform.model_dump(mode="json", by_alias=True)
    return {f"gpuplane:{key}": value for key, value in data.items()}


def kubernetes_objects(recording: mockrun.Recording) -> dict[str, dict[str, Any]]:
    """Every Kubernetes object the stack applies, keyed by a stable file name."""
    objects: dict[str, dict[str, Any]] = {}
    for r in recording.resources:
        if not r.type.startswith("kubernetes:") or r.type == HELM_RELEASE or "kind" not in r.inputs:
            continue
        meta = r.inputs.get("metadata", {})
        parts = [r.inputs["kind"], meta.get("namespace", ""), meta.get("name", r.name)]
        objects[_file_name(parts)] = r.inputs
    return dict(sorted(objects.items()))


def helm_releases(recording: mockrun.Recording) -> dict[str, dict[str, Any]]:
    """Every Helm release: name, namespace, chart, repository, version, values."""
    releases: dict[str, dict[str, Any]] = {}
    for r in recording.by_type(HELM_RELEASE):
        inputs = r.inputs
        release = {
            "name": inputs.get("name", r.name),
            "namespace": inputs.get("namespace", "default"),
            "chart": inputs.get("chart"),
            "repository": inputs.get("repositoryOpts", {}).get("repo"),
            "version": inputs.get("version"),
            "values": inputs.get("values", {}),
        }
        releases[_file_name([release["namespace"], release["name"]])] = release
    return dict(sorted(releases.items()))


def _file_name(parts: list[str]) -> str:
    stem = "-".join(p for p in parts if p)
    return re.sub(r"[^a-z0-9.-]+", "-", stem.lower()).strip("-") + ".yaml"


def picture(config: StackConfig, recording: mockrun.Recording) -> str:
    """A Mermaid flowchart: components as boxes, main resources inside, main dependencies as arrows."""
    # Registration order varies between runs (registrations are async): sort for a stable picture.
    resources = sorted(recording.resources, key=lambda r: r.urn)
    by_urn = {r.urn: r for r in resources}
    ids: dict[tuple[str | None, str, str], str] = {}
    counts: Counter[tuple[str | None, str, str]] = Counter()
    for r in resources:
        if r.type in _PICTURE_TYPES:
            counts[_picture_key(r)] += 1
            ids.setdefault(_picture_key(r), f"n{len(ids)}")
    components = [r for r in resources if not r.custom]
    comp_ids = {c.urn: f"c{i}" for i, c in enumerate(components)}
    lines = ["flowchart TB"]

    def emit(component: mockrun.RecordedResource, indent: str) -> None:
        label = f"{component.type.rsplit(':', 1)[-1]}: {component.name}"
        lines.append(f'{indent}subgraph {comp_ids[component.urn]}["{label}"]')
        lines.append(f"{indent}  direction TB")
        for (parent, type_, detail), node in ids.items():
            if parent == component.urn:
                short = type_.rsplit(":", 1)[-1] + (f" {detail}" if detail else "")
                n = counts[(parent, type_, detail)]
                extra = ""
                if type_ == "aws:eks/nodeGroup:NodeGroup":
                    child = next(x for x in resources if x.parent == parent and x.type == type_)
                    inputs = child.inputs
                    sc = inputs.get("scalingConfig", {})
                    extra = (
                        f"<br/>{', '.join(inputs.get('instanceTypes', []))}<br/>{inputs.get('amiType')}, "
                        f"{inputs.get('capacityType')}, {sc.get('minSize')}-{sc.get('maxSize')} nodes"
                    )
                elif type_ == "aws:eks/cluster:Cluster":
                    child = next(x for x in resources if x.parent == parent and x.type == type_)
                    vpc = child.inputs.get("vpcConfig", {})
                    access = "public+private" if vpc.get("endpointPublicAccess") else "private"
                    extra = f"<br/>Kubernetes {child.inputs.get('version')}, endpoint {access}"
                lines.append(f'{indent}  {node}["{short}{f" x{n}" if n > 1 else ""}{extra}"]')
        for sub in components:
            if sub.parent == component.urn:
                emit(sub, indent + "  ")
        lines.append(f"{indent}end")

    for root in components:
        if root.parent not in comp_ids:
            emit(root, "  ")
    edges: set[tuple[str, str]] = set()
    for r in resources:
        src = ids.get(_picture_key(r))
        if src is None:
            continue
        for dep in r.dependencies:
            target = by_urn.get(dep)
            if target is None:
                continue
            dst = ids.get(_picture_key(target))
            if dst is not None and dst != src:
                edges.add((src, dst))
    lines.extend(f"  {a} --> {b}" for a, b in sorted(edges))
    types = Counter(r.type for r in recording.resources if r.custom)
    table = "\n".join(f"| `{t}` | {n} |" for t, n in sorted(types.items()))
    return (
        f"# Stack `{config.stack}` of `{config.project}` ({config.platform.profile}, {config.region})\n\n"
        "Components are boxes, arrows point from a resource to what it depends on.\n\n"
        f"```mermaid\n{chr(10).join(lines)}\n```\n\n"
        f"| resource type | count |\n|---|---|\n{table}\n"
    )


def summary_table(config: StackConfig, recording: mockrun.Recording) -> Table:
    """The terminal summary: one row per node group, with the facts people check before `pulumi up`."""
    cluster = recording.one("aws:eks/cluster:Cluster").inputs
    vpc_cfg = cluster.get("vpcConfig", {})
    endpoint = "public+private" if vpc_cfg.get("endpointPublicAccess") else "private only"
    title = (
        f"{config.project}/{config.stack} ({config.platform.profile}) in {config.region}: EKS "
        f"{cluster.get('version')}, endpoint {endpoint}, {len(recording.outputs.get('availabilityZones', []))} AZs, "
        f"{sum(1 for r in recording.resources if r.custom)} resources"
    )
    table = Table(title=title)
    for column in (
        "node group",
        "kind",
        "instance types",
        "AMI type",
        "capacity",
        "min/desired/max",
        "taints",
    ):
        table.add_column(column)
    kinds = {g.name: g.kind for g in config.platform.resolved_node_groups}
    for r in sorted(recording.by_type("aws:eks/nodeGroup:NodeGroup"), key=lambda r: r.name):
        inputs = r.inputs
        group = inputs.get("labels", {}).get("gpuplane.io/node-group", r.name)
        sc = inputs.get("scalingConfig", {})
        taints = ", ".join(f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in inputs.get("taints", [])) or "-"
        table.add_row(
            group,
            kinds.get(group, "?"),
            ", ".join(inputs.get("instanceTypes", [])),
            str(inputs.get("amiType")),
            str(inputs.get("capacityType")),
            f"{sc.get('minSize')}/{sc.get('desiredSize')}/{sc.get('maxSize')}",
            taints,
        )
    return table


def write(config: StackConfig, out_dir: Path, console: Console | None = None) -> mockrun.Recording:
    """Render `config` into `out_dir` (replaced atomically) and print the summary table."""
    recording = run_stack(config)
    out_dir = out_dir.resolve()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    try:
        plan = plan_document(config, recording)
        (staging / "plan.json").write_text(json.dumps(plan, indent=2, sort_keys=True) + "\n")
        (staging / "tfplan.json").write_text(tfplan.dumps(tfplan.from_recording(plan, recording)))
        for folder, items in (
            ("manifests", kubernetes_objects(recording)),
            ("helm", helm_releases(recording)),
        ):
            (staging / folder).mkdir()
            for file_name, document in items.items():
                (staging / folder / file_name).write_text(yaml.safe_dump(document, sort_keys=True))
        (staging / "stack.md").write_text(picture(config, recording))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if console is not None:
        console.print(summary_table(config, recording))
        console.print(f"wrote {out_dir}: plan.json, tfplan.json, manifests/, helm/, stack.md")
    return recording
