"""Preflight: what would make `pulumi up` fail fifteen minutes in, checked before anything is created.

Each check answers pass, warn or fail, with the detail and, for a failure, the fix. The AZ choice mirrors
`components/network.py` (explicit `network.availabilityZones`, else the first `azCount` available AZs
that need no opt-in, sorted) so the AZs checked are the AZs `pulumi up` would use.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

import boto3
import botocore.exceptions

from gpuplane.components.config import NodeGroupArgs
from gpuplane.components.facts import prices
from gpuplane.components.facts.addresses import unreachable
from gpuplane.components.facts.catalog import lookup
from gpuplane.components.plan import addons, upgrade
from gpuplane.components.plan.gpu_nodes import GpuPlan
from gpuplane.infra.aws.session import AwsError, caller_identity, client, explain, retry_config
from gpuplane.infra.config import StackConfig
from gpuplane.manifests import lifecycle, versions, wellknown

Status = Literal["pass", "warn", "fail"]

# EC2 vCPU quotas (Service Quotas, service code ec2) by (instance class, capacity type). The Service Quotas
# console lists the G/VT and P codes; the standard ones are "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z)
# instances" and "All Standard ... Spot Instance Requests".
QUOTAS: Final[dict[tuple[str, str], tuple[str, str]]] = {
    ("standard", "ON_DEMAND"): ("L-1216C47A", "Running On-Demand Standard instances"),
    ("standard", "SPOT"): ("L-34B43A08", "All Standard Spot Instance Requests"),
    ("g", "ON_DEMAND"): ("L-DB2E81BA", "Running On-Demand G and VT instances"),
    ("g", "SPOT"): ("L-3819A6DF", "All G and VT Spot Instance Requests"),
    ("p", "ON_DEMAND"): ("L-417A185B", "Running On-Demand P instances"),
    ("p", "SPOT"): ("L-7212CCBC", "All P Spot Instance Requests"),
}

QuotaReader = Callable[[str], float | None]
"""Quota code -> applied vCPU quota, or None when it cannot be read."""


@dataclass(frozen=True)
class Check:
    """One preflight answer."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        """Plain dict for `--json`."""
        return asdict(self)


# --- pure helpers ---------------------------------------------------------------------------------------


def quota_class(instance_type: str) -> str | None:
    """`g` (G and VT), `p`, `standard`, or None for classes with quotas of their own (x, inf, trn...)."""
    family = instance_type.split(".", 1)[0]
    if family.startswith(("g", "vt")):
        return "g"
    if family.startswith("p"):
        return "p"
    if family[0] in "acdhimrtz" and not family.startswith(("inf", "dl", "trn")):
        return "standard"
    return None


def vcpus_needed(groups: Iterable[NodeGroupArgs]) -> dict[tuple[str, str], tuple[int, list[str]]]:
    """The vCPUs each quota must cover when every group runs at its max size on its largest type."""
    needed: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for group in groups:
        qclass = quota_class(group.instance_types[0])
        # A Capacity Block is capacity bought for a time, not an On-Demand or Spot request: no vCPU quota of
        # the table above applies to it; `reservation_checks` reads the block itself.
        if qclass is None or group.capacity_type == "CAPACITY_BLOCK":
            continue
        key = (qclass, group.capacity_type)
        vcpus = group.max_size * max(lookup(t).vcpus for t in group.instance_types)
        total, names = needed.get(key, (0, []))
        needed[key] = (total + vcpus, [*names, group.name])
    return needed


def ami_parameter(ami_type: str, kubernetes_version: str) -> str:
    """The public SSM parameter that holds the recommended AMI of an EKS AMI type (EKS user guide)."""
    arch, nvidia, family = wellknown.AMI_TYPES[ami_type]
    ssm_arch = "arm64" if arch == "arm64" else "x86_64"
    if family == "bottlerocket":
        variant = f"aws-k8s-{kubernetes_version}" + ("-nvidia" if nvidia else "")
        return f"/aws/service/bottlerocket/{variant}/{ssm_arch}/latest/image_id"
    flavour = "nvidia" if nvidia else "standard"
    base = f"/aws/service/eks/optimized-ami/{kubernetes_version}/amazon-linux-2023"
    return f"{base}/{ssm_arch}/{flavour}/recommended/image_id"


def choose_azs(config: StackConfig, available: list[str]) -> tuple[list[str], str | None]:
    """The AZs `pulumi up` would use, and a problem if the region cannot give them."""
    explicit = config.platform.network.availability_zones
    if explicit:
        unknown = [az for az in explicit if az not in available]
        return list(explicit), (f"{unknown} are not available AZs of {config.region}" if unknown else None)
    count = config.platform.network.az_count
    chosen = sorted(available)[:count]
    if len(chosen) < count:
        return chosen, f"network.azCount is {count} but {config.region} offers only {len(available)}: {available}"
    return chosen, None


# --- the checks -----------------------------------------------------------------------------------------


def run(
    config: StackConfig,
    session: boto3.session.Session,
    *,
    quota_reader: QuotaReader | None = None,
    progress: Callable[[str], None] = lambda _name: None,
) -> list[Check]:
    """Run every check against the account; a failed credentials check stops the rest."""
    progress("credentials")
    try:
        identity = caller_identity(session)
    except AwsError as exc:
        return [Check("credentials", "fail", exc.message, exc.fix)]
    checks = [Check("credentials", "pass", f"account {identity.account} as {identity.arn}")]
    checks.append(access_entries(config, identity.arn))
    checks.append(pulumi_cli())
    checks.append(api_reachability(config, local_addresses()))
    checks.append(pinned_defaults(config))
    checks.extend(gpu_stack_checks(config))
    steps: list[tuple[str, Callable[[], list[Check]]]] = [
        ("region", lambda: [_region(config, session)]),
        ("availability zones and instance types", lambda: _offerings(config, session)),
        ("vCPU quotas", lambda: _quotas(config, quota_reader or _service_quota_reader(session))),
        ("AMIs", lambda: _amis(config, session)),
        ("Kubernetes version", lambda: [_kubernetes_version(config, session)]),
        ("EKS add-ons", lambda: addon_checks(config, client(session, "eks"))),
        ("EFS", lambda: [_efs(config, session)]),
        ("capacity reservations", lambda: reservation_checks(config, client(session, "ec2"))),
        ("Kubernetes version drift", lambda: [version_drift(config, session)]),
        ("Kubernetes upgrade", lambda: upgrade_checks(config, client(session, "eks"))),
        ("prices", lambda: live_prices(config, session)),
    ]
    for name, step in steps:
        progress(name)
        try:
            checks.extend(step())
        except AwsError as exc:
            checks.append(Check(name, "fail", exc.message, exc.fix))
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            error = explain(exc, f"checking {name}")
            checks.append(Check(name, "fail", error.message, error.fix))
        if name == "region" and checks[-1].status == "fail":
            break  # nothing else can be answered in a region we cannot use
    return checks


def reservation_checks(config: StackConfig, ec2: Any, *, now: datetime | None = None) -> list[Check]:
    """Each group's reservation, read with the user's credentials, against what the stack says.

    `DescribeCapacityReservations` answers for ODCRs and Capacity Blocks alike: its state, AZ, instance
    type, count and dates. A reservation that does not exist, has ended or been cancelled, or differs from
    the stack in AZ, type, count or kind fails: `pulumi up` would make a group whose nodes never launch.
    A block that has not started yet only warns: the group is created at size 0 and scales up once it is
    active. Reservation groups (`resourceGroupArn`) and preferences have nothing to compare.
    """
    now = now or datetime.now(UTC)
    checks: list[Check] = []
    for group in config.platform.resolved_node_groups:
        wanted = group.capacity_reservation
        if wanted is None or wanted.id is None:
            continue
        name = f"reservation: {group.name}"
        try:
            found = ec2.describe_capacity_reservations(CapacityReservationIds=[wanted.id])["CapacityReservations"]
        except botocore.exceptions.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if not code.startswith("InvalidCapacityReservationId"):
                raise
            found = []
        if not found:
            checks.append(
                Check(
                    name,
                    "fail",
                    f"{wanted.id} is not a Capacity Reservation of this account in {config.region}",
                    f"Fix nodeGroups.{group.name}.capacityReservation.id (aws ec2 describe-capacity-reservations)",
                )
            )
            continue
        checks.append(_compare_reservation(group, found[0], now))
    return checks


def _compare_reservation(group: NodeGroupArgs, found: dict[str, Any], now: datetime) -> Check:
    wanted = group.capacity_reservation
    assert wanted is not None
    name = f"reservation: {group.name}"
    key = f"nodeGroups.{group.name}.capacityReservation"
    state = found.get("State", "unknown")
    end = found.get("EndDate")
    problems = []
    if state in ("expired", "cancelled", "cancelling", "failed", "payment-failed", "unsupported", "unavailable"):
        problems.append(f"it is {state}" + (f" (ended {end:%Y-%m-%d %H:%M %Z})" if end else ""))
    elif end is not None and end <= now:
        problems.append(f"it ended {end:%Y-%m-%d %H:%M %Z}")
    if found.get("AvailabilityZone") != wanted.availability_zone:
        problems.append(f"it is in {found.get('AvailabilityZone')}, the stack says {wanted.availability_zone}")
    if found.get("InstanceType") not in group.instance_types:
        problems.append(f"it reserves {found.get('InstanceType')}, the group runs {', '.join(group.instance_types)}")
    total = found.get("TotalInstanceCount")
    if wanted.instance_count is not None and total is not None and total != wanted.instance_count:
        problems.append(f"it holds {total} instance(s), the stack says instanceCount {wanted.instance_count}")
    is_block = found.get("ReservationType") == "capacity-block"
    if is_block != (group.capacity_type == "CAPACITY_BLOCK"):
        kind = "a Capacity Block" if is_block else "an On-Demand Capacity Reservation"
        problems.append(f"it is {kind} but the group's capacityType is {group.capacity_type}")
    if problems:
        return Check(name, "fail", f"{wanted.id}: " + "; ".join(problems), f"Fix {key} (or the reservation)")
    when = (
        f", {found.get('StartDate'):%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M %Z}"
        if end and found.get("StartDate")
        else ""
    )
    detail = f"{wanted.id} {state}: {total} x {found.get('InstanceType')} in {found.get('AvailabilityZone')}{when}"
    if state != "active":
        return Check(
            name,
            "warn",
            detail,
            "Nodes launch only once it is active; the group stays at 0 until then",
        )
    if wanted.end is not None and end is not None and wanted.end != end:
        return Check(name, "warn", detail, f"{key}.endTime says {wanted.end_time}; set it to the reservation's end")
    return Check(name, "pass", detail)


def pinned_defaults(config: StackConfig, recording: Any = None) -> Check:
    """Whether a default image or chart this stack uses is past its vendor's end of support.

    The same finding as `gpuplane render`'s warning: the stack is run under mocks (no AWS) and the images and
    charts it applies are matched against the pins of manifests/versions.py; images the user names are theirs.
    A render only warns (it creates nothing); preflight is the gate before `pulumi up` installs software that
    gets no security fixes, so a date the vendor published fails. A date gpuplane estimated from the vendor's
    release policy (Kueue publishes none) only warns: the vendor may still ship patches for that release, and a
    gate that refuses every deploy on a guess is one users learn to ignore.
    """
    from gpuplane.components.plan import training  # noqa: PLC0415 - loaded only for this check
    from gpuplane.infra import render  # noqa: PLC0415

    recording = recording if recording is not None else render.run_stack(config)
    runs = training.run_manifests(config.platform)  # what `gpuplane train` submits uses pinned images too
    used = render.pins_used(recording, runs)
    aged = [pin for pin in used if lifecycle.past_end_of_support(pin)]
    if aged:
        published = [pin for pin in aged if not pin.estimated]
        detail = "; ".join(lifecycle.end_of_support_warnings(aged))
        if published:
            own = sorted({lifecycle.OWN_IMAGE_KEY[p.name] for p in published if p.name in lifecycle.OWN_IMAGE_KEY})
            also = f"; an image of your own in the stack also does ({', '.join(own)})" if own else ""
            return Check("default versions", "fail", detail, f"Upgrade gpuplane (newer pins){also}")
        return Check(
            "default versions",
            "warn",
            detail,
            "The date is gpuplane's estimate from the vendor's release policy: if the vendor's releases show no "
            "patch for this release since then, upgrade gpuplane",
        )
    dated = sorted((p.end_of_support, p.reference) for p in used if p.end_of_support)
    soonest = f"; the first to age: {dated[0][1]} on {dated[0][0]}" if dated else ""
    detail = f"{len(used)} default images and charts, none past end of support{soonest}"
    return Check("default versions", "pass", detail)


def principal_of(caller_arn: str) -> str:
    """The IAM principal an EKS access entry names for a caller: an assumed role's role, else the ARN itself.

    `arn:aws:sts::111122223333:assumed-role/Admin/alice` -> `arn:aws:iam::111122223333:role/Admin` (EKS keys
    access entries by the role; the role's path is not in the STS ARN, so paths are compared without it).
    """
    match = re.fullmatch(r"arn:(aws[a-z-]*):sts::(\d{12}):assumed-role/([^/]+)/.+", caller_arn)
    if match:
        return f"arn:{match.group(1)}:iam::{match.group(2)}:role/{match.group(3)}"
    return caller_arn


def access_entries(config: StackConfig, caller_arn: str) -> Check:
    """The caller must not be in `adminPrincipals` while EKS makes its entry (`bootstrapCreatorAdmin`).

    EKS creates the creator's access entry with the cluster; a second entry for the same principal from
    `adminPrincipals` fails `pulumi up` with ResourceInUseException after the cluster exists.
    """
    cluster = config.platform.cluster
    name = "access entries"
    if not cluster.bootstrap_creator_admin:
        return Check(name, "pass", "bootstrapCreatorAdmin is off: only cluster.adminPrincipals get access")
    caller = principal_of(caller_arn)
    strip_path = re.compile(r":(role|user)/(?:.*/)?([^/]+)$")
    same = [p for p in cluster.admin_principals if strip_path.sub(r":\1/\2", p) == strip_path.sub(r":\1/\2", caller)]
    if same:
        return Check(
            name,
            "fail",
            f"{same[0]} runs `pulumi up` and is in cluster.adminPrincipals while bootstrapCreatorAdmin is on: "
            "EKS already makes its access entry, so creating a second one fails",
            "Remove it from gpuplane:cluster.adminPrincipals, or set cluster.bootstrapCreatorAdmin: false",
        )
    return Check(
        name,
        "pass",
        f"{caller} gets cluster-admin at creation; {len(cluster.admin_principals)} more in adminPrincipals",
    )


def _region(config: StackConfig, session: boto3.session.Session) -> Check:
    try:
        regions = client(session, "ec2").describe_regions(RegionNames=[config.region], AllRegions=True)["Regions"]
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "InvalidParameterValue":
            return Check(
                "region", "fail", f"'{config.region}' is not an EC2 region", "Fix aws:region in the stack file"
            )
        raise
    status = regions[0].get("OptInStatus", "opt-in-not-required") if regions else "unknown"
    if status == "not-opted-in":
        return Check(
            "region",
            "fail",
            f"{config.region} is not enabled for this account",
            "Enable the region (Account settings > AWS Regions) or pick another aws:region",
        )
    return Check("region", "pass", f"{config.region} ({status})")


def _offerings(config: StackConfig, session: boto3.session.Session) -> list[Check]:
    ec2 = client(session, "ec2")
    zones = ec2.describe_availability_zones(
        Filters=[
            {"Name": "state", "Values": ["available"]},
            {"Name": "opt-in-status", "Values": ["opt-in-not-required"]},
        ]
    )["AvailabilityZones"]
    available = sorted(z["ZoneName"] for z in zones)
    chosen, problem = choose_azs(config, available)
    if problem:
        return [Check("availability zones", "fail", problem, "Fix network.availabilityZones / network.azCount")]
    checks = [Check("availability zones", "pass", ", ".join(chosen))]
    groups = config.platform.resolved_node_groups
    types = sorted({t for g in groups for t in g.instance_types})
    offered: dict[str, set[str]] = {t: set() for t in types}
    pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": types}]
    )
    for page in pages:
        for offering in page.get("InstanceTypeOfferings", []):
            offered.setdefault(offering["InstanceType"], set()).add(offering["Location"])
    everywhere = sorted(az for az in available if all(az in offered[t] for t in types))
    for group in groups:
        gaps = {t: sorted(set(chosen) - offered[t]) for t in group.instance_types if set(chosen) - offered[t]}
        name = f"instance types: {group.name}"
        if not gaps:
            checks.append(Check(name, "pass", f"{', '.join(group.instance_types)} offered in {', '.join(chosen)}"))
            continue
        detail = "; ".join(f"{t} is not offered in {', '.join(azs)}" for t, azs in gaps.items())
        if len(everywhere) >= len(chosen):
            fix = (
                f"Set network.availabilityZones to {len(chosen)} of {everywhere} (they offer every instance type "
                f"of every group)"
            )
        else:
            working = {t: sorted(offered[t]) for t in gaps}
            fix = f"Drop or replace the type(s); AZs that offer them: {working}"
        checks.append(Check(name, "fail", detail, fix))
    return checks


def _service_quota_reader(session: boto3.session.Session) -> QuotaReader:
    quotas = client(session, "service-quotas")

    def read(code: str) -> float | None:
        try:
            return float(quotas.get_service_quota(ServiceCode="ec2", QuotaCode=code)["Quota"]["Value"])
        except botocore.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "NoSuchResourceException":
                raise
        try:  # never raised from its default: the applied value is the default
            return float(quotas.get_aws_default_service_quota(ServiceCode="ec2", QuotaCode=code)["Quota"]["Value"])
        except (botocore.exceptions.ClientError, NotImplementedError):  # moto in-process raises the latter
            return None

    return read


def _quotas(config: StackConfig, read: QuotaReader) -> list[Check]:
    checks = []
    for (qclass, capacity), (vcpus, names) in sorted(vcpus_needed(config.platform.resolved_node_groups).items()):
        code, title = QUOTAS[(qclass, capacity)]
        name = f"quota: {title}"
        try:
            value = read(code)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            error = explain(exc, f"reading quota {code}")
            checks.append(Check(name, "warn", error.message, "Grant servicequotas:GetServiceQuota to check it"))
            continue
        groups = ", ".join(names)
        if value is None:
            checks.append(
                Check(
                    name,
                    "warn",
                    f"could not read {code}; {groups} need {vcpus} vCPUs",
                    f"Check quota {code} (Service Quotas, service ec2); if it is lower: "
                    + _raise_quota_fix(config, code, math.ceil(vcpus)),
                )
            )
        elif value < vcpus:
            checks.append(
                Check(
                    name,
                    "fail",
                    f"{code} is {value:g} vCPUs but {groups} need {vcpus} at max size",
                    _raise_quota_fix(config, code, math.ceil(vcpus)),
                )
            )
        else:
            checks.append(Check(name, "pass", f"{code} is {value:g} vCPUs; {groups} need {vcpus} at max size"))
    return checks


def _raise_quota_fix(config: StackConfig, code: str, vcpus: int) -> str:
    """The command that asks AWS for the quota, as the stack's identity and region (or lower maxSize)."""
    profile = f" --profile {config.profile}" if config.profile else ""
    return (
        f"Raise quota {code} to at least {vcpus} vCPUs: aws service-quotas request-service-quota-increase "
        f"--service-code ec2 --quota-code {code} --desired-value {vcpus} --region {config.region}{profile} "
        "(or lower the groups' maxSize)"
    )


def _amis(config: StackConfig, session: boto3.session.Session) -> list[Check]:
    ssm = client(session, "ssm")
    version = config.platform.cluster.kubernetes_version
    checks = []
    for group in config.platform.resolved_node_groups:
        parameter = ami_parameter(group.resolved_ami_type, version)
        name = f"AMI: {group.name}"
        try:
            image = ssm.get_parameter(Name=parameter)["Parameter"]["Value"]
        except botocore.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ParameterNotFound":
                raise
            checks.append(
                Check(
                    name,
                    "fail",
                    f"no {group.resolved_ami_type} AMI for Kubernetes {version} in {config.region} ({parameter})",
                    "Pick another cluster.kubernetesVersion or the group's amiType",
                )
            )
            continue
        checks.append(Check(name, "pass", f"{group.resolved_ami_type} {version}: {image}"))
    return checks


def _kubernetes_version(config: StackConfig, session: boto3.session.Session) -> Check:
    version = config.platform.cluster.kubernetes_version
    name = "Kubernetes version"
    try:
        answer = client(session, "eks").describe_cluster_versions(clusterVersions=[version])
    except (botocore.exceptions.ClientError, NotImplementedError) as exc:
        code = exc.response.get("Error", {}).get("Code", "") if isinstance(exc, botocore.exceptions.ClientError) else ""
        if code in {"AccessDeniedException", "UnrecognizedClientException"}:
            raise
        # Older endpoints (and moto) lack DescribeClusterVersions: the AMI parameters answer it instead.
        ami = ami_parameter(wellknown.AMI_AL2023_X86_STANDARD, version)
        try:
            client(session, "ssm").get_parameter(Name=ami)
        except botocore.exceptions.ClientError:
            return Check(name, "fail", f"EKS publishes no AMIs for {version} here", "Pick another kubernetesVersion")
        return Check(name, "pass", f"{version} (EKS AMIs are published; DescribeClusterVersions unavailable)")
    entries: list[dict[str, Any]] = answer.get("clusterVersions", [])
    entry = next((e for e in entries if e.get("clusterVersion") == version), None)
    if entry is None:
        return Check(
            name,
            "fail",
            f"EKS does not offer {version} in {config.region}",
            f"Pick one of {', '.join(versions.KUBERNETES_VERSIONS)}",
        )
    status = str(entry.get("versionStatus") or entry.get("status") or "")
    if "EXTENDED" in status.upper():
        advice = lifecycle.supported_version_advice()
        return Check(
            name,
            "warn",
            f"{version} is in extended support (extra cost per cluster hour)",
            f"Upgrade: {advice}",
        )
    return Check(name, "pass", f"{version} ({status or 'offered'})")


def addon_checks(config: StackConfig, eks: Any) -> list[Check]:
    """Every EKS add-on the stack creates must have a version for its Kubernetes version in its region.

    `DescribeAddonVersions` answers per region: an add-on AWS does not offer there, or has not yet released
    for a new Kubernetes minor, would fail `pulumi up` after the control plane (fifteen minutes) exists.
    """
    version = config.platform.cluster.kubernetes_version
    checks = []
    for addon in addons.stack_addons(config.platform):
        name = f"EKS add-on: {addon.name}"
        try:
            answer = eks.describe_addon_versions(addonName=addon.name, kubernetesVersion=version)
        except (NotImplementedError, botocore.exceptions.ClientError) as exc:
            # moto answers 404 "Not yet implemented"; anything else (access denied...) is the step's failure.
            if isinstance(exc, botocore.exceptions.ClientError) and exc.response.get("Error", {}).get("Code") not in {
                "404",
                "NotImplemented",
                "UnknownOperationException",
            }:
                raise
            checks.append(
                Check(
                    name,
                    "warn",
                    "not checked: this EKS endpoint does not implement DescribeAddonVersions",
                    f"aws eks describe-addon-versions --addon-name {addon.name} --kubernetes-version {version} "
                    f"--region {config.region}",
                )
            )
            continue
        offered = [
            entry
            for found in answer.get("addons", [])
            if found.get("addonName") == addon.name
            for entry in found.get("addonVersions", [])
        ]
        if not offered:
            fix = (
                f"Remove {addon.key} (fixed replicas need no metrics-server) or deploy in another region"
                if addon.name == wellknown.ADDON_METRICS_SERVER
                else "Pick another cluster.kubernetesVersion or region"
            )
            checks.append(
                Check(
                    name,
                    "fail",
                    f"EKS offers no {addon.name} for Kubernetes {version} in {config.region}; {addon.key} needs it",
                    fix,
                )
            )
            continue
        default = next(
            (
                str(entry.get("addonVersion"))
                for entry in offered
                for compat in entry.get("compatibilities", [])
                if compat.get("clusterVersion") == version and compat.get("defaultVersion")
            ),
            None,
        )
        detail = f"{len(offered)} version(s) for Kubernetes {version}" + (f", default {default}" if default else "")
        checks.append(Check(name, "pass", detail))
    return checks


def _efs(config: StackConfig, session: boto3.session.Session) -> Check:
    if config.region not in boto3.session.Session().get_available_regions("efs"):
        return Check("EFS", "fail", f"EFS is not offered in {config.region}", "Pick a region with EFS")
    client(session, "efs").describe_file_systems(MaxItems=1)
    return Check("EFS", "pass", f"EFS answers in {config.region}")


# --- what a real `pulumi up` needs: the Pulumi CLI, reaching a private endpoint, version drift ----------


def _version_tuple(text: str) -> tuple[int, ...] | None:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(g) for g in match.groups()) if match else None


