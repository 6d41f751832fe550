"""Entry point the Pulumi CLI runs (`main: infra/`): load config, build the platform, export outputs."""

import sys

import pulumi
from pulumi.runtime import config as runtime_config

from gpuplane.infra import config, program

try:
    raw = config.from_engine_strings({**runtime_config.get_config_env(), **runtime_config.CONFIG.get()})
    stack_config = config.parse(raw, pulumi.get_stack(), pulumi.get_project())
except config.ConfigError as exc:
    # A clear message and no resource registered: the engine prints this and stops.
    print("Invalid gpuplane stack config:\n" + "\n".join(f"  {p}" for p in exc.problems), file=sys.stderr)
    raise config.InvalidConfigExit(exc.problems) from None

for key, value in program.build(stack_config).items():
    pulumi.export(key, value)
