"""Typed args of the TensorFlow workloads (serving and training): also the stack's `serving`/`training` keys.

Why the same types as the stack config: a bad model path or a missing limit gets the same error from a
stack file as from a program that builds `ServingArgs` by hand. Checks that need the rest of the platform
(volumes, node groups, the workload uid) live in `components.plan.placement`, run by
`components.plan.cross_checks` (the config loader, `Platform`) and by the components' constructors alike.
"""

from __future__ import annotations

import posixpath
import re
from typing import Annotated, Final, Literal

from pydantic import Field, field_validator, model_validator

from gpuplane.components.config.base import FieldError, _Args
from gpuplane.components.facts import iam
from gpuplane.components.facts.name_limits import DNS1035_LABEL_RE
from gpuplane.manifests import lifecycle, model_import, scheduling, training, versions

_MODEL_NAME_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_SHA256_RE: Final = re.compile(r"^[0-9a-f]{64}$")
# A pinned image: repository, then a tag that is not `latest`, or a digest.
_IMAGE_RE: Final = re.compile(
    r"^[a-z0-9][a-z0-9._/:-]*?(:(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})|@sha256:[0-9a-f]{64})$"
)
SOURCE_SCHEMES: Final = ("https://", "s3://")
# `import.maxUnpackedSize` bounds: below 1 MiB no model fits; past 1 TiB no node's disk stages it.
MIN_UNPACKED_BYTES: Final = 1 << 20
MAX_UNPACKED_BYTES: Final = 1 << 40


def check_named_groups(value: list[str] | None) -> list[str] | None:
    """`nodeGroups` of a variant or role: None (every group that fits) or at least one name, never `[]`."""
    if value is not None and not value:
        raise ValueError("is empty; name at least one node group, or remove the key to use every group that fits")
    return value


def check_workload_name(value: str) -> str:
    """A workload or variant name: a DNS-1035 label (on its own a Service name and a label value).

    How long it may be depends on the names it goes into with other keys (`components.names`), so only
    the bound that is true on its own is checked here.
    """
    if not DNS1035_LABEL_RE.fullmatch(value):
        raise ValueError(
            f"'{value}' must be a DNS-1035 label: 1-63 lowercase letters, digits and '-', starting with a letter "
            "and ending with a letter or digit (it prefixes Service, Job and pod names; docs/workloads.md, 'Names')"
        )
    return value


def check_source(value: str) -> str:
    """An import source: `https://...` (tar.gz, tgz or zip) or `s3://bucket/key-or-prefix`; nothing else."""
    if not value.startswith(SOURCE_SCHEMES):
        raise ValueError(
            f"'{value}' must start with https:// (a .tar.gz, .tgz or .zip archive) or s3:// (bucket/key or prefix); "
            "plain http:// is refused: a model is code the server runs"
        )
    if value.startswith("s3://"):
        bucket, _, key = value[len("s3://") :].partition("/")
        problems = s3_bucket_problems(bucket) + s3_key_problems(key)
        if problems:
            shown = value if len(value) <= 120 else f"{value[:60]}...{value[-20:]}"
            raise ValueError(f"'{shown}' breaks S3's naming rules: {'; '.join(problems)}")
        check_s3_source_is_plain(bucket, key)
    elif not value.lower().split("?", 1)[0].endswith((".tar.gz", ".tgz", ".zip")):
        raise ValueError(f"'{value}': an https source must be a .tar.gz, .tgz or .zip archive")
    return value


