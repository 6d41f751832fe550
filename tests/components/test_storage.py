"""SharedStorage under mocks: EFS placement, access, data safety per stack, and the destroy order."""

from __future__ import annotations

import json

import kubernetes_validate
import pytest

from gpuplane.infra.mockrun import RecordedResource, Recording
from gpuplane.manifests import storage as objects

FS = "aws:efs/fileSystem:FileSystem"
MT = "aws:efs/mountTarget:MountTarget"
AP = "aws:efs/accessPoint:AccessPoint"


def depends(rec: Recording, a: RecordedResource, b: RecordedResource) -> bool:
    """True if `a` depends on `b`, directly or through other resources (Pulumi deletes `a` first)."""
    seen, stack = set(), [a.urn]
    while stack:
        urn = stack.pop()
        for dep in rec.get(urn).dependencies:
            if dep == b.urn:
                return True
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return False


@pytest.mark.parametrize("azs", [2, 3])
def test_one_mount_target_per_private_subnet_each_in_its_own_az(run_platform, azs):
    rec = run_platform({"network": {"azCount": azs}})
    subnets = {s.id: s for s in rec.by_type("aws:ec2/subnet:Subnet")}
    targets = rec.by_type(MT)
    assert len(targets) == azs
    assert sorted(t.inputs["subnetId"] for t in targets) == sorted(rec.outputs["privateSubnetIds"])
    assert len({subnets[t.inputs["subnetId"]].inputs["availabilityZone"] for t in targets}) == azs
    fs = rec.one(FS)
    assert all(t.inputs["fileSystemId"] == fs.id for t in targets)


def test_only_nfs_from_the_node_security_group(dev_run):
    sg = next(s for s in dev_run.by_type("aws:ec2/securityGroup:SecurityGroup") if s.name.endswith("efs-sg"))
    assert "ingress" not in sg.inputs and "egress" not in sg.inputs  # no inline rules to drift
    (rule,) = dev_run.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    cluster = dev_run.one("aws:eks/cluster:Cluster")
    assert rule.inputs["securityGroupId"] == sg.id
    assert rule.inputs["referencedSecurityGroupId"] == cluster.outputs["vpcConfig"]["clusterSecurityGroupId"]
    assert (rule.inputs["ipProtocol"], rule.inputs["fromPort"], rule.inputs["toPort"]) == ("tcp", 2049, 2049)
    assert "cidrIpv4" not in rule.inputs
    assert all(t.inputs["securityGroups"] == [sg.id] for t in dev_run.by_type(MT))


def test_encrypted_elastic_and_tls_only(dev_run):
    fs = dev_run.one(FS).inputs
    assert fs["encrypted"] is True
    assert (fs["performanceMode"], fs["throughputMode"]) == ("generalPurpose", "elastic")
    policy = json.loads(dev_run.one("aws:efs/fileSystemPolicy:FileSystemPolicy").inputs["policy"])
    deny = next(s for s in policy["Statement"] if s["Effect"] == "Deny")
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert deny["Resource"] == dev_run.one(FS).outputs["arn"]
    allow = next(s for s in policy["Statement"] if s["Effect"] == "Allow")
    assert "elasticfilesystem:ClientRootAccess" not in allow["Action"]


def test_provisioned_throughput_is_passed(run_platform):
    rec = run_platform({"storage": {"throughputMode": "provisioned", "provisionedThroughputMibps": 256}})
    fs = rec.one(FS).inputs
    assert (fs["throughputMode"], fs["provisionedThroughputInMibps"]) == ("provisioned", 256)


