r"""Open the built documentation in a real headless browser and check that it renders.

Builds the site (unless ``--no-build``) into ``OUT/html``, then checks it offline:

- no page loads anything from the network: every ``<script src>`` and stylesheet of every built HTML file is a
  local path (no ``http:``/``https:``/``//`` source, no CDN); MathJax 3 ships with the site
  (``_static/mathjax``, from the docs extra's ``sphinx-mathjax-offline``);
- with headless Chromium (Debian package ``chromium``: ``apt-get install -y chromium``), each page is opened as
  a ``file://`` URL with every host name unresolvable (``--host-resolver-rules``), its network log is recorded
  and must show no request to any ``http(s)`` address;
- screenshots the front page, the conventions page (mostly equations), one guide page with displayed equations,
  one gallery page and one API page into ``OUT/*.png``, for a person to look at;
- dumps each page's DOM after its scripts ran and checks that MathJax typeset the equations (at least the
  expected number of ``<mjx-container>`` elements, no "Math input error", no raw ``\(``, ``\[`` or ``$$`` left
  in the text outside code), that every ``<img>`` of the page exists on disk, and that the gallery page shows
  its figure.

Usage (from the repository root)::

    python docs/check_render.py [--out DIR] [--no-build]

Exit 0 when every check passes. ``tests/docs/test_render.py`` runs it as a slow test.
"""
from __future__ import annotations

import argparse
import atexit
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # the ASCII-math rules live with the Markdown lint in tests/docs
PAGES = {
    "front": "index.html",
    "guide": "guide/harmonic.html",
    "gallery": "auto_examples/plot_cacp_gaussian_ellipses.html",
    "api": "_generated/api/numerics.core.trajectory.html",
    "conventions": "conventions.html",
    # a Markdown table whose formula held a "|" (split row, raw TeX in the cells), and a display with prose
    "noise": "guide/noise.html",
    "meanfield": "guide/meanfield.html",
    "gallery-noise": "auto_examples/plot_noise_phase_diagram.html",
    # a theory module's page: its functions' docstrings (typeset mathematics), not only the module docstring
    "api-theory": "_generated/api/theory.gaussian.html",
    "api-fourier": "_generated/api/numerics.circle.fourier.html",
}
# API pages and the smallest number of documented functions or classes each must show
MIN_MEMBERS = {"api-theory": 10, "api-fourier": 4}
# pages with equations, and the smallest number of typeset formulas each must show
MIN_MATH = {"front": 1, "guide": 10, "conventions": 10, "api": 0, "gallery": 0, "noise": 10, "meanfield": 10,
            "gallery-noise": 5, "api-theory": 20, "api-fourier": 20}
# a source that needs the network: an absolute URL or a protocol-relative one
_REMOTE = re.compile(r"(?:https?:)?//", re.I)
_CODE = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1>", re.S | re.I)
_RAW_MATH = re.compile(r"\\\(|\\\[|\$\$")
# TeX left as text: a command MathJax would have consumed (after "$" or on its own), e.g. a table cell cut by a "|"
_RAW_TEX = re.compile(r"\$\\[A-Za-z]+|\\(?:frac|leftarrow|rightarrow|sqrt|mathbb|operatorname|cdot|beta|lambda"
                      r"|langle|rangle|vert|le|ge)(?![A-Za-z])")


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def build(out: Path) -> Path:
    html = out / "html"
    subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-d",
                    str(out / "doctrees"), str(DOCS), str(html)], check=True)
    return html


