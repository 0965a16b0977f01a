"""Mathematics in the prose of the docs is typeset (MyST dollar math), not written as ASCII.

A lint over the Markdown prose of the guide pages, the conventions, the literature digest, the front page and the
proof notes: outside code blocks, code spans, HTML comments (the measured-number markers), links and math
(``$...$``, ``$$...$$``, ``{math}`` blocks), it flags what reads as ASCII mathematics:

- a braced superscript or subscript (``^{``, ``_{``, e.g. ``I_{d/2}``, ``S^{d-1}``) or a caret power (``n^2``,
  ``e^beta``);
- a Greek letter written as a bare word (``beta``, ``lambda``, ``gamma``, ...);
- ``sqrt(``, ``exp(``, ``log(``, ``cos(``;
- an inner product written ``<x, y>``;
- ``<=``, ``>=``, ``!=`` between math tokens.

The gallery's pages are the module docstrings of ``docs/examples/plot_*.py`` (reStructuredText: mathematics in
``:math:`...``` roles, which the code-span rule removes like a Markdown code span); they are linted the same way.
A Markdown table row is split by any ``|``, also one inside ``$...$``: :func:`split_table_math` finds those.

Fast (text only), in the default run. A phrase that is right as written goes into ``ALLOWED`` with the reason.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCOPE = ["docs/index.md", "docs/conventions.md", "docs/literature.md", "docs/guide/*.md", "proofs_notes/*.md"]
# Not yet typeset (ASCII mathematics left in their prose): left out of the lint until they are rewritten.
NOT_YET_TYPESET: list[str] = []
# (file, exact flagged text, why it is right as written)
ALLOWED: list[tuple[str, str, str]] = [
    ("proofs_notes/architectures-gaussian-heads.md", "delta method", "the statistical method's name"),
    ("proofs_notes/gaussian-ode-vs-particles.md", "delta", "the delta method (statistics), by name"),
    ("proofs_notes/longcontext-fixed-query-critical-constant.md", "delta-method", "the delta method, by name"),
]

GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "theta", "kappa", "lambda", "mu", "nu", "pi", "rho",
         "sigma", "tau", "phi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Sigma", "Phi", "Psi", "Omega")
RULES = {
    "braced super/subscript": re.compile(r"[\w)\]}|]\s?[\^_]\{"),
    "caret power": re.compile(r"[\w)\]}|*]\^[-\w({*]"),
    # (not inside a hyphenated or dotted identifier such as a claim or mutant id: multihead-critical-beta)
    "Greek letter as a word": re.compile(r"(?<![A-Za-z0-9\\./-])(?:" + "|".join(GREEK) + r")(?![A-Za-z0-9-]|\.\w)"),
    "function call": re.compile(r"(?<![\w\\])(?:sqrt|exp|log|cos|sin)\("),
    "inner product <x, y>": re.compile(r"<\s*[A-Za-z][\w]*\s*,\s*[A-Za-z][\w]*\s*>"),
    "ASCII comparison": re.compile(r"[\w)]\s*(?:<=|>=|!=)\s*[-\w(]"),
}

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")  # code fences (a MyST ::: fence holds prose: linted)
# removed from a paragraph before the rules run: what is not prose (a code span may continue on the next line)
_NOT_PROSE = re.compile(
    r"<!--[\s\S]*?-->"  # comments and measured-number markers
    r"|(`+)[\s\S]*?\1"  # code spans and roles ({ref}`x`)
    r"|\$\$[\s\S]*?\$\$|(?<![\\$])\$[^$]+?\$"  # math
    r"|!\[[^\]]*\]\([^)]*\)"  # an image (its alt text is plain text by nature)
    r"|\]\([^)]*\)"  # link targets (the link text stays prose)
    r"|</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>,]*)?/?>"  # HTML tags
    r"|https?://\S+")


def _blank(match: re.Match) -> str:
    """A removed span keeps its line breaks, so that line numbers stay right."""
    return re.sub(r"[^\n]", " ", match.group(0))


def prose_lines(text: str):
    """(line number, prose of the line) outside code blocks, display math and comments."""
    lines = text.split("\n")
    keep = [False] * len(lines)  # lines of paragraphs (prose)
    fence = None
    display = False
    for k, line in enumerate(lines):
        stripped = line.strip()
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and stripped == m.group(1):
                fence = None
            continue
        if display:
            display = not stripped.endswith("$$")
            continue
        if m:
            fence = m.group(1)
            continue
        if stripped.startswith("$$") and (stripped == "$$" or not stripped[2:].rstrip().endswith("$$")):
            display = True
            continue
        keep[k] = True
    # paragraphs: runs of kept lines (a blank line ends one), cleaned as a whole
    k = 0
    while k < len(lines):
        if not keep[k]:
            k += 1
            continue
        start = k
        while k < len(lines) and keep[k] and lines[k].strip():
            k += 1
        k = max(k, start + 1)
        paragraph = _NOT_PROSE.sub(_blank, "\n".join(lines[start:k]))
        for offset, line in enumerate(paragraph.split("\n")):
            yield start + offset + 1, line


def ascii_math(text: str) -> list[tuple[int, str, str]]:
    """(line, rule, flagged text) for every ASCII formula found in the prose of a Markdown text."""
    found = []
    for number, line in prose_lines(text):
        for rule, pattern in RULES.items():
            for m in pattern.finditer(line):
                found.append((number, rule, line[max(0, m.start() - 15):m.end() + 15].strip()))
    return found


def scoped_files() -> list[Path]:
    files = sorted({p for pattern in SCOPE for p in ROOT.glob(pattern)})
    return [p for p in files if str(p.relative_to(ROOT)) not in NOT_YET_TYPESET]


@pytest.mark.parametrize("path", scoped_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_prose_has_no_ascii_math(path):
    rel = str(path.relative_to(ROOT))
    allowed = {text for file, text, _ in ALLOWED if file == rel}
    hits = [h for h in ascii_math(path.read_text(encoding="utf-8"))
            if not any(a in h[2] or h[2] in a for a in allowed)]
    assert not hits, f"{rel}: ASCII mathematics in prose (typeset it as $...$):\n" + "\n".join(
        f"  line {n}: [{rule}] ...{text}..." for n, rule, text in hits)


def test_not_yet_typeset_files_exist():
    for rel in NOT_YET_TYPESET:
        assert (ROOT / rel).is_file(), f"{rel} is listed as not yet typeset but does not exist"


PLANTED = """# A page

