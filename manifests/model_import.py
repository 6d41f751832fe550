"""The one-shot import Job that fills a named volume from `https://` or `s3://`, and its script.

Why two containers: the s3 copy runs in the pinned `amazon/aws-cli` image (its `aws` is the only tool
we rely on there; credentials come from EKS Pod Identity), and the checksum, unpacking and atomic install
run in the pinned python slim image with the standard library (`gpuplane-import.py`, shipped next to the
runtime helper). Neither image is changed or extended at run time.

Why the name carries a hash: the Job's pod template is immutable, and a changed source or version must
import again. The hash of everything the template carries (source, sha256, destination, the caps and
the download deadline) gives a new Job when the result could differ and the same Job for the same
import; the Job has no TTL, so a refresh never sees it vanish and `pulumi up` never re-creates it. The
script itself is idempotent too (a present version is skipped, so a new Job for a cap change is a no-op).

Why the caps size the pod: the archive is untrusted, and the script refuses it past `max_bytes`
unpacked, `max_files` members or `max_ratio` times its own size while unpacking. The staging emptyDir
must hold the archive (at most `archive_cap`) and its unpacked copy, so its `sizeLimit` and the
containers' `ephemeral-storage` are computed from the same caps: the scheduler picks a node with that
much disk, and no import can take more of it than that.
"""

from __future__ import annotations

import hashlib
import math
import shlex
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from gpuplane.manifests import versions, workload_security

SCRIPT_NAME: Final = "gpuplane-import.py"
DATA_ROOT: Final = "/data"
STAGING: Final = "/tmp/import"
MIB: Final = 1 << 20
# The caps' defaults; the script falls back to the same numbers (tests/workloads hold them equal).
DEFAULT_MAX_BYTES: Final = 10 << 30
DEFAULT_MAX_FILES: Final = 100_000
DEFAULT_MAX_RATIO: Final = 100
# What the script's archive cap allows beyond the unpacked bytes: per-member headers, plus a little.
ENTRY_OVERHEAD: Final = 1024
ARCHIVE_SLACK: Final = MIB
# Staging beyond archive and tree (Python's own temporary files), and the container's logs.
SCRATCH_BYTES: Final = 256 * MIB
LOG_BYTES: Final = 256 * MIB


def import_script() -> str:
    """The import script's text, read from the installed package."""
    return resources.files("gpuplane.manifests").joinpath("runtime", SCRIPT_NAME).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Import:
    """One import into `<volume>/<path>/<version>` (model) or `<volume>/<path>` (data)."""

    workload: str
    namespace: str
    source: str
    volume: str
    path: str
    uid: int
    gid: int
    version: int | None = None
    sha256: str | None = None
    kind: str = "model"
    deadline_seconds: int = 1800
    max_bytes: int = DEFAULT_MAX_BYTES
    max_files: int = DEFAULT_MAX_FILES
    max_ratio: int = DEFAULT_MAX_RATIO

    @property
    def download_seconds(self) -> int:
        """The script's deadline for the whole download: three quarters of the Job's, the rest to unpack."""
        return self.deadline_seconds * 3 // 4

    @property
    def archive_cap(self) -> int:
        """The largest archive the script downloads (the same formula as its `archive_cap`)."""
        return self.max_bytes + self.max_files * ENTRY_OVERHEAD + ARCHIVE_SLACK

    @property
    def staging_bytes(self) -> int:
        """The staging emptyDir: the archive, its unpacked tree, scratch; in whole MiB."""
        return math.ceil((self.archive_cap + self.max_bytes + SCRATCH_BYTES) / MIB) * MIB

    @property
    def destination(self) -> str:
        """Absolute path inside the pod."""
        tail = f"/{self.version}" if self.version is not None else ""
        return f"{DATA_ROOT}/{self.path}{tail}"

    @property
    def digest(self) -> str:
        """8 hex characters of what decides the import's result."""
        caps = f"{self.max_bytes}/{self.max_files}/{self.max_ratio}/{self.download_seconds}"
        key = "\n".join([self.source, self.sha256 or "", self.volume, self.destination, self.kind, caps])
        return hashlib.sha256(key.encode()).hexdigest()[:8]

    @property
    def job_name(self) -> str:
        """`<workload>-import-<hash>`: a new Job exactly when the result would differ."""
        return f"{self.workload}-import-{self.digest}"

    @property
    def service_account(self) -> str:
        """The import's ServiceAccount (bound to an S3 read role by Pod Identity for s3 sources)."""
        return f"{self.workload}-import"

    @property
    def config_map_name(self) -> str:
        """Carries the script."""
        return f"{self.workload}-import-script"


def _labels(imp: Import) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "gpuplane-import",
        "app.kubernetes.io/instance": imp.workload,
        "app.kubernetes.io/managed-by": "gpuplane",
    }


def config_map(imp: Import) -> dict[str, Any]:
    """The script, mounted read-only into the python container."""
    meta = {"name": imp.config_map_name, "namespace": imp.namespace, "labels": _labels(imp)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {SCRIPT_NAME: import_script()}}


def service_account(imp: Import) -> dict[str, Any]:
    """The pods' identity; no API token is mounted (the pods never call the Kubernetes API)."""
    meta = {"name": imp.service_account, "namespace": imp.namespace, "labels": _labels(imp)}
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta, "automountServiceAccountToken": False}


