"""The Pod Security `restricted` rules as a pure function: the violations of one pod spec.

Why our own checker: the API server applies these rules only on a real cluster. Render and CI run
without one, so every pod template gpuplane writes goes through this function, and a finding fails
the render and the tests. The rules are those of kubernetes.io/docs/concepts/security/pod-security-standards
(baseline plus restricted), for the pod, its containers, init containers and ephemeral containers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

ALLOWED_VOLUME_TYPES: Final = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
)
# Baseline: only these may be added (the default container runtime set); restricted allows NET_BIND_SERVICE only.
RESTRICTED_ADD_CAPABILITIES: Final = frozenset({"NET_BIND_SERVICE"})
SAFE_SYSCTLS: Final = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
_SECCOMP_OK: Final = ("RuntimeDefault", "Localhost")
_VOLUME_META: Final = frozenset({"name"})


def _containers(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(field) or []:
            yield f"{field}[{container.get('name')}]", container


def violations(spec: Mapping[str, Any]) -> list[str]:
    """Every `restricted` rule the pod spec breaks, as `where: what` lines; empty when admitted."""
    found: list[str] = []
    pod_ctx: Mapping[str, Any] = spec.get("securityContext") or {}
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            found.append(f"spec.{field}: host namespaces are forbidden")
    for volume in spec.get("volumes") or []:
        kinds = set(volume) - _VOLUME_META
        bad = sorted(kinds - ALLOWED_VOLUME_TYPES)
        if bad:
            found.append(f"spec.volumes[{volume.get('name')}]: volume type {bad} is not allowed")
    for sysctl in pod_ctx.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            found.append(f"spec.securityContext.sysctls: {sysctl.get('name')} is not a safe sysctl")
    for key in ("seLinuxOptions",):
        opts = pod_ctx.get(key) or {}
        if opts.get("user") or opts.get("role"):
            found.append(f"spec.securityContext.{key}: user/role may not be set")
    if (pod_ctx.get("appArmorProfile") or {}).get("type") == "Unconfined":
        found.append("spec.securityContext.appArmorProfile: Unconfined is forbidden")
    if pod_ctx.get("runAsUser") == 0:
        found.append("spec.securityContext.runAsUser: 0 (root) is forbidden")
    pod_seccomp = (pod_ctx.get("seccompProfile") or {}).get("type")
    if pod_seccomp is not None and pod_seccomp not in _SECCOMP_OK:
        found.append(f"spec.securityContext.seccompProfile.type: {pod_seccomp} is not RuntimeDefault or Localhost")
    for where, container in _containers(spec):
        ctx: Mapping[str, Any] = container.get("securityContext") or {}
        if ctx.get("privileged"):
            found.append(f"{where}: privileged is forbidden")
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                found.append(f"{where}: hostPort {port['hostPort']} is forbidden")
        if ctx.get("procMount") not in (None, "Default"):
            found.append(f"{where}: procMount {ctx['procMount']} is forbidden")
        if (ctx.get("appArmorProfile") or {}).get("type") == "Unconfined":
            found.append(f"{where}: appArmorProfile Unconfined is forbidden")
        if ctx.get("allowPrivilegeEscalation") is not False:
            found.append(f"{where}: allowPrivilegeEscalation must be false")
        if ctx.get("runAsNonRoot", pod_ctx.get("runAsNonRoot")) is not True:
            found.append(f"{where}: runAsNonRoot must be true (pod or container)")
        if ctx.get("runAsUser") == 0:
            found.append(f"{where}: runAsUser 0 (root) is forbidden")
        seccomp = (ctx.get("seccompProfile") or {}).get("type") or pod_seccomp
        if seccomp not in _SECCOMP_OK:
            found.append(f"{where}: seccompProfile.type must be RuntimeDefault or Localhost (got {seccomp})")
        caps = ctx.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            found.append(f"{where}: capabilities.drop must include ALL")
        added = sorted(set(caps.get("add") or []) - RESTRICTED_ADD_CAPABILITIES)
        if added:
            found.append(f"{where}: capabilities.add {added} is forbidden (only NET_BIND_SERVICE)")
    return found


def pod_spec_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec inside a workload object (Pod, Deployment, Job, JobSet's jobs, ...); None if it has none."""
    kind = obj.get("kind")
    spec: Mapping[str, Any] = obj.get("spec") or {}
    if kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    elif kind == "Pod":
        return spec
    elif kind not in {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}:
        return None
    pod: Mapping[str, Any] | None = (spec.get("template") or {}).get("spec")
    return pod


def object_violations(obj: Mapping[str, Any]) -> list[str]:
    """`violations` of every pod template in a Kubernetes object (JobSet: each replicated job)."""
    if obj.get("kind") == "JobSet":
        found = []
        for rjob in (obj.get("spec") or {}).get("replicatedJobs") or []:
            pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            found += [f"replicatedJobs[{rjob.get('name')}].{v}" for v in violations(pod)]
        return found
    pod = pod_spec_of(obj)
    return violations(pod) if pod is not None else []


def check_restricted(objects: list[dict[str, object]]) -> None:
    """Refuse to register a pod template that Pod Security `restricted` would reject (a bug of ours)."""
    for obj in objects:
        found = object_violations(obj)
        if found:
            meta = obj.get("metadata")
            name = meta.get("name") if isinstance(meta, dict) else "?"
            raise ValueError(f"{obj.get('kind')} {name} would be refused by Pod Security 'restricted': {found}")