def pulumi_cli(run: Callable[[list[str]], str] | None = None) -> Check:
    """The Pulumi CLI on PATH must be new enough for resource hooks and `destroy --run-program`.

    `requiredPulumiVersion` in Pulumi.yaml makes the CLI refuse itself too; this says so before `up`.
    """
    name = "Pulumi CLI"
    minimum = lifecycle.PULUMI_CLI_MIN_VERSION
    if run is None:
        path = shutil.which("pulumi")
        if path is None:
            return Check(name, "pass", f"not on PATH here; `pulumi up` needs >= {minimum} (Pulumi.yaml enforces it)")

        def run(argv: list[str]) -> str:
            done = subprocess.run([path, *argv[1:]], capture_output=True, text=True, timeout=60, check=False)
            return done.stdout.strip() or done.stderr.strip()

    try:
        answer = run(["pulumi", "version"])
    except (OSError, subprocess.SubprocessError) as exc:
        return Check(name, "fail", f"`pulumi version` failed: {exc}", f"Install Pulumi CLI >= {minimum}")
    found, wanted = _version_tuple(answer), _version_tuple(minimum)
    if found is None or wanted is None:
        return Check(name, "fail", f"`pulumi version` said {answer!r}", f"Install Pulumi CLI >= {minimum}")
    if found < wanted:
        return Check(
            name,
            "fail",
            f"Pulumi CLI {answer} is older than {minimum} (resource hooks, `pulumi destroy --run-program`)",
            f"Upgrade the Pulumi CLI to {minimum} or newer (https://www.pulumi.com/docs/install/)",
        )
    return Check(name, "pass", f"{answer} (>= {minimum})")


