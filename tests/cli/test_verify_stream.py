"""``attnflow verify`` streams each result as it finishes, keeps a heartbeat during long claims, and on Ctrl-C
prints the table of the finished claims and exits 130 (before: nothing printed for an interrupted run, no line
during a 15-minute claim)."""
import time

import pytest

from numerics.cli import main
from numerics.common import heartbeat, verification
from numerics.common.verification import CheckResult, Claim


def _claims(n, slow_at=None, interrupt_at=None):
    def make(k):
        def check():
            if k == interrupt_at:
                raise KeyboardInterrupt
            if k == slow_at:
                time.sleep(0.35)
            return CheckResult(f"fake.c{k}", "passed", 1e-16, 0.0, "<= 1e-12", {})
        return Claim(f"fake.c{k}", f"claim {k}", "source", "note.md", check, True)
    return [make(k) for k in range(n)]


def test_results_stream_and_an_interrupt_keeps_the_finished_ones(capsys, monkeypatch):
    monkeypatch.setattr(verification, "select_claims", lambda only=None, include_all=False: _claims(5, interrupt_at=3))
    code = main(["verify"])
    out, err = capsys.readouterr()
    assert code == 130
    assert [line.split()[2] for line in err.splitlines() if line.startswith("verify: [")] == \
        ["fake.c0", "fake.c1", "fake.c2"]
    assert all(f"fake.c{k}" in out for k in range(3)) and "fake.c3" not in out.split("not run")[0]
    assert "interrupted (Ctrl-C) after 3 of 5 claims" in out and "not run: fake.c3, fake.c4" in out


def test_a_long_claim_keeps_a_heartbeat(capsys, monkeypatch):
    monkeypatch.setattr(verification, "select_claims", lambda only=None, include_all=False: _claims(2, slow_at=1))
    monkeypatch.setattr(heartbeat, "HEARTBEAT_SECONDS", 0.1)
    assert main(["verify"]) == 0
    err = capsys.readouterr().err
    beats = [line for line in err.splitlines() if "still running fake.c1" in line]
    assert len(beats) >= 2 and all("elapsed" in line for line in beats)
    assert not any("still running fake.c0" in line for line in err.splitlines())


def test_interrupted_json_says_what_did_not_run(capsys, monkeypatch):
    import json

    monkeypatch.setattr(verification, "select_claims", lambda only=None, include_all=False: _claims(3, interrupt_at=0))
    assert main(["verify", "--json"]) == 130
    payload = json.loads(capsys.readouterr().out)
    assert payload["checks"] == [] and payload["interrupted"]["not_run"] == ["fake.c0", "fake.c1", "fake.c2"]


def test_a_multi_line_library_warning_is_reported_whole(capsys, monkeypatch):
    """SciPy's fsolve warning spans two lines; it used to be cut after 'as measured by the'."""
    import warnings

    def check():
        from scipy.optimize import fsolve

        fsolve(lambda x: x**2 + 1.0, 1.0)  # no real root: "The iteration is not making good progress, ..."
        return CheckResult("fake.w", "passed", 0.0, 0.0, "0", {})

    monkeypatch.setattr(verification, "select_claims",
                        lambda only=None, include_all=False: [Claim("fake.w", "w", "s", "n.md", check, True)])
    assert main(["verify"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(lines) == 1 and "as measured by the improvement from the last ten iterations." in lines[0], lines
    assert "RuntimeWarning" in lines[0]


@pytest.mark.parametrize("value", [",", "", " , "])
def test_an_empty_only_is_an_error_not_the_whole_run(capsys, value):
    """Found by the fuzz: --only ',' ran every default claim (a minute) instead of refusing."""
    from tests.cli.helpers import bad

    assert "--only names no claim id" in bad(capsys, ["verify", "--only", value])
