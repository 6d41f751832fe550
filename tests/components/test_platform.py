"""Component tests under mocks: the values `pulumi up` would send, and the graph it would build."""

from __future__ import annotations

import json

import pytest

from gpuplane.infra.mockrun import RecordedResource, Recording

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ASG_TAG = "aws:autoscaling/tag:Tag"
CA = "k8s.io/cluster-autoscaler"


def group(rec: Recording, name: str) -> RecordedResource:
    return next(r for r in rec.by_type(NODE_GROUP) if r.inputs["labels"]["gpuplane.io/node-group"] == name)


def sibling(rec: Recording, of: RecordedResource, type_: str) -> list[RecordedResource]:
    return [r for r in rec.resources if r.parent == of.parent and r.type == type_]


def asg_tags(rec: Recording, name: str) -> dict[str, str]:
    ng = group(rec, name)
    tags = sibling(rec, ng, ASG_TAG)
    asg = ng.outputs["resources"][0]["autoscalingGroups"][0]["name"]
    assert {t.inputs["autoscalingGroupName"] for t in tags} == {asg}
    assert all(t.inputs["tag"]["propagateAtLaunch"] is False for t in tags)
    return {t.inputs["tag"]["key"]: t.inputs["tag"]["value"] for t in tags}


def test_gpu_group_gets_nvidia_ami_label_and_taint(dev_run):
    gpu = group(dev_run, "gpu").inputs
    assert gpu["amiType"] == "AL2023_x86_64_NVIDIA"
    assert gpu["capacityType"] == "SPOT"
    assert gpu["labels"]["nvidia.com/gpu.present"] == "true"
    assert gpu["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
        {"key": "efs.csi.aws.com/agent-not-ready", "value": "", "effect": "NO_EXECUTE"},
    ]
    assert gpu["scalingConfig"] == {"minSize": 0, "desiredSize": 0, "maxSize": 2}
    system = group(dev_run, "system").inputs
    assert system["amiType"] == "AL2023_x86_64_STANDARD"
    # only the EFS driver's startup taint, which its node agent removes
    assert system["taints"] == [{"key": "efs.csi.aws.com/agent-not-ready", "value": "", "effect": "NO_EXECUTE"}]
    assert "nvidia.com/gpu.present" not in system["labels"]


def test_desired_size_is_left_to_the_autoscaler(dev_run):
    assert group(dev_run, "gpu").ignore_changes == ["scalingConfig.desiredSize"]


@pytest.mark.parametrize(("name", "disk"), [("gpu", 100), ("system", 50)])
def test_launch_template_requires_imdsv2_and_encrypts_gp3_root(dev_run, name, disk):
    ng = group(dev_run, name)
    (lt,) = sibling(dev_run, ng, LAUNCH_TEMPLATE)
    assert lt.inputs["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpTokens": "required",
        "httpPutResponseHopLimit": 1,
    }
    (device,) = lt.inputs["blockDeviceMappings"]
    assert device["deviceName"] == "/dev/xvda"
    assert device["ebs"] == {
        "volumeSize": disk,
        "volumeType": "gp3",
        "encrypted": "true",
        "deleteOnTermination": "true",
    }
    assert ng.inputs["launchTemplate"] == {"id": lt.id, "version": "1"}
    assert lt.urn in ng.dependencies


