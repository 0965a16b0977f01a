"""The per-area mutation scores quoted in proofs_notes/verification-power.md are the ones generated from
benchmarks/mutation_results.json (``python benchmarks/mutation_run.py --areas``), never typed by hand, and every
survivor of the recorded run is listed there with its reason."""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import mutation_run  # noqa: E402

NOTE = ROOT / "proofs_notes" / "verification-power.md"
BLOCK = re.compile(r"<!-- mutation-areas: [^>]*-->\n(?P<table>.*?)\n<!-- end mutation-areas -->", re.S)


def _results() -> list[dict]:
    return json.loads((ROOT / "benchmarks" / "mutation_results.json").read_text())["results"]


def _quoted(text: str) -> str:
    (m,) = BLOCK.finditer(text)
    return m.group("table")


def test_note_quotes_the_generated_area_table():
    assert _quoted(NOTE.read_text()) == mutation_run.area_table(_results())


def test_every_survivor_is_listed_with_a_reason():
    text = NOTE.read_text()
    section = text[text.index("## Issue 43: the whole registry"):]
    lines = section.splitlines()
    for entry in mutation_run.survivor_list(_results()).splitlines():
        hits = [line for line in lines if line.startswith(entry)]
        assert hits and len(hits[0]) > len(entry) + 10, f"no reason given for: {entry}"


def test_a_changed_score_is_seen():
    """The comparison can fail: one mutant's verify outcome flipped changes the generated table."""
    results = _results()
    flipped = [dict(r) for r in results]
    flipped[0]["verify_killed"] = not flipped[0]["verify_killed"]
    assert mutation_run.area_table(flipped) != _quoted(NOTE.read_text())
