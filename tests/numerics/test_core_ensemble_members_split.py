"""Issue 44: the several-head member kernel's cases live in core.ensemble-members-heads (--all), so that the
default core.ensemble-members compiles only the one-head kernel on a first run, and keeps B = 70 (issue 43)."""
import pytest

from numerics.common.verification import all_claims, run_claim
from numerics.core.fused import numba_available

CLAIMS = {c.id: c for c in all_claims()}


def test_the_heads_claim_is_left_to_all_and_the_members_claim_is_default():
    assert CLAIMS["core.ensemble-members"].default
    assert not CLAIMS["core.ensemble-members-heads"].default


@pytest.mark.skipif(not numba_available(), reason="needs Numba")
def test_the_default_claim_runs_no_several_head_kernel_and_keeps_two_blocks_of_lanes():
    rows = run_claim(CLAIMS["core.ensemble-members"]).result.details["cases"]
    numba = [r for r in rows if r["backend"] == "numba"]
    assert numba and not any("heads" in r["case"] for r in numba)
    assert any(r["B"] == 70 for r in numba)  # a second, padded block of 64 lanes


@pytest.mark.skipif(not numba_available(), reason="needs Numba")
def test_the_heads_claim_passes_with_its_cases_and_the_past_the_gap_block():
    result = run_claim(CLAIMS["core.ensemble-members-heads"]).result
    assert result.status == "passed", result.measured
    rows = result.details["cases"]
    assert [r["B"] for r in rows] == [4, 2, 70] and all(r["backend"] == "numba" for r in rows)
    assert result.details["several_heads_past_the_gap"]["difference_over_bound"] <= 1.0
