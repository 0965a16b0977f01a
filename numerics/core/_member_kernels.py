"""Numba kernels of :mod:`numerics.core.member_field` (imported only when Numba is installed; compiled once, cached).

One member at a time, the sums acc_i = sum_j exp(<l_i, r_j>) w_j of the batched one-head field, for the small n
and d of ensembles (n up to a few hundred): the member's columns fit in L1, so the logits of one row are formed,
exponentiated (:func:`exp_row`, vectorised) and summed without a tile buffer,
and there are no per-member BLAS calls (at n = 32, d = 3 a stacked GEMM costs a library call per member and
tile, which is what the NumPy path spends most of its time on).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from numerics.core._fused_kernels import LN2_HI, LN2_LO, LOG2E, TAYLOR, X_INF, X_MIN

_OPTS = dict(cache=True, fastmath={"contract"}, nogil=True, error_model="numpy", boundscheck=False)
#: 1.5 * 2^52: y + SHIFTER rounds y to an integer k held in the low bits of the mantissa (no float -> int
#: conversion, which AVX2 cannot vectorise for 64-bit integers)
SHIFTER = 6755399441055744.0
SHIFT_BITS = 0x4338000000000000  # the bits of SHIFTER: bits(k + SHIFTER) = SHIFT_BITS + k for |k| < 2^51


@njit(**_OPTS)
def exp_row(S, KD, m):
    """S[:m] <- exp(S[:m]): the reduction and polynomial of :func:`numerics.core._fused_kernels.exp_tile`
    (x = k ln 2 + r, degree-13 Taylor polynomial of e^r, 0 below -707, inf above 709.78), with k rounded by
    the shifter and 2^(k-1) assembled from integer bits, so that all three passes vectorise on AVX2."""
    for q in range(m):
        x = S[q]
        y = min(max(x, X_MIN), X_INF)
        kd = y * LOG2E + SHIFTER
        k = kd - SHIFTER
        r = (y - k * LN2_HI) - k * LN2_LO
        p = 0.0
        for c in TAYLOR:
            p = p * r + c
        KD[q] = kd
        p = 0.0 if x < X_MIN else p + p
        S[q] = np.inf if x > X_INF else p
    KI = KD.view(np.int64)
    for q in range(m):
        KI[q] = (KI[q] - SHIFT_BITS + 1022) << 52
    for q in range(m):
        S[q] = S[q] * KD[q]


@njit(**_OPTS)
def exp_array(x):
    """exp of a 1-D array with the member kernel's exp (for tests against ``np.exp``)."""
    out = x.copy()
    exp_row(out, np.empty(x.size), x.size)
    return out


@njit(**_OPTS)
def _row_logits(lhs, right, b, i, first, S):
    """S[j - first] = sum_k lhs[b, i, k] right[b, k, j] for j = first..n-1 (k in order)."""
    n = right.shape[2]
    a = lhs[b, i, 0]
    for j in range(first, n):
        S[j - first] = a * right[b, 0, j]
    for k in range(1, lhs.shape[2]):
        a = lhs[b, i, k]
        for j in range(first, n):
            S[j - first] += a * right[b, k, j]


@njit(**_OPTS)
def member_sums(lhs, right, rhsT, symmetric, acc):
    """acc[b, i, c] = sum_j exp(<lhs[b, i], right[b, :, j]>) rhsT[b, c, j] for every member b.

    ``lhs`` (B, n, p), ``right`` (B, p, n), ``rhsT`` (B, q, n) (the columns w_j as rows: sums over j are
    contiguous), ``acc`` (B, n, q) is overwritten. With ``symmetric`` (Q = K = I and a constant shift, so that
    the weight of (i, j) is that of (j, i)) each pair's weight is computed once, for j >= i, and added to both
    rows, as the NumPy path's upper block triangle does.
    """
    B, n, p = lhs.shape
    q = rhsT.shape[1]
    S = np.empty(n)
    KD = np.empty(n)
    colsT = np.empty((q, n))
    for b in range(B):
        for c in range(q):
            for j in range(n):
                colsT[c, j] = 0.0
        for i in range(n):
            first = i if symmetric else 0
            m = n - first
            _row_logits(lhs, right, b, i, first, S)
            exp_row(S, KD, m)
            for c in range(q):
                t = 0.0
                for j in range(m):
                    t += S[j] * rhsT[b, c, first + j]
                colsT[c, i] += t
            if symmetric:
                for c in range(q):
                    w = rhsT[b, c, i]
                    for j in range(1, m):
                        colsT[c, i + j] += S[j] * w
        for i in range(n):
            for c in range(q):
                acc[b, i, c] = colsT[c, i]
