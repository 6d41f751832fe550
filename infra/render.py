"""`gpuplane render`: write everything a stack would create to files, offline, deterministically.

Contract (docs/getting-started.md, "What a render writes"): `plan.json`, `manifests/` (one Kubernetes object per file),
`helm/` (one file per Helm release), a picture of the stack (`stack.md`, Mermaid, which GitHub and most
editors draw) and a summary table on the terminal. A render replaces only what a render wrote (`OWNED`)
and leaves every other file in its folder; the new files are staged inside the folder and moved in at the end
(infra/outdir.py: a lock, recovery after a killed render), so a failed render never leaves half of one behind,
and invalid config writes nothing at all.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuplane.components import config as config_types
from gpuplane.components.config.base import FieldError
from gpuplane.components.plan import capacity, cost, training
from gpuplane.infra import limits, mockrun, outdir, program, tfplan, wiring
from gpuplane.infra.config import (
    FILE_PROBLEMS,
    ConfigError,
    InvalidConfigExit,
    Project,
    StackConfig,
    eks_regions,
    key_problems,
    mapping_hint,
    read_stack_file,
    stack_file,
    stack_short_name,
    unknown_keys,
)
from gpuplane.infra.project import program_file
from gpuplane.manifests import lifecycle, observability, versions, wellknown
from gpuplane.manifests.wellknown import HELM_RELEASE

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
    # The workloads (TfServing, TfTraining): what runs, and how it is reached and scaled.
    "kubernetes:apps/v1:Deployment",
    "kubernetes:core/v1:Service",
    "kubernetes:batch/v1:Job",
    "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
    "kubernetes:networking.k8s.io/v1:Ingress",
}
# Resources of these types are drawn one node each, named by this input (a dotted path), instead of
# counted together.
_NAMED_BY = {
    "aws:eks/addon:Addon": "addonName",
    HELM_RELEASE: "name",
    "kubernetes:apps/v1:Deployment": "metadata.name",
    "kubernetes:core/v1:Service": "metadata.name",
    "kubernetes:batch/v1:Job": "metadata.name",
    "kubernetes:autoscaling/v2:HorizontalPodAutoscaler": "metadata.name",
    "kubernetes:networking.k8s.io/v1:Ingress": "metadata.name",
}


def _picture_key(r: mockrun.RecordedResource) -> tuple[str | None, str, str]:
    field = _NAMED_BY.get(r.type)
    if not field:
        return (r.parent, r.type, "")
    value: Any = r.inputs
    for part in field.split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    return (r.parent, r.type, str(value))


MARKER = outdir.MARKER
OWNED = outdir.OWNED


@dataclass(frozen=True)
class Target:
    """What the files and the summary say about the stack, whether gpuplane's own program or another one."""

    project: str
    stack: str
    region: str
    profile: str
    config: dict[str, Any]
    kinds: dict[str, str]
    notes: tuple[str, ...] = ()
    """What render states beyond the resources: reserved capacity and what happens at its end, runs whose GPU
    roles Kueue may admit to two groups."""
    reservations: dict[str, cost.Reservation] = field(default_factory=dict)
    """By node group: the reservation's instance count and end as the config states them (no resource has them)."""

    @classmethod
    def of(cls, config: StackConfig | Target) -> Target:
        """The target of a validated gpuplane stack (a Target is returned as it is)."""
        if isinstance(config, Target):
            return config
        data = config.platform.model_dump(mode="json", by_alias=True)
        return cls(
            project=config.project,
            stack=config.stack,
            region=config.region,
            profile=config.platform.profile,
            config={"aws:region": config.region, **{f"gpuplane:{k}": v for k, v in data.items()}},
            kinds={g.name: g.kind for g in config.platform.resolved_node_groups},
            notes=(*(n for g in config.platform.resolved_node_groups for n in capacity.reservation_notes(g)),),
            reservations={
                g.name: cost.Reservation(r.instance_count, r.end_time)
                for g in config.platform.resolved_node_groups
                if (r := g.capacity_reservation) is not None
            },
        )


def out_dir_problem(out_dir: Path) -> str | None:
    """Why a render may not write into `out_dir`, or None (infra/outdir.py: `problem`)."""
    return outdir.problem(out_dir)


def run_stack(config: StackConfig) -> mockrun.Recording:
    """Run the gpuplane program for `config` under mocks."""
    return mockrun.run(lambda: program.build(config), config.project, config.stack, config.region)


def plan_document(config: StackConfig | Target, recording: mockrun.Recording) -> dict[str, Any]:
    """The `plan.json` document: config, resources (sorted by URN) and outputs."""
    target = Target.of(config)
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
            "deletedWith": r.deleted_with,
            # Only where the program sets one: the engine's default wait elsewhere.
            **({"customTimeouts": r.custom_timeouts} if r.custom_timeouts else {}),
            "inputs": r.inputs,
        }
        for r in sorted(recording.resources, key=lambda r: r.urn)
    ]
    return {
        "project": target.project,
        "stack": target.stack,
        "config": target.config,
        "resources": resources,
        "outputs": recording.outputs,
    }


