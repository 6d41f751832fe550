"""AWS partition facts (aws, aws-cn, aws-us-gov) from botocore's own partition data, never a list of ours.

Why: ARNs of AWS managed policies and EKS access policies, the EC2 service principal of the node role and
the STS host of the cluster token all differ by partition (`arn:aws-cn:`, `ec2.amazonaws.com.cn`,
`sts.<region>.amazonaws.com.cn`). botocore ships the partitions (`partitions.json`: region regex, DNS
suffix) and which regions offer which service (`endpoints.json`), offline and updated with every release,
so a new EKS region or partition needs a botocore upgrade, not a code change here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Final

import botocore.session
from botocore.loaders import Loader

# The partitions gpuplane supports: the commercial one and the two others where EKS, EFS and managed
# node groups are offered to ordinary accounts. The ISO partitions lack parts of the stack (pulumi-aws
# and EKS add-on coverage) and are refused rather than half-supported.
SUPPORTED: Final = ("aws", "aws-cn", "aws-us-gov")

# Service principals that are `<service>.<partition dnsSuffix>` rather than `<service>.amazonaws.com`
# everywhere. Only EC2 differs among the ones gpuplane trusts: AWS's own node role template
# (amazon-eks-nodegroup-role.yaml, mapping ServicePrincipals) uses `ec2.amazonaws.com.cn` in aws-cn and
# terraform-aws-eks builds it from the partition's DNS suffix; `eks.amazonaws.com` and
# `pods.eks.amazonaws.com` are the same in every partition (EKS user guide, China and GovCloud pages).
_SUFFIXED_PRINCIPALS: Final = frozenset({"ec2"})


@dataclass(frozen=True)
class Partition:
    """One AWS partition, as botocore describes it."""

    id: str
    """`aws`, `aws-cn` or `aws-us-gov`: the second field of every ARN in it."""
    dns_suffix: str
    """`amazonaws.com` or `amazonaws.com.cn`."""

    def arn(self, arn: str) -> str:
        """An ARN written for the `aws` partition (as AWS documents them), rewritten for this one.

        Lets `manifests/wellknown.py` keep the documented managed-policy ARNs as they are published.
        """
        if not arn.startswith("arn:aws:"):
            raise ValueError(f"'{arn}' is not an ARN of the aws partition (arn:aws:...)")
        return f"arn:{self.id}:" + arn.removeprefix("arn:aws:")

    def service_principal(self, service: str) -> str:
        """The principal an IAM trust policy names for an AWS service (`ec2`, `eks`, `pods.eks`)."""
        suffix = self.dns_suffix if service in _SUFFIXED_PRINCIPALS else "amazonaws.com"
        return f"{service}.{suffix}"

    def sts_host(self, region: str) -> str:
        """The regional STS host a cluster token is signed for (EKS refuses the global endpoint's)."""
        return f"sts.{region}.{self.dns_suffix}"

    @property
    def sts_audience(self) -> str:
        """The audience IRSA tokens carry and the OIDC provider lists (terraform-aws-eks: `sts.<dns suffix>`)."""
        return f"sts.{self.dns_suffix}"


@functools.cache
def _partitions() -> list[dict[str, Any]]:
    data: dict[str, Any] = Loader().load_data("partitions")
    return list(data["partitions"])


@functools.cache
def of_region(region: str) -> Partition:
    """The partition a region belongs to, by botocore's region lists and region regexes.

    ValueError names the region and the supported partitions when it is in none of them.
    """
    for entry in _partitions():
        if region in entry.get("regions", {}) or re.fullmatch(entry["regionRegex"], region):
            if entry["id"] not in SUPPORTED:
                break
            return Partition(id=entry["id"], dns_suffix=entry["outputs"]["dnsSuffix"])
    raise ValueError(f"'{region}' is not a region of a supported AWS partition ({', '.join(SUPPORTED)})")


@functools.cache
def botocore_session() -> botocore.session.Session:
    """One botocore session for the process's offline lookups (service models, endpoints).

    Its loader caches what it reads (a service model, the listing of botocore's data folders), which every
    new session reads again: each `config.load` read the EKS model twice and listed those folders twice.
    """
    return botocore.session.get_session()


@functools.cache
def service_regions(service: str) -> frozenset[str]:
    """Regions of the supported partitions where botocore knows `service` (e.g. `eks`, `efs`) is offered."""
    session = botocore_session()
    return frozenset(r for p in SUPPORTED for r in session.get_available_regions(service, partition_name=p))
