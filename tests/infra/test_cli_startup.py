"""`gpuplane --help`, `--version` and `token` start fast: the CLI module imports no heavy library.

Checked in a fresh interpreter (this test process has long imported everything). The time itself is
measured by benchmarks/startup.py (results in benchmarks/RESULTS.md), not asserted here: a loaded CI
machine would make a time limit flaky.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pulumi_kubernetes", "pulumi_aws", "boto3", "botocore", "pulumi", "kubernetes")

PROBE = """
import contextlib, json, sys
{setup}
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def imported_after(setup: str) -> list[str]:
    code = PROBE.format(setup=setup, heavy=HEAVY)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    "setup",
    [
        "import gpuplane.infra.cli",
        "from gpuplane.infra.cli import app\nwith contextlib.suppress(SystemExit): app(['--help'])",
        "from gpuplane.infra.cli import app\nwith contextlib.suppress(SystemExit): app(['--version'])",
        "from gpuplane.infra.cli import app\nwith contextlib.suppress(SystemExit): app(['train', '--help'])",
        "from gpuplane.infra.cli import app\nwith contextlib.suppress(SystemExit): app(['queue', '--help'])",
    ],
)
def test_the_cli_imports_no_heavy_module_until_a_command_runs(setup):
    assert imported_after(setup) == []


def test_the_probe_sees_a_heavy_import():
    # The check above can fail: a command that runs does load them.
    assert "pulumi_aws" in imported_after("import gpuplane.infra.render")


ROOT = Path(__file__).resolve().parents[2]

TRAIN_PLAN = """
import contextlib, json, sys
from gpuplane.infra.cli import app
with contextlib.suppress(SystemExit):
    app(["train", "dev", "mnist", "--plan", "--kubeconfig", {kubeconfig!r}])
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0].startswith("pulumi"))))
"""


def test_train_plan_builds_the_run_without_loading_pulumi(tmp_path):
    """The run comes from the pure plan (components.plan.training), not from the Pulumi component."""
    code = TRAIN_PLAN.format(kubeconfig=str(tmp_path / "none"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    *manifest, modules = result.stdout.strip().splitlines()
    assert "kind: JobSet" in manifest, result.stdout  # the plan was built and printed
    assert json.loads(modules) == []


TOKEN = """
import contextlib, json, sys
from gpuplane.infra.cli import app
with contextlib.suppress(SystemExit):
    app(["token", "--cluster", "c", "--region", "us-west-2"])
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & {"pulumi", "pulumi_aws", "kubernetes", "moto"})))
"""


def test_token_loads_neither_pulumi_nor_the_kubernetes_client(tmp_path):
    """kubectl starts `gpuplane token` before every call it makes: it loads boto3 to sign, and nothing of the
    platform's (the retry policy it shares with the teardown hooks lives apart from their Pulumi imports)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_EC2_METADATA_DISABLED": "true",
        "PYTHONPATH": str(ROOT / "src"),
    }
    result = subprocess.run([sys.executable, "-c", TOKEN], capture_output=True, text=True, check=True, env=env)
    *credential, modules = result.stdout.strip().splitlines()
    assert json.loads("\n".join(credential))["status"]["token"].startswith("k8s-aws-v1.")  # it signed
    assert json.loads(modules) == []