@pytest.mark.parametrize("identity", ["podIdentity", "irsa"])
def test_csi_addon_identity_is_wired_to_the_controller_service_account(run_platform, identity):
    rec = run_platform({"storage": {"csiIdentity": identity}})
    addon = next(a for a in rec.by_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "aws-efs-csi-driver")
    role = next(r for r in rec.by_type("aws:iam/role:Role") if r.name.endswith("efs-csi-role"))
    attachment = next(
        r for r in rec.by_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment") if r.name.endswith("efs-csi-policy")
    )
    assert attachment.inputs["policyArn"] == "arn:aws:iam::aws:policy/service-role/AmazonEFSCSIDriverPolicy"
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]
    if identity == "podIdentity":
        assert addon.inputs["podIdentityAssociations"] == [
            {"roleArn": role.outputs["arn"], "serviceAccount": "efs-csi-controller-sa"}
        ]
        assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
        assert "serviceAccountRoleArn" not in addon.inputs
    else:
        assert addon.inputs["serviceAccountRoleArn"] == role.outputs["arn"]
        assert "system:serviceaccount:kube-system:efs-csi-controller-sa" in trust["Condition"]["StringEquals"].values()
    pod_identity_agent = next(
        a for a in rec.by_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "eks-pod-identity-agent"
    )
    assert pod_identity_agent.urn in addon.dependencies
    # The controller runs on the system group; the driver never waits for a GPU group.
    for ng in rec.by_type("aws:eks/nodeGroup:NodeGroup"):
        is_system = ng.inputs["labels"]["gpuplane.io/node-group"] == "system"
        assert (ng.urn in addon.dependencies) is is_system, ng.urn


