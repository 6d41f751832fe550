"""Teardown: find and remove what Kubernetes created in a stack's VPC behind Pulumi's back.

Why: Kubernetes controllers create load balancers, target groups, security groups, network interfaces and
volumes that Pulumi never registered. They keep the subnets, the internet gateway and the VPC from being
deleted (`DependencyViolation`; pulumi-eks #1226, terraform-aws-eks #2048, eksctl #1849), so a plain
`pulumi destroy` fails after the cluster is gone. The hooks below run this module's cleanup inside the
engine, around the deletes that would fail, and `gpuplane janitor` runs the same cleanup by hand.

What counts as ours, by tags only (never by name or description), and only inside the stack's VPC:
- `kubernetes.io/cluster/<cluster>=owned`: the cloud provider's load balancers and their security groups
  (cloud-provider-aws `TagNameKubernetesClusterPrefix`, value `owned`; `shared` marks resources the cluster
  only uses, like our subnets, and is never enough).
- `elbv2.k8s.aws/cluster=<cluster>` together with one of the AWS Load Balancer Controller's resource tags
  (`elbv2.k8s.aws/resource`, `service.k8s.aws/resource`, `ingress.k8s.aws/resource`; the controller's
  `trackingTagKeys`): people also put the cluster tag alone on security groups they own, for discovery.
- `cluster.k8s.amazonaws.com/name=<cluster>` on detached network interfaces (the VPC CNI tags every ENI it
  creates with it; amazon-vpc-cni-k8s IAM policy condition `aws:RequestTag/cluster.k8s.amazonaws.com/name`).
- volumes: `ebs.csi.aws.com/cluster=true` and `kubernetes.io/cluster/<cluster>=owned` or
  `KubernetesCluster=<cluster>` (aws-ebs-csi-driver docs/tagging.md and `CreateVolume`), detached only,
  and only when the caller asks for volumes: they hold data.
Anything carrying a `gpuplane:` tag is Pulumi's and never touched here; EFS is never in scope.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import botocore.exceptions
import pulumi

from gpuplane.components.destroy.retries import retry_config

ClientFactory = Callable[[str], Any]
"""Service name -> boto3 client (in one region, with retries)."""

Kind = Literal[
    "load-balancer", "classic-load-balancer", "target-group", "security-group", "network-interface", "volume"
]

_LBC_CLUSTER_TAG: Final = "elbv2.k8s.aws/cluster"
_LBC_RESOURCE_TAGS: Final = ("elbv2.k8s.aws/resource", "service.k8s.aws/resource", "ingress.k8s.aws/resource")
_CNI_CLUSTER_TAG: Final = "cluster.k8s.amazonaws.com/name"
_CSI_TAG: Final = "ebs.csi.aws.com/cluster"
_LEGACY_CLUSTER_TAG: Final = "KubernetesCluster"
_OUR_TAG_PREFIX: Final = "gpuplane:"


class TeardownError(Exception):
    """Cleanup could not finish; the message says what is left and what to do."""


@dataclass(frozen=True)
class Scope:
    """Where to look: one cluster's tags inside one VPC (volumes: the whole region, opt-in)."""

    cluster_name: str
    vpc_id: str
    include_volumes: bool = False


@dataclass(frozen=True)
class Orphan:
    """One cloud resource that Kubernetes created for our cluster."""

    kind: Kind
    id: str
    """ARN for ELBv2 load balancers and target groups, name for classic ELBs, the id otherwise."""
    name: str
    reason: str
    """The tag that identified it as ours."""


@dataclass
class Findings:
    """What a scan found: orphans to delete, and orphans that are ours but stay (with why)."""

    orphans: list[Orphan] = field(default_factory=list)
    kept: list[tuple[Orphan, str]] = field(default_factory=list)


@dataclass
class Outcome:
    """What a cleanup did."""

    deleted: list[Orphan] = field(default_factory=list)
    already_gone: list[Orphan] = field(default_factory=list)
    remaining: list[tuple[Orphan, str]] = field(default_factory=list)