def local_addresses() -> list[str]:
    """The IPv4 addresses of the machine running preflight: its host name's, and its default route's source.

    The UDP `connect` sends nothing; it only asks the kernel which address a packet would leave from.
    """
    found: set[str] = set()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.add(str(info[4][0]))
    except OSError:
        pass
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 443))  # TEST-NET-1: never routed anywhere real
            found.add(str(probe.getsockname()[0]))
    except OSError:
        pass
    return sorted(a for a in found if not ipaddress.IPv4Address(a).is_loopback)


def api_reachability(config: StackConfig, addresses: list[str]) -> Check:
    """A private-only endpoint is reachable only from the networks admitted on 443 (cluster.apiAccessCidrs).

    Warns (not fails) when none of this machine's addresses is inside them: a VPN or NAT may still make
    the source address the API sees one of the admitted ones, which this machine cannot know.
    """
    cluster = config.platform.cluster
    name = "API endpoint access"
    if cluster.endpoint_public_access:
        nobody = [c for c in cluster.public_access_cidrs if unreachable(c)]
        if nobody:
            return Check(
                name,
                "fail",
                f"public endpoint open only to {', '.join(cluster.public_access_cidrs)}; "
                + "; ".join(f"{c} ({unreachable(c)})" for c in nobody)
                + ": nobody can reach the API from there, and every Kubernetes object of `pulumi up` would time out",
                "Set cluster.publicAccessCidrs to the public address you run `pulumi up` and kubectl from "
                "(`curl -s ifconfig.me`, then /32), or your office's range",
            )
        return Check(name, "pass", f"public endpoint, open to {', '.join(cluster.public_access_cidrs)}")
    cidrs = config.platform.resolved_api_access_cidrs
    networks = [ipaddress.IPv4Network(c) for c in cidrs]
    inside = [a for a in addresses if any(ipaddress.IPv4Address(a) in n for n in networks)]
    if inside:
        return Check(name, "pass", f"private endpoint; this machine ({', '.join(inside)}) is in {', '.join(cidrs)}")
    groups = cluster.api_access_security_group_ids
    via = f" or the security groups {', '.join(groups)}" if groups else ""
    return Check(
        name,
        "warn",
        f"private-only endpoint admits {', '.join(cidrs) or 'no network'}{via} on 443, and none of this machine's "
        f"addresses ({', '.join(addresses) or 'none found'}) is inside: the first Kubernetes object would time out",
        "Run `pulumi up` from inside the VPC (or over VPN/peering), or add your network to cluster.apiAccessCidrs",
    )


