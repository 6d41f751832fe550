"""Observability component: the Prometheus stack, gpuplane's alert rules, its dashboards and the serving monitor."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from gpuplane.components import kms, kube_objects
from gpuplane.components.config import ObservabilityArgs
from gpuplane.components.control_plane import ControlPlane, deprecated_context, deprecated_keyword
from gpuplane.components.plan import iam_policies
from gpuplane.components.pod_identity import pod_identity_role
from gpuplane.components.storage import ebs_csi_driver
from gpuplane.manifests import observability, versions, wellknown
from gpuplane.manifests.namespaces import namespace


class Observability(pulumi.ComponentResource):
    """Metrics collected and queryable with PromQL, alert rules loaded, dashboards provisioned.

    kube-prometheus-stack (Prometheus operator, Prometheus, Alertmanager, kube-state-metrics, node-exporter,
    Grafana) in its own namespace `monitoring`, at Pod Security `privileged`: node-exporter reads the host's
    network and /proc. Its CRDs (ServiceMonitor, PodMonitor, PrometheusRule) come with the release, so whatever
    creates such objects (the dcgm-exporter and Kueue charts, the objects below) depends on `release`.
    """

    release: kube_objects.HelmRelease
    alert_topic_arn: pulumi.Input[str]
    workspace: aws.amp.Workspace | None = None
    """The AMP workspace, with `observability.metrics: managedPrometheus` (None with the in-cluster Prometheus)."""
    ebs_csi: aws.eks.Addon | None = None
    """The EBS CSI driver add-on for Prometheus's volume (the in-cluster Prometheus only)."""

    def __init__(
        self,
        name: str,
        args: ObservabilityArgs,
        *,
        cluster: ControlPlane,
        workload_namespace: str | None = None,
        workload_namespace_resource: pulumi.Resource | None = None,
        after: Sequence[pulumi.Resource] | None = None,
        tags: dict[str, str] | None = None,
        autoscaler: bool = False,
        queue: bool = False,
        dcgm_exporter: bool = False,
        kubernetes_version: str | None = None,
        startup_taints: Sequence[str] | None = None,
        region: str | None = None,
        cluster_name: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`workload_namespace`: where TF Serving runs, when the stack serves models (its PodMonitor goes there).

        `autoscaler`: the stack runs the cluster-autoscaler; with the in-cluster Prometheus its ServiceMonitor is
        applied here, after the stack's CRDs, so the autoscaler's release need not wait for the stack
        (`observability.autoscaler_service_monitor`); the managed collector has a job for it whatever this says.
        `queue`, `dcgm_exporter`: the stack runs Kueue, the standalone dcgm-exporter chart; the same for their
        ServiceMonitors (`kueue_service_monitor`, `dcgm_service_monitor`), so neither release waits for the stack.
        `after`: what the stack waits for (default `cluster.services_ready`). `tags`: added to the cluster's.
        `kubernetes_version`, `startup_taints`, `region`, `cluster_name`: deprecated, the cluster's.
        """
        for keyword, given, known in (
            ("kubernetes_version", kubernetes_version, cluster.kubernetes_version),
            ("region", region, cluster.region),
            ("cluster_name", cluster_name, cluster.eks_name),
        ):
            if given is not None:
                deprecated_context("Observability", keyword, given, known)
        if startup_taints is None:
            startup_taints = cluster.startup_taint_keys
        else:
            deprecated_keyword("Observability", "startup_taints", "pass startup_taints to Cluster(...)")
        kubernetes_version, region, cluster_name = cluster.kubernetes_version, cluster.region, cluster.eks_name
        after = cluster.services_ready if after is None else after
        tags = {**cluster.tags, **(tags or {})}
        super().__init__("gpuplane:index:Observability", name, None, opts)
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=cluster.provider, deleted_with=cluster.resource)
        ns_doc = namespace(wellknown.MONITORING_NAMESPACE, "privileged", kubernetes_version)
        ns = kube_objects.apply(f"{name}-ns", ns_doc, k8s_opts)
        # The stack's pods mount no EFS: they tolerate the EFS driver's startup taint, like the autoscaler.
        tolerations = [{"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints]
        if args.metrics == "managedPrometheus":
            self._managed(
                name,
                args,
                cluster=cluster,
                ns=ns,
                tolerations=tolerations,
                after=after,
                region=region,
                tags=tags,
                cluster_name=cluster_name,
                workload_namespace=workload_namespace,
                k8s_opts=k8s_opts,
            )
            return
        self.alert_topic_arn, identity = self._alert_topic(name, args, cluster, cluster_name, tags)
        # Prometheus's data on an EBS volume that outlives its pod: the EBS CSI driver and an encrypted gp3 class.
        self.ebs_csi = ebs_csi_driver(name, parent=self, cluster=cluster, after=after, tags=tags)
        sc_doc = observability.prometheus_storage_class(cluster_name)
        storage_class = kube_objects.apply(f"{name}-storage-class", sc_doc, k8s_opts)
        self.release = self._stack_release(
            name,
            observability.stack_values(
                retention=args.retention,
                grafana=args.grafana,
                tolerations=tolerations,
                alerts=observability.alertmanager_config(self.alert_topic_arn, region),
                volume_gib=args.volume_gib,
            ),
            # Not after the EBS driver: the chart does not wait for Prometheus (the operator makes its StatefulSet),
            # and its claim waits for the driver by itself; the charts that need this release's CRDs need not wait.
            depends_on=[ns, identity, storage_class, *after],
            k8s_opts=k8s_opts,
        )
        after_release = pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[self.release]))
        bounds = observability.AlertBounds(
            serving_p99_ms=args.serving_p99_ms,
            queue_wait_minutes=args.queue_wait_minutes,
            gpu_memory_percent=args.gpu_memory_percent,
        )
        rule = observability.prometheus_rule(
            "gpuplane", wellknown.MONITORING_NAMESPACE, observability.alert_rule_groups(bounds)
        )
        kube_objects.apply(f"{name}-rules", rule, after_release)
        if args.grafana:
            for file_name, dashboard in observability.dashboards().items():
                doc = observability.dashboard_config_map(file_name, dashboard, wellknown.MONITORING_NAMESPACE)
                kube_objects.apply(
                    f"{name}-{doc['metadata']['name']}",
                    doc,
                    pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[ns])),
                )
        if workload_namespace is not None:
            owners = [self.release, *([workload_namespace_resource] if workload_namespace_resource else [])]
            monitor = observability.serving_pod_monitor(workload_namespace)
            kube_objects.apply(
                f"{name}-serving-monitor",
                monitor,
                pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=owners)),
            )
        if autoscaler:
            # In kube-system (always there), after the stack's CRD; it finds the chart's Service whenever it exists.
            scaler = observability.autoscaler_service_monitor()
            kube_objects.apply(f"{name}-autoscaler-monitor", scaler, after_release)
        # In `monitoring` (Kueue's and the GPU namespace may come later); each finds its Service whenever it exists.
        monitors = {"kueue": queue, "dcgm-exporter": dcgm_exporter}
        for monitor_name, builder in (
            ("kueue", observability.kueue_service_monitor),
            ("dcgm-exporter", observability.dcgm_service_monitor),
        ):
            if monitors[monitor_name]:
                doc = builder()
                kube_objects.apply(f"{name}-{monitor_name}-monitor", doc, after_release)
        self.register_outputs({"release": self.release.name, "alertTopicArn": self.alert_topic_arn})

    def _stack_release(
        self,
        name: str,
        values: dict[str, Any],
        *,
        depends_on: Sequence[pulumi.Resource],
        k8s_opts: pulumi.ResourceOptions,
    ) -> kube_objects.HelmRelease:
        """kube-prometheus-stack in `monitoring`: the whole stack in-cluster, kube-state-metrics alone with AMP."""
        return kube_objects.HelmRelease(
            f"{name}-kube-prometheus-stack",
            name="kube-prometheus-stack",
            namespace=wellknown.MONITORING_NAMESPACE,
            chart=versions.KUBE_PROMETHEUS_STACK_CHART,
            version=versions.KUBE_PROMETHEUS_STACK_VERSION,
            repo=versions.KUBE_PROMETHEUS_STACK_REPO,
            values=values,
            create_namespace=False,
            opts=pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=list(depends_on))),
        )

    def _alert_topic(
        self, name: str, args: ObservabilityArgs, cluster: ControlPlane, cluster_name: str, tags: dict[str, str]
    ) -> tuple[pulumi.Input[str], pulumi.Resource]:
        """The SNS topic alerts go to (the user's, or one of the stack's) and Alertmanager's right to publish there.

        The stack's topic is encrypted with the account's AWS-managed SNS key (`alias/aws/sns`), which lets
        principals of the account publish; subscribing (email, chat, a pager) is the user's step.
        """
        topic_arn: pulumi.Input[str]
        if args.alert_topic_arn is not None:
            topic_arn = args.alert_topic_arn
        else:
            topic = aws.sns.Topic(
                f"{name}-alerts",
                name=f"{cluster_name}-alerts",
                kms_master_key_id="alias/aws/sns",
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
            topic_arn = topic.arn
        # `<name>-alerts`: short, so the role's name (`<clusterName>-metrics-alerts-role` plus Pulumi's suffix) is
        # never the one that limits clusterName (the flow-log role's is longer; components.plan.names).
        identity = pod_identity_role(
            f"{name}-alerts",
            parent=self,
            cluster=cluster,
            namespace=wellknown.MONITORING_NAMESPACE,
            service_account=observability.ALERTMANAGER_SA,
            policy=pulumi.Output.from_input(topic_arn).apply(iam_policies.sns_publish_policy),
            description=f"Alertmanager of {cluster_name}: publish alerts to SNS",
            tags=tags,
        )
        return topic_arn, identity

    def _managed(
        self,
        name: str,
        args: ObservabilityArgs,
        *,
        cluster: ControlPlane,
        ns: kube_objects.KubeObject,
        tolerations: list[dict[str, str]],
        after: Sequence[pulumi.Resource],
        region: str,
        tags: dict[str, str],
        cluster_name: str,
        workload_namespace: str | None,
        k8s_opts: pulumi.ResourceOptions,
    ) -> None:
        """Amazon Managed Service for Prometheus: workspace, managed collector, rule groups, Alertmanager to SNS.

        In the cluster only kube-state-metrics runs (kube-prometheus-stack with Prometheus, Alertmanager, Grafana
        and node-exporter off; its CRDs stay for the charts that create ServiceMonitors). The collector reaches
        the pods through ENIs in the cluster's subnets, in the cluster security group (which the nodes share, so
        no rule is added), and AMP gives its role an access entry itself (the cluster's authentication mode is
        `API`). Argument names checked against pulumi_aws 7.51.1 (`aws.amp.WorkspaceArgs`, `ScraperArgs`,
        `ScraperSourceEksArgs`, `RuleGroupNamespaceArgs`, `AlertManagerDefinitionArgs`) and botocore's `amp`
        model (CreateScraper: `source.eksConfiguration{clusterArn, subnetIds, securityGroupIds}`).
        """
        child = pulumi.ResourceOptions(parent=self)
        # No key of the stack's own for the workspace: AMP encrypts it at rest with an AWS owned key, and a workspace
        # created with a customer managed key cannot take an AWS managed collector (AMP user guide,
        # AMP-collector-how-to, as read 2026-11-26 in its stored translation: the English page's text was not
        # reachable here). The collector is the point of this backend, so its data stays under AWS's key; the
        # choice cannot be changed on an existing workspace (AMP: "Encryption at rest"). Re-check when AWS lifts it.
        self.workspace = workspace = aws.amp.Workspace(f"{name}-workspace", alias=cluster_name, tags=tags, opts=child)
        self.release = self._stack_release(
            name,
            observability.managed_stack_values(tolerations=tolerations),
            depends_on=[ns, *after],
            k8s_opts=k8s_opts,
        )
        vpc = cluster.resource.vpc_config
        aws.amp.Scraper(
            f"{name}-collector",
            alias=cluster_name,
            source=aws.amp.ScraperSourceArgs(
                eks=aws.amp.ScraperSourceEksArgs(
                    cluster_arn=cluster.resource.arn,
                    subnet_ids=vpc.apply(lambda v: list(v.subnet_ids or [])),
                    security_group_ids=[cluster.cluster_security_group_id],
                )
            ),
            destination=aws.amp.ScraperDestinationArgs(
                amp=aws.amp.ScraperDestinationAmpArgs(workspace_arn=workspace.arn)
            ),
            scrape_configuration=observability.to_yaml(observability.managed_scrape_config(workload_namespace)),
            tags=tags,
            # Scraping starts once kube-state-metrics runs; the collector's ENIs need the cluster up.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.release]),
        )
        bounds = observability.AlertBounds(
            serving_p99_ms=args.serving_p99_ms,
            queue_wait_minutes=args.queue_wait_minutes,
            gpu_memory_percent=args.gpu_memory_percent,
        )
        aws.amp.RuleGroupNamespace(
            f"{name}-rules",
            name="gpuplane",
            workspace_id=workspace.id,
            data=observability.to_yaml({"groups": observability.alert_rule_groups(bounds)}),
            tags=tags,
            opts=child,
        )
        self.alert_topic_arn = self._amp_topic(
            name, args=args, workspace=workspace, cluster=cluster, cluster_name=cluster_name, region=region, tags=tags
        )
        aws.amp.AlertManagerDefinition(
            f"{name}-alertmanager",
            workspace_id=workspace.id,
            definition=pulumi.Output.from_input(self.alert_topic_arn).apply(
                lambda arn: observability.amp_alertmanager_definition(arn, region)
            ),
            opts=child,
        )
        self.register_outputs(
            {
                "workspace": workspace.arn,
                "prometheusEndpoint": workspace.prometheus_endpoint,
                "alertTopicArn": self.alert_topic_arn,
            }
        )

    def _amp_topic(
        self,
        name: str,
        *,
        args: ObservabilityArgs,
        workspace: aws.amp.Workspace,
        cluster: ControlPlane,
        cluster_name: str,
        region: str,
        tags: dict[str, str],
    ) -> pulumi.Input[str]:
        """The SNS topic AMP's Alertmanager publishes to, and the topic policy that lets it (the stack's topic).

        AMP publishes as the service `aps.amazonaws.com` (AMP user guide, "Alert manager permissions for SNS"),
        limited here to this account and this workspace. The stack's topic is encrypted with a key of its own
        that admits `aps.amazonaws.com` (`kms.alert_topic`): the AWS-managed SNS key used with the in-cluster
        Alertmanager cannot be edited to let AMP use it, so publishing would fail. A user-named topic
        (`alertTopicArn`) needs that statement in its own policy, and in its key's when encrypted
        (docs/operations.md).
        """
        if args.alert_topic_arn is not None:
            return args.alert_topic_arn
        principal = cluster.partition.service_principal("aps")
        topic = kms.alert_topic(
            f"{name}-alerts",
            topic_name=f"{cluster_name}-alerts",
            region=region,
            administrators=cluster.kms_key_administrators,
            publisher=principal,
            source_arn=workspace.arn,
            description=f"Alert topic {cluster_name}-alerts (AMP's Alertmanager publishes)",
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        aws.sns.TopicPolicy(
            f"{name}-alerts-policy",
            arn=topic.arn,
            policy=pulumi.Output.all(topic.arn, workspace.arn).apply(
                lambda a: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Sid": "AmpAlertmanager",
                                "Effect": "Allow",
                                "Principal": {"Service": principal},
                                "Action": ["sns:Publish", "sns:GetTopicAttributes"],
                                "Resource": a[0],
                                "Condition": {
                                    "ArnEquals": {"aws:SourceArn": a[1]},
                                    "StringEquals": {"aws:SourceAccount": a[1].split(":")[4]},
                                },
                            }
                        ],
                    }
                )
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        return topic.arn
