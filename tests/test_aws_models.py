"""Values AWS would validate, checked against the API models botocore ships (mocks accept anything).

Each check maps a rendered input to the API shape that receives it: if EKS or EC2 renamed or dropped an
enum value, `pulumi up` would fail late; here the test fails first.
"""

from __future__ import annotations

import re

import botocore.session

from gpuplane.components import config
from gpuplane.components.facts import catalog
from gpuplane.components.plan import node_template
from gpuplane.manifests import versions

SESSION = botocore.session.get_session()
EKS = SESSION.get_service_model("eks")
EC2 = SESSION.get_service_model("ec2")


def enum(model, shape: str) -> set[str]:
    return set(model.shape_for(shape).enum)


def runs(request):
    return [request.getfixturevalue("dev_run"), request.getfixturevalue("prod_run")]


def test_node_group_values_are_accepted_by_the_eks_api(request):
    for rec in runs(request):
        for ng in rec.by_type("aws:eks/nodeGroup:NodeGroup"):
            inputs = ng.inputs
            assert inputs["amiType"] in enum(EKS, "AMITypes")
            assert inputs["capacityType"] in enum(EKS, "CapacityTypes")
            assert {t["effect"] for t in inputs["taints"]} <= enum(EKS, "TaintEffect")
            assert set(inputs["instanceTypes"]) <= enum(EC2, "InstanceType")


def test_cluster_values_are_accepted_by_the_eks_api(request):
    for rec in runs(request):
        cluster = rec.one("aws:eks/cluster:Cluster").inputs
        assert set(cluster["enabledClusterLogTypes"]) <= enum(EKS, "LogType")
        assert cluster["accessConfig"]["authenticationMode"] in enum(EKS, "AuthenticationMode")
        assert cluster["kubernetesNetworkConfig"]["ipFamily"] in enum(EKS, "IpFamily")
        for policy in rec.by_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation"):
            assert policy.inputs["accessScope"]["type"] in enum(EKS, "AccessScopeType")


def test_launch_template_values_are_accepted_by_the_ec2_api(request):
    for rec in runs(request):
        for lt in rec.by_type("aws:ec2/launchTemplate:LaunchTemplate"):
            meta = lt.inputs["metadataOptions"]
            assert meta["httpTokens"] in enum(EC2, "LaunchTemplateHttpTokensState")
            assert meta["httpEndpoint"] in enum(EC2, "LaunchTemplateInstanceMetadataEndpointState")
            for device in lt.inputs["blockDeviceMappings"]:
                assert device["ebs"]["volumeType"] in enum(EC2, "VolumeType")
            for spec in lt.inputs["tagSpecifications"]:
                assert spec["resourceType"] in enum(EC2, "ResourceType")


def test_every_supported_ami_type_and_taint_effect_exists_in_the_api():
    assert set(versions.AMI_TYPES) <= enum(EKS, "AMITypes")
    assert set(config.AmiType.__args__) == set(versions.AMI_TYPES)  # type: ignore[attr-defined]
    assert set(node_template.EKS_TAINT_EFFECTS.values()) == enum(EKS, "TaintEffect")
    assert set(config.CapacityType.__args__) <= enum(EKS, "CapacityTypes")  # type: ignore[attr-defined]
    assert set(config.LogType.__args__) == enum(EKS, "LogType")  # type: ignore[attr-defined]
    assert set(versions.CONTROL_PLANE_LOG_TYPES) == enum(EKS, "LogType")


def test_catalog_types_exist_in_the_ec2_api():
    """Every type of the catalog (one test, not one per type: 1,366 items cost more to run than to check)."""
    assert sorted(set(catalog.CATALOG) - enum(EC2, "InstanceType")) == []
    assert len(catalog.CATALOG) > 1000


def test_log_retention_values_match_the_cloudwatch_docs():
    # The CloudWatch Logs model documents the allowed values in the RetentionInDays shape's docs.
    logs = SESSION.get_service_model("logs")
    doc = logs.shape_for("Days").documentation
    for days in config.LOG_RETENTION_DAYS:
        assert str(days) in doc


def test_efs_values_are_accepted_by_the_efs_api(request):
    efs = SESSION.get_service_model("efs")
    uid_range = efs.shape_for("Uid").metadata
    for rec in runs(request):
        fs = rec.one("aws:efs/fileSystem:FileSystem").inputs
        assert fs["performanceMode"] in enum(efs, "PerformanceMode")
        assert fs["throughputMode"] in enum(efs, "ThroughputMode")
        status = rec.one("aws:efs/backupPolicy:BackupPolicy").inputs["backupPolicy"]["status"]
        assert status in enum(efs, "Status")
        for ap in rec.by_type("aws:efs/accessPoint:AccessPoint"):
            for value in ap.inputs["posixUser"].values():
                assert uid_range["min"] <= value <= uid_range["max"]
            root = ap.inputs["rootDirectory"]
            assert re.fullmatch(efs.shape_for("Path").metadata["pattern"], root["path"])
            assert re.fullmatch(efs.shape_for("Permissions").metadata["pattern"], root["creationInfo"]["permissions"])


def test_storage_config_limits_match_the_efs_api():
    efs = SESSION.get_service_model("efs")
    assert set(config.StorageArgs.model_fields["performance_mode"].annotation.__args__) == enum(efs, "PerformanceMode")  # type: ignore[union-attr]
    assert set(config.StorageArgs.model_fields["throughput_mode"].annotation.__args__) == enum(efs, "ThroughputMode")  # type: ignore[union-attr]
    assert efs.shape_for("Uid").metadata["max"] > config.POSIX_ID_MAX
    assert efs.shape_for("Uid").metadata["min"] < config.POSIX_ID_MIN
