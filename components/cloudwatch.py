"""`observability.metrics: cloudwatch`: Container Insights with enhanced observability, its alarms and GPU dashboard.

Why its own component and not a branch of `Observability`: nothing of the Prometheus path is shared (no chart, no
rules file, no scrape job, no Grafana); what is shared is the alert topic's choice (the stack's or
`alertTopicArn`), which is small enough to state again here with the reason it differs (see `_topic`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from gpuplane.components import kms
from gpuplane.components.addon_versions import addon_version
from gpuplane.components.config import ObservabilityArgs
from gpuplane.components.control_plane import ControlPlane, deprecated_context
from gpuplane.components.plan import iam_policies
from gpuplane.components.pod_identity import addon_role
from gpuplane.manifests import cloudwatch, wellknown


class CloudWatchObservability(pulumi.ComponentResource):
    """The `amazon-cloudwatch-observability` add-on with its agent's Pod Identity role, alarms and a dashboard.

    The add-on runs the CloudWatch agent on every node and its own dcgm-exporter on NVIDIA instance types
    (`accelerated_compute_metrics`), so the platform turns gpuplane's exporter off with this backend. The
    agent's credentials come from EKS Pod Identity: the add-on's `podIdentityAssociations` (add-on v3.1.0 or
    later) associate the role with the agent's service account, and EKS deletes the association with the add-on.
    """

    addon: aws.eks.Addon
    alert_topic_arn: pulumi.Input[str]
    dashboard: aws.cloudwatch.Dashboard

    def __init__(
        self,
        name: str,
        args: ObservabilityArgs,
        *,
        cluster: ControlPlane,
        after: Sequence[pulumi.Resource] | None = None,
        tags: dict[str, str] | None = None,
        cluster_name: str | None = None,
        region: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`after`: what the agent's pods need first (default `cluster.services_ready`).

        `tags`: added to the cluster's. `cluster_name`, `region`: deprecated, the cluster's.
        """
        for keyword, given, known in (
            ("cluster_name", cluster_name, cluster.eks_name),
            ("region", region, cluster.region),
        ):
            if given is not None:
                deprecated_context("CloudWatchObservability", keyword, given, known)
        cluster_name, region = cluster.eks_name, cluster.region
        after = cluster.services_ready if after is None else after
        tags = {**cluster.tags, **(tags or {})}
        super().__init__("gpuplane:index:CloudWatchObservability", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role, attached = addon_role(
            f"{name}-agent",
            parent=self,
            cluster=cluster,
            namespace=wellknown.CLOUDWATCH_NAMESPACE,
            service_account=wellknown.CLOUDWATCH_AGENT_SA,
            policy=wellknown.POLICY_CLOUDWATCH_AGENT,
            description=f"CloudWatch agent of {cluster_name}: Container Insights metrics",
            tags=tags,
        )
        self.addon = aws.eks.Addon(
            f"{name}-addon-{wellknown.ADDON_CLOUDWATCH_OBSERVABILITY}",
            cluster_name=cluster.cluster_name,
            addon_name=wellknown.ADDON_CLOUDWATCH_OBSERVABILITY,
            addon_version=addon_version(wellknown.ADDON_CLOUDWATCH_OBSERVABILITY, cluster.kubernetes_version, self),
            configuration_values=json.dumps(cloudwatch.addon_configuration(), sort_keys=True),
            pod_identity_associations=[
                aws.eks.AddonPodIdentityAssociationArgs(
                    role_arn=role.arn, service_account=wellknown.CLOUDWATCH_AGENT_SA
                )
            ],
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=tags,
            opts=pulumi.ResourceOptions.merge(
                cluster.addon_deletion,
                # The role can publish before the agent's first pod asks for credentials.
                pulumi.ResourceOptions(parent=self, depends_on=[attached, *after]),
            ),
        )
        self.alert_topic_arn = self._topic(
            name, args, cluster=cluster, cluster_name=cluster_name, region=region, tags=tags
        )
        bounds = cloudwatch.AlarmBounds(gpu_memory_percent=args.gpu_memory_percent)
        topic = pulumi.Output.from_input(self.alert_topic_arn)
        # The specs take the topic as text; here it may be an Output (the stack's topic), set in its place.
        for spec in cloudwatch.alarms(cluster_name, "", bounds):
            params = {**cloudwatch.alarm_args(spec), "alarm_actions": [topic], "ok_actions": [topic]}
            short = spec["AlarmName"].removeprefix(f"{cluster_name}-")
            aws.cloudwatch.MetricAlarm(f"{name}-alarm-{short}", tags=tags, opts=child, **params)
        self.dashboard = aws.cloudwatch.Dashboard(
            f"{name}-dashboard",
            dashboard_name=f"{cluster_name}-gpus",
            dashboard_body=cloudwatch.dashboard_body(cluster_name, region),
            opts=child,
        )
        self.register_outputs(
            {"addon": self.addon.arn, "alertTopicArn": self.alert_topic_arn, "dashboard": self.dashboard.dashboard_arn}
        )

    def _topic(
        self,
        name: str,
        args: ObservabilityArgs,
        *,
        cluster: ControlPlane,
        cluster_name: str,
        region: str,
        tags: dict[str, str],
    ) -> pulumi.Input[str]:
        """The SNS topic the alarms notify: the user's (`alertTopicArn`), or `<cluster>-alerts` of the stack.

        The stack's topic is encrypted with a key of its own that admits `cloudwatch.amazonaws.com`
        (`kms.alert_topic`): CloudWatch alarms cannot publish to a topic under the AWS-managed `alias/aws/sns`,
        whose key policy cannot be edited to admit them (the same reason as the AMP path). The topic's default
        policy lets the account's CloudWatch alarms publish; a user-named topic encrypted with a key of its own
        needs that key to admit CloudWatch (docs/operations.md).
        """
        if args.alert_topic_arn is not None:
            return args.alert_topic_arn
        topic = kms.alert_topic(
            f"{name}-alerts",
            topic_name=f"{cluster_name}-alerts",
            region=region,
            administrators=cluster.kms_key_administrators,
            publisher=cluster.partition.service_principal("cloudwatch"),
            source_arn=aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self)).account_id.apply(
                lambda account_id: iam_policies.alarms_arn_pattern(
                    partition_id=cluster.partition.id,
                    region=region,
                    account_id=account_id,
                    name_prefix=f"{cluster_name}-",
                )
            ),
            description=f"Alert topic {cluster_name}-alerts (CloudWatch alarms publish)",
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return topic.arn
