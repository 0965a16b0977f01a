"""Certified statements about the long-context simplex layer (:mod:`theory.longcontext`, conventions section 12).

The layer's self weight at beta_n = gamma log n is p_n = 1/(1 + R_n) with R_n = (n - 1) n^{-gamma (1 - rho)}.
Certified here, every number an exact rational or an Arb ball (:mod:`theory.certified.balls`):

- :func:`critical_gamma` -- the exponent e(gamma) = 1 - gamma (1 - rho) of log R_n / log n
  (:func:`theory.longcontext.off_diagonal_mass_exponent`, a SymPy limit) at an exact rational rho: its root
  gamma_c = 1/(1 - rho) in exact rational arithmetic, its slope -(1 - rho) < 0 (so e > 0 below gamma_c and
  e < 0 above: R_n -> oo, resp. -> 0), and the agreement with :func:`theory.longcontext.critical_gamma_expr`;
- :func:`crossing_gamma` -- gamma_n(p*), the gamma where p_n = p* at a finite n, as a certified root
  (:func:`theory.certified.roots.certify_root`) of theory's SymPy self weight compiled to Arb. Unique on the
  whole half-line: log R_n is affine in gamma with slope -(1 - rho) log n < 0 and p = 1/(1 + R) decreases in R,
  so p_n increases strictly in gamma (the certificate also proves p_n' > 0 on its bracket);
- :func:`critical_limit` -- the inner product rho'_n at gamma_c exactly: there n^{-gamma_c (1 - rho)} = 1/n, so
  p_n = n/(2n - 1) and rho'_n is an exact rational (theory's symbolic-n map); its limit rho'_oo
  (:func:`theory.longcontext.limit_inner_product_expr`, 4 rho/(1 + 3 rho) without residual) and a bound
  |rho'_n - rho'_oo| <= K/n proved for every integer n >= n_0 (real-root counting of integer polynomials by
  Sturm sequences, exact);
- :func:`poisson_constant` -- kappa_d of the fixed-query model: SymPy's limit of the exact integral
  (:func:`theory.longcontext.poisson_constant`) equals the closed form c_d 2^{(d-1)/2}/(d - 1) exactly, and
  both are enclosed in Arb.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp
from flint import arb, fmpq

from .balls import (DEFAULT_PREC, MAX_DIMENSION, CertificateRefused, Interval, enclosure_of, exact, require_integer,
                    working_precision)
from .expressions import arb_function
from .roots import RootCertificate, certify_root

#: the variable of the crossing roots
GAMMA = sp.Symbol("gamma", positive=True)


def _rho(value) -> fmpq:
    q = exact(value)
    if not 0 <= q < 1:
        raise ValueError(f"rho must be an exact rational in [0, 1), got {value!r}")
    return q


def _sym(q: fmpq) -> sp.Rational:
    return sp.Rational(int(q.p), int(q.q))


def _fmpq(r: sp.Expr) -> fmpq:
    r = sp.nsimplify(r) if not isinstance(r, sp.Rational) else r
    if not isinstance(r, sp.Rational):
        raise CertificateRefused(f"expected an exact rational, SymPy gave {r}")
    return fmpq(int(r.p), int(r.q))


# -- (a) the critical gamma ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CriticalGamma:
    """gamma_c = 1/(1 - rho) with the exponent's exact slope and the exact signs either side."""

    rho: fmpq
    gamma_c: fmpq
    slope: fmpq
    below: tuple[fmpq, fmpq]     # (gamma_c/2, e(gamma_c/2) > 0)
    above: tuple[fmpq, fmpq]     # (2 gamma_c, e(2 gamma_c) < 0)


