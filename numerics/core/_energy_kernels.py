r"""Numba kernel of the standalone energy (imported only when Numba is installed; compiled once, cached).

The shifted pair sum :math:`\sum_{i,j} (e^{\beta s_{ij}} - 1)` of one system, :math:`s_{ij} = \langle x_i,
x_j\rangle`, each unordered pair formed once, in tiles of :data:`TILE` columns (:func:`shifted_pair_sum`). The
exponents are :math:`y_{ij} = \langle b_i, x_j\rangle` with :math:`b_i = \beta \log_2(e)\, x_i` (:func:`pack`),
and each term is :math:`2^y - 1 = e^{\beta s} - 1` (:func:`exp2m1`): with :math:`\log_2 e` in the coordinates,
the range reduction :math:`y = k + f` is two exact additions, no multiplication.

Why tiles (proofs_notes/core-energy-kernel.md has the measurements): the first kernel ran each row over all
:math:`j \ge i`, so at :math:`n = 4096` every row streamed :math:`d` rows of 32 KiB of :math:`X^\top` and three
32 KiB buffers from L2; it cost 1.9 ns per pair at :math:`n = 4096, d = 3`, about what a field evaluation costs
per pair. Here, for a column tile :math:`[J, E)`, every row :math:`i < E` adds :math:`2^{y_{ij}} - 1` for the
tile's :math:`j > i` to a column accumulator ``acc[j - J]``, and the tile's coordinates (16 KiB at
:math:`d = 4`) stay in cache while every row re-reads them.

Per row and tile, :math:`y` is formed four coordinates at a time (``buf = buf + c0 x0 + c1 x1 + c2 x2 + c3 x3``:
one store per four products; :math:`d` is padded to a multiple of four with zero coordinates, which add exact
zeros), and the last four coordinates, :func:`exp2m1` and the accumulation are one loop: :math:`y` never goes to
memory when :math:`d \le 4`. For :math:`d > 4` rows go in pairs (:func:`_two_rows`: each load of
:math:`X^\top` serves two rows). Accumulating by column (a vector of sums, no reduction in the loop) lets the loop
vectorise without reassociating additions. The diagonal's halves :math:`(2^{y_{ii}} - 1)/2` go into the same
accumulators, so that twice the total (exact) counts them once. Column sums are flushed into a second
accumulator every :func:`flush_rows` :math:`= \lfloor \sqrt{n} \rfloor` rows, each tile's column sums are added
pairwise and the tiles in order: a term passes through at most :func:`sum_additions` additions (145 at
:math:`n = 4096`, where the first kernel's row sums and NumPy's pairwise sum of the rows counted
:math:`n/8 + \log_2 n + 11 = 535`; never more, checked to :math:`n = 3 \cdot 10^5` and tested to 20,000).
Compiled with FMA contraction (``fastmath={"contract"}``; no reassociation): each :math:`a + b c` is one rounding
where the CPU has FMA, two elsewhere; the bounds hold either way.

Accuracy of :func:`exp2m1` (measured against mpmath in tests/numerics/test_core_energy_kernel.py): within
:data:`EXP2M1_ULPS` units in the last place of :math:`2^y - 1` for :math:`|y| \le` :data:`Z_MAX`
:math:`\log_2 e`. :math:`y = k + f` with :math:`k = \operatorname{round}(y)` (the shifter) and :math:`f = y - k`
exact, :math:`|f| \le 1/2`; :math:`2^f - 1 = f\, Q(f)`, :math:`Q` the degree-11 interpolant of
:math:`(2^f - 1)/f` at the Chebyshev nodes of :math:`[-1/2, 1/2]` (:data:`_C`; within 0.44 ulp), by Horner's
rule; then :math:`2^y - 1 = 2^k (2^f - 1) + (2^k - 1)`: for :math:`k = 0` the polynomial alone, so no loss as
:math:`y \to 0` (the reason for expm1: :math:`e^z - 1` would cancel); for :math:`k \ne 0`,
:math:`|y| \ge 1/2` and the two terms cancel by at most a factor 4. :math:`2^k` is built from the bits of the
shifter (``_bits``, ``_double``: the bit casts of
:mod:`numerics.core._member_kernels`, which vectorise), so the loop has no call and no branch. The
cost of :math:`\log_2 e` in the coordinates: one more rounding in each :math:`b_i` (:math:`\beta \log_2 e` is
rounded, then its product with :math:`x_i`), so the inner product's error is that of :math:`d + 2` roundings
instead of :math:`d + 1`; with :func:`exp2m1` stated at 3 ulp where the first kernel's expm1 was stated at 4, and
the sums above, the kernel's share of :func:`numerics.core.engines.energy_rounding_bound` is not exceeded for any
:math:`n`.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from numerics.core._member_kernels import _bits
from numerics.core._member_kernels import _from_bits as _double

#: :math:`\log_2 e`: the kernel's exponents are :math:`y = \beta \log_2(e) \langle x_i, x_j\rangle` and its terms
#: :math:`2^y - 1 = e^{\beta s} - 1`
LOG2E = 1.4426950408889634
#: :math:`1.5 \cdot 2^{52}`: ``y + SHIFTER`` holds :math:`\operatorname{round}(y)` in the low bits of its mantissa (no
#: float-to-int64 conversion, which AVX2 cannot vectorise)
SHIFTER = 6755399441055744.0
#: the bits of ``SHIFTER`` minus the exponent bias: ``(bits(t) - _BIAS) << 52`` are the bits of :math:`2^k`
_BIAS = 0x4338000000000000 - 1023
#: the largest :math:`|\beta s|` the kernel takes (then :math:`|y| < 722`: :math:`2^k` stays a normal number);
#: callers route larger :math:`|\beta|` to NumPy
Z_MAX = 500.0
#: bound of the kernel's :math:`2^y - 1` against mpmath, in ulp of the result (measured: 2.44 on 29,011 points)
EXP2M1_ULPS = 3.0
#: columns per tile (a power of two): the tile's coordinates and three tile-wide buffers stay in L1/L2
TILE = 512


#: :math:`q_0, \dots, q_{11}` of :math:`Q(f) = \sum_m q_m f^m`, :math:`(2^f - 1)/f` interpolated at the 12 Chebyshev
#: nodes of :math:`[-1/2, 1/2]` (mpmath, 40 digits, each rounded to a double once; the kernel's tests re-derive
#: them): :math:`f Q(f)` is within 0.44 ulp of :math:`2^f - 1` there (the rounding of :math:`q_0 = \ln 2`
#: included), one degree fewer than the Taylor polynomial of the same accuracy
_C = (0.6931471805599453, 0.24022650695910072, 0.055504108664821625, 0.00961812910762848, 0.001333355814640647,
      0.00015403530393370734, 1.5252733841556773e-05, 1.3215486808705563e-06, 1.0178057087733941e-07,
      7.0548973041554995e-09, 4.4558179083360645e-10, 2.5729324177362305e-11)

_OPTS = dict(cache=True, fastmath={"contract"}, nogil=True, error_model="numpy", boundscheck=False)


@njit(inline="always", **_OPTS)
def exp2m1(y):
    r""":math:`2^y - 1` for :math:`|y| \le` ``Z_MAX`` :math:`\log_2 e`, within ``EXP2M1_ULPS`` ulp (see the
    module); inlined into vectorised loops."""
    q0, q1, q2, q3, q4, q5, q6, q7, q8, q9, q10, q11 = _C
    t = y + SHIFTER
    k = t - SHIFTER  # round(y)
    f = y - k  # exact (Sterbenz), |f| <= 1/2
    p = q10 + f * q11
    p = q9 + f * p
    p = q8 + f * p
    p = q7 + f * p
    p = q6 + f * p
    p = q5 + f * p
    p = q4 + f * p
    p = q3 + f * p
    p = q2 + f * p
    p = q1 + f * p
    p = q0 + f * p
    p = f * p  # 2^f - 1
    s = _double((_bits(t) - _BIAS) << 52)  # 2^k
    return s * p + (s - 1.0)


@njit(**_OPTS)
def exp2m1_inplace(y, m):
    """``y[:m]`` becomes ``exp2m1(y[:m])`` (the kernel's exp2m1 on an array: what the tests measure)."""
    for q in range(m):
        y[q] = exp2m1(y[q])


def flush_rows(n: int) -> int:
    r"""Rows whose terms a column accumulator adds before it is flushed: :math:`\lfloor \sqrt{n} \rfloor`, which
    minimises the additions a term passes through (rows per flush plus flushes)."""
    return max(1, math.isqrt(max(n, 1)))


def tile_width(n: int, d: int) -> int:
    r"""Columns per tile: ``TILE`` for :math:`d \le 4`, half of it above (the tile's coordinates, re-read by every
    row, then stay within 32 KiB up to :math:`d = 16`: measured 28% faster there than ``TILE``), or the smallest
    power of two not below :math:`n` (at least 8) for a smaller system."""
    return min(TILE if d <= 4 else TILE // 2, max(8, 1 << max(0, n - 1).bit_length()))


def sum_additions(n: int, d: int) -> int:
    """The most additions a term passes through in :func:`shifted_pair_sum` (the module's accounting):
    rows per flush + flushes + the tile's pairwise levels + tiles."""
    rows, width = flush_rows(n), tile_width(n, d)
    return rows + -(-n // rows) + (width.bit_length() - 1) + -(-n // width)


@njit(**_OPTS)
def pack(X, beta):
    r"""(:math:`\beta \log_2(e) X`, :math:`X^\top`) with the coordinates padded by zeros to a multiple of four: the
    kernel's operands."""
    n, d = X.shape
    d4 = 4 * ((d + 3) // 4)
    B = np.zeros((n, d4))
    P = np.zeros((d4, n))
    c = beta * LOG2E
    for i in range(n):
        for k in range(d):
            B[i, k] = c * X[i, k]
            P[k, i] = X[i, k]
    return B, P


@njit(inline="always", **_OPTS)
def _one_row(bi, P, lo, E, d, buf, av):
    r"""``av[q] += exp2m1(y)``, :math:`y = \langle b_i, p_j\rangle`, for :math:`j` = ``lo + q`` in ``[lo, E)``:
    four coordinates per pass, the last pass fused with exp2m1 and the accumulation (for :math:`d \le 4` the only
    pass: :math:`y` stays in registers)."""
    m = E - lo
    groups = P.shape[0] // 4
    x0, x1 = P[0, lo:E], P[1, lo:E]
    c0, c1 = bi[0], bi[1]
    if groups == 1:
        if d == 2:
            for q in range(m):
                av[q] += exp2m1(c0 * x0[q] + c1 * x1[q])
        elif d == 3:
            x2, c2 = P[2, lo:E], bi[2]
            for q in range(m):
                av[q] += exp2m1(c0 * x0[q] + c1 * x1[q] + c2 * x2[q])
        else:
            x2, x3, c2, c3 = P[2, lo:E], P[3, lo:E], bi[2], bi[3]
            for q in range(m):
                av[q] += exp2m1(c0 * x0[q] + c1 * x1[q] + c2 * x2[q] + c3 * x3[q])
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
        av[q] += exp2m1(buf[q] + c0 * x0[q] + c1 * x1[q] + c2 * x2[q] + c3 * x3[q])


@njit(inline="always", **_OPTS)
def _two_rows(ba, bb, P, lo, E, bufa, bufb, av):
    """:func:`_one_row` for two rows a, b over the same columns (:math:`d > 4`): each load of P serves both rows,
    so that the passes are bound by the multiplications, not by the loads; ``av`` gets a's term, then b's."""
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
        t = av[q] + exp2m1(bufa[q] + a0 * x0[q] + a1 * x1[q] + a2 * x2[q] + a3 * x3[q])
        av[q] = t + exp2m1(bufb[q] + b0 * x0[q] + b1 * x1[q] + b2 * x2[q] + b3 * x3[q])


@njit(inline="always", **_OPTS)
def _half_diagonal(bi, P, i):
    """:math:`(2^{y_{ii}} - 1)/2` (halving is exact: the doubled total counts the diagonal once)."""
    s = 0.0
    for k in range(P.shape[0]):
        s += bi[k] * P[k, i]
    return 0.5 * exp2m1(s)


@njit(**_OPTS)
def shifted_pair_sum(B, P, d, width, rows):
    r""":math:`\sum_{i,j} (2^{\langle b_i, p_j\rangle} - 1)` over all ordered pairs, for (B, P) of :func:`pack`
    (``d``: the unpadded coordinates), in tiles of ``width`` columns (a power of two, at least 8) with column sums
    flushed every ``rows`` rows (see the module)."""
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
        for i0 in range(0, E, rows):
            for q in range(width):
                acc[q] = 0.0
            i, stop = i0, min(i0 + rows, E)
            while i < stop:
                lo = max(J, i + 1)  # the pairs i < j of this tile
                if groups == 1 or i + 1 == stop:
                    _one_row(B[i], P, lo, E, d, buf, acc[lo - J:])
                    if i >= J:
                        acc[i - J] += _half_diagonal(B[i], P, i)
                    i += 1
                    continue
                lo2 = max(J, i + 2)  # rows i and i + 1 together from here: each column of P read once for both
                if lo2 > lo:
                    _one_row(B[i], P, lo, lo2, d, buf, acc[lo - J:])
                _two_rows(B[i], B[i + 1], P, lo2, E, buf, buf2, acc[lo2 - J:])
                if i >= J:
                    acc[i - J] += _half_diagonal(B[i], P, i)
                if i + 1 >= J:
                    acc[i + 1 - J] += _half_diagonal(B[i + 1], P, i + 1)
                i += 2
            for q in range(width):
                acc2[q] += acc[q]
        h = width // 2
        while h >= 1:  # the tile's column sums, pairwise (each term through log2(width) additions)
            for q in range(h):
                acc2[q] += acc2[q + h]
            h //= 2
        total += acc2[0]
    return 2.0 * total  # exact: the off-diagonal terms once and the diagonal's halves, doubled
