"""The in-cluster Prometheus keeps its data on an EBS volume: size, class, driver, cost and what destroy leaves.

Checked against: the Kubernetes schemas (strict) for the StorageClass; the EBS CSI driver's own tag rules
(aws-ebs-csi-driver pkg/driver/validation.go `validateExtraTags` and pkg/util/template `Evaluate`, 429e202,
2026-08-19) and the teardown's ownership rule for the tags the volume will carry; the sizing arithmetic by hand.
"""

from __future__ import annotations

import math
from typing import Any

import kubernetes_validate
import pytest

from gpuplane.components.config import ObservabilityArgs
from gpuplane.components.destroy import teardown
from gpuplane.components.plan import cost
from gpuplane.infra import config, render
from gpuplane.infra.mockrun import RecordedResource, Recording
from gpuplane.manifests import observability, versions, wellknown
from tests.conftest import DEV_CLUSTER, stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"
ADDON = "aws:eks/addon:Addon"


def _prometheus_spec(run: Recording) -> dict[str, Any]:
    release = next(r for r in run.by_type(RELEASE) if r.inputs["name"] == "kube-prometheus-stack")
    return release.inputs["values"]["prometheus"]["prometheusSpec"]


def _ebs_classes(run: Recording) -> list[RecordedResource]:
    return [
        r
        for r in run.by_type("kubernetes:storage.k8s.io/v1:StorageClass")
        if r.inputs["provisioner"] == wellknown.EBS_CSI_PROVISIONER
    ]


# --- size ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("retention", "gib"),
    [
        ("7d", 10),  # 604,800 s x 3,333.3 samples/s x 2 B x 2 = 8.06e9 B = 7.5 GiB: the 10 GiB floor
        ("30d", 33),  # 2,592,000 s x 3,333.3 x 2 x 2 = 34.6e9 B = 32.2 GiB -> 33
        ("90d", 97),  # 7,776,000 s x 3,333.3 x 2 x 2 = 103.7e9 B = 96.6 GiB -> 97
        ("12h", 10),
        ("100y", 16384),  # capped at a gp3 volume's largest size
    ],
)
def test_the_volume_is_sized_from_retention_by_hand(retention, gib):
    assert observability.prometheus_volume_gib(retention) == gib
    assert ObservabilityArgs(retention=retention).volume_gib == gib


def test_the_arithmetic_uses_the_stated_assumptions():
    needed = 30 * 86400 * (100_000 / 30) * 2 * 2
    assert observability.prometheus_volume_gib("30d") == math.ceil(needed / 2**30)


def test_storage_gib_wins_over_the_sizing():
    assert ObservabilityArgs(retention="90d", storage_gib=20).volume_gib == 20


@pytest.mark.parametrize("value", [9, -5, 16385])
def test_storage_gib_out_of_bounds_is_refused_naming_the_key(value):
    with pytest.raises(config.ConfigError) as caught:
        stack_config({"cluster": DEV_CLUSTER, "observability": {"storageGib": value}})
    message = str(caught.value)
    bound = "greater than or equal to 10" if value < 10 else "less than or equal to 16384"
    assert message == f"gpuplane:observability.storageGib: Input should be {bound} (got {value})"


@pytest.mark.parametrize("metrics", ["managedPrometheus", "none"])
def test_storage_gib_without_the_in_cluster_prometheus_is_refused(metrics):
    with pytest.raises(config.ConfigError) as caught:
        stack_config({"cluster": DEV_CLUSTER, "observability": {"metrics": metrics, "storageGib": 50}})
    message = str(caught.value)
    assert message.startswith("gpuplane:observability.storageGib: is 50, but only the in-cluster Prometheus")
    assert f"metrics is '{metrics}'" in message and "unknown key" not in message


def test_stack_values_claim_the_volume_and_bound_the_store_by_size():
    values = observability.stack_values(retention="7d", grafana=False, tolerations=[], volume_gib=10)
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["storageSpec"] == {
        "volumeClaimTemplate": {
            "spec": {
                "storageClassName": "gpuplane-prometheus-gp3",
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "10Gi"}},
            }
        }
    }
    assert spec["retentionSize"] == "8GiB"  # 80 %: old blocks go before the disk fills
    assert spec["retention"] == "7d"
    bare = observability.stack_values(retention="7d", grafana=False, tolerations=[])
    assert "storageSpec" not in bare["prometheus"]["prometheusSpec"]


# --- the class and the tags the driver writes ---------------------------------------------------------------
@pytest.mark.parametrize("version", sorted(versions.KUBERNETES_VERSIONS))
def test_storage_class_validates_strictly(version):
    assert kubernetes_validate.validate(observability.prometheus_storage_class("gpuplane-dev"), version, strict=True)


def test_storage_class_is_encrypted_gp3_bound_where_the_pod_lands():
    sc = observability.prometheus_storage_class("gpuplane-dev")
    assert sc["provisioner"] == "ebs.csi.aws.com"
    assert sc["volumeBindingMode"] == "WaitForFirstConsumer"
    assert sc["reclaimPolicy"] == "Delete"
    assert sc["parameters"]["type"] == "gp3" and sc["parameters"]["encrypted"] == "true"
    assert "kmsKeyId" not in sc["parameters"]  # the account's default EBS key