def critical_gamma(rho_value) -> CriticalGamma:
    """The certified critical gamma of the simplex layer at an exact rational rho in [0, 1) (module doc).

    The exponent is theory's SymPy limit, evaluated in exact rational arithmetic (it is affine in gamma: checked,
    not assumed); raises :class:`CertificateRefused` if it is not, or if its root disagrees with
    :func:`theory.longcontext.critical_gamma_expr`.
    """
    from theory.longcontext import critical_gamma_expr, gamma, off_diagonal_mass_exponent, rho

    x = _rho(rho_value)
    e = sp.expand(off_diagonal_mass_exponent().subs({rho: _sym(x)}).subs(gamma, GAMMA))
    poly = sp.Poly(e, GAMMA)
    if poly.degree() != 1 or not all(isinstance(c, sp.Rational) for c in poly.all_coeffs()):
        raise CertificateRefused(f"the exponent {e} is not affine in gamma with rational coefficients")
    slope, intercept = (_fmpq(c) for c in poly.all_coeffs())
    if not slope < 0:
        raise CertificateRefused(f"the exponent's slope {slope} is not negative")
    root = -intercept / slope
    closed = _fmpq(critical_gamma_expr().subs(rho, _sym(x)))
    if root != closed:
        raise CertificateRefused(f"the exponent's root {root} differs from critical_gamma_expr = {closed}")

    def at(g: fmpq) -> fmpq:
        return slope * g + intercept
    low, high = root / 2, root * 2
    if not (at(root) == 0 and at(low) > 0 and at(high) < 0):
        raise CertificateRefused("the exponent does not change sign from + to - at its root")
    return CriticalGamma(x, root, slope, (low, at(low)), (high, at(high)))


# -- (b) the finite-n crossings -----------------------------------------------------------------------------------
@lru_cache(maxsize=256)
def _self_weight_function(n: int, rho_q: tuple[int, int], target: tuple[int, int]):
    from theory.longcontext import self_weight

    x = sp.Rational(*rho_q)
    expr = self_weight(sp.Integer(n), GAMMA * sp.log(sp.Integer(n)), x) - sp.Rational(*target)
    return arb_function(expr, (GAMMA,))


