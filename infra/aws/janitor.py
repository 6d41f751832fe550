"""The janitor: what `components.teardown` removes inside `pulumi destroy`, found and removed by hand.

Used after a destroy that failed, or that ran without `--run-program` (delete hooks need the program).
It finds the stack's VPC by our tags (`gpuplane:stack`, `gpuplane:project`), refuses to delete while the
EKS cluster still runs (its controllers would recreate what we delete, and live services would break),
and never includes volumes for a prod stack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
import botocore.exceptions

from gpuplane.components.destroy import teardown
from gpuplane.infra.aws.session import AwsError, client, explain
from gpuplane.infra.config import StackConfig


@dataclass
class Plan:
    """What the janitor would do for one stack."""

    config: StackConfig
    vpc_id: str | None
    cluster_status: str | None
    include_volumes: bool
    findings: teardown.Findings

    @property
    def blocked(self) -> str | None:
        """Why deleting is refused, or None."""
        if self.cluster_status is not None and self.cluster_status != "DELETING":
            return (
                f"EKS cluster {self.config.cluster_name} is {self.cluster_status}: its controllers would recreate "
                "what we delete. Run `pulumi destroy --run-program` (which removes the cluster first), or delete "
                "the cluster, then run the janitor again"
            )
        return None


def clients_for(session: boto3.session.Session) -> teardown.ClientFactory:
    """A cached client factory with the session's credentials and retry settings."""
    cache: dict[str, Any] = {}

    def factory(service: str) -> Any:
        if service not in cache:
            cache[service] = client(session, service)
        return cache[service]

    return factory


def stack_vpc(config: StackConfig, session: boto3.session.Session) -> str | None:
    """The stack's VPC, found by our tags; AwsError if several VPCs claim to be it."""
    answer = client(session, "ec2").describe_vpcs(
        Filters=[
            {"Name": "tag:gpuplane:stack", "Values": [config.stack]},
            {"Name": "tag:gpuplane:project", "Values": [config.project]},
        ]
    )
    vpcs = [vpc["VpcId"] for vpc in answer.get("Vpcs", [])]
    if len(vpcs) > 1:
        raise AwsError(
            f"{len(vpcs)} VPCs are tagged as stack {config.stack} of {config.project}: {vpcs}",
            "Nothing is deleted when the VPC is ambiguous; remove the stale tags, then run again",
        )
    return vpcs[0] if vpcs else None


def plan(config: StackConfig, session: boto3.session.Session, *, include_volumes: bool) -> Plan:
    """Scan without changing anything."""
    if include_volumes and config.platform.profile == "prod":
        raise AwsError(
            "volumes are never in scope for a prod stack (they hold its data)",
            "Delete a prod volume by hand after you have checked it",
        )
    clients = clients_for(session)
    try:
        vpc_id = stack_vpc(config, session)
        status = teardown.cluster_status(clients("eks"), config.cluster_name)
        scope = teardown.Scope(config.cluster_name, vpc_id or "", include_volumes)
        findings = teardown.find_orphans(clients, scope)
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise explain(exc, f"scanning stack {config.stack}") from None
    if vpc_id is None:  # without the VPC only volumes can be scoped; keep nothing VPC-bound by accident
        findings.orphans = [o for o in findings.orphans if o.kind == "volume"]
    return Plan(config, vpc_id, status, include_volumes, findings)


def execute(
    janitor_plan: Plan,
    session: boto3.session.Session,
    *,
    timeout_s: float = 900,
    log: Callable[[str], None] = lambda _msg: None,
) -> teardown.Outcome:
    """Delete what the plan found; AwsError if the plan is blocked."""
    if janitor_plan.blocked:
        raise AwsError(janitor_plan.blocked)
    scope = teardown.Scope(janitor_plan.config.cluster_name, janitor_plan.vpc_id or "", janitor_plan.include_volumes)
    try:
        return teardown.remove_orphans(
            clients_for(session), scope, janitor_plan.findings.orphans, timeout_s=timeout_s, log=log
        )
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise explain(exc, "deleting") from None
