"""Every name gpuplane derives from the config, with the limit of the API that receives it: one source.

Why one module: a name is made of several keys (a serving name and a variant name make a Service
name; the cluster name and a workload name make an IAM role name), so no per-key maximum is right.
Each derived name is built here the way the platform builds it, with the keys that make it, and checked
against its limit before anything is created; the error says which keys, the name, its length, the limit
and how many characters to cut. docs/workloads.md states each rule as the formula checked here.

The limits and where they come from:
- Kubernetes (k8s.io/apimachinery `pkg/util/validation`): a Service name is a DNS-1035 label (at most
  63, starting with a letter); a label value at most 63; a Job's name becomes its pods' `job-name`
  label, so at most 63; a pod's hostname is a DNS-1123 label (at most 63).
- JobSet v0.12.0 (kubernetes-sigs/jobset tag v0.12.0, commit f22e565, 2026-05-08,
  `pkg/webhooks/jobset_webhook.go`): a JobSet is refused when, for a replicated job with `completions`,
  `<jobset>-<replicatedJob>-<replicas-1>-<completions-1>` plus `-abcde` (the pod's random suffix) is not
  a DNS-1035 label of at most 63. Our data-import replicated job has no `completions` (the webhook skips
  it); JobSet makes it an Indexed Job, whose pod hostname `<jobset>-data-import-0-0` must fit 63.
- IAM (botocore `iam` model, CreateRole RoleName): at most 64; Pulumi's auto-naming appends `-` and 7
  random characters to the logical name (pulumi-terraform-bridge `AutoName`, Randlen 7), and refuses
  ("plus 7 random chars is longer than maximum length 64") when that does not fit.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from gpuplane.components.config.base import FieldError
from gpuplane.components.facts import partition
from gpuplane.components.facts.name_limits import DNS1035_LABEL_MAX, LABEL_VALUE_MAX

if TYPE_CHECKING:
    from gpuplane.components.config.workloads import ServingArgs, TrainingArgs

# JobSet's webhook adds this to the longest pod name (5 random characters after a dash).
JOBSET_POD_SUFFIX: Final = "-abcde"
# Pulumi auto-naming appends "-" and 7 random characters to a resource's logical name.
AUTONAME_SUFFIX: Final = 8
# The run's spec hash (manifests.training.Training.spec_hash) and an import's digest: 8 hex characters.
HASH_CHARS: Final = 8
# IAM roles gpuplane derives from the cluster name alone (`<cluster><suffix>`); the flow-log role only
# when network.flowLogs is on.
CLUSTER_ROLE_SUFFIXES: Final = ("-cluster-role", "-cluster-vpc-cni-role", "-storage-efs-csi-role", "-autoscaler-role")
FLOW_LOG_ROLE_SUFFIX: Final = "-network-flow-logs-role"
# Alertmanager's SNS publisher (components.observability), when the stack collects metrics: shorter than the
# flow-log role's suffix, so turning metrics on never shortens the longest clusterName allowed.
ALERT_ROLE_SUFFIX: Final = "-metrics-alerts-role"
# The roles each `observability.metrics` backend adds (components.observability, components.storage's
# `ebs_csi_driver` under it, components.cloudwatch), and KEDA's when serving scales on AMP's metrics
# (components.platform `_keda`): all shorter than the flow-log role's suffix too.
METRICS_ROLE_SUFFIXES: Final[dict[str, tuple[str, ...]]] = {
    "prometheus": (ALERT_ROLE_SUFFIX, "-metrics-ebs-csi-role"),
    "managedPrometheus": (),
    "cloudwatch": ("-cloudwatch-agent-role",),
    "none": (),
}
KEDA_AMP_ROLE_SUFFIX: Final = "-keda-amp-role"


def metrics_role_suffixes(backend: str, *, keda_on_amp: bool = False) -> tuple[str, ...]:
    """The IAM role suffixes `observability.metrics: backend` adds; `keda_on_amp`: serving scales on AMP's metrics."""
    return METRICS_ROLE_SUFFIXES[backend] + ((KEDA_AMP_ROLE_SUFFIX,) if keda_on_amp else ())


