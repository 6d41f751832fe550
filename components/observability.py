"""Observability component: the Prometheus stack, gpuplane's alert rules, its dashboards and the serving monitor."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpuplane.components.cluster import Cluster
from gpuplane.components.config import ObservabilityArgs
from gpuplane.components.plan import iam_policies
from gpuplane.components.pod_identity import pod_identity_role
from gpuplane.manifests import observability, versions
from gpuplane.manifests.namespaces import namespace


class Observability(pulumi.ComponentResource):
    """Metrics collected and queryable with PromQL, alert rules loaded, dashboards provisioned.

    kube-prometheus-stack (Prometheus operator, Prometheus, Alertmanager, kube-state-metrics, node-exporter,
    Grafana) in its own namespace `monitoring`, at Pod Security `privileged`: node-exporter reads the host's
    network and /proc. Its CRDs (ServiceMonitor, PodMonitor, PrometheusRule) come with the release, so whatever
    creates such objects (the dcgm-exporter and Kueue charts, the objects below) depends on `release`.
    """

    release: k8s.helm.v3.Release
    alert_topic_arn: pulumi.Input[str]

    def __init__(
        self,
        name: str,
        args: ObservabilityArgs,
        *,
        cluster: Cluster,
        kubernetes_version: str,
        workload_namespace: str | None,
        workload_namespace_resource: pulumi.Resource | None,
        startup_taints: Sequence[str],
        after: Sequence[pulumi.Resource],
        region: str,
        tags: dict[str, str],
        cluster_name: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`workload_namespace`: where TF Serving runs, when the stack serves models (its PodMonitor goes there)."""
        super().__init__("gpuplane:index:Observability", name, None, opts)
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=cluster.provider, deleted_with=cluster.resource)
        ns_doc = namespace(versions.MONITORING_NAMESPACE, "privileged", kubernetes_version)
        ns = k8s.core.v1.Namespace(f"{name}-ns", metadata=ns_doc["metadata"], opts=k8s_opts)
        # The stack's pods mount no EFS: they tolerate the EFS driver's startup taint, like the autoscaler.
        tolerations = [{"key": key, "operator": "Exists", "effect": "NoExecute"} for key in startup_taints]
        self.alert_topic_arn, identity = self._alert_topic(name, args, cluster, cluster_name, tags)
        self.release = k8s.helm.v3.Release(
            f"{name}-kube-prometheus-stack",
            name="kube-prometheus-stack",
            namespace=versions.MONITORING_NAMESPACE,
            chart=versions.KUBE_PROMETHEUS_STACK_CHART,
            version=versions.KUBE_PROMETHEUS_STACK_VERSION,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=versions.KUBE_PROMETHEUS_STACK_REPO),
            values=observability.stack_values(
                retention=args.retention,
                grafana=args.grafana,
                tolerations=tolerations,
                alerts=observability.alertmanager_config(self.alert_topic_arn, region),
            ),
            create_namespace=False,
            opts=pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[ns, identity, *after])),
        )
        after_release = pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[self.release]))
        bounds = observability.AlertBounds(
            serving_p99_ms=args.serving_p99_ms,
            queue_wait_minutes=args.queue_wait_minutes,
            gpu_memory_percent=args.gpu_memory_percent,
        )
        rule = observability.prometheus_rule(
            "gpuplane", versions.MONITORING_NAMESPACE, observability.alert_rule_groups(bounds)
        )
        k8s.apiextensions.CustomResource(
            f"{name}-rules",
            api_version=rule["apiVersion"],
            kind=rule["kind"],
            metadata=rule["metadata"],
            spec=rule["spec"],
            opts=after_release,
        )
        if args.grafana:
            for file_name, dashboard in observability.dashboards().items():
                doc = observability.dashboard_config_map(file_name, dashboard, versions.MONITORING_NAMESPACE)
                k8s.core.v1.ConfigMap(
                    f"{name}-{doc['metadata']['name']}",
                    metadata=doc["metadata"],
                    data=doc["data"],
                    opts=pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=[ns])),
                )
        if workload_namespace is not None:
            owners = [self.release, *([workload_namespace_resource] if workload_namespace_resource else [])]
            monitor = observability.serving_pod_monitor(workload_namespace)
            k8s.apiextensions.CustomResource(
                f"{name}-serving-monitor",
                api_version=monitor["apiVersion"],
                kind=monitor["kind"],
                metadata=monitor["metadata"],
                spec=monitor["spec"],
                opts=pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=owners)),
            )
        self.register_outputs({"release": self.release.name, "alertTopicArn": self.alert_topic_arn})

    def _alert_topic(
        self, name: str, args: ObservabilityArgs, cluster: Cluster, cluster_name: str, tags: dict[str, str]
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
            namespace=versions.MONITORING_NAMESPACE,
            service_account=observability.ALERTMANAGER_SA,
            policy=pulumi.Output.from_input(topic_arn).apply(iam_policies.sns_publish_policy),
            description=f"Alertmanager of {cluster_name}: publish alerts to SNS",
            tags=tags,
        )
        return topic_arn, identity