The normaliser is Gamma(d/2)(2/beta)^{d/2-1} I_{d/2}(beta)/beta, and the weights are e^{beta <x,y>}.
"""


def test_lint_finds_a_planted_ascii_formula():
    """Shown to fail: a planted ASCII formula is flagged by several rules; typeset, code or a comment, it is not."""
    rules = {rule for _, rule, _ in ascii_math(PLANTED)}
    assert {"braced super/subscript", "Greek letter as a word", "inner product <x, y>"} <= rules
    typeset = ("# A page\n\nThe normaliser is $\\Gamma(d/2)(2/\\beta)^{d/2-1} I_{d/2}(\\beta)/\\beta$, and\n\n"
               "$$\ne^{\\beta \\langle x, y\\rangle}\n$$\n")
    assert ascii_math(typeset) == []
    in_code = ("Code: `beta^{d/2}` and <!-- measured: x.y beta -->3<!-- end -->\n\n```console\n"
               "$ attnflow phase --beta 2\nbeta* = 0.5\n```\n")
    assert ascii_math(in_code) == []
    for planted in ("at beta = 4", "sqrt(d)", "S^2", "lambda_max", "x <= y"):
        assert ascii_math(f"Some prose {planted} here.\n"), planted


GALLERY = sorted(ROOT.glob("docs/examples/plot_*.py"))


def gallery_text(source: str) -> str:
    """The text of a gallery page: the module docstring and the comment blocks after ``# %%`` (each a
    paragraph of its own, so that line numbers count from the docstring's start, then block by block)."""
    texts = [ast.get_docstring(ast.parse(source), clean=False) or ""]
    block = None
    for line in source.split("\n"):
        if line.startswith("# %%"):
            block = []
            texts.append(block)
        elif block is not None and line.startswith("#"):
            block.append(line[1:].removeprefix(" "))
        else:
            block = None
    return "\n\n".join(t if isinstance(t, str) else "\n".join(t) for t in texts)


@pytest.mark.parametrize("path", GALLERY, ids=lambda p: p.name)
def test_gallery_text_has_no_ascii_math(path):
    """The gallery pages (``D_c(beta)``, ``K_# = 1/(2 D_c)``, ``beta*``, ``S^2`` were written in ASCII)."""
    hits = ascii_math(gallery_text(path.read_text(encoding="utf-8")))
    assert not hits, f"{path.name}: ASCII mathematics in the gallery text (typeset it as :math:`...`):\n" + \
        "\n".join(f"  line {n}: [{rule}] ...{text}..." for n, rule, text in hits)


_MATH_SPAN = re.compile(r"(?<![\\$])\$[^$]+?\$")


def split_table_math(text: str) -> list[tuple[int, str]]:
    """(line, math) for every ``$...$`` in a Markdown table row that holds an unescaped ``|`` (it splits the row:
    the cell ends there and the rest of the formula is shown as raw TeX)."""
    found = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.lstrip().startswith("|"):
            continue
        prose = re.sub(r"(`+).*?\1", "", line)  # a code span may hold a | of its own
        found += [(number, m.group(0)) for m in _MATH_SPAN.finditer(prose) if re.search(r"(?<!\\)\|", m.group(0))]
    return found


@pytest.mark.parametrize("path", sorted({*scoped_files(), *ROOT.glob("docs/*.md")}),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_bar_inside_math_in_a_table_row(path):
    hits = split_table_math(path.read_text(encoding="utf-8"))
    assert not hits, f"{path.relative_to(ROOT)}: a | inside math splits the table row (write \\vert or \\mid):\n" + \
        "\n".join(f"  line {n}: {m}" for n, m in hits)


def test_table_lint_finds_a_planted_bar():
    row = "| `sde.py` | $x \\leftarrow x/|x|$ and `a|b` |\n"
    assert split_table_math(row) == [(1, "$x \\leftarrow x/|x|$")]
    assert split_table_math(row.replace("|x|", "\\vert x\\vert")) == []
    assert split_table_math("Prose $|x|$ outside a table.\n") == []


def test_gallery_text_includes_the_comment_blocks():
    source = 'r"""\nTitle\n=====\n\nAt :math:`\\beta = 1`.\n"""\n\n# %%\n# Against beta here.\nx = 1  # beta\n'
    assert [rule for _, rule, _ in ascii_math(gallery_text(source))] == ["Greek letter as a word"]
