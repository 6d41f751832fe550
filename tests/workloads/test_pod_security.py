"""The `restricted` checker: every rendered pod template passes; one known-bad pod per rule is refused."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from gpuplane.infra import render
from gpuplane.manifests import pod_security, workload_security
from gpuplane.manifests.pod_security import check_restricted


def good_pod() -> dict[str, Any]:
    return {
        "securityContext": workload_security.pod_security_context(10001, 10001),
        "containers": [
            {
                "name": "c",
                "image": "x:1",
                "securityContext": workload_security.container_security_context(),
            }
        ],
        "volumes": [workload_security.scratch_volume(), {"name": "p", "persistentVolumeClaim": {"claimName": "m"}}],
    }


def _set(path: str, value: Any) -> Any:
    def mutate(pod: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = pod
        for part in parents:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        if value is _DELETE:
            node.pop(last, None)
        else:
            node[last] = value

    return mutate


_DELETE = object()
C = "containers.0.securityContext"


BAD = {
    "hostNetwork": (_set("hostNetwork", True), "host namespaces"),
    "hostPID": (_set("hostPID", True), "host namespaces"),
    "hostIPC": (_set("hostIPC", True), "host namespaces"),
    "privileged": (_set(f"{C}.privileged", True), "privileged"),
    "hostPort": (_set("containers.0.ports", [{"containerPort": 80, "hostPort": 80}]), "hostPort"),
    "hostPath volume": (_set("volumes", [{"name": "h", "hostPath": {"path": "/"}}]), "volume type"),
    "capabilities add": (_set(f"{C}.capabilities", {"drop": ["ALL"], "add": ["SYS_ADMIN"]}), "capabilities.add"),
    "capabilities not dropped": (_set(f"{C}.capabilities", {"drop": []}), "drop must include ALL"),
    "privilege escalation": (_set(f"{C}.allowPrivilegeEscalation", True), "allowPrivilegeEscalation"),
    "escalation unset": (_set(f"{C}.allowPrivilegeEscalation", _DELETE), "allowPrivilegeEscalation"),
    "root user": (_set(f"{C}.runAsUser", 0), "runAsUser 0"),
    "pod root user": (_set("securityContext.runAsUser", 0), "runAsUser: 0"),
    "non-root not required": (
        lambda p: (p["securityContext"].pop("runAsNonRoot"), p["containers"][0]["securityContext"].pop("runAsNonRoot")),
        "runAsNonRoot",
    ),
    "seccomp unconfined": (_set("securityContext.seccompProfile", {"type": "Unconfined"}), "seccompProfile"),
    "seccomp unset": (
        lambda p: (
            p["securityContext"].pop("seccompProfile"),
            p["containers"][0]["securityContext"].pop("seccompProfile"),
        ),
        "seccompProfile",
    ),
    "unsafe sysctl": (_set("securityContext.sysctls", [{"name": "kernel.msgmax", "value": "1"}]), "sysctl"),
    "procMount": (_set(f"{C}.procMount", "Unmasked"), "procMount"),
    "apparmor unconfined": (_set(f"{C}.appArmorProfile", {"type": "Unconfined"}), "appArmorProfile"),
    "selinux user": (_set("securityContext.seLinuxOptions", {"user": "root"}), "seLinuxOptions"),
    "bad init container": (
        lambda p: p.setdefault("initContainers", []).append({"name": "i", "image": "x:1"}),
        "initContainers[i]",
    ),
}


def test_the_good_pod_is_admitted():
    assert pod_security.violations(good_pod()) == []


@pytest.mark.parametrize("rule", sorted(BAD))
def test_each_rule_rejects_its_bad_pod(rule):
    mutate, expected = BAD[rule]
    pod = copy.deepcopy(good_pod())
    mutate(pod)
    found = pod_security.violations(pod)
    assert found, rule
    assert any(expected in line for line in found), found


@pytest.mark.parametrize("fixture", ["dev_run", "prod_run"])
def test_every_rendered_pod_template_is_restricted(request, fixture):
    objects = render.kubernetes_objects(request.getfixturevalue(fixture))
    in_ml = {k: v for k, v in objects.items() if v.get("metadata", {}).get("namespace") == "ml"}
    checked = [k for k, v in in_ml.items() if pod_security.pod_spec_of(v) is not None]
    for name in checked:
        assert pod_security.object_violations(in_ml[name]) == [], name
    if fixture == "dev_run":
        assert {"deployment-ml-mobilenet-cpu.yaml", "deployment-ml-mobilenet-gpu.yaml"} <= set(checked)
        assert any(k.startswith("job-ml-mobilenet-import-") for k in checked)


def test_the_runtime_docs_example_pod_is_admitted():
    """docs/runtime.md's example, built as written there, passes the checker (it used to be refused)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "runtime.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(code.group(1), namespace)
    assert pod_security.violations(namespace["pod_spec"]) == []


def test_render_gate_refuses_a_pod_restricted_would_reject():
    bad: dict[str, object] = {
        "kind": "Deployment",
        "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}},
    }
    with pytest.raises(ValueError, match="Deployment x would be refused by Pod Security 'restricted'"):
        check_restricted([bad])