def version_drift(config: StackConfig, session: boto3.session.Session) -> Check:
    """An existing cluster whose version differs from the pinned `kubernetesVersion` (EKS upgraded it).

    With `upgradePolicy: STANDARD`, EKS upgrades a control plane at the end of standard support; the
    stack's pinned version then no longer matches, and the next `up` would try to downgrade (refused).
    """
    name = "Kubernetes version drift"
    pinned = config.platform.cluster.kubernetes_version
    try:
        cluster = client(session, "eks").describe_cluster(name=config.cluster_name)["cluster"]
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return Check(name, "pass", f"no cluster {config.cluster_name} yet; it will run {pinned}")
        raise
    running = str(cluster.get("version", ""))
    if running and upgrade.minor_of(running) < upgrade.minor_of(pinned):
        return Check(name, "pass", f"cluster {config.cluster_name} runs {running}: the stack upgrades it to {pinned}")
    if running and running != pinned:
        return Check(
            name,
            "warn",
            f"cluster {config.cluster_name} runs {running} but cluster.kubernetesVersion pins {pinned} "
            f"(upgradePolicy {config.platform.cluster.upgrade_policy}: EKS upgrades at the end of standard support)",
            f'Set cluster.kubernetesVersion: "{running}" in the stack file (EKS never downgrades)',
        )
    return Check(name, "pass", f"cluster {config.cluster_name} runs {running}, as pinned")


