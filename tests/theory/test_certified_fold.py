"""theory.certified.fold: the extended system (F = 0, F_m v = 0, v_1 = 1) and its Jacobian against an
independent mpmath evaluation (quadrature; central differences), for the truncated model and with explicit
tails psi (the modes) and chi (the kernel vector) inside the widened enclosures; the certificate on a small case."""
from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import pytest
from flint import arb

import theory.certified.first_order as fo
from theory.certified.balls import exact, working_precision
from theory.certified.fold import extended_system, fold_certificate

from .test_certified_tail import FD_SLACK, _contains, _g, _gauss_legendre

L = 4
POINT = ("7/10", "2/5", "3/20", "1/20", "1", "7/5", "3/5", "1/5", "4/5")   # m_1..m_4, v_1..v_4, D


def _mp(x: str) -> mp.mpf:
    f = Fraction(x)
    return mp.mpf(f.numerator) / f.denominator


def _mp_extended(z, psi, chi):
    """F_i = m_i - E[P_i], H_i = v_i - cov(P_i, U + chi)/D, v_1 - 1 under rho ~ e^{(sum w m P + psi)/D},
    U = sum_j w_j v_j P_j, written again from the definitions with mpmath quadrature (Legendre P_l on S^2)."""
    m, v, D = z[:L], z[L:2 * L], z[2 * L]
    w = [_g(3, 3, l) * (2 * l + 1) for l in range(1, L + 1)]
    nodes = _gauss_legendre()
    P = [[mp.legendre(i, x) for i in range(1, L + 1)] for x, _ in nodes]
    weights = [wk * mp.exp((mp.fsum(w[i] * m[i] * p[i] for i in range(L)) + psi(x)) / D)
               for (x, wk), p in zip(nodes, P)]
    Z = mp.fsum(weights)

    def E(values):
        return mp.fsum(a * b for a, b in zip(weights, values)) / Z
    G = [E([p[i] for p in P]) for i in range(L)]
    W = [mp.fsum(w[j] * v[j] * p[j] for j in range(L)) + chi(x) for (x, _), p in zip(nodes, P)]
    EW = E(W)
    H = [v[i] - (E([p[i] * Wk for p, Wk in zip(P, W)]) - G[i] * EW) / D for i in range(L)]
    return [m[i] - G[i] for i in range(L)] + H + [v[0] - 1]


def _check_against_mpmath(model, psi, chi, R=None):
    with working_precision(128):
        F_ball, J_ball = extended_system(model, [arb(exact(x)) for x in POINT], R)
    with mp.workdps(40):
        z0 = [_mp(x) for x in POINT]
        for i, (ball, value) in enumerate(zip(F_ball, _mp_extended(z0, psi, chi))):
            assert _contains(ball, value), ("F", i, ball, value)
        h = mp.mpf(10) ** -15
        for j in range(2 * L + 1):
            up, dn = list(z0), list(z0)
            up[j] += h
            dn[j] -= h
            Fu, Fd = _mp_extended(up, psi, chi), _mp_extended(dn, psi, chi)
            for i in range(2 * L + 1):
                value = (Fu[i] - Fd[i]) / (2 * h)
                assert _contains(J_ball[i][j], value, FD_SLACK), ("J", i, j, J_ball[i][j], value)
    return J_ball


def test_extended_system_and_jacobian_match_mpmath_truncated():
    """No tail: the Arb values are tight (~1e-30) and contain the mpmath values and central differences."""
    with working_precision(128):
        model = fo.truncated_model(3, "3", L)
    J = _check_against_mpmath(model, lambda x: 0, lambda x: 0)
    assert all(J[i][j].rad() < 1e-20 for i in range(2 * L + 1) for j in range(2 * L + 1))


def test_widened_extended_system_contains_explicit_tails():
    """With the tail bound S_4 and a kernel tail bound R: psi = S t^2 and chi = R S P_5 are admissible
    (sup |psi| <= S, sup |chi| <= R S), so F, H and the Jacobian must contain their mpmath values."""
    with working_precision(128):
        model = fo.infinite_model(3, "3", L)
        S = _mp(str(fo.rational_of(model.tail.upper())))
        R = arb(3)
    _check_against_mpmath(model, lambda x: S * x ** 2, lambda x: 3 * S * mp.legendre(5, x), R)


def test_fold_certificate_on_the_truncated_model_is_a_singular_point():
    """L = 8: the certified (m, v, D) has F = 0 and F_m v = 0 to the mpmath precision, D near the float 0.8275."""
    with working_precision(128):
        model = fo.truncated_model(3, "3", 8)
    cert, R = fold_certificate(model, [exact("7/10") * exact("7/10") ** (k - 1) for k in range(1, 9)], "8275/10000")
    assert R is None
    D = cert.enclosure[-1]
    assert exact("82/100") < D.lo < D.hi < exact("83/100") and D.width < exact("1e-30")


def test_a_wrong_sign_in_the_d_column_is_caught(monkeypatch):
    """Planted: dH/dD with the wrong sign (the whole column of the kernel equations): the mpmath central
    differences fall outside the Jacobian's balls, so the comparison above can fail."""
    import theory.certified.fold as fold

    original = fold.extended_system

    def flipped(model, z, v_tail=None):
        F, J = original(model, z, v_tail)
        for i in range(model.L, 2 * model.L):
            J[i][-1] = -J[i][-1]
        return F, J
    monkeypatch.setattr(fold, "extended_system", flipped)
    monkeypatch.setattr(__import__(__name__, fromlist=["x"]), "extended_system", flipped)
    with working_precision(128):
        model = fo.truncated_model(3, "3", L)
    with pytest.raises(AssertionError, match="J"):
        _check_against_mpmath(model, lambda x: 0, lambda x: 0)
