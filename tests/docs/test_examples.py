"""Every ```pycon and ```console example in README.md, docs/**/*.md and proofs_notes/*.md runs and matches.

The rules are in :mod:`tests.docs.doc_examples`. Blocks marked ``<!-- slow-test: ... -->`` run in
``test_documentation_examples_slow`` (``pytest -m slow``).
"""
from __future__ import annotations

import pytest

from tests.docs.doc_examples import ROOT, documentation_files, extract_blocks, run_file

FILES = [p for p in documentation_files() if extract_blocks(p)]


def _check(path, tmp_path, include_slow):
    result = run_file(path, tmp_path, include_slow=include_slow)
    assert not result.mismatches, f"{len(result.mismatches)} example(s) of {path.relative_to(ROOT)} do not " \
        "match what the code prints:\n" + "\n".join(map(str, result.mismatches))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_documentation_examples(path, tmp_path):
    _check(path, tmp_path, include_slow=False)


SLOW_FILES = [p for p in FILES if any(b.slow for b in extract_blocks(p))]


@pytest.mark.slow
@pytest.mark.parametrize("path", SLOW_FILES, ids=[str(p.relative_to(ROOT)) for p in SLOW_FILES])
def test_documentation_examples_slow(path, tmp_path):
    _check(path, tmp_path, include_slow=True)
