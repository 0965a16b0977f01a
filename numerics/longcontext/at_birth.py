"""Lost in the middle at birth: depth-H causal attention at initialisation as powers of the Cesaro matrix
(Chowdhury, arXiv 2603.10123), exactly and in the continuous limit.

At initialisation the attention scores are small, so every causal attention row is (nearly) uniform over its
prefix: the n x n **Cesaro matrix** M_ij = 1/i for j <= i (1-based positions). H attention-only layers route the
last token's output to the tokens j with the weights of the last row of M^H; with a residual stream of weight
1 - alpha per layer, N = (1 - alpha) I + alpha M.

**Exact last rows (two routes).** A path n = i_0 >= i_1 >= ... >= i_H = j through M has weight
prod_{t < H} 1/i_t, so

    (M^H)_{n j} = (1/n) h_{H-1}(1/j, 1/(j+1), ..., 1/n),

h_m the complete homogeneous symmetric polynomial of degree m (:func:`last_row_h`, computed by the recursion
h_m(x_j..x_n) = h_m(x_{j+1}..x_n) + x_j h_{m-1}(x_j..x_n)); independently, r <- r M applied H times to the
last unit row with suffix sums (:func:`last_row_power`). Both run in exact rationals (:class:`fractions.Fraction`)
or in float64. I and M commute, so N^H = sum_k C(H, k) (1 - alpha)^{H-k} alpha^k M^k
(:func:`residual_row`, checked against H direct products).

**The continuous limit.** With j = y n, 1/i = (1/n)(1/(i/n)), the sum defining h_{H-1} is a Riemann sum of the
volume of {y <= t_{H-1} <= ... <= t_1 <= 1} in the measure dt/t, so

    n (M^H)_{n, yn} -> rho_H(y) = (ln(1/y))^{H-1} / (H-1)!        (:func:`density`)

(the kernel of the H-th power of the Cesaro operator f -> (1/x) int_0^x f at x = 1). Its three parts:

- **primacy tail**: rho_H(y) diverges like (ln 1/y)^{H-1} as y -> 0; at the first token exactly
  n (M^H)_{n 1} = h_{H-1}(1, 1/2, ..., 1/n), = the harmonic number H_n for H = 2, ~ (ln n)^{H-1}/(H-1)!;
- **recency delta**: (N^H)_{n n} = sum_k C(H,k)(1-alpha)^{H-k} alpha^k n^{-k} -> (1 - alpha)^H, an O(1) weight
  on the last token that no other token has (the others get O(1/n));
- **middle dead zone**: on y in [1/e, 1] the attention-only density is at most 1/(H-1)!, and on [1/3, 2/3] its
  mass is at most (ln 3)^{H-1}/(3 (H-1)!); with the residual the middle density is
  sum_{k >= 1} C(H,k) (1-alpha)^{H-k} alpha^k rho_k(y), whose k = H term is the factorial one: the dead zone of
  order 1/(H-1)! is that of the pure attention path (alpha = 1); for alpha < 1 the k = 1 term
  H alpha (1-alpha)^{H-1} (uniform) keeps the middle at a geometric, not factorial, level.

Positions enter only through the mask: the rotary embedding changes the scores, and at vanishing scores it changes
nothing (the check against the untrained decoder is in :mod:`numerics.decoder.untrained`).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from numerics.common.errors import InputError, require_int

#: the largest n of the exact rational routes (their cost grows like n^2 H digits)
MAX_EXACT_N = 2000
#: the largest n of the float routes
MAX_FLOAT_N = 10**7
MAX_DEPTH = 200


def _check(n: int, H: int, exact: bool) -> tuple[int, int]:
    n = require_int(n, "n", 1, MAX_EXACT_N if exact else MAX_FLOAT_N)
    H = require_int(H, "H", 0, MAX_DEPTH)
    return n, H


def cesaro_matrix(n: int) -> np.ndarray:
    """M (n, n) in float64: M_ij = 1/i for j <= i (1-based), 0 above the diagonal."""
    n = require_int(n, "n", 1, 20000)
    return np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]


def last_row_power(n: int, H: int, exact: bool = True) -> list:
    """The last row of M^H by H products r <- r M ((r M)_j = sum_{i >= j} r_i / i, suffix sums)."""
    n, H = _check(n, H, exact)
    one = Fraction(1) if exact else 1.0
    r = [0 * one] * (n - 1) + [one]
    for _ in range(H):
        out, acc = [0 * one] * n, 0 * one
        for i in range(n, 0, -1):
            acc += r[i - 1] / i
            out[i - 1] = acc
        r = out
    return r


def last_row_h(n: int, H: int, exact: bool = True) -> list:
    """The last row of M^H as (1/n) h_{H-1}(1/j, ..., 1/n) (module docstring); H = 0 gives the unit row."""
    n, H = _check(n, H, exact)
    one = Fraction(1) if exact else 1.0
    if H == 0:
        return [0 * one] * (n - 1) + [one]
    m = H - 1
    E = [one] + [0 * one] * m         # h_0 .. h_m of the empty suffix
    row = [0 * one] * n
    for j in range(n, 0, -1):
        x = one / j
        for deg in range(1, m + 1):   # E_j[deg] = E_{j+1}[deg] + x E_j[deg - 1], in increasing degree
            E[deg] = E[deg] + x * E[deg - 1]
        row[j - 1] = E[m] / n
    return row


def residual_row(n: int, H: int, alpha, exact: bool = True) -> list:
    """The last row of N^H, N = (1 - alpha) I + alpha M, as sum_k C(H, k) (1-alpha)^{H-k} alpha^k (M^k)_{n .}."""
    n, H = _check(n, H, exact)
    a = Fraction(alpha) if exact else float(alpha)
    if not 0 <= a <= 1:
        raise InputError(f"alpha must lie in [0, 1], got {alpha}")
    out = [0 * a] * n
    for k in range(H + 1):
        w = math.comb(H, k) * (1 - a) ** (H - k) * a**k
        if w:
            for j, v in enumerate(last_row_h(n, k, exact)):
                out[j] += w * v
    return out


def residual_row_direct(n: int, H: int, alpha, exact: bool = True) -> list:
    """The same row by H products r <- r N (the check of :func:`residual_row`)."""
    n, H = _check(n, H, exact)
    a = Fraction(alpha) if exact else float(alpha)
    r = [0 * a] * (n - 1) + [1 + 0 * a]
    for _ in range(H):
        out, acc = [0 * a] * n, 0 * a
        for i in range(n, 0, -1):
            acc += r[i - 1] / i
            out[i - 1] = (1 - a) * r[i - 1] + a * acc
        r = out
    return r


def density(y, H: int) -> np.ndarray:
    """rho_H(y) = (ln(1/y))^{H-1} / (H-1)!, y in (0, 1], H >= 1 (the continuous limit of n (M^H)_{n, yn})."""
    H = require_int(H, "H", 1, MAX_DEPTH)
    y = np.asarray(y, dtype=float)
    return np.log(1.0 / y) ** (H - 1) / math.factorial(H - 1)


def residual_density(y, H: int, alpha: float) -> np.ndarray:
    """The continuous limit of n (N^H)_{n, yn} for y < 1: sum_{k >= 1} C(H,k) (1-alpha)^{H-k} alpha^k rho_k(y)."""
    return sum(math.comb(H, k) * (1 - alpha) ** (H - k) * alpha**k * density(y, k) for k in range(1, H + 1))


def continuum_gap(n: int, H: int, y_min: float = 0.05, y_max: float = 0.95) -> float:
    """max over j with y = j/n in [y_min, y_max] of |n (M^H)_{n j} - rho_H(j/n)| (float route)."""
    row = np.array(last_row_h(n, H, exact=False))
    j = np.arange(1, n + 1)
    sel = (j / n >= y_min) & (j / n <= y_max)
    return float(np.max(np.abs(n * row[sel] - density(j[sel] / n, H))))


def middle_mass(n: int, H: int, exact: bool = False) -> float:
    """The attention-only weight sum_{n/3 < j <= 2n/3} (M^H)_{n j} of the middle third."""
    row = last_row_h(n, H, exact)
    return float(sum(row[n // 3: 2 * n // 3]))


def middle_mass_limit(H: int) -> float:
    """int_{1/3}^{2/3} rho_H(y) dy in closed form: with u = ln(1/y), int rho_H dy = e^{-u} sum_{m < H} u^m / m!
    evaluated between u = ln(3/2) and ln 3 (the incomplete gamma function of integer order)."""
    H = require_int(H, "H", 1, MAX_DEPTH)

    def tail(u: float) -> float:   # int_u^inf e^{-s} s^{H-1}/(H-1)! ds
        return math.exp(-u) * sum(u**m / math.factorial(m) for m in range(H))

    return tail(math.log(1.5)) - tail(math.log(3.0))
