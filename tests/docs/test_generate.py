"""The site generator (docs/tools/generate.py) writes one page per module and note, and removes the pages of
modules or notes that no longer exist (a stale page of a moved module fails autodoc)."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _generate():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "tools" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_write_all_removes_stale_pages_and_keeps_the_current_ones(tmp_path):
    generate = _generate()
    stale_api = tmp_path / "api" / "numerics.architectures.stationary.rst"
    stale_note = tmp_path / "notes" / "no-such-note.md"
    for path in (stale_api, stale_note):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("stale\n")
    generate.write_all(tmp_path)
    assert not stale_api.exists() and not stale_note.exists()
    api = {p.stem for p in (tmp_path / "api").glob("*.rst")}
    assert set(generate.api_pages()) == api and "numerics.critical.stationary" in api
    assert {p.stem for p in (tmp_path / "notes").glob("*.md")} == set(generate.note_stubs())
    assert (tmp_path / "claims.md").exists() and (tmp_path / "cli.md").exists()


def test_claims_table_shows_status_and_numbers_first_and_narrow():
    """The registry page hid its status and measured columns off-screen, after the long statement and source
    columns; they now come right after the id, with the value cells cut at VALUE_CELL characters."""
    generate = _generate()
    page = generate.claims_page()
    header = next(line for line in page.splitlines() if line.startswith("| id |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert columns[:5] == ["id", "status", "measured", "expected", "tolerance"]
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert rows
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert all(len(cell) <= generate.VALUE_CELL + 2 for cell in cells[2:5]), row[:120]


def test_api_index_gives_each_module_a_one_line_summary():
    """The API index was a bare list of about 100 module names: each now comes with its docstring's first
    sentence, one line, with the markup a one-line summary cannot close escaped."""
    import importlib
    import inspect

    generate = _generate()
    index = generate.api_pages()["index"]
    rows = [line for line in index.splitlines() if line.startswith("- :doc:`")]
    modules = [line.split("`")[1] for line in rows]
    assert len(rows) > 50 and len(set(modules)) == len(modules)
    for line, module in zip(rows, modules):
        text = line.split(" -- ", 1)[1]
        first = (inspect.getdoc(importlib.import_module(module)) or "").split()[:2]
        assert text == "(no docstring)" or text.startswith(" ".join(first)[:8].replace("*", "\\*")), (module, text)
        assert text.count("``") % 2 == 0, line
    assert generate.summary("theory.expression_parser").endswith('``"exp(beta*s) + c*s**3"``.')  # literal kept
