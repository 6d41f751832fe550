"""Entry point the Pulumi CLI runs (`main: infra/`): load config, build the platform, export outputs."""

import sys

import pulumi
from pulumi.runtime import config as runtime_config
from pulumi.runtime import mocks, settings

from gpuplane.infra import config, program

try:
    raw = config.from_engine_strings({**runtime_config.get_config_env(), **runtime_config.CONFIG.get()})
    stack_config = config.parse(raw, pulumi.get_stack(), pulumi.get_project())
    # The running cluster's minor against the stack's (EKS takes one minor up per update, never down). Only under
    # the real engine: a render or a test runs this file under mocks and calls no AWS.
    if not isinstance(settings.get_monitor(), mocks.MockMonitor):
        from gpuplane.infra.aws import live_version

        problem, warning = live_version.version_problem(stack_config)
        if warning:
            pulumi.log.warn(warning)
        if problem:
            raise config.ConfigError([f"gpuplane:cluster.kubernetesVersion: {problem}"])
except config.ConfigError as exc:
    # A clear message and no resource registered: the engine prints this and stops.
    print("Invalid gpuplane stack config:\n" + "\n".join(f"  {p}" for p in exc.problems), file=sys.stderr)
    raise config.InvalidConfigExit(exc.problems) from None

for key, value in program.build(stack_config).items():
    pulumi.export(key, value)
