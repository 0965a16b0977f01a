"""Sphinx configuration of the attnflow documentation site.

Build (from the repository root)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Pages generated at build time (never edited by hand, written under ``docs/_generated/``):

- ``claims.md``: the claim registry (``numerics.common.verification.all_claims``) with the values of the last
  recorded run (``docs/claims_measured.json``, refreshed by ``python docs/tools/measure_claims.py``);
- ``errata.md``: the disagreements with published statements, from the notes' ``Disagreement with the source``
  sections (``numerics.common.errata``);
- ``cli.md``: every ``attnflow`` subcommand's ``--help`` (``numerics.cli.build_parser``);
- ``api/*.rst``: one page per module of the public ``attnflow`` names (``attnflow._EXPORTS``) and of ``theory``;
- ``notes/*.md``: one stub per ``proofs_notes/*.md`` that includes the note, so the folder stays where it is.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "tools"))
os.environ.setdefault("MPLBACKEND", "Agg")

import attnflow  # noqa: E402
import generate  # noqa: E402  (docs/tools/generate.py)

generate.write_all(HERE / "_generated")

project = "attnflow"
author = "the attnflow authors"
copyright = "2026, the attnflow authors"
release = attnflow.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # ships MathJax 3 with the site (PyPI sphinx-mathjax-offline): no CDN, works offline
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "examples/README.rst", "tools", "Thumbs.db", ".DS_Store",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.json", "auto_examples/*.pickle"]
suppress_warnings = ["myst.header"]  # notes and README-derived pages may start at ## or skip a level

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# numpydoc: render the docstrings; no validation errors (the docstrings are numpydoc-style but terse)
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()
# No default options: every generated API page says what it shows (``:no-members:`` and one ``autofunction`` per
# public name for the numerical layer, ``:members:`` for a theory module). A default {"members": False} overrode
# the theory pages' ``:members:`` (Sphinx 9), so their functions never reached the site.
autodoc_default_options: dict = {}
autodoc_typehints = "none"
autosummary_generate = False

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
}
intersphinx_disabled_reftypes = ["*"]
intersphinx_timeout = 1
# offline build (CI has no network): intersphinx is configured but not fetched
intersphinx_mapping = {}

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "min_reported_time": 1,
    # no sg_execution_times pages: they load jQuery/DataTables from CDNs, and the site must work offline
    "write_computation_times": False,
}

html_theme = "pydata_sphinx_theme"
html_title = f"attnflow {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
}
html_show_sourcelink = False
# Top-level pages without sub-pages: no (empty) navigation sidebar, so the article gets the width its install line
# and code blocks need (the getting-started page showed an empty column and cut its commands)
html_sidebars = {page: [] for page in ("getting_started", "conventions", "literature", "design")}
mathjax3_config = {"tex": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]]}}
# MathJax 3 ships with the site: the extension sphinx-mathjax-offline (docs extra) sets mathjax_path to
# _static/mathjax/tex-chtml.js and copies its bundled MathJax 3.2.2 there, so every page typesets its equations
# without a network (file:// included). docs/check_render.py and tests/docs/test_offline_math.py check it.

# The docstrings write mathematics as reStructuredText math (:math:`...` roles and .. math:: blocks, as NumPy
# and SciPy do; tests/docs/test_docstring_math.py). A bar outside them (an option list "a|b", a plain-text
# method docstring) would be read as a substitution reference: escape the bars before numpydoc parses the
# docstring, outside ``literals``, roles, doctest lines and literal or math blocks.
import re as _re

_LITERAL = _re.compile(r"(``.*?``|:\w+:`[^`]*`)")  # literals and roles (:math:`|x|` keeps its bars)


def _escape_bars(app, what, name, obj, options, lines):
    in_literal_block = False
    block_indent = 0
    for k, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if in_literal_block and stripped and indent <= block_indent:
            in_literal_block = False
        if in_literal_block or stripped.startswith((">>>", "... ")):
            continue
        if "|" in line:
            parts = _LITERAL.split(line)
            lines[k] = "".join(p if k_part % 2 else p.replace("|", r"\|") for k_part, p in enumerate(parts))
        if stripped.endswith("::"):
            in_literal_block, block_indent = True, indent


_LIST_ITEM = _re.compile(r"^(\s*)([-*]|\d+\.)\s+")


def _literal_formula_blocks(app, what, name, obj, options, lines):
    """Module docstrings indent their displayed formulas without ``::``; show such blocks as literal blocks.

    A line indented deeper than the paragraph (or list item) it follows starts a literal block: ``::`` and blank
    lines are inserted around it, so the plain-text formulas render as written (monospace) instead of failing
    with "Unexpected indentation". A list that follows a paragraph line directly gets the blank line it needs.
    """
    if what != "module":
        return
    out: list[str] = []
    base = 0  # content indent of the current paragraph or list item
    literal = False
    prev = ""
    opened = None  # indent of a line ending in "::" (a directive such as ``.. math::``, or a literal block)
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if opened is not None:
            if not stripped or indent > opened:  # the block's body stays as written
                out.append(line)
                continue
            opened = None
        if not stripped:
            out.append(line)
            prev = line
            continue
        if literal and indent <= base:
            literal = False
            if out and out[-1].strip():
                out.append("")
        if literal:
            out.append(line)
            prev = line
            continue
        item = _LIST_ITEM.match(line)
        if indent > base and not prev.rstrip().endswith("::") and not item:
            if out and out[-1].strip():
                out.append("")
            out += [" " * base + "::", ""]
            literal = True
            out.append(line)
            prev = line
            continue
        if item:
            if prev.strip() and not _LIST_ITEM.match(prev) and len(prev) - len(prev.lstrip()) <= indent \
                    and not prev.startswith(" " * (indent + 1)):
                out.append("")
            base = indent + len(item.group(0)) - len(item.group(1))
        elif not prev.strip() or indent < base:
            base = indent
        out.append(line)
        prev = line
        if stripped.endswith("::"):
            opened = indent
    lines[:] = out


def _prose_has_no_ascii_math(app, exception):
    """After an HTML build: ASCII mathematics or raw TeX in the prose of a guide, gallery or API page is a warning
    (an error under -W), found by the static check of docs/check_render.py (a headless browser is its slow test)."""
    if exception is not None or app.builder.format != "html":
        return
    import importlib.util
    from pathlib import Path

    from sphinx.util import logging

    spec = importlib.util.spec_from_file_location("check_render", Path(__file__).with_name("check_render.py"))
    check_render = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_render)
    logger = logging.getLogger("attnflow.prose")
    for problem in check_render.check_prose_everywhere(Path(app.outdir)):
        logger.warning(problem)


def setup(app):
    # MathJax on every page, not only on pages with equations: the navigation shows other pages' titles, some
    # with mathematics, which would otherwise stay raw TeX on a page without equations of its own
    app.set_html_assets_policy("always")
    app.connect("autodoc-process-docstring", _escape_bars, priority=100)
    app.connect("autodoc-process-docstring", _literal_formula_blocks, priority=90)
    app.connect("build-finished", _prose_has_no_ascii_math)
