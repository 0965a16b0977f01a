r"""Mathematics in the docstrings shown on the API pages is typeset (reStructuredText ``:math:`` roles and
``.. math::`` blocks, as NumPy and SciPy write theirs), not written in ASCII.

The API pages (``docs/tools/generate.py``: one page per module of ``attnflow._EXPORTS`` with its public names, and
every ``theory`` module with its members) render these docstrings. ``D_c(beta)``, ``S^2``, ``beta*`` or a
formula display indented in plain text read as code there, not as mathematics. The lint runs the rules of
:mod:`tests.docs.test_ascii_math` over the prose of each docstring, after removing what is not prose:

- literal blocks (a paragraph ending in ``::``), ``.. math::`` blocks and other directives' bodies;
- doctest lines (``>>>``, ``...``);
- numpydoc section titles and their underlines, and the ``name : type`` lines of the Parameters, Returns,
  Yields, Raises, Attributes and See Also sections (names and types are code);
- code spans (````x````), roles (``:math:`...```, ``:func:`...```), interpreted text (```x```) and links.

An indented block that does not follow ``::`` (a formula display in plain text) is prose to the lint: write it
as a ``.. math::`` block. A docstring holding a backslash must be a raw string (``"\beta"`` in a plain string is
a backspace and ``eta``): :func:`test_docstrings_with_backslashes_are_raw` checks the source.

Fast (text only), in the default run. A phrase that is right as written goes into ``ALLOWED`` with the reason.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import io
import pkgutil
import re
import tokenize
from pathlib import Path

import pytest

from tests.docs.test_ascii_math import ascii_math

ROOT = Path(__file__).resolve().parents[2]

# Modules whose docstrings still write mathematics in ASCII: left out of the lint until they are rewritten.
# A module listed here must still have a hit (test_not_yet_typeset_modules_still_need_it), so the list only shrinks.
NOT_YET_TYPESET: list[str] = [
]
# (module, exact flagged text, why it is right as written)
ALLOWED: list[tuple[str, str, str]] = [
    ("numerics.gaussian.solutions", "delta method", "the name of a statistical method, not the Greek letter"),
    ("numerics.longcontext.fixed_query", "delta method", "the statistical method's name"),
    ("numerics.longcontext.gaps", "delta method", "the statistical method's name"),
]

SECTIONS = ("Parameters", "Other Parameters", "Returns", "Yields", "Receives", "Raises", "Warns", "Attributes",
            "See Also", "Methods")
PROSE_SECTIONS = ("Notes", "Examples", "References", "Warnings")
_DIRECTIVE = re.compile(r"^\s*\.\. [\w:-]+::")


def api_objects() -> dict[str, list[tuple[str, object]]]:
    """Module name -> (qualified name, object) of everything its API page renders (module docstring first)."""
    import attnflow
    import theory

    out: dict[str, list[tuple[str, object]]] = {}
    for module in sorted(attnflow._EXPORTS):
        mod = importlib.import_module(module)
        out[module] = [(module, mod)] + [(f"{module}.{n}", getattr(mod, n)) for n in sorted(attnflow._EXPORTS[module])
                                         if callable(getattr(mod, n))]
    for info in pkgutil.iter_modules(theory.__path__):
        if info.name.startswith("_"):
            continue
        module = f"theory.{info.name}"
        mod = importlib.import_module(module)
        members = [(f"{module}.{n}", obj) for n, obj in vars(mod).items()
                   if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                   and getattr(obj, "__module__", None) == module and obj.__doc__]
        out[module] = [(module, mod)] + sorted(members, key=lambda item: item[0])
    return out


def docstring_prose(doc: str) -> str:
    """The docstring with everything that is not prose blanked (line breaks kept, so line numbers stay right)."""
    lines = doc.split("\n")
    out = list(lines)
    block_indent = None  # indent of the line that opened a literal block or a directive
    section = None
    for k, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if block_indent is not None:
            if not stripped or indent > block_indent:
                out[k] = ""
                continue
            block_indent = None
        if stripped.startswith((">>>", "... ")) or stripped == "...":
            out[k] = ""
            continue
        nxt = lines[k + 1].strip() if k + 1 < len(lines) else ""
        if stripped in SECTIONS + PROSE_SECTIONS and nxt and set(nxt) == {"-"}:
            section = stripped
            out[k] = ""
            continue
        if stripped and set(stripped) == {"-"} and k and lines[k - 1].strip() in SECTIONS + PROSE_SECTIONS:
            out[k] = ""
            continue
        if section in SECTIONS and stripped and indent == 0:
            # "name : type" (or a See Also target): code, not prose
            out[k] = ""
            continue
        if _DIRECTIVE.match(line):
            out[k] = ""
            block_indent = indent
            continue
        if stripped.endswith("::"):
            out[k] = line[:-2] if not stripped == "::" else ""
            block_indent = indent
            continue
    return "\n".join(out)


def docstring_hits(doc: str) -> list[tuple[int, str, str]]:
    """(line, rule, flagged text) for every ASCII formula in the prose of a docstring."""
    return ascii_math(docstring_prose(doc))


def module_hits(module: str, objects: list[tuple[str, object]]) -> list[str]:
    allowed = {text for mod, text, _ in ALLOWED if mod == module}
    found = []
    for name, obj in objects:
        doc = inspect.getdoc(obj) or ""
        for number, rule, text in docstring_hits(doc):
            if not any(a in text or text in a for a in allowed):
                found.append(f"  {name}, docstring line {number}: [{rule}] ...{text}...")
    return found


API = api_objects()


@pytest.mark.parametrize("module", [m for m in API if m not in NOT_YET_TYPESET])
def test_api_docstrings_have_no_ascii_math(module):
    hits = module_hits(module, API[module])
    assert not hits, (f"{module}: ASCII mathematics in the docstrings of its API page (typeset it as "
                      ":math:`...` or a .. math:: block, in a raw docstring):\n" + "\n".join(hits))


def test_not_yet_typeset_modules_still_need_it():
    """The list only shrinks: a listed module must exist and still have ASCII mathematics."""
    for module in NOT_YET_TYPESET:
        assert module in API, f"{module} is listed as not yet typeset but has no API page"
        assert module_hits(module, API[module]), f"{module} is typeset now: remove it from NOT_YET_TYPESET"


def _source_files() -> list[Path]:
    return sorted({Path(inspect.getsourcefile(importlib.import_module(m))) for m in API})


def raw_string_problems(source: str) -> list[int]:
    """Line numbers of docstrings (module, class, function) that hold a backslash and are not raw strings."""
    tree = ast.parse(source)
    doc_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                doc_lines.add(first.lineno)
    bad = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING and tok.start[0] in doc_lines and "\\" in tok.string:
            prefix = tok.string[:tok.string.index(tok.string.lstrip("rRbBuUfF")[0])]
            if "r" not in prefix.lower():
                bad.append(tok.start[0])
    return bad


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docstrings_with_backslashes_are_raw(path):
    bad = raw_string_problems(path.read_text(encoding="utf-8"))
    assert not bad, f"{path.relative_to(ROOT)}: docstrings at lines {bad} hold a backslash but are not raw strings"


PLANTED = '''The critical noise D_c(beta) on S^2.

Parameters
----------
beta : float
    Inverse temperature; the kernel is e^{beta <x, y>}.

Notes
-----
The field is

    v_i = sum_j e^{beta <x_i, x_j>} x_j / Z_i

Example::

    beta^2 = sqrt(d)
'''

TYPESET = r'''The critical noise :math:`D_c(\beta)` on :math:`S^2`.

Parameters
----------
beta : float
    Inverse temperature; the kernel is :math:`e^{\beta \langle x, y\rangle}` (``beta`` here).

Notes
-----
The field is

.. math::

    v_i = \sum_j e^{\beta \langle x_i, x_j\rangle} x_j / Z_i

Example::

    beta^2 = sqrt(d)
'''


def test_lint_finds_planted_ascii_math():
    """Shown to fail: the plain-text docstring is flagged on its summary, a parameter's description and the
    indented display; typeset, with the parameter name and a literal block kept, it is not."""
    lines = {n for n, _, _ in docstring_hits(PLANTED)}
    assert {1, 6, 12} <= lines, lines
    assert 16 not in lines  # the literal block after "Example::" is code
    assert docstring_hits(TYPESET) == []


def test_raw_string_check_finds_a_plain_docstring_with_a_backslash():
    plain = 'def f():\n    """The kernel :math:`e^{\\beta s}`."""\n'
    raw = 'def f():\n    r"""The kernel :math:`e^{\\beta s}`."""\n'
    assert raw_string_problems(plain) == [2]
    assert raw_string_problems(raw) == []