def check_s3_source_is_plain(bucket: str, key: str) -> None:
    """Refuse a key with `*`, `?` or `${`: the import's IAM policy would read them as wildcards or a variable.

    The read policy names the source in its object ARN and its `s3:prefix` condition, where IAM has no escape
    for them: `s3://models/*` would grant every object of the bucket and the listing of every prefix, and
    `${aws:username}` would be replaced per caller. The import copies one object or one prefix anyway, so the
    message names the prefix to write instead (the source up to the last '/' before the first such character).
    """
    found = iam.special_in(key)
    if not found:
        return
    first = min(key.index(c) for c in found)
    prefix = key[:first].rpartition("/")[0]
    instead = f"s3://{bucket}/{prefix}/" if prefix else f"s3://{bucket}/"
    raise ValueError(
        f"'s3://{bucket}/{key}' holds {' and '.join(repr(c) for c in found)}, which IAM reads as a wildcard or a "
        f"policy variable in the import's read policy (it would grant more than the source); name one object or "
        f"a prefix ending in '/' instead, e.g. '{instead}' (every object under it is imported)"
    )


# S3 user guide, "General purpose bucket naming rules" (docs.aws.amazon.com/AmazonS3/latest/userguide/
# bucketnamingrules.html, read 2026-11): prefixes and suffixes reserved for S3's own names.
S3_RESERVED_PREFIXES: Final = ("xn--", "sthree-", "amzn-s3-demo-")
S3_RESERVED_SUFFIXES: Final = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
# S3 user guide, "Naming Amazon S3 objects": a key is UTF-8, at most 1,024 bytes.
S3_KEY_MAX_BYTES: Final = 1024


def s3_bucket_problems(bucket: str) -> list[str]:
    """What a general purpose bucket name breaks of S3's naming rules (every rule, not the first)."""
    problems = []
    if not 3 <= len(bucket) <= 63:
        problems.append(f"bucket '{bucket}' has {len(bucket)} characters; S3 allows 3 to 63")
    if not re.fullmatch(r"[a-z0-9.-]*", bucket):
        problems.append(f"bucket '{bucket}' may hold only lowercase letters, digits, '.' and '-'")
    if not re.fullmatch(r"[a-z0-9](.*[a-z0-9])?", bucket, flags=re.DOTALL):
        problems.append(f"bucket '{bucket}' must begin and end with a lowercase letter or digit")
    if ".." in bucket:
        problems.append(f"bucket '{bucket}' has two adjacent periods")
    if re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", bucket):
        problems.append(f"bucket '{bucket}' is formatted as an IP address")
    problems += [
        f"bucket '{bucket}' starts with '{p}', reserved by S3" for p in S3_RESERVED_PREFIXES if bucket.startswith(p)
    ]
    problems += [
        f"bucket '{bucket}' ends with '{s}', reserved by S3" for s in S3_RESERVED_SUFFIXES if bucket.endswith(s)
    ]
    return problems


def s3_key_problems(key: str) -> list[str]:
    """What an object key or prefix breaks: at most 1,024 bytes of UTF-8, no control characters."""
    problems = []
    size = len(key.encode("utf-8", "surrogatepass"))
    if size > S3_KEY_MAX_BYTES:
        problems.append(f"the key is {size} bytes of UTF-8; S3 allows at most {S3_KEY_MAX_BYTES}")
    controls = sorted({f"{ord(c):#04x}" for c in key if ord(c) < 0x20 or ord(c) == 0x7F})
    if controls:
        # The S3 user guide lists them among characters that need special handling (not XML-safe).
        problems.append(f"the key holds control characters {', '.join(controls)}; write it without them")
    return problems


def check_run_id(value: str) -> str:
    """A run id: the suffix of the run's name and of every pod name in it (a DNS label's characters).

    Its length is checked with the workload's name, in the pod names it makes (`components.names`).
    """
    if not re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", value):
        raise ValueError(
            f"run id '{value}' must be 1-63 lowercase letters, digits and '-', starting and ending with a letter "
            "or digit"
        )
    return value


def compute_capability(value: str) -> int:
    """`8.0` -> 80 (major*10+minor, the form node labels and affinity compare); ValueError otherwise."""
    major, dot, minor = value.partition(".")
    if not (dot and major.isdigit() and minor.isdigit() and len(minor) == 1 and 1 <= int(major) <= 20):
        raise ValueError(f"'{value}' is not a CUDA compute capability like 7.5 or 8.0 (major.minor)")
    return int(major) * 10 + int(minor)


