"""theory.certified.tail and the tail widening of theory.certified.first_order: the rigorous bound on
sum_{l > L} g_l N_l against the exact Bessel values (mpmath), and the widened equations against a direct mpmath
evaluation for explicit tails psi (quadrature for F, central differences for its Jacobian)."""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import mpmath as mp
import pytest
from flint import arb, fmpq

import theory.certified.first_order as fo
from theory.certified.balls import CertificateRefused, FloatingPointRefused, exact, working_precision
from theory.certified.tail import coupling_upper_bound, tail_weight_bound
from theory.noise_global import harmonic_dimensions, zonal_polynomial

D3, BETA = 3, 3
#: central differences at h = 1e-15 with 40 digits: rounding 1e-40/1e-15 = 1e-25, truncation h^2 ~ 1e-30
FD_SLACK = "1e-22"


def _g(d: int, beta, l: int) -> mp.mpf:  # noqa: E741 - degree
    """g_l = Gamma(d/2) (2/beta)^nu I_{l+nu}(beta)/beta straight from mpmath's Bessel function."""
    nu = mp.mpf(d) / 2 - 1
    b = mp.mpf(beta)
    return mp.gamma(mp.mpf(d) / 2) * (2 / b) ** nu * mp.besseli(l + nu, b) / b


def _contains(ball: arb, x: mp.mpf, slack: str = "0") -> bool:
    """x (mpmath, 40 digits) inside the ball, up to x's own rounding (1e-38 relative) and ``slack`` (absolute:
    a central difference at h = 1e-15 carries ~1e-25 of rounding)."""
    with working_precision(192):
        y = arb(mp.nstr(x, 45))
        slack = abs(y) * arb("1e-38") + arb(slack)
        return bool(ball.lower() <= y + slack and y - slack <= ball.upper())


@pytest.mark.parametrize("d", [3, 5])
def test_coupling_bound_is_above_the_exact_coupling_and_tight_for_large_l(d):
    with mp.workdps(40), working_precision(128):
        for l in (1, 2, 5, 10, 20, 40, 60):  # noqa: E741
            exact, bound = _g(d, BETA, l), coupling_upper_bound(d, "3", l)
            assert _g(d, BETA, l) <= mp.mpf(bound.upper().str(45, radius=False)), (d, l)
            if l >= 20:  # exp(beta^2/(4 (l + nu + 1))) -> 1 and the series' first term dominates
                assert mp.mpf(bound.mid().str(45, radius=False)) / exact < 1.12, (d, l)


@pytest.mark.parametrize("d,L", [(3, 4), (3, 6), (3, 16), (5, 8), (7, 12)])
def test_tail_bound_covers_the_whole_tail_and_is_tight(d, L):
    """S_L >= sum_{l=L+1}^{L+120} w_l (the rest is below 1e-100 here), and S_L within a factor 1.5 of it."""
    with mp.workdps(40), working_precision(128):
        tb = tail_weight_bound(d, "3", L)
        N = harmonic_dimensions(d, L + 120)
        exact = mp.fsum(_g(d, BETA, l) * N[l - 1] for l in range(L + 1, L + 121))
        S = mp.mpf(tb.bound.upper().str(45, radius=False))
        assert exact <= S < mp.mpf("1.5") * exact, (exact, S)
        assert tb.ratio < 1 and tb.first.upper() < tb.bound.upper()


def test_tail_bound_refuses_a_ratio_above_one_and_floats():
    with pytest.raises(CertificateRefused, match="ratio"):
        tail_weight_bound(3, "40", 2)
    with pytest.raises(FloatingPointRefused):
        tail_weight_bound(3, 3.0, 16)
    with pytest.raises(FloatingPointRefused):
        fo.infinite_model(3, 3.0, 16)
    with working_precision(128), pytest.raises(FloatingPointRefused):   # a float64 tail bound is refused
        fo._tail_widened(8.4e-12, arb(1), arb(1), [arb(0)], None)


# -- the widened equations against explicit tails -------------------------------------------------------------
L_SMALL = 4
POINT_M = ("7/10", "2/5", "3/20", "1/20")
POINT_D = "4/5"


@lru_cache(maxsize=1)
def _gauss_legendre():
    from mpmath.calculus.quadrature import GaussLegendre

    with mp.workdps(40):
        return GaussLegendre(mp.mp).calc_nodes(5, mp.mp.prec)  # 3 * 2^4 = 48 nodes on [-1, 1]


