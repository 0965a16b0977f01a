"""Numba kernel of the standalone energy (imported only when Numba is installed; compiled once, cached).

The shifted pair sum sum_{i,j} (e^{beta s_ij} - 1) of one system, s_ij = <x_i, x_j>, formed once per unordered
pair, in tiles of :data:`TILE` columns (:func:`shifted_pair_sum`): for a column tile [J, E), every row i < E
forms z_j = beta <x_i, x_j> for the tile's j > i and adds expm1(z_j) to a column accumulator ``acc[j - J]``.
The tile's d x TILE coordinates (X^T, 32 KiB at d = 4 and TILE = 512) are re-read by every row while they sit
in the core's L1/L2 caches; the previous kernel ran each row over all j >= i, so at n = 4096 every row streamed
d x 32 KiB of X^T and its 32 KiB buffers from L2 (proofs_notes/core-energy-kernel.md has the measurements).

Per row and tile, z is formed four coordinates at a time (``buf = buf + c0 x0 + c1 x1 + c2 x2 + c3 x3``: one
store per four products, where one pass per coordinate stored the buffer d times; d is padded to a multiple of
four with zero coordinates, which add exact zeros), and the last four coordinates, expm1 and the accumulation
are one loop: z never goes to memory when d <= 4. For d > 4 rows go in pairs (:func:`_two_rows`: each load of X^T serves
two rows; 10% faster at d = 16, 26% at d = 64, where one row's passes wait on the loads). Accumulating by column (a vector of sums, no reduction in the
loop) is what lets that loop vectorise without reassociating additions. The column sums are flushed into a
second accumulator every :func:`flush_rows` ``(n)`` ~ sqrt(n) rows (so that each term passes through at most
sqrt(n) + n/sqrt(n) additions there), then each tile's column sums are added pairwise (log2 TILE) and the tiles
in order (n/TILE). The diagonal terms expm1(beta |x_i|^2) are summed apart; the result is
2 x (the sum over i < j) + the diagonal. Compiled with FMA contraction (``fastmath={"contract"}``; no
reassociation): each a + b c is one rounding where the CPU has FMA, two elsewhere; the bounds below hold either way.

Accuracy of ``expm1`` (measured against mpmath in tests/numerics/test_core_energy_kernel.py): within
:data:`EXPM1_ULPS` units in the last place of the result for |z| <= :data:`Z_MAX`. Reduction z = k ln 2 + r,
|r| <= ln(2)/2 (Cody-Waite: k ln2_hi exact), expm1(r) = r + r^2 P(r), P the Taylor polynomial 1/2! + ... + r^11/13!
by Horner's rule (remainder below 2^-56 of |expm1(r)|), then expm1(z) = 2^k expm1(r) + (2^k - 1): for k = 0
the polynomial alone, so no loss as z -> 0 (the reason for expm1: e^z - 1 would cancel); for k != 0,
|z| > ln(2)/2 and the two terms cancel by at most a factor 4. 2^k is built from the bits of the rounding
shifter (:func:`_bits`, :func:`_double`: bit casts that vectorise), so the whole loop has no call and no branch.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

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
#: columns per tile (a power of two): d x TILE coordinates and three TILE-wide buffers stay in L1/L2
TILE = 512
#: 1/m! for m = 2..13 (Taylor coefficients of expm1 after r)
_C = tuple(1.0 / math.factorial(m) for m in range(2, 14))

_OPTS = dict(cache=True, fastmath={"contract"}, nogil=True, error_model="numpy", boundscheck=False)


@intrinsic
def _bits(typingctx, x):
    """The bits of a float64 as an int64 (a bit cast: no conversion, vectorises)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _double(typingctx, k):
    """The float64 whose bits are the int64 k (a bit cast)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@njit(inline="always", **_OPTS)
def expm1(x):
    """expm1(x) for |x| <= Z_MAX, within EXPM1_ULPS ulp (see the module); inlined into vectorised loops."""
    c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13 = _C
    t = x * LOG2E + SHIFTER
    k = t - SHIFTER  # round(x log2 e), exact
    r = (x - k * LN2_HI) - k * LN2_LO
    p = c12 + r * c13
    p = c11 + r * p
    p = c10 + r * p
    p = c9 + r * p
    p = c8 + r * p
    p = c7 + r * p
    p = c6 + r * p
    p = c5 + r * p
    p = c4 + r * p
    p = c3 + r * p
    p = c2 + r * p
    p = r + (r * r) * p
    s = _double((_bits(t) - _BIAS) << 52)  # 2^k
    return s * p + (s - 1.0)


@njit(**_OPTS)
def expm1_inplace(z, m):
    """z[:m] <- expm1(z[:m]) for |z| <= Z_MAX (the kernel's expm1 on an array: what the tests measure)."""
    for q in range(m):
        z[q] = expm1(z[q])


def flush_rows(n: int) -> int:
    """Rows whose terms a column accumulator adds before it is flushed: ~sqrt(n), which minimises the additions a
    term passes through (rows per flush + flushes)."""
    return max(1, math.isqrt(max(n, 1)))


def tile_width(n: int, d: int) -> int:
    """Columns per tile: TILE for d <= 4, TILE / 2 above (the tile's d x width coordinates, re-read by every row,
    then stay within 32 KiB up to d = 16: measured 28% faster at d = 16 than TILE), or the smallest power of two
    >= n (at least 8) for a smaller system."""
    return min(TILE if d <= 4 else TILE // 2, max(8, 1 << max(0, n - 1).bit_length()))


@njit(**_OPTS)
def pack(X, beta):
    """(beta X, X^T) with the coordinates padded by zeros to a multiple of four: the kernel's operands."""
    n, d = X.shape
    d4 = 4 * ((d + 3) // 4)
    B = np.zeros((n, d4))
    P = np.zeros((d4, n))
    for i in range(n):
        for k in range(d):
            B[i, k] = beta * X[i, k]
            P[k, i] = X[i, k]
    return B, P


@njit(inline="always", **_OPTS)
def _one_row(bi, P, lo, E, d, buf, av):
    """av[q] += expm1(<b_i, p_j>) for j = lo + q in [lo, E): four coordinates per pass, the last pass fused with
    expm1 and the accumulation (for d <= 4 the only pass: z stays in registers)."""
    m = E - lo
    groups = P.shape[0] // 4
    x0, x1 = P[0, lo:E], P[1, lo:E]
    c0, c1 = bi[0], bi[1]
    if groups == 1:
        if d == 2:
            for q in range(m):
                av[q] += expm1(c0 * x0[q] + c1 * x1[q])
        elif d == 3:
            x2, c2 = P[2, lo:E], bi[2]
            for q in range(m):
                av[q] += expm1(c0 * x0[q] + c1 * x1[q] + c2 * x2[q])
        else:
            x2, x3, c2, c3 = P[2, lo:E], P[3, lo:E], bi[2], bi[3]
            for q in range(m):
                av[q] += expm1(c0 * x0[q] + c1 * x1[q] + c2 * x2[q] + c3 * x3[q])
        return
    x2, x3, c2, c3 = P[2, lo:E], P[3, lo:E], bi[2], bi[3]
    for q in range(m):
        buf[q] = c0 * x0[q] + c1 * x1[q] + c2 * x2[q] + c3 * x3[q]
    for h in range(1, groups - 1):
        k = 4 * h
        x0, x1, x2, x3 = P[k, lo:E], P[k + 1, lo:E], P[k + 2, lo:E], P[k + 3, lo:E]
        c0, c1, c2, c3 = bi[k], bi[k + 1], bi[k + 2], bi[k + 3]
        for q in range(m):
            buf[q] = buf[q] + c0 * x0[q] + c1 * x1[q] + c2 * x2[q] + c3 * x3[q]
    k = 4 * groups - 4
    x0, x1, x2, x3 = P[k, lo:E], P[k + 1, lo:E], P[k + 2, lo:E], P[k + 3, lo:E]
    c0, c1, c2, c3 = bi[k], bi[k + 1], bi[k + 2], bi[k + 3]
    for q in range(m):
        av[q] += expm1(buf[q] + c0 * x0[q] + c1 * x1[q] + c2 * x2[q] + c3 * x3[q])


@njit(inline="always", **_OPTS)
def _two_rows(ba, bb, P, lo, E, bufa, bufb, av):
    """:func:`_one_row` for two rows a, b over the same columns (d > 4): each load of P serves both rows, so that
    the passes are bound by the multiplications, not by the loads; av gets a's term, then b's."""
    m = E - lo
    groups = P.shape[0] // 4
    x0, x1, x2, x3 = P[0, lo:E], P[1, lo:E], P[2, lo:E], P[3, lo:E]
    a0, a1, a2, a3 = ba[0], ba[1], ba[2], ba[3]
    b0, b1, b2, b3 = bb[0], bb[1], bb[2], bb[3]
    for q in range(m):
        bufa[q] = a0 * x0[q] + a1 * x1[q] + a2 * x2[q] + a3 * x3[q]
        bufb[q] = b0 * x0[q] + b1 * x1[q] + b2 * x2[q] + b3 * x3[q]
    for g in range(1, groups - 1):
        k = 4 * g
        x0, x1, x2, x3 = P[k, lo:E], P[k + 1, lo:E], P[k + 2, lo:E], P[k + 3, lo:E]
        a0, a1, a2, a3 = ba[k], ba[k + 1], ba[k + 2], ba[k + 3]
        b0, b1, b2, b3 = bb[k], bb[k + 1], bb[k + 2], bb[k + 3]
        for q in range(m):
            bufa[q] = bufa[q] + a0 * x0[q] + a1 * x1[q] + a2 * x2[q] + a3 * x3[q]
            bufb[q] = bufb[q] + b0 * x0[q] + b1 * x1[q] + b2 * x2[q] + b3 * x3[q]
    k = 4 * groups - 4
    x0, x1, x2, x3 = P[k, lo:E], P[k + 1, lo:E], P[k + 2, lo:E], P[k + 3, lo:E]
    a0, a1, a2, a3 = ba[k], ba[k + 1], ba[k + 2], ba[k + 3]
    b0, b1, b2, b3 = bb[k], bb[k + 1], bb[k + 2], bb[k + 3]
    for q in range(m):
        t = av[q] + expm1(bufa[q] + a0 * x0[q] + a1 * x1[q] + a2 * x2[q] + a3 * x3[q])
        av[q] = t + expm1(bufb[q] + b0 * x0[q] + b1 * x1[q] + b2 * x2[q] + b3 * x3[q])


@njit(**_OPTS)
def shifted_pair_sum(B, P, d, width, rows):
    """sum_{i,j} expm1(<b_i, p_j>) over all ordered pairs, for (B, P) of :func:`pack` (d: the unpadded
    coordinates), in tiles of ``width`` columns (a power of two >= 8) with column sums flushed every ``rows``
    rows (see the module)."""
    n, d4 = B.shape
    groups = d4 // 4
    buf = np.empty(width)
    buf2 = np.empty(width)
    acc = np.empty(width)
    acc2 = np.empty(width)
    total = 0.0
    for J in range(0, n, width):
        E = min(n, J + width)
        for q in range(width):
            acc2[q] = 0.0
        for i0 in range(0, E - 1, rows):
            for q in range(width):
                acc[q] = 0.0
            i, stop = i0, min(i0 + rows, E - 1)
            while i < stop:
                lo = max(J, i + 1)  # the pairs i < j of this tile
                if groups == 1 or i + 1 == stop:
                    _one_row(B[i], P, lo, E, d, buf, acc[lo - J:])
                    i += 1
                    continue
                lo2 = max(J, i + 2)  # rows i and i + 1 together from here: each column of P read once for both
                if lo2 > lo:
                    _one_row(B[i], P, lo, lo2, d, buf, acc[lo - J:])
                _two_rows(B[i], B[i + 1], P, lo2, E, buf, buf2, acc[lo2 - J:])
                i += 2
            for q in range(width):
                acc2[q] += acc[q]
        h = width // 2
        while h >= 1:  # the tile's column sums, pairwise (each term through log2(width) additions)
            for q in range(h):
                acc2[q] += acc2[q + h]
            h //= 2
        total += acc2[0]
    diag = 0.0
    for i in range(n):
        s = 0.0
        for k in range(d4):
            s += B[i, k] * P[k, i]
        diag += expm1(s)
    return 2.0 * total + diag
