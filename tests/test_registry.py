"""Every registered claim has a proofs_notes/ note, a source and a unique id; the registry is not empty."""
from pathlib import Path

from numerics.common.verification import all_claims

ROOT = Path(__file__).resolve().parents[1]


def test_registry_not_empty():
    assert len(all_claims()) > 0


def test_every_claim_has_a_note_and_source():
    for c in all_claims():
        assert c.source.strip(), c.id
        note = ROOT / "proofs_notes" / c.note
        assert note.is_file(), f"{c.id}: missing note {note}"
        assert c.id in note.read_text(), f"{c.id}: note {c.note} does not mention its claim id"
