"""Numba kernels of :mod:`numerics.core.fused` (imported only when Numba is installed; compiled once, cached).

Module-level constants are compile-time constants of the kernels. See :mod:`numerics.core.fused` for the
equations and the error analysis.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

#: columns of a logit tile (two rows' tiles are 4 KiB: L1-resident)
TJ = 256
_OPTS = dict(cache=True, fastmath={"contract"}, nogil=True, error_model="numpy", boundscheck=False)

LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # fdlibm's split of ln 2: k * LN2_HI is exact for |k| < 2^11
LN2_LO = 1.90821492927058770002e-10
X_MIN = -707.0  # below: 0 (e^x < 1e-307)
X_INF = 709.782712893384  # above: inf (log of the largest double)
# 1/m! for m = 13..0, highest first (Taylor coefficients of e^r for Horner's scheme; the remainder on
# |r| <= ln2/2 is below 4e-18); a global tuple is a compile-time constant, so the loop over it unrolls
TAYLOR = tuple(1.0 / float(np.prod(np.arange(1, m + 1))) for m in range(13, -1, -1))


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
        p = 0.0
        for c in TAYLOR:
            p = p * r + c
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
def _logits(lhs, i, R, S0, S1):
    """S0[:] = sum_k lhs[i, k] R[k, :] and S1[:] = sum_k lhs[i + 1, k] R[k, :] (R: p x TJ, one column block of
    [X, 1]^T): two rows share every load of R; k in order, two at a time."""
    p = lhs.shape[1]
    a0 = lhs[i, 0]
    b0 = lhs[i + 1, 0]
    for jj in range(TJ):
        r = R[0, jj]
        S0[jj] = a0 * r
        S1[jj] = b0 * r
    k = 1
    while k + 2 <= p:
        a0, a1 = lhs[i, k], lhs[i, k + 1]
        b0, b1 = lhs[i + 1, k], lhs[i + 1, k + 1]
        for jj in range(TJ):
            r0 = R[k, jj]
            r1 = R[k + 1, jj]
            S0[jj] = (S0[jj] + a0 * r0) + a1 * r1
            S1[jj] = (S1[jj] + b0 * r0) + b1 * r1
        k += 2
    while k < p:
        a0 = lhs[i, k]
        b0 = lhs[i + 1, k]
        for jj in range(TJ):
            r0 = R[k, jj]
            S0[jj] += a0 * r0
            S1[jj] += b0 * r0
        k += 1


@njit(cache=True, fastmath={"contract", "reassoc"}, nogil=True, error_model="numpy", boundscheck=False)
def _second(S0, S1, W, out, i):
    """out[i, c] += sum_jj S0[jj] W[c, jj] and out[i + 1, c] += sum_jj S1[jj] W[c, jj] (W: q x TJ, one column
    block of [XV, 1]^T), two c at a time. ``reassoc`` lets the compiler split each sum into vector lanes (an
    order unlike BLAS's)."""
    q = out.shape[1]
    c = 0
    while c + 2 <= q:
        t00 = 0.0
        t01 = 0.0
        t10 = 0.0
        t11 = 0.0
        for jj in range(TJ):
            w0 = W[c, jj]
            w1 = W[c + 1, jj]
            e0 = S0[jj]
            e1 = S1[jj]
            t00 += e0 * w0
            t01 += e0 * w1
            t10 += e1 * w0
            t11 += e1 * w1
        out[i, c] += t00
        out[i, c + 1] += t01
        out[i + 1, c] += t10
        out[i + 1, c + 1] += t11
        c += 2
    while c < q:
        t0 = 0.0
        t1 = 0.0
        for jj in range(TJ):
            w0 = W[c, jj]
            t0 += S0[jj] * w0
            t1 += S1[jj] * w0
        out[i, c] += t0
        out[i + 1, c] += t1
        c += 1


@njit(**_OPTS)
def _row_pair(lhs, Rb, Wb, n, out, i, S0, S1, bits):
    """out[i] and out[i + 1] = sum_{j < n} exp(<lhs_i, r_j>) w_j over all column blocks (see ``accumulate``)."""
    blocks = Rb.shape[0]
    tail = n - (blocks - 1) * TJ
    for c in range(out.shape[1]):
        out[i, c] = 0.0
        out[i + 1, c] = 0.0
    for b in range(blocks):
        _logits(lhs, i, Rb[b], S0, S1)
        exp_tile(S0, bits, TJ)
        exp_tile(S1, bits, TJ)
        if b == blocks - 1:
            for jj in range(tail, TJ):
                S0[jj] = 0.0
                S1[jj] = 0.0
        _second(S0, S1, Wb[b], out, i)


@njit(**_OPTS)
def accumulate(lhs, Rb, Wb, n, out):
    """out[i, :] = sum_{j < n} exp(<lhs_i, r_j>) w_j for every row of ``lhs`` (an even number of rows), with Rb
    (blocks x p x TJ) and Wb (blocks x q x TJ) the columns r_j and w_j in blocks of TJ (zero past n: the tail
    of the last block is zeroed after the exp). One thread; two TJ-long tiles of logits (4 KiB, L1)."""
    S0 = np.empty(TJ)
    S1 = np.empty(TJ)
    bits = np.empty(TJ, np.int64)
    for g in range(lhs.shape[0] // 2):
        _row_pair(lhs, Rb, Wb, n, out, 2 * g, S0, S1, bits)


@njit(parallel=True, **_OPTS)
def accumulate_parallel(lhs, Rb, Wb, n, out):
    """``accumulate`` with the pairs of rows spread over Numba's threads (prange; its threading layer starts
    only when this is called)."""
    for g in prange(lhs.shape[0] // 2):
        S0 = np.empty(TJ)
        S1 = np.empty(TJ)
        bits = np.empty(TJ, np.int64)
        _row_pair(lhs, Rb, Wb, n, out, 2 * g, S0, S1, bits)
