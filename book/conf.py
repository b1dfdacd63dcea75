"""Sphinx configuration of the course site (``make book``; ``mlsysim_nb.course.book`` lays out the source).

The chapters are the notebooks' stored outputs, never re-executed (``nb_execution_mode = "off"``): the
site shows exactly what nbval checks. The repository's address comes from its one place, pyproject.toml.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(ROOT))

with (ROOT / "pyproject.toml").open("rb") as _f:
    _PROJECT = tomllib.load(_f)["project"]
REPOSITORY = _PROJECT["urls"]["Repository"]
SOLUTIONS = os.environ.get("MSN_BOOK_SOLUTIONS") == "1"

project = "mlsysim_nb"
author = "mlsysim_nb contributors"
copyright = "mlsysim_nb contributors, MIT licence"  # noqa: A001 - Sphinx's own setting name
release = _PROJECT["version"]
html_title = "mlsysim_nb: where the memory goes" + (" (instructor's version)" if SOLUTIONS else "")

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "msn_book"]
exclude_patterns = [".doctrees", "_static", "**/.ipynb_checkpoints"]
# the build runs with -W (a broken reference fails it); a notebook's heading levels are its own business
suppress_warnings = ["myst.header"]

# notebooks: stored outputs only; a widget's view needs a kernel, so its text fallback is shown
nb_execution_mode = "off"
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
# a Markdown output (notebook 9's walk table) is read as MyST, tables included (CommonMark has none)
nb_render_markdown_format = "myst"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# text as written: no curly quotes (the student-version check compares the instructor's lines exactly)
smartquotes = False

# the API page: docstrings, numpy style
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

# math: MathML written at build time (msn_book), no MathJax: it reads without JavaScript or network
html_math_renderer = "msn_mathml"

html_theme = "sphinx_book_theme"
html_theme_options = {
    "repository_url": REPOSITORY,
    "repository_branch": "main",
    "use_repository_button": True,
    "use_download_button": False,
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
}
# a first visit follows the reader's system setting (the theme otherwise logs an error for an unset mode)
html_context = {"default_mode": "auto"}
html_static_path = [str(HERE / "_static")]
html_css_files = ["book.css"]
# search results show an excerpt around the words found, read from the page's article (search_summary.js)
html_show_search_summary = True
html_js_files = ["search_summary.js"]
html_copy_source = False
html_show_sourcelink = False
