"""The long-context claims: the slow ones run here under ``pytest -m slow`` (minutes each; the default ones run
in ``attnflow verify`` and, where their notes quote them, in tests/test_notes_numbers.py)."""
from __future__ import annotations

import pytest

from numerics.longcontext import claims


@pytest.mark.slow
@pytest.mark.parametrize("check, allowed", [
    (claims.check_almost_simplex_scan, {"passed"}),
    (claims.check_fixed_query_regimes, {"passed"}),
    # the Gumbel-domain extrapolation may be "inconclusive" by design (corrections of order 1/log n)
    (claims.check_gap_counting_limits, {"passed", "inconclusive"}),
])
def test_slow_claims(check, allowed):
    result = check()
    assert result.status in allowed, result.details.get("problems", result.details)


def test_a_planted_reduction_error_fails_its_claim(monkeypatch):
    """The residual added to the directions instead of the tokens (q = 2 in the claim): the claim fails."""
    import numpy as np

    from numerics.longcontext import simplex

    original = simplex.particle_layer

    def wrong(X, beta, alpha=0.0):
        Y = np.asarray(X) / np.linalg.norm(X, axis=1, keepdims=True)
        return original(Y, beta, 0.0) + alpha * Y

    monkeypatch.setattr(simplex, "particle_layer", wrong)
    assert claims.check_simplex_reduction().status == "failed"
