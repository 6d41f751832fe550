"""Sphinx configuration of gpuplane's documentation site (`make docs`; why Sphinx and MyST: docs-site.md).

The pages are the Markdown files beside this one, read by MyST; the same files render on a Git host, so
links between them are written as plain relative `.md` links, which MyST resolves and checks.
"""

from __future__ import annotations

project = "gpuplane"
author = "gpuplane"
copyright = "gpuplane contributors"

extensions = ["myst_parser", "sphinxcontrib.mermaid"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# `[text](page.md#a-heading)` links resolve to GitHub-style anchors of headings down to level 4, so the same
# link works on the Git host and in the site; a link to an anchor that does not exist is a warning (an error
# under `-W`).
myst_heading_anchors = 4
# ```mermaid blocks are diagrams (sphinxcontrib-mermaid), as on the Git host.
myst_fence_as_directive = ["mermaid"]
# A block without a language (sample output, file trees) is shown as it is, not guessed at.
highlight_language = "none"

html_theme = "alabaster"
html_title = "gpuplane"
html_theme_options = {"page_width": "90%", "body_max_width": "none", "sidebar_width": "260px"}
# Wide tables (the configuration reference) wrap their code instead of running off the page.
html_static_path = ["_static"]
html_css_files = ["tables.css"]