def cost_estimate(config: StackConfig | Target, recording: mockrun.Recording) -> cost.Estimate:
    """What the stack costs per hour, idle and at its maximum (components/plan/cost.py), from what it creates."""
    resources = [
        {"urn": r.urn, "type": r.type, "name": r.name, "dependencies": r.dependencies, "inputs": r.inputs}
        for r in sorted(recording.resources, key=lambda r: r.urn)
    ]
    target = Target.of(config)
    return cost.estimate(cost.usage_from_resources(target.region, resources, target.reservations))


def counts(recording: mockrun.Recording) -> dict[str, int]:
    """How many resources the plan holds: components (boxes) and cloud resources (what AWS/Kubernetes get)."""
    cloud = sum(1 for r in recording.resources if r.custom)
    return {"resources": len(recording.resources), "components": len(recording.resources) - cloud, "cloud": cloud}


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


def observability_files(recording: mockrun.Recording) -> dict[str, str]:
    """`observability/`: the alert rules as a Prometheus rule file and each dashboard as its JSON.

    The same content as the PrometheusRule and the dashboard ConfigMaps in `manifests/`, in the forms the tools
    take directly: `promtool check rules observability/rules.yaml`, Grafana's "Import dashboard".
    """
    files: dict[str, str] = {}
    for rule in recording.by_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule"):
        name = rule.inputs.get("metadata", {}).get("name", rule.name)
        files[f"rules-{name}.yaml"] = yaml_text({"groups": rule.inputs.get("spec", {}).get("groups", [])})
    # Amazon Managed Service for Prometheus: the collector's scrape configuration (`promtool check config
    # observability/scrape.yaml`), the rule groups loaded into the workspace, its Alertmanager definition.
    for scraper in recording.by_type("aws:amp/scraper:Scraper"):
        files["scrape.yaml"] = str(scraper.inputs.get("scrapeConfiguration", ""))
    for namespace in recording.by_type("aws:amp/ruleGroupNamespace:RuleGroupNamespace"):
        files[f"rules-{namespace.inputs.get('name', namespace.name)}.yaml"] = str(namespace.inputs.get("data", ""))
    for definition in recording.by_type("aws:amp/alertManagerDefinition:AlertManagerDefinition"):
        files["alertmanager.yaml"] = str(definition.inputs.get("definition", ""))
    for workspace in recording.by_type("aws:amp/workspace:Workspace"):
        endpoint = str(workspace.outputs.get("prometheusEndpoint") or "")
        region = endpoint.split(".")[1] if endpoint.count(".") > 2 else ""
        files["grafana-datasource.yaml"] = yaml.safe_dump(
            observability.grafana_amp_datasource(observability.amp_query_address(endpoint), region), sort_keys=False
        )
        # No Grafana in the cluster with AMP: the dashboards come as files only, for the user's Grafana.
        for file_name, dashboard in observability.dashboards().items():
            files[f"dashboards/{file_name}"] = json.dumps(dashboard, indent=2, sort_keys=True) + "\n"
    # CloudWatch (`observability.metrics: cloudwatch`): the dashboard body and the alarms as PutMetricAlarm-style
    # JSON (`aws cloudwatch put-dashboard --dashboard-body file://...` takes the first as it is).
    for board in recording.by_type("aws:cloudwatch/dashboard:Dashboard"):
        body = json.loads(str(board.inputs.get("dashboardBody") or "{}"))
        files[f"cloudwatch/{board.inputs.get('dashboardName')}.json"] = (
            json.dumps(body, indent=2, sort_keys=True) + "\n"
        )
    alarms = [r.inputs for r in recording.by_type("aws:cloudwatch/metricAlarm:MetricAlarm")]
    if alarms:
        files["cloudwatch/alarms.json"] = json.dumps(sorted(alarms, key=lambda a: str(a.get("name"))), indent=2) + "\n"
    for config_map in recording.by_type("kubernetes:core/v1:ConfigMap"):
        if config_map.inputs.get("metadata", {}).get("labels", {}).get(wellknown.GRAFANA_DASHBOARD_LABEL) == "1":
            for file_name, text in config_map.inputs.get("data", {}).items():
                files[f"dashboards/{file_name}"] = text if text.endswith("\n") else text + "\n"
    return files


def observability_summary(recording: mockrun.Recording) -> dict[str, Any]:
    """What the stack collects and alerts on, for the summary and `stack.md`."""
    releases = {r.inputs.get("name") for r in recording.by_type(HELM_RELEASE)}
    alerts = sorted(
        rule["alert"]
        for r in recording.by_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule")
        for group in r.inputs.get("spec", {}).get("groups", [])
        for rule in group.get("rules", [])
        if "alert" in rule
    )
    alerts += sorted(
        rule["alert"]
        for r in recording.by_type("aws:amp/ruleGroupNamespace:RuleGroupNamespace")
        for group in (yaml.safe_load(str(r.inputs.get("data") or "")) or {}).get("groups", [])
        for rule in group.get("rules", [])
        if "alert" in rule
    )
    dashboards = sorted(
        name.removeprefix("dashboards/") for name in observability_files(recording) if name.startswith("dashboards/")
    )
    alerts += sorted(str(r.inputs.get("name")) for r in recording.by_type("aws:cloudwatch/metricAlarm:MetricAlarm"))
    dashboards += sorted(
        f"CloudWatch {r.inputs.get('dashboardName')}" for r in recording.by_type("aws:cloudwatch/dashboard:Dashboard")
    )
    metrics = "none"
    if recording.by_type("aws:amp/workspace:Workspace"):
        metrics = "managedPrometheus"
    elif any(
        r.inputs.get("addonName") == wellknown.ADDON_CLOUDWATCH_OBSERVABILITY
        for r in recording.by_type("aws:eks/addon:Addon")
    ):
        metrics = "cloudwatch"
    elif "kube-prometheus-stack" in releases:
        metrics = "prometheus"
    return {
        "metrics": metrics,
        "alerts": alerts,
        "dashboards": dashboards,
        "metricScaler": "keda" if "keda" in releases else None,
    }


