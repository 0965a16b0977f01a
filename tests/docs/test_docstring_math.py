r"""Mathematics in the docstrings shown on the API pages is typeset (reStructuredText ``:math:`` roles and
``.. math::`` blocks, as NumPy and SciPy write theirs), not written in ASCII.

The API pages (``docs/tools/generate.py``: one page per module of ``attnflow._EXPORTS`` with its public names, and
every ``theory`` module with its members) render these docstrings: on a numerical page the module's, each public
function's and class's, and the ``#:`` comment of each public constant (``autodata``); on a theory page
(``automodule :members:``) also each documented class member (methods, properties, fields with a ``#:`` comment)
and each module constant with a ``#:`` comment (:func:`api_objects`; the comments are read as Sphinx reads them,
``sphinx.pycode.ModuleAnalyzer``). ``D_c(beta)``, ``S^2``, ``beta*`` or a
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
import functools
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
_ROLE_NAME = re.compile(r"(?<![\w`]):[\w.:+-]+:(?=`)")


class AttrDoc:
    """Stands for a documented attribute on a page: ``inspect.getdoc`` of it is the attribute's ``#:`` comment."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc


def _attr_docs(analyzer) -> dict[tuple[str, str], AttrDoc]:
    """(class qualname or "", name) -> the ``#:`` comment (or string after the assignment) that autodoc shows."""
    return {key: AttrDoc("\n".join(lines).strip()) for key, lines in analyzer.find_attr_docs().items()}


def _member_function(obj):
    """The function whose docstring autodoc shows for a class member (method, property, static or class
    method), else None."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        obj = obj.fget
    elif isinstance(obj, functools.cached_property):
        obj = obj.func
    return obj if obj is not None and inspect.isfunction(inspect.unwrap(obj)) else None


def class_members(module: str, cls: type, attr_docs: dict[tuple[str, str], AttrDoc]) -> list[tuple[str, object]]:
    """(qualified name, object) of the members ``automodule :members:`` shows under a class: its own public
    methods and properties with a docstring, and its attributes (dataclass fields too) documented by ``#:``."""
    out: dict[str, object] = {}
    for name, obj in vars(cls).items():
        function = None if name.startswith("_") else _member_function(obj)
        if function is not None and function.__doc__:
            out[name] = function
    for (namespace, name), doc in attr_docs.items():
        if namespace == cls.__qualname__ and not name.startswith("_") and doc.__doc__:
            out.setdefault(name, doc)
    return [(f"{module}.{cls.__qualname__}.{name}", obj) for name, obj in sorted(out.items())]


def numerical_page(module: str, mod, names, attr_docs: dict[tuple[str, str], AttrDoc]) -> list[tuple[str, object]]:
    """What a numerical page shows: the module docstring, each public function and class (``autofunction``,
    ``autoclass`` without members) and each public non-callable (``autodata``: its ``#:`` comment, else the
    docstring of the value)."""
    entries: list[tuple[str, object]] = [(module, mod)]
    for n in sorted(names):
        obj = getattr(mod, n)
        entries.append((f"{module}.{n}", obj if callable(obj) else attr_docs.get(("", n), obj)))
    return entries


def theory_page(module: str, mod, attr_docs: dict[tuple[str, str], AttrDoc]) -> list[tuple[str, object]]:
    """What a ``theory`` page (``automodule :members: :no-undoc-members:``) shows: the module docstring, its
    documented functions and classes, each class's documented members, and the module data documented by ``#:``."""
    members: list[tuple[str, object]] = []
    for n, obj in vars(mod).items():
        if n.startswith("_"):
            continue
        # (a function under functools.cache is a function to autodoc too)
        if (inspect.isfunction(inspect.unwrap(obj)) or inspect.isclass(obj)) \
                and getattr(obj, "__module__", None) == module:
            if obj.__doc__:
                members.append((f"{module}.{n}", obj))
            if inspect.isclass(obj):
                members += class_members(module, obj, attr_docs)
        elif ("", n) in attr_docs:
            members.append((f"{module}.{n}", attr_docs[("", n)]))
    return [(module, mod)] + sorted(members, key=lambda item: item[0])


