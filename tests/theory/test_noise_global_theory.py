"""theory.noise_global: the conversion K = 1/(2D), the Landau coefficients of every degree, Doi-Onsager, the
first-order noise in mpmath; theory.noise.bifurcation at beta* (it used to divide by zero)."""
import math

import mpmath as mp
import pytest
import sympy as sp

import theory.noise as N
import theory.noise_global as G


@pytest.mark.parametrize("d", [2, 4])
def test_conversion_identity_is_proved(d):
    assert G.coupling_conversion_derivation(d).verify().status == "proved"


@pytest.mark.slow
@pytest.mark.parametrize("d", [3, 5])
def test_conversion_identity_is_proved_for_odd_d(d):
    assert G.coupling_conversion_derivation(d).verify().status == "proved"


def test_conversion_fails_with_a_planted_factor_two(monkeypatch):
    """K_# with 2^{d/2-1} in place of 2^{d/2} (a dropped factor 2) is not 1/(2 D_c)."""
    real = G.mun_rosenzweig_threshold_expr
    monkeypatch.setattr(G, "mun_rosenzweig_threshold_expr", lambda d, beta=sp.Symbol("beta"): 2 * real(d, beta))
    assert not G.coupling_conversion_derivation(2).verify().ok


def test_coupling_of_noise():
    assert G.coupling_of_noise(0.25) == 2.0
    assert G.coupling_of_noise(sp.Rational(1, 3)) == sp.Rational(3, 2)


@pytest.mark.parametrize("p", [0, 2, 4, 6])
def test_circle_moments_equal_the_integral(p):
    assert G._moment(2, p) == N.sphere_moment(2, p)


@pytest.mark.parametrize("d,l", [(2, 1), (2, 2), (3, 1), (3, 2), (3, 3), (5, 2)])
def test_mode_landau_derivations_verify(d, l):
    assert G.mode_landau_derivation(d, l).verify().ok


def test_mode_landau_fails_with_a_wrong_slaved_denominator(monkeypatch):
    """(D + g_j) in place of (D - g_j) in the closed form: the elimination disagrees."""
    real = G.quartic_coefficient_expr

    def wrong(d, l):
        return real(d, l).subs({G._g(j): -G._g(j) for j in range(1, 2 * l + 1)})

    monkeypatch.setattr(G, "quartic_coefficient_expr", wrong)
    assert not G.mode_landau_derivation(3, 1).verify().ok


@pytest.mark.parametrize("d,beta", [(2, 1.0), (2, 3.0), (3, 0.5), (3, 3.0), (5, 2.0)])
def test_mode_one_bifurcation_is_theory_noise_bifurcation(d, beta):
    g = [0.0] + [float(N.coupling(d, l, beta)) for l in (1, 2)]
    mb, b = G.mode_bifurcation(d, 1, g), N.bifurcation(d, beta)
    assert mb.kind == ("continuous" if b.continuous else "discontinuous")
    assert mb.quartic == pytest.approx(b.quartic, rel=1e-12) and mb.slope == pytest.approx(b.slope, rel=1e-12)


def test_even_degrees_on_spheres_are_transcritical_and_the_circle_is_not():
    g = [0.0] + [float(N.coupling(3, l, 3.0)) for l in range(1, 7)]
    assert G.mode_bifurcation(3, 2, g).kind == "transcritical"
    assert G.mode_bifurcation(3, 3, g).kind in ("continuous", "discontinuous")
    assert G.mode_products(3, 2)["P3"] == sp.Rational(2, 35)          # <P_2^3> on S^2 (Gaunt)
    assert G.mode_products(2, 2)["P3"] == 0


@pytest.mark.parametrize("d", [2, 3, 5])
def test_bifurcation_at_beta_star_is_continuous(d):
    """At beta = beta*(d) exactly the quartic coefficient is 0: continuous (the papers' convention), slope
    infinite. Before the fix this raised ZeroDivisionError (and `phase` printed a traceback)."""
    b = N.bifurcation(d, N.discontinuity_threshold(d))
    assert b.continuous and b.quartic == 0.0 and math.isinf(b.slope)
    assert not N.bifurcation(d, N.discontinuity_threshold(d) * (1 + 1e-6)).continuous
    # a few units of the last place above beta* the rounded quartic coefficient is already negative: the point
    # still counts as beta* (the sign is not resolved in double precision)
    import numpy as np

    above = N.discontinuity_threshold(d)
    for _ in range(4):
        above = float(np.nextafter(above, np.inf))
    assert N.bifurcation(d, above).continuous


def test_linear_stability_threshold_is_the_old_critical_noise():
    assert N.linear_stability_threshold is N.critical_noise


def test_doi_onsager_derivation_and_coefficients():
    assert G.doi_onsager_derivation(kmax=4).verify().status == "proved"
    assert G.doi_onsager_coefficient(2) == 2 / (3 * sp.pi)
    assert G.doi_onsager_coefficient(3) == 0
    s = sp.Symbol("s")
    assert sp.simplify(G.doi_onsager_kernel(s).subs(s, sp.cos(sp.pi / 3)) + sp.sin(sp.pi / 3)) == 0


def test_doi_onsager_fails_with_a_planted_factor(monkeypatch):
    """A factor 2 lost in the Fourier coefficient (1/pi in place of 1/(2 pi)) moves K_# to 3 pi/8."""
    real = G.doi_onsager_coefficient
    monkeypatch.setattr(G, "doi_onsager_coefficient", lambda k: 2 * real(k))
    assert not G.doi_onsager_derivation(kmax=4).verify().ok


def test_first_order_noise_mp_solves_its_system():
    """At beta = 3 on the circle with L = 12: the mpmath point satisfies m = G(m), Delta F = 0 to 30 digits, and
    the equal-free-energy noise lies between D_c and the fold (the float value, within 1e-9: same L, other
    quadrature)."""
    from numerics.noise.branches import ZonalProblem, equal_free_energy, trace_branch
    from numerics.noise.zonal import couplings

    L, beta = 12, 3.0
    problem = ZonalProblem.build(2, couplings(2, beta, L))
    b = G.mode_bifurcation(2, 1, problem.g[:3])
    side = trace_branch(problem, 1, 0.9, b.threshold - 1e-6 / b.slope)
    p = equal_free_energy(side)[0]
    pt = G.first_order_noise_mp(2, [N.coupling(2, l, beta, dps=40) for l in range(1, L + 1)], p.D, p.moments,
                                dps=30, degree=5)
    assert pt.residual < mp.mpf(10) ** -28
    assert abs(float(pt.D) - p.D) <= 1e-9 * p.D
    assert b.threshold < float(pt.D)