def observability_line(facts: dict[str, Any]) -> str:
    """The summary's metrics line: the backend, what it creates, its alerts and dashboards (`observability_summary`)."""
    made = {
        "prometheus": "kube-prometheus-stack in namespace monitoring (Prometheus on its EBS volume, Alertmanager)",
        "managedPrometheus": "AMP workspace + AWS managed collector (scrape config: observability/scrape.yaml), "
        "rule groups and Alertmanager in the workspace",
        "cloudwatch": "amazon-cloudwatch-observability add-on (Container Insights), CloudWatch alarms",
        "none": "nothing collected",
    }[facts["metrics"]]
    parts = [f"metrics: {facts['metrics']}: {made}"]
    if facts["alerts"]:
        parts.append(f"{len(facts['alerts'])} alert(s) to SNS")
    if facts["dashboards"]:
        parts.append(f"dashboards: {', '.join(facts['dashboards'])}")
    if facts.get("metricScaler"):
        parts.append(f"serving scaled on metrics by {facts['metricScaler']}")
    return "; ".join(parts)


def _repair(inputs: dict[str, Any]) -> str:
    """A node group's repair config in a few words: off, or its pace and how many GPU overrides."""
    repair = inputs.get("nodeRepairConfig") or {}
    if not repair.get("enabled"):
        return "off"
    threshold = repair.get("maxUnhealthyNodeThresholdCount", f"{repair.get('maxUnhealthyNodeThresholdPercentage')}%")
    pace = repair.get("maxParallelNodesRepairedCount", f"{repair.get('maxParallelNodesRepairedPercentage')}%")
    overrides = len(repair.get("nodeRepairConfigOverrides") or [])
    return f"on, {pace} at a time, stops above {threshold} unhealthy" + (
        f", {overrides} overrides" if overrides else ""
    )


def images_in(document: Any) -> set[str]:
    """Every container image a Kubernetes object or Helm values name: `image: repo:tag`, or `{repository, tag}`."""
    found: set[str] = set()
    if isinstance(document, dict):
        image = document.get("image")
        if isinstance(image, str):
            found.add(image)
        repository, tag = document.get("repository"), document.get("tag")
        if isinstance(repository, str) and isinstance(tag, str):
            found.add(f"{repository}:{tag}")
        for value in document.values():
            found |= images_in(value)
    elif isinstance(document, list):
        for value in document:
            found |= images_in(value)
    return found


def pins_used(recording: mockrun.Recording, runs: dict[str, Any] | None = None) -> list[versions.Pin]:
    """The pins (manifests/versions.py) among the images and Helm charts this stack applies; named images are none."""
    releases = helm_releases(recording).values()
    images = images_in([*kubernetes_objects(recording).values(), *(runs or {}).values()])
    images |= images_in([release["values"] for release in releases])
    charts = {(str(release["chart"]), str(release["version"])) for release in releases}
    return lifecycle.pins_in_use(images, charts)


def end_of_support(recording: mockrun.Recording, runs: dict[str, Any] | None = None) -> list[str]:
    """Warnings for the defaults this stack uses that are past their vendor's end of support on `today()`.

    Only gpuplane's own pins count: an image or chart version the user names is theirs to keep current. The
    warnings never enter plan.json (a render must not change with the calendar); the command prints them.
    """
    return lifecycle.end_of_support_warnings(pins_used(recording, runs))


def _file_name(parts: list[str]) -> str:
    stem = "-".join(p for p in parts if p)
    return re.sub(r"[^a-z0-9.-]+", "-", stem.lower()).strip("-") + ".yaml"


