"""Funk-Hecke expansion of the attention kernel e^{beta t} on S^2 and its truncation bound (float64, SciPy).

With the real spherical harmonics of :mod:`numerics.harmonic.transforms` (orthonormal for the uniform probability
measure mu) the addition theorem reads sum_m Y_lm(x) Y_lm(y) = (2l+1) P_l(<x, y>), and the Funk-Hecke
coefficients of the kernel are (derived and checked in :mod:`theory.harmonic`)

    e^{beta <x, y>} = sum_l lambda_l(beta) sum_m Y_lm(x) Y_lm(y),
    lambda_l(beta) = (1/2) int_{-1}^{1} e^{beta t} P_l(t) dt = i_l(beta) = sqrt(pi / (2 beta)) I_{l+1/2}(beta),

i_l the modified spherical Bessel function (lambda_0 = sinh(beta)/beta, the mean of the kernel over mu;
lambda_l(-beta) = (-1)^l lambda_l(beta)). Truncating at degree L changes the kernel by
e_L(t) = sum_{l>L} (2l+1) lambda_l P_l(t), and since |P_l| <= 1,

    sup_t |e_L(t)| <= T_L(beta) = sum_{l>L} (2l+1) |lambda_l(beta)|     (= e_L(1) for beta > 0: attained).

T_L is bounded by a geometric majorant (:func:`tail_bound`): the terms t_l = (2l+1) i_l(|beta|) have ratios
t_{l+1}/t_l = ((2l+3)/(2l+1)) I_{l+3/2}/I_{l+1/2} <= r_L = ((2L+5)/(2L+3)) q_{L+3/2} for l >= L+1, with Amos'
bound I_{nu+1}(x)/I_nu(x) <= q_nu = x / (nu + 1/2 + sqrt(x^2 + (nu + 1/2)^2)) (Amos 1974, Math. Comp. 28; nu >= 0),
so T_L <= t_{L+1} / (1 - r_L) whenever r_L < 1.

Every coefficient is returned scaled by e^{-|beta|} (finite for every beta; ``scaled_coefficients``), as the
circle's Bessel coefficients are (:mod:`numerics.circle.fourier`).

Verified by: harmonic.bound-holds (the majorant against the exact tail and the worst configurations),
harmonic.field-agrees; tests/numerics/test_harmonic_expansion.py compares with :mod:`theory.harmonic` (mpmath).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from numerics.common.errors import InputError, require_real

#: the largest degree the backend evaluates: (L+1)^2 = 40401 harmonics per point (beta ~ 2000 at tol 1e-10).
#: Beyond it the cost per particle exceeds the direct field's for every n the machine can hold.
MAX_DEGREE = 200
#: below this |beta| the coefficients come from scipy's spherical_in (power series), above from ive (no overflow)
SERIES_MAX_BETA = 1.0


#: below this |beta| the coefficients come from three terms of the power series (relative error < 1e-19)
TINY_BETA = 1e-3


def power_series_coefficients(beta: float, L: int, divide_by_beta: bool = False) -> np.ndarray:
    """lambda_l(beta) (or lambda_l(beta) / beta for l >= 1, entry 0 then unused and set to 0) for |beta| <
    TINY_BETA from i_l(x) = sum_k (sqrt(pi)/2) (x/2)^{2k+l} / (k! Gamma(k+l+3/2)), three terms (scipy's
    spherical_in returns nan for subnormal x)."""
    from scipy.special import gammaln

    x = abs(float(beta))
    ls = np.arange(L + 1, dtype=float)
    out = np.zeros(L + 1)
    with np.errstate(under="ignore", divide="ignore"):
        for k in range(3):
            power = 2 * k + ls - (1.0 if divide_by_beta else 0.0)
            log_coef = math.log(math.sqrt(math.pi) / 2) - (2 * k + ls) * math.log(2.0) - gammaln(k + 1) \
                - gammaln(k + ls + 1.5)
            term = np.where(power >= 0, np.exp(log_coef) * np.power(x, np.maximum(power, 0.0)), 0.0)
            out += term
    if divide_by_beta:
        out[0] = 0.0
    sign = (-1.0) ** ls if beta < 0 else np.ones(L + 1)
    return out * sign * (np.sign(beta) if divide_by_beta and beta != 0 else 1.0)


def scaled_coefficients(beta: float, L: int) -> np.ndarray:
    """lambda_l(beta) e^{-|beta|} for l = 0..L (module docstring; lambda_0 = sinh(beta)/beta, 1 at beta = 0)."""
    x = abs(float(beta))
    ls = np.arange(L + 1)
    if x == 0.0:
        out = np.zeros(L + 1)
        out[0] = 1.0
        return out
    if x < TINY_BETA:
        return power_series_coefficients(beta, L) * math.exp(-x)
    if x < SERIES_MAX_BETA:
        out = special.spherical_in(ls, x) * math.exp(-x)
    else:
        out = math.sqrt(math.pi / (2.0 * x)) * special.ive(ls + 0.5, x)
    if beta < 0:
        out = out * (-1.0) ** ls
    return out


def scaled_mean_weight(beta: float) -> float:
    """lambda_0(|beta|) e^{-|beta|} = (1 - e^{-2|beta|}) / (2|beta|): the mean kernel weight of the uniform measure,
    the scale the tolerances are relative to (1 at beta = 0)."""
    x = abs(float(beta))
    return 1.0 if x == 0.0 else -math.expm1(-2.0 * x) / (2.0 * x)


def amos_ratio_bound(nu, x: float):
    """q_nu = x / (nu + 1/2 + sqrt(x^2 + (nu + 1/2)^2)) >= I_{nu+1}(x) / I_nu(x) (Amos 1974; x >= 0, nu >= 0)."""
    h = np.asarray(nu, dtype=float) + 0.5
    return x / (h + np.sqrt(x * x + h * h))


def tail_bound(L: int, beta: float) -> float:
    """Upper bound on e^{-|beta|} T_L(beta) = e^{-|beta|} sum_{l>L} (2l+1) |lambda_l(beta)| (inf when the
    geometric ratio r_L is not below 1, i.e. L far below |beta|)."""
    x = abs(float(beta))
    if x == 0.0:
        return 0.0
    r = (2 * L + 5) / (2 * L + 3) * float(amos_ratio_bound(L + 1.5, x))
    if r >= 1.0:
        return math.inf
    first = (2 * L + 3) * abs(float(scaled_coefficients(x, L + 1)[-1]))
    return first / (1.0 - r)


def exact_tail(L: int, beta: float) -> float:
    """e^{-|beta|} T_L(beta) summed term by term until the terms are negligible (for the looseness checks)."""
    x = abs(float(beta))
    top = L + 1 + int(4 * x + 60)
    lam = np.abs(scaled_coefficients(x, top))
    ls = np.arange(top + 1)
    terms = (2 * ls + 1) * lam
    return float(np.sum(terms[L + 1:][::-1]))  # small terms first


def degree_for_tolerance(beta: float, target: float) -> int:
    """Smallest L >= 1 with :func:`tail_bound` (L, beta) <= ``target`` (a scaled tail, e^{-|beta|} units).

    Raises :class:`InputError` (naming the direct field) when the target needs L > :data:`MAX_DEGREE`.
    """
    beta = require_real(beta, "beta")
    return _degree(abs(beta), float(target))


@lru_cache(maxsize=1024)
def _degree(x: float, target: float) -> int:
    if not target > 0:
        raise InputError(f"the truncation target must be positive, got {target:g}")
    # the bound decreases in L; MAX_DEGREE is small, so a scan (at most 200 cheap evaluations, cached) suffices
    for L in range(1, MAX_DEGREE + 1):
        if tail_bound(L, x) <= target:
            return L
    raise InputError(f"the harmonic backend would need degree L > {MAX_DEGREE} at beta={x:g} for this tolerance "
                     f"((L+1)^2 harmonics per token); use --backend direct (the direct blocked field) or a larger "
                     f"tolerance")


def check_degree(L, name: str = "degree") -> int:
    """A user-given degree, validated against 1..:data:`MAX_DEGREE` (the error names the direct field)."""
    try:
        L_int = int(L)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be an integer, got {L!r}") from None
    if L_int != L or isinstance(L, bool):
        raise InputError(f"{name} must be an integer, got {L!r}")
    if not 0 <= L_int <= MAX_DEGREE:
        raise InputError(f"{name} must be in 0..{MAX_DEGREE} for the harmonic backend, got {L_int}; use --backend "
                         f"direct (the direct blocked field) beyond")
    return L_int