@functools.cache
def iam_role_name_max() -> int:
    """IAM's limit on role names, as the IAM model botocore ships states it (64)."""
    iam = partition.botocore_session().get_service_model("iam")
    return int(iam.operation_model("CreateRole").input_shape.members["RoleName"].metadata["max"])


@dataclass(frozen=True)
class DerivedName:
    """One name the platform derives, the keys that make it, and the limit it must fit."""

    what: str  # "Service name", "IAM role name", ...
    name: str  # as it will be, hashes shown as '#' (same length)
    formula: str  # "<serving.name>-<variant.name>"
    keys: tuple[str, ...]  # the user's keys that make it; the first is where the problem is reported
    limit: int
    rule: str  # "a DNS-1035 label (Kubernetes Service names)"
    added: int = 0  # characters something else appends (a random suffix)
    added_by: str = ""

    @property
    def length(self) -> int:
        """Length as the API sees it, the appended characters included."""
        return len(self.name) + self.added

    def problem(self) -> FieldError | None:
        """The error naming the keys, the name, its length, the limit and what to cut; None when it fits."""
        over = self.length - self.limit
        if over <= 0:
            return None
        plus = f" plus {self.added_by} ({self.added})" if self.added else ""
        keys = " or ".join(self.keys)
        return FieldError(
            self.keys[0],
            f"makes the {self.what} '{self.name}' ({self.formula}{plus}): {self.length} characters; "
            f"{self.rule} allows at most {self.limit}: cut {over} character{'s' if over > 1 else ''} from {keys}",
        )


def problems(names: Sequence[DerivedName]) -> list[FieldError]:
    """The names that do not fit, as FieldErrors: for names made of the same keys, the longest one only."""
    worst: dict[tuple[str, ...], DerivedName] = {}
    for name in names:
        if name.length > name.limit and (name.keys not in worst or name.length > worst[name.keys].length):
            worst[name.keys] = name
    return [p for p in (n.problem() for n in worst.values()) if p is not None]


def serving_names(serving: ServingArgs, prefix: str = "") -> list[DerivedName]:
    """Kubernetes names a serving workload makes: a Service per variant, and the import Job."""
    found = [
        DerivedName(
            "Service name",
            f"{serving.name}-{variant.name}",
            "<serving.name>-<variant.name>",
            (f"{prefix}variants[{index}].name", f"{prefix}name"),
            DNS1035_LABEL_MAX,
            "a Service name is a DNS-1035 label, which",
        )
        for index, variant in enumerate(serving.variants)
    ]
    if serving.model.import_ is not None:
        found.append(
            DerivedName(
                "import Job name",
                f"{serving.name}-import-{'#' * HASH_CHARS}",
                "<serving.name>-import-<8-hex digest>",
                (f"{prefix}name",),
                LABEL_VALUE_MAX,
                "a Job's name is its pods' job-name label value, which",
            )
        )
    return found


def run_name(training: TrainingArgs, run_id: str | None = None) -> str:
    """`<name>-<run id>` or `<name>-########` (the 8-hex spec hash, shown by its length)."""
    return f"{training.name}-{run_id or training.run_id or '#' * HASH_CHARS}"


