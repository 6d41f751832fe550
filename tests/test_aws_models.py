"""Values AWS would validate, checked against the API models botocore ships (mocks accept anything).

Each check maps a rendered input to the API shape that receives it: if EKS or EC2 renamed or dropped an
enum value, `pulumi up` would fail late; here the test fails first.
"""

from __future__ import annotations

import re
from typing import Any

import botocore.session
from botocore.model import Shape
from botocore.validate import ParamValidator

from gpuplane.components import config
from gpuplane.components.facts import catalog
from gpuplane.components.plan import node_template
from gpuplane.manifests import wellknown

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


# pulumi_aws's launch template inputs that are not LaunchTemplateData (CreateLaunchTemplate's own parameters).
_TEMPLATE_OWN = frozenset({"description", "tags", "updateDefaultVersion", "name", "namePrefix", "defaultVersion"})
# Where pulumi_aws's input name is not the API member's name with a capital first letter.
_RENAMED = {"securityGroups": "Groups", "vpcSecurityGroupIds": "SecurityGroupIds"}


def launch_template_data(inputs: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A recorded `aws:ec2/launchTemplate` as EC2's `LaunchTemplateData`, and what EC2 would refuse on the way.

    Walks the inputs along botocore's ec2 model (CreateLaunchTemplate's `RequestLaunchTemplateData`): an input the
    shape has no member for, or a value outside an enum, is a problem; the bridge's "true"/"false" strings become
    booleans and `tags` maps become Key/Value lists, as the provider sends them.
    """
    problems: list[str] = []

    def walk(value: Any, shape: Shape, path: str) -> Any:
        if shape.type_name == "structure":
            if not isinstance(value, dict):
                problems.append(f"{path}: {value!r} is not an object")
                return value
            out = {}
            for key, item in value.items():
                member = _RENAMED.get(key, key[:1].upper() + key[1:])
                if member not in shape.members:
                    problems.append(f"{path}.{key}: no member {member} in {shape.name}")
                    continue
                out[member] = walk(item, shape.members[member], f"{path}.{key}")
            return out
        if shape.type_name == "list":
            member = shape.member
            if isinstance(value, dict) and member.name == "Tag":
                value = [{"key": k, "value": v} for k, v in value.items()]
            return [walk(item, member, f"{path}[{i}]") for i, item in enumerate(value)]
        if shape.type_name == "boolean" and value in ("true", "false"):
            return value == "true"
        allowed = getattr(shape, "enum", None)
        if allowed and value not in allowed:
            problems.append(f"{path}: {value!r} is not one of {shape.name} {allowed}")
        return value

    shape = EC2.operation_model("CreateLaunchTemplate").input_shape.members["LaunchTemplateData"]
    data = walk({k: v for k, v in inputs.items() if k not in _TEMPLATE_OWN}, shape, "launchTemplate")
    report = ParamValidator().validate(data, shape)
    if report.has_errors():
        problems.append(report.generate_report())
    return data, problems


def test_launch_templates_are_valid_launch_template_data(request):
    for rec in runs(request):
        for lt in rec.by_type("aws:ec2/launchTemplate:LaunchTemplate"):
            data, problems = launch_template_data(lt.inputs)
            assert problems == [], lt.name
            assert data["MetadataOptions"]["HttpTokens"] == "required"


def test_the_launch_template_check_catches_a_bad_field():
    _, problems = launch_template_data({"instanceType": "p5.48xlarge", "instanceMarketOptions": {"marketType": "cb"}})
    assert problems == [
        "launchTemplate.instanceMarketOptions.marketType: 'cb' is not one of MarketType "
        f"{EC2.shape_for('MarketType').enum}"
    ]
    _, problems = launch_template_data({"networkInterfaces": [{"securityGroupIds": ["sg-1"]}]})
    assert problems == [
        "launchTemplate.networkInterfaces[0].securityGroupIds: no member SecurityGroupIds in "
        "LaunchTemplateInstanceNetworkInterfaceSpecificationRequest"
    ]
    _, problems = launch_template_data({"metadataOptions": {"httpPutResponseHopLimit": "1"}})
    assert len(problems) == 1 and "Invalid type" in problems[0]


def test_every_supported_ami_type_and_taint_effect_exists_in_the_api():
    assert set(wellknown.AMI_TYPES) <= enum(EKS, "AMITypes")
    assert set(config.AmiType.__args__) == set(wellknown.AMI_TYPES)  # type: ignore[attr-defined]
    assert set(node_template.EKS_TAINT_EFFECTS.values()) == enum(EKS, "TaintEffect")
    assert set(config.CapacityType.__args__) <= enum(EKS, "CapacityTypes")  # type: ignore[attr-defined]
    assert set(config.LogType.__args__) == enum(EKS, "LogType")  # type: ignore[attr-defined]
    assert set(wellknown.CONTROL_PLANE_LOG_TYPES) == enum(EKS, "LogType")


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
