"""Whether `pulumi up` may take the stack's Kubernetes minor: the running cluster's version against it.

Why in the program and not only in `gpuplane preflight`: EKS upgrades a control plane one minor per
`UpdateClusterVersion` and never downgrades it. A stack file that skips a minor, or names one below the running
cluster's, reaches AWS only inside `pulumi up`, which then fails on the cluster's update with AWS's message. Read
first, the same rule (`components.plan.upgrade.jump_problem`, which preflight uses too) stops the program before it
registers anything, naming the path to take. Reading is best effort: a stack whose cluster does not exist yet, or
whose version cannot be read (no permission, no network), goes on, with a warning in the second case, and EKS
still refuses a bad step itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import botocore.exceptions
from botocore.config import Config

from gpuplane.components.plan import upgrade
from gpuplane.infra.aws.session import AwsError, client, stack_session

if TYPE_CHECKING:
    from gpuplane.infra.config import StackConfig

# One quick question, not a wait: the program must not hang on an unreachable endpoint before `pulumi up` starts.
_QUICK = Config(connect_timeout=5, read_timeout=10, retries={"mode": "standard", "total_max_attempts": 2})


def running_version(config: StackConfig) -> tuple[str | None, str | None]:
    """(the version the stack's cluster runs, None) or (None, why it could not be read); (None, None): no cluster."""
    try:
        session = stack_session(config.region, config.profile, config.assume_roles)
        eks = client(session, "eks", _QUICK)
        answer = eks.describe_cluster(name=config.cluster_name)["cluster"]
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return None, None
        return None, f"{exc.response.get('Error', {}).get('Code', 'error')}: {exc}"
    except (botocore.exceptions.BotoCoreError, AwsError) as exc:
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    version = answer.get("version")
    return (str(version), None) if version else (None, "the cluster reported no version")


def version_problem(config: StackConfig) -> tuple[str | None, str | None]:
    """(why EKS would refuse the stack's minor for the running cluster, None), or (None, a warning), or (None, None)."""
    running, unreadable = running_version(config)
    if unreadable:
        return None, (
            f"could not read the Kubernetes version cluster {config.cluster_name} runs ({unreadable}); if "
            f"cluster.kubernetesVersion skips a minor or goes below it, EKS refuses the cluster's update during the up "
            "(`gpuplane preflight` checks it first)"
        )
    if running is None:
        return None, None
    return upgrade.jump_problem(running, config.platform.cluster.kubernetes_version), None