def training_names(
    training: TrainingArgs, prefix: str = "", *, run_id: str | None = None, run_id_key: str | None = None
) -> list[DerivedName]:
    """Kubernetes names a training workload's runs make (JobSet pods, the data import's pod) and TensorBoard's.

    `run_id` (and its key, e.g. `--run-id`) is the id `gpuplane train` was given; without it, the
    config's `runId` or the spec hash.
    """
    run = run_name(training, run_id)
    keys: tuple[str, ...] = (f"{prefix}name",)
    formula = "<training.name>-<8-hex spec hash>"
    if run_id is not None:
        keys, formula = (run_id_key or "runId", f"{prefix}name"), "<training.name>-<run id>"
    elif training.run_id is not None:
        keys, formula = (f"{prefix}name", f"{prefix}runId"), "<training.name>-<runId>"
    found = []
    for role, args in training.roles():
        last = args.replicas - 1
        replica_key = (f"{prefix}{role}.replicas",) if last >= 10 else ()
        found.append(
            DerivedName(
                f"pod name of role '{role}'",
                f"{run}-{role}-0-{last}",
                f"{formula.removesuffix('>')}>-{role}-0-<replicas-1>",
                (*keys, *replica_key),
                DNS1035_LABEL_MAX,
                "JobSet's webhook refuses the run unless it is a DNS-1035 label, which",
                added=len(JOBSET_POD_SUFFIX),
                added_by="the pod's random suffix '-abcde'",
            )
        )
    if training.data_import is not None:
        found.append(
            DerivedName(
                "data import pod's hostname",
                f"{run}-data-import-0-0",
                f"{formula}-data-import-0-0",
                (*keys, f"{prefix}dataImport"),
                DNS1035_LABEL_MAX,
                "a hostname is a DNS label, which",
            )
        )
    if training.tensorboard is not None:
        found.append(
            DerivedName(
                "TensorBoard Service name",
                f"{training.name}-tensorboard",
                "<training.name>-tensorboard",
                (f"{prefix}name",),
                DNS1035_LABEL_MAX,
                "a Service name is a DNS-1035 label, which",
            )
        )
    return found


def check_run(training: TrainingArgs, run_id: str, prefix: str = "", run_id_key: str = "--run-id") -> None:
    """`gpuplane train --run-id`: the run's names fit with this id; ValueError naming every one that does not."""
    found = problems(training_names(training, prefix, run_id=run_id, run_id_key=run_id_key))
    if found:
        raise ValueError("; ".join(f"{p.field}: {p.message}" for p in found))


def iam_role_names(
    cluster_name: str,
    cluster_key: str,
    *,
    node_groups: Sequence[str] = (),
    flow_logs: bool = False,
    import_roles: Sequence[tuple[str, str, str]] = (),
    metrics_roles: Sequence[str] = (),
) -> list[DerivedName]:
    """IAM roles the platform makes, named by Pulumi from their logical names (plus its 8-character suffix).

    `import_roles` are (section, workload name, its key) of the workloads with an `s3://` import: each
    gets `<cluster>-<section>-<name>-import-role` (components.pod_identity under TfServing/TfTraining).
    `metrics_roles`: the suffixes of the metrics backend's roles (`metrics_role_suffixes`).
    """
    limit = iam_role_name_max()
    rule = "IAM"
    suffix = "Pulumi's auto-name suffix"
    suffixes = [
        *CLUSTER_ROLE_SUFFIXES,
        *([FLOW_LOG_ROLE_SUFFIX] if flow_logs else []),
        *metrics_roles,
    ]
    found = [
        DerivedName("IAM role name", f"{cluster_name}{s}", f"<clusterName>{s}", (cluster_key,), limit, rule,
                    AUTONAME_SUFFIX, suffix)
        for s in suffixes
    ]  # fmt: skip
    found += [
        DerivedName("IAM role name", f"{cluster_name}-{group}-role", "<clusterName>-<nodeGroups[].name>-role",
                    (cluster_key, key), limit, rule, AUTONAME_SUFFIX, suffix)
        for group, key in ((g, f"nodeGroups[{i}].name") for i, g in enumerate(node_groups))
    ]  # fmt: skip
    found += [
        DerivedName("IAM role name", f"{cluster_name}-{section}-{name}-import-role",
                    f"<clusterName>-{section}-<{section}[].name>-import-role", (key, cluster_key), limit, rule,
                    AUTONAME_SUFFIX, suffix)
        for section, name, key in import_roles
    ]  # fmt: skip
    return found
