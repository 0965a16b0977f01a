"""A rigorous bound on the zonal weights beyond degree L: sum_{l > L} w_l, w_l = g_l N_l, for ALL l > L.

The usa coupling (theory.meanfield.growth_rate_expr over l (l + d - 2)) is, with nu = d/2 - 1,

    g_l(beta) = Gamma(d/2) (2/beta)^nu I_{l+nu}(beta) / beta   (> 0 for beta > 0).

Bessel bound (derived here from the series; no source needed). For mu >= 0 and x >= 0,

    I_mu(x) = sum_k (x/2)^{2k+mu} / (k! Gamma(k+mu+1))   and   Gamma(k+mu+1) = Gamma(mu+1) prod_{j=1..k} (mu+j)
            >= Gamma(mu+1) (mu+1)^k,   so   I_mu(x) <= (x/2)^mu / Gamma(mu+1) * exp(x^2 / (4 (mu+1))).

Hence g_l <= U_l := Gamma(d/2) (beta/2)^l exp(beta^2 / (4 (l+nu+1))) / (beta Gamma(l+nu+1)). Write
a_l = (beta/2)^l N_l / Gamma(l+nu+1); for l >= L+1 the exponential factor is at most E = exp(beta^2/(4 (L+nu+2)))
and the ratio

    a_{l+1}/a_l = (beta/2) / (l+nu+1) * N_{l+1}/N_l,   N_{l+1}/N_l = (2l+d)/(2l+d-2) * (l+d-2)/(l+1)  (d >= 3)

is non-increasing in l (each factor is; on the circle N_l = 2 and the ratio is 1), so a_l <= a_{L+1} r^{l-L-1}
with r = a_{L+2}/a_{L+1}. If r < 1,

    S_L := sum_{l > L} w_l <= Gamma(d/2) E a_{L+1} / (beta (1 - r)).

Everything is evaluated in Arb from exact rationals (beta, nu, N_l); the bound is the ball's upper end.
"""
from __future__ import annotations

from dataclasses import dataclass

from flint import arb, fmpq

from .balls import MAX_DEGREE, MAX_DIMENSION, CertificateRefused, exact, require_integer


def _dim(d: int, l: int) -> int:  # noqa: E741 - degree
    from theory.noise_global import harmonic_dimensions

    return harmonic_dimensions(d, l)[-1]


def _check(d, beta):
    require_integer("d", d, 2, MAX_DIMENSION)
    b = exact(beta)
    if b <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    return b, fmpq(d - 2, 2)


def coupling_upper_bound(d: int, beta, l: int) -> arb:  # noqa: E741 - degree
    """U_l >= g_l(beta) (the module doc's series bound), an Arb ball; the bound is its upper end."""
    b, nu = _check(d, beta)
    require_integer("l", l, 0, MAX_DEGREE)
    mu = arb(nu + l)
    return (arb(fmpq(d, 2)).gamma() * (arb(b) / 2) ** l * (arb(b) ** 2 / (4 * (mu + 1))).exp()
            / (arb(b) * (mu + 1).gamma()))


@dataclass(frozen=True)
class TailBound:
    """S_L >= sum_{l > L} g_l N_l: ``bound`` an exact ball (its value is the upper bound), ``ratio`` the
    geometric ratio r of the module doc (< 1), ``first`` the bound on the first neglected weight w_{L+1}."""

    d: int
    beta: fmpq
    L: int
    bound: arb
    ratio: arb
    first: arb


def tail_weight_bound(d: int, beta, L: int) -> TailBound:
    """The rigorous S_L of the module doc; refuses (CertificateRefused) when r >= 1 (take a larger L)."""
    b, nu = _check(d, beta)
    if isinstance(L, bool) or not isinstance(L, int) or L < 1:
        raise ValueError(f"L must be an integer >= 1, got {L!r}")

    def a(l):  # noqa: E741 - degree
        return (arb(b) / 2) ** l * _dim(d, l) / (arb(nu + l) + 1).gamma()
    r = (arb(b) / 2) / (arb(nu + L) + 2) * fmpq(_dim(d, L + 2), _dim(d, L + 1))
    if not r < 1:
        raise CertificateRefused(f"tail bound: the ratio r = {r} is not < 1 at L = {L}: take a larger L")
    E = (arb(b) ** 2 / (4 * (arb(nu + L) + 2))).exp()
    pre = arb(fmpq(d, 2)).gamma() * E / arb(b)
    S = pre * a(L + 1) / (1 - r)
    first = pre * a(L + 1)
    return TailBound(d, b, L, arb(S.upper()), r, arb(first.upper()))


__all__ = ["TailBound", "coupling_upper_bound", "tail_weight_bound"]
