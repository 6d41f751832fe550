"""Every Kubernetes object a stack applies is valid against the real OpenAPI schema (strict)."""

from __future__ import annotations

import kubernetes_validate
import pytest

from gpuplane.infra import config, render
from gpuplane.manifests import wellknown
from gpuplane.manifests.namespaces import namespace
from tests.manifests.test_observability import monitoring_problems
from tests.queue import kueue_api


@pytest.mark.parametrize("fixture", ["dev_run", "prod_run"])
def test_rendered_objects_validate_strictly(request, fixture):
    rec = request.getfixturevalue(fixture)
    version = rec.one("aws:eks/cluster:Cluster").inputs["version"]
    objects = render.kubernetes_objects(rec)
    assert {"namespace-ml.yaml", "configmap-ml-gpuplane-runtime.yaml"} <= set(objects)
    for name, obj in objects.items():
        if obj["apiVersion"].startswith("kueue.x-k8s.io/"):
            # Kueue's CRDs are not in the Kubernetes schemas: checked against the v1beta2 API (tests/queue).
            assert kueue_api.problems(obj) == [], name
            continue
        if obj["apiVersion"] == wellknown.MONITORING_API:
            # Nor the Prometheus operator's CRDs: their fields are checked in tests/manifests/test_observability.
            assert monitoring_problems(obj) == [], name
            continue
        assert kubernetes_validate.validate(obj, version, strict=True), name


def test_objects_go_through_the_cluster_provider(dev_run):
    provider = dev_run.one("pulumi:providers:kubernetes")
    for r in dev_run.resources:
        if r.type.startswith("kubernetes:"):
            assert r.provider and r.provider.startswith(provider.urn), r.urn
    configmap = dev_run.one("kubernetes:core/v1:ConfigMap", "gpuplane-dev-workspace-runtime")
    ml = next(n for n in dev_run.by_type("kubernetes:core/v1:Namespace") if n.inputs["metadata"]["name"] == "ml")
    assert ml.urn in configmap.dependencies
    assert configmap.inputs["data"]["gpuplane-entrypoint.sh"].startswith("#!/bin/sh")


@pytest.mark.parametrize("fixture", ["dev_run", "prod_run"])
def test_only_the_nvidia_namespace_is_privileged(request, fixture):
    rec = request.getfixturevalue(fixture)
    levels = {
        n.inputs["metadata"]["name"]: n.inputs["metadata"]["labels"]
        for n in rec.by_type("kubernetes:core/v1:Namespace")
    }
    # jobset-system, kueue-system: the JobSet controller and Kueue, installed because the dev stack declares training.
    training = {"jobset-system", "kueue-system"}
    # monitoring: kube-prometheus-stack, whose node-exporter reads the host's network and /proc.
    privileged = {"nvidia-gpu", "monitoring"}
    assert set(levels) == ({"ml", *privileged, *training} if fixture == "dev_run" else {"ml", *privileged})
    version = config.load("dev" if fixture == "dev_run" else "prod").platform.cluster.kubernetes_version
    for name, labels in levels.items():
        expected = "privileged" if name in privileged else "restricted"
        for mode in ("enforce", "audit", "warn"):
            assert labels[f"pod-security.kubernetes.io/{mode}"] == expected
            assert labels[f"pod-security.kubernetes.io/{mode}-version"] == f"v{version}"


def test_strict_validation_catches_a_typo():
    bad = namespace("ml", "restricted", "1.35")
    bad["metadata"]["lables"] = bad["metadata"].pop("labels")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, "1.35", strict=True)


def test_namespace_name_is_checked():
    with pytest.raises(ValueError, match="namespace name 'ML' must be a DNS label"):
        namespace("ML", "restricted", "1.35")