# --- a Kubernetes upgrade ------------------------------------------------------------------------------------
# Raising `cluster.kubernetesVersion` is the whole upgrade (components/plan/upgrade.py): these checks say, before
# the `pulumi up`, whether EKS will take it (one minor per step, a cluster not busy with another update), what
# EKS's upgrade insights found in use that the target minor removes, and what the GPU stack's upstreams say.
UPGRADE_UNANSWERED: Final = {"404", "NotImplemented", "UnknownOperationException"}


def gpu_stack_checks(config: StackConfig) -> list[Check]:
    """The GPU stack's parts the stack runs, each against its upstream's Kubernetes range for the stack's minor."""
    platform = config.platform
    target = platform.cluster.kubernetes_version
    plan = GpuPlan(tuple(platform.resolved_node_groups))
    found = upgrade.gpu_stack_support(
        target,
        gpu=bool(plan.gpu_groups),
        operator=plan.operator,
        queue=bool(platform.training),
        autoscaler=platform.autoscaler.enabled,
    )
    return [
        Check(
            f"GPU stack at {target}: {part.part}",
            part.status,
            part.detail,
            ""
            if part.status == "pass"
            else "Keep the running minor until the part supports it, or accept and run "
            "`gpuplane verify` right after the upgrade",
        )
        for part in found
    ]


