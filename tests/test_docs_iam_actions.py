"""IAM action names the docs tell users to grant use IAM's service prefixes, not the SDK's client names.

Why: a reader builds a least-privilege policy from the docs' tables (preflight, verify, operations). Where the
IAM prefix differs from the AWS CLI / boto3 client name, the client name in a policy names no action: IAM's
policy validation flags it and the grant does nothing, so the command the docs describe is denied. The pairs
below are the clients gpuplane calls whose IAM prefix differs (AWS Service Authorization Reference, "Actions,
resources, and condition keys": Amazon EFS `elasticfilesystem`, Amazon Managed Service for Prometheus `aps`,
Elastic Load Balancing `elasticloadbalancing`, Service Quotas `servicequotas`, CloudWatch `cloudwatch`
whose endpoint is `monitoring`; read 2026-11-26).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# SDK client (or endpoint) name -> the IAM prefix of its actions.
CLIENT_NOT_IAM = {
    "efs": "elasticfilesystem",
    "amp": "aps",
    "elbv2": "elasticloadbalancing",
    "elb": "elasticloadbalancing",
    "service-quotas": "servicequotas",
    "monitoring": "cloudwatch",
}
ACTION = re.compile(r"`([a-z0-9-]+):([A-Z][A-Za-z]*\*?)`")


def test_docs_name_iam_actions_by_their_iam_prefix() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    wrong = [
        f"{page.relative_to(ROOT)}:{n}: `{m[1]}:{m[2]}` should be `{CLIENT_NOT_IAM[m[1]]}:{m[2]}`"
        for page in pages
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for m in ACTION.finditer(line)
        if m[1] in CLIENT_NOT_IAM
    ]
    assert wrong == []