def check_compute_capability(value: str | None) -> str | None:
    """A declared compute capability, kept as written once it parses."""
    if value is not None:
        compute_capability(value)
    return value


def check_image(value: str) -> str:
    """An image pinned by tag (not `latest`) or digest: the same bytes on every node, every day."""
    match = _IMAGE_RE.fullmatch(value)
    if not match or match.group("tag") == "latest":
        raise ValueError(f"image '{value}' is not pinned; give a version tag (not 'latest') or an @sha256: digest")
    return value


def check_tensorflow_version(value: str | None) -> str | None:
    """A declared TensorFlow version (`2.20.0` or `2.20`), kept as written once it parses."""
    if value is not None:
        lifecycle.tf_minor(value)
    return value


def check_declared_version(image: str | None, tensorflow_version: str | None) -> None:
    """`tensorflowVersion` describes a named `image`; without one it would describe nothing."""
    if tensorflow_version is not None and image is None:
        raise FieldError(
            "tensorflowVersion",
            f"'{tensorflow_version}' describes an image you name; set `image` too, or leave it out "
            "(the pinned images' versions are known)",
        )


def check_relative_path(value: str) -> str:
    """A path inside a volume: relative, normalized, never climbing out with `..`."""
    norm = posixpath.normpath(value)
    if value.startswith("/") or norm == ".." or norm.startswith("../") or norm == ".":
        raise ValueError(f"path '{value}' must be a relative path inside its volume (no leading '/', no '..')")
    return norm


class ImportArgs(_Args):
    """Where to fetch a SavedModel (or a data set) from, once, into a named volume."""

    source: str = Field(
        description="`https://.../model.tar.gz|.tgz|.zip` or `s3://bucket/key.tar.gz` or `s3://bucket/prefix/` "
        "(a SavedModel directory). Required."
    )
    sha256: str | None = Field(
        default=None,
        description="SHA-256 of the archive, 64 lowercase hex characters; verified before unpacking. "
        "Default: not checked.",
    )
    timeout_minutes: int = Field(
        default=30,
        ge=1,
        le=720,
        description="How long `pulumi up` waits for the import Job (its deadline); the download must end within "
        "three quarters of it. Default 30.",
    )
    max_unpacked_size: str = Field(
        default=f"{model_import.DEFAULT_MAX_BYTES >> 30}Gi",
        description="Most bytes the archive may unpack to (or an s3 prefix may hold), e.g. `10Gi`, `500Mi`; the "
        "import stops at the first byte past it, and its staging volume is sized from it. Default `10Gi`.",
    )
    max_files: int = Field(
        default=model_import.DEFAULT_MAX_FILES,
        ge=1,
        le=1_000_000,
        description="Most files and directories the archive may hold. Default 100000.",
    )
    max_expansion_ratio: int = Field(
        default=model_import.DEFAULT_MAX_RATIO,
        ge=1,
        le=2000,
        description="Most times its own size the archive may unpack to (a SavedModel compresses a few times, a "
        "decompression bomb a thousand); the first 1 MiB is always allowed. Default 100.",
    )

    _source = field_validator("source")(classmethod(lambda cls, v: check_source(v)))

    @field_validator("sha256")
    @classmethod
    def _sha(cls, value: str | None) -> str | None:
        if value is not None and not _SHA256_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not a SHA-256: 64 lowercase hex characters (0-9, a-f)")
        return value

    @field_validator("max_unpacked_size")
    @classmethod
    def _size(cls, value: str) -> str:
        try:
            size = scheduling.memory_bytes(value)
        except ValueError:
            raise ValueError(f"'{value}' is not a size like 10Gi, 500Mi or 8G") from None
        if not MIN_UNPACKED_BYTES <= size <= MAX_UNPACKED_BYTES:
            raise ValueError(f"'{value}' must be between 1Mi and 1Ti")
        return value

    @property
    def max_unpacked_bytes(self) -> int:
        """`max_unpacked_size` in bytes."""
        return scheduling.memory_bytes(self.max_unpacked_size)

    @model_validator(mode="after")
    def _sha_needs_archive(self) -> ImportArgs:
        if self.sha256 and self.source.startswith("s3://") and self.source.endswith("/"):
            raise FieldError("sha256", "checks one archive; an s3:// prefix (ending in '/') is a directory")
        return self


