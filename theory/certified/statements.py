"""The certified statements: thresholds, growth rates and Hessian signs of attnflow, proved in ball arithmetic.

Every function here takes exact inputs (integers, exact rationals; floats are refused by
:mod:`theory.certified.balls`) and the SymPy expressions of ``theory/`` (never typed in again where ``theory/``
has them), and returns a certificate whose numbers are exact rationals:

- :func:`noise_threshold` -- beta*(d), the root of q(beta) = I_{d/2+1}(beta)/I_{d/2}(beta) = 1/d where usa's
  noisy transition turns discontinuous (:func:`theory.noise.discontinuity_threshold`): a certified root;
- :func:`critical_noise` -- D_c(beta) = lambda_1(beta)/(d-1) (:func:`theory.noise.critical_noise_expr`) at an
  exact beta: a ball;
- :func:`growth_rate` -- lambda_l(beta) (:func:`theory.meanfield.growth_rate_expr`) at an exact beta: a ball;
- :func:`switch_point` -- the beta > 0 where lambda_{l+1} = lambda_l (a switch point of l_max): a certified
  root of the difference of the two ``theory.meanfield`` rates;
- :func:`branch_sign_map` -- the sign of one Hessian eigenvalue branch of :mod:`theory.structured` (a SymPy
  expression in beta) on a whole beta interval, by adaptive subdivision (:mod:`theory.certified.signs`).

Uniqueness of a root is certified inside the bracket the certificate names (sign change and f' bounded away
from 0 there); uniqueness on the whole half-line rests on the monotonicity theorems quoted in the docstrings,
which are not re-proved here.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp
from flint import arb, fmpq

from .balls import (DEFAULT_PREC, MAX_DEGREE, MAX_DIMENSION, Interval, enclosure_of, exact, require_integer,
                    working_precision)
from .expressions import arb_function
from .roots import RootCertificate, bracket_by_doubling, certify_root
from .signs import Progress, SignMap, certify_sign_map

#: the variable of every statement (beta, positive where the Bessel forms need it)
BETA = sp.Symbol("beta", real=True)

#: where bracketing by doubling starts for the roots in beta (both functions are negative there)
BRACKET_START = fmpq(1, 4)


def _check_int(name: str, value, low: int) -> int:
    """A dimension (``d``) or a degree (any other name) in its certified range (:data:`MAX_DIMENSION`)."""
    return require_integer(name, value, low, MAX_DIMENSION if name == "d" else MAX_DEGREE)


def _beta_symbol_of(expr: sp.Expr) -> sp.Expr:
    """``expr`` with theory's beta symbol (whatever its assumptions) replaced by :data:`BETA`."""
    return expr.subs({s: BETA for s in expr.free_symbols if s.name == "beta"})


def _root_in_beta(expr: sp.Expr, prec: int) -> RootCertificate:
    f = arb_function(expr, (BETA,))
    with working_precision(prec):
        bracket = bracket_by_doubling(f, BRACKET_START)
    return certify_root(f, f.derivative(), bracket, prec=prec)


# -- the noisy transition --------------------------------------------------------------------------------------
def noise_threshold_expr(d: int) -> sp.Expr:
    """q(beta) - 1/d with q = I_{d/2+1}(beta)/I_{d/2}(beta) (theory.noise's Landau coefficient changes sign)."""
    d = _check_int("d", d, 2)
    half = sp.Rational(d, 2)
    return sp.besseli(half + 1, BETA) / sp.besseli(half, BETA) - sp.Rational(1, d)


def noise_threshold(d: int, prec: int = DEFAULT_PREC) -> RootCertificate:
    """beta*(d): the certified root of I_{d/2+1}(beta)/I_{d/2}(beta) = 1/d.

    The bracket comes from doubling from 1/4 (certified signs at exact points); uniqueness in the certificate's
    bracket is proved by f' != 0 there. On the whole of (0, inf) q increases from 0 to 1 (the Bessel ratio
    I_{nu+1}/I_nu is increasing in beta for nu >= -1/2: a theorem, quoted not re-proved), so the root is unique.
    """
    return _root_in_beta(noise_threshold_expr(d), prec)


def critical_noise(d: int, beta, prec: int = DEFAULT_PREC) -> Interval:
    """An enclosure of D_c(beta) = lambda_1(beta)/(d-1) (usa, theory.noise.critical_noise_expr) at the exact
    ``beta`` > 0."""
    d = _check_int("d", d, 2)
    b = exact(beta)
    if b <= 0:
        raise ValueError(f"beta must be > 0 (the Bessel form; D_c(0) = 1/d is a limit), got {beta!r}")
    f = _compiled_critical_noise(d)
    with working_precision(prec):
        return enclosure_of(f(arb(b)))


