"""Platform component: the whole gpuplane stack (network, cluster, node groups) from one typed args object."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from gpuplane.components import kube_objects
from gpuplane.components.addon_versions import addon_version
from gpuplane.components.autoscaler import ClusterAutoscaler
from gpuplane.components.cloudwatch import CloudWatchObservability
from gpuplane.components.cluster import Cluster
from gpuplane.components.config import NodeGroupArgs, PlatformArgs, Taint
from gpuplane.components.control_plane import resolve_region
from gpuplane.components.gpu import GpuEnablement
from gpuplane.components.network import Network
from gpuplane.components.node_group import NodeGroup
from gpuplane.components.observability import Observability
from gpuplane.components.plan import capacity, cross_checks, iam_policies, node_repair
from gpuplane.components.plan.gpu_nodes import GpuPlan
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.training_queue import queue_spec
from gpuplane.components.pod_identity import pod_identity_role
from gpuplane.components.queue import TrainingQueue, provisioning_request_crd
from gpuplane.components.serving import TfServing
from gpuplane.components.storage import SharedStorage
from gpuplane.components.training import TfTraining
from gpuplane.components.workspace import Workspace
from gpuplane.manifests import observability as observability_manifests
from gpuplane.manifests import serving as serving_manifests
from gpuplane.manifests import versions, wellknown
from gpuplane.manifests.namespaces import namespace


class Platform(pulumi.ComponentResource):
    """A GPU-ready EKS platform: what one `pulumi up` of a gpuplane stack creates.

    Children are created in the order AWS needs: the network, the control plane and its pre-node
    add-ons, the node groups, then the add-ons that need nodes. Every AWS resource carries the
    `gpuplane:project` and `gpuplane:stack` tags that the teardown tools key on.
    """

    network: Network
    cluster: Cluster
    node_groups: dict[str, NodeGroup]
    workspace: Workspace
    cluster_services_ready: list[pulumi.Resource]
    """What anything that runs pods in the cluster must wait for: coredns (cluster DNS) and the system
    (untainted CPU) node groups. Never the GPU groups: a GPU node's boot must not hold up `pulumi up`.
    Workloads added after the platform (serving, training) depend on these."""

    def __init__(
        self,
        name: str,
        args: PlatformArgs,
        *,
        region: str | None = None,
        aws_profile: str | None = None,
        assume_roles: Sequence[str] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        # aws_profile/assume_roles: the stack's AWS identity, for the Kubernetes provider's token command.
        # A program that builds the platform itself gets the stack config's checks across sections and its
        # add-on refusal, before anything is registered.
        cross_checks.check_platform(args)
        # The stack's aws:region, or an explicit aws provider's (then named): what the cluster resolves too.
        region = resolve_region(name, region, opts, "Platform")
        unavailable = cross_checks.region_problems(args, region)
        if unavailable:
            raise ValueError("; ".join(f"{key}: {message}" for key, message in unavailable))
        super().__init__("gpuplane:index:Platform", name, None, opts)
        # What deploys but will not do what the config says: shown by `pulumi preview`/`up` (and by render);
        # the cluster's own (its CIDRs) come from the Cluster component.
        for warning in cross_checks.platform_warnings(args):
            pulumi.log.warn(warning, resource=self)
        project, stack = pulumi.get_project(), pulumi.get_stack()
        cluster_name = args.cluster_name or f"{project}-{stack}"
        tags = {"gpuplane:project": project, "gpuplane:stack": stack, **args.tags}
        child = pulumi.ResourceOptions(parent=self)

        # Volumes left by claims hold data: the teardown hooks may delete them on dev, never on prod.
        disposable = args.profile != "prod"
        self.network = Network(
            f"{name}-network",
            args.network,
            cluster_name=cluster_name,
            tags=tags,
            delete_claim_volumes=disposable,
            region=region,
            kms_key_administrators=args.cluster.kms_key_administrators,
            opts=child,
        )
        # New nodes carry the EFS driver's startup taint until its node agent runs there.
        startup = [Taint(key=wellknown.EFS_STARTUP_TAINT_KEY, effect="NoExecute")] if args.storage.enabled else []
        # The children read region, Kubernetes version, startup taints, subnets and tags from the cluster.
        self.cluster = Cluster(
            f"{name}-cluster",
            args.cluster,
            network=self.network,
            cluster_name=cluster_name,
            aws_profile=aws_profile,
            assume_roles=assume_roles,
            region=region,
            tags=tags,
            startup_taints=startup,
            delete_claim_volumes=disposable,
            api_access_cidrs=args.resolved_api_access_cidrs,
            opts=child,
        )
        self.gpu_plan = GpuPlan(tuple(args.resolved_node_groups))
        # System groups first in the cluster's list of groups: coredns waits for them, and so does each GPU group
        # at `cluster.nodeUpgradeOrder: systemFirst` (otherwise every group moves beside the others).
        system = {g.name for g in args.system_node_groups}
        groups = {
            group.name: NodeGroup(
                f"{name}-{group.name}",
                group,
                cluster=self.cluster,
                subnet_ids=self._subnets_of(group, args),
                # The whole plan decides (another group's driver labels this one's nodes too).
                gpu_operator=self.gpu_plan.operator,
                opts=child,
            )
            for group in sorted(args.resolved_node_groups, key=lambda g: g.name not in system)
        }
        self.node_groups = {g.name: groups[g.name] for g in args.resolved_node_groups}
        self.workspace = Workspace(
            f"{name}-workspace", namespace_name=args.workload_namespace, cluster=self.cluster, opts=child
        )
        self.storage: SharedStorage | None = None
        if args.storage.enabled:
            self.storage = SharedStorage(
                f"{name}-storage",
                args.storage,
                cluster=self.cluster,
                namespace=args.workload_namespace,
                namespace_resource=self.workspace.namespace_resource,
                opts=child,
            )
        # coredns, the autoscaler and the GPU DaemonSets tolerate the EFS startup taint (none mounts EFS),
        # so they wait for the system nodes only, not for the EFS driver's node agent that lifts it.
        startup_keys = self.cluster.startup_taint_keys
        self.cluster_services_ready = self.cluster.services_ready
        if node_repair.needs_monitoring_agent(args.resolved_node_groups):
            self._node_monitoring_agent(name, tags, self.cluster.system_nodes, startup_keys)
        # Metrics next. No chart waits for the stack's CRDs: the ServiceMonitors of the autoscaler, Kueue and
        # dcgm-exporter are applied by the Observability component after the stack, not by their charts.
        self.observability: Observability | None = None
        if args.observability.metrics in {"prometheus", "managedPrometheus"}:
            self.observability = Observability(
                f"{name}-metrics",
                args.observability,
                cluster=self.cluster,
                workload_namespace=args.workload_namespace if args.serving else None,
                workload_namespace_resource=self.workspace.namespace_resource,
                autoscaler=args.autoscaler.enabled,
                queue=bool(args.training),
                dcgm_exporter=bool(self.gpu_plan.gpu_groups)
                and args.observability.dcgm_exporter
                and not self.gpu_plan.operator,
                opts=child,
            )
        self.cloudwatch: CloudWatchObservability | None = None
        if args.observability.metrics == "cloudwatch":
            self.cloudwatch = CloudWatchObservability(
                f"{name}-cloudwatch",
                args.observability,
                cluster=self.cluster,
                opts=child,
            )
        self.gpu: GpuEnablement | None = None
        if self.gpu_plan.gpu_groups:
            self.gpu = GpuEnablement(
                f"{name}-gpu",
                self.gpu_plan,
                cluster=self.cluster,
                # With `cloudwatch` the add-on's own dcgm-exporter runs on the GPU nodes: one exporter per node.
                dcgm_exporter=args.observability.dcgm_exporter and self.cloudwatch is None,
                metrics=self.observability is not None,
                # One DCGM host engine per node: the node monitoring agent's, where it runs on the GPU nodes.
                remote_hostengine=any(g.repair.enabled for g in self.gpu_plan.gpu_groups),
                after=self.cluster_services_ready,
                opts=child,
            )
        # The training queue (Kueue) comes with training. Its ProvisioningRequests need the CRD before the
        # autoscaler and Kueue start (both read the API once at start-up).
        self.queue_spec = (
            queue_spec(
                args.workload_namespace,
                args.resolved_node_groups,
                args.queue,
                kubernetes_version=self.cluster.kubernetes_version,
                autoscaler=args.autoscaler.enabled,
            )
            if args.training
            else None
        )
        self.provisioning_crd: pulumi.Resource | None = None
        if self.queue_spec is not None and self.queue_spec.provisioning:
            self.provisioning_crd = provisioning_request_crd(f"{name}-autoscaler", cluster=self.cluster, parent=self)
        crd = [self.provisioning_crd] if self.provisioning_crd else []
        self.autoscaler: ClusterAutoscaler | None = None
        metrics = args.observability.metrics if self.observability else "none"
        if args.autoscaler.enabled:
            self.autoscaler = ClusterAutoscaler(
                f"{name}-autoscaler",
                args.autoscaler,
                cluster=self.cluster,
                # Not after the metrics stack, whose pods may wait for a node only the autoscaler adds: its
                # ServiceMonitor is the Observability component's (`autoscaler=`), applied after the stack.
                after=[*self.cluster_services_ready, *crd],
                provisioning_requests=bool(crd),
                metrics=metrics,
                opts=child,
            )
        # Workloads resolve names (imports fetch over https/S3) and mount EFS: they wait for cluster services
        # (coredns, system nodes) and for the EFS driver, whose node agent lifts the startup taint.
        ready = [*self.cluster_services_ready, *([self.storage.csi_driver] if self.storage else [])]
        self.queue: TrainingQueue | None = None
        self.training = self._training(name, args, tags, ready, crd)
        # Kueue's Job webhook is fail-closed in the workload namespace: serving's import Jobs wait for it.
        self.serving = self._workloads(name, args, tags, ready, [self.queue.release] if self.queue else [])
        self.register_outputs(
            {
                "clusterName": self.cluster.cluster_name,
                "vpcId": self.network.vpc_id,
                "nodeGroups": {k: v.node_group_name for k, v in self.node_groups.items()},
            }
        )

    def _keda(
        self, name: str, args: PlatformArgs, schedulable: list[pulumi.Resource], tags: dict[str, str]
    ) -> pulumi.Resource:
        """KEDA, for variants that scale on a Prometheus signal: it creates and owns their HPAs.

        Why KEDA: its `prometheus` trigger runs a PromQL query per variant with no adapter rules to keep in step
        (prometheus-adapter's), it is a CNCF graduated project released monthly, and the same trigger reads a
        managed Prometheus (Amazon Managed Service for Prometheus) with SigV4 and Pod Identity if the store moves.
        """
        provider = pulumi.ResourceOptions(
            parent=self, provider=self.cluster.provider, deleted_with=self.cluster.resource
        )
        ns_doc = namespace(wellknown.KEDA_NAMESPACE, "restricted", self.cluster.kubernetes_version)
        ns = kube_objects.apply(f"{name}-keda-ns", ns_doc, provider)
        startup = self.cluster.startup_taint_keys
        # With AMP, the operator queries the workspace with its own Pod Identity role (aps:QueryMetrics on it).
        workspace = self.observability.workspace if self.observability else None
        identity: list[pulumi.Resource] = []
        if workspace is not None:
            identity = [
                pod_identity_role(
                    f"{name}-keda-amp",
                    parent=self,
                    cluster=self.cluster,
                    namespace=wellknown.KEDA_NAMESPACE,
                    service_account=wellknown.KEDA_OPERATOR_SA,
                    policy=workspace.arn.apply(iam_policies.amp_query_policy),
                    description=f"KEDA of {self.cluster.eks_name}: query its AMP workspace for serving's scaling",
                    tags=tags,
                )
            ]
        release = kube_objects.HelmRelease(
            f"{name}-keda",
            name="keda",
            namespace=wellknown.KEDA_NAMESPACE,
            chart=versions.KEDA_CHART,
            version=versions.KEDA_VERSION,
            repo=versions.KEDA_REPO,
            # It mounts no EFS: it tolerates the EFS driver's startup taint, like the autoscaler.
            values={"tolerations": [{"key": k, "operator": "Exists", "effect": "NoExecute"} for k in startup]},
            create_namespace=False,
            opts=pulumi.ResourceOptions.merge(
                provider,
                pulumi.ResourceOptions(
                    depends_on=[
                        ns,
                        *schedulable,
                        *identity,
                        *([self.observability.release] if self.observability else []),
                    ]
                ),
            ),
        )
        if workspace is None:
            return release
        # The ScaledObjects name it: it exists (after KEDA's CRD) before they do.
        return kube_objects.apply(
            f"{name}-keda-amp-auth",
            observability_manifests.keda_amp_trigger_auth(),
            pulumi.ResourceOptions.merge(provider, pulumi.ResourceOptions(depends_on=[release])),
        )

    def _node_monitoring_agent(
        self, name: str, tags: dict[str, str], system_nodes: list[pulumi.Resource], startup_keys: list[str]
    ) -> aws.eks.Addon:
        """The EKS node monitoring agent: the NodeConditions (`AcceleratedHardwareReady`...) that repair acts on.

        Its node agent tolerates every taint; its `dcgm-server` DaemonSet (NVIDIA's host engine) tolerates none
        by default, so it gets the GPU taint and the startup taints, or it would never run on a GPU node.
        """
        return aws.eks.Addon(
            f"{name}-addon-{wellknown.ADDON_NODE_MONITORING_AGENT}",
            cluster_name=self.cluster.cluster_name,
            addon_name=wellknown.ADDON_NODE_MONITORING_AGENT,
            addon_version=addon_version(wellknown.ADDON_NODE_MONITORING_AGENT, self.cluster.kubernetes_version, self),
            configuration_values=json.dumps(
                {"dcgmAgent": {"tolerations": node_repair.dcgm_server_tolerations(startup_keys)}}, sort_keys=True
            ),
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=tags,
            opts=pulumi.ResourceOptions.merge(
                self.cluster.addon_deletion, pulumi.ResourceOptions(parent=self, depends_on=system_nodes)
            ),
        )

    def _subnets_of(self, group: NodeGroupArgs, args: PlatformArgs) -> pulumi.Input[Sequence[str]]:
        """The private subnets a group's nodes use: all, its reservation's AZ only, or one for EFA."""
        positions = capacity.subnet_positions(group, args.network)
        if positions is None:
            return self.network.private_subnet_ids
        return pulumi.Output.all(*(self.network.private_subnets[p] for p in positions)).apply(list)

    def _workloads(
        self,
        name: str,
        args: PlatformArgs,
        tags: dict[str, str],
        schedulable: list[pulumi.Resource],
        admission: list[pulumi.Resource],
    ) -> dict[str, TfServing]:
        """TensorFlow workloads, last: they need nodes, the EFS driver, the claims and the runtime ConfigMap."""
        if not args.serving:
            return {}
        context = WorkloadContext.of(args)
        after: list[pulumi.Resource] = [
            self.workspace,
            *schedulable,
            *admission,
            *([self.storage] if self.storage else []),
        ]
        scaled_on = {v.autoscaling.metric for s in args.serving for v in s.variants if v.autoscaling}
        store = serving_manifests.IN_CLUSTER
        if scaled_on - {"cpu"}:
            after.append(self._keda(name, args, schedulable, tags))
            workspace = self.observability.workspace if self.observability else None
            if workspace is not None:
                store = serving_manifests.MetricStore(
                    server_address=workspace.prometheus_endpoint.apply(observability_manifests.amp_query_address),
                    aws_region=self.cluster.region,
                )
        if "cpu" in scaled_on:
            # HPAs read CPU usage from the metrics API, which EKS does not serve until metrics-server runs.
            after.append(
                aws.eks.Addon(
                    f"{name}-addon-metrics-server",
                    cluster_name=self.cluster.cluster_name,
                    addon_name=wellknown.ADDON_METRICS_SERVER,
                    addon_version=addon_version(wellknown.ADDON_METRICS_SERVER, self.cluster.kubernetes_version, self),
                    resolve_conflicts_on_create="OVERWRITE",
                    resolve_conflicts_on_update="OVERWRITE",
                    tags=tags,
                    opts=pulumi.ResourceOptions.merge(
                        self.cluster.addon_deletion, pulumi.ResourceOptions(parent=self, depends_on=schedulable)
                    ),
                )
            )
        return {
            s.name: TfServing(
                f"{name}-serving-{s.name}",
                s,
                context=context,
                cluster=self.cluster,
                depends_on=after,
                tags=tags,
                metric_store=store,
                opts=pulumi.ResourceOptions(parent=self),
            )
            for s in args.serving
        }

    def _training(
        self,
        name: str,
        args: PlatformArgs,
        tags: dict[str, str],
        schedulable: list[pulumi.Resource],
        crd: list[pulumi.Resource],
    ) -> dict[str, TfTraining]:
        """Training workloads' long-lived parts, the JobSet controller their runs need, and the queue."""
        if not args.training:
            return {}
        provider = pulumi.ResourceOptions(
            parent=self, provider=self.cluster.provider, deleted_with=self.cluster.resource
        )
        # The controller's manager and webhook run non-root with a restricted securityContext (its chart);
        # its namespace enforces `restricted` like ours.
        ns_doc = namespace(wellknown.JOBSET_NAMESPACE, "restricted", self.cluster.kubernetes_version)
        ns = kube_objects.apply(f"{name}-jobset-ns", ns_doc, provider)
        controller = kube_objects.HelmRelease(
            f"{name}-jobset",
            name="jobset",
            namespace=wellknown.JOBSET_NAMESPACE,
            chart=wellknown.JOBSET_CHART,
            version=versions.JOBSET_VERSION,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=self.cluster.provider,
                depends_on=[ns, *schedulable],
                deleted_with=self.cluster.resource,
            ),
        )
        assert self.queue_spec is not None  # set whenever training is declared
        # Kueue reads the ProvisioningRequest API once at start-up (the CRD comes first); it defers its JobSet
        # controller until JobSet's API appears (jobframework/setup.go), so it installs beside JobSet's chart.
        self.queue = TrainingQueue(
            f"{name}-queue",
            self.queue_spec,
            args.queue,
            cluster=self.cluster,
            after=[self.workspace, *crd, *schedulable],
            metrics=args.observability.metrics if self.observability else "none",
            opts=pulumi.ResourceOptions(parent=self),
        )
        context = WorkloadContext.of(args)
        after: list[pulumi.Resource] = [
            self.workspace,
            controller,
            self.queue,
            *([self.storage] if self.storage else []),
        ]
        return {
            t.name: TfTraining(
                f"{name}-training-{t.name}",
                t,
                context=context,
                cluster=self.cluster,
                ingress_class=args.ingress_class,
                queue_args=args.queue,
                depends_on=after,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
            for t in args.training
        }
