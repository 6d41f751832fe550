"""A quota warning or failure names the quota code and the exact command that asks AWS to raise it."""

from __future__ import annotations

import dataclasses

import pytest

from gpuplane.infra import config
from gpuplane.infra.aws import preflight


@pytest.mark.parametrize(("value", "status"), [(1.0, "fail"), (None, "warn")])
@pytest.mark.parametrize("profile", [None, "team"])
def test_quota_fix_names_code_and_command(value, status, profile):
    stack = dataclasses.replace(config.load("dev"), profile=profile)
    checks = preflight._quotas(stack, lambda code: value)
    assert checks and all(c.status == status for c in checks)
    for check in checks:
        code = next(word.rstrip(";") for word in check.detail.split() if word.startswith("L-"))
        command = (
            f"aws service-quotas request-service-quota-increase --service-code ec2 --quota-code {code} --desired-value "
        )
        assert command in check.fix
        assert "--region us-west-2" in check.fix
        assert ("--profile team" in check.fix) == (profile == "team")
