"""Attention plus an affine feed-forward layer on Gaussians (numerics.gaussian.ffn, theory.gaussian ffn_*)."""
import numpy as np
import pytest

from numerics.common.errors import InputError


def test_gaussian_ffn_claim_passes():
    from numerics.gaussian.claims_ffn import check_gaussian_ffn

    r = check_gaussian_ffn()
    assert r.status == "passed", r.measured["flags"]


def test_scalar_closed_form_against_the_ode():
    from numerics.gaussian.ffn import solve_ffn_moments

    w, v, a, s0, t = 0.7, 1.0, -0.4, 2.0, 1.3
    pstar = -v * a / w
    exact = 1 / (pstar + (1 / s0 - pstar) * np.exp(-2 * w * t))
    sol = solve_ffn_moments([[a]], [[v]], [[w]], [0.3], [0.1], [[s0]], t)
    assert sol.covs[-1][0, 0] == pytest.approx(exact, rel=1e-10)


def test_regime_needs_an_expanding_feed_forward():
    from numerics.gaussian.ffn import ffn_regime

    A = np.array([[-1.0, 0.0], [0.0, -1.0]])
    assert ffn_regime(A, 1.0, np.eye(2)).kind == "converges"
    assert ffn_regime(A, 1.0, -np.eye(2)).kind == "depends on Sigma_0"
    assert ffn_regime(-A, 1.0, np.eye(2)).kind == "blow-up"


def test_bad_shapes():
    from numerics.gaussian.ffn import ffn_regime, solve_ffn_moments

    with pytest.raises(InputError):
        ffn_regime(np.eye(3), 1.0, np.eye(2))
    with pytest.raises(InputError):
        solve_ffn_moments(np.eye(2), np.eye(2), np.full((2, 2), np.nan), [0, 0], [0, 0], np.eye(2), 1.0)
