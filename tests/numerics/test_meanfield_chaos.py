"""Propagation of chaos for a distinguished token (numerics.meanfield.chaos; claim meanfield.propagation-of-chaos)."""
import numpy as np
import pytest

from numerics.meanfield import chaos as C


def test_slope_fit_recovers_a_power_law():
    ns = np.array([100, 200, 400, 800])
    fit = C.fit_slope(ns, 3.0 * ns ** -0.5, 0.01 * 3.0 * ns ** -0.5)
    assert fit.slope == pytest.approx(-0.5, abs=1e-12) and fit.stderr < 0.02


def test_population_sample_has_the_moments_of_rho0():
    theta = C.sample_circle_population(200_000, np.random.default_rng(0))
    # m_1 = int e^{-i theta} (1 + a cos theta)/(2 pi) d theta = a / 2; m_2 = 0
    assert np.mean(np.exp(-1j * theta)) == pytest.approx(C.AMPLITUDE / 2, abs=5e-3)
    assert abs(np.mean(np.exp(-2j * theta))) < 5e-3


def test_meanfield_moments_start_at_rho0():
    times = np.linspace(0.0, 0.5, 6)
    m = C.circle_meanfield_moments(1.0, times, 3)
    assert m[0] == pytest.approx([C.AMPLITUDE / 2, 0, 0], abs=1e-14)
    assert abs(m[-1, 0]) > abs(m[0, 0])   # sa at beta = 1 concentrates the density: |m_1| grows


def test_token_deviation_shrinks_like_inverse_square_root():
    """A small version of the claim: S^2, n = 64 and 512, 24 contexts; the ratio of deviations ~ 8^{-1/2}."""
    r = C.chaos_study("S2", ns=(64, 512), members=24, t_end=1.0, dt=0.1, seed=3)
    ratio = r["rows"][1]["token_mean"] / r["rows"][0]["token_mean"]
    assert 0.2 < ratio < 0.6     # 8^{-1/2} = 0.354; a floor (no convergence) gives ~1, n^{-1} gives 0.125


@pytest.mark.slow
def test_propagation_of_chaos_claim_passes():
    from numerics.meanfield.chaos_claims import check_propagation_of_chaos

    r = check_propagation_of_chaos()
    assert r.status == "passed", r.measured
