"""A project of another team, made in a temporary folder: its own name, stack folder, program and packages.

Why: every command must find this project (not the checkout's `stacks/`, not a folder inside the installed
package) from its root and from any subfolder, and put its outputs in it. The stack file differs from the
shipped dev stack in every value a command reads (cluster name, region, served model, worker count), so a
command that read the wrong file fails the test.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

NAME = "team-vision"
CLUSTER = "vision-gpu"
REGION = "eu-west-1"
MODEL = "resnet-team"
WORKERS = 5

PULUMI_YAML = f"""\
name: {NAME}
runtime: python
main: infra/
stackConfigDir: deploy
"""

STACK = f"""\
config:
  aws:region: {REGION}
  gpuplane:clusterName: {CLUSTER}
  gpuplane:cluster:
    publicAccessCidrs: [198.51.100.0/24]
  gpuplane:serving:
    - name: classify
      model:
        name: {MODEL}
        import: {{source: https://example.com/resnet.tar.gz}}
      variants:
        - name: cpu
          resources: {{limits: {{cpu: "1", memory: 2Gi}}}}
        - name: big
          resources: {{limits: {{cpu: "1", memory: 4Gi}}}}
  gpuplane:training:
    - name: mnist
      strategy: parameterServer
      command: [python, /data/train.py]
      chief: {{resources: {{limits: {{cpu: "1", memory: 2Gi}}}}}}
      worker: {{replicas: {WORKERS}, resources: {{limits: {{cpu: "1", memory: 2Gi}}}}}}
      ps: {{resources: {{limits: {{cpu: 500m, memory: 1Gi}}}}}}
      volumes: [{{volume: datasets, mountPath: /data}}]
      tensorboard: {{}}
  {NAME}:owner: vision
"""

# The team's program: gpuplane's Platform from the same `gpuplane:` keys the CLI reads, plus a helper of
# its own next to it. Its name is `infra/` like gpuplane's, and the project also has a `components/`
# package: neither may shadow gpuplane's.
PROGRAM = """\
import pulumi

from gpuplane import Platform, PlatformArgs
from naming import team_tags

config = pulumi.Config("gpuplane")
keys = {}
for key in ("cluster", "serving", "training"):
    if config.get(key) is not None:
        keys[key] = config.get_object(key)
keys["clusterName"] = config.require("clusterName")
keys["tags"] = team_tags(pulumi.Config().require("owner"))
region = pulumi.Config("aws").require("region")
platform = Platform(keys["clusterName"], PlatformArgs.model_validate(keys), region=region)
pulumi.export("clusterName", platform.cluster.cluster_name)
"""

NAMING = """\
def team_tags(owner: str) -> dict[str, str]:
    return {"team": owner}
"""


def make(root: Path) -> Path:
    """Write the project under `root` (returned), with an empty subfolder `src/deep` to run commands from."""
    (root / "deploy").mkdir(parents=True)
    (root / "Pulumi.yaml").write_text(PULUMI_YAML)
    (root / "deploy" / "Pulumi.dev.yaml").write_text(STACK)
    (root / "infra").mkdir()
    (root / "infra" / "__main__.py").write_text(PROGRAM)
    (root / "infra" / "naming.py").write_text(NAMING)
    (root / "components").mkdir()
    for package in ("components", "infra"):
        (root / package / "__init__.py").write_text(f'raise ImportError("the team\'s {package}/ shadowed gpuplane")\n')
    (root / "src" / "deep").mkdir(parents=True)
    return root


def with_program(root: Path, program: str) -> None:
    """Replace the team's program (e.g. with one that passes an invalid argument)."""
    (root / "infra" / "__main__.py").write_text(textwrap.dedent(program))


def own_program(root: Path, *, private_endpoint: bool = False) -> Path:
    """gpuplane's own program (no `main` folder) in `root`, with this team's stack as `dev` (with training)."""
    (root / "stacks").mkdir(parents=True)
    (root / "Pulumi.yaml").write_text("name: gpuplane\nruntime: python\nmain: infra/\nstackConfigDir: stacks\n")
    stack = STACK.replace(f"  {NAME}:owner: vision\n", "")
    if private_endpoint:
        stack = stack.replace("    publicAccessCidrs: [198.51.100.0/24]\n", "    endpointPublicAccess: false\n")
    (root / "stacks" / "Pulumi.dev.yaml").write_text(stack)
    return root