def test_node_role_has_only_what_nodes_need(dev_run):
    ng = group(dev_run, "gpu")
    policies = {
        r.inputs["policyArn"] for r in sibling(dev_run, ng, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    }
    assert policies == {
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
    }
    (role,) = sibling(dev_run, ng, "aws:iam/role:Role")
    trust = json.loads(role.inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}


def test_gpu_group_asg_tags_allow_scale_from_zero(dev_run):
    tags = asg_tags(dev_run, "gpu")
    assert tags[f"{CA}/enabled"] == "true"
    assert tags[f"{CA}/gpuplane-dev"] == "owned"
    assert tags[f"{CA}/node-template/resources/nvidia.com/gpu"] == "1"
    assert tags[f"{CA}/node-template/label/nvidia.com/gpu.present"] == "true"
    assert tags[f"{CA}/node-template/taint/nvidia.com/gpu"] == "true:NoSchedule"
    assert tags[f"{CA}/node-template/label/kubernetes.io/arch"] == "amd64"
    system = asg_tags(dev_run, "system")
    assert f"{CA}/node-template/resources/nvidia.com/gpu" not in system
    assert not any("/taint/" in key for key in system)


def test_multi_gpu_and_arm_groups(run_platform):
    rec = run_platform(
        {
            "nodeGroups": [
                {"name": "system", "instanceTypes": ["m7g.large"]},
                {"name": "big", "kind": "gpu", "instanceTypes": ["p4d.24xlarge"], "minSize": 0},
                {"name": "armgpu", "kind": "gpu", "instanceTypes": ["g5g.xlarge"], "gpuTaint": False},
                {
                    "name": "rocket",
                    "kind": "gpu",
                    "instanceTypes": ["g6.xlarge"],
                    "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
                },
            ]
        }
    )
    assert group(rec, "system").inputs["amiType"] == "AL2023_ARM_64_STANDARD"
    assert group(rec, "armgpu").inputs["amiType"] == "AL2023_ARM_64_NVIDIA"
    assert [t["key"] for t in group(rec, "armgpu").inputs["taints"]] == ["efs.csi.aws.com/agent-not-ready"]
    assert asg_tags(rec, "big")[f"{CA}/node-template/resources/nvidia.com/gpu"] == "8"
    assert asg_tags(rec, "armgpu")[f"{CA}/node-template/label/kubernetes.io/arch"] == "arm64"
    (lt,) = sibling(rec, group(rec, "rocket"), LAUNCH_TEMPLATE)
    assert lt.inputs["blockDeviceMappings"][0]["deviceName"] == "/dev/xvdb"


@pytest.mark.parametrize(("fixture", "azs", "nats"), [("dev_run", 2, 1), ("prod_run", 3, 3)])
def test_subnets_span_distinct_azs_with_discovery_tags(request, fixture, azs, nats):
    rec: Recording = request.getfixturevalue(fixture)
    subnets = rec.by_type("aws:ec2/subnet:Subnet")
    private = [s for s in subnets if "kubernetes.io/role/internal-elb" in s.inputs["tags"]]
    public = [s for s in subnets if "kubernetes.io/role/elb" in s.inputs["tags"]]
    assert len(private) == len(public) == azs
    assert len({s.inputs["availabilityZone"] for s in private}) == azs
    assert {s.inputs["availabilityZone"] for s in private} == {s.inputs["availabilityZone"] for s in public}
    cluster_name = rec.outputs["clusterName"]
    assert all(s.inputs["tags"][f"kubernetes.io/cluster/{cluster_name}"] == "shared" for s in subnets)
    assert all(s.inputs["mapPublicIpOnLaunch"] is False for s in public)
    assert len(rec.by_type("aws:ec2/natGateway:NatGateway")) == nats
    # Nodes and the control plane ENIs go to the private subnets only.
    private_ids = sorted(s.id or "" for s in private)
    assert sorted(rec.outputs["privateSubnetIds"]) == private_ids
    assert sorted(rec.one("aws:eks/cluster:Cluster").inputs["vpcConfig"]["subnetIds"]) == private_ids
    for ng in rec.by_type(NODE_GROUP):
        assert sorted(ng.inputs["subnetIds"]) == private_ids


def test_prod_private_routes_use_the_nat_in_their_own_az(prod_run):
    by_urn = {r.urn: r for r in prod_run.resources}
    routes = [r for r in prod_run.by_type("aws:ec2/route:Route") if "natGatewayId" in r.inputs]
    assert len(routes) == 3
    for route in routes:
        nat_urn = next(d for d in route.dependencies if "natGateway" in d)
        index = route.name.split("-private-")[1].split("-")[0]
        assert by_urn[nat_urn].name.endswith(f"-nat-{index}")


def test_endpoint_access_per_stack(dev_run, prod_run):
    dev = dev_run.one("aws:eks/cluster:Cluster").inputs["vpcConfig"]
    assert dev["endpointPrivateAccess"] is True and dev["endpointPublicAccess"] is True
    assert dev["publicAccessCidrs"] == ["203.0.113.0/24"]
    prod = prod_run.one("aws:eks/cluster:Cluster").inputs["vpcConfig"]
    assert prod["endpointPrivateAccess"] is True and prod["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in prod


def test_secrets_are_encrypted_with_a_rotating_key_of_its_own(prod_run):
    key = prod_run.one("aws:kms/key:Key", "gpuplane-prod-cluster-secrets-key")  # logs and EFS have keys too
    assert key.inputs["enableKeyRotation"] is True
    cluster = prod_run.one("aws:eks/cluster:Cluster")
    assert cluster.inputs["encryptionConfig"] == {"provider": {"keyArn": key.outputs["arn"]}, "resources": ["secrets"]}
    assert key.urn in cluster.dependencies


@pytest.mark.parametrize(
    ("fixture", "logs", "retention"),
    [
        ("dev_run", ["api", "audit", "authenticator"], 7),
        ("prod_run", ["api", "audit", "authenticator", "controllerManager", "scheduler"], 90),
    ],
)
def test_control_plane_logs(request, fixture, logs, retention):
    rec: Recording = request.getfixturevalue(fixture)
    cluster = rec.one("aws:eks/cluster:Cluster")
    assert cluster.inputs["enabledClusterLogTypes"] == logs
    group_ = rec.one("aws:cloudwatch/logGroup:LogGroup", f"{cluster.inputs['name']}-cluster-logs")  # + flow logs
    assert group_.inputs["name"] == f"/aws/eks/{cluster.inputs['name']}/cluster"
    assert group_.inputs["retentionInDays"] == retention
    assert group_.urn in cluster.dependencies  # exists before EKS would create it without retention


def test_access_entries_and_authentication_mode(prod_run):
    cluster = prod_run.one("aws:eks/cluster:Cluster").inputs
    assert cluster["accessConfig"] == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True}
    (entry,) = prod_run.by_type("aws:eks/accessEntry:AccessEntry")
    assert entry.inputs["principalArn"] == "arn:aws:iam::123456789012:role/platform-admin"
    (policy,) = prod_run.by_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert policy.inputs["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
    assert policy.inputs["accessScope"] == {"type": "cluster"}
    provider = prod_run.one("pulumi:providers:kubernetes")
    assert policy.urn in provider.dependencies
    assert provider.inputs["kubeconfig"] == "[secret]"


def test_core_addons_order_and_cni_identity(dev_run):
    addons = {a.inputs["addonName"]: a for a in dev_run.by_type("aws:eks/addon:Addon")}
    # metrics-server: the dev stack's serving variant has an HPA (tests/workloads).
    core = {"vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent", "aws-efs-csi-driver"}
    # eks-node-monitoring-agent: node auto repair is on by default (issue 29), and acts on the agent's conditions.
    # aws-ebs-csi-driver: the in-cluster Prometheus (the default `metrics: prometheus`) keeps its data on EBS.
    assert set(addons) == core | {"metrics-server", "eks-node-monitoring-agent", "aws-ebs-csi-driver"}
    for ng in dev_run.by_type(NODE_GROUP):
        assert addons["vpc-cni"].urn in ng.dependencies
        assert addons["eks-pod-identity-agent"].urn in ng.dependencies
        # coredns needs nodes, but only the system (untainted CPU) groups, never a GPU group
        is_system = ng.inputs["labels"]["gpuplane.io/node-group"] == "system"
        assert (ng.urn in addons["coredns"].dependencies) is is_system
    cni_role = next(r for r in dev_run.by_type("aws:iam/role:Role") if r.name.endswith("vpc-cni-role"))
    assert addons["vpc-cni"].inputs["serviceAccountRoleArn"] == cni_role.outputs["arn"]
    trust = json.loads(cni_role.inputs["assumeRolePolicy"])
    condition = trust["Statement"][0]["Condition"]["StringEquals"]
    assert any(v == "system:serviceaccount:kube-system:aws-node" for v in condition.values())


def test_oidc_provider_for_irsa(dev_run):
    oidc = dev_run.one("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    cluster = dev_run.one("aws:eks/cluster:Cluster")
    assert oidc.inputs["url"] == cluster.outputs["identities"][0]["oidcs"][0]["issuer"]
    assert oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]


def test_component_tree(dev_run):
    platform = dev_run.one("gpuplane:index:Platform")
    assert platform.parent is None or platform.parent.endswith("pulumi:pulumi:Stack::gpuplane-dev")
    children = {r.type for r in dev_run.children(platform.urn)}
    assert children == {
        "gpuplane:index:Network",
        "gpuplane:index:Cluster",
        "gpuplane:index:NodeGroup",
        "gpuplane:index:Workspace",
        "gpuplane:index:SharedStorage",
        "gpuplane:index:GpuEnablement",
        "gpuplane:index:ClusterAutoscaler",
        "gpuplane:index:TfServing",  # the dev stack's example model
        "aws:eks/addon:Addon",  # metrics-server, for its HPA; the node monitoring agent, for node repair
        "gpuplane:index:Observability",  # kube-prometheus-stack, rules, dashboards (metrics on by default)
        "gpuplane:index:TfTraining",  # the dev stack's example training workload
        "gpuplane:index:TrainingQueue",  # Kueue, because the dev stack declares training
        "kubernetes:core/v1:Namespace",  # jobset-system
        "kubernetes:helm.sh/v3:Release",  # the JobSet controller
        # the ProvisioningRequest CRD: dev's autoscaler image (1.36.1) has the fix, so the queue uses it
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
    }
    for ng in dev_run.by_type(NODE_GROUP):
        parent = dev_run.get(ng.parent or "")
        assert parent.type == "gpuplane:index:NodeGroup" and parent.parent == platform.urn
    assert all(r.parent is not None for r in dev_run.resources if r.custom)


def test_every_taggable_resource_carries_stack_tags(prod_run):
    tagged = [r for r in prod_run.resources if r.custom and "tags" in r.inputs]
    assert len(tagged) > 20
    for r in tagged:
        assert r.inputs["tags"]["gpuplane:stack"] == "prod", r.urn
        assert r.inputs["tags"]["gpuplane:project"] == "gpuplane", r.urn


def test_kubeconfig_output_is_secret(dev_run):
    assert dev_run.outputs["kubeconfig"] == "[secret]"
    groups = dev_run.outputs["nodeGroups"]
    assert set(groups) == {"system", "gpu"}
    assert all(name.startswith(f"{key}-") for key, name in groups.items())  # generated from the prefix
