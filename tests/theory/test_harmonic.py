"""theory.harmonic: counts, Funk-Hecke coefficients in the probability normalisation, the Gegenbauer expansion on
S^{d-1}, the exact tail and its majorant, the symbolic identities (each shown to fail on a planted error)."""
import mpmath as mp
import pytest
import sympy as sp

from theory import harmonic as th
from theory.meanfield import funk_hecke_quadrature


def test_counts():
    assert [th.harmonic_count(3, l) for l in range(5)] == [1, 3, 5, 7, 9]
    assert [th.total_harmonics(3, L) for L in range(5)] == [(L + 1) ** 2 for L in range(5)]
    for d in (4, 5, 6):
        for L in range(7):
            assert th.total_harmonics(d, L) == sum(th.harmonic_count(d, l) for l in range(L + 1))
    assert th.harmonic_count(4, 3) == 16  # (l+1)^2 on S^3


@pytest.mark.parametrize("d", [3, 4, 5])
def test_coefficients_are_the_funk_hecke_integrals_in_probability_normalisation(d):
    with mp.workdps(30):
        area = 2 * mp.pi ** (mp.mpf(d) / 2) / mp.gamma(mp.mpf(d) / 2)
        for l in range(5):
            quad = funk_hecke_quadrature(d, l, 2.3) / area
            assert abs(th.kernel_coefficient_mp(d, l, 2.3) - quad) < 1e-25 * abs(quad)
    # S^2: lambda_l = i_l, lambda_0 = sinh(beta)/beta; the sign rule for beta < 0
    with mp.workdps(30):
        b = mp.mpf(3) / 2
        assert abs(th.kernel_coefficient_mp(3, 0, b) - mp.sinh(b) / b) < 1e-25
        assert abs(th.kernel_coefficient_mp(3, 3, -b) + th.kernel_coefficient_mp(3, 3, b)) < 1e-25


@pytest.mark.parametrize("d", [3, 4, 5, 7])
def test_gegenbauer_expansion_of_the_kernel(d):
    """e^{beta t} = sum_l N(d, l) lambda_l P_l^{(d)}(t) at 30 digits (to the truncation at L = 45)."""
    with mp.workdps(30):
        for beta in (mp.mpf(7) / 10, mp.mpf(3), mp.mpf(-2)):
            for t in (-1, mp.mpf(-2) / 5, 0, mp.mpf(11) / 20, 1):
                assert abs(th.kernel_series_mp(d, beta, t, 45) - mp.exp(beta * t)) < 1e-20


def test_amos_bound_against_mpmath_ratios():
    with mp.workdps(30):
        for nu in (0.5, 1.5, 7.5, 20.5, 3.0):
            for x in (0.1, 1.0, 4.0, 30.0, 200.0):
                assert mp.besseli(nu + 1, x) / mp.besseli(nu, x) <= th.amos_ratio_bound_mp(nu, x)


@pytest.mark.parametrize("d", [3, 4])
def test_majorant_holds_and_is_tight(d):
    for beta in (0.5, 4.0, 9.0, -4.0):
        for L in (5, 12, 25):
            exact = th.tail_exact_mp(d, L, beta)
            bound = th.tail_bound_mp(d, L, beta)
            # tight once L is past |beta| (the geometric ratio is then small): 1.19 at (d, beta, L) = (4, 9, 5)
            assert exact <= bound <= (1.03 if L >= 12 else 1.25) * exact, (d, beta, L)


def test_exact_tail_is_the_kernel_minus_the_head_at_t_equal_one():
    with mp.workdps(40):
        head = mp.fsum((2 * l + 1) * th.kernel_coefficient_mp(3, l, 4, 40) for l in range(11))
        assert abs(th.tail_exact_mp(3, 10, 4) - (mp.exp(4) - head)) < 1e-25 * th.tail_exact_mp(3, 10, 4)


def test_practical_dimensions_quoted_in_the_docstring():
    rows = {r["d"]: r for r in th.practical_dimensions(beta=4, relative_tol=1e-10, dims=range(3, 7))}
    assert (rows[3]["degree"], rows[3]["harmonics"]) == (17, 324)
    assert (rows[4]["degree"], rows[4]["harmonics"]) == (18, 2470)
    assert rows[5]["harmonics"] == 13300 and rows[6]["harmonics"] == 76153


@pytest.mark.parametrize("l", [0, 1, 2, 3, 4])
def test_addition_theorem(l):
    assert th.addition_theorem_derivation(l).verify().status == "proved"


def test_addition_theorem_fails_with_a_wrong_normalisation(monkeypatch):
    """Planted: Y_11 without its sqrt2 (the complex-harmonic normalisation mixed in): the identity breaks."""
    original = th.solid_harmonic
    # a phase enters the products squared (any sign convention satisfies the theorem); a wrong normalisation does
    # not: plant the unnormalised cos harmonic of order 1 (a missing sqrt2)
    monkeypatch.setattr(th, "solid_harmonic", lambda l, m, x=(th.X1, th.X2, th.X3): original(l, m, x)
                        / (sp.sqrt(2) if m == 1 else 1))
    assert th.addition_theorem_derivation(2).verify().status == "failed"


@pytest.mark.parametrize("l", [0, 1, 2, 5])
def test_funk_hecke_series(l):
    assert th.kernel_expansion_derivation(l, 9).verify().status == "proved"


def test_degree_powers_identity_and_its_failure(monkeypatch):
    import random

    from theory.derivation import rational_sphere_point

    rng = random.Random(3)
    pts = [rational_sphere_point(rng, 3) for _ in range(4)]
    assert th.energy_in_moments_derivation(pts, 3).verify().status == "proved"
    original = th.solid_harmonic
    monkeypatch.setattr(th, "solid_harmonic", lambda l, m, x=(th.X1, th.X2, th.X3): original(l, -m if m else 0, x)
                        if l == 2 else original(l, m, x))  # m <-> -m relabelled: still a basis, identity holds
    assert th.energy_in_moments_derivation(pts, 2).verify().status == "proved"
    monkeypatch.setattr(th, "solid_harmonic", lambda l, m, x=(th.X1, th.X2, th.X3): original(l, m, x)
                        * (sp.Rational(11, 10) if (l, m) == (2, 0) else 1))  # a wrong normalisation
    assert th.energy_in_moments_derivation(pts, 2).verify().status == "failed"