@lru_cache(maxsize=64)
def _compiled_critical_noise(d: int):
    # theory.noise.critical_noise_expr is simplify(lambda_1/(d-1)); the unsimplified quotient is the same
    # function and compiles without the simplify (seconds per d)
    return arb_function(growth_rate_expr("usa", d, 1) / (d - 1), (BETA,))


# -- the mean-field linearisation -------------------------------------------------------------------------------
def growth_rate_expr(model: str, d: int, l: int) -> sp.Expr:  # noqa: E741 - degree
    """lambda_l(beta) in :data:`BETA`: usa is theory.meanfield.growth_rate_expr; sa is that over
    Z_0 = rho_0 a_0(beta) (theory.meanfield.uniform_density and funk_hecke_closed_form), the same expression
    as theory's sa rate before its ``simplify`` (which costs up to a second per degree)."""
    from theory.meanfield import funk_hecke_closed_form, uniform_density
    from theory.meanfield import growth_rate_expr as theory_rate

    if model not in ("usa", "sa"):
        raise ValueError(f"model must be 'usa' or 'sa', got {model!r}")
    d, l = _check_int("d", d, 2), _check_int("l", l, 1)
    usa = _beta_symbol_of(theory_rate("usa", d, l))
    if model == "usa":
        return usa
    return usa / _beta_symbol_of(uniform_density(d) * funk_hecke_closed_form(d, 0))


@lru_cache(maxsize=512)
def _compiled_rate(model: str, d: int, l: int):  # noqa: E741 - degree
    return arb_function(growth_rate_expr(model, d, l), (BETA,))


def growth_rate(model: str, d: int, l: int, beta, prec: int = DEFAULT_PREC) -> Interval:  # noqa: E741
    """An enclosure of lambda_l(beta) at the exact ``beta`` > 0."""
    b = exact(beta)
    if b <= 0:
        raise ValueError(f"beta must be > 0 (the Bessel form), got {beta!r}")
    f = _compiled_rate(model, d, l)
    with working_precision(prec):
        return enclosure_of(f(arb(b)))


def switch_point_expr(d: int, l: int) -> sp.Expr:  # noqa: E741 - degree
    """lambda_{l+1}(beta) - lambda_l(beta) (usa; sa differs by the positive factor 1/Z_0, same zero)."""
    l = _check_int("l", l, 1)  # noqa: E741 - before l + 1 is formed
    return growth_rate_expr("usa", d, l + 1) - growth_rate_expr("usa", d, l)


def switch_point(d: int, l: int, prec: int = DEFAULT_PREC) -> RootCertificate:  # noqa: E741 - degree
    """The certified beta_l > 0 where lambda_{l+1}(beta) = lambda_l(beta).

    lambda_{l+1}/lambda_l = c_l I_{l+d/2}/I_{l+d/2-1} with c_l > 1 a constant: increasing in beta from 0 to
    c_l > 1 (the theorem quoted in :func:`noise_threshold`), so the root is unique on (0, inf); the certificate
    proves it unique in its bracket.
    """
    return _root_in_beta(switch_point_expr(d, l), prec)


# -- Hessian branches on beta intervals ----------------------------------------------------------------------
@dataclass(frozen=True)
class BranchSigns:
    """The certified sign map of one Hessian eigenvalue branch (label, multiplicity) on a beta interval."""

    label: str
    multiplicity: int
    expr: sp.Expr
    signs: SignMap


def branch_sign_map(label: str, multiplicity: int, expr: sp.Expr, lo, hi, *, progress: Progress | None = None,
                    prec: int = DEFAULT_PREC) -> BranchSigns:
    """The sign of the eigenvalue branch ``expr`` (SymPy, in theory's beta) on [lo, hi] (exact endpoints)."""
    domain = Interval.of(lo, hi)
    signs = certify_sign_map(_beta_symbol_of(sp.sympify(expr)), BETA, domain, progress=progress, label=label,
                             prec=prec)
    return BranchSigns(label, multiplicity, expr, signs)


__all__ = ["BETA", "BranchSigns", "branch_sign_map", "critical_noise", "growth_rate", "growth_rate_expr",
           "noise_threshold", "noise_threshold_expr", "switch_point", "switch_point_expr"]
