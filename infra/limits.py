"""Front-door limits: what AWS and Kubernetes would refuse, checked on the stack config before anything runs.

Why apart from the pydantic models: these limits are the APIs' (the EKS, IAM and EC2 models botocore
ships, read at runtime so they follow botocore's updates instead of copies of them), they must see the raw
values (a non-finite number, a list of a million items) before pydantic does, and some need the whole
validated platform (how many tags an Auto Scaling group ends up with, the IAM role names derived from
the cluster name). Every check returns a list of problems, so the caller reports them all at once.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from gpuplane.components.config import PlatformArgs
from gpuplane.components.facts import partition
from gpuplane.components.plan import names
from gpuplane.components.plan.node_template import autoscaler_tags

# No list or mapping in a stack config needs more entries than this; a bigger one is a mistake or an
# attack, and pydantic would spend minutes on it.
MAX_ITEMS: Final = 256
# Tags EKS itself puts on a managed node group's Auto Scaling group besides the autoscaler's two
# (`eks:cluster-name`, `eks:nodegroup-name`, `kubernetes.io/cluster/<name>`).
EKS_ASG_TAGS: Final = 3
# An Auto Scaling group, like every EC2 resource, takes at most 50 user tags (AWS tagging docs; the
# autoscaling model states no maximum, so the EKS tag map's maximum, the same 50, is used).


@dataclass(frozen=True)
class StringLimit:
    """Length bounds and pattern of one string shape in a botocore service model."""

    min: int
    max: int
    pattern: str | None

    def problem(self, value: str) -> str | None:
        r"""What is wrong with `value`, or None.

        The pattern is a rule for the whole value, as AWS applies it: botocore's patterns are often not
        anchored at the end (EKS cluster names: `^[0-9A-Za-z][A-Za-z0-9\-_]*`), and a prefix match would
        pass `My Cluster!` because it starts well.
        """
        if not self.min <= len(value) <= self.max:
            return f"has {len(value)} characters; allowed {self.min} to {self.max}"
        if self.pattern and not re.fullmatch(self.pattern, value):
            return f"does not match {self.pattern} as a whole"
        return None


def _limit(metadata: Mapping[str, Any]) -> StringLimit:
    return StringLimit(int(metadata.get("min", 0)), int(metadata.get("max", 1 << 31)), metadata.get("pattern"))


@dataclass(frozen=True)
class ApiLimits:
    """The limits gpuplane checks, as botocore's models state them."""

    cluster_name: StringLimit
    label_key: StringLimit
    label_value: StringLimit
    taint_key: StringLimit
    taint_value: StringLimit
    tag_key: StringLimit
    tag_value: StringLimit
    max_tags: int


@functools.cache
def api_limits() -> ApiLimits:
    """Read the limits from the EKS and IAM models botocore ships (offline, once)."""
    session = partition.botocore_session()
    eks = session.get_service_model("eks")
    cluster = eks.operation_model("CreateCluster").input_shape.members
    group = eks.operation_model("CreateNodegroup").input_shape.members
    labels, taint, tags = group["labels"], group["taints"].member.members, group["tags"]
    return ApiLimits(
        cluster_name=_limit(cluster["name"].metadata),
        label_key=_limit(labels.key.metadata),
        label_value=_limit(labels.value.metadata),
        taint_key=_limit(taint["key"].metadata),
        taint_value=_limit(taint["value"].metadata),
        tag_key=_limit(tags.key.metadata),
        tag_value=_limit(tags.value.metadata),
        max_tags=int(tags.metadata["max"]),
    )


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    yield path, value
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]")


def raw_problems(raw: Mapping[str, Any]) -> list[str]:
    """Non-finite numbers and oversized lists/maps anywhere in the config (`namespace:key` -> value)."""
    problems: list[str] = []
    for key, value in raw.items():
        for path, item in _walk(value, str(key)):
            if isinstance(item, float) and not math.isfinite(item):
                problems.append(f"{path}: {item!r} is not a finite number; allowed: finite numbers only")
            elif isinstance(item, list | Mapping) and len(item) > MAX_ITEMS:
                problems.append(f"{path}: has {len(item)} entries; allowed: at most {MAX_ITEMS}")
    return problems