class ModelArgs(_Args):
    """A SavedModel on a named volume, in TF Serving's `<path>/<version>/saved_model.pb` layout."""

    name: str = Field(description="Name the model is served under (REST `/v1/models/<name>`). Required.")
    volume: str = Field(default="models", description="Named volume (storage.volumes) holding it. Default `models`.")
    path: str | None = Field(default=None, description="Directory inside the volume. Default: the model name.")
    version: int = Field(default=1, ge=1, description="Version directory the import writes. Default 1.")
    import_: ImportArgs | None = Field(
        default=None, alias="import", description="Fetch the model before serving starts. Default: none."
    )
    from_training: str | None = Field(
        default=None,
        description="The training workload (`training[].name`) whose export this model is. The render then checks "
        "that the model's volume and path are where that training writes it (`training[].export`) and that every "
        "variant's TensorFlow loads what the training's image writes. Default: none (a model from elsewhere, "
        "e.g. TF Hub: nothing links it to the stack's training, so nothing is compared).",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _MODEL_NAME_RE.fullmatch(value):
            raise ValueError(f"'{value}' must be 1-63 chars of letters, digits, '_', '.', '-'")
        return value

    _path = field_validator("path")(classmethod(lambda cls, v: None if v is None else check_relative_path(v)))

    @model_validator(mode="after")
    def _one_source(self) -> ModelArgs:
        if self.from_training is not None and self.import_ is not None:
            raise FieldError(
                "fromTraining",
                f"'{self.from_training}' and `import` both say where the model comes from; keep one "
                "(a training export, or an import)",
            )
        return self

    @property
    def resolved_path(self) -> str:
        """The model's directory inside its volume."""
        return self.path or self.name


class ResourcesArgs(_Args):
    """CPU and memory a container asks for (`requests`) and may use (`limits`), plus GPU units."""

    requests: dict[Literal["cpu", "memory"], str] = Field(
        default_factory=dict,
        description="Scheduling requests, e.g. `{cpu: 500m, memory: 1Gi}`. Default: equal to the limits.",
    )
    limits: dict[Literal["cpu", "memory"], str] = Field(
        description="Hard limits; both `cpu` and `memory` are required (the runtime helper sizes TF's threads "
        "and memory from them). Required."
    )
    gpus: int = Field(
        default=0, ge=0, le=64, description="Units of the GPU group's GPU resource (whole or shared). Default 0."
    )

    @model_validator(mode="after")
    def _consistent(self) -> ResourcesArgs:
        for key in ("cpu", "memory"):
            if key not in self.limits:
                raise FieldError(f"limits.{key}", "is required: TF sizes its threads and memory from the limits")
        parse = {"cpu": scheduling.cpu_millicores, "memory": scheduling.memory_bytes}
        for where in ("limits", "requests"):
            for key, value in getattr(self, where).items():
                try:
                    parse[key](value)
                except ValueError as exc:
                    raise FieldError(f"{where}.{key}", str(exc)) from exc
        for key, value in self.requests.items():
            if parse[key](value) > parse[key](self.limits[key]):
                raise FieldError(f"limits.{key}", f"{self.limits[key]} is below requests.{key} {value}")
        return self

    @property
    def cpu_request_millis(self) -> int:
        """The CPU the scheduler reserves (requests default to limits, as Kubernetes does)."""
        return scheduling.cpu_millicores(self.requests.get("cpu", self.limits["cpu"]))

    @property
    def memory_request_bytes(self) -> int:
        """The memory the scheduler reserves."""
        return scheduling.memory_bytes(self.requests.get("memory", self.limits["memory"]))

    def kubernetes(self, gpu_resource: str | None = None) -> dict[str, dict[str, str]]:
        """The container's `resources` (GPUs as limits, which Kubernetes copies to requests)."""
        requests: dict[str, str] = {
            "cpu": self.requests.get("cpu", self.limits["cpu"]),
            "memory": self.requests.get("memory", self.limits["memory"]),
        }
        limits: dict[str, str] = {str(k): v for k, v in self.limits.items()}
        if self.gpus and gpu_resource:
            limits[gpu_resource] = str(self.gpus)
        return {"requests": requests, "limits": limits}


ScaleOn = Literal["cpu", "requestsPerSecond", "gpuUtilization", "latencyP90Ms"]


class AutoscalingArgs(_Args):
    """Autoscaling of a serving variant: on CPU (an HPA), or on what loads a GPU server (KEDA on Prometheus).

    A GPU-bound TF Serving process never reaches a high CPU utilization, so a GPU variant scaled on CPU never
    scales. `requestsPerSecond` (per replica), `gpuUtilization` (average percent of the variant's GPUs) and
    `latencyP90Ms` (the variant's p90) are read by KEDA from the stack's Prometheus (`observability.metrics:
    prometheus`) or its AMP workspace (`managedPrometheus`, SigV4 through the operator's Pod Identity). At least one
    replica always: a server at zero emits no metric to wake it.
    """

    min_replicas: int = Field(default=1, ge=1, le=100, description="Fewest replicas. Default 1.")
    max_replicas: int = Field(ge=1, le=100, description="Most replicas. Required.")
    metric: ScaleOn = Field(
        default="cpu",
        description="What to scale on: `cpu` (HPA on CPU utilization of requests), `requestsPerSecond`, "
        "`gpuUtilization` or `latencyP90Ms` (KEDA on Prometheus). Default `cpu`.",
    )
    target_cpu_utilization: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="`metric: cpu`: average CPU, in percent of requests, to hold. Default 70.",
    )
    target: int | None = Field(
        default=None,
        ge=1,
        le=1000000,
        description="The other metrics: requests per second per replica, average GPU percent, or p90 milliseconds "
        "to hold. Required with them.",
    )

    @model_validator(mode="after")
    def _range(self) -> AutoscalingArgs:
        if self.min_replicas > self.max_replicas:
            raise FieldError("minReplicas", f"{self.min_replicas} is greater than maxReplicas {self.max_replicas}")
        if self.metric == "cpu":
            if self.target is not None:
                raise FieldError("target", "is for the Prometheus metrics; with metric cpu set targetCpuUtilization")
        else:
            if self.target_cpu_utilization is not None:
                raise FieldError("targetCpuUtilization", f"is for metric cpu; with metric {self.metric} set target")
            if self.target is None:
                raise FieldError("target", f"is required with metric {self.metric} (what one replica should hold)")
            if self.metric == "gpuUtilization" and self.target > 100:
                raise FieldError("target", f"{self.target} is a GPU utilization above 100 percent")
        return self

    @property
    def resolved_target(self) -> int:
        """The value the scaler holds: CPU percent (default 70) or the metric's target."""
        if self.metric == "cpu":
            return self.target_cpu_utilization or 70
        assert self.target is not None  # checked above
        return self.target


