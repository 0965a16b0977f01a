"""The site typesets its equations without a network: MathJax ships with the build, no page loads a CDN script.

Browser-free and fast (default run): a small site built with the documentation's own maths settings (the
extensions, MathJax and MyST options read from docs/conf.py) must reference only local scripts, and its MathJax
must be in the output. The full site is checked the same way, and in a headless browser with the network
unavailable, by docs/check_render.py (tests/docs/test_render.py, slow).
"""
from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# the settings of docs/conf.py that decide how an equation reaches the reader
MATH_SETTINGS = ("extensions", "myst_enable_extensions", "mathjax_path", "mathjax3_config", "html_theme")
MATH_EXTENSIONS = {"myst_parser", "sphinx.ext.mathjax", "sphinx.ext.imgmath", "sphinx-mathjax-offline",
                   "sphinx_mathjax_offline", "sphinxcontrib.katex"}

PAGE = """# Offline maths

Inline $\\beta^{d/2}$ and a display:

$$
\\mathsf{E}_\\beta(x) = \\frac{1}{2\\beta n^2} \\sum_{i,j} e^{\\beta \\langle x_i, x_j \\rangle}
$$
"""


def _check_render():
    spec = importlib.util.spec_from_file_location("check_render", DOCS / "check_render.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def conf_math_settings(conf_text: str) -> dict:
    """The literal top-level assignments of MATH_SETTINGS in a conf.py (without running it)."""
    found = {}
    for node in ast.parse(conf_text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in MATH_SETTINGS:
                try:
                    found[name] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    return found


def build_math_site(tmp_path: Path, settings: dict) -> Path:
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    conf = dict(settings)
    conf["extensions"] = [e for e in settings["extensions"] if e in MATH_EXTENSIONS]
    (src / "conf.py").write_text("".join(f"{k} = {v!r}\n" for k, v in conf.items()))
    (src / "index.md").write_text(PAGE)
    out = tmp_path / "html"
    app = Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html", status=None,
                 warning=sys.stderr, freshenv=True, warningiserror=False)
    app.build()
    return out


@pytest.fixture(scope="module")
def docs_settings():
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    return conf_math_settings((DOCS / "conf.py").read_text())


def test_docs_build_ships_mathjax_and_no_cdn(tmp_path, docs_settings):
    html = build_math_site(tmp_path, docs_settings)
    page = (html / "index.html").read_text()
    assert "\\beta" in page, "the page's maths is missing"
    remote = _check_render().remote_assets(html)
    assert remote == [], f"scripts loaded from the network: {remote}"
    scripts = [s for s in _scripts(page) if "mathjax" in s.lower() or "tex-" in s]
    assert scripts, "no MathJax script on the page"
    for src in scripts:
        assert (html / src.split("?")[0]).is_file(), f"MathJax script {src} is not in the built site"


def test_check_fails_on_cdn_mathjax(tmp_path, docs_settings):
    """Shown to fail: without the offline extension Sphinx loads MathJax from its CDN, and the check says so."""
    settings = dict(docs_settings)
    settings["extensions"] = [e for e in settings["extensions"] if "offline" not in e]
    html = build_math_site(tmp_path, settings)
    remote = _check_render().remote_assets(html)
    assert any("cdn.jsdelivr" in r for r in remote), remote


def test_conf_has_no_remote_mathjax_path(docs_settings):
    path = docs_settings.get("mathjax_path", "")
    assert not path.startswith(("http:", "https:", "//")), path


def _scripts(page: str) -> list[str]:
    return re.findall(r'<script\b[^>]*\ssrc="([^"]*)"', page)