def ownership(tags: Mapping[str, str], cluster_name: str, kind: Kind) -> str | None:
    """The tag that makes a resource of `kind` ours, or None. Pure: the whole safety rule lives here."""
    if any(key.startswith(_OUR_TAG_PREFIX) for key in tags):
        return None  # created by Pulumi; Pulumi deletes it
    owned_key = f"kubernetes.io/cluster/{cluster_name}"
    if kind == "volume":
        if tags.get(_CSI_TAG) != "true":
            return None
        if tags.get(owned_key) == "owned":
            return f"{_CSI_TAG}=true, {owned_key}=owned"
        if tags.get(_LEGACY_CLUSTER_TAG) == cluster_name:
            return f"{_CSI_TAG}=true, {_LEGACY_CLUSTER_TAG}={cluster_name}"
        return None
    if tags.get(owned_key) == "owned":
        return f"{owned_key}=owned"
    if tags.get(_LBC_CLUSTER_TAG) == cluster_name:
        resource_tag = next((key for key in _LBC_RESOURCE_TAGS if key in tags), None)
        if resource_tag is not None:
            return f"{_LBC_CLUSTER_TAG}={cluster_name}, {resource_tag}"
    if kind == "network-interface" and tags.get(_CNI_CLUSTER_TAG) == cluster_name:
        return f"{_CNI_CLUSTER_TAG}={cluster_name}"
    return None


def _tags(items: Iterable[Mapping[str, Any]] | None) -> dict[str, str]:
    return {str(item["Key"]): str(item.get("Value", "")) for item in items or ()}