def config_problems(ours: Mapping[str, Any], namespace: str) -> list[str]:
    """API limits on the raw `gpuplane:` values (lengths, patterns), every problem at once."""
    limits = api_limits()
    problems: list[str] = []

    def check(path: str, value: Any, limit: StringLimit, what: str) -> None:
        if isinstance(value, str) and (problem := limit.problem(value)):
            problems.append(f"{namespace}:{path}: {what} {value!r} {problem} (AWS API limit)")

    check("clusterName", ours.get("clusterName"), limits.cluster_name, "EKS cluster name")
    tags = ours.get("tags")
    if isinstance(tags, Mapping):
        for key, value in tags.items():
            check(f"tags.{key}", str(key), limits.tag_key, "tag key")
            check(f"tags.{key}", value, limits.tag_value, "tag value")
    groups = ours.get("nodeGroups")
    for index, group in enumerate(groups if isinstance(groups, list) else []):
        if not isinstance(group, Mapping):
            continue
        labels = group.get("labels")
        if isinstance(labels, Mapping):
            for key, value in labels.items():
                check(f"nodeGroups[{index}].labels.{key}", str(key), limits.label_key, "label key")
                check(f"nodeGroups[{index}].labels.{key}", value, limits.label_value, "label value")
        taints = group.get("taints")
        for t_index, taint in enumerate(taints if isinstance(taints, list) else []):
            if isinstance(taint, Mapping):
                check(f"nodeGroups[{index}].taints[{t_index}].key", taint.get("key"), limits.taint_key, "taint key")
                check(
                    f"nodeGroups[{index}].taints[{t_index}].value",
                    taint.get("value"),
                    limits.taint_value,
                    "taint value",
                )
    return problems


def platform_problems(platform: PlatformArgs, cluster_name: str, namespace: str, project: str, stack: str) -> list[str]:
    """Limits on what gpuplane derives from the validated config: role names, tags per resource."""
    limits = api_limits()
    problems: list[str] = []
    key = (
        f"{namespace}:clusterName" if platform.cluster_name else f"{namespace}:clusterName (default <project>-<stack>)"
    )
    if problem := limits.cluster_name.problem(cluster_name):
        problems.append(f"{key}: EKS cluster name {cluster_name!r} {problem} (AWS API limit)")
    imports = [
        ("serving", s.name, f"serving[{i}].name")
        for i, s in enumerate(platform.serving)
        if s.model.import_ is not None and s.model.import_.source.startswith("s3://")
    ]
    imports += [
        ("training", t.name, f"training[{i}].name")
        for i, t in enumerate(platform.training)
        if t.data_import is not None and t.data_import.source.startswith("s3://")
    ]
    roles = names.iam_role_names(
        cluster_name,
        "clusterName" if platform.cluster_name else "clusterName (default <project>-<stack>)",
        node_groups=[g.name for g in platform.resolved_node_groups],
        flow_logs=platform.network.flow_logs,
        import_roles=imports,
        metrics_roles=names.metrics_role_suffixes(
            platform.observability.metrics,
            keda_on_amp=platform.observability.metrics == "managedPrometheus"
            and any(v.autoscaling and v.autoscaling.metric != "cpu" for s in platform.serving for v in s.variants),
        ),
    )
    problems += [f"{namespace}:{p.field}: {p.message}" for p in names.problems(roles)]
    base = {"gpuplane:project": project, "gpuplane:stack": stack, **platform.tags}
    if len(base) > limits.max_tags:
        problems.append(
            f"{namespace}:tags: {len(platform.tags)} tags plus gpuplane's 2 make {len(base)}; "
            f"allowed: at most {limits.max_tags} per AWS resource"
        )
    for index, group in enumerate(platform.resolved_node_groups):
        asg = autoscaler_tags(group, cluster_name, gpu_operator=group.driver == "operator")
        on_asg = len(asg) + EKS_ASG_TAGS
        on_instances = len(base) + 1  # plus Name on the launch template's instances and volumes
        worst = max(on_asg, on_instances)
        if worst > limits.max_tags:
            problems.append(
                f"{namespace}:nodeGroups[{index}]: group {group.name!r} needs {on_asg} tags on its Auto Scaling group "
                f"(autoscaler node template for its labels and taints, plus EKS's {EKS_ASG_TAGS}) and {on_instances} "
                f"on its instances; allowed: at most {limits.max_tags}; use fewer labels, taints or tags"
            )
    return problems
