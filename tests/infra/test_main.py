"""`infra/__main__.py` as the real engine runs it: config from the engine, exit 2 on bad config."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest
import yaml
from pulumi.runtime import config as runtime_config

from gpuplane.infra import mockrun
from tests import shipped

MAIN = Path(__file__).resolve().parents[2] / "infra" / "__main__.py"
STACKS = shipped.STACKS


def engine_config(stack: str) -> dict[str, str]:
    """The stack file as the engine passes it: strings, structured values JSON-encoded."""
    raw = yaml.safe_load((STACKS / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}


def run_main(values: dict[str, str], stack: str) -> mockrun.Recording:
    def program() -> dict[str, object]:
        runtime_config.set_all_config(values)
        runpy.run_path(str(MAIN), run_name="__main__")
        return {}

    try:
        return mockrun.run(program, "gpuplane", stack, "us-west-2")
    finally:
        runtime_config.set_all_config({})


def test_main_builds_the_prod_stack_from_engine_config():
    rec = run_main(engine_config("prod"), "prod")
    assert len(rec.by_type("aws:eks/nodeGroup:NodeGroup")) == 2
    assert rec.one("aws:eks/cluster:Cluster").inputs["vpcConfig"]["endpointPublicAccess"] is False
    assert len(rec.by_type("aws:ec2/natGateway:NatGateway")) == 3


def test_main_stops_with_exit_2_before_registering_anything(capsys):
    values = engine_config("dev")
    values["gpuplane:nodeGroups"] = json.dumps([{"name": "system", "instanceTypes": ["m6i.large"], "minSize": 5}])
    with pytest.raises(SystemExit) as info:
        run_main(values, "dev")
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "gpuplane:nodeGroups[0].minSize: 5 is greater than maxSize 3" in err
