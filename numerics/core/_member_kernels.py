"""Numba kernels of :mod:`numerics.core.member_field` (imported only when Numba is installed; compiled once, cached).

The sums acc_i = sum_j exp(<l_i, r_j>) w_j of the batched one-head field for the small n and d of ensembles,
with the members as the vector lanes: for each pair (i, j) the logit, the exp (:func:`exp_row`, vectorised)
and the products are formed for a block of members at once. There are no per-member BLAS calls (at n = 32,
d = 3 the NumPy path's stacked GEMMs cost a library call per member and tile, most of its time) and no
n-wide tiles; every loop is a long contiguous one over members.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from numerics.core._fused_kernels import LN2_HI, LN2_LO, LOG2E, TAYLOR, X_INF, X_MIN

#: t(r) = (e^r - 1 - r) / r^2 on |r| <= 1.0001 ln(2) / 2 as a degree-9 polynomial (lowest degree first):
#: mpmath's Chebyshev fit ``chebyfit(t, [-a, a], 10)`` at 40 digits, rounded to doubles. Its error is 1.1e-16
#: in t, so 1.3e-17 relative to e^r after the factor r^2 <= 0.12 (tests/numerics/test_core_member_heads.py
#: checks both, and the whole exp against mpmath); two fewer terms than the Taylor polynomial of t.
EXP_T = (0.5000000000000001, 0.16666666666666669, 0.04166666666662413, 0.008333333333330062,
         0.0013888888917213717, 0.00019841269863053618, 2.4801521295954376e-05, 2.7557268459997064e-06,
         2.7620088445409746e-07, 2.510038549551032e-08)

_OPTS = dict(cache=True, fastmath={"contract"}, nogil=True, error_model="numpy", boundscheck=False)
#: 1.5 * 2^52: y + SHIFTER rounds y to an integer k held in the low bits of the mantissa (no float -> int
#: conversion, which AVX2 cannot vectorise for 64-bit integers)
SHIFTER = 6755399441055744.0
SHIFT_BITS = 0x4338000000000000  # the bits of SHIFTER: bits(k + SHIFTER) = SHIFT_BITS + k for |k| < 2^51
#: lower clamp of :func:`exp2_nonpos`: 2^-1020 = 8.9e-308 is still a normal double (and 2^k by the bits is exact)
Z_FLOOR = -1020.0
LN2 = math.log(2.0)  # ln 2 rounded (one double; exp_row's reduction uses the split LN2_HI + LN2_LO)


@intrinsic
def _bits(typingctx, x):
    """The 64 bits of a double as an int64 (an LLVM bitcast: no memory round trip, so a loop using it
    vectorises as one loop)."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, i):
    """The double whose 64 bits are the int64 ``i`` (the inverse of :func:`_bits`)."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


#: the constants of :func:`exp2_nonpos` (EXP_T, ln 2, the shifter), which a kernel takes as one tuple argument
#: from Python and passes down to its loop: an argument's numbers stay in vector registers across the loop, where
#: constants that Numba compiles in are reloaded from their absolute addresses in every iteration (a movabs and a
#: broadcast each: 20 of the 58 instructions of the several-head kernel's vector iteration, measured 14-16 % of
#: its time)
EXP2_CONSTS = EXP_T + (LN2, SHIFTER)


@njit(**_OPTS)
def exp2_nonpos(z, floor, consts):
    """2^z for z <= 0, inlined into the caller's loop. ``floor``: Z_FLOOR, below which z gives 2^-1020 (a
    normal double under 9e-307; callers' weights are relative to a largest one of at least 2^-866, see
    :mod:`numerics.core._member_heads`), or ``None`` where the caller knows z >= -1020 (no clamp: Numba compiles
    that variant without it). ``consts``: :data:`EXP2_CONSTS`, passed in by the caller (see there).

    z = k + f with k = rint(z) (the shifter's integer) and f = z - k in [-1/2, 1/2] exactly (Sterbenz); e^r with
    r = f ln 2 is 1 + (r + r^2 t(r)), the degree-9 fit :data:`EXP_T` of t summed by Estrin's scheme (a dependency
    chain of about 7 operations instead of Horner's 13: a vectorised Horner is limited by how many of its long
    chains this machine's out-of-order window holds), and 2^k is assembled from the shifter's integer bits by
    :func:`_bits`. Base 2 saves :func:`exp_row`'s two-part reduction x - k ln 2: the callers scale their logits
    by log2(e) instead (one rounding, counted in their bounds). Within 1 ulp of mpmath
    (tests/numerics/test_core_member_heads.py)."""
    t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, ln2, shifter = consts
    if floor is not None:
        z = max(z, floor)
    kd = z + shifter
    r = (z - np.rint(z)) * ln2  # rint(z) = kd - shifter (both round half to even), off kd's dependency chain
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    t = (((t0 + t1 * r) + (t2 + t3 * r) * r2) + ((t4 + t5 * r) + (t6 + t7 * r) * r2) * r4) \
        + (t8 + t9 * r) * r8
    p = 1.0 + (r + r2 * t)
    return p * _from_bits((_bits(kd) - SHIFT_BITS + 1023) << 52)


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
def exp2_nonpos_array(z):
    """:func:`exp2_nonpos` of every entry of a 1-D array (for tests against mpmath)."""
    out = np.empty_like(z)
    for q in range(z.size):
        out[q] = exp2_nonpos(z[q], Z_FLOOR, EXP2_CONSTS)
    return out


#: members per block of lanes: the block's columns, weights and sums (n (p + 2 q) LANES numbers, 100 KiB at
#: n = 32, d = 3) stay in L2 (measured at B = 1024, n = 32, d = 3: 16 lanes 5.6 ms, 64 lanes 5.1 ms, 1024 lanes
#: 8.6 ms per evaluation; one member per row loop, 7-9 ms)
LANES = 64


@njit(**_OPTS)
def member_sums(L, R, W, symmetric, acc):
    """acc[g, i, c, b] = sum_j exp(sum_k L[g, i, k, b] R[g, k, j, b]) W[g, j, c, b] for every member b of every
    block g.

    Members are the vector lanes: ``L`` (G, n, p, LANES), ``R`` (G, p, n, LANES), ``W`` (G, n, q, LANES) and
    ``acc`` (G, n, q, LANES) (overwritten) hold the members in blocks of :data:`LANES` (the last, contiguous
    axis), so every loop below runs over a block of members with the same operations on each (member b's
    arithmetic does not depend on B or on the block it falls in). The logit of (i, j) sums k in order; with
    ``symmetric`` (Q = K = I and a constant shift: the weight of (i, j) is that of (j, i)) each pair's weight
    is computed once, for j >= i, and added to both rows, as the NumPy path's upper block triangle does; row
    i's sums then run over the pairs in the order (0, i), (1, i), ..., (i, i), (i, i + 1), ..., (i, n - 1).
    """
    G, n, p, m = L.shape
    q = W.shape[2]
    S = np.empty(m)
    KD = np.empty(m)
    for g in range(G):
        Lg, Rg, Wg, Ag = L[g], R[g], W[g], acc[g]
        for i in range(n):
            for c in range(q):
                for b in range(m):
                    Ag[i, c, b] = 0.0
        for i in range(n):
            first = i if symmetric else 0
            for j in range(first, n):
                for b in range(m):
                    S[b] = Lg[i, 0, b] * Rg[0, j, b]
                for k in range(1, p):
                    for b in range(m):
                        S[b] += Lg[i, k, b] * Rg[k, j, b]
                exp_row(S, KD, m)
                for c in range(q):
                    for b in range(m):
                        Ag[i, c, b] += S[b] * Wg[j, c, b]
                if symmetric and j > i:
                    for c in range(q):
                        for b in range(m):
                            Ag[j, c, b] += S[b] * Wg[i, c, b]


@njit(**_OPTS)
def identity_sums(X, beta, shift, acc):
    """:func:`member_sums` for Q = K = V = I without the operands: L = [beta x_i, -c], R = [x_j, 1], W = [x_j, 1]
    read from ``X`` (G, n, d, LANES), ``beta`` and ``shift`` (G, LANES); ``acc`` (G, n, d + 1, LANES). The
    same operations in the same order as :func:`member_sums` on those operands (logit: (beta x_i1) x_j1 + ...
    + (beta x_id) x_jd + (-c) 1, symmetric pairs)."""
    G, n, d, m = X.shape
    S = np.empty(m)
    KD = np.empty(m)
    for g in range(G):
        Xg, Ag, bg, cg = X[g], acc[g], beta[g], shift[g]
        for i in range(n):
            for c in range(d + 1):
                for b in range(m):
                    Ag[i, c, b] = 0.0
        for i in range(n):
            for j in range(i, n):
                for b in range(m):
                    S[b] = (bg[b] * Xg[i, 0, b]) * Xg[j, 0, b]
                for k in range(1, d):
                    for b in range(m):
                        S[b] += (bg[b] * Xg[i, k, b]) * Xg[j, k, b]
                for b in range(m):
                    S[b] += -cg[b]
                exp_row(S, KD, m)
                for c in range(d):
                    for b in range(m):
                        Ag[i, c, b] += S[b] * Xg[j, c, b]
                for b in range(m):
                    Ag[i, d, b] += S[b]
                if j > i:
                    for c in range(d):
                        for b in range(m):
                            Ag[j, c, b] += S[b] * Xg[i, c, b]
                    for b in range(m):
                        Ag[j, d, b] += S[b]
