"""The built site renders in a real headless browser, offline: equations typeset by the MathJax shipped with the
site, no request to the network, figures present (docs/check_render.py).

Needs Chromium (Debian: ``apt-get install -y chromium``); skipped without it.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
needs_chromium = pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                                    reason="chromium is not installed (Debian: apt-get install -y chromium)")


@pytest.mark.slow
@needs_chromium
def test_site_renders_in_headless_chromium(tmp_path):
    pytest.importorskip("sphinx")
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "check_render.py"), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@needs_chromium
def test_render_check_fails_on_a_cdn_page(tmp_path):
    """Shown to fail: a page that loads MathJax from a CDN asks the network, and its formula stays raw TeX."""
    spec = importlib.util.spec_from_file_location("check_render", ROOT / "docs" / "check_render.py")
    check_render = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_render)
    page = tmp_path / "page.html"
    page.write_text('<html><head><script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>'
                    "</head><body><p>\\(x^2\\)</p></body></html>")
    problems = check_render.check_page("front", page, tmp_path)
    assert any("asked the network for https://cdn.jsdelivr.net" in p for p in problems), problems
    assert any("0 typeset formulas" in p for p in problems), problems
    assert any("raw TeX" in p for p in problems), problems


def test_render_check_flags_raw_tex_commands():
    """Shown to fail: a table cell cut by a "|" inside math leaves "$x \\leftarrow ..." as text; typeset math
    (an mjx-container) and code are not flagged."""
    spec = importlib.util.spec_from_file_location("check_render", ROOT / "docs" / "check_render.py")
    check_render = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_render)
    cut = "<html><body><table><tr><td>$x \\leftarrow (x + h v)/</td><td>\\cdot|$</td></tr></table></body></html>"
    assert any("raw TeX command" in p for p in check_render.math_problems("noise", cut))
    fine = ("<html><body><p><mjx-container><mjx-math>x</mjx-math></mjx-container> and "
            "<code>$x \\leftarrow y$</code> and $5 of prose</p></body></html>")
    assert check_render.math_problems("noise", fine) == []


def _check_render():
    spec = importlib.util.spec_from_file_location("check_render", ROOT / "docs" / "check_render.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prose_check_finds_ascii_math_and_raw_tex():
    """Shown to fail: ASCII mathematics and raw TeX in a page's prose are found; the same words in code, math,
    a signature, a parameter's name line or the navigation are not (text only, no browser)."""
    check = _check_render()
    page = ('<html><body><nav>beta S^2</nav><p>The noise <span class="math notranslate">\\(D_c(\\beta)\\)</span>'
            ' at beta = 2 on S^2, with \\frac{1}{2}.</p><dl class="py function"><dt class="sig">f(beta)</dt>'
            '<dd><p>Uses <code>beta^2</code>.</p><dl><dt><strong>beta</strong> : float</dt><dd>temperature</dd>'
            '</dl></dd></dl><pre>x^2 sqrt(d)</pre></body></html>')
    found = " ".join(check.ascii_math_problems("page", page))
    assert "[Greek letter as a word] ...The noise   at beta" in found
    assert "[caret power]" in found and "[raw TeX]" in found
    clean = page.replace(" at beta = 2 on S^2, with \\frac{1}{2}.", ".")
    assert check.ascii_math_problems("page", clean) == []


@needs_chromium
def test_browser_check_fails_on_ascii_math_in_prose(tmp_path):
    """Shown to fail: a page whose prose writes beta, S^2 and sqrt( in ASCII fails the browser check."""
    check = _check_render()
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>At beta = 2 on S^2 the rate is sqrt(d).</p></body></html>")
    problems = check.check_page("api", page, tmp_path)
    assert sum("ASCII mathematics" in p for p in problems) >= 3, problems
