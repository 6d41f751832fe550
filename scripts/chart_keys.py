"""Write the value keys each pinned Helm chart reads, at its pinned version, for tests/components/test_chart_values.py.

Helm passes a value the chart never reads without a word, so a misspelt, renamed or disabled key silently does
nothing. The test checks every key gpuplane sets against what the chart at its pinned version reads; this script
writes that list, one JSON file per chart and version under tests/components/chart_keys/:

- `keys`: every key path of the chart's values.yaml, plus every `.Values.<path>` its templates read (a key a
  template reads but values.yaml leaves out is still read), the same for each subchart under its alias (and its
  `global`), read at the subchart version the chart's Chart.yaml names;
- `open`: paths whose default is an empty map or null (the chart renders whatever is under them: a node
  selector, resources, a storage spec), below which any key is the user's;
- `conditions`: each subchart's `condition` (Helm drops the subchart, and every value under its alias, when the
  first path of the condition that is set is false);
- `source`: which repository, tag, commit and path were read, and `read`: when.

Usage: python scripts/chart_keys.py --mirrors DIR [--date YYYY-MM-DD]. DIR holds git clones with their tags,
one per repository, at DIR/<owner>+<name>/repo or DIR/<owner>/<name> (nothing is fetched). Run it after a chart
bump; the test fails on a pinned chart version without its file.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuplane.manifests import versions

OUT_DIR = Path(__file__).resolve().parent.parent / "tests" / "components" / "chart_keys"
_VALUES_REF = re.compile(r"\.Values\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)")


@dataclass(frozen=True)
class Source:
    """A chart in git: repository (owner/name), tag, the chart's folder."""

    repo: str
    tag: str
    path: str


def pinned_charts() -> dict[tuple[str, str], Source]:
    """(chart name, chart version) of each release gpuplane installs -> where that chart lives in git."""
    operator = versions.GPU_OPERATOR.version
    dcgm = versions.DCGM_EXPORTER.version
    return {
        ("gpu-operator", operator): Source("NVIDIA/gpu-operator", operator, "deployments/gpu-operator"),
        # 0.20.1's tag is newer than the stored copy: read at v0.20.0, the patch release before it (versions.py).
        ("nvidia-device-plugin", versions.DEVICE_PLUGIN.version): Source(
            "NVIDIA/k8s-device-plugin", "v0.20.0", "deployments/helm/nvidia-device-plugin"
        ),
        # The chart's tag carries the DCGM version first (4.5.3-4.8.2 for chart 4.8.2).
        ("dcgm-exporter", dcgm): Source("NVIDIA/dcgm-exporter", f"4.5.3-{dcgm}", "deployment"),
        ("cluster-autoscaler", versions.CLUSTER_AUTOSCALER.version): Source(
            "kubernetes/autoscaler",
            f"cluster-autoscaler-chart-{versions.CLUSTER_AUTOSCALER.version}",
            "cluster-autoscaler/charts/cluster-autoscaler",
        ),
        ("kube-prometheus-stack", versions.KUBE_PROMETHEUS_STACK.version): Source(
            "prometheus-community/helm-charts",
            f"kube-prometheus-stack-{versions.KUBE_PROMETHEUS_STACK.version}",
            "charts/kube-prometheus-stack",
        ),
        ("keda", versions.KEDA.version): Source("kedacore/charts", f"v{versions.KEDA.version}", "keda"),
        # The EFA plugin's chart has no tags: the commit that set its version (versions.py).
        ("aws-efa-k8s-device-plugin", versions.EFA_DEVICE_PLUGIN.version): Source(
            "aws/eks-charts", "bfe91c4", "stable/aws-efa-k8s-device-plugin"
        ),
        ("kueue", versions.KUEUE_VERSION): Source("kubernetes-sigs/kueue", versions.KUEUE.version, "charts/kueue"),
        ("jobset", versions.JOBSET_VERSION): Source("kubernetes-sigs/jobset", versions.JOBSET.version, "charts/jobset"),
    }


def subchart_source(name: str, version: str, repository: str) -> Source | None:
    """Where a dependency of a pinned chart lives in git; None for one we cannot place (its keys stay unknown)."""
    if not re.fullmatch(r"v?\d+\.\d+\.\d+", version):
        return None  # a version range: which release Helm takes depends on the day
    if repository in ("https://prometheus-community.github.io/helm-charts",):
        return Source("prometheus-community/helm-charts", f"{name}-{version}", f"charts/{name}")
    if repository == "https://grafana-community.github.io/helm-charts":
        return Source("grafana-community/helm-charts", f"{name}-{version}", f"charts/{name}")
    if repository == "oci://registry.k8s.io/nfd/charts":
        return Source("kubernetes-sigs/node-feature-discovery", f"v{version}", "deployment/helm/node-feature-discovery")
    return None


