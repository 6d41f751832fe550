"""The ProvisioningRequest CRD shipped in the package: one per supported minor, at the pinned autoscaler's tag.

The CRD is applied from the package (no URL at `pulumi up`), so each copy must follow its pin: a bump of an
autoscaler image without a new copy (scripts/vendor_provisioning_crd.py) fails here. Each copy is checked
offline against the Kubernetes schema of its minor, like every object render writes, and for the API the
queue relies on.
"""

from __future__ import annotations

from importlib import resources

import kubernetes_validate
import pytest
import yaml

from gpuplane.manifests import queue, versions, wellknown

MINORS = sorted(versions.CLUSTER_AUTOSCALER_IMAGES)


def test_a_copy_for_every_supported_minor_and_no_other():
    shipped = {p.name for p in resources.files("gpuplane.manifests").joinpath(queue.CRD_DIR).iterdir()}
    assert shipped == {queue.provisioning_crd_file(m) for m in MINORS}
    assert set(MINORS) == set(versions.KUBERNETES_VERSIONS)


@pytest.mark.parametrize("minor", MINORS)
def test_each_copy_is_from_its_minors_pinned_tag(minor):
    image = versions.CLUSTER_AUTOSCALER_IMAGES[minor]
    assert queue.provisioning_crd_tag(minor) == f"cluster-autoscaler-{image.removeprefix('v')}"
    text = queue.provisioning_crd_text(minor)
    assert "cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml" in text.splitlines()[0]


@pytest.mark.parametrize("minor", MINORS)
def test_each_copy_is_a_valid_crd_serving_the_api_the_queue_uses(minor):
    crd = queue.provisioning_request_crd(minor)
    assert kubernetes_validate.validate(crd, minor, strict=True)
    group, version = wellknown.PROVISIONING_REQUEST_API.split("/")
    assert crd["metadata"]["name"] == f"provisioningrequests.{group}"
    assert crd["spec"]["group"] == group and crd["spec"]["scope"] == "Namespaced"
    served = {v["name"]: v for v in crd["spec"]["versions"] if v["served"]}
    assert served[version]["storage"] is True
    spec = served[version]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    # What Kueue writes into the requests it creates for an admitted run.
    assert {"provisioningClassName", "podSets", "parameters"} <= set(spec["properties"])
    assert set(spec["required"]) >= {"provisioningClassName", "podSets"}


@pytest.mark.parametrize("minor", MINORS)
def test_each_caller_gets_its_own_copy_of_the_file_as_written(minor):
    # Parsed once per process (every render asks): the same document the pure-Python parser reads, and a
    # caller that changes its copy changes no other caller's.
    first = queue.provisioning_request_crd(minor)
    assert first == yaml.safe_load(queue.provisioning_crd_text(minor))
    first["spec"]["versions"].clear()
    assert queue.provisioning_request_crd(minor)["spec"]["versions"]


def test_a_minor_without_a_copy_is_refused_by_name():
    with pytest.raises(ValueError, match=r"no ProvisioningRequest CRD shipped for Kubernetes 1\.99"):
        queue.provisioning_request_crd("1.99")