def _driver_tags(parameters: dict[str, str]) -> dict[str, str]:
    """The tags the EBS CSI driver's CreateVolume writes for these StorageClass parameters, or ValueError.

    Its rules (pkg/driver/controller.go, validation.go, util/template): every `tagSpecification*` value split at
    the first `=`; keys `CSIVolumeName`, `ebs.csi.aws.com/cluster-name` and prefixes `kubernetes.io`,
    `ebs.csi.aws.com/` refused (InvalidArgument); then its own `ebs.csi.aws.com/cluster: true` and `CSIVolumeName`.
    """
    tags = {}
    for key, value in parameters.items():
        if key.startswith("tagSpecification"):
            tag_key, sep, tag_value = value.partition("=")
            if not sep:
                raise ValueError(f"the key-value pair doesn't contain a value (string: {value})")
            if tag_key in {"CSIVolumeName", "ebs.csi.aws.com/cluster-name"} or tag_key.startswith(
                ("kubernetes.io", "ebs.csi.aws.com/")
            ):
                raise ValueError(f"tag key '{tag_key}' is reserved")
            tags[tag_key] = tag_value
    return {**tags, "ebs.csi.aws.com/cluster": "true", "CSIVolumeName": "pvc-0123"}


def test_the_driver_accepts_the_class_tags_and_the_teardown_recognises_the_volume():
    tags = _driver_tags(observability.prometheus_storage_class("gpuplane-dev")["parameters"])
    assert (
        teardown.ownership(tags, "gpuplane-dev", "volume")
        == "ebs.csi.aws.com/cluster=true, KubernetesCluster=gpuplane-dev"
    )
    assert teardown.ownership(tags, "gpuplane-prod", "volume") is None  # another stack's volume: never touched


def test_the_driver_rules_catch_a_reserved_tag():
    with pytest.raises(ValueError, match="reserved"):
        _driver_tags({"tagSpecification_1": "kubernetes.io/cluster/gpuplane-dev=owned"})


# --- the render -----------------------------------------------------------------------------------------------
def test_dev_prometheus_claims_a_volume_from_the_class(dev_run):
    spec = _prometheus_spec(dev_run)
    assert spec["storageSpec"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"] == "10Gi"
    (sc,) = _ebs_classes(dev_run)
    assert sc.inputs["metadata"]["name"] == spec["storageSpec"]["volumeClaimTemplate"]["spec"]["storageClassName"]
    assert sc.inputs["parameters"]["tagSpecification_1"] == "KubernetesCluster=gpuplane-dev"
    release = next(r for r in dev_run.by_type(RELEASE) if r.inputs["name"] == "kube-prometheus-stack")
    addon = next(r for r in dev_run.by_type(ADDON) if r.inputs["addonName"] == "aws-ebs-csi-driver")
    assert sc.urn in release.dependencies
    # The release does not wait for the driver (its claim does): the EBS add-on stays off the create path.
    assert addon.urn not in release.dependencies


def test_the_ebs_driver_gets_its_role_through_pod_identity_and_goes_with_the_cluster(dev_run):
    addon = next(r for r in dev_run.by_type(ADDON) if r.inputs["addonName"] == "aws-ebs-csi-driver")
    (association,) = addon.inputs["podIdentityAssociations"]
    assert association["serviceAccount"] == "ebs-csi-controller-sa"
    assert "serviceAccountRoleArn" not in addon.inputs
    cluster = dev_run.one("aws:eks/cluster:Cluster")
    assert addon.deleted_with == cluster.urn
    role = next(r for r in dev_run.by_type("aws:iam/role:Role") if r.name.endswith("-ebs-csi-role"))
    assert "pods.eks.amazonaws.com" in role.inputs["assumeRolePolicy"]
    attachment = next(
        r
        for r in dev_run.by_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if r.name.endswith("-ebs-csi-policy")
    )
    assert attachment.inputs["policyArn"] == "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"


def test_dev_cost_has_the_volume_line(dev_run):
    usage = cost.usage_from_resources(
        "us-east-1", [{"urn": r.urn, "type": r.type, "inputs": r.inputs} for r in dev_run.resources]
    )
    assert usage.prometheus_volume_gib == 10
    line = cost.prometheus_volume_line(10)
    assert line.item == "Prometheus volume" and line.detail == "10 GiB gp3 x $0.08/GB-month"
    assert line.idle == line.max == round(10 * 0.08 / 730, 4) == 0.0011


def test_a_stack_without_the_in_cluster_prometheus_has_no_volume_class_or_driver():
    run = render.run_stack(stack_config({"cluster": DEV_CLUSTER, "observability": {"metrics": "none"}}))
    assert _ebs_classes(run) == []
    assert all(r.inputs["addonName"] != "aws-ebs-csi-driver" for r in run.by_type(ADDON))
    usage = cost.usage_from_resources(
        "us-east-1", [{"urn": r.urn, "type": r.type, "inputs": r.inputs} for r in run.resources]
    )
    assert usage.prometheus_volume_gib == 0
