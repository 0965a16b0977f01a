"""Numba kernel of the standalone energy (imported only when Numba is installed; compiled once, cached).

The shifted pair sum sum_{i,j} (e^{beta s_ij} - 1) of one system, s_ij = <x_i, x_j>, formed once per unordered
pair: row i forms z_j = beta <x_i, x_j> for j >= i (d passes of an axpy over a row buffer, so that every loop is
a contiguous one over j and vectorises), turns them into expm1(z_j) in place (:func:`expm1_inplace`, a
polynomial that vectorises, where NumPy's ``expm1`` does one ufunc pass more) and sums them with eight
accumulators: 2 x (the sum over j > i) + the diagonal term. The row sums are returned (the caller adds them with
NumPy's pairwise sum). No BLAS call, no n-wide tile in memory: one pass over the row's terms.

Accuracy of ``expm1`` (measured against mpmath in tests/numerics/test_core_energy_kernel.py): within
:data:`EXPM1_ULPS` units in the last place of the result for |z| <= :data:`Z_MAX`. Reduction z = k ln 2 + r,
|r| <= ln(2)/2 (Cody-Waite: k ln2_hi exact), expm1(r) by its Taylor polynomial to r^13/13! (remainder below
2^-56 of |expm1(r)|), then expm1(z) = 2^k expm1(r) + (2^k - 1): for k = 0 the polynomial alone, so no loss as
z -> 0 (the reason for expm1: e^z - 1 would cancel); for k != 0, |z| > ln(2)/2 and the two terms cancel by at
most a factor 4.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: log2(e), and ln 2 split so that k * LN2_HI is exact for |k| < 2^20 (fdlibm's split)
LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
#: 1.5 * 2^52: z log2(e) + SHIFTER holds round(z log2(e)) in the low bits of its mantissa (no float -> int64
#: conversion, which AVX2 cannot vectorise)
SHIFTER = 6755399441055744.0
#: the bits of SHIFTER minus the exponent bias: (bits(t) - _BIAS) << 52 are the bits of 2^k
_BIAS = 0x4338000000000000 - 1023
#: the largest |z| the kernel takes (2^k stays a normal number: |k| <= 722); callers route larger |beta| to NumPy
Z_MAX = 500.0
#: measured bound of the kernel's expm1 against mpmath, in ulp of the result
EXPM1_ULPS = 4.0
#: 1/m! for m = 2..13 (Taylor coefficients of expm1 after r)
_C = tuple(1.0 / float(np.prod(np.arange(1, m + 1, dtype=float))) for m in range(2, 14))

_OPTS = dict(cache=True, fastmath=False, nogil=True, error_model="numpy", boundscheck=False)


@njit(**_OPTS)
def expm1_inplace(z, w, m):
    """z[:m] <- expm1(z[:m]) for |z| <= Z_MAX; ``w``: scratch of at least m floats (holds 2^k)."""
    wb = w.view(np.int64)
    for q in range(m):
        w[q] = z[q] * LOG2E + SHIFTER
    for q in range(m):
        wb[q] = (wb[q] - _BIAS) << 52  # now w[q] = 2^k as a double
    c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13 = _C
    for q in range(m):
        x = z[q]
        k = (x * LOG2E + SHIFTER) - SHIFTER  # the same rounding as the first pass
        r = (x - k * LN2_HI) - k * LN2_LO
        p = r * c13
        p = r * (c12 + p)
        p = r * (c11 + p)
        p = r * (c10 + p)
        p = r * (c9 + p)
        p = r * (c8 + p)
        p = r * (c7 + p)
        p = r * (c6 + p)
        p = r * (c5 + p)
        p = r * (c4 + p)
        p = r * (c3 + p)
        p = r * (c2 + p)
        p = r + r * p
        s = w[q]
        z[q] = s * p + (s - 1.0)


@njit(**_OPTS)
def _sum8(z, start, stop):
    """sum of z[start:stop] with eight accumulators (vectorises; each adds about (stop - start)/8 terms)."""
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
    q = start
    while q + 8 <= stop:
        a0 += z[q]
        a1 += z[q + 1]
        a2 += z[q + 2]
        a3 += z[q + 3]
        a4 += z[q + 4]
        a5 += z[q + 5]
        a6 += z[q + 6]
        a7 += z[q + 7]
        q += 8
    t = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
    while q < stop:
        t += z[q]
        q += 1
    return t


@njit(**_OPTS)
def shifted_row_sums(X, XT, beta):
    """Row i: expm1(beta s_ii) + 2 sum_{j > i} expm1(beta s_ij), for X (n, d) and XT = X^T contiguous."""
    n, d = X.shape
    buf = np.empty(n)
    w = np.empty(n)
    rows = np.empty(n)
    for i in range(n):
        m = n - i
        for j in range(m):
            buf[j] = 0.0
        for k in range(d):
            c = beta * X[i, k]
            xk = XT[k]
            for j in range(m):
                buf[j] += c * xk[i + j]
        expm1_inplace(buf, w, m)
        rows[i] = 2.0 * _sum8(buf, 1, m) + buf[0]
    return rows
