"""The program's own look at the running cluster's minor (infra/aws/live_version.py), against moto's EKS.

EKS takes one minor up per `UpdateClusterVersion` and never goes down: the program refuses such a stack before it
registers anything, and goes on (with a warning) where the version cannot be read.
"""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from gpuplane.infra import config as config_module
from gpuplane.infra.aws import live_version
from tests.conftest import DEV_CLUSTER, stack_config
from tests.infra.test_main import engine_config, run_main

REGION = "us-west-2"


def stack(version: str) -> config_module.StackConfig:
    return stack_config({"cluster": {**DEV_CLUSTER, "kubernetesVersion": version}}, region=REGION)


def running(cfg: config_module.StackConfig, version: str) -> None:
    """A cluster of the stack's name in moto, at `version`."""
    boto3.client("eks", region_name=REGION).create_cluster(
        name=cfg.cluster_name,
        version=version,
        roleArn="arn:aws:iam::123456789012:role/eks",
        resourcesVpcConfig={"subnetIds": ["subnet-1", "subnet-2"]},
    )


@mock_aws
@pytest.mark.parametrize("runs", [None, "1.35", "1.36"])
def test_no_cluster_one_minor_up_or_the_same_minor_goes_on(runs: str | None) -> None:
    cfg = stack("1.36")
    if runs:
        running(cfg, runs)
    assert live_version.version_problem(cfg) == (None, None)


@mock_aws
def test_a_skipped_minor_is_refused_with_the_path() -> None:
    cfg = stack("1.36")
    running(cfg, "1.34")
    problem, warning = live_version.version_problem(cfg)
    assert warning is None
    assert problem is not None and "take the path 1.34 -> 1.35 -> 1.36" in problem


@mock_aws
def test_a_minor_below_the_running_one_is_refused() -> None:
    cfg = stack("1.35")
    running(cfg, "1.36")
    problem, _ = live_version.version_problem(cfg)
    assert problem is not None and "older than the running cluster's 1.36" in problem and "never downgrades" in problem


def test_an_unreadable_version_is_a_warning_not_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing listens on port 9: the call fails at once, and the program goes on, saying why it could not check.
    monkeypatch.setenv("AWS_ENDPOINT_URL_EKS", "http://127.0.0.1:9")
    cfg = stack("1.36")
    problem, warning = live_version.version_problem(cfg)
    assert problem is None
    assert warning is not None and f"could not read the Kubernetes version cluster {cfg.cluster_name} runs" in warning


def test_the_program_under_mocks_asks_aws_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """`gpuplane render` and the tests run infra/__main__.py under mocks: no AWS call there."""

    def called(_: object) -> None:
        raise AssertionError("the program asked AWS under mocks")

    monkeypatch.setattr(live_version, "version_problem", called)
    rec = run_main(engine_config("dev"), "dev")
    assert rec.by_type("aws:eks/cluster:Cluster")


def test_the_program_under_the_engine_stops_before_registering_anything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pulumi.runtime import mocks  # noqa: PLC0415

    # The program's monitor is then not "the mocks' monitor", as under the engine.
    monkeypatch.setattr(mocks, "MockMonitor", type("EngineMonitorStandIn", (), {}))
    monkeypatch.setattr(live_version, "version_problem", lambda cfg: ("EKS upgrades one minor at a time", None))
    with pytest.raises(SystemExit) as info:
        run_main(engine_config("dev"), "dev")
    assert info.value.code == 2
    assert "gpuplane:cluster.kubernetesVersion: EKS upgrades one minor at a time" in capsys.readouterr().err
