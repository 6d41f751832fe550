"""The README stays a five-minute read that points to every page, and the docs/ site builds.

The site's own links are checked by Sphinx (`make docs`: `-W -n`, every warning and unresolved reference
fails). README.md is not part of the site (it is the Git host's front page), so its links are checked here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SPHINX = ROOT / ".venv-docs" / "bin" / "sphinx-build"
# What a newcomer needs first, in this order; everything else lives in docs/.
README_SECTIONS = [
    "The picture",
    "Two commands on a fresh machine",
    "Deploy for real",
    "Import the components",
    "Where the rest is",
]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def headings(text: str) -> list[str]:
    """Markdown headings outside fenced blocks."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.append(line.lstrip("#").strip())
    return found


def slug(heading: str) -> str:
    """The anchor the Git host (and MyST, `myst_heading_anchors`) gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_has_only_what_a_newcomer_needs_first():
    text = README.read_text()
    sections = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert sections == README_SECTIONS, "add new material to a page under docs/ and link it from 'Where the rest is'"
    assert len(text.splitlines()) <= 200


def test_every_relative_link_of_the_readme_resolves():
    """Files exist, and a `#anchor` names a heading of the file it points to."""
    broken = []
    for target in LINK.findall(README.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (ROOT / path) if path else README
        if not file.exists() or (anchor and anchor not in {slug(h) for h in headings(file.read_text())}):
            broken.append(target)
    assert broken == []


def test_the_readme_points_to_every_page():
    linked = {Path(t.partition("#")[0]).name for t in LINK.findall(README.read_text()) if t.startswith("docs/")}
    pages = {page.name for page in DOCS.glob("*.md")}
    assert pages - linked == set()


def test_slugs_are_the_git_host_anchors():
    assert slug("Cost: what a stack costs per hour") == "cost-what-a-stack-costs-per-hour"
    assert slug("What a custom `nodeGroups` replaces") == "what-a-custom-nodegroups-replaces"


@pytest.mark.skipif(not SPHINX.exists(), reason="the docs venv is not built (make .venv-docs/bin/sphinx-build)")
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    """What `make docs` runs, into a temporary folder: no warning, no unresolved reference."""
    result = subprocess.run(
        [str(SPHINX), "-E", "-W", "--keep-going", "-n", "-q", "-b", "html", str(DOCS), str(tmp_path / "html")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    built = {page.stem for page in (tmp_path / "html").glob("*.html")}
    assert {page.stem for page in DOCS.glob("*.md")} <= built
    shutil.rmtree(tmp_path / "html")
