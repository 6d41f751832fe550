"""The shared EFS storage section of the stack config (`storage`)."""

from __future__ import annotations

import re
from typing import Final, Literal

from pydantic import Field, field_validator, model_validator

from gpuplane.components.config.base import FieldError, _Args
from gpuplane.components.facts.name_limits import DNS1123_LABEL_RE

_FS_ID_RE: Final = re.compile(r"^fs-([0-9a-f]{8}|[0-9a-f]{17})$")
# EFS API model (botocore `efs`): Path and Permissions patterns of an access point's root directory.
_EFS_PATH_RE: Final = re.compile(r"^(\/|(\/(?!\.)+[^$#<>;`|&?{}^*/\n]+){1,4})$")
_EFS_PERMS_RE: Final = re.compile(r"^[0-7]{3,4}$")
_K8S_QUANTITY_RE: Final = re.compile(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")
# EFS access point Path: at most 100 characters and 4 components (botocore `efs` model). The CSI driver's
# dynamic provisioning makes `<basePath>/<namespace>/<claim>-<uuid>` with our StorageClass
# (subPathPattern `${.PVC.namespace}/${.PVC.name}`, ensureUniqueDirectory appends `-` and a 36-char UUID).
EFS_PATH_MAX_CHARS: Final = 100
EFS_BASE_PATH_MAX_COMPONENTS: Final = 2
EFS_UNIQUE_SUFFIX_CHARS: Final = 37


def dynamic_access_point_path_length(base_path: str, namespace: str, claim: str) -> int:
    """Length of the access point path the EFS CSI driver makes for a claim on the `efs-ap` StorageClass."""
    return len(f"{base_path.rstrip('/')}/{namespace}/{claim}") + EFS_UNIQUE_SUFFIX_CHARS


# EFS accepts uid/gid 0..4294967295 (PosixUser); 0 would make every workload root on the share, and
# 4294967295 is (uid_t)-1, "no user". Workloads run non-root, so both ends are refused.
POSIX_ID_MIN: Final = 1
POSIX_ID_MAX: Final = 4294967294


class VolumeArgs(_Args):
    """One named ReadWriteMany data volume on the shared EFS file system."""

    name: str = Field(description="Volume and claim name workloads bind by (DNS label). Required.")
    provisioning: Literal["static", "dynamic"] = Field(
        default="static",
        description="`static`: an access point at a fixed path owned by the stack (survives claim and cluster "
        "re-creation); `dynamic`: a claim on the `efs-ap` StorageClass (a new unique directory). Default `static`.",
    )
    path: str | None = Field(default=None, description="Directory on EFS for static volumes. Default `/<name>`.")
    size: str = Field(
        default="100Gi",
        description="Nominal capacity Kubernetes requires (EFS is elastic and does not enforce it). Default `100Gi`.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not DNS1123_LABEL_RE.fullmatch(value):
            raise ValueError(f"'{value}' must be a DNS label (lowercase letters, digits, '-', <= 63 chars)")
        return value

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None and (not _EFS_PATH_RE.fullmatch(value) or value == "/"):
            raise ValueError(f"'{value}' is not an EFS access point path: absolute, 1-4 components, not '/'")
        return value

    @field_validator("size")
    @classmethod
    def _size(cls, value: str) -> str:
        if not _K8S_QUANTITY_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not a Kubernetes quantity like 100Gi")
        if float(re.sub(r"[A-Za-z]+$", "", value)) == 0:
            raise ValueError(f"'{value}' is zero; a claim needs a positive size like 100Gi")
        return value

    @property
    def resolved_path(self) -> str:
        """Directory of a static volume."""
        return self.path or f"/{self.name}"


def _default_volumes() -> list[VolumeArgs]:
    return [VolumeArgs(name=n) for n in ("models", "datasets", "logs")]


class StorageArgs(_Args):
    """Shared EFS storage: the file system, its mount targets, the CSI driver and the named volumes."""

    enabled: bool = Field(default=True, description="Create the EFS file system and volumes. Default true.")
    performance_mode: Literal["generalPurpose", "maxIO"] = Field(
        default="generalPurpose", description="EFS performance mode (fixed at creation). Default `generalPurpose`."
    )
    throughput_mode: Literal["elastic", "bursting", "provisioned"] = Field(
        default="elastic", description="EFS throughput mode. Default `elastic` (pay per use, scales with load)."
    )
    provisioned_throughput_mibps: float | None = Field(
        default=None, ge=1, description="MiB/s when `throughputMode` is `provisioned` (then required). Default none."
    )
    uid: int = Field(
        default=10001,
        description=f"POSIX uid of the workloads (`runAsUser`), enforced by access points; {POSIX_ID_MIN}-"
        f"{POSIX_ID_MAX}; workloads need 10001 or more (Pod Security `restricted`, clear of image "
        "users). Default 10001.",
    )
    gid: int = Field(
        default=10001,
        description=f"POSIX gid of the workloads (`runAsGroup`); {POSIX_ID_MIN}-{POSIX_ID_MAX}. Default 10001.",
    )
    directory_perms: str = Field(default="750", description="Mode of directories access points create. Default `750`.")
    base_path: str = Field(
        default="/dynamic", description="Where dynamic claims get their directories. Default `/dynamic`."
    )
    volumes: list[VolumeArgs] = Field(
        default_factory=_default_volumes,
        description="Named ReadWriteMany volumes workloads bind by name. "
        "Default `models`, `datasets`, `logs` (static).",
    )
    csi_identity: Literal["podIdentity", "irsa"] = Field(
        default="podIdentity",
        description="How the EFS CSI controller gets its IAM role: EKS Pod Identity or IRSA. Default `podIdentity`.",
    )
    protect: bool = Field(
        default=False,
        description="Pulumi `protect` on the file system and what guards its data (backup policy, file-system "
        "policy): `pulumi destroy` refuses to delete them, `--exclude-protected` keeps only them. "
        "Default false (prod: true).",
    )
    retain_on_delete: bool = Field(
        default=False,
        description="Pulumi `retainOnDelete`: removing them from the stack leaves them in AWS. "
        "Default false (prod: true).",
    )
    backups: bool = Field(
        default=False,
        description="AWS Backup daily backups of the file system (EFS backup policy). Default false (prod: true).",
    )
    existing_file_system_id: str | None = Field(
        default=None,
        description="Take over a file system kept by an earlier stack's destroy (`fs-...`): it is imported into this "
        "stack (Pulumi `import`), so its settings must match this section. Default none (create one).",
    )
    customer_managed_key: bool = Field(
        default=False,
        description="Encrypt a NEW file system with a KMS key of the stack (protected and retained with the file "
        "system: losing the key loses the data) instead of the AWS-managed `aws/elasticfilesystem` key. A file "
        "system's key is fixed at creation: an existing one keeps its key (see README, 'Changing the EFS key'). "
        "Default false (prod: true).",
    )
    allow_data_loss_on_prod: bool = Field(
        default=False,
        description="The explicit override needed to switch `protect` or `retainOnDelete` off on a prod stack. "
        "Default false.",
    )

    @field_validator("uid", "gid")
    @classmethod
    def _posix_id(cls, value: int) -> int:
        if not POSIX_ID_MIN <= value <= POSIX_ID_MAX:
            raise ValueError(
                f"{value} is outside {POSIX_ID_MIN}-{POSIX_ID_MAX} (EFS allows 0-4294967295; 0 is root and "
                "4294967295 is 'no user')"
            )
        return value

    @field_validator("directory_perms")
    @classmethod
    def _perms(cls, value: str) -> str:
        if not _EFS_PERMS_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not an octal mode like 750 or 0750")
        return value

    @field_validator("base_path")
    @classmethod
    def _base(cls, value: str) -> str:
        if not _EFS_PATH_RE.fullmatch(value) or value == "/":
            raise ValueError(f"'{value}' is not an EFS path: absolute, 1-4 components, not '/'")
        depth = len(value.strip("/").split("/"))
        if depth > EFS_BASE_PATH_MAX_COMPONENTS:
            raise ValueError(
                f"'{value}' has {depth} components; at most {EFS_BASE_PATH_MAX_COMPONENTS}: the CSI driver appends "
                "<namespace>/<claim> and an access point path has at most 4 components (EFS API)"
            )
        return value

    @field_validator("existing_file_system_id")
    @classmethod
    def _fs_id(cls, value: str | None) -> str | None:
        if value is not None and not _FS_ID_RE.fullmatch(value):
            raise ValueError(f"'{value}' is not an EFS file system id (fs- and 8 or 17 hex digits)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> StorageArgs:
        if self.performance_mode == "maxIO" and self.throughput_mode == "elastic":
            raise FieldError(
                "performanceMode",
                "'maxIO' cannot be used with throughputMode 'elastic' (EFS CreateFileSystem refuses the pair); "
                "use generalPurpose, or throughputMode bursting/provisioned",
            )
        if self.throughput_mode == "provisioned" and self.provisioned_throughput_mibps is None:
            raise FieldError("provisionedThroughputMibps", "is required when throughputMode is 'provisioned'")
        if self.throughput_mode != "provisioned" and self.provisioned_throughput_mibps is not None:
            raise FieldError(
                "provisionedThroughputMibps", f"is set but throughputMode is '{self.throughput_mode}'; remove it"
            )
        names = [v.name for v in self.volumes]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise FieldError("volumes", f"volume name(s) {dupes} used more than once; names must be unique")
        paths = [v.resolved_path for v in self.volumes if v.provisioning == "static"]
        for index, path in enumerate(paths):
            clash = [p for p in paths[:index] if p == path or path.startswith(p + "/") or p.startswith(path + "/")]
            if clash:
                raise FieldError("volumes", f"static volume paths {clash[0]} and {path} overlap; give each its own")
            if path == self.base_path or path.startswith(self.base_path + "/"):
                raise FieldError("volumes", f"static path {path} is inside basePath {self.base_path} (dynamic claims)")
        return self

    @property
    def volume_names(self) -> list[str]:
        """Names workloads may bind."""
        return [v.name for v in self.volumes]