def upgrade_checks(config: StackConfig, eks: Any) -> list[Check]:
    """The live cluster (DescribeCluster) against the stack's minor, and EKS's upgrade insights for the next one.

    Nothing to say for a cluster that does not exist yet or already runs the minor; a jump of more than one
    minor fails with the path to take, and a minor below the running one fails too (EKS refuses both after
    `pulumi up` has started); insights in ERROR fail, in WARNING or UNKNOWN warn, each named with what EKS says.
    """
    name = "Kubernetes upgrade"
    target = config.platform.cluster.kubernetes_version
    try:
        cluster = eks.describe_cluster(name=config.cluster_name)["cluster"]
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return [Check(name, "pass", f"no cluster {config.cluster_name} yet: created at {target}")]
        raise
    running = str(cluster.get("version", ""))
    runs = upgrade.minor_of(running) if running else None
    if runs and runs > upgrade.minor_of(target):
        # A lower minor than the cluster runs: EKS refuses it inside `pulumi up` (it never downgrades).
        return [
            Check(
                name,
                "fail",
                upgrade.jump_problem(running, target) or f"{target} is older than the running {running}",
                f'Set cluster.kubernetesVersion: "{runs[0]}.{runs[1]}"',
            )
        ]
    if not running or upgrade.minor_of(running) == upgrade.minor_of(target):
        return [
            Check(name, "pass", f"cluster {config.cluster_name} runs {running or 'an unknown version'}: no upgrade")
        ]
    path = upgrade.upgrade_path(running, target)
    checks = []
    problem = upgrade.jump_problem(running, target)
    if problem:
        checks.append(
            Check(
                name, "fail", problem, f'Set cluster.kubernetesVersion: "{path[0]}", pulumi up, verify; then the next'
            )
        )
    else:
        checks.append(
            Check(
                name,
                "pass",
                f"{running} -> {target}: control plane, then add-ons, node groups, the add-ons that need nodes "
                "(docs/upgrades.md)",
            )
        )
    status = str(cluster.get("status", ""))
    if status != "ACTIVE":
        checks.append(
            Check(
                f"{name}: cluster status",
                "fail",
                f"cluster {config.cluster_name} is {status}: EKS takes one update at a time",
                f"Wait until `aws eks describe-cluster --name {config.cluster_name}` says ACTIVE",
            )
        )
    checks.append(upgrade_insights(config, eks, path[0]))
    return checks


