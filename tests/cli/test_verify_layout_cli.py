"""attnflow verify: a table that fits 100 columns, --list shows every claim (slow ones marked)."""
import numerics.common.verification as verification
from numerics.cli import main
from numerics.common.verification import CheckResult, Claim, ClaimRun, all_claims
from tests.cli.helpers import run_json

LONG = "a claim whose title is long enough to overflow any sensible column of a table " * 2


def _fake_claims():
    def check(i):
        return lambda: CheckResult(f"area.claim-with-a-rather-long-identifier-{i}", "inconclusive" if i else "passed",
                                   "measured value written out in many words", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
                                   "<= 1e-12 relative, after a very long explanation", {"why": "x" * 300})
    return [Claim(f"area.claim-with-a-rather-long-identifier-{i}", LONG, "Some Authors (arXiv 0000.00000), " * 3,
                  "proofs_notes/x.md", check(i), default=bool(i)) for i in range(3)]


def _run(monkeypatch, capsys, argv):
    claims = _fake_claims()
    monkeypatch.setattr(verification, "select_claims", lambda only, include_all=False: claims)
    monkeypatch.setattr(verification, "run_claim", lambda c: ClaimRun(c, c.check(), 0.5))
    code = main(argv)
    return code, capsys.readouterr().out


def test_verify_table_fits_100_columns(monkeypatch, capsys):
    code, out = _run(monkeypatch, capsys, ["verify"])
    assert code == 0
    widths = [len(line) for line in out.splitlines()]
    assert max(widths) <= 100, max(widths)
    assert "area.claim-with-a-rather-long-identifier-2" in out  # ids are never cut
    assert "INCONCLUSIVE" in out


def test_verify_verbose_has_full_detail(monkeypatch, capsys):
    _, out = _run(monkeypatch, capsys, ["verify", "--verbose"])
    assert "Some Authors" in out and "x" * 300 in out


def test_verify_list_fits_and_marks_slow(monkeypatch, capsys):
    _, out = _run(monkeypatch, capsys, ["verify", "--list"])
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "slow" in out


def test_verify_list_includes_the_slow_claims(capsys):
    payload = run_json(capsys, ["verify", "--list"])
    listed = {c["id"] for c in payload["claims"]}
    assert listed == {c.id for c in all_claims()}
    assert any(not c["default"] for c in payload["claims"])


def _reasoned_claims(statuses):
    reasons = {"inconclusive-a": {"reason": "the packaged decoder is missing: pip install something"},
               "inconclusive-b": {"reason": "the packaged decoder is missing: pip install something"},
               "inconclusive-c": {"counts": [1, 2]}}
    return [Claim(f"area.c{i}", "t", "s", "proofs_notes/x.md",
                  (lambda i=i, s=s: CheckResult(f"area.c{i}", s.split("-")[0], 1.0, 1.0, "=",
                                                reasons.get(s, {}))), default=True)
            for i, s in enumerate(statuses)]


def _run_statuses(monkeypatch, capsys, statuses, argv):
    claims = _reasoned_claims(statuses)
    monkeypatch.setattr(verification, "select_claims", lambda only, include_all=False: claims)
    monkeypatch.setattr(verification, "run_claim", lambda c: ClaimRun(c, c.check(), 0.5))
    code = main(argv)
    return code, capsys.readouterr().out


def test_verify_ends_with_one_line_of_inconclusive_reasons(monkeypatch, capsys):
    statuses = ["passed", "inconclusive-a", "inconclusive-b", "inconclusive-c"]
    code, out = _run_statuses(monkeypatch, capsys, statuses, ["verify"])
    assert code == 0      # without --strict an inconclusive claim does not fail the run ...
    last = out.rstrip("\n").splitlines()[-1]
    # ... but the last line says how many and why, grouped (the install hint after the colon left out)
    assert last == ("inconclusive: 3 (2 the packaged decoder is missing; 1 the data did not decide), not checked "
                    "(--strict fails on them)")
    code, out = _run_statuses(monkeypatch, capsys, ["passed"], ["verify"])
    assert code == 0 and out.rstrip("\n").splitlines()[-1] == "inconclusive: none"


def test_verify_strict_fails_on_inconclusive_and_json_agrees(monkeypatch, capsys):
    import json

    statuses = ["passed", "inconclusive-a", "inconclusive-c"]
    code, out = _run_statuses(monkeypatch, capsys, statuses, ["verify", "--strict"])
    assert code == 1 and out.rstrip("\n").splitlines()[-1].endswith("(--strict: exit 1)")
    code, out = _run_statuses(monkeypatch, capsys, statuses, ["verify", "--strict", "--json"])
    payload = json.loads(out)
    assert code == 1 and payload["inconclusive"]["count"] == payload["summary"]["inconclusive"] == 2
    assert payload["inconclusive"]["strict"] is True
    assert [(r["reason"], r["claims"]) for r in payload["inconclusive"]["reasons"]] == [
        ("the data did not decide", ["area.c2"]), ("the packaged decoder is missing", ["area.c1"])]
    # a failure keeps exit 1 (it says more than an inconclusive one); --strict with none inconclusive exits 0
    code, out = _run_statuses(monkeypatch, capsys, ["failed", "inconclusive-a"], ["verify", "--strict", "--json"])
    assert code == 1 and json.loads(out)["inconclusive"]["reasons"] == [
        {"reason": "the packaged decoder is missing", "count": 1, "claims": ["area.c1"]}]   # the failure is not one
    assert _run_statuses(monkeypatch, capsys, ["passed", "passed"], ["verify", "--strict"])[0] == 0
