"""Every planted mutant of benchmarks/mutants.py still applies (its pattern occurs exactly once), so a refactor
cannot silently turn the mutation run into a run of no-ops; the runner never touches the checkout."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from mutants import MUTANTS  # noqa: E402
from mutants import tests_for as area_tests  # noqa: E402 - not a test


def test_every_mutant_applies_once():
    ids = [m[0] for m in MUTANTS]
    assert len(ids) == len(set(ids)) and len(ids) >= 40
    for mid, path, old, new, what in MUTANTS:
        assert old != new and what, mid
        assert (ROOT / path).read_text().count(old) == 1, f"{mid}: pattern not found exactly once in {path}"
        assert all((ROOT / t).is_file() for t in area_tests(path)), mid


def test_apply_works_on_a_copy(tmp_path):
    import mutation_run

    mid, path, old, new, _ = MUTANTS[0]
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_text((ROOT / path).read_text())
    mutation_run.apply(tmp_path, MUTANTS[0])
    assert new in (tmp_path / path).read_text() and old in (ROOT / path).read_text()