class ServingVariantArgs(_Args):
    """One way to serve the model (e.g. `cpu`, `gpu`): its own Deployment and Service."""

    name: str = Field(description="Variant name (DNS label), suffix of its Deployment and Service. Required.")
    replicas: int = Field(default=1, ge=0, le=100, description="Replicas when not autoscaled. Default 1.")
    resources: ResourcesArgs = Field(description="Requests, limits and GPU units. Required.")
    autoscaling: AutoscalingArgs | None = Field(default=None, description="HPA. Default: none (fixed replicas).")
    node_groups: list[str] | None = Field(
        default=None, description="Node groups it may run on. Default: every group of its kind that fits it."
    )
    image: str | None = Field(
        default=None,
        description=f"Serving image (pinned tag or digest). Default `{versions.TF_SERVING_IMAGE}` "
        f"(`{versions.TF_SERVING_GPU_IMAGE}` with GPUs).",
    )
    tensorflow_version: str | None = Field(
        default=None,
        description="The TensorFlow version inside `image` (e.g. `2.20.0`), so the render can check that it loads "
        "what the stack's training exports. Default: the pinned image's; unknown for an image you name.",
    )
    min_compute_capability: str | None = Field(
        default=None,
        description="Least CUDA compute capability the image needs on GPU nodes (e.g. `8.0`); only groups whose "
        "GPU has it are used. Default: what the TensorFlow GPU builds need (6.0).",
    )
    gpu_check: bool = Field(
        default=True,
        description="With GPUs: refuse to start (exit 3, one message naming the cause and the image) when the "
        "container cannot use its GPU (no device, no driver library, driver too old). `false` runs on regardless, "
        "e.g. CPU code on a GPU node. Default true.",
    )

    _name = field_validator("name")(classmethod(lambda cls, v: check_workload_name(v)))
    _image = field_validator("image")(classmethod(lambda cls, v: None if v is None else check_image(v)))
    _tf = field_validator("tensorflow_version")(classmethod(lambda cls, v: check_tensorflow_version(v)))
    _cc = field_validator("min_compute_capability")(classmethod(lambda cls, v: check_compute_capability(v)))
    _groups = field_validator("node_groups")(classmethod(lambda cls, v: check_named_groups(v)))

    @model_validator(mode="after")
    def _hpa_needs_requests(self) -> ServingVariantArgs:
        check_declared_version(self.image, self.tensorflow_version)
        scaling = self.autoscaling
        if scaling is not None and scaling.metric == "gpuUtilization" and not self.resources.gpus:
            raise FieldError("autoscaling.metric", "gpuUtilization needs a variant with GPUs (resources.gpus)")
        if scaling is not None and scaling.metric == "cpu" and "cpu" not in self.resources.requests:
            raise FieldError(
                "autoscaling", "scales on CPU utilization, a share of resources.requests.cpu: set requests.cpu"
            )
        return self


