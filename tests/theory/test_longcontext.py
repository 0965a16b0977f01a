"""theory.longcontext: the simplex layer map, the critical gamma, the limits, the flow speeds, the sphere constants.

Each derived object is checked a second way (explicit small-n matrices, the spectral form, mpmath, a hand
computation), and the derivations are shown to fail on planted errors.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from theory import longcontext as lc
from theory import symbols as sym


@pytest.mark.parametrize("n", [2, 3, 5])
def test_simplex_layer_gram_is_proved_against_explicit_and_spectral_forms(n):
    assert lc.simplex_layer_derivation(n).verify().status == "proved"


def test_planted_error_in_the_gram_algebra_fails(monkeypatch):
    """A factor 2 missing in the cross term (a typical slip) makes the derivation fail."""
    def wrong(n=sym.n, p_=lc.p, rho_=lc.rho, r_=lc.r):
        e = (1 - p_) / (n - 1)
        u = p_ - e + r_
        yS = 1 + (n - 1) * rho_
        cross = u * e * yS + e**2 * n * yS
        return sp.expand(u**2 + cross), sp.expand(u**2 * rho_ + cross)

    monkeypatch.setattr(lc, "simplex_layer_gram", wrong)
    assert lc.simplex_layer_derivation(4).verify().status == "failed"


def test_critical_gamma_and_its_exponent():
    assert sp.simplify(lc.off_diagonal_mass_exponent() - (1 - lc.gamma * (1 - lc.rho))) == 0
    assert sp.simplify(lc.critical_gamma_expr() - 1 / (1 - lc.rho)) == 0
    assert lc.critical_off_diagonal_mass_limit() == 1
    assert lc.limit_self_weights() == {"subcritical": 0, "critical": sp.Rational(1, 2), "supercritical": 1}
    assert lc.critical_gamma(0.5) == 2.0 and lc.critical_gamma(0.0) == 1.0
    for bad in (-0.1, 1.0, 2.0):
        with pytest.raises(ValueError):
            lc.critical_gamma(bad)


def test_limits_without_residual_are_one_four_rho_over_one_plus_three_rho_and_rho():
    lims = {k: sp.simplify(v.subs(lc.r, 0)) for k, v in lc.limit_inner_products_expr().items()}
    assert sp.simplify(lims["subcritical"] - 1) == 0
    assert sp.simplify(lims["critical"] - 4 * lc.rho / (1 + 3 * lc.rho)) == 0
    assert sp.simplify(lims["supercritical"] - lc.rho) == 0


_LIMITS = {k: sp.lambdify((lc.rho, lc.r), v, "math") for k, v in lc.limit_inner_products_expr().items()}


@given(rho=st.floats(1e-3, 0.99), alpha=st.floats(0.0, 3.0), q=st.floats(0.1, 4.0))
def test_closed_form_limits_equal_the_sympy_limits(rho, alpha, q):
    closed = lc.limit_inner_products(rho, alpha, q)
    for regime, f in _LIMITS.items():
        value = f(rho, alpha * math.sqrt(q))
        assert closed[regime] == pytest.approx(value, rel=1e-12, abs=1e-15)


def test_rho_zero_without_residual_has_no_subcritical_limit():
    """Orthogonal tokens (rho = 0, no residual): rho' -> 1 for gamma < 1/2 but -> 0 for 1/2 < gamma < 1 (p_n^2
    against 1/n), so the closed form returns nan there instead of a wrong number."""
    assert math.isnan(lc.limit_inner_products(0.0)["subcritical"])
    assert float(lc.simplex_layer_mp(10**40, 0.25, 0.0)[2]) == pytest.approx(1.0, abs=1e-9)
    assert float(lc.simplex_layer_mp(10**40, 0.75, 0.0)[2]) == pytest.approx(0.0, abs=1e-9)


def test_mpmath_layer_approaches_the_limits_at_the_predicted_rates():
    """The distance to the limit is O(p_n^2) = n^{-2 (1 - gamma (1 - rho))} below gamma_c (no residual),
    O(1/n) at it and O(1 - p_n) = n^{-(gamma (1 - rho) - 1)} above."""
    rho = 0.5
    with mp.workdps(60):
        lim = {"subcritical": mp.mpf(1), "critical": mp.mpf(4) * rho / (1 + 3 * mp.mpf(rho)),
               "supercritical": mp.mpf(rho)}
        for regime, g, rate in (("subcritical", 1.5, 0.5), ("critical", 2.0, 1.0), ("supercritical", 3.0, 0.5)):
            e1 = abs(lc.simplex_layer_mp(mp.mpf(10) ** 10, g, rho, dps=60)[2] - lim[regime])
            e2 = abs(lc.simplex_layer_mp(mp.mpf(10) ** 20, g, rho, dps=60)[2] - lim[regime])
            assert float(mp.log10(e1 / e2)) == pytest.approx(10 * rate, abs=0.05)


def test_generated_map_agrees_with_mpmath(rng):
    f = lc.simplex_map_function()
    for _ in range(25):
        n = float(10 ** rng.uniform(0.5, 12))
        g, rho, alpha, q = rng.uniform(0.1, 5), rng.uniform(0, 0.99), rng.uniform(0, 2), rng.uniform(0.2, 3)
        p_mp, q_mp, rho_mp = lc.simplex_layer_mp(n, g, rho, alpha, q)
        q_gen, rho_gen = f(n, float(p_mp), rho, alpha * math.sqrt(q))
        assert q_gen == pytest.approx(float(q_mp), rel=1e-12)
        assert rho_gen == pytest.approx(float(rho_mp), rel=1e-12, abs=1e-14)


def test_flow_speed_limits():
    lims = lc.flow_speed_limits()
    assert sp.simplify(lims["subcritical"] - 2 * lc.rho * (1 - lc.rho)) == 0
    assert sp.simplify(lims["critical"] - lc.rho * (1 - lc.rho)) == 0
    assert lims["supercritical"] == 0


@pytest.mark.parametrize("d", [2, 3, 4, 5, 8, 9])
def test_poisson_constant_symbolic_equals_closed_form_and_a_direct_limit(d):
    assert float(lc.poisson_constant(d)) == pytest.approx(lc.poisson_constant_value(d), rel=1e-14)
    # third route: P(1 - t <= x) / x^{(d-1)/2} at small x by mpmath quadrature of the density
    with mp.workdps(40):
        c = mp.gamma(mp.mpf(d) / 2) / (mp.sqrt(mp.pi) * mp.gamma(mp.mpf(d - 1) / 2))
        # u = 1 - t = x v; the density is c (u (2 - u))^{(d-3)/2}; the power x^{(d-1)/2} is taken out of the
        # integral (mpmath's error control is absolute: an integrand of size 1e-50 would end it early)
        x = mp.mpf("1e-20")
        ratio = c * mp.quad(lambda v: (v * (2 - x * v)) ** (mp.mpf(d - 3) / 2), [0, 1])
        assert float(ratio) == pytest.approx(lc.poisson_constant_value(d), rel=1e-12)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_sphere_moment_and_mean_resultant_against_quadrature(d):
    with mp.workdps(30):
        for beta in (0.25, 4.0, 25.0):
            M = mp.mpf(str(sp.N(lc.sphere_moment(d).subs(sym.beta, sp.Rational(beta)), 30)))
            # the quadrature's endpoint singularities (d = 2) limit it to about 1e-17 at 30 digits
            assert abs(M / lc.sphere_moment_mp(d, beta) - 1) < mp.mpf("1e-15")
    f = sp.lambdify(sym.beta, lc.mean_resultant(d), "mpmath")
    with mp.workdps(30):
        assert abs(f(mp.mpf(3)) / lc.mean_resultant_mp(d, 3.0) - 1) < mp.mpf("1e-25")
    with mp.workdps(30):  # d/dbeta log M by finite differences of the quadrature
        h = mp.mpf("1e-8")
        num = (mp.log(lc.sphere_moment_mp(d, 3 + h)) - mp.log(lc.sphere_moment_mp(d, 3 - h))) / (2 * h)
        assert abs(num / lc.mean_resultant_mp(d, 3.0) - 1) < mp.mpf("1e-12")


def test_mean_resultant_derivation_is_proved_at_d3():
    assert lc.mean_resultant_derivation(3).verify().status == "proved"


def test_planted_wrong_bessel_order_is_caught_by_the_quadrature_route():
    """I_{d/2+1} in place of I_{d/2} (a wrong order) differs from the derivative of log M by quadrature."""
    wrong = sp.besseli(sp.Rational(5, 2), sym.beta) / sp.besseli(sp.Rational(1, 2), sym.beta)
    assert abs(float(wrong.subs(sym.beta, 3)) / float(lc.mean_resultant_mp(3, 3.0)) - 1) > 0.1
    right = sp.lambdify(sym.beta, lc.mean_resultant(3), "mpmath")
    assert float(right(3)) == pytest.approx(float(lc.mean_resultant_mp(3, 3.0)), rel=1e-14)


def test_accumulation_scale_laws():
    laws = lc.accumulation_scale_laws()
    nn = sp.Symbol("n", positive=True)
    assert sp.simplify(laws["flat-edge"] - sp.log(nn) ** 2) == 0
    assert laws["simplex"] == sp.log(nn) / (1 - lc.rho)
    # the sphere law at d = 3 (m = 1, kappa = 1/2): n / 2
    m, kap = sp.Symbol("m", positive=True), sp.Symbol("kappa", positive=True)
    assert sp.simplify(laws["sphere"].subs({m: 1, kap: sp.Rational(1, 2)}) - nn / 2) == 0


def test_self_weight_matches_the_expit_form():
    p = lc.self_weight(sp.Integer(100), sp.Float(3.0), sp.Rational(1, 2))
    assert float(p) == pytest.approx(1 / (1 + 99 * math.exp(-1.5)), rel=1e-15)
    assert np.isfinite(float(lc.simplex_layer_mp(10**300, 3.0, 0.5)[2]))
