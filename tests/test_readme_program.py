"""The README program and examples/gpu-cluster plan everything in their stack's region and its partition.

A program that imports the components passes no region, Kubernetes version or subnets by hand: the cluster
reads its region from the stack's `aws:region` (or its explicit aws provider), and every child reads it from
the cluster. So a copy rendered in us-west-2, eu-west-1 or GovCloud names no other region and no ARN of
another partition anywhere in what it would create: key policies (`kms:ViaService`), IAM ARNs, the
autoscaler's `awsRegion`, the kubeconfig's endpoint.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from gpuplane.infra.cli import app

ROOT = Path(__file__).resolve().parents[1]
# Region names (with AZ suffixes: us-west-2a), partitions' ARN prefixes.
REGION = re.compile(r"\b(?:us-gov|us-iso[a-z]?|us|eu|ap|sa|ca|me|af|il|mx|cn)-[a-z]+-\d+")
ARN_PARTITION = re.compile(r"\barn:(aws(?:-[a-z-]+)?):")
# What the program would create (the cost table names where its prices come from, not where anything is).
PLANNED = ("plan.json", "tfplan.json", "manifests", "helm", "observability")


def readme_program() -> str:
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- snippet: program -->", 1)[1].split("```python\n", 1)[1].split("\n```", 1)[0]
    return block + "\n"


PROGRAMS = {
    "readme": readme_program,
    "example": (ROOT / "examples" / "gpu-cluster" / "__main__.py").read_text,
}


def program_project(tmp_path: Path, program: str, region: str) -> Path:
    project = tmp_path / "team"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text("name: team\nruntime: python\nstackConfigDir: stacks\n")
    (project / "stacks" / "Pulumi.dev.yaml").write_text(f"config:\n  aws:region: {region}\n")
    (project / "__main__.py").write_text(program)
    return project


def render(project: Path, out: Path) -> Result:
    """`gpuplane render --project ... --json` in this process: what is asserted is the render, not a process."""
    return CliRunner().invoke(app, ["render", "--project", str(project), "dev", "--out", str(out), "--json"])


def planned_text(out: Path) -> str:
    files = [
        p for name in PLANNED for p in ([out / name] if (out / name).is_file() else sorted((out / name).rglob("*")))
    ]
    return "\n".join(p.read_text() for p in files if p.is_file())


@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize(
    ("region", "partition"),
    [("us-west-2", "aws"), ("eu-west-1", "aws"), ("us-gov-west-1", "aws-us-gov")],
)
def test_a_program_plans_only_in_its_stack_s_region(tmp_path, program, region, partition):
    """The README program and examples/gpu-cluster, each copied into a project of that region."""
    out = tmp_path / "out"
    result = render(program_project(tmp_path, PROGRAMS[program](), region), out)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["wiring"] == []  # the GPU group got its device plugin and the autoscaler
    text = planned_text(out)
    assert set(REGION.findall(text)) == {region}
    assert set(ARN_PARTITION.findall(text)) == {partition}
    plan = json.loads((out / "plan.json").read_text())
    autoscaler = next(r for r in plan["resources"] if r["name"] == "eks-autoscaler-release")
    assert autoscaler["inputs"]["values"]["awsRegion"] == region
    key = next(r for r in plan["resources"] if r["name"] == "eks-secrets-key")
    assert f"eks.{region}.amazonaws.com" in key["inputs"]["policy"]


def test_the_check_sees_a_region_the_program_names_by_hand(tmp_path):
    """The old way (a literal region) in a stack of another region is refused, naming both and the fix."""
    program = readme_program().replace("network=network,", 'network=network, region="us-east-1",')
    assert 'region="us-east-1"' in program
    result = render(program_project(tmp_path, program, "us-west-2"), tmp_path / "out")
    assert result.exit_code != 0
    assert "region='us-east-1', but the stack's aws:region is 'us-west-2'" in result.stderr
    assert not (tmp_path / "out").exists()