def picture(config: StackConfig | Target, recording: mockrun.Recording) -> str:
    """A Mermaid flowchart: components as boxes, main resources inside, main dependencies as arrows."""
    about = Target.of(config)
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
    priced = cost_estimate(about, recording).as_dict()
    group_costs = {line["item"]: line for line in priced["lines"]}

    def drawn(component: mockrun.RecordedResource) -> bool:
        """Whether the box would hold anything: boxes with nothing drawn inside are left out."""
        return any(parent == component.urn for parent, _, _ in ids) or any(
            drawn(sub) for sub in components if sub.parent == component.urn
        )

    def emit(component: mockrun.RecordedResource, indent: str) -> None:
        if not drawn(component):
            return
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
                    line = group_costs.get(
                        f"node group {inputs.get('labels', {}).get(wellknown.LABEL_NODE_GROUP, child.name)}"
                    )
                    if line:
                        extra += f"<br/>${line['idle']:,.2f}-{line['max']:,.2f}/h idle-max"
                elif type_ == "aws:eks/cluster:Cluster":
                    child = next(x for x in resources if x.parent == parent and x.type == type_)
                    vpc = child.inputs.get("vpcConfig", {})
                    access = "public+private" if vpc.get("endpointPublicAccess") else "private"
                    extra = f"<br/>Kubernetes {child.inputs.get('version')}, endpoint {access}"
                elif type_ == "kubernetes:apps/v1:Deployment":
                    child = next(x for x in resources if _picture_key(x) == (parent, type_, detail))
                    extra = _deployment_facts(child.inputs, resources)
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
    # Group by component: an arrow to anything outside the source's box starts at the box, so five resources
    # of a serving box that need the same add-on draw one arrow, not five.
    owner = {node: comp_ids[parent] for (parent, _, _), node in ids.items() if parent in comp_ids}
    ancestors: dict[str, set[str]] = {}
    for c in components:
        chain, up = set(), c.parent
        while up in comp_ids:
            chain.add(comp_ids[up])
            up = by_urn[up].parent if up in by_urn else None
        ancestors[comp_ids[c.urn]] = chain
    members: dict[str, set[str]] = {}
    for node, box in owner.items():
        for holder in {box, *ancestors.get(box, set())}:
            members.setdefault(holder, set()).add(node)
    lifted: set[tuple[str, str]] = set()
    for a, b in reduce_edges(edges):
        home = owner.get(a)
        lifted.add((home, b) if home is not None and b not in members.get(home, set()) else (a, b))
    lines.extend(f"  {a} --> {b}" for a, b in sorted(reduce_edges(lifted, members)))
    types = Counter(r.type for r in recording.resources if r.custom)
    table = "\n".join(f"| `{t}` | {n} |" for t, n in sorted(types.items()))
    return (
        f"# Stack `{about.stack}` of `{about.project}` ({about.profile}, {about.region})\n\n"
        "Components are boxes, arrows point from a resource (or a whole box) to what it depends on; an arrow "
        "that another path already implies is left out. Node groups show their cost per hour, idle-max.\n\n"
        f"```mermaid\n{chr(10).join(lines)}\n```\n\n"
        f"{cost_markdown(priced)}\n"
        f"| resource type | count |\n|---|---|\n{table}\n\n" + _observability_section(recording)
    )


def _observability_section(recording: mockrun.Recording) -> str:
    """`stack.md`'s part on metrics, alerts, dashboards and node repair (docs/operations.md explains them)."""
    facts = observability_summary(recording)
    rows = [
        f"| `{r.inputs.get('labels', {}).get(wellknown.LABEL_NODE_GROUP, r.name)}` | {_repair(r.inputs)} |"
        for r in sorted(recording.by_type("aws:eks/nodeGroup:NodeGroup"), key=lambda r: r.name)
    ]
    lines = [
        "## Metrics, alerts and node repair",
        "",
        f"- Metrics: {facts['metrics']}"
        + (
            {
                "prometheus": " (kube-prometheus-stack in `monitoring`; files under `observability/`)",
                "managedPrometheus": " (Amazon Managed Service for Prometheus workspace fed by the AWS managed "
                "collector; its scrape configuration is `observability/scrape.yaml`)",
                "cloudwatch": " (the amazon-cloudwatch-observability add-on: Container Insights with its own "
                "dcgm-exporter; CloudWatch alarms and dashboard)",
            }.get(facts["metrics"], "")
        ),
        f"- Alert rules: {', '.join(facts['alerts']) or 'none'}",
        f"- Dashboards: {', '.join(facts['dashboards']) or 'none'}",
        f"- Serving scaled on Prometheus signals by: {facts['metricScaler'] or 'nothing (CPU HPAs only, if any)'}",
        "",
        "| node group | auto repair |",
        "|---|---|",
        *rows,
    ]
    return "\n".join(lines) + "\n"


def cost_markdown(priced: dict[str, Any]) -> str:
    """The estimate as a Markdown table for stack.md: one row per line, totals, sources and caveats."""
    rows = "".join(
        f"| {line['item']} | {line['detail']} | {line['idle']:,.4f} | {line['max']:,.4f} | "
        f"{'; '.join(line['notes']) or '-'} |\n"
        for line in priced["lines"]
    )
    return (
        "## Cost per hour (USD)\n\n"
        "| item | what | idle | max | notes |\n|---|---|---:|---:|---|\n"
        f"{rows}| **total** | {priced['totalNote']} | **{priced['idle']:,.2f}** | **{priced['max']:,.2f}** | "
        f"${priced['idleMonthly']:,.0f}-{priced['maxMonthly']:,.0f} a month (730 h) |\n\n"
        + "".join(f"**Warning:** {w}.\n\n" for w in priced["warnings"])
        + f"Instance prices: {priced['instancePrices']['source']}, {priced['instancePrices']['date']}. "
        f"Service prices: {priced['servicePrices']['source']}, {priced['servicePrices']['date']}. "
        f"{' '.join(f'Note: {n}.' for n in priced['notes'])}\n"
    )