def api_objects() -> dict[str, list[tuple[str, object]]]:
    """Module name -> (qualified name, object) of everything its API page renders (module docstring first; a
    documented attribute is an :class:`AttrDoc`)."""
    from sphinx.pycode import ModuleAnalyzer

    import attnflow
    import theory

    out: dict[str, list[tuple[str, object]]] = {}
    for module in sorted(attnflow._EXPORTS):
        out[module] = numerical_page(module, importlib.import_module(module), attnflow._EXPORTS[module],
                                     _attr_docs(ModuleAnalyzer.for_module(module)))
    for info in pkgutil.iter_modules(theory.__path__):
        if not info.name.startswith("_"):
            module = f"theory.{info.name}"
            out[module] = theory_page(module, importlib.import_module(module),
                                      _attr_docs(ModuleAnalyzer.for_module(module)))
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
    # a role's name goes with its text (the page shows only the text): ":func:`f` <= tol" is "f <= tol" there
    return _ROLE_NAME.sub(lambda m: " " * len(m.group(0)), "\n".join(out))


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
    """Line numbers of docstrings (module, class, function, attribute) that hold a backslash and are not raw
    strings."""
    tree = ast.parse(source)
    doc_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                doc_lines.add(first.lineno)
        if isinstance(node, (ast.Module, ast.ClassDef)):
            # an attribute's docstring: a string right after the assignment (autodoc shows it like a #: comment)
            for before, after in zip(node.body, node.body[1:]):
                if isinstance(before, (ast.Assign, ast.AnnAssign)) and isinstance(after, ast.Expr) \
                        and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
                    doc_lines.add(after.lineno)
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
    # an attribute's docstring (a string after the assignment, which autodoc shows) too
    attribute = 'class A:\n    x: int = 0\n    """Its size :math:`\\beta n`."""\n'
    assert raw_string_problems(attribute) == [3]
    assert raw_string_problems(attribute.replace('    """', '    r"""')) == []


PLANTED_MODULE = """\"\"\"A module.\"\"\"
import dataclasses

#: the inverse temperature beta
beta = 1.0
#: the schemes: fixed, or beta = gamma log n
SCHEMES = ("fixed", "log")
UNDOCUMENTED = 2.0


@dataclasses.dataclass
class Spec:
    \"\"\"A spec.\"\"\"

    #: the kernel phi(s) = e^{beta s}
    kernel: object = None
    size: int = 0
    \"\"\"its size n^2\"\"\"

    def weight(self):
        \"\"\"The weight phi'(s) times sqrt(d).\"\"\"

    @property
    def power(self):
        \"\"\"The power S^2.\"\"\"

    @staticmethod
    def bound():
        \"\"\"True when x <= 1.\"\"\"

    def _private(self):
        \"\"\"beta, not on the page.\"\"\"
"""

PLANTED_TYPESET = {
    "the inverse temperature beta": r"the inverse temperature :math:`\beta`",
    "beta = gamma log n": r":math:`\beta = \gamma \log n`",
    "phi(s) = e^{beta s}": r":math:`\phi(s) = e^{\beta s}`",
    "n^2": ":math:`n^2`",
    "phi'(s) times sqrt(d)": r":math:`\phi'(s)` times :math:`\sqrt{d}`",
    "S^2": r":math:`\mathbb{S}^2`",
    "x <= 1": r":math:`x \le 1`",
}


def _planted_module(source: str, name: str = "planted_page"):
    import types

    from sphinx.pycode import ModuleAnalyzer

    import sys

    mod = types.ModuleType(name)
    sys.modules[name] = mod  # (dataclasses look their module up while the class is made)
    try:
        exec(compile(source, name, "exec"), mod.__dict__)  # noqa: S102 (a fixed source written above)
    finally:
        del sys.modules[name]
    return mod, _attr_docs(ModuleAnalyzer.for_string(source, name))


def test_lint_sees_class_members_and_module_data():
    """Shown to fail: an ASCII formula planted in a #: comment of module data, a #: comment and a docstring of a
    dataclass field, a method's, a property's and a static method's docstring is flagged on a theory page (not in
    a private method's); on a numerical page, the autodata entry's #: comment is flagged. Typeset, none is."""
    mod, attr_docs = _planted_module(PLANTED_MODULE)
    hits = module_hits("planted_page", theory_page("planted_page", mod, attr_docs))
    flagged = {h.split(",")[0].strip() for h in hits}
    assert flagged == {f"planted_page.{n}" for n in ("beta", "SCHEMES", "Spec.kernel", "Spec.size", "Spec.weight",
                                                     "Spec.power", "Spec.bound")}, flagged
    data = module_hits("planted_page", numerical_page("planted_page", mod, ["SCHEMES", "UNDOCUMENTED"], attr_docs))
    assert {h.split(",")[0].strip() for h in data} == {"planted_page.SCHEMES"}, data
    typeset = PLANTED_MODULE
    for ascii_text, rest in PLANTED_TYPESET.items():
        typeset = typeset.replace(ascii_text, rest)
    typeset = re.sub(r'(^|\n)(\s*)"""', r'\1\2r"""', typeset)  # docstrings with a backslash are raw
    assert raw_string_problems(typeset) == []
    mod, attr_docs = _planted_module(typeset)
    assert module_hits("planted_page", theory_page("planted_page", mod, attr_docs)) == []
    assert module_hits("planted_page", numerical_page("planted_page", mod, ["SCHEMES"], attr_docs)) == []


def test_lint_reads_a_role_as_its_text():
    """Shown to fail: ":func:`f` <= tol" shows "f <= tol" on the page, an ASCII comparison."""
    assert docstring_hits("Stop when :func:`residual` <= tol.")
    assert docstring_hits(r"Stop when :math:`\lVert r\rVert \le` ``tol``.") == []
