"""Numba kernel of the several-head field of ensembles (imported only when Numba is installed; compiled once,
cached): :func:`numerics.core.batch_field.make_batch_block_field` with ``engine="numba"``.

The field of :mod:`numerics.core.blocks` without MLP, schedule or mask,

    v_i = P_{x_i}( sum_h W_h^T a_i^h ),   a_i^h = sum_j p_ij^h V_h x_j  (sa)   or   (1/n) sum_j e^{s_ij^h} V_h x_j  (usa),
    s_ij^h = beta c <Q_h x_i, K_h x_j>,

is evaluated in the heads' rank-k factors: q_i = beta c Q_h x_i, k_j = K_h x_j and u_j = V_h x_j are k-vectors
(k = 2 in the issue's case), so a logit costs k products and a weighted sum k + 1, where the NumPy path
(:func:`numerics.core.batch_field.batch_block_velocity`, the single system's order) contracts over d for both
(its logits are <beta c K_h^T Q_h x_i, x_j> and its sums run over [x_j, 1] before V_h and W_h). The members
are the vector lanes, as in :mod:`numerics.core._member_kernels`: every loop runs over a block of members with
the same operations on each, so a member's result does not depend on B or on the block it falls in. A sum over
the rank k is a pass over the lanes per term (:func:`_dots`): a loop over k inside the loop over lanes does not
vectorise, since k is not known when the kernel is compiled (measured 6-10 times slower at k = 1 and 3, and the
norms of the rows' shifts a tenth of the whole kernel at k = 2).

The logits are formed in base 2, z_ij = <q_i, k_j> with q_i = log2(e) beta c Q_h x_i (one more rounding of
q_i), and the weights are 2^{z_ij - c_i} (the inlined :func:`numerics.core._member_kernels.exp2_nonpos`, which
needs no two-part reduction by ln 2). The shift c_i of row i is the Cauchy-Schwarz bound
|q_i| max_j |k_j| >= max_j z_ij instead of the exact row maximum (the NumPy path's shift), so that a row is one
pass over j: logit, weight and the weighted sums together, with no pass for the maximum and no stored logits.
Any shift gives the same weights up to rounding (sa divides it out; usa multiplies by e^{c_i ln 2}/n afterwards,
as the NumPy path does with its shift), and since every logit is >= -c_i, all weights lie in [2^{-2 c_i}, 1]:
while 2 c_i ln 2 <= :data:`GAP` (600) they are normal doubles, as accurate as with the exact maximum. A member
whose bound exceeds that (|beta| c |Q_h x| |K_h x| above 300) takes the exact maximum of its row instead, in a
pass that runs only for rows where some member needs it (each member's shift depends on its own numbers only).
usa's e^{c_i ln 2} overflows only where the exact maximum's does (it is at most e^300 otherwise); an overflow is
an ``inf`` in the result, which the caller reports.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from numerics.core._member_kernels import _OPTS, EXP2_CONSTS, LANES, LN2, LOG2E, Z_FLOOR, exp2_nonpos, exp_row

#: largest 2 c_i ln 2 for which row i keeps the bound as shift: its weights are then >= e^-600 = 2.6e-261
GAP = 600.0


@njit(**_OPTS)
def _dots(p, r, i, j, out):
    """out[b] = <p_i, r_j> of every lane b, the k products summed in order (a pass over the lanes per term: a sum
    over k inside the lane loop would not vectorise, since k is not known when the kernel is compiled)."""
    k, m = p.shape[1], p.shape[2]
    for b in range(m):
        out[b] = p[i, 0, b] * r[j, 0, b]
    for a in range(1, k):
        for b in range(m):
            out[b] += p[i, a, b] * r[j, a, b]


@njit(**_OPTS)
def _row_sums(q, kk, u, i, kmax, shift, top, s, num, den, consts):
    """num[a, b] = sum_j 2^{z_ij - shift_b} u_j[a] and den[b] = sum_j 2^{z_ij - shift_b} (j in order) for row i
    of every lane b, with shift[b] the bound c_i (or the exact row maximum where 2 c_i ln 2 > GAP)."""
    n, k, m = kk.shape
    limit = 0.5 * GAP * LOG2E
    _dots(q, q, i, i, shift)
    exact = False
    for b in range(m):
        shift[b] = np.sqrt(shift[b]) * kmax[b]
    for b in range(m):
        exact |= shift[b] > limit
    if exact:
        _dots(q, kk, i, 0, top)
        for j in range(1, n):
            _dots(q, kk, i, j, s)
            for b in range(m):
                top[b] = np.maximum(top[b], s[b])
        for b in range(m):
            if shift[b] > limit:
                shift[b] = top[b]
    for a in range(k):
        for b in range(m):
            num[a, b] = 0.0
    for b in range(m):
        den[b] = 0.0
    # the weights' clamp is needed only where some lane takes its exact maximum (below the gap every
    # z >= -2 c_i >= -866): without it the loop is one operation shorter
    if exact:
        _weighted_sums(q, kk, u, i, shift, s, num, den, Z_FLOOR, consts)
    else:
        _weighted_sums(q, kk, u, i, shift, s, num, den, None, consts)


@njit(**_OPTS)
def _weighted_sums(q, kk, u, i, shift, s, num, den, floor, consts):
    """The pass over j of :func:`_row_sums` (``floor``: see :func:`numerics.core._member_kernels.exp2_nonpos`)."""
    n, k, m = kk.shape
    if k == 2:
        # the heads, written out so that the loop vectorises over the lanes; the shift is folded into the
        # logit's second product (two dependent FMAs instead of a product, an FMA and a subtraction). Two vectors
        # per iteration (lanes b and b + m/2, sharing the exp's constants) measured 2-5 % faster at 64 lanes with
        # the constants compiled in, 1 % with them in registers (``consts``), and 3 times slower below 48 lanes
        # (the halves too short for the vectorised loop): not kept.
        for j in range(n):
            for b in range(m):
                w = exp2_nonpos(q[i, 0, b] * kk[j, 0, b] + (q[i, 1, b] * kk[j, 1, b] - shift[b]), floor, consts)
                den[b] += w
                num[0, b] += w * u[j, 0, b]
                num[1, b] += w * u[j, 1, b]
    else:
        for j in range(n):
            _dots(q, kk, i, j, s)
            for b in range(m):
                s[b] = exp2_nonpos(s[b] - shift[b], floor, consts)
                den[b] += s[b]
            for a in range(k):
                for b in range(m):
                    num[a, b] += s[b] * u[j, a, b]


@njit(**_OPTS)
def heads_field(X, Q, K, V, W, coef, usa, out, consts):
    """out[b] = the projected several-head field of member b.

    ``X`` (B, n, d) holds the members' states and ``out`` (B, n, d) is overwritten; ``Q``, ``K``, ``V``, ``W``
    (H, k, d) are shared by all members; ``coef`` (B,) is beta c of each member (c the heads' scale); ``usa``:
    unnormalised weights (1/n) e^{s}; ``consts``: :data:`numerics.core._member_kernels.EXP2_CONSTS` (an argument,
    so that the exp's constants stay in registers). Members are taken in blocks of min(B, :data:`LANES`) vector
    lanes, copied into the member-last layout here (a last, partial block is padded with copies of member 0, whose
    results are dropped).

    Verified by: core.ensemble-members (members against single runs) and tests/numerics/test_core_member_heads.py
    (the field within :func:`numerics.core.batch_field.heads_rounding_bound` of the NumPy path).
    """
    B, n, d = X.shape
    m = min(B, LANES)
    Xg = np.empty((n, d, m))
    Og = np.empty((n, d, m))
    cg = np.empty(m)
    for start in range(0, B, m):
        count = min(m, B - start)
        for b in range(m):
            src = start + b if b < count else 0
            cg[b] = coef[src]
            for i in range(n):
                for c in range(d):
                    Xg[i, c, b] = X[src, i, c]
        _block_field(Xg, Q, K, V, W, cg, usa, Og, consts)
        for b in range(count):
            for i in range(n):
                for c in range(d):
                    out[start + b, i, c] = Og[i, c, b]


@njit(**_OPTS)
def _block_field(Xg, Q, K, V, W, cg, usa, Og, consts):
    """Og[i, :, b] = the projected field of lane b for one block of lanes (``Xg``, ``Og`` (n, d, m))."""
    n, d, m = Xg.shape
    H, k = Q.shape[0], Q.shape[1]
    q = np.empty((n, k, m))
    kk = np.empty((n, k, m))
    u = np.empty((n, k, m))
    kmax = np.empty(m)
    shift = np.empty(m)
    top = np.empty(m)
    s = np.empty(m)
    KD = np.empty(m)
    num = np.empty((k, m))
    den = np.empty(m)
    for i in range(n):
        for c in range(d):
            for b in range(m):
                Og[i, c, b] = 0.0
    for h in range(H):
        Qh, Kh = Q[h], K[h]
        Vh, Wh = V[h], W[h]
        # the rank-k factors of every row: q_i = log2(e) beta c Q_h x_i, k_j = K_h x_j, u_j = V_h x_j
        # (three columns of x per pass: a third of the loads and stores of the sums)
        for i in range(n):
            for a in range(k):
                for b in range(m):
                    q[i, a, b] = Qh[a, 0] * Xg[i, 0, b]
                    kk[i, a, b] = Kh[a, 0] * Xg[i, 0, b]
                    u[i, a, b] = Vh[a, 0] * Xg[i, 0, b]
                c = 1
                while c + 3 <= d:
                    q0, q1, q2 = Qh[a, c], Qh[a, c + 1], Qh[a, c + 2]
                    k0, k1, k2 = Kh[a, c], Kh[a, c + 1], Kh[a, c + 2]
                    v0, v1, v2 = Vh[a, c], Vh[a, c + 1], Vh[a, c + 2]
                    for b in range(m):
                        x0, x1, x2 = Xg[i, c, b], Xg[i, c + 1, b], Xg[i, c + 2, b]
                        q[i, a, b] += (q0 * x0 + q1 * x1) + q2 * x2
                        kk[i, a, b] += (k0 * x0 + k1 * x1) + k2 * x2
                        u[i, a, b] += (v0 * x0 + v1 * x1) + v2 * x2
                    c += 3
                while c < d:
                    for b in range(m):
                        q[i, a, b] += Qh[a, c] * Xg[i, c, b]
                        kk[i, a, b] += Kh[a, c] * Xg[i, c, b]
                        u[i, a, b] += Vh[a, c] * Xg[i, c, b]
                    c += 1
                for b in range(m):
                    q[i, a, b] *= cg[b] * LOG2E
        # max_j |k_j| of every lane, for the rows' shifts
        for b in range(m):
            kmax[b] = 0.0
        for j in range(n):
            _dots(kk, kk, j, j, top)
            for b in range(m):  # np.maximum: a vector max (the builtin max measured twice as slow here)
                kmax[b] = np.maximum(kmax[b], top[b])
        for b in range(m):
            kmax[b] = np.sqrt(kmax[b])
        for i in range(n):
            _row_sums(q, kk, u, i, kmax, shift, top, s, num, den, consts)
            if usa:  # a = (sum_j w_ij u_j) e^{shift ln 2} / n; that is inf when it overflows (the caller reports it)
                for b in range(m):
                    top[b] = shift[b] * LN2
                exp_row(top, KD, m)
                for a in range(k):
                    for b in range(m):
                        num[a, b] *= top[b] / n
            else:
                for a in range(k):
                    for b in range(m):
                        num[a, b] /= den[b]
            # W_h^T a_i^h, added head after head (h in order)
            if k == 2:  # both terms in one pass over the lanes (the same order: a = 0, then a = 1)
                for c in range(d):
                    w0, w1 = Wh[0, c], Wh[1, c]
                    for b in range(m):
                        Og[i, c, b] = (Og[i, c, b] + w0 * num[0, b]) + w1 * num[1, b]
            else:
                for c in range(d):
                    for a in range(k):
                        w = Wh[a, c]
                        for b in range(m):
                            Og[i, c, b] += w * num[a, b]
    # the tangent projection v - (<x, v> / <x, x>) x
    for i in range(n):
        for b in range(m):
            top[b] = Xg[i, 0, b] * Og[i, 0, b]
            den[b] = Xg[i, 0, b] * Xg[i, 0, b]
        for c in range(1, d):
            for b in range(m):
                top[b] += Xg[i, c, b] * Og[i, c, b]
                den[b] += Xg[i, c, b] * Xg[i, c, b]
        for b in range(m):
            top[b] /= den[b]
        for c in range(d):
            for b in range(m):
                Og[i, c, b] -= top[b] * Xg[i, c, b]
