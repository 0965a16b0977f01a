"""The numbers quoted in proofs_notes/ agree with the code (benchmarks/notes_numbers.py).

- every marked number agrees with the cached claim results (proofs_notes/measured.json) within the noise the
  note states;
- the fast quoted claims (cached run under 8 s, default claims) are re-run now and must agree with the cache
  within the same noise, so a change of the code that moves a quoted number fails here until the notes are
  regenerated (``python benchmarks/notes_numbers.py --run``);
- the check itself can fail: a planted wrong number is reported.
"""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import notes_numbers as nn  # noqa: E402

CACHE = json.loads(nn.CACHE.read_text()) if nn.CACHE.exists() else {}


def test_notes_quote_numbers():
    assert len(nn.quotes()) >= 8
    assert CACHE, "proofs_notes/measured.json missing: run python benchmarks/notes_numbers.py --run"


def test_notes_agree_with_cached_results():
    assert nn.disagreements(CACHE) == []


#: quoted default claims by their cached run time: under 3 s they are re-run in the default test run, 3-8 s in
#: the slow run (the default `attnflow verify` runs every default claim anyway; this test adds that the notes'
#: numbers still match, which the slow run checks for the longer ones)
QUOTED = sorted({q.claim_id for q in nn.quotes()
                 if q.claim_id in CACHE and CACHE[q.claim_id].get("default", True)
                 and CACHE[q.claim_id].get("seconds", 99) < 8.0})
FAST = [c for c in QUOTED if CACHE[c].get("seconds", 99) < 3.0]
LONGER = [c for c in QUOTED if c not in FAST]


def _reproduces_the_cache(cid):
    from numerics.common.verification import all_claims, run_claim

    (c,) = [c for c in all_claims() if c.id == cid]
    r = run_claim(c).result
    now = {"measured": r.measured, "details": json.loads(json.dumps(r.details, default=nn._default))}
    for q in nn.quotes():
        if q.claim_id == cid:
            current = nn.lookup(now, q.path)
            cached = nn.lookup(CACHE[cid], q.path)
            assert nn.agrees(cached, current, q.noise), (q, cached, current)


@pytest.mark.parametrize("cid", FAST)
def test_fast_quoted_claims_reproduce_the_cache(cid):
    _reproduces_the_cache(cid)


@pytest.mark.slow
@pytest.mark.parametrize("cid", LONGER)
def test_longer_quoted_claims_reproduce_the_cache(cid):
    _reproduces_the_cache(cid)


def test_a_wrong_quoted_number_is_reported(tmp_path):
    note = tmp_path / "x.md"
    cid = next(iter(CACHE))
    value = nn.lookup(CACHE[cid], "measured")
    wrong = value * 16 if value else 1.0
    note.write_text(f"measured <!-- measured: {cid} measured ~10 -->{wrong:.3g}<!-- end -->\n")
    assert len(nn.disagreements(CACHE, tmp_path)) == 1
    note.write_text(f"measured <!-- measured: {cid} measured ~10 -->{nn.fmt(value)}<!-- end -->\n")
    assert nn.disagreements(CACHE, tmp_path) == []


def test_lookup_reads_each_kind_of_path():
    """'measured', 'measured/KEY/INDEX' into a dict of measured values, 'details/...' and a bare details path
    (the 'measured/' form read the empty key '' before it was fixed)."""
    result = {"measured": {"rates": [0.25, 0.5]}, "details": {"rows": [{"x": 3.0}], "y": 4.0}}
    assert nn.lookup(result, "measured/rates/1") == 0.5
    assert nn.lookup(result, "details/rows/0/x") == 3.0
    assert nn.lookup(result, "y") == 4.0
    assert nn.lookup({"measured": 7.0, "details": {}}, "measured") == 7.0