def reduce_edges(edges: set[tuple[str, str]], members: dict[str, set[str]] | None = None) -> set[tuple[str, str]]:
    """The transitive reduction: drop an arrow when another path already leads from its source to its target.

    Why: a serving Deployment depends on the metrics-server add-on, the system node group and the EFS file
    system, and also on the add-on that depends on the node group: the picture drew all ten arrows. An arrow
    is dropped only if the target stays reachable without it (checked on the arrows kept so far), so every
    dependency the full graph shows is still a path in the picture, cycles included. `members`: a box's
    drawn resources, reached from the box without an arrow (a box's arrow is implied by its members' arrows).
    """
    kept = set(edges)
    successors: dict[str, set[str]] = {box: set(nodes) for box, nodes in (members or {}).items()}
    for a, b in kept:
        successors.setdefault(a, set()).add(b)

    def reachable_without(src: str, dst: str) -> bool:
        stack = [n for n in successors.get(src, set()) if n != dst]
        seen = set(stack)
        while stack:
            node = stack.pop()
            if node == dst:
                return True
            for nxt in successors.get(node, set()) - seen:
                seen.add(nxt)
                stack.append(nxt)
        return False

    for a, b in sorted(edges):
        if reachable_without(a, b):
            kept.discard((a, b))
            successors[a].discard(b)
    return kept


def _deployment_facts(inputs: dict[str, Any], resources: list[mockrun.RecordedResource]) -> str:
    """A workload's line in the picture: replicas (or its autoscaler's range), the first container's limits."""
    spec = inputs.get("spec", {})
    containers = spec.get("template", {}).get("spec", {}).get("containers", [])
    limits = (containers[0].get("resources", {}).get("limits", {}) if containers else {}) or {}
    name = inputs.get("metadata", {}).get("name")
    scaler = next(
        (
            r.inputs.get("spec", {})
            for r in resources
            if r.type == "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
            and r.inputs.get("spec", {}).get("scaleTargetRef", {}).get("name") == name
        ),
        None,
    )
    if scaler is not None and "replicas" not in spec:
        parts = [f"{scaler.get('minReplicas', 1)}-{scaler.get('maxReplicas')} replicas (HPA)"]
    else:
        parts = [f"{spec.get('replicas', 1)} replica(s)"]
    parts += [f"{limits[k]} {label}" for k, label in (("cpu", "CPU"), ("memory", "memory")) if k in limits]
    if wellknown.GPU_RESOURCE in limits:
        parts.append(f"{limits[wellknown.GPU_RESOURCE]} GPU")
    return "<br/>" + ", ".join(parts)


