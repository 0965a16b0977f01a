"""Open the built documentation in a real headless browser and check that it renders.

Builds the site (unless ``--no-build``) into ``OUT/html`` with a local MathJax, then, with headless Chromium
(Debian package ``chromium``; ``apt-get install -y chromium libjs-mathjax``):

- screenshots the front page, one gallery page and one API page (and the conventions page, which is mostly
  equations) into ``OUT/*.png``, for a person to look at;
- (MathJax: the local copy of Debian's libjs-mathjax, linked as ``_static/mathjax``; the CDN is not reachable)
- dumps each page's DOM after its scripts ran and checks that MathJax typeset the equations (rendered math
  elements present, no "Math input error"), that every ``<img>`` of the page exists on disk, and that the gallery
  page shows its figure.

Usage (from the repository root)::

    python docs/check_render.py [--out DIR] [--no-build]

Exit 0 when every check passes. ``tests/docs/test_render.py`` runs it as a slow test.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

DOCS = Path(__file__).resolve().parent
LOCAL_MATHJAX = Path("/usr/share/javascript/mathjax/MathJax.js")
PAGES = {
    "front": "index.html",
    "gallery": "auto_examples/plot_cacp_gaussian_ellipses.html",
    "api": "_generated/api/numerics.core.trajectory.html",
    "conventions": "conventions.html",
}
# pages with equations, and the smallest number of typeset formulas each must show
MIN_MATH = {"front": 1, "conventions": 10, "api": 0, "gallery": 0}


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def build(out: Path) -> Path:
    env = dict(os.environ)
    if LOCAL_MATHJAX.exists():
        env["ATTNFLOW_DOCS_MATHJAX"] = "mathjax/MathJax.js?config=TeX-AMS_CHTML"  # relative to _static
    html = out / "html"
    subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-d",
                    str(out / "doctrees"), str(DOCS), str(html)], check=True, env=env)
    link = html / "_static" / "mathjax"
    if LOCAL_MATHJAX.exists() and not link.exists():
        link.symlink_to(LOCAL_MATHJAX.parent, target_is_directory=True)
    return html


def _browser(args: list[str], url: str) -> subprocess.CompletedProcess:
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--allow-file-access-from-files", "--virtual-time-budget=15000", *args, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def check_page(name: str, path: Path, out: Path) -> list[str]:
    problems = []
    url = path.as_uri()
    shot = out / f"{name}.png"
    _browser([f"--screenshot={shot}", "--window-size=1280,1500"], url)
    if not shot.exists() or shot.stat().st_size < 10_000:
        problems.append(f"{name}: no screenshot")
    dom = _browser(["--dump-dom"], url).stdout
    math = len(re.findall(r'class="[^"]*\bMathJax(?:_CHTML|_SVG)?"|<mjx-container', dom))
    if "Math input error" in dom or "Math Processing Error" in dom:
        problems.append(f"{name}: MathJax reported an error")
    if math < MIN_MATH[name]:
        problems.append(f"{name}: {math} typeset formulas, expected at least {MIN_MATH[name]}")
    for src in re.findall(r'<img[^>]*\ssrc="([^"]+)"', dom):
        if src.startswith(("http:", "https:", "data:")):
            continue
        target = Path(unquote(urlparse(src).path)) if src.startswith("file:") else (path.parent / unquote(src))
        if not target.exists():
            problems.append(f"{name}: missing image {src}")
    if name == "gallery" and "sphx-glr-single-img" not in dom:
        problems.append("gallery: the example's figure is not on the page")
    print(f"{name:12s} {path.name:45s} formulas {math:4d}  screenshot {shot}")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DOCS / "_build" / "render"), help="output folder")
    parser.add_argument("--no-build", action="store_true", help="use an existing OUT/html")
    args = parser.parse_args(argv)
    if chromium() is None:
        print("error: no chromium found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    html = out / "html" if args.no_build else build(out)
    problems = []
    for name, rel in PAGES.items():
        problems += check_page(name, html / rel, out)
    for p in problems:
        print("FAIL", p)
    print("all pages render" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
