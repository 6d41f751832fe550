"""The load-test Job, ConfigMap and uploader pod through the same gates as every workload."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from gpuplane.manifests import loadtest, versions
from tests import checkov_scan

RUN = "20261123-150000-abcdef"


def objects(with_inputs: bool = True) -> list[dict[str, Any]]:
    config = {"runId": RUN, "model": "m"}
    job = loadtest.job(
        "ml", RUN, servings=["resnet", "bert"], uid=10001, gid=1000, active_deadline_s=900, with_inputs=with_inputs
    )
    return [
        loadtest.configmap("ml", RUN, config),
        job,
        loadtest.uploader_pod("ml", RUN, uid=10001, gid=1000),
        loadtest.network_policy("ml", RUN, servings=["resnet", "bert"]),
    ]


@pytest.mark.parametrize("version", sorted(versions.KUBERNETES_VERSIONS))
@pytest.mark.parametrize("with_inputs", [True, False])
def test_objects_validate_strictly(version, with_inputs):
    for obj in objects(with_inputs):
        assert kubernetes_validate.validate(obj, version, strict=True), obj["kind"]


def _pod_specs() -> list[dict[str, Any]]:
    _, job, pod, _ = objects()
    return [job["spec"]["template"]["spec"], pod["spec"]]


@pytest.mark.parametrize("index", [0, 1])
def test_pods_meet_pod_security_restricted(index):
    spec = _pod_specs()[index]
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] > 10000
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert spec["automountServiceAccountToken"] is False
    allowed = {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
    for volume in spec["volumes"]:
        assert set(volume) - {"name"} <= allowed
    for container in spec["containers"]:
        ctx = container["securityContext"]
        assert ctx["allowPrivilegeEscalation"] is False
        assert ctx["capabilities"] == {"drop": ["ALL"]}
        assert ctx["readOnlyRootFilesystem"] is True
        assert ctx["seccompProfile"] == {"type": "RuntimeDefault"}
        assert container["resources"]["limits"] == container["resources"]["requests"]
        assert {"cpu", "memory"} <= set(container["resources"]["limits"])
        assert container["image"] == versions.TENSORFLOW_CPU_IMAGE
        assert any(m["mountPath"] == "/tmp" for m in container["volumeMounts"])


def test_job_is_one_shot_cleaned_up_and_kept_off_the_serving_nodes():
    _, job, _, _ = objects()
    spec = job["spec"]
    assert (spec["backoffLimit"], spec["ttlSecondsAfterFinished"], spec["activeDeadlineSeconds"]) == (0, 3600, 900)
    term = spec["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchExpressions"] == [
        {"key": "app.kubernetes.io/name", "operator": "In", "values": ["tensorflow-serving"]},
        {"key": "app.kubernetes.io/instance", "operator": "In", "values": ["bert", "resnet"]},
    ]
    container = spec["template"]["spec"]["containers"][0]
    assert container["command"] == ["python3", "/opt/gpuplane-compare/client.py", "/opt/gpuplane-compare/config.json"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"uid": 1000}, "uid 1000 must be above 10000"),
        ({"active_deadline_s": 0}, "active_deadline_s 0 must be at least 1"),
    ],
)
def test_job_refuses_bad_arguments(kwargs, message):
    args = {"servings": ["s"], "uid": 10001, "gid": 1, "active_deadline_s": 60, "with_inputs": False} | kwargs
    with pytest.raises(ValueError, match=message):
        loadtest.job("ml", RUN, **args)


def test_network_policy_selects_the_run_and_allows_only_serving_and_dns():
    _, job, pod, policy = objects()
    selector = policy["spec"]["podSelector"]["matchLabels"]
    for labels in (job["spec"]["template"]["metadata"]["labels"], pod["metadata"]["labels"]):
        assert selector.items() <= labels.items()
    assert policy["spec"]["ingress"] == []
    egress = policy["spec"]["egress"]
    assert egress[0]["ports"] == [{"protocol": "TCP", "port": 8501}]
    assert egress[1]["ports"] == [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]


def test_run_id_must_be_a_dns_label():
    with pytest.raises(ValueError, match="run id 'Bad_ID' must be a DNS label"):
        loadtest.configmap("ml", "Bad_ID", {})


@pytest.mark.skipif(checkov_scan.binary() is None, reason="checkov not installed (make scan)")
def test_checkov_passes(checkov_kubernetes: dict[str, checkov_scan.SetResult]):
    """`objects()`, in the session's one checkov run (tests/checkov_scan.py)."""
    found = checkov_kubernetes["loadtest"]
    assert found.files == len(objects())
    assert found.failed == [] and found.parsing_errors == []
    assert found.passed >= found.files  # each object was read and checked