def upgrade_insights(config: StackConfig, eks: Any, target: str) -> Check:
    """EKS upgrade insights (ListInsights, UPGRADE_READINESS) for `target`: deprecated APIs still in use and more."""
    name = f"Kubernetes upgrade: insights for {target}"
    request: dict[str, Any] = {
        "clusterName": config.cluster_name,
        "filter": {"categories": ["UPGRADE_READINESS"], "kubernetesVersions": [target]},
    }
    insights: list[dict[str, Any]] = []
    try:
        while True:
            answer = eks.list_insights(**request)
            insights += answer.get("insights", [])
            if not answer.get("nextToken"):
                break
            request["nextToken"] = answer["nextToken"]
    except (NotImplementedError, botocore.exceptions.ClientError) as exc:
        if isinstance(exc, botocore.exceptions.ClientError) and (
            exc.response.get("Error", {}).get("Code") not in UPGRADE_UNANSWERED
        ):
            raise
        return Check(
            name,
            "warn",
            "not checked: this EKS endpoint does not implement ListInsights",
            f"aws eks list-insights --cluster-name {config.cluster_name} --filter "
            f"categories=UPGRADE_READINESS,kubernetesVersions={target} --region {config.region}",
        )
    if not insights:
        return Check(
            name,
            "warn",
            f"EKS has no upgrade insights for {target} on {config.cluster_name} yet (it refreshes them daily)",
            "Run preflight again later, or read the cluster's Upgrade insights tab in the EKS console",
        )
    by_status: dict[str, list[str]] = {}
    for insight in insights:
        status = str(insight.get("insightStatus", {}).get("status", "UNKNOWN"))
        reason = insight.get("insightStatus", {}).get("reason") or insight.get("description", "")
        by_status.setdefault(status, []).append(f"{insight.get('name')} ({reason})" if reason else str(insight["name"]))
    failing = by_status.get("ERROR", [])
    doubtful = by_status.get("WARNING", []) + by_status.get("UNKNOWN", [])
    passing = len(by_status.get("PASSING", []))
    fix = (
        f"aws eks describe-insight --cluster-name {config.cluster_name} --id <id> names each client still calling a "
        f"removed API; move them before upgrading to {target}"
    )
    if failing:
        return Check(name, "fail", f"{len(failing)} insight(s) in ERROR for {target}: " + "; ".join(failing), fix)
    if doubtful:
        return Check(name, "warn", f"{len(doubtful)} insight(s) to look at for {target}: " + "; ".join(doubtful), fix)
    return Check(name, "pass", f"{passing} upgrade insight(s) for {target}, all passing")


