"""Fixtures for `gpuplane compare`: the client module (loaded from its package-data file), stacks, summaries."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from gpuplane.manifests import loadtest

ROOT = Path(__file__).resolve().parents[2]
CLIENT_PATH = ROOT / "manifests" / "loadtest" / loadtest.CLIENT_FILE


@pytest.fixture(scope="session")
def client() -> ModuleType:
    """The client as the pod runs it: the file from the ConfigMap, imported on its own."""
    spec = importlib.util.spec_from_file_location("gpuplane_compare_client", CLIENT_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _variant(name: str, cpu: str, memory: str, gpus: int = 0, **extra: Any) -> dict[str, Any]:
    return {"name": name, "resources": {"limits": {"cpu": cpu, "memory": memory}, "gpus": gpus}, **extra}


SERVING = [
    {
        "name": "resnet",
        "model": {"name": "resnet", "volume": "models", "path": "resnet"},
        "variants": [
            _variant("gpu", "4", "8Gi", gpus=1),
            _variant("cpu1", "1", "2Gi"),
            _variant("cpu8", "8", "8Gi", replicas=2),
        ],
    },
    {
        "name": "tiny",
        "model": {"name": "tiny", "volume": "models", "path": "tiny"},
        "variants": [_variant("cpu", "1", "1Gi")],
    },
]
# Groups the variants fit: an 8-CPU variant needs more than dev's m6i.large.
NODE_GROUPS = [
    {"name": "system", "instanceTypes": ["m6i.large"], "minSize": 1, "maxSize": 3},
    {"name": "cpu", "instanceTypes": ["m6i.4xlarge"], "minSize": 0, "maxSize": 2},
    {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.2xlarge"], "minSize": 0, "maxSize": 2},
]


def write_stack(directory: Path, name: str = "sample", serving: Any = None, **extra: Any) -> Path:
    """A stack file with serving workloads (the serving contract: `gpuplane:serving`), for the CLI to read."""
    config: dict[str, Any] = {
        "aws:region": "us-west-2",
        "gpuplane:profile": "dev",
        "gpuplane:cluster": {"publicAccessCidrs": ["203.0.113.0/24"]},
        "gpuplane:serving": SERVING if serving is None else serving,
        "gpuplane:nodeGroups": NODE_GROUPS,
    }
    config.update({f"gpuplane:{k}": v for k, v in extra.items()})
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return directory


def cell(variant: str, size: int, fmt: str, concurrency: int, p50: float, rps: float, **extra: Any) -> dict[str, Any]:
    base = {
        "variant": variant,
        "size": size,
        "format": fmt,
        "concurrency": concurrency,
        "requests": 100,
        "ok": 100,
        "errors": 0,
        "errorRate": 0.0,
        "p50Ms": p50,
        "p90Ms": p50 * 1.2,
        "p99Ms": p50 * 1.5,
        "meanMs": p50,
        "throughputRps": rps,
        "wallS": 10.0,
        "errorSamples": [],
        "client": {"cpuCores": 0.2, "cpuLimit": 2.0, "saturated": False},
    }
    return base | extra


@pytest.fixture
def summary() -> dict[str, Any]:
    """A summary shaped like the client's, with made-up numbers (for report-only tests)."""
    cells = []
    for variant, base in (("gpu", 5.0), ("cpu8", 12.0)):
        for size in (128, 512, 2048):
            for fmt, factor in (("jpeg", 1.0), ("png", 3.0)):
                for conc in (1, 4, 16):
                    p50 = base * factor * (1 + size / 2048) * (1 + conc / 16)
                    cells.append(cell(variant, size, fmt, conc, round(p50, 3), round(conc * 1000 / p50, 3)))
    return {
        "runId": "20261123-150000-abcdef",
        "model": "resnet",
        "variants": ["gpu", "cpu8"],
        "singleVariant": False,
        "input": {"name": "image_bytes", "dtype": "DT_STRING", "shape": [-1], "encoded": True},
        "mode": "encoded",
        "inputs": "8 synthetic images",
        "images": 8,
        "sizes": [128, 512, 2048],
        "formats": ["jpeg", "png"],
        "concurrency": [1, 4, 16],
        "durationS": 10,
        "clientCpuLimit": 2.0,
        "cells": cells,
        "agreement": {
            "betweenVariants": [
                {
                    "reference": "gpu",
                    "variant": "cpu8",
                    "size": 128,
                    "format": "jpeg",
                    "kind": "top1",
                    "images": 8,
                    "value": 1.0,
                }
            ],
            "betweenSizes": [
                {
                    "variant": "gpu",
                    "format": "jpeg",
                    "referenceSize": 2048,
                    "size": 128,
                    "kind": "top1",
                    "images": 8,
                    "value": 0.875,
                }
            ],
        },
        "raw": "/logs/gpuplane-compare/20261123-150000-abcdef/requests.jsonl",
    }
