"""docs/other_codes.md: its reproducers are attnflow's code only (the authors' code is run elsewhere and quoted,
never imported by the page), each disagreement has one, and the page is reachable (toctree, errata page link).

The examples themselves run and are compared exactly by tests/docs/test_examples.py; this test pins where their
numbers come from."""
from __future__ import annotations

import re
from pathlib import Path

from tests.docs.doc_examples import extract_blocks

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "other_codes.md"
#: the modules a reproducer may import: attnflow's and NumPy
ALLOWED = ("attnflow", "numerics", "numpy")


def imported_modules(code: str) -> set[str]:
    """Top-level module names of the ``import`` and ``from ... import`` statements of a pycon block."""
    lines = [ln[4:] for ln in code.splitlines() if ln.startswith((">>> ", "... "))]
    names = set()
    for ln in lines:
        m = re.match(r"\s*from\s+([\w.]+)\s+import", ln)
        if m:
            names.add(m.group(1).split(".")[0])
            continue
        m = re.match(r"\s*import\s+(.+)", ln)
        if m:
            names |= {part.split(" as ")[0].strip().split(".")[0] for part in m.group(1).split(",")}
    return names


def test_reproducers_import_only_attnflow():
    blocks = [b for b in extract_blocks(PAGE) if b.kind == "pycon"]
    assert len(blocks) >= 3
    for b in blocks:
        assert imported_modules(b.text) <= set(ALLOWED), (b.line, imported_modules(b.text))


def test_planted_foreign_import_is_reported():
    assert imported_modules(">>> import simuxform\n>>> from utils import rhs_L2\n") == {"simuxform", "utils"}


def test_every_disagreement_section_has_a_reproducer():
    """The sections of the codes with a disagreement of substance hold a pycon block."""
    text = PAGE.read_text()
    sections = re.split(r"\n## ", text)
    for name in ("nikitus20/simuformer", "borjanG/2023-transformers-rotf", "borjanG/2026-lost-in-the-middle"):
        (section,) = [s for s in sections if s.startswith(name)]
        assert "```pycon" in section, name


def test_page_is_reachable():
    assert "other_codes" in (ROOT / "docs" / "index.md").read_text()
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", ROOT / "docs" / "tools" / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    assert "(../other_codes.md)" in generate.errata_page()
