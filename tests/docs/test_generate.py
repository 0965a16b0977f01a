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
