"""theory.noise: derivations verify, closed forms agree with mpmath, and checks fail on planted errors."""
import math

import mpmath as mp
import pytest
import sympy as sp

from theory import noise as N
from theory.meanfield import growth_rate


@pytest.mark.parametrize("d", [2, 3, 5])
def test_derivations_verify(d):
    for deriv in (N.ito_correction_derivation(d), N.landau_derivation(d), N.zonal_taylor_derivation(d)):
        assert deriv.verify().ok, deriv.title


@pytest.mark.parametrize("model,d", [("usa", 2), ("sa", 2)])
def test_linear_stability_derivation(model, d):
    assert N.linear_stability_derivation(model, d).verify().ok


def test_free_energy_derivation():
    assert N.free_energy_derivation().verify().ok


def test_sphere_moments_closed_form():
    for d in (2, 3, 4, 7):
        for p in (2, 4, 6):
            closed = sp.gamma(sp.Rational(d, 2)) * sp.gamma(sp.Rational(p + 1, 2)) / (
                sp.sqrt(sp.pi) * sp.gamma(sp.Rational(p + d, 2)))
            assert sp.simplify(N.sphere_moment(d, p) - closed) == 0
            if d > 2:  # independent route: quadrature of t^p (1 - t^2)^{(d-3)/2}
                w = lambda t: (1 - t * t) ** (mp.mpf(d - 3) / 2)  # noqa: E731
                quad = mp.quad(lambda t: t ** p * w(t), [-1, 1]) / mp.quad(w, [-1, 1])
                assert float(quad) == pytest.approx(float(closed), rel=1e-12)


@pytest.mark.parametrize("d", [2, 3, 4])
@pytest.mark.parametrize("beta", [0.0, 0.7, 3.0, -2.0])
def test_critical_noise_is_degree_one(d, beta):
    Dc, l = N.critical_noise("usa", d, beta)
    assert l == 1
    assert Dc == pytest.approx(float(growth_rate("usa", d, 1, beta)) / (d - 1), rel=1e-14)
    if beta > 0:  # closed form Gamma(d/2)(2/beta)^{d/2-1} I_{d/2}(beta)/beta
        closed = math.gamma(d / 2) * (2 / beta) ** (d / 2 - 1) * float(mp.besseli(d / 2, beta)) / beta
        assert Dc == pytest.approx(closed, rel=1e-12)
    # just below D_c degree 1 is the only unstable degree
    assert N.first_unstable_degree("usa", d, beta, 0.99 * Dc) == 1
    assert N.first_unstable_degree("usa", d, beta, 1.01 * Dc) is None


def test_beta_zero_threshold_is_one_over_d_and_kuramoto():
    for d in (2, 3, 6):
        assert N.critical_noise("usa", d, 0.0)[0] == pytest.approx(1 / d)
        assert N.critical_noise("sa", d, 0.0)[0] == pytest.approx(1 / d)
    # K_c = 2D with coupling K = 1; r -> 0 at D = 1/2, and the branch slope r^2 = 4 (1/2 - D)
    assert N.kuramoto_order_parameter(0.5) == 0.0
    D = 0.5 - 1e-5
    assert N.kuramoto_order_parameter(D) ** 2 / (0.5 - D) == pytest.approx(4.0, rel=1e-3)
    assert N.bifurcation(2, 0.0).slope == pytest.approx(4.0)


def test_von_mises_matches_kuramoto_on_circle():
    for D in (0.1, 0.3, 0.45):
        assert N.von_mises_order_parameter(2, D) == pytest.approx(N.kuramoto_order_parameter(D), rel=1e-12)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_landau_slope_matches_von_mises_series(d):
    # beta = 0: r = A_d(r/D) expanded: A_d(k) = k/d - k^3/(d^2 (d+2)) + ..., so r^2 ~ d^3 (d+2)... slope d + 2
    assert N.bifurcation(d, 0.0).slope == pytest.approx(d + 2)
    D = 1 / d - 1e-6
    assert N.von_mises_order_parameter(d, D) ** 2 / (1 / d - D) == pytest.approx(d + 2, rel=1e-3)


def test_discontinuity_threshold():
    for d in (2, 3, 5):
        b = N.discontinuity_threshold(d)
        assert float(N.bessel_ratio(d, b)) == pytest.approx(1 / d, abs=1e-12)
        assert N.bifurcation(d, 0.9 * b).continuous and not N.bifurcation(d, 1.1 * b).continuous


def test_planted_wrong_landau_moment_fails():
    """Planting <x_1^4> = 1/(d(d+2)) (factor 3 dropped) breaks the closed form of the quartic coefficient."""
    orig = N.sphere_moment
    try:
        N.sphere_moment = lambda d, p: sp.Rational(1, d) if p == 2 else sp.Rational(1, d * (d + 2))
        assert not N.landau_derivation(3).verify().ok
    finally:
        N.sphere_moment = orig


def test_planted_missing_curvature_correction_fails():
    """Without the -(d-2) D h / 3 correction the geodesic step is not weak order 2 (the derivation fails)."""
    assert N.zonal_taylor_derivation(3).verify().ok
    D, h = N.D, sp.Symbol("h", positive=True)
    a_b = N.zonal_taylor_derivation(3)
    # the last entry is the O(h^2) mismatch; recompute it without the correction
    kap = sp.Symbol("kappa", positive=True)
    d = 3
    a = -kap / (2 * (d - 1))
    b = kap * (kap - sp.Rational(2 * (d - 2), 3)) / (8 * (d - 1) * (d + 1))
    Es, Es2 = 2 * (d - 1) * D * h, 4 * (d - 1) * (d + 1) * D ** 2 * h ** 2
    mismatch = sp.expand(1 + a * Es + b * Es2 - (1 - D * kap * h + D ** 2 * kap ** 2 * h ** 2 / 2))
    assert sp.simplify(mismatch.coeff(h, 2)) != 0
    assert a_b.lhs[-1] == 0


def test_coupling_keeps_its_precision_when_called_from_double_precision():
    """coupling(d, l, beta, dps) must not round its quotient to the caller's precision (it did: relative error
    -5.1e-17 at d = 3, l = 1, beta = 3 with dps = 40, found by the certified stream)."""
    import mpmath as mp

    from theory.noise import coupling, growth_rate, laplacian_eigenvalue

    # the reference is the quotient of the two factors taken here at 60 digits, not coupling() itself: a coupling
    # that rounds its quotient to a fixed precision would agree with itself at any dps (mutant
    # noise-coupling-precision survived the earlier self-comparison)
    with mp.workdps(60):
        reference = growth_rate("usa", 3, 1, 3, dps=60) / laplacian_eigenvalue(1, 3)
    for dps, digits in ((40, 35), (50, 45)):
        value = coupling(3, 1, 3, dps=dps)     # called at the default 15 digits
        with mp.workdps(60):
            assert abs(value / reference - 1) < mp.mpf(10) ** -digits, (dps, value)