def summary(
    config: StackConfig | Target, recording: mockrun.Recording, runs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The summary as data (what `render --json` prints and the table shows); works without a cluster.

    `runs`: the training runs `gpuplane train` submits (JobSets), listed with their roles.
    """
    target = Target.of(config)
    clusters = recording.by_type("aws:eks/cluster:Cluster")
    cluster = clusters[0].inputs if len(clusters) == 1 else None
    priced = cost_estimate(target, recording).as_dict()
    group_costs = {line["item"]: line for line in priced["lines"]}
    groups = []
    templates = {t.urn: t.inputs for t in recording.by_type("aws:ec2/launchTemplate:LaunchTemplate")}
    for r in sorted(recording.by_type("aws:eks/nodeGroup:NodeGroup"), key=lambda r: r.name):
        inputs = r.inputs
        # A Capacity Block group names its one type in its launch template, none on the group.
        template = next((templates[d] for d in r.dependencies if d in templates), {})
        name = inputs.get("labels", {}).get(wellknown.LABEL_NODE_GROUP, r.name)
        sc = inputs.get("scalingConfig", {})
        groups.append(
            {
                "name": name,
                "kind": target.kinds.get(name, "gpu" if "NVIDIA" in str(inputs.get("amiType")) else "cpu"),
                "instanceTypes": inputs.get("instanceTypes") or [t for t in [template.get("instanceType")] if t],
                "amiType": inputs.get("amiType"),
                "capacityType": inputs.get("capacityType"),
                "minSize": sc.get("minSize"),
                "desiredSize": sc.get("desiredSize"),
                "maxSize": sc.get("maxSize"),
                "taints": [f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in inputs.get("taints", [])],
                "repair": _repair(inputs),
                "gpuSharing": inputs.get("labels", {}).get("gpuplane.io/gpu-sharing"),
                "costPerHour": {k: group_costs.get(f"node group {name}", {}).get(k) for k in ("idle", "max")},
            }
        )
    return {
        "project": target.project,
        "stack": target.stack,
        "profile": target.profile,
        "region": target.region,
        "kubernetesVersion": cluster.get("version") if cluster else None,
        "endpoint": (
            None
            if cluster is None
            else "public+private"
            if cluster.get("vpcConfig", {}).get("endpointPublicAccess")
            else "private only"
        ),
        "availabilityZones": availability_zones(recording),
        "counts": counts(recording),
        "nodeGroups": groups,
        "observability": observability_summary(recording),
        "workloads": workloads(recording),
        "trainingRuns": [
            {
                "name": doc.get("metadata", {}).get("labels", {}).get("app.kubernetes.io/instance", name),
                "roles": {
                    job["name"]: int(job.get("replicas", 1))
                    * int(job.get("template", {}).get("spec", {}).get("parallelism", 1))
                    for job in doc.get("spec", {}).get("replicatedJobs", [])
                },
            }
            for name, doc in sorted((runs or {}).items())
        ],
        "helmReleases": [
            {k: release[k] for k in ("name", "namespace", "chart", "version")}
            for release in helm_releases(recording).values()
        ],
        "cost": priced,
        "notes": list(target.notes),
    }


def workloads(recording: mockrun.Recording) -> list[dict[str, Any]]:
    """The long-running workloads: where they run (node group), how many replicas, GPUs per replica."""
    scalers = {
        (
            r.inputs.get("metadata", {}).get("namespace"),
            r.inputs.get("spec", {}).get("scaleTargetRef", {}).get("name"),
        ): r.inputs.get("spec", {})
        for r in recording.by_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler")
    }
    found = []
    for r in [
        *recording.by_type("kubernetes:apps/v1:Deployment"),
        *recording.by_type("kubernetes:apps/v1:StatefulSet"),
    ]:
        meta, spec = r.inputs.get("metadata", {}), r.inputs.get("spec", {})
        pod = spec.get("template", {}).get("spec", {})
        scaler = scalers.get((meta.get("namespace"), meta.get("name")))
        replicas = (
            f"{scaler.get('minReplicas', 1)}-{scaler.get('maxReplicas')} (HPA)"
            if scaler is not None and "replicas" not in spec
            else str(spec.get("replicas", 1))
        )
        gpus = sum(
            int(c.get("resources", {}).get("limits", {}).get(wellknown.GPU_RESOURCE, 0))
            for c in pod.get("containers", [])
        )
        found.append(
            {
                "name": f"{meta.get('namespace', 'default')}/{meta.get('name', r.name)}",
                "kind": r.inputs.get("kind", r.type.rsplit(":", 1)[-1]),
                "nodeGroup": cost.target_group(pod),
                "replicas": replicas,
                "gpusPerReplica": gpus,
            }
        )
    return sorted(found, key=lambda w: str(w["name"]))


def availability_zones(recording: mockrun.Recording) -> int:
    """How many AZs the stack's subnets span: read from the subnets, so any program's platform counts.

    Stack outputs would do for gpuplane's program only (a consumer names its exports as it likes).
    """
    zones = {
        str(r.inputs.get("availabilityZone") or r.inputs.get("availabilityZoneId"))
        for r in recording.by_type("aws:ec2/subnet:Subnet")
        if r.inputs.get("availabilityZone") or r.inputs.get("availabilityZoneId")
    }
    return len(zones)


def summary_table(config: StackConfig | Target, recording: mockrun.Recording) -> Table:
    """The terminal summary: one row per node group, with the facts people check before `pulumi up`."""
    facts = summary(config, recording)
    n = facts["counts"]
    cluster = (
        f"EKS {facts['kubernetesVersion']}, endpoint {facts['endpoint']}" if facts["endpoint"] else "no EKS cluster"
    )
    title = (
        f"{facts['project']}/{facts['stack']} ({facts['profile']}) in {facts['region']}: {cluster}, "
        f"{facts['availabilityZones']} AZs; {n['resources']} resources in plan.json = "
        f"{n['cloud']} cloud resources + {n['components']} components"
    )
    table = Table(title=title, caption=cost_caption(facts["cost"]), caption_justify="left")
    for column in (
        "node group",
        "kind",
        "instance types",
        "AMI type",
        "capacity",
        "min/desired/max",
        "GPU sharing",
        "$/h idle-max",
        "taints",
    ):
        # fold, never cut: a user reads every taint and type (a cut cell hid the EFS taint's effect).
        table.add_column(column, overflow="fold")
    for group in facts["nodeGroups"]:
        table.add_row(
            group["name"],
            group["kind"],
            ", ".join(group["instanceTypes"]),
            str(group["amiType"]),
            str(group["capacityType"]),
            f"{group['minSize']}/{group['desiredSize']}/{group['maxSize']}",
            group["gpuSharing"] or "-",
            _money_range(group["costPerHour"]),
            ", ".join(group["taints"]) or "-",
        )
    return table


def workloads_table(facts: dict[str, Any]) -> Table:
    """Workloads, training runs and Helm releases: what runs on the groups, and what the stack installs."""
    table = Table(title="workloads", title_justify="left")
    for column in ("workload", "kind", "node group", "replicas", "GPUs each"):
        table.add_column(column, overflow="fold")
    for w in facts["workloads"]:
        table.add_row(w["name"], w["kind"], w["nodeGroup"] or "-", w["replicas"], str(w["gpusPerReplica"]))
    for run in facts["trainingRuns"]:
        roles = ", ".join(f"{role} x{n}" for role, n in run["roles"].items())
        table.add_row(run["name"], "training run (gpuplane train)", "-", roles, "-")
    releases = ", ".join(f"{r['name']} {r['version']}" for r in facts["helmReleases"])
    table.caption = f"Helm releases: {releases or 'none'}"
    table.caption_justify = "left"
    return table


def _money_range(amounts: dict[str, float | None]) -> str:
    idle, top = amounts.get("idle"), amounts.get("max")
    if idle is None or top is None:
        return "-"
    return f"${idle:,.2f}-{top:,.2f}"


def cost_caption(priced: dict[str, Any]) -> str:
    """The cost in one paragraph: totals, a month of it, where prices come from, and what is left out."""
    # Each metrics backend's added $/h is shown on the render, not only in cost.json.
    shown = ("price (", "kept up by", "observability.metrics choices", "prepaid:", "reserved:", "at 0 replicas")
    notes = sorted({n for line in priced["lines"] for n in line["notes"] if any(s in n for s in shown)})
    excludes = f" ({priced['totalNote']})" if priced["totalNote"] else ""
    return (
        f"Cost: ${priced['idle']:,.2f}/h idle (${priced['idleMonthly']:,.0f} a month), "
        f"${priced['max']:,.2f}/h at every group's maximum (${priced['maxMonthly']:,.0f} a month){excludes}; "
        f"instance prices of {priced['instancePrices']['date']}, service prices of "
        f"{priced['servicePrices']['date']}. "
        + "".join(f"Warning: {w}. " for w in priced["warnings"])
        + "".join(f"Note: {n}. " for n in notes)
        + "An estimate: cost.json lists each line and what it leaves out."
    )


def yaml_text(document: Any) -> str:
    """A rendered document as YAML, keys sorted, with libyaml's emitter where PyYAML was built with it.

    Why libyaml: PyYAML's pure-Python emitter took about a tenth of a render's CPU (tens of manifests, some with
    long strings). The two emitters write the same YAML; they fold long double-quoted strings at different
    places, so a render on a PyYAML without libyaml differs in line breaks only.
    """
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(document, Dumper=dumper, sort_keys=True)


def write(config: StackConfig, out_dir: Path, console: Console | None = None) -> dict[str, Any]:
    """Render gpuplane's program for `config` into `out_dir`; returns the summary (printed if `console`)."""
    with mockrun.no_cycle_collection():  # the files are written from a heap the collector need not walk
        runs = training.run_manifests(config.platform)
        return write_recording(Target.of(config), run_stack(config), out_dir, console, runs=runs, said=config.warnings)


def write_program(project: Project, stack: str, out_dir: Path, console: Console | None = None) -> dict[str, Any]:
    """Render another Pulumi program (`project.main`) offline, the same contract as gpuplane's own.

    Its stack file is read with the same front door (encoding, size, aliases, keys); the program runs
    under mocks with its config set as the engine would set it, and any invoke the mocks cannot answer
    stops the render naming it (`mockrun.UnansweredInvoke`). Invalid arguments to gpuplane's components are
    reported like invalid config (`ConfigError`: where in the program, the argument, the value).
    """
    entry = program_file(project)
    if entry is None:
        raise ConfigError([f"project '{project.name}' is gpuplane's own program; render it with `write`"])
    short = stack_short_name(stack)
    raw = {**project.config, **read_stack_file(stack, project.stacks_dir)}
    problems = [
        *raw.pop(FILE_PROBLEMS, []),
        *key_problems(raw, project.name),
        *unknown_keys(raw, project.name),
        *limits.raw_problems(raw),
    ]
    region = raw.get("aws:region")
    regions = eks_regions()
    if not isinstance(region, str) or not region:
        problems.append("aws:region: is not set; set it to the AWS region of the stack, e.g. us-west-2")
    elif region not in regions:
        # The project's own render says the same (infra/config.py), with the regions allowed.
        problems.append(
            f"aws:region: '{region}' is not a region where EKS is offered; allowed: {', '.join(sorted(regions))}"
        )
    # Which file to fix (the project's render names its stacks folder in the heading).
    path = stack_file(stack, project.stacks_dir)
    where = path.relative_to(project.root) if path.is_relative_to(project.root) else path
    if problems:
        raise ConfigError([f"{where}: {problem}" for problem in problems])
    assert isinstance(region, str)
    engine_config = {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}
    with mockrun.no_cycle_collection():
        said = io.StringIO()  # the program's own stderr: shown after it ran, unless it was its config refusal
        try:
            with contextlib.redirect_stderr(said):
                recording = mockrun.run_file(entry, project.name, short, region, engine_config)
        except InvalidConfigExit as exc:  # a copy of gpuplane's own entry point: its config problems, as ours
            raise ConfigError([f"{where}: {problem}" for problem in exc.problems]) from None
        except SystemExit as exc:
            if exc.code != 2:
                sys.stderr.write(said.getvalue())
                raise
            # A program that printed why and exited with 2, the exit status of invalid config.
            lines = [line.strip() for line in said.getvalue().splitlines() if line.strip()]
            if lines and lines[0].endswith(":") and len(lines) > 1:
                lines = lines[1:]
            told = lines or [f"{entry.name} exited with status 2 and said nothing"]
            raise ConfigError([f"{where}: {line}" for line in told]) from None
        except ValueError as exc:
            sys.stderr.write(said.getvalue())
            refused = program_problems(exc, entry.parent)
            if refused is None:
                raise
            raise ConfigError(refused) from None
        except BaseException:
            sys.stderr.write(said.getvalue())
            raise
        sys.stderr.write(said.getvalue())
        target = Target(
            project=project.name,
            stack=short,
            region=region,
            profile="program",
            config=dict(sorted(raw.items())),
            kinds={},
        )
        return write_recording(target, recording, out_dir, console, runs=program_runs(recording))


def program_runs(recording: mockrun.Recording) -> dict[str, dict[str, Any]]:
    """The training runs a program's `TfTraining` workloads submit (their next run), by file name.

    The same files as the project's own render (`plan.training.run_manifests`), read from what each workload
    registered: the component built and checked its run (`queued_run`) before registering anything.
    """
    runs: dict[str, dict[str, Any]] = {}
    for workload in recording.by_type("gpuplane:index:TfTraining"):
        doc = recording.component_outputs.get(workload.urn, {}).get("runManifest")
        if isinstance(doc, dict):
            meta = doc["metadata"]
            runs[f"jobset-{meta['namespace']}-{meta['name']}.yaml"] = doc
    return runs


# gpuplane's own code (in a checkout or a wheel): a ValueError raised here is a refused argument.
_GPUPLANE_DIRS = tuple(Path(__file__).resolve().parent.parent / name for name in ("components", "manifests", "infra"))


def program_problems(exc: ValueError, program_dir: Path) -> list[str] | None:
    """A consumer program's invalid component arguments as config-style problems, or None for its own bugs.

    Each line: where in the program (file and line), the args class and argument path, the value, and what
    is allowed (the same message the stack config gets). A `ValueError` raised by gpuplane's own checks
    counts too; any other error is the program's and keeps its traceback.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if _inside(Path(f.filename), program_dir)]
    where = f"{Path(mine[-1].filename).name} line {mine[-1].lineno}" if mine else "the program"
    if isinstance(exc, ValidationError):
        lines = []
        for error in exc.errors(include_url=False):
            path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
            cause = (error.get("ctx") or {}).get("error")
            root = getattr(config_types, exc.title, None)  # the args class the program built
            hint = (
                mapping_hint(list(error["loc"]), error["input"], root)
                if error["type"] == "model_type" and isinstance(root, type) and issubclass(root, BaseModel)
                else None
            )
            if isinstance(cause, FieldError):  # a check across fields, about one of them: its message names the value
                lines.append(f"{where}: {exc.title}{path}.{cause.field}: {cause.message}")
            elif hint:  # a scalar where a mapping belongs: what to write, never pydantic's class name
                lines.append(f"{where}: {exc.title}{path}: {hint} (got {error['input']!r})")
            elif path:
                lines.append(f"{where}: {exc.title}{path}: {error['input']!r}: {error['msg']}")
            else:
                lines.append(f"{where}: {exc.title}: {str(error['msg']).removeprefix('Value error, ')}")
        return lines
    raised_in = Path(frames[-1].filename) if frames else None
    if raised_in is not None and any(_inside(raised_in, d) for d in _GPUPLANE_DIRS):
        return [f"{where}: {exc}"]
    return None


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def write_recording(
    target: Target,
    recording: mockrun.Recording,
    out_dir: Path,
    console: Console | None = None,
    *,
    runs: dict[str, Any] | None = None,
    said: Sequence[str] = (),
) -> dict[str, Any]:
    """Write a recording into `out_dir` (replaced atomically, only if it is absent, empty or a render).

    `runs`: training runs that `gpuplane train` submits (not Pulumi resources), shown under
    `manifests/runs/` so a review sees what a submit would create (docs/workloads.md). `said`: warnings the
    command already printed (the stack config's); the program's own Pulumi warnings (`Recording.warnings`, e.g.
    the `Platform` component's config warnings in a program of one's own) are printed unless among them.
    """
    problem = out_dir_problem(out_dir)
    if problem:
        raise ConfigError([problem])
    out_dir = out_dir.absolute()

    def fill(staging: Path) -> None:
        plan = plan_document(target, recording)
        (staging / "plan.json").write_text(json.dumps(plan, indent=2, sort_keys=True, allow_nan=False) + "\n")
        (staging / "tfplan.json").write_text(tfplan.dumps(tfplan.from_recording(plan, recording)))
        priced = cost_estimate(target, recording).as_dict()
        (staging / "cost.json").write_text(json.dumps(priced, indent=2, sort_keys=True, allow_nan=False) + "\n")
        for folder, items in (
            ("manifests", kubernetes_objects(recording)),
            ("helm", helm_releases(recording)),
            # Training runs: submitted by `gpuplane train`, not Pulumi resources (docs/workloads.md).
            ("manifests/runs", runs or {}),
        ):
            (staging / folder).mkdir(exist_ok=True)
            for file_name, document in items.items():
                (staging / folder / file_name).write_text(yaml_text(document))
        for file_name, text in observability_files(recording).items():
            (staging / "observability" / file_name).parent.mkdir(parents=True, exist_ok=True)
            (staging / "observability" / file_name).write_text(text)
        (staging / "stack.md").write_text(picture(target, recording))
        # The marker last: a staging folder that holds it is a complete render (infra/outdir.py).
        (staging / MARKER).write_text(
            "gpuplane render output: `gpuplane render` replaces these entries and nothing else in this folder:\n"
            + "".join(f"{name}\n" for name in OWNED)
        )

    try:
        outdir.write(out_dir, fill)
    except outdir.OutputError as exc:
        raise ConfigError([str(exc)]) from None
    facts = summary(target, recording, runs)
    facts["endOfSupport"] = end_of_support(recording, runs)
    facts["wiring"] = wiring.gpu_wiring_warnings(recording)
    facts["warnings"] = list(recording.warnings)  # what the program logged (the components' config warnings)
    if console is not None:
        console.print(summary_table(target, recording))
        console.print(workloads_table(facts))
        console.print(observability_line(facts["observability"]), highlight=False, markup=False)
        for note in target.notes:
            console.print(f"note: {note}", highlight=False, markup=False)
        console.print(
            f"wrote {out_dir}: plan.json, tfplan.json, cost.json, manifests/, helm/, observability/, stack.md"
        )
        logged = [w for w in recording.warnings if w not in said]
        for warning in [*logged, *facts["wiring"], *facts["endOfSupport"]]:
            console.print(Text.assemble(("warning:", "yellow"), " ", warning), soft_wrap=True)
    return facts
