"""Every object `gpuplane verify` creates, through the gates every gpuplane manifest passes.

Strict Kubernetes schemas for every supported version, Pod Security `restricted` (our checker of the
standard's rules, since the probes' namespaces enforce it), labels and deadlines on every object, checkov.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from gpuplane.infra.verify import command, model
from gpuplane.manifests import pod_security, training, versions, wellknown
from gpuplane.manifests import verify as probes
from tests import checkov_scan
from tests.verify.conftest import RUN
from tests.verify.fakes import stack_expect


def probe_objects(stack: str) -> list[dict[str, Any]]:
    command.load_checks()
    expect = stack_expect(stack)
    return command.plan_objects(expect, model.checks_for(expect), RUN, second_az=True)


@pytest.fixture(scope="module", params=["dev", "prod"])
def objects(request) -> list[dict[str, Any]]:
    return probe_objects(request.param)


def test_every_probe_is_planned(objects):
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert kinds[:2] == [("Namespace", f"gpuplane-verify-{RUN}"), ("ConfigMap", "gpuplane-runtime")]
    names = {name for _, name in kinds}
    assert {f"gv-runtime-{RUN}", f"gv-gpu-gpu-{RUN}", f"gv-storage-0-{RUN}", f"gv-storage-1-{RUN}"} <= names
    assert f"gv-second-az-{RUN}" in names  # planned with --second-az, through the same gates below


@pytest.mark.parametrize("version", sorted(versions.KUBERNETES_VERSIONS))
def test_objects_validate_strictly(objects, version):
    for obj in objects:
        if obj["kind"] == "JobSet":  # a CRD kubernetes-validate does not carry: its Jobs, and its own fields
            assert training.unknown_jobset_fields(obj) == []
            for job in training.job_templates_as_jobs(obj):
                assert kubernetes_validate.validate(job, version, strict=True), job["metadata"]["name"]
        else:
            assert kubernetes_validate.validate(obj, version, strict=True), obj["metadata"]["name"]


def test_pods_meet_pod_security_restricted(objects):
    for jobset in [o for o in objects if o["kind"] == "JobSet"]:
        assert pod_security.object_violations(jobset) == [], jobset["metadata"]["name"]
    pods = [o for o in objects if o["kind"] == "Pod"]
    assert pods
    for pod in pods:
        assert pod_security.object_violations(pod) == [], pod["metadata"]["name"]
        assert pod["spec"]["automountServiceAccountToken"] is False
        assert 0 < pod["spec"]["activeDeadlineSeconds"] <= 86400


def test_the_probe_namespace_enforces_restricted_and_every_object_is_labelled(objects):
    namespace = objects[0]
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    for obj in objects:
        assert obj["metadata"]["labels"][probes.RUN_LABEL] == RUN
        assert obj["metadata"]["labels"]["app.kubernetes.io/part-of"] == "gpuplane-verify"
        namespace_of = obj["metadata"].get("namespace")
        if obj["kind"] == "Pod" and namespace_of != f"gpuplane-verify-{RUN}":
            assert obj["metadata"]["name"].startswith("gv-storage-")  # only storage runs where the claims are
            assert namespace_of == "ml"
        if obj["kind"] == "JobSet":  # a training run goes where the queue is
            assert namespace_of == "ml" and obj["metadata"]["name"].endswith(f"-verify-{RUN.rsplit('-', 1)[-1]}")


def test_the_gpu_probe_asks_for_one_unit_and_tolerates_its_group(objects):
    pod = next(o for o in objects if o["metadata"]["name"].startswith("gv-gpu-"))
    spec = pod["spec"]
    for container in [*spec["initContainers"], *spec["containers"]]:
        assert container["resources"]["limits"][wellknown.GPU_RESOURCE] == "1"
    assert spec["initContainers"][0]["image"] == versions.TF_SERVING_GPU_IMAGE
    assert spec["containers"][0]["image"] == versions.TENSORFLOW_GPU_IMAGE
    assert spec["nodeSelector"] == {wellknown.LABEL_NODE_GROUP: "gpu"}
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in spec[
        "tolerations"
    ]
    env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    assert env["GPUPLANE_GPU_CHECK"] == "tensorflow" and env["GPUPLANE_GPU_MIN_DRIVER"] == "525"


def test_bad_run_ids_are_refused():
    with pytest.raises(ValueError, match="run id 'Bad_ID' must be a DNS label"):
        probes.probe_namespace_name("Bad_ID")


def test_parse_report_reads_marker_lines_only():
    log = "noise\nGPUPLANE-VERIFY a=1\nGPUPLANE-VERIFY b = x=y\nGPUPLANE-VERIFYc=2\nGPUPLANE-VERIFY a=3\n"
    assert probes.parse_report(log) == {"a": "3", "b": "x=y"}


@pytest.mark.skipif(checkov_scan.binary() is None, reason="checkov not installed (make scan)")
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_checkov_passes(checkov_kubernetes: dict[str, checkov_scan.SetResult], stack: str):
    """Every probe object of the stack (`probe_objects`), in the session's one checkov run (tests/checkov_scan.py)."""
    found = checkov_kubernetes[f"verify-{stack}"]
    assert found.files == len(probe_objects(stack))
    assert found.failed == [] and found.parsing_errors == []
    assert found.passed >= found.files  # each object was read and checked