def test_storage_objects_are_valid_and_bound_by_name(dev_run):
    k8s = {
        r.inputs["kind"] + "/" + r.inputs["metadata"]["name"]: r.inputs
        for r in dev_run.resources
        if r.type.startswith("kubernetes:core/v1:Persistent")
        or (r.type == "kubernetes:storage.k8s.io/v1:StorageClass" and r.inputs["provisioner"] == "efs.csi.aws.com")
    }  # the EBS class of Prometheus's volume: tests/manifests/test_prometheus_volume.py
    assert set(k8s) == {
        "StorageClass/efs-ap",
        *(f"PersistentVolume/ml-{v}" for v in ("models", "datasets", "logs")),
        *(f"PersistentVolumeClaim/{v}" for v in ("models", "datasets", "logs")),
    }
    for obj in k8s.values():
        kubernetes_validate.validate(obj, "1.35", strict=True)
    sc = k8s["StorageClass/efs-ap"]
    fs = dev_run.one(FS)
    assert sc["parameters"] == {
        "provisioningMode": "efs-ap",
        "fileSystemId": fs.id,
        "directoryPerms": "750",
        "uid": "10001",
        "gid": "10001",
        "basePath": "/dynamic",
        "subPathPattern": "${.PVC.namespace}/${.PVC.name}",
        "ensureUniqueDirectory": "true",
    }
    aps = {a.inputs["rootDirectory"]["path"]: a for a in dev_run.by_type(AP)}
    assert set(aps) == {"/models", "/datasets", "/logs"}
    models_ap = aps["/models"]
    assert models_ap.inputs["posixUser"] == {"uid": 10001, "gid": 10001}
    pv = k8s["PersistentVolume/ml-models"]["spec"]
    assert pv["csi"]["volumeHandle"] == f"{fs.id}::{models_ap.id}"
    assert pv["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv["accessModes"] == ["ReadWriteMany"]
    assert pv["claimRef"] == {"namespace": "ml", "name": "models"}
    pvc = k8s["PersistentVolumeClaim/models"]
    assert pvc["metadata"]["namespace"] == "ml"
    assert (pvc["spec"]["storageClassName"], pvc["spec"]["volumeName"]) == ("", "ml-models")


def test_dynamic_volume_is_a_claim_on_the_storage_class(run_platform):
    rec = run_platform({"storage": {"volumes": [{"name": "scratch", "provisioning": "dynamic", "size": "1Ti"}]}})
    assert rec.by_type(AP) == [] and rec.by_type("kubernetes:core/v1:PersistentVolume") == []
    pvc = rec.one("kubernetes:core/v1:PersistentVolumeClaim").inputs
    assert pvc["spec"]["storageClassName"] == "efs-ap"
    assert pvc["spec"]["resources"] == {"requests": {"storage": "1Ti"}}


def test_prod_protects_and_retains_data_and_backs_it_up(prod_run, dev_run):
    for rec, on in ((prod_run, True), (dev_run, False)):
        fs = rec.one(FS)
        assert (fs.protect, fs.retain_on_delete) == (on, on)
        # Pointers to the data, made again by the next `up`: never protected (they would keep the cluster).
        pointers = [*rec.by_type(AP), *rec.by_type("kubernetes:core/v1:PersistentVolume")]
        pointers += rec.by_type("kubernetes:core/v1:PersistentVolumeClaim")
        assert len(pointers) == 3 + 3 + 3
        assert all((r.protect, r.retain_on_delete) == (False, False) for r in pointers)
        backup = rec.one("aws:efs/backupPolicy:BackupPolicy")
        assert backup.inputs["backupPolicy"]["status"] == ("ENABLED" if on else "DISABLED")
        # Backups and TLS enforcement stay with a retained file system.
        for policy in (backup, rec.one("aws:efs/fileSystemPolicy:FileSystemPolicy")):
            assert (policy.protect, policy.retain_on_delete) == (on, on), policy.urn
    # Infrastructure around the data stays deletable, so a destroy can remove the rest.
    assert not any(t.protect for t in prod_run.by_type(MT))


def test_destroy_order_follows_the_dependency_graph(dev_run):
    fs = dev_run.one(FS)
    sg = next(s for s in dev_run.by_type("aws:ec2/securityGroup:SecurityGroup") if s.name.endswith("efs-sg"))
    addon = next(a for a in dev_run.by_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "aws-efs-csi-driver")
    cluster = dev_run.one("aws:eks/cluster:Cluster")
    for target in dev_run.by_type(MT):  # mount targets go before the file system and their security group
        assert depends(dev_run, target, fs) and depends(dev_run, target, sg)
    volumes = [r for r in dev_run.resources if r.type.startswith("kubernetes:") and "Persistent" in r.type]
    volumes.append(dev_run.one("kubernetes:storage.k8s.io/v1:StorageClass", "gpuplane-dev-storage-sc"))
    for volume in volumes:  # Kubernetes volumes before the CSI driver and the cluster
        assert depends(dev_run, volume, addon), volume.urn
        assert depends(dev_run, volume, cluster), volume.urn
    assert depends(dev_run, addon, cluster)
    for ng in dev_run.by_type("aws:eks/nodeGroup:NodeGroup"):  # the driver before the nodes it runs on
        if ng.inputs["labels"]["gpuplane.io/node-group"] == "system":
            assert depends(dev_run, addon, ng)


def test_storage_can_be_switched_off(run_platform):
    rec = run_platform({"storage": {"enabled": False}})
    assert rec.by_type(FS) == [] and "fileSystemId" not in rec.outputs
    assert all(
        "efs.csi.aws.com/agent-not-ready" not in [t["key"] for t in ng.inputs["taints"]]
        for ng in rec.by_type("aws:eks/nodeGroup:NodeGroup")
    )


def test_binding_an_undefined_volume_names_the_defined_ones():
    with pytest.raises(
        ValueError, match=r"volume 'checkpoints' is not defined in gpuplane:storage\.volumes; defined: models, logs"
    ):
        objects.volume_mount("checkpoints", ["models", "logs"], "/ckpt")
    volume, mount = objects.volume_mount("models", ["models", "logs"], "/models", read_only=True)
    assert volume == {"name": "models", "persistentVolumeClaim": {"claimName": "models", "readOnly": True}}
    assert mount == {"name": "models", "mountPath": "/models", "readOnly": True}
