"""Numba kernels of :mod:`numerics.core.fused` (imported only when Numba is installed; compiled once, cached).

Module-level constants are compile-time constants of the kernels. See :mod:`numerics.core.fused` for the
equations and the error analysis.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

#: columns of a logit tile (the tile of one row is 4 KiB: L1-resident)
TJ = 256
_OPTS = dict(cache=True, fastmath={"contract"}, nogil=True, error_model="numpy", boundscheck=False)

LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # fdlibm's split of ln 2: k * LN2_HI is exact for |k| < 2^11
LN2_LO = 1.90821492927058770002e-10
X_MIN = -707.0  # below: 0 (e^x < 1e-307)
X_INF = 709.782712893384  # above: inf (log of the largest double)
# 1/m! for m = 0..13 (Taylor coefficients of e^r; the remainder on |r| <= ln2/2 is below 4e-18)
C0, C1, C2, C3 = 1.0, 1.0, 1.0 / 2, 1.0 / 6
C4, C5, C6, C7 = 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040
C8, C9, C10, C11 = 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800
C12, C13 = 1.0 / 479001600, 1.0 / 6227020800


@njit(**_OPTS)
def exp_tile(S, bits, m):
    """S[:m] <- exp(S[:m]) in two vectorisable passes: reduction x = k ln2 + r and the polynomial of e^r, then
    the factor 2 * 2^(k-1) from exponent bits (k <= 1024 at x <= log(DBL_MAX), so k - 1 + 1023 <= 2046)."""
    F = bits.view(np.float64)
    for q in range(m):
        x = S[q]
        y = min(max(x, X_MIN), X_INF)
        k = np.floor(y * LOG2E + 0.5)
        r = (y - k * LN2_HI) - k * LN2_LO
        p = C13
        p = p * r + C12
        p = p * r + C11
        p = p * r + C10
        p = p * r + C9
        p = p * r + C8
        p = p * r + C7
        p = p * r + C6
        p = p * r + C5
        p = p * r + C4
        p = p * r + C3
        p = p * r + C2
        p = p * r + C1
        p = p * r + C0
        bits[q] = (np.int64(k) + 1022) << 52
        p = 0.0 if x < X_MIN else p + p
        S[q] = np.inf if x > X_INF else p
    for q in range(m):
        S[q] = S[q] * F[q]


@njit(**_OPTS)
def exp_array(x):
    """exp of a 1-D array with the kernel's exp (for tests against ``np.exp``)."""
    out = x.copy()
    bits = np.empty(x.size, np.int64)
    exp_tile(out, bits, x.size)
    return out


@njit(**_OPTS)
def _logits(lhs, i, R, S):
    """S[:TJ] = sum_k lhs[i, k] R[k, :] (R: p x TJ, one column block of [X, 1]^T), k in order, four at a time."""
    p = lhs.shape[1]
    k = 0
    if p >= 4:
        a0, a1, a2, a3 = lhs[i, 0], lhs[i, 1], lhs[i, 2], lhs[i, 3]
        for jj in range(TJ):
            S[jj] = ((a0 * R[0, jj] + a1 * R[1, jj]) + a2 * R[2, jj]) + a3 * R[3, jj]
        k = 4
    else:
        a0 = lhs[i, 0]
        for jj in range(TJ):
            S[jj] = a0 * R[0, jj]
        k = 1
    while k + 4 <= p:
        a0, a1, a2, a3 = lhs[i, k], lhs[i, k + 1], lhs[i, k + 2], lhs[i, k + 3]
        for jj in range(TJ):
            S[jj] = (((S[jj] + a0 * R[k, jj]) + a1 * R[k + 1, jj]) + a2 * R[k + 2, jj]) + a3 * R[k + 3, jj]
        k += 4
    while k < p:
        a0 = lhs[i, k]
        for jj in range(TJ):
            S[jj] = S[jj] + a0 * R[k, jj]
        k += 1


@njit(cache=True, fastmath={"contract", "reassoc"}, nogil=True, error_model="numpy", boundscheck=False)
def _second(S, W, out, i):
    """out[i, c] += sum_jj S[jj] W[c, jj] (W: q x TJ, one column block of [XV, 1]^T), four c at a time.
    ``reassoc`` lets the compiler split each sum into vector lanes (an order unlike BLAS's)."""
    q = out.shape[1]
    c = 0
    while c + 4 <= q:
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        t3 = 0.0
        for jj in range(TJ):
            e = S[jj]
            t0 += e * W[c, jj]
            t1 += e * W[c + 1, jj]
            t2 += e * W[c + 2, jj]
            t3 += e * W[c + 3, jj]
        out[i, c] += t0
        out[i, c + 1] += t1
        out[i, c + 2] += t2
        out[i, c + 3] += t3
        c += 4
    while c < q:
        t0 = 0.0
        for jj in range(TJ):
            t0 += S[jj] * W[c, jj]
        out[i, c] += t0
        c += 1


@njit(parallel=True, **_OPTS)
def accumulate(lhs, Rb, Wb, n, out):
    """out[i, :] = sum_{j < n} exp(<lhs_i, r_j>) w_j for every row of ``lhs``, with Rb (blocks x p x TJ) and
    Wb (blocks x q x TJ) the columns r_j and w_j in blocks of TJ (zero past n: the tail of the last block is
    zeroed after the exp). Rows run in parallel (prange); each owns one TJ-long tile of logits (L1)."""
    m = lhs.shape[0]
    blocks = Rb.shape[0]
    tail = n - (blocks - 1) * TJ
    for i in prange(m):
        S = np.empty(TJ)
        bits = np.empty(TJ, np.int64)
        for c in range(out.shape[1]):
            out[i, c] = 0.0
        for b in range(blocks):
            _logits(lhs, i, Rb[b], S)
            exp_tile(S, bits, TJ)
            if b == blocks - 1:
                for jj in range(tail, TJ):
                    S[jj] = 0.0
            _second(S, Wb[b], out, i)