# --- live prices ----------------------------------------------------------------------------------------
# The render prices a stack from a dated table (components/facts/prices.py); with credentials, preflight reads
# today's on-demand price from the Price List API (its endpoint is us-east-1 for every region's prices) and
# the last spot prices from EC2's spot price history in the stack's region. A price is information, never a
# reason to stop: a price that cannot be read is a warning.
PRICING_ENDPOINT_REGION: Final = "us-east-1"
_PRICE_FILTERS: Final = (
    ("operatingSystem", "Linux"),
    ("tenancy", "Shared"),
    ("preInstalledSw", "NA"),
    ("capacitystatus", "Used"),
    ("licenseModel", "No License required"),
)


def on_demand_price(pricing: Any, instance_type: str, region: str) -> float | None:
    """Today's on-demand USD per hour of a Linux, shared-tenancy instance, from the Price List API."""
    filters = [
        {"Type": "TERM_MATCH", "Field": field, "Value": value}
        for field, value in (("regionCode", region), ("instanceType", instance_type), *_PRICE_FILTERS)
    ]
    answer = pricing.get_products(ServiceCode="AmazonEC2", Filters=filters, MaxResults=10)
    for item in answer.get("PriceList", []):
        product = json.loads(item) if isinstance(item, str) else item
        for term in product.get("terms", {}).get("OnDemand", {}).values():
            for dimension in term.get("priceDimensions", {}).values():
                usd = float(dimension.get("pricePerUnit", {}).get("USD", 0))
                if usd > 0:
                    return usd
    return None


def spot_prices(ec2: Any, instance_types: list[str]) -> dict[str, dict[str, float]]:
    """The latest spot price per type and AZ (Linux/UNIX) in the client's region: {type: {az: usd}}."""
    latest: dict[str, dict[str, tuple[Any, float]]] = {}
    pages = ec2.get_paginator("describe_spot_price_history").paginate(
        InstanceTypes=instance_types,
        ProductDescriptions=["Linux/UNIX"],
        StartTime=datetime.now(UTC),
    )
    for page in pages:
        for entry in page.get("SpotPriceHistory", []):
            zones = latest.setdefault(entry["InstanceType"], {})
            seen = zones.get(entry["AvailabilityZone"])
            if seen is None or entry["Timestamp"] > seen[0]:
                zones[entry["AvailabilityZone"]] = (entry["Timestamp"], float(entry["SpotPrice"]))
    return {t: {az: price for az, (_, price) in sorted(zones.items())} for t, zones in latest.items()}


def price_checks(config: StackConfig, live: dict[str, float | None], spot: dict[str, dict[str, float]]) -> list[Check]:
    """One check per node group: the live prices beside the table the render used (pure)."""
    table = prices.table()
    checks = []
    for group in config.platform.resolved_node_groups:
        parts = []
        for name in group.instance_types:
            quoted = prices.on_demand(name, config.region, table)
            shown = f"{quoted.usd_per_hour:g}" if quoted.usd_per_hour is not None else "none"
            where = "" if quoted.priced_region == config.region else f" {quoted.priced_region}"
            today = live.get(name)
            text = f"{name} on-demand ${today:g}/h" if today is not None else f"{name} on-demand: no live price"
            text += f" (render's table{where}, {table.date}: {shown})"
            if group.capacity_type == "SPOT":
                zones = spot.get(name, {})
                if zones:
                    low, high = min(zones.values()), max(zones.values())
                    text += f"; spot now ${low:g}-{high:g}/h in {', '.join(sorted(zones))}"
                else:
                    text += "; no spot price history"
            parts.append(text)
        missing = any(live.get(name) is None for name in group.instance_types)
        checks.append(
            Check(
                f"prices: {group.name}",
                "warn" if missing else "pass",
                "; ".join(parts),
                "Check the type is sold in the region (instance types check) and that the caller may call "
                "pricing:GetProducts"
                if missing
                else "",
            )
        )
    return checks


def live_prices(config: StackConfig, session: boto3.session.Session) -> list[Check]:
    """Live on-demand and spot prices for the stack's types in its region; warnings when they cannot be read."""
    types = sorted({t for g in config.platform.resolved_node_groups for t in g.instance_types})
    try:
        pricing = session.client("pricing", region_name=PRICING_ENDPOINT_REGION, config=retry_config())
        live = {t: on_demand_price(pricing, t, config.region) for t in types}
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        error = explain(exc, "reading on-demand prices (pricing:GetProducts)")
        return [Check("prices", "warn", error.message, error.fix)]
    spot_types = sorted(
        {t for g in config.platform.resolved_node_groups if g.capacity_type == "SPOT" for t in g.instance_types}
    )
    spot: dict[str, dict[str, float]] = {}
    if spot_types:
        try:
            spot = spot_prices(client(session, "ec2"), spot_types)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError):
            spot = {}
    return price_checks(config, live, spot)