class BatchingArgs(_Args):
    """Server-side batching (`--enable_batching` with a batching parameters file)."""

    max_batch_size: int = Field(default=32, ge=1, le=4096, description="Largest batch. Default 32.")
    batch_timeout_micros: int = Field(
        default=1000, ge=0, description="How long to wait to fill a batch. Default 1000 (1 ms)."
    )
    max_enqueued_batches: int = Field(default=100, ge=1, description="Queue length before refusing. Default 100.")
    num_batch_threads: int | None = Field(
        default=None, ge=1, description="Batch threads. Default: the container's CPU limit (not the node's cores)."
    )


class ServingArgs(_Args):
    """A model served by TF Serving in one or more variants behind one shared Service."""

    name: str = Field(description="Workload name (DNS label): the shared Service's name. Required.")
    model: ModelArgs = Field(description="The model to serve. Required.")
    variants: Annotated[list[ServingVariantArgs], Field(min_length=1)] = Field(
        description="At least one variant. Required."
    )
    batching: BatchingArgs | None = Field(default=None, description="Server-side batching. Default: off.")
    file_system_poll_wait_seconds: int = Field(
        default=60,
        ge=1,
        le=86400,
        description="How often TF Serving looks for new model versions; every look lists the model directory "
        "on EFS. Default 60 (TF Serving's own default is 1).",
    )

    _name = field_validator("name")(classmethod(lambda cls, v: check_workload_name(v)))

    @model_validator(mode="after")
    def _unique_variants(self) -> ServingArgs:
        names = [v.name for v in self.variants]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise FieldError("variants", f"variant name(s) {dupes} used more than once; names must be unique")
        return self