def _code(exc: botocore.exceptions.ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _paginate(client: Any, operation: str, key: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    for page in client.get_paginator(operation).paginate(**kwargs):
        yield from page.get(key, [])


# --- finding ------------------------------------------------------------------------------------------


def find_orphans(clients: ClientFactory, scope: Scope) -> Findings:
    """Scan the VPC (and, for volumes, the region) for resources Kubernetes created for the cluster."""
    findings = Findings()
    _find_elbv2(clients("elbv2"), scope, findings)
    _find_classic(clients("elb"), scope, findings)
    ec2 = clients("ec2")
    vpc_filter = [{"Name": "vpc-id", "Values": [scope.vpc_id]}]
    for group in _paginate(ec2, "describe_security_groups", "SecurityGroups", Filters=vpc_filter):
        reason = ownership(_tags(group.get("Tags")), scope.cluster_name, "security-group")
        if reason and group.get("GroupName") != "default":
            findings.orphans.append(Orphan("security-group", group["GroupId"], group.get("GroupName", ""), reason))
    enis = _paginate(
        ec2,
        "describe_network_interfaces",
        "NetworkInterfaces",
        Filters=[*vpc_filter, {"Name": "status", "Values": ["available"]}],
    )
    for eni in enis:
        reason = ownership(_tags(eni.get("TagSet")), scope.cluster_name, "network-interface")
        if reason and not eni.get("RequesterManaged") and not eni.get("Attachment"):
            findings.orphans.append(
                Orphan("network-interface", eni["NetworkInterfaceId"], eni.get("Description", ""), reason)
            )
    volumes = _paginate(
        ec2,
        "describe_volumes",
        "Volumes",
        Filters=[{"Name": f"tag:{_CSI_TAG}", "Values": ["true"]}, {"Name": "status", "Values": ["available"]}],
    )
    for volume in volumes:
        tags = _tags(volume.get("Tags"))
        reason = ownership(tags, scope.cluster_name, "volume")
        if reason is None:
            continue
        claim = "/".join(tags.get(f"kubernetes.io/created-for/pvc/{part}", "?") for part in ("namespace", "name"))
        orphan = Orphan("volume", volume["VolumeId"], f"claim {claim}, {volume.get('Size', '?')} GiB", reason)
        if scope.include_volumes:
            findings.orphans.append(orphan)
        else:
            findings.kept.append((orphan, "volumes hold data; not in scope unless asked for"))
    return findings


def _find_elbv2(elbv2: Any, scope: Scope, findings: Findings) -> None:
    balancers = [
        lb for lb in _paginate(elbv2, "describe_load_balancers", "LoadBalancers") if lb.get("VpcId") == scope.vpc_id
    ]
    tags = _elbv2_tags(elbv2, [lb["LoadBalancerArn"] for lb in balancers])
    for lb in balancers:
        arn = lb["LoadBalancerArn"]
        reason = ownership(tags.get(arn, {}), scope.cluster_name, "load-balancer")
        if reason is None:
            continue
        orphan = Orphan("load-balancer", arn, lb.get("LoadBalancerName", ""), reason)
        attributes = elbv2.describe_load_balancer_attributes(LoadBalancerArn=arn).get("Attributes", [])
        if any(a.get("Key") == "deletion_protection.enabled" and a.get("Value") == "true" for a in attributes):
            findings.kept.append((orphan, "deletion protection is on: someone wants it kept"))
        else:
            findings.orphans.append(orphan)
    groups = [
        tg for tg in _paginate(elbv2, "describe_target_groups", "TargetGroups") if tg.get("VpcId") == scope.vpc_id
    ]
    tags = _elbv2_tags(elbv2, [tg["TargetGroupArn"] for tg in groups])
    for tg in groups:
        reason = ownership(tags.get(tg["TargetGroupArn"], {}), scope.cluster_name, "target-group")
        if reason:
            findings.orphans.append(Orphan("target-group", tg["TargetGroupArn"], tg.get("TargetGroupName", ""), reason))


def _elbv2_tags(elbv2: Any, arns: Sequence[str]) -> dict[str, dict[str, str]]:
    tags: dict[str, dict[str, str]] = {}
    for chunk in _chunks(arns, 20):  # DescribeTags takes at most 20 ARNs
        for description in elbv2.describe_tags(ResourceArns=list(chunk)).get("TagDescriptions", []):
            tags[description["ResourceArn"]] = _tags(description.get("Tags"))
    return tags


def _find_classic(elb: Any, scope: Scope, findings: Findings) -> None:
    balancers = [
        lb
        for lb in _paginate(elb, "describe_load_balancers", "LoadBalancerDescriptions")
        if lb.get("VPCId") == scope.vpc_id
    ]
    names = [lb["LoadBalancerName"] for lb in balancers]
    tags: dict[str, dict[str, str]] = {}
    for chunk in _chunks(names, 20):
        for description in elb.describe_tags(LoadBalancerNames=list(chunk)).get("TagDescriptions", []):
            tags[description["LoadBalancerName"]] = _tags(description.get("Tags"))
    for name in names:
        reason = ownership(tags.get(name, {}), scope.cluster_name, "classic-load-balancer")
        if reason:
            findings.orphans.append(Orphan("classic-load-balancer", name, name, reason))


# --- removing -----------------------------------------------------------------------------------------


@dataclass
class _Waiter:
    timeout_s: float
    poll_s: float
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    deadline: float = 0.0

    def __post_init__(self) -> None:
        self.deadline = self.clock() + self.timeout_s

    def until(self, done: Callable[[], bool]) -> bool:
        """Poll `done` until it is true (True) or the shared deadline passes (False)."""
        while True:
            if done():
                return True
            if self.clock() >= self.deadline:
                return False
            self.sleep(self.poll_s)


def remove_orphans(
    clients: ClientFactory,
    scope: Scope,
    orphans: Sequence[Orphan],
    *,
    timeout_s: float = 900,
    poll_s: float = 10,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    log: Callable[[str], None] = lambda _msg: None,
) -> Outcome:
    """Delete `orphans` in the order AWS needs and wait until they are gone, within `timeout_s` overall.

    Load balancers first (their listeners and network interfaces go with them), then target groups, then
    security groups (after removing rules elsewhere in the VPC that point at them), then detached network
    interfaces, then volumes. Something already deleted counts as done, so a second run is always safe.
    """
    outcome = Outcome()
    wait = _Waiter(timeout_s, poll_s, sleep, clock)
    by_kind = {kind: [o for o in orphans if o.kind == kind] for kind in Kind.__args__}  # type: ignore[attr-defined]
    elbv2, elb, ec2 = clients("elbv2"), clients("elb"), clients("ec2")

    for lb in by_kind["load-balancer"]:
        _delete(outcome, lb, log, lambda o: elbv2.delete_load_balancer(LoadBalancerArn=o.id), {"LoadBalancerNotFound"})
    for lb in by_kind["classic-load-balancer"]:
        _delete(outcome, lb, log, lambda o: elb.delete_load_balancer(LoadBalancerName=o.name), {"LoadBalancerNotFound"})
    balancers = by_kind["load-balancer"] + by_kind["classic-load-balancer"]
    if balancers:
        log(f"waiting for {len(balancers)} load balancer(s) and their network interfaces to go")
        gone = wait.until(lambda: not _balancers_left(elbv2, elb, ec2, scope, balancers))
        if not gone:
            _give_up(outcome, balancers, "still deleting when the wait ran out")

    for tg in by_kind["target-group"]:
        _delete_retrying(
            outcome, tg, log, wait, lambda o: elbv2.delete_target_group(TargetGroupArn=o.id),
            gone_codes={"TargetGroupNotFound"}, busy_codes={"ResourceInUse"},
        )  # fmt: skip

    groups = by_kind["security-group"]
    if groups:
        _revoke_references(ec2, scope, {g.id for g in groups}, log)
    for group in groups:
        _delete_retrying(
            outcome, group, log, wait, lambda o: ec2.delete_security_group(GroupId=o.id),
            gone_codes={"InvalidGroup.NotFound", "InvalidGroupId.NotFound"}, busy_codes={"DependencyViolation"},
        )  # fmt: skip
    for eni in by_kind["network-interface"]:
        _delete_retrying(
            outcome, eni, log, wait, lambda o: ec2.delete_network_interface(NetworkInterfaceId=o.id),
            gone_codes={"InvalidNetworkInterfaceID.NotFound"}, busy_codes={"InvalidNetworkInterface.InUse"},
        )  # fmt: skip
    for volume in by_kind["volume"]:
        _delete_retrying(
            outcome, volume, log, wait, lambda o: ec2.delete_volume(VolumeId=o.id),
            gone_codes={"InvalidVolume.NotFound"}, busy_codes={"VolumeInUse"},
        )  # fmt: skip
    return outcome


def _delete(
    outcome: Outcome,
    orphan: Orphan,
    log: Callable[[str], None],
    call: Callable[[Orphan], Any],
    gone_codes: set[str],
) -> bool:
    try:
        call(orphan)
    except botocore.exceptions.ClientError as exc:
        if _code(exc) in gone_codes:
            outcome.already_gone.append(orphan)
            return True
        outcome.remaining.append((orphan, f"{_code(exc)}: {exc.response.get('Error', {}).get('Message', '')}"))
        return False
    log(f"deleted {orphan.kind} {orphan.name or orphan.id}")
    outcome.deleted.append(orphan)
    return True


def _delete_retrying(
    outcome: Outcome,
    orphan: Orphan,
    log: Callable[[str], None],
    wait: _Waiter,
    call: Callable[[Orphan], Any],
    *,
    gone_codes: set[str],
    busy_codes: set[str],
) -> None:
    last: list[str] = []

    def attempt() -> bool:
        try:
            call(orphan)
        except botocore.exceptions.ClientError as exc:
            if _code(exc) in gone_codes:
                outcome.already_gone.append(orphan)
                return True
            if _code(exc) in busy_codes:
                last[:] = [f"{_code(exc)}: {exc.response.get('Error', {}).get('Message', '')}"]
                return False
            raise
        log(f"deleted {orphan.kind} {orphan.name or orphan.id}")
        outcome.deleted.append(orphan)
        return True

    try:
        if not wait.until(attempt):
            outcome.remaining.append((orphan, last[0] if last else "still in use when the wait ran out"))
    except botocore.exceptions.ClientError as exc:
        outcome.remaining.append((orphan, f"{_code(exc)}: {exc.response.get('Error', {}).get('Message', '')}"))


def _give_up(outcome: Outcome, orphans: Sequence[Orphan], why: str) -> None:
    for orphan in orphans:
        if orphan in outcome.deleted:
            outcome.deleted.remove(orphan)
        outcome.remaining.append((orphan, why))


def _balancers_left(elbv2: Any, elb: Any, ec2: Any, scope: Scope, balancers: Sequence[Orphan]) -> bool:
    """True while any of the load balancers, or a network interface ELB made for one, still exists."""
    descriptions: list[str] = []
    for lb in balancers:
        try:
            if lb.kind == "load-balancer":
                elbv2.describe_load_balancers(LoadBalancerArns=[lb.id])
            else:
                elb.describe_load_balancers(LoadBalancerNames=[lb.id])
            return True
        except botocore.exceptions.ClientError as exc:
            if _code(exc) not in {"LoadBalancerNotFound", "AccessPointNotFound"}:
                raise
        # ELB names its interfaces "ELB app/<name>/<id>", "ELB net/<name>/<id>" or "ELB <classic name>".
        suffix = lb.id.split(":loadbalancer/", 1)[1] if lb.kind == "load-balancer" else lb.id
        descriptions.append(f"ELB {suffix}")
    filters = [{"Name": "vpc-id", "Values": [scope.vpc_id]}, {"Name": "description", "Values": descriptions}]
    return any(True for _ in _paginate(ec2, "describe_network_interfaces", "NetworkInterfaces", Filters=filters))


def _revoke_references(ec2: Any, scope: Scope, group_ids: set[str], log: Callable[[str], None]) -> None:
    """Remove rules, anywhere in the VPC, that point at the security groups about to be deleted.

    The cloud provider adds an ingress rule for its ELB's group to the node group (containers-roadmap
    #1841); while it exists the ELB's group cannot be deleted. Only rules naming one of `group_ids` go.
    """
    filters = [{"Name": "vpc-id", "Values": [scope.vpc_id]}]
    for group in _paginate(ec2, "describe_security_groups", "SecurityGroups", Filters=filters):
        for direction, revoke in (
            ("IpPermissions", ec2.revoke_security_group_ingress),
            ("IpPermissionsEgress", ec2.revoke_security_group_egress),
        ):
            doomed = []
            for rule in group.get(direction, []):
                pairs = [p for p in rule.get("UserIdGroupPairs", []) if p.get("GroupId") in group_ids]
                if pairs:
                    doomed.append(
                        {k: v for k, v in rule.items() if k in {"IpProtocol", "FromPort", "ToPort"}}
                        | {"UserIdGroupPairs": [{"GroupId": p["GroupId"]} for p in pairs]}
                    )
            if doomed:
                try:
                    revoke(GroupId=group["GroupId"], IpPermissions=doomed)
                    log(f"removed {len(doomed)} rule(s) in {group['GroupId']} that point at groups being deleted")
                except botocore.exceptions.ClientError as exc:
                    if _code(exc) not in {"InvalidPermission.NotFound", "InvalidGroup.NotFound"}:
                        raise


# --- the cluster ----------------------------------------------------------------------------------------


def cluster_status(eks: Any, cluster_name: str) -> str | None:
    """The EKS cluster's status (ACTIVE, DELETING...), or None when it does not exist."""
    try:
        return str(eks.describe_cluster(name=cluster_name)["cluster"].get("status", "UNKNOWN"))
    except botocore.exceptions.ClientError as exc:
        if _code(exc) == "ResourceNotFoundException":
            return None
        raise


def teardown_under_way(eks: Any, cluster_name: str) -> bool:
    """True when the cluster is being deleted, or its node groups are (the first step of a destroy)."""
    status = cluster_status(eks, cluster_name)
    if status in (None, "DELETING"):
        return True
    names = list(_paginate(eks, "list_nodegroups", "nodegroups", clusterName=cluster_name))
    if not names:
        return True
    for name in names:
        try:
            group = eks.describe_nodegroup(clusterName=cluster_name, nodegroupName=name)["nodegroup"]
        except botocore.exceptions.ClientError as exc:
            if _code(exc) == "ResourceNotFoundException":
                return True
            raise
        if group.get("status") == "DELETING":
            return True
    return False


def await_cluster_gone(
    clients: ClientFactory,
    cluster_name: str,
    *,
    grace_s: float = 600,
    timeout_s: float = 2700,
    poll_s: float = 15,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    log: Callable[[str], None] = lambda _msg: None,
) -> bool:
    """Wait until the cluster no longer exists. True when it is gone; False when it is live and staying.

    Why wait: the engine deletes the public subnets and the internet gateway in parallel with the node
    groups and the cluster, and an internet-facing load balancer blocks both. While the control plane
    runs, its controllers would recreate what we delete, so cleanup waits for the cluster to be gone. A
    cluster that shows no sign of being torn down within `grace_s` is staying (an update replaced a
    subnet): return False and touch nothing.
    """
    eks = clients("eks")
    start = clock()
    while True:
        status = cluster_status(eks, cluster_name)
        if status is None:
            return True
        elapsed = clock() - start
        if not teardown_under_way(eks, cluster_name):
            if elapsed >= grace_s:
                log(f"cluster {cluster_name} is {status} and not being deleted; leaving its resources alone")
                return False
        elif elapsed >= timeout_s:
            raise TeardownError(
                f"cluster {cluster_name} still exists ({status}) after {int(timeout_s)} s; once it is gone, run "
                f"`gpuplane janitor <stack> --delete` and `pulumi destroy --run-program` again"
            )
        sleep(poll_s)


# --- the resource hooks ---------------------------------------------------------------------------------


def default_clients(region: str) -> ClientFactory:
    """Clients in `region` with the environment's credentials (the program's, during `pulumi destroy`)."""
    import boto3  # noqa: PLC0415 - here, not at import: see retry_config

    session = boto3.session.Session(region_name=region)
    config = retry_config()
    cache: dict[str, Any] = {}

    def factory(service: str) -> Any:
        if service not in cache:
            cache[service] = session.client(service, config=config)
        return cache[service]

    return factory


def clean_vpc(
    clients: ClientFactory,
    scope: Scope,
    *,
    timeout_s: float = 900,
    log: Callable[[str], None] = lambda _msg: None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Outcome:
    """Find and remove the cluster's orphans in the VPC; raise TeardownError naming what is left."""
    findings = find_orphans(clients, scope)
    for orphan, why in findings.kept:
        log(f"keeping {orphan.kind} {orphan.id} ({orphan.name}): {why}")
    if not findings.orphans:
        log(f"nothing Kubernetes created for {scope.cluster_name} is left in {scope.vpc_id}")
        return Outcome()
    log(f"removing {len(findings.orphans)} resource(s) Kubernetes created for {scope.cluster_name} in {scope.vpc_id}")
    outcome = remove_orphans(clients, scope, findings.orphans, timeout_s=timeout_s, log=log, sleep=sleep, clock=clock)
    if outcome.remaining:
        left = "; ".join(f"{o.kind} {o.id}: {why}" for o, why in outcome.remaining)
        raise TeardownError(
            f"could not remove everything Kubernetes left in {scope.vpc_id}: {left}. Run "
            "`gpuplane janitor <stack>` to see it, `--delete` to retry, then `pulumi destroy --run-program` again"
        )
    return outcome


def _vpc_and_region(args: pulumi.ResourceHookArgs) -> tuple[str | None, str | None]:
    outputs: Mapping[str, Any] = args.old_outputs or {}
    vpc_id = outputs.get("vpcId")
    vpc_config = outputs.get("vpcConfig")
    if not vpc_id and isinstance(vpc_config, Mapping):
        vpc_id = vpc_config.get("vpcId")
    if not vpc_id and args.type == "aws:ec2/vpc:Vpc":
        vpc_id = args.id or outputs.get("id")
    arn = outputs.get("arn")
    region = arn.split(":")[3] if isinstance(arn, str) and arn.count(":") >= 5 else None
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    return (vpc_id if isinstance(vpc_id, str) and vpc_id else None), region


def run_hook(
    args: pulumi.ResourceHookArgs,
    cluster_name: str,
    *,
    wait_for_cluster: bool,
    include_volumes: bool,
    clients_for: Callable[[str], ClientFactory] = default_clients,
    log: Callable[[str], None] = pulumi.log.info,
) -> None:
    """The hooks' body, synchronous (tests call it directly with moto)."""
    vpc_id, region = _vpc_and_region(args)
    if vpc_id is None or region is None:
        log(f"{args.name}: no VPC id or region in its last outputs; nothing to clean here")
        return
    clients = clients_for(region)
    if wait_for_cluster and not await_cluster_gone(clients, cluster_name, log=log):
        return
    clean_vpc(clients, Scope(cluster_name, vpc_id, include_volumes), log=lambda m: log(f"{args.name}: {m}"))


def _hook(name: str, cluster_name: str, *, wait_for_cluster: bool, include_volumes: bool) -> pulumi.ResourceHook:
    async def remove_kubernetes_orphans(args: pulumi.ResourceHookArgs) -> None:
        """Remove what Kubernetes created in the stack's VPC, then let the delete go on."""
        # Blocking boto3 calls and waits run in a thread so hooks of other resources go on in parallel.
        await asyncio.to_thread(
            run_hook, args, cluster_name, wait_for_cluster=wait_for_cluster, include_volumes=include_volumes
        )

    return pulumi.ResourceHook(name, remove_kubernetes_orphans)


def cluster_hooks(cluster_name: str, *, include_volumes: bool = False) -> pulumi.ResourceHookBinding:
    """Bind to the EKS cluster: after it is deleted, no controller is left to recreate anything, so clean."""
    hook = _hook(
        f"{cluster_name}-k8s-orphans-after-cluster",
        cluster_name,
        wait_for_cluster=False,
        include_volumes=include_volumes,
    )
    return pulumi.ResourceHookBinding(after_delete=[hook])


def network_hooks(cluster_name: str, *, include_volumes: bool = False) -> pulumi.ResourceHookBinding:
    """Bind to the VPC, subnets and internet gateway: before each delete, wait for the cluster, then clean."""
    hook = _hook(
        f"{cluster_name}-k8s-orphans-before-network",
        cluster_name,
        wait_for_cluster=True,
        include_volumes=include_volumes,
    )
    return pulumi.ResourceHookBinding(before_delete=[hook])