def s3_copy_command(imp: Import, *, data_root: str = DATA_ROOT, staging: str = STAGING) -> list[str]:
    """The aws-cli step: skip when the import is complete, else copy the object or prefix to staging.

    `data_root` and `staging` are the pod's paths; tests run the same command on a local tree.
    """
    dest = data_root + imp.destination.removeprefix(DATA_ROOT)
    done = f"{dest}/saved_model.pb" if imp.kind == "model" else f"{dest}/.gpuplane-import-complete"
    recursive = "--recursive " if imp.source.endswith("/") else ""
    target = f"{staging}/s3/" if recursive else f"{staging}/s3/{imp.source.rstrip('/').rsplit('/', 1)[-1]}"
    script = (
        f"if [ -e {shlex.quote(done)} ]; then echo 'already imported'; exit 0; fi; "
        f"exec aws s3 cp {recursive}--only-show-errors {shlex.quote(imp.source)} {shlex.quote(target)}"
    )
    return ["/bin/sh", "-c", script]


def _env(imp: Import) -> list[dict[str, str]]:
    env = [
        {"name": "GPUPLANE_IMPORT_SOURCE", "value": imp.source},
        {"name": "GPUPLANE_IMPORT_DEST", "value": imp.destination},
        {"name": "GPUPLANE_IMPORT_STAGING", "value": STAGING},
        {"name": "GPUPLANE_IMPORT_KIND", "value": imp.kind},
        {"name": "GPUPLANE_IMPORT_MAX_BYTES", "value": str(imp.max_bytes)},
        {"name": "GPUPLANE_IMPORT_MAX_FILES", "value": str(imp.max_files)},
        {"name": "GPUPLANE_IMPORT_MAX_RATIO", "value": str(imp.max_ratio)},
        {"name": "GPUPLANE_IMPORT_DOWNLOAD_SECONDS", "value": str(imp.download_seconds)},
        {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
        {"name": "HOME", "value": "/tmp"},
    ]
    if imp.sha256:
        env.append({"name": "GPUPLANE_IMPORT_SHA256", "value": imp.sha256})
    return env


def job(imp: Import) -> dict[str, Any]:
    """The import Job: restricted pod, no retries on a preempted node, no TTL (see the module doc)."""
    disk = f"{(imp.staging_bytes + LOG_BYTES) // MIB}Mi"
    resources_ = {
        "requests": {"cpu": "250m", "memory": "512Mi", "ephemeral-storage": disk},
        "limits": {"cpu": "1", "memory": "2Gi", "ephemeral-storage": disk},
    }
    mounts = [
        {"name": "target", "mountPath": DATA_ROOT},
        workload_security.scratch_mount(),
    ]
    init: list[dict[str, Any]] = []
    if imp.source.startswith("s3://"):
        init.append(
            {
                "name": "s3-copy",
                "image": versions.AWS_CLI_IMAGE,
                "imagePullPolicy": "Always",
                "command": s3_copy_command(imp),
                "env": [{"name": "HOME", "value": "/tmp"}],
                "resources": resources_,
                "securityContext": workload_security.container_security_context(),
                "volumeMounts": mounts,
            }
        )
    container = {
        "name": "import",
        "image": versions.PYTHON_IMAGE,
        "imagePullPolicy": "Always",
        "command": ["python3", f"/opt/gpuplane-import/{SCRIPT_NAME}"],
        "env": _env(imp),
        "resources": resources_,
        "securityContext": workload_security.container_security_context(),
        "volumeMounts": [*mounts, {"name": "script", "mountPath": "/opt/gpuplane-import", "readOnly": True}],
    }
    pod = {
        "serviceAccountName": imp.service_account,
        "automountServiceAccountToken": False,
        "restartPolicy": "Never",
        "securityContext": workload_security.pod_security_context(imp.uid, imp.gid),
        "initContainers": init,
        "containers": [container],
        "volumes": [
            {"name": "target", "persistentVolumeClaim": {"claimName": imp.volume}},
            {"name": "script", "configMap": {"name": imp.config_map_name}},
            workload_security.scratch_volume(size_limit=f"{imp.staging_bytes // MIB}Mi"),
        ],
    }
    if not init:
        del pod["initContainers"]
    meta = {
        "name": imp.job_name,
        "namespace": imp.namespace,
        "labels": _labels(imp),
        "annotations": dict(workload_security.DIGEST_SKIP),
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "backoffLimit": 2,
            "activeDeadlineSeconds": imp.deadline_seconds,
            # A drained or preempted (spot) node is not the import's fault: do not count it.
            "podFailurePolicy": {
                "rules": [
                    {"action": "FailJob", "onExitCodes": {"containerName": "import", "operator": "In", "values": [2]}},
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                ]
            },
            "template": {"metadata": {"labels": _labels(imp)}, "spec": pod},
        },
    }


def objects(imp: Import) -> list[dict[str, Any]]:
    """ServiceAccount, script ConfigMap and Job, in apply order."""
    deny = workload_security.network_policy(f"{imp.workload}-import", imp.namespace, _labels(imp), [])
    return [service_account(imp), config_map(imp), deny, job(imp)]


def s3_bucket_and_prefix(source: str) -> tuple[str, str]:
    """(`bucket`, `key or prefix`) of an s3:// source, for the read-only IAM policy."""
    bucket, _, key = source[len("s3://") :].partition("/")
    return bucket, key