class RoleArgs(_Args):
    """One role of a training run (chief, worker or ps): how many tasks and how big each is."""

    replicas: int = Field(default=1, ge=1, le=256, description="Tasks of this role. Default 1.")
    resources: ResourcesArgs = Field(description="Requests, limits and GPU units of each task. Required.")
    node_groups: list[str] | None = Field(
        default=None,
        description="Node groups it may run on. Default: every group of its kind that fits it. When a "
        "parameterServer run's chief and workers both have GPUs and more than one GPU group fits them, both name "
        'the same single group (Kueue picks a group per role; docs/reserved-gpus.md, "One group per run").',
    )

    _groups = field_validator("node_groups")(classmethod(lambda cls, v: check_named_groups(v)))


class VolumeMountArgs(_Args):
    """A named volume mounted into every training task."""

    volume: str = Field(description="Named volume (storage.volumes). Required.")
    mount_path: str = Field(description="Absolute path in the container, e.g. `/data`. Required.")

    @field_validator("mount_path")
    @classmethod
    def _abs(cls, value: str) -> str:
        if not value.startswith("/") or posixpath.normpath(value) != value or value in ("/", "/tmp"):
            raise ValueError(f"'{value}' must be a normalized absolute path other than / and /tmp")
        return value


class DataImportArgs(ImportArgs):
    """A one-shot import that fills a directory of a named volume before training starts."""

    volume: str = Field(default="datasets", description="Named volume to fill. Default `datasets`.")
    path: str = Field(description="Directory inside the volume. Required.")

    _rel = field_validator("path")(classmethod(lambda cls, v: check_relative_path(v)))


class ExportArgs(_Args):
    """Where a training program writes the SavedModel it exports (so a serving model can load it)."""

    volume: str = Field(default="models", description="Named volume, mounted in the training. Default `models`.")
    path: str = Field(
        description="Directory inside the volume the program writes `<version>/saved_model.pb` under: the "
        "serving model's `path`. Required."
    )

    _rel = field_validator("path")(classmethod(lambda cls, v: check_relative_path(v)))


class TensorboardArgs(_Args):
    """TensorBoard on the logs volume, reached with `kubectl port-forward` (or an Ingress)."""

    volume: str = Field(default="logs", description="Named volume holding the event files. Default `logs`.")
    path: str | None = Field(default=None, description="Directory inside the volume. Default: the workload name.")

    _rel = field_validator("path")(classmethod(lambda cls, v: None if v is None else check_relative_path(v)))


