"""GPU enablement and the autoscaler under mocks: Helm values, IAM, labels, and what is not installed."""

from __future__ import annotations

import json
from typing import Any

import yaml

from gpuplane.infra.mockrun import Recording
from gpuplane.manifests import observability, versions

RELEASE = "kubernetes:helm.sh/v3:Release"
SYSTEM = {"name": "system", "instanceTypes": ["m6i.large"]}


def release(rec: Recording, name: str) -> dict[str, Any]:
    found = [r.inputs for r in rec.by_type(RELEASE) if r.inputs["name"] == name]
    assert len(found) == 1, [r.inputs["name"] for r in rec.by_type(RELEASE)]
    return found[0]


def releases(rec: Recording) -> set[str]:
    return {r.inputs["name"] for r in rec.by_type(RELEASE)}


def labels(rec: Recording, group: str) -> dict[str, str]:
    ng = next(
        n for n in rec.by_type("aws:eks/nodeGroup:NodeGroup") if n.inputs["labels"]["gpuplane.io/node-group"] == group
    )
    return ng.inputs["labels"]


def test_device_plugin_only_on_gpu_nodes_with_gfd(dev_run):
    plugin = release(dev_run, "nvidia-device-plugin")
    assert (plugin["chart"], plugin["version"], plugin["namespace"]) == ("nvidia-device-plugin", "0.20.1", "nvidia-gpu")
    assert plugin["repositoryOpts"]["repo"] == "https://nvidia.github.io/k8s-device-plugin"
    values = plugin["values"]
    term = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term == [{"matchExpressions": [{"key": "gpuplane.io/device-plugin", "operator": "In", "values": ["true"]}]}]
    assert labels(dev_run, "gpu")["gpuplane.io/device-plugin"] == "true"
    assert "gpuplane.io/device-plugin" not in labels(dev_run, "system")
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["tolerations"]
    assert values["gfd"] == {"enabled": True}
    assert values["priorityClassName"] == "system-node-critical"
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["nfd"]["worker"][
        "tolerations"
    ]
    assert set(values["config"]["map"]) == {"default", "gpu"}
    assert values["config"]["default"] == "default"
    assert labels(dev_run, "gpu")["nvidia.com/device-plugin.config"] == "gpu"


