"""What a render does not load: the modules whose work it does not need, each of which costs it CPU to import.

- pulumi_kubernetes's generated classes and their argument trees (`core.v1` alone is about half a second):
  Kubernetes objects are registered through `components.kube_objects`, which sends the same registration.
- boto3, which only the teardown hooks and the commands that call AWS use.
- botocore, for the instance catalog: its data is our own file; botocore's EC2 model is read only to name a
  type that the data lacks.
Each is checked in a fresh interpreter, so that what other tests imported cannot hide a regression.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

RENDER = r"""
import sys
from gpuplane.infra import config, render
render.write(config.load("dev"), __import__("pathlib").Path(sys.argv[1]))
import re
# The API groups' packages are lazy stubs; their versioned modules (`core.v1`, `helm.v3`) hold the classes.
generated = re.compile(r"^pulumi_kubernetes\.\w+\.v\d|^boto3(\.|$)")
loaded = sorted(m for m in sys.modules if generated.match(m))
print(",".join(loaded))
"""


def test_a_render_loads_no_generated_kubernetes_class_and_no_boto3(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(RENDER), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"loaded: {done.stdout.strip()}"
    assert (tmp_path / "out" / "plan.json").is_file()


def test_the_instance_catalog_loads_without_botocore() -> None:
    code = "import sys, gpuplane.components.facts.catalog as c; assert c.CATALOG; print('botocore' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