def remote_assets(html: Path) -> list[str]:
    """Every script, stylesheet or preloaded file of the built site that would be fetched from the network."""
    found = []
    for page in sorted(html.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        sources = re.findall(r'<script\b[^>]*\ssrc="([^"]*)"', text)
        sources += [re.search(r'\shref="([^"]*)"', tag).group(1)
                    for tag in re.findall(r"<link\b[^>]*>", text)
                    if re.search(r'\srel="(?:stylesheet|preload|modulepreload|icon)"', tag)
                    and re.search(r'\shref="', tag)]
        found += [f"{page.relative_to(html)}: {src}" for src in sources if _REMOTE.match(src)]
        if "cdn.jsdelivr" in text:
            found.append(f"{page.relative_to(html)}: mentions cdn.jsdelivr")
    return found


_PROFILE = Path(tempfile.mkdtemp(prefix="attnflow-render-"))  # a fresh browser profile: no account, no sync
atexit.register(shutil.rmtree, _PROFILE, ignore_errors=True)  # the profile is ~10 MB: leave nothing behind


def _browser(args: list[str], url: str) -> subprocess.CompletedProcess:
    # no network for the page: every host name fails to resolve (file:// pages need none); the browser's own
    # background traffic (updates, spelling dictionaries, accounts) is switched off so that the network log
    # shows only what the page asks for
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--allow-file-access-from-files", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-default-apps", "--no-first-run", "--disable-domain-reliability",
           "--disable-client-side-phishing-detection",
           f"--user-data-dir={_PROFILE}", "--virtual-time-budget=15000", *args, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


# Chromium's own service traffic (component updates, network time, accounts, spelling dictionaries), which
# headless Chromium sends whatever the page is; a page's request to any other host counts
_BROWSER_SERVICES = re.compile(r"^https?://(?:[\w-]+\.)*(?:google\.com|googleapis\.com|gvt1\.com|gstatic\.com)/")


def network_requests(netlog: Path) -> list[str]:
    """The http(s) URLs that Chromium's network log shows the page asked for (its own services left out)."""
    if not netlog.exists():
        return ["(no network log written)"]
    urls = set(re.findall(r'"url":"(https?://[^"]+)"', netlog.read_text(errors="replace")))
    return sorted(u for u in urls if not _BROWSER_SERVICES.match(u))


def check_page(name: str, path: Path, out: Path) -> list[str]:
    problems = []
    url = path.as_uri()
    shot = out / f"{name}.png"
    netlog = out / f"{name}.netlog.json"
    _browser([f"--screenshot={shot}", "--window-size=1280,1500", f"--log-net-log={netlog}"], url)
    if not shot.exists() or shot.stat().st_size < 10_000:
        problems.append(f"{name}: no screenshot")
    for request in network_requests(netlog):
        problems.append(f"{name}: the page asked the network for {request}")
    dom = _browser(["--dump-dom"], url).stdout
    math = len(re.findall(r"<mjx-container", dom))
    problems += math_problems(name, dom)
    problems += ascii_math_problems(name, dom)
    if math < MIN_MATH[name]:
        problems.append(f"{name}: {math} typeset formulas, expected at least {MIN_MATH[name]}")
    for src in re.findall(r'<img[^>]*\ssrc="([^"]+)"', dom):
        if src.startswith(("http:", "https:", "data:")):
            continue
        target = Path(unquote(urlparse(src).path)) if src.startswith("file:") else (path.parent / unquote(src))
        if not target.exists():
            problems.append(f"{name}: missing image {src}")
    members = len(re.findall(r'<dl class="py (?:function|class)', dom))
    if members < MIN_MEMBERS.get(name, 0):
        problems.append(f"{name}: {members} documented functions or classes, expected at least {MIN_MEMBERS[name]}")
    if name == "gallery" and "sphx-glr-single-img" not in dom:
        problems.append("gallery: the example's figure is not on the page")
    print(f"{name:12s} {path.name:45s} formulas {math:4d}  screenshot {shot}")
    return problems


def math_problems(name: str, dom: str) -> list[str]:
    """TeX errors and untypeset TeX delimiters in a page's DOM after MathJax ran."""
    problems = []
    if "Math input error" in dom or "Math Processing Error" in dom or "<mjx-merror" in dom:
        errors = re.findall(r'<mjx-merror[^>]*data-mjx-error="([^"]*)"', dom)
        problems.append(f"{name}: MathJax reported an error {sorted(set(errors))[:3]}")
    body = dom[dom.find("<body"):] if "<body" in dom else dom
    text = _CODE.sub("", body)
    raw = _RAW_MATH.findall(text)
    if raw:
        problems.append(f"{name}: {len(raw)} raw TeX delimiter(s) left untypeset ({sorted(set(raw))})")
    # MathJax replaces what it typesets (its output holds no TeX source): TeX commands left are raw TeX
    prose = re.sub(r"<[^>]*>", " ", re.sub(r"<mjx-container\b.*?</mjx-container>", "", text, flags=re.S))
    commands = _RAW_TEX.findall(prose)  # text only: a figure's alt text may quote its mathtext title
    if commands:
        problems.append(f"{name}: {len(commands)} raw TeX command(s) in the text ({sorted(set(commands))[:5]})")
    return problems


class _Prose(HTMLParser):
    """The prose of an HTML page: text outside code, math, navigation and signatures (one chunk per element)."""

    # code and literals, typeset or untypeset math, the site's navigation, and <dt>: API signatures and the
    # "name : type" lines of parameter lists (names and types are code, not prose)
    SKIP = {"pre", "code", "script", "style", "textarea", "nav", "header", "footer", "mjx-container", "dt",
            "svg", "math"}
    SKIP_CLASSES = ("math", "highlight", "sig")
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: whether it is skipped
        self.chunks: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        skipped = tag in self.SKIP or any(c.startswith(self.SKIP_CLASSES) for c in classes)
        self.stack.append(skipped or (bool(self.stack) and self.stack[-1]))

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]) and data.strip():
            self.chunks.append(data)


