"""The gpuplane program: validated config -> the Platform component -> stack outputs.

Shared by `infra/__main__.py` (the real engine) and `gpuplane render` / the tests (mocks), so the
offline preview is the same code that `pulumi up` runs.
"""

from __future__ import annotations

from typing import Any

from gpuplane.components.platform import Platform
from gpuplane.infra.config import StackConfig


def build(config: StackConfig) -> dict[str, Any]:
    """Create the platform and return the stack outputs (name -> value or Output)."""
    platform = Platform(
        config.cluster_name,
        config.platform,
        region=config.region,
        aws_profile=config.profile,
        assume_roles=config.assume_roles,
    )
    outputs: dict[str, Any] = {
        "clusterName": platform.cluster.cluster_name,
        "endpoint": platform.cluster.endpoint,
        "kubeconfig": platform.cluster.kubeconfig,
        "oidcProviderArn": platform.cluster.oidc_provider_arn,
        "nodeGroups": {name: group.node_group_name for name, group in platform.node_groups.items()},
        "vpcId": platform.network.vpc_id,
        "privateSubnetIds": platform.network.private_subnet_ids,
        "publicSubnetIds": platform.network.public_subnet_ids,
        "availabilityZones": platform.network.availability_zones,
        "region": config.region,
        "workloadNamespace": platform.workspace.namespace,
    }
    if platform.storage is not None:
        outputs["fileSystemId"] = platform.storage.file_system_id
        outputs["volumes"] = platform.storage.volume_names
    return outputs
