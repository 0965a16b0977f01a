"""numerics.longcontext: the simplex reduction, the transition, finite d, the flow, the shared root finder."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from numerics.common.errors import InputError
from numerics.longcontext import almost_simplex, flow, simplex, unit_mass


# -- the shared root ----------------------------------------------------------------------------------------------
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(2, 400), mass=st.floats(0.05, 0.9))
def test_unit_mass_root_solves_its_equation(seed, m, mass):
    g = np.random.default_rng(seed).exponential(size=(m, 3)) + 1e-3
    b = unit_mass.unit_mass_beta(g, mass=mass * m)
    assert np.allclose(np.exp(-b[None, :] * g).sum(axis=0), mass * m, rtol=1e-10)


def test_unit_mass_root_of_equal_gaps_is_log_m_over_gap():
    assert unit_mass.unit_mass_beta(np.full(99, 0.5)) == pytest.approx(math.log(99) / 0.5, rel=1e-14)


def test_unit_mass_refuses_ties_and_unreachable_targets():
    with pytest.raises(InputError, match="zero gap"):
        unit_mass.unit_mass_beta(np.array([0.0, 1.0, 2.0]))
    with pytest.raises(InputError, match="target mass"):
        unit_mass.unit_mass_beta(np.array([1.0, 2.0]), mass=2.0)


def test_logsumexp_rows_matches_scipy(rng):
    from scipy.special import logsumexp

    x = rng.normal(size=(7, 50)) * 300
    x[2] = -np.inf
    assert np.allclose(unit_mass.logsumexp_rows(x, axis=1)[[0, 1, 3]], logsumexp(x, axis=1)[[0, 1, 3]], rtol=1e-14)
    assert unit_mass.logsumexp_rows(x, axis=1)[2] == -np.inf


# -- the reduction ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [3, 40, 257])
def test_particle_layer_is_the_reduction(rng, n):
    Y = simplex.simplex_tokens(n, 0.4, d=n + 2, rng=rng)
    for alpha, q in ((0.0, 1.0), (0.5, 3.0)):
        for gamma in (0.5, 1 / 0.6, 4.0):
            out = simplex.particle_layer(math.sqrt(q) * Y, gamma * math.log(n), alpha)
            q_out, rho_out, dev = simplex.gram_summary(out)
            red = simplex.simplex_layer(n, gamma, 0.4, alpha, q)
            assert q_out == pytest.approx(float(red.q_out), rel=1e-12)
            assert rho_out == pytest.approx(float(red.rho_out), abs=1e-12)
            assert dev < 1e-12  # the output is again a simplex


def test_planted_self_weight_error_is_caught_by_the_particle_layer(rng, monkeypatch):
    """n others instead of n - 1 in the self weight: the particle layer disagrees at small n."""
    n = 5
    Y = simplex.simplex_tokens(n, 0.4, rng=rng)
    out = simplex.particle_layer(Y, 2.0 * math.log(n), 0.0)
    monkeypatch.setattr(simplex, "self_weight", lambda n_, g, r: 1 / (1 + np.asarray(n_, float)
                                                                       * np.asarray(n_, float) ** (-g * (1 - r))))
    red = simplex.simplex_layer(n, 2.0, 0.4)
    assert abs(simplex.gram_summary(out)[1] - float(red.rho_out)) > 1e-3


def test_reduction_is_overflow_safe_at_huge_n():
    for n in (1e12, 1e100, 1e300):
        L = simplex.simplex_layer(n, np.array([0.1, 2.0, 50.0]), 0.5, 1.0, 2.0)
        assert np.all(np.isfinite(L.p)) and np.all(np.isfinite(L.rho_out)) and np.all(np.isfinite(L.q_out))


def test_transition_midpoint_and_width_closed_forms():
    rows = simplex.transition_table([10.0, 1e3, 1e8], 0.25)
    for r in rows:
        assert r["gamma_half"] == pytest.approx(math.log(r["n"] - 1) / (0.75 * math.log(r["n"])), rel=1e-13)
        assert r["width_p"] == pytest.approx(2 * math.log(9) / (0.75 * math.log(r["n"])), rel=1e-10)


def test_width_fit_recovers_the_exponent():
    fit = simplex.width_scaling_fit(simplex.transition_table([1e2, 1e4, 1e8, 1e16], 0.5))
    assert fit["slope"] == pytest.approx(-1.0, abs=1e-12)


@pytest.mark.parametrize("bad", [dict(rho=1.0), dict(rho=-0.2), dict(rho=0.5, alpha=-1), dict(rho=0.5, q=0.0),
                                 dict(rho=0.5, gamma=0.0), dict(rho=0.5, gamma=-2.0)])
def test_bad_parameters_are_one_line_errors(bad):
    with pytest.raises(InputError):
        simplex.check_parameters(**{"gamma": 1.0, **bad})


# -- finite d ------------------------------------------------------------------------------------------------------
def test_almost_simplex_does_not_depend_on_the_grouping_of_queries(monkeypatch):
    a = almost_simplex.crossing_gammas(300, 8, 0.3, queries=5, configurations=2, seed=4)
    monkeypatch.setattr(almost_simplex, "MEMORY_BYTES", 8 * 300 * 2)  # groups of two queries
    b = almost_simplex.crossing_gammas(300, 8, 0.3, queries=5, configurations=2, seed=4)
    for level in almost_simplex.LEVELS:  # the same keys; matrix products of other widths round differently
        assert np.allclose(a["gammas"][level], b["gammas"][level], rtol=1e-12, atol=0)


def test_almost_simplex_tends_to_the_simplex_as_d_grows():
    s = almost_simplex.summarise(almost_simplex.crossing_gammas(2000, 512, 0.5, 4, 16, seed=1))
    assert abs(s["gamma_half"] - s["simplex_gamma_half"]) < 0.05
    assert abs(s["gamma_half"] - s["annealed_gamma_half"]) < K_SE_SMALL * max(s["standard_error"], 1e-4)


K_SE_SMALL = 5.0


def test_annealed_moment_against_mpmath():
    import mpmath as mp

    from theory.longcontext import sphere_moment_mp

    for m in (3, 10, 63):
        for b in (0.01, 2.0, 40.0):
            ref = float(mp.log(sphere_moment_mp(m, b)) - b)
            assert almost_simplex.log_moment_shifted(m, b) == pytest.approx(ref, abs=1e-12)


def test_annealed_gamma_has_the_large_d_shift():
    for n in (1e3, 1e5):
        g = almost_simplex.annealed_gamma(n, 2001, 0.5) * 0.5  # gamma (1 - rho)
        assert g == pytest.approx(math.log(n - 1) / math.log(n) * (1 + math.log(n) / (2 * 2000)), rel=2e-3)


# -- the flow ------------------------------------------------------------------------------------------------------
def test_flow_speed_limits_and_particles():
    for rho in (0.2, 0.6):
        gc = 1 / (1 - rho)
        assert float(flow.flow_speed(rho, 1e30, gc / 2)) == pytest.approx(2 * rho * (1 - rho), rel=1e-6)
        assert float(flow.flow_speed(rho, 1e30, gc)) == pytest.approx(rho * (1 - rho), rel=1e-12)
        assert float(flow.flow_speed(rho, 1e30, 2 * gc)) < 1e-25
    times = np.linspace(0, 1.0, 5)
    P = flow.particle_trajectory(12, 1.5, 0.3, times, dt=0.02)
    R = flow.reduced_trajectory(12, 1.5, 0.3, times)
    assert np.max(np.abs(P["mean"] - R)) < 1e-8 and np.max(P["spread"]) < 1e-12
    assert P["meta"]["beta"] == pytest.approx(1.5 * math.log(12), rel=1e-15)


def test_collapse_time_is_order_one_below_and_grows_above():
    below = [flow.collapse_time(n, 1.0, 0.5) for n in (1e2, 1e6)]
    above = [flow.collapse_time(n, 3.0, 0.5) for n in (1e2, 1e6)]
    # above: ~ n^{gamma (1 - rho) - 1} = n^{1/2} asymptotically (a factor 25 from 1e2 to 1e6 here, pre-asymptotic)
    assert max(below) < 1.0 and above[1] / above[0] > 10