class TrainingArgs(_Args):
    """A distributed TensorFlow training workload, submitted as runs by `gpuplane train`."""

    name: str = Field(description="Workload name (DNS label), prefix of every run's name. Required.")
    strategy: Literal["parameterServer", "multiWorkerMirrored"] = Field(
        description="`parameterServer` (chief + workers + ps; the run succeeds when the chief does) or "
        "`multiWorkerMirrored` (workers only, all started together). Required."
    )
    image: str | None = Field(
        default=None,
        description=f"Training image, pinned; every role of a run uses it. Default `{versions.TENSORFLOW_IMAGE}`, "
        f"or `{versions.TENSORFLOW_GPU_IMAGE}` when a role has GPUs (docs/workloads.md, Images).",
    )
    tensorflow_version: str | None = Field(
        default=None,
        description="The TensorFlow version inside `image` (e.g. `2.20.0`), so the render can check that the "
        "stack's serving loads what this training exports. Default: the pinned image's; unknown for an image you name.",
    )
    min_compute_capability: str | None = Field(
        default=None,
        description="Least CUDA compute capability the image needs on GPU nodes (e.g. `8.0` for bfloat16); only "
        "groups whose GPU has it are used. Default: what the TensorFlow GPU builds need (6.0).",
    )
    gpu_check: bool = Field(
        default=True,
        description="Roles with GPUs check before the program starts that TensorFlow sees a GPU, and otherwise "
        "exit 3 with one message naming the cause and the image. `false` skips it (CPU code on a GPU node). "
        "Default true.",
    )
    command: Annotated[list[str], Field(min_length=1)] = Field(description="The program and its arguments. Required.")
    chief: RoleArgs | None = Field(default=None, description="parameterServer: the chief (1 replica). Default none.")
    worker: RoleArgs = Field(description="The workers (at least 1). Required.")
    ps: RoleArgs | None = Field(default=None, description="parameterServer: the parameter servers. Default none.")
    volumes: list[VolumeMountArgs] = Field(default_factory=list, description="Named volumes to mount. Default none.")
    data_import: DataImportArgs | None = Field(
        default=None, description="Fill a datasets directory before the run starts. Default none."
    )
    export: ExportArgs | None = Field(
        default=None,
        description="Where the program writes the model it exports (it says so in `command`; this names it for the "
        "render): a serving model with `fromTraining` naming this workload loads it from there. Default none.",
    )
    tensorboard: TensorboardArgs | None = Field(default=None, description="A TensorBoard Deployment. Default none.")
    ttl_seconds_after_finished: int = Field(
        default=86400, ge=0, description="Finished runs are deleted after this many seconds. Default 86400 (1 day)."
    )
    backoff_limit: int = Field(
        default=3,
        ge=0,
        le=100,
        description="Pod failures per role before the run fails (preemptions excluded). Default 3.",
    )
    active_deadline_seconds: int = Field(
        default=training.DEFAULT_ACTIVE_DEADLINE_SECONDS,
        ge=0,
        description="Deadline of each role's Job, in seconds from its start: time Pending for a node counts, time "
        "suspended (queued) does not, and every resume starts it again. The run then fails (DeadlineExceeded) "
        "instead of holding its nodes. 0: no deadline. Default 86400 (1 day).",
    )
    run_id: str | None = Field(
        default=None, description="Run name suffix. Default: a hash of the spec (a changed spec is a new run)."
    )

    _name = field_validator("name")(classmethod(lambda cls, v: check_workload_name(v)))
    _image = field_validator("image")(classmethod(lambda cls, v: None if v is None else check_image(v)))
    _tf = field_validator("tensorflow_version")(classmethod(lambda cls, v: check_tensorflow_version(v)))
    _cc = field_validator("min_compute_capability")(classmethod(lambda cls, v: check_compute_capability(v)))

    _run_id = field_validator("run_id")(classmethod(lambda cls, v: None if v is None else check_run_id(v)))

    @field_validator("command")
    @classmethod
    def _command(cls, value: list[str]) -> list[str]:
        """Each word is one argument that the runtime helper execs.

        Why here: an empty word passed the stack and stopped the render deep in the manifests, and a NUL cannot be
        passed to a program at all (execve ends the string there).
        """
        for index, word in enumerate(value):
            if not word:
                raise ValueError(
                    f"item {index} is empty; each item is one word of the command line, the program first "
                    "(e.g. [python, /data/train.py])"
                )
            if "\x00" in word:
                raise ValueError(f"item {index} holds a NUL character, which no program argument can carry")
        return value

    @model_validator(mode="after")
    def _roles(self) -> TrainingArgs:
        check_declared_version(self.image, self.tensorflow_version)
        if self.strategy == "multiWorkerMirrored":
            for key in ("ps", "chief"):
                if getattr(self, key) is not None:
                    raise FieldError(
                        key,
                        "is a parameterServer role; multiWorkerMirrored runs workers only (worker 0 acts as chief)",
                    )
        else:
            if self.ps is None:
                raise FieldError("ps", "is required with strategy parameterServer (at least one parameter server)")
            if self.chief is None:
                raise FieldError("chief", "is required with strategy parameterServer (the run ends when it succeeds)")
            if self.chief.replicas != 1:
                raise FieldError("chief.replicas", f"{self.chief.replicas}: TensorFlow allows exactly one chief")
        mounts = [m.mount_path for m in self.volumes]
        if len(set(mounts)) != len(mounts):
            raise FieldError("volumes", f"mount paths {mounts} repeat; give each volume its own path")
        return self

    def roles(self) -> list[tuple[str, RoleArgs]]:
        """(role, args) in TF_CONFIG order: chief, worker, ps."""
        found = [("chief", self.chief), ("worker", self.worker), ("ps", self.ps)]
        return [(name, role) for name, role in found if role is not None]