def _mp_system(psi, q, m, D):
    """F(m, D; psi, q) of the infinite system with the tail frozen to the function psi and sum_{l>L} w_l m_l^2
    = q, by mpmath quadrature on S^2 (t uniform on [-1, 1]): the module doc's equations, written again here."""
    w = [_g(D3, BETA, l) * n for l, n in zip(range(1, L_SMALL + 1), harmonic_dimensions(D3, L_SMALL))]  # P_l = Legendre on S^2

    def phi(x):
        return (mp.fsum(w[l - 1] * m[l - 1] * mp.legendre(l, x) for l in range(1, L_SMALL + 1)) + psi(x)) / D

    nodes = _gauss_legendre()

    def avg(f):  # (1/2) int_{-1}^{1} f e^phi dt, entire integrand: 48 Gauss-Legendre nodes are exact to ~1e-40
        return mp.fsum(wk * f(x) * mp.exp(phi(x)) for x, wk in nodes) / 2
    Z = avg(lambda x: 1)
    F = [m[i - 1] - avg(lambda x, i=i: mp.legendre(i, x)) / Z for i in range(1, L_SMALL + 1)]
    F.append(mp.fsum(wi * mi * mi for wi, mi in zip(w, m)) / 2 + q / 2 - D * mp.log(Z))
    return F


@pytest.mark.parametrize("which", ["+S", "-S", "S P_5", "-S t^3"])
def test_widened_equations_contain_every_explicit_tail(which):
    """F and its Jacobian of the widened degree-4 system (every tail with sup |psi| <= S_4 at once) contain the
    mpmath values for an explicit psi with q = 0 and q = S_4 (Jacobian by central differences, h = 1e-15)."""
    with working_precision(128):
        model = fo.infinite_model(D3, "3", L_SMALL)
        S = mp.mpf(model.tail.upper().str(45, radius=False))
        m_arb = [arb(exact(x)) for x in POINT_M]
        D_arb = arb(fmpq(4, 5))
        F_ball, J_ball = fo._equations(model, m_arb, D_arb, True, True)
    psi = {"+S": lambda x: S, "-S": lambda x: -S, "S P_5": lambda x: S * mp.legendre(5, x),
           "-S t^3": lambda x: -S * x ** 3}[which]
    with mp.workdps(40):
        m0 = [mp.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in POINT_M]
        D0 = mp.mpf(4) / 5
        for q in (mp.mpf(0), S):
            F = _mp_system(psi, q, m0, D0)
            for i, (ball, value) in enumerate(zip(F_ball, F)):
                assert _contains(ball, value), (which, q, i, ball, value)
        h = mp.mpf(10) ** -15
        z0 = m0 + [D0]
        for j in range(L_SMALL + 1):
            up = list(z0)
            dn = list(z0)
            up[j] += h
            dn[j] -= h
            Fu = _mp_system(psi, S, up[:-1], up[-1])
            Fd = _mp_system(psi, S, dn[:-1], dn[-1])
            for i in range(L_SMALL + 1):
                value = (Fu[i] - Fd[i]) / (2 * h)
                assert _contains(J_ball[i][j], value, FD_SLACK), (which, i, j, J_ball[i][j], value)


def test_without_the_tail_the_exponent_widening_misses_a_constant_tail():
    """The truncated system's equations (no widening) do not contain the psi = +S values: the test above can
    fail."""
    with working_precision(128):
        model = fo.truncated_model(D3, "3", L_SMALL)
        S = mp.mpf(fo.infinite_model(D3, "3", L_SMALL).tail.upper().str(45, radius=False))
        m_arb = [arb(exact(x)) for x in POINT_M]
        F_ball, _ = fo._equations(model, m_arb, arb(fmpq(4, 5)), True, False)
    with mp.workdps(40):
        m0 = [mp.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in POINT_M]
        F = _mp_system(lambda x: S, S, m0, mp.mpf(4) / 5)
    assert not _contains(F_ball[-1], F[-1])


def test_zonal_polynomials_are_bounded_by_one():
    """|P_l| <= 1 on [-1, 1] (the lemma's only use of P_l), P_l(1) = 1: on a grid of step 1/50, d = 3, 5, l <= 16."""
    import sympy as sp

    t = sp.Symbol("t")
    for d in (3, 5):
        for l in range(1, 17):  # noqa: E741
            f = sp.lambdify(t, zonal_polynomial(d, l, t), "mpmath")
            assert f(1) == 1
            assert max(abs(f(mp.mpf(k) / 50)) for k in range(-50, 51)) <= 1 + mp.mpf(10) ** -12
