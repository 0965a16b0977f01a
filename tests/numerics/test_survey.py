"""The survey area: sa as mean shift with its time factor (claim survey.mean-shift), and the statements table
(proofs_notes/survey-statements.md) links only registered claims (or the long-context stream's ids)."""
import re
from pathlib import Path

from numerics.common.verification import all_claims
from numerics.survey import claims as sc
from numerics.survey import meanshift as ms

ROOT = Path(__file__).resolve().parents[2]


def test_mean_shift_claim_passes_and_fails_without_the_factor(monkeypatch):
    assert sc.check_mean_shift().status == "passed"
    real = ms.mean_shift_gradient
    # the statement without its time factor: v = grad log f (planted by scaling the gradient with 1/beta)
    monkeypatch.setattr(sc, "mean_shift_gradient", lambda X, beta: real(X, beta) / beta)
    assert sc.check_mean_shift().status == "failed"


def test_statements_table_links_registered_claims():
    text = (ROOT / "proofs_notes" / "survey-statements.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| statement")]
    rows = [r for r in rows if not set(r) <= set("|- ")]
    assert len(rows) >= 10
    registered = {c.id for c in all_claims()}
    for row in rows:
        ids = re.findall(r"`([a-z]+\.[a-z0-9\-]+)`", row)
        assert ids, row
        for cid in ids:
            assert cid in registered or (cid.startswith("longcontext.") and "longcontext stream" in row), cid