def test_time_slicing_config_label_and_autoscaler_resource(run_platform):
    rec = run_platform(
        {
            "nodeGroups": [
                SYSTEM,
                {
                    "name": "shared",
                    "kind": "gpu",
                    "instanceTypes": ["g5.12xlarge"],
                    "sharing": {"timeSlicing": {"replicas": 4}},
                },
            ]
        }
    )
    config = yaml.safe_load(release(rec, "nvidia-device-plugin")["values"]["config"]["map"]["shared"])
    assert config["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    node_labels = labels(rec, "shared")
    assert node_labels["nvidia.com/device-plugin.config"] == "shared"
    assert node_labels["gpuplane.io/gpu-memory-per-unit-mib"] == str(22888 // 4)
    tags = {
        t.inputs["tag"]["key"]: t.inputs["tag"]["value"]
        for t in rec.by_type("aws:autoscaling/tag:Tag")
        if "-shared" in (t.parent or "")
    }
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "16"  # 4 GPUs x 4


def test_bottlerocket_only_cluster_gets_no_plugin(run_platform):
    rec = run_platform(
        {
            "nodeGroups": [
                SYSTEM,
                {
                    "name": "rocket",
                    "kind": "gpu",
                    "instanceTypes": ["g6.xlarge"],
                    "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
                },
            ]
        }
    )
    assert "nvidia-device-plugin" not in releases(rec) and "gpu-operator" not in releases(rec)
    assert "dcgm-exporter" in releases(rec)


def test_no_gpu_groups_no_nvidia_namespace(run_platform):
    rec = run_platform({"nodeGroups": [SYSTEM]})
    assert releases(rec) == {"cluster-autoscaler", "kube-prometheus-stack"}  # metrics are on by default
    assert {n.inputs["metadata"]["name"] for n in rec.by_type("kubernetes:core/v1:Namespace")} == {"ml", "monitoring"}


def test_operator_mode(run_platform):
    rec = run_platform(
        {
            "nodeGroups": [
                SYSTEM,
                {
                    "name": "op",
                    "kind": "gpu",
                    "instanceTypes": ["p4d.24xlarge"],
                    "driver": "operator",
                    "sharing": {"mig": {"profile": "all-1g.5gb"}},
                },
                {"name": "plain", "kind": "gpu", "instanceTypes": ["g5.xlarge"]},
            ]
        }
    )
    assert "nvidia-device-plugin" not in releases(rec) and "dcgm-exporter" not in releases(rec)
    op = release(rec, "gpu-operator")
    assert (op["chart"], op["version"], op["repositoryOpts"]["repo"]) == (
        "gpu-operator",
        "v26.7.0",
        "https://helm.ngc.nvidia.com/nvidia",
    )
    values = op["values"]
    assert values["driver"] == {"enabled": False}  # the EKS NVIDIA AMI has driver and toolkit
    assert values["toolkit"] == {"enabled": False}
    assert values["migManager"] == {"enabled": True}
    # The ServiceMonitor is written on (Prometheus runs) whatever the operator's default (v26.7 turns it on), and
    # the exporter uses the node monitoring agent's DCGM host engine (repair is on by default).
    # The ClusterPolicy's env takes name/value only: the agent's engine is reached on localhost, host network on
    # (tests/components/test_gpu_operator_crd.py validates the whole subtree against the CRD).
    assert values["dcgmExporter"] == {
        "enabled": True,
        "serviceMonitor": observability.dcgm_service_monitor_values(True),
        "env": [{"name": "DCGM_REMOTE_HOSTENGINE_INFO", "value": "localhost:5555"}],
        "hostNetwork": True,
        "config": {
            "name": observability.DCGM_COUNTERS_CONFIG_MAP,
            "create": True,
            "data": observability.dcgm_counters_csv(),
        },
    }
    assert set(values["devicePlugin"]["config"]["data"]) == {"default", "op", "plain"}
    assert labels(rec, "op")["nvidia.com/mig.config"] == "all-1g.5gb"
    assert labels(rec, "plain")["nvidia.com/gpu.deploy.driver"] == "false"  # the AMI has it
    assert "gpuplane.io/device-plugin" not in labels(rec, "plain")


def test_dcgm_exporter_is_optional(run_platform, dev_run):
    dcgm = release(dev_run, "dcgm-exporter")
    assert dcgm["values"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    rec = run_platform({"observability": {"dcgmExporter": False}})
    assert "dcgm-exporter" not in releases(rec)


def test_autoscaler_discovers_our_groups_and_may_only_scale_them(dev_run):
    ca = release(dev_run, "cluster-autoscaler")
    assert (ca["chart"], ca["version"], ca["namespace"]) == ("cluster-autoscaler", "9.59.0", "kube-system")
    values = ca["values"]
    assert values["autoDiscovery"] == {
        "clusterName": "gpuplane-dev",
        "tags": ["k8s.io/cluster-autoscaler/enabled", "k8s.io/cluster-autoscaler/gpuplane-dev"],
    }
    assert values["image"]["tag"] == versions.CLUSTER_AUTOSCALER_IMAGES[versions.DEFAULT_KUBERNETES_VERSION]
    assert values["awsRegion"] == "us-west-2"
    assert values["extraArgs"]["startup-taint"] == "efs.csi.aws.com/agent-not-ready"
    # the ASGs carry exactly the discovery tags the autoscaler looks for
    for tag in values["autoDiscovery"]["tags"]:
        assert any(t.inputs["tag"]["key"] == tag for t in dev_run.by_type("aws:autoscaling/tag:Tag"))
    association = dev_run.one(
        "aws:eks/podIdentityAssociation:PodIdentityAssociation", "gpuplane-dev-autoscaler-pod-identity"
    ).inputs
    assert (association["namespace"], association["serviceAccount"]) == ("kube-system", "cluster-autoscaler")
    assert values["rbac"]["serviceAccount"]["name"] == "cluster-autoscaler"
    role = next(r for r in dev_run.by_type("aws:iam/role:Role") if r.name.endswith("autoscaler-role"))
    assert association["roleArn"] == role.outputs["arn"]
    assert json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Principal"] == {
        "Service": "pods.eks.amazonaws.com"
    }
    policy = json.loads(dev_run.one("aws:iam/rolePolicy:RolePolicy", "gpuplane-dev-autoscaler-policy").inputs["policy"])
    scale = next(s for s in policy["Statement"] if "autoscaling:SetDesiredCapacity" in s["Action"])
    assert scale["Condition"] == {"StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/gpuplane-dev": "owned"}}


def test_dev_gpu_group_scales_from_zero(dev_run):
    gpu = next(
        n
        for n in dev_run.by_type("aws:eks/nodeGroup:NodeGroup")
        if n.inputs["labels"]["gpuplane.io/node-group"] == "gpu"
    )
    assert gpu.inputs["scalingConfig"]["minSize"] == 0


def test_autoscaler_can_be_switched_off(run_platform):
    rec = run_platform({"autoscaler": {"enabled": False}})
    assert "cluster-autoscaler" not in releases(rec)
    # Only Alertmanager's (issue 29) remains: no role for an autoscaler that does not run.
    assert [
        a.inputs["serviceAccount"] for a in rec.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    ] == ["gpuplane-alertmanager"]


def test_gpu_nodes_carry_the_autoscaler_accelerator_label(dev_run):
    assert labels(dev_run, "gpu")["k8s.amazonaws.com/accelerator"] == "nvidia-a10g"
    assert "k8s.amazonaws.com/accelerator" not in labels(dev_run, "system")
    tags = {t.inputs["tag"]["key"]: t.inputs["tag"]["value"] for t in dev_run.by_type("aws:autoscaling/tag:Tag")}
    assert tags["k8s.io/cluster-autoscaler/node-template/label/k8s.amazonaws.com/accelerator"] == "nvidia-a10g"