def prose_text(html_text: str) -> str:
    """The prose of a page (see :class:`_Prose`), from its ``<body>`` (the ``<head>`` holds no prose)."""
    body = html_text[html_text.find("<body"):] if "<body" in html_text else html_text
    parser = _Prose()
    parser.feed(body)
    return "\n".join(parser.chunks)


def ascii_math_problems(name: str, html_text: str) -> list[str]:
    """ASCII mathematics (the rules of ``tests/docs/test_ascii_math.py``: ``beta`` as a word, ``S^2``,
    ``sqrt(``, ``<x, y>``, ``<=``) and TeX left as text, in the prose of a page."""
    from tests.docs.test_ascii_math import RULES

    prose = _ALLOWED_PROSE.sub(" ", prose_text(html_text))
    found = []
    for rule, pattern in RULES.items():
        found += [f"[{rule}] ...{prose[max(0, m.start() - 20):m.end() + 20]}...".replace("\n", " ")
                  for m in pattern.finditer(prose)]
    found += [f"[raw TeX] ...{prose[max(0, m.start() - 20):m.end() + 20]}...".replace("\n", " ")
              for m in _RAW_TEX.finditer(prose)]
    return [f"{name}: ASCII mathematics or raw TeX in the prose: {f}" for f in found]


# words that the rules would take for mathematics but that are right as written (a method's name)
_ALLOWED_PROSE = re.compile(r"\bdelta[\s-]+method\b")

#: the pages whose prose is held to typeset mathematics (the generated claims, errata and command-line pages
#: quote registry text and --help output, which are plain text by design)
PROSE_PAGES = ("index.html", "conventions.html", "literature.html", "getting_started.html", "guide/",
               "auto_examples/plot_", "_generated/api/")


def check_prose_everywhere(html: Path) -> list[str]:
    """Every page of :data:`PROSE_PAGES` as built (before MathJax: Sphinx's math is in ``class="math"``
    elements, which the prose leaves out): no ASCII mathematics and no raw TeX in its prose. Text only, fast."""
    problems = []
    for page in sorted(html.rglob("*.html")):
        rel = str(page.relative_to(html))
        if rel.startswith(PROSE_PAGES):
            problems += ascii_math_problems(rel, page.read_text(encoding="utf-8", errors="replace"))
    return problems


def check_math_everywhere(html: Path, skip: set[str]) -> list[str]:
    """Every page whose HTML has math: open it and check that MathJax typeset all of it."""
    problems = []
    pages = [p for p in sorted(html.rglob("*.html"))
             if str(p.relative_to(html)) not in skip and 'class="math' in p.read_text(errors="replace")]
    for k, page in enumerate(pages, 1):
        rel = str(page.relative_to(html))
        dom = _browser(["--dump-dom"], page.as_uri()).stdout
        found = math_problems(rel, dom) + (ascii_math_problems(rel, dom) if rel.startswith(PROSE_PAGES) else [])
        problems += found
        print(f"[{k}/{len(pages)}] {page.relative_to(html)}: {'ok' if not found else found}", file=sys.stderr)
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DOCS / "_build" / "render"), help="output folder")
    parser.add_argument("--no-build", action="store_true", help="use an existing OUT/html")
    parser.add_argument("--all-pages", action="store_true",
                        help="also open every other page of the site and check its equations (no TeX error, no raw "
                             "TeX left); slower (a few seconds per page)")
    args = parser.parse_args(argv)
    if chromium() is None:
        print("error: no chromium found (Debian: apt-get install -y chromium)", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    html = out / "html" if args.no_build else build(out)
    problems = [f"needs the network: {a}" for a in remote_assets(html)]
    problems += check_prose_everywhere(html)
    for name, rel in PAGES.items():
        problems += check_page(name, html / rel, out)
    if args.all_pages:
        problems += check_math_everywhere(html, skip=set(PAGES.values()))
    for p in problems:
        print("FAIL", p)
    print("all pages render" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
