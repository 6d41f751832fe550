"""Each platform constant and the GPU toleration have one home: a second copy drifts silently.

The GPU taint is decided by `wellknown.GPU_TAINT` and tolerated only through `scheduling.gpu_tolerations()`;
the GPU resource name, the node-group label, the EFS CSI driver name and the Helm release type token are
declared once in `manifests/wellknown.py` and imported everywhere else. These tests read the package's source
(not the tests) for a second declaration or a hand-written literal.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from gpuplane.manifests import scheduling, wellknown

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("components", "infra", "manifests")
HOME = Path("manifests/wellknown.py")

# Each constant's value as a quoted literal: it may appear in its home only.
LITERALS = {
    "GPU_RESOURCE": "nvidia.com/gpu",
    "LABEL_NODE_GROUP": "gpuplane.io/node-group",
    "EFS_CSI_PROVISIONER": "efs.csi.aws.com",
    "HELM_RELEASE": "kubernetes:helm.sh/v3:Release",
}


def _sources() -> dict[Path, str]:
    return {
        path.relative_to(ROOT): path.read_text()
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


SOURCES = _sources()


def test_the_scan_reads_the_package() -> None:
    """The tree scanned is the package itself, home included (an empty scan would pass everything)."""
    assert HOME in SOURCES
    assert Path("manifests/scheduling.py") in SOURCES
    assert len(SOURCES) > 50


@pytest.mark.parametrize("name", sorted(LITERALS))
def test_constant_declared_once(name: str) -> None:
    declaration = re.compile(rf"^\s*_?{name}\s*(:[^=\n]*)?=", re.MULTILINE)
    homes = sorted(str(p) for p, text in SOURCES.items() if declaration.search(text))
    assert homes == [str(HOME)], f"{name} is declared in {homes}; import it from {HOME} instead"


@pytest.mark.parametrize("name", sorted(LITERALS))
def test_constant_value_not_written_raw(name: str) -> None:
    literal = re.compile(r"""["']""" + re.escape(LITERALS[name]) + r"""["']""")
    found = sorted(str(p) for p, text in SOURCES.items() if p != HOME and literal.search(text))
    assert found == [], f"{LITERALS[name]!r} written raw in {found}; use wellknown.{name}"


def test_gpu_toleration_written_once() -> None:
    """A toleration dict keyed by the GPU resource/taint appears only in `scheduling.gpu_tolerations()`."""
    toleration = re.compile(r"""\{\s*["']key["']\s*:\s*(wellknown\.GPU_\w+|["']nvidia\.com/gpu["'])[^}]*["']operator""")
    found = sorted(str(p) for p, text in SOURCES.items() if toleration.search(text))
    assert found == ["manifests/scheduling.py"], f"hand-written GPU tolerations in {found}; use gpu_tolerations()"


def test_gpu_taint_key_is_the_resource_and_tolerated() -> None:
    assert wellknown.GPU_TAINT == ("nvidia.com/gpu", "true", "NoSchedule")
    assert scheduling.gpu_tolerations() == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def _project_texts() -> dict[Path, str]:
    """The project's own text files: code, config and docs (never the user's stacks/ or build/ output).

    What git tracks plus new files it does not ignore: a TensorFlow venv under benchmarks/.cache or an example's
    venv is someone else's code, which the ignore rules already name.
    """
    folders = ("components", "infra", "manifests", "docs", "tests", "benchmarks", "examples", "scripts")
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    paths = [
        Path(line)
        for line in listed
        if Path(line).suffix in {".py", ".toml", ".md"}
        and (len(Path(line).parts) == 1 or Path(line).parts[0] in folders)
        and (ROOT / line).is_file()
    ]
    return {path: (ROOT / path).read_text() for path in sorted(paths)}


def test_no_issue_numbers_or_missing_files_cited() -> None:
    """A reader of the repository cannot open "issue 31" or a DESIGN.md it lacks: the text says the reason."""
    texts = _project_texts()
    assert Path("manifests/versions.py") in texts
    issue = re.compile(r"\bissues? \d+", re.IGNORECASE)
    missing = re.compile(r"\b(DESIGN|FACTS)\.md\b")
    this = Path(__file__).resolve().relative_to(ROOT)
    found = sorted(
        f"{path}:{number}"
        for path, text in texts.items()
        if path != this
        for number, line in enumerate(text.splitlines(), 1)
        if issue.search(line) or missing.search(line)
    )
    assert found == [], f"cite the reason, not an issue number or a missing file: {found}"
