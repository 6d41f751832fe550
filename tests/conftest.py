"""Shared fixtures: the recording mock run of the shipped stacks and of ad-hoc platform configs.

Every component test uses `infra.mockrun` (the recording monitor), so parents, dependencies, protect
and retainOnDelete are asserted on, not only inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gpuplane.infra import config, mockrun, render


@pytest.fixture(scope="session")
def dev_run() -> mockrun.Recording:
    return render.run_stack(config.load("dev"))


@pytest.fixture(scope="session")
def prod_run() -> mockrun.Recording:
    return render.run_stack(config.load("prod"))


def stack_config(overrides: dict[str, Any], stack: str = "test", region: str = "us-west-2") -> config.StackConfig:
    """A StackConfig from `gpuplane:` keys (without the namespace) plus the region."""
    raw: dict[str, Any] = {"aws:region": region}
    raw.update({f"gpuplane:{k}": v for k, v in overrides.items()})
    return config.parse(raw, stack)


DEV_CLUSTER = {"publicAccessCidrs": ["198.51.100.7/32"]}


@pytest.fixture
def run_platform() -> Callable[..., mockrun.Recording]:
    """Run the program for ad-hoc `gpuplane:` config under mocks."""

    def _run(overrides: dict[str, Any], stack: str = "test", region: str = "us-west-2") -> mockrun.Recording:
        overrides = {"cluster": DEV_CLUSTER, **overrides}
        return render.run_stack(stack_config(overrides, stack, region))

    return _run