class Mirrors:
    """Git clones under one folder; reads files at a tag or commit."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def clone(self, repo: str) -> Path:
        """The clone of `repo` (owner/name) under the root."""
        owner, name = repo.split("/")
        for candidate in (self.root / f"{owner}+{name}" / "repo", self.root / owner / name):
            if candidate.exists():
                return candidate
        raise SystemExit(f"no clone of {repo} under {self.root}")

    def git(self, repo: str, *args: str) -> str:
        """A git command's output in the clone of `repo`."""
        return subprocess.run(
            ["git", "-C", str(self.clone(repo)), *args], check=True, capture_output=True, text=True
        ).stdout

    def show(self, source: Source, path: str) -> str | None:
        """A file of the chart at its tag; None when the tag has no such file."""
        try:
            return self.git(source.repo, "show", f"{source.tag}:{source.path}/{path}")
        except subprocess.CalledProcessError:
            return None

    def templates(self, source: Source) -> list[str]:
        """The chart's template files at its tag, relative to the chart."""
        listing = self.git(source.repo, "ls-tree", "-r", "--name-only", source.tag, f"{source.path}/templates/")
        return [line.removeprefix(f"{source.path}/") for line in listing.splitlines() if line]

    def describe(self, source: Source) -> str:
        """Repository, tag, commit, date and folder: what a keys file says it read."""
        commit, day = self.git(source.repo, "log", "-1", "--format=%h %cs", source.tag).split()
        return f"{source.repo} {source.tag} ({commit}, {day}) {source.path}"


def value_keys(values: Any, prefix: str = "") -> tuple[set[str], set[str]]:
    """Every key path of a values document, and the paths whose default is an empty map or null."""
    keys: set[str] = set()
    open_: set[str] = set()
    if not isinstance(values, dict):
        return keys, open_
    for key, value in values.items():
        path = f"{prefix}{key}"
        keys.add(path)
        if value is None or value == {}:
            open_.add(path)
        elif isinstance(value, dict):
            more, more_open = value_keys(value, f"{path}.")
            keys |= more
            open_ |= more_open
    return keys, open_


def template_keys(text: str) -> set[str]:
    """The `.Values.a.b` paths a template reads, with their parents."""
    found: set[str] = set()
    for match in _VALUES_REF.finditer(text):
        parts = match.group(1).split(".")
        found |= {".".join(parts[: i + 1]) for i in range(len(parts))}
    return found


def chart_keys(mirrors: Mirrors, source: Source, prefix: str = "") -> dict[str, Any]:
    """The keys, open paths, conditions and sources of one chart and its subcharts, under `prefix`."""
    text = mirrors.show(source, "values.yaml")
    if text is None:
        raise SystemExit(f"no values.yaml in {source}")
    values = yaml.safe_load(text) or {}
    keys, open_ = value_keys(values, prefix)
    for template in mirrors.templates(source):
        keys |= {f"{prefix}{k}" for k in template_keys(mirrors.show(source, template) or "")}
    sources = [mirrors.describe(source)]
    conditions: dict[str, str] = {}
    chart = yaml.safe_load(mirrors.show(source, "Chart.yaml") or "{}") or {}
    for dep in chart.get("dependencies") or []:
        alias = dep.get("alias") or dep["name"]
        if dep.get("condition"):
            paths = [f"{prefix}{c.strip()}" for c in dep["condition"].split(",")]
            conditions[f"{prefix}{alias}"] = ",".join(paths)
            # Helm itself reads a condition's paths, whether values.yaml lists them or not.
            keys |= {".".join(p.split(".")[: i + 1]) for p in paths for i in range(p.count(".") + 1)}
        local = mirrors.show(source, f"charts/{dep['name']}/values.yaml")
        sub = (
            Source(source.repo, source.tag, f"{source.path}/charts/{dep['name']}")
            if local is not None
            else subchart_source(dep["name"], str(dep.get("version", "")), str(dep.get("repository", "")))
        )
        if sub is None:
            sources.append(f"{alias}: {dep['name']} {dep.get('version')} from {dep.get('repository')} not read")
            continue
        try:
            inner = chart_keys(mirrors, sub, f"{prefix}{alias}.")
        except (subprocess.CalledProcessError, SystemExit) as exc:
            sources.append(f"{alias}: {dep['name']} {dep.get('version')} not read ({exc})")
            continue
        keys |= set(inner["keys"]) | {f"{prefix}{alias}"}
        open_ |= set(inner["open"])
        conditions.update(inner["conditions"])
        sources.extend(f"{alias}: {s}" for s in inner["sources"])
    return {"keys": sorted(keys), "open": sorted(open_), "conditions": conditions, "sources": sources}


def main() -> None:
    """Write one file per pinned chart version."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of git clones (see above)")
    parser.add_argument("--date", default=datetime.date.today().isoformat(), help="the date of reading (ISO)")
    ns = parser.parse_args()
    mirrors = Mirrors(ns.mirrors)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for (chart, version), source in sorted(pinned_charts().items()):
        found = chart_keys(mirrors, source)
        doc = {"chart": chart, "version": version, "read": ns.date, "written_by": "scripts/chart_keys.py", **found}
        target = OUT_DIR / f"{chart}-{version}.json"
        target.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"{chart} {version}: {len(found['keys'])} keys, {len(found['open'])} open -> {target.name}")


if __name__ == "__main__":
    main()
