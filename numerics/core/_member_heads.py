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
the same operations on each, so a member's result does not depend on B or on the block it falls in. A row's
logits are shifted by their exact maximum (the NumPy path's shift), so sa weights never overflow and the
largest is 1; usa multiplies by e^{shift}/n afterwards, as the NumPy path does (an overflow is an ``inf`` in
the result, which the caller reports).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from numerics.core._member_kernels import _OPTS, exp_row


@njit(**_OPTS)
def _logits(q, kk, i, j, S):
    """S[b] = <q_i, k_j> of every lane b, the k products summed in order."""
    k, m = q.shape[1], q.shape[2]
    for b in range(m):
        S[b] = q[i, 0, b] * kk[j, 0, b]
    for a in range(1, k):
        for b in range(m):
            S[b] += q[i, a, b] * kk[j, a, b]


@njit(**_OPTS)
def heads_field(X, Q, K, V, W, coef, usa, out):
    """out[g, i, :, b] = the projected several-head field of member b of block g.

    ``X`` (G, n, d, LANES) holds the members' states in blocks (members last); ``Q``, ``K``, ``V``, ``W``
    (H, k, d) are shared by all members; ``coef`` (G, LANES) is beta c of each member (c the heads' scale);
    ``usa``: unnormalised weights (1/n) e^{s}; ``out`` (G, n, d, LANES) is overwritten.

    Verified by: core.ensemble-members (members against single runs) and tests/numerics/test_core_member_heads.py
    (the field within :func:`numerics.core.batch_field.heads_rounding_bound` of the NumPy path).
    """
    G, n, d, m = X.shape
    H, k = Q.shape[0], Q.shape[1]
    q = np.empty((n, k, m))
    kk = np.empty((n, k, m))
    u = np.empty((n, k, m))
    S = np.empty(m)
    KD = np.empty(m)
    top = np.empty(m)
    num = np.empty((k, m))
    den = np.empty(m)
    for g in range(G):
        Xg, Og, cg = X[g], out[g], coef[g]
        for i in range(n):
            for c in range(d):
                for b in range(m):
                    Og[i, c, b] = 0.0
        for h in range(H):
            Qh, Kh = Q[h], K[h]
            Vh, Wh = V[h], W[h]
            # the rank-k factors of every row: q_i = beta c Q_h x_i, k_j = K_h x_j, u_j = V_h x_j
            for i in range(n):
                for a in range(k):
                    for b in range(m):
                        q[i, a, b] = Qh[a, 0] * Xg[i, 0, b]
                        kk[i, a, b] = Kh[a, 0] * Xg[i, 0, b]
                        u[i, a, b] = Vh[a, 0] * Xg[i, 0, b]
                    for c in range(1, d):
                        for b in range(m):
                            q[i, a, b] += Qh[a, c] * Xg[i, c, b]
                            kk[i, a, b] += Kh[a, c] * Xg[i, c, b]
                            u[i, a, b] += Vh[a, c] * Xg[i, c, b]
                    for b in range(m):
                        q[i, a, b] *= cg[b]
            for i in range(n):
                # the maximum of the row's logits s_ij = <q_i, k_j> (a summed in order)
                for j in range(n):
                    _logits(q, kk, i, j, S)
                    if j == 0:
                        for b in range(m):
                            top[b] = S[b]
                    else:
                        for b in range(m):
                            top[b] = max(top[b], S[b])
                # the same logits again, shifted: w_ij = e^{s_ij - top}; sum_j w_ij u_j and sum_j w_ij, j in order
                for a in range(k):
                    for b in range(m):
                        num[a, b] = 0.0
                for b in range(m):
                    den[b] = 0.0
                for j in range(n):
                    _logits(q, kk, i, j, S)
                    for b in range(m):
                        S[b] -= top[b]
                    exp_row(S, KD, m)
                    for a in range(k):
                        for b in range(m):
                            num[a, b] += S[b] * u[j, a, b]
                    for b in range(m):
                        den[b] += S[b]
                if usa:  # a = (sum_j w_ij u_j) e^{shift} / n; e^{shift} is inf when it overflows (the caller reports it)
                    for b in range(m):
                        S[b] = top[b]
                    exp_row(S, KD, m)
                    for a in range(k):
                        for b in range(m):
                            num[a, b] *= S[b] / n
                else:
                    for a in range(k):
                        for b in range(m):
                            num[a, b] /= den[b]
                # W_h^T a_i^h, added head after head (h in order)
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