def crossing_gamma(n: int, rho_value, target, prec: int = DEFAULT_PREC) -> RootCertificate:
    """The certified gamma_n where the self weight p_n = ``target`` (exact, in (0, 1)) at n tokens.

    Bracket [0, 3/(1 - rho)]: p_n(0) = 1/n and p_n(3 gamma_c) = 1/(1 + (n - 1)/n^3) (n >= 2 gives a sign change
    for every target in [1/n + ..., 1 - ...]; the certificate checks the signs in Arb).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    x, p = _rho(rho_value), exact(target)
    if not 0 < p < 1:
        raise ValueError(f"target self weight must be in (0, 1), got {target!r}")
    f = _self_weight_function(n, (int(x.p), int(x.q)), (int(p.p), int(p.q)))
    return certify_root(f, f.derivative(), Interval(fmpq(0), 3 / (1 - x)), prec=prec)


# -- (c) the limit at the critical gamma --------------------------------------------------------------------------
@dataclass(frozen=True)
class CriticalLimit:
    """rho'_n at gamma_c (exact rationals at the listed n), the limit and the bound |rho'_n - limit| <= K/n."""

    rho: fmpq
    residual: fmpq
    self_weight: sp.Expr          # p_n at gamma_c as a rational function of n
    limit: fmpq
    values: dict                  # n -> exact rho'_n
    arb_values: dict              # n -> Arb enclosure of rho'_n from the exp/log form at gamma_c
    bound: fmpq                   # K
    n0: int
    leading: fmpq                 # lim n (rho'_n - limit)


def _critical_self_weight() -> sp.Expr:
    """p_n at gamma_c from R_n = (n - 1) e^{-gamma_c log(n) (1 - rho)} (SymPy; must be free of exp/log)."""
    from theory.longcontext import critical_gamma_expr, rho

    nn = sp.Symbol("n", positive=True)
    R = (nn - 1) * sp.exp(sp.simplify(-critical_gamma_expr() * sp.log(nn) * (1 - rho)))
    p = sp.cancel(1 / (1 + R))
    if p.has(sp.exp, sp.log) or p.free_symbols - {nn}:
        raise CertificateRefused(f"p_n at gamma_c did not reduce to a rational function of n: {p}")
    return p.subs(nn, sp.Symbol("n"))


def critical_limit(rho_value, residual="0", ns=(100, 1000, 10 ** 4, 10 ** 5, 10 ** 6), n0: int = 100,
                   prec: int = DEFAULT_PREC) -> CriticalLimit:
    """rho'_n of the simplex layer at gamma = gamma_c, exactly, its n -> oo limit and a bound proved for all
    integers n >= ``n0`` (``residual`` is r = alpha sqrt(q), exact)."""
    from theory.longcontext import limit_inner_product_expr, r, rho, self_weight, simplex_inner_product

    x, rr = _rho(rho_value), exact(residual)
    if x == 0:
        raise ValueError("rho = 0 gives rho' = 0 at every n; take rho in (0, 1)")
    n = sp.Symbol("n")
    p_of_n = _critical_self_weight()
    rho_prime = sp.cancel(sp.together(simplex_inner_product(n, p_of_n, _sym(x), _sym(rr))))
    limit = _fmpq(sp.nsimplify(limit_inner_product_expr(sp.Rational(1, 2)).subs({rho: _sym(x), r: _sym(rr)})))
    values = {k: _fmpq(rho_prime.subs(n, k)) for k in ns}
    # the same number through exp and log in balls: theory's self weight at beta = gamma_c log n
    gc = critical_gamma(x).gamma_c
    sw = arb_function(self_weight(n, GAMMA * sp.log(n), _sym(x)), (n, GAMMA))
    rp = arb_function(simplex_inner_product(n, sp.Symbol("pp"), _sym(x), _sym(rr)), (n, sp.Symbol("pp")))
    arb_values = {}
    with working_precision(prec):
        for k in ns:
            ball = rp(arb(k), sw(arb(k), arb(gc)))
            arb_values[k] = enclosure_of(ball)
            if not arb_values[k].contains(values[k]):
                raise CertificateRefused(f"n = {k}: the exact rho'_n {values[k]} is outside the Arb value "
                                         f"{arb_values[k].text(15)} (the exp/log route)")
    # error bound: h(n) = n (rho'_n - limit) = A/B; K B -/+ A > 0 on [n0, oo) (no real root there, sign at n0)
    h = sp.cancel(sp.together(n * (rho_prime - _sym(limit))))
    A, B = (sp.Poly(t, n) for t in sp.fraction(h))
    leading = _fmpq(sp.limit(h, n, sp.oo))
    K = abs(leading) * fmpq(11, 10) + fmpq(1, 10 ** 6)
    Ks = _sym(K)
    for poly in (B, Ks * B - A, Ks * B + A):
        if poly.count_roots(n0) != 0 or poly.eval(n0) == 0:
            raise CertificateRefused(f"cannot prove |n (rho'_n - rho'_oo)| <= {K} for n >= {n0}: {poly.as_expr()} "
                                     f"has a real root in [{n0}, oo)")
    if not ((Ks * B - A).eval(n0) * B.eval(n0) > 0 and (Ks * B + A).eval(n0) * B.eval(n0) > 0):
        raise CertificateRefused(f"the bound {K} fails at n = {n0}")
    return CriticalLimit(x, rr, p_of_n, limit, values, arb_values, K, n0, leading)


# -- the fixed-query constant ---------------------------------------------------------------------------------------
def poisson_constant_closed(d: int) -> sp.Expr:
    """c_d 2^{(d-1)/2}/(d - 1), c_d = Gamma(d/2)/(sqrt(pi) Gamma((d-1)/2)) (theory.longcontext's closed form)."""
    from theory.longcontext import score_density_constant

    require_integer("d", d, 2, MAX_DIMENSION)
    return score_density_constant(d) * sp.Integer(2) ** sp.Rational(d - 1, 2) / (d - 1)


def poisson_constant(d: int, prec: int = DEFAULT_PREC) -> Interval:
    """An Arb enclosure of kappa_d after proving SymPy's limit equal to the closed form (exactly)."""
    from theory.longcontext import poisson_constant as limit_form

    require_integer("d", d, 2, MAX_DIMENSION)
    limit = limit_form(d)
    closed = poisson_constant_closed(d)
    if sp.simplify(limit - closed) != 0:
        raise CertificateRefused(f"kappa_{d}: the limit {limit} differs from the closed form {closed}")
    with working_precision(prec):
        return enclosure_of(arb_function(closed, ())())


__all__ = ["CriticalGamma", "CriticalLimit", "critical_gamma", "critical_limit", "crossing_gamma", "poisson_constant",
           "poisson_constant_closed"]
