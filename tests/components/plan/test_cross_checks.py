"""The checks across config sections live in the plan layer and reach every caller the same way.

`PlatformArgs` checks each field where it is declared; what spans sections (group names, system capacity,
workload placement, the queue, prod safety) is `cross_checks.platform_problems(args)`, run by the stack
config loader and by the `Platform` component, so a program that builds the args by hand gets the same
report as a stack file, before anything is registered.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from gpuplane.components.config import FieldError, FieldErrors, PlatformArgs
from gpuplane.components.plan.cross_checks import check_platform, platform_problems
from gpuplane.components.platform import Platform
from gpuplane.infra import config, mockrun
from tests.conftest import DEV_CLUSTER

CPU = {"name": "system", "instanceTypes": ["m6i.large"], "minSize": 1}
# Two problems of different sections: duplicate group names, and a prod endpoint open to the internet.
BROKEN: dict[str, Any] = {
    "profile": "prod",
    "cluster": {"endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/1", "128.0.0.0/1"]},
    "nodeGroups": [CPU, CPU],
}


def test_the_schema_builds_args_that_the_cross_checks_then_refuse():
    args = PlatformArgs.model_validate(BROKEN)  # each field is valid on its own
    problems = {(p.field, p.message.split(";")[0]) for p in platform_problems(args)}
    assert ("nodeGroups", "group name(s) ['system'] used more than once") in problems
    assert any(field == "cluster.publicAccessCidrs" for field, _ in problems)
    with pytest.raises(FieldErrors) as raised:
        check_platform(args)
    assert {e.field for e in raised.value.errors} == {"nodeGroups", "cluster.publicAccessCidrs"}


def test_valid_args_have_no_problems():
    args = PlatformArgs.model_validate({"cluster": DEV_CLUSTER, "nodeGroups": [CPU]})
    assert platform_problems(args) == []
    check_platform(args)  # raises nothing


def test_the_stack_loader_reports_them_by_key():
    raw = {"aws:region": "us-west-2", **{f"gpuplane:{k}": v for k, v in BROKEN.items()}}
    with pytest.raises(config.ConfigError) as raised:
        config.parse(raw, "test")
    text = "\n".join(raised.value.problems)
    assert "gpuplane:nodeGroups: group name(s) ['system'] used more than once; names must be unique" in text
    assert "gpuplane:cluster.publicAccessCidrs: ['0.0.0.0/1', '128.0.0.0/1'] opens the prod API endpoint" in text


def test_a_program_building_the_platform_by_hand_gets_the_same_report_before_anything_is_made(
    monkeypatch: pytest.MonkeyPatch,
):
    args = PlatformArgs.model_validate({**BROKEN, "profile": "dev"})  # dev: only the duplicate names
    made: list[str] = []
    component_init = pulumi.ComponentResource.__init__

    def recording_init(self: pulumi.ComponentResource, t: str, name: str, *rest: Any, **kw: Any) -> None:
        made.append(t)
        component_init(self, t, name, *rest, **kw)

    monkeypatch.setattr(pulumi.ComponentResource, "__init__", recording_init)

    def program() -> dict[str, Any]:
        Platform("p", args, region="us-west-2")
        return {}

    with pytest.raises(FieldError, match=r"group name\(s\) \['system'\] used more than once"):
        mockrun.run(program, "gpuplane", "test", "us-west-2")
    assert made == ["pulumi:pulumi:Stack"]  # the run's root only: refused before the Platform or any child
