r"""The discrete deep transformer on the sphere: :math:`L` applications of the attention map, written independently.

Layer :math:`l` maps :math:`x_i \leftarrow (x_i + v_i^{(l)}(X)) / \lvert x_i + v_i^{(l)}(X)\rvert` with
:math:`v^{(l)}` the block velocity of :mod:`numerics.core.blocks` for that layer's heads and MLP (module docstring
there). This module recomputes :math:`v^{(l)}` with dense :math:`n \times n` matrices and ``scipy.special.softmax``
(no blocking, no shared code with :func:`numerics.core.blocks.block_velocity`), as the reference of claim
architectures.schedule: the ``layer`` integrator with step 1 on a schedule with layer times
:math:`0, 1, \dots, L-1` must reproduce it to rounding.
"""
from __future__ import annotations

import numpy as np
from scipy.special import softmax

from numerics.core.blocks import ACTIVATIONS, MLP, MultiHead, Schedule


def dense_block_velocity(X: np.ndarray, heads: MultiHead, beta: float, kind: str = "sa", mlp: MLP | None = None,
                         causal: bool = False) -> np.ndarray:
    r""":math:`v_i = P_{x_i}\bigl(\sum_h W_h^\top V_h a_i^h\bigr)` (or the MLP form
    :math:`\frac{1}{H} \sum_h \mathrm{MLP}^{[h]}(H W_h^\top V_h a_i^h)`, shared or per-head MLP), dense, head by head,
    from ``Q``, ``K``, ``V``, ``W`` and the MLP arrays directly."""
    n, d = X.shape
    H = heads.Q.shape[0]
    total = np.zeros((n, d))
    for h in range(H):
        S = beta * heads.scale * (X @ heads.Q[h].T) @ (X @ heads.K[h].T).T  # s_ij = beta c <Q x_i, K x_j>
        if causal:
            S = np.where(np.tri(n, dtype=bool), S, -np.inf)
        if kind == "sa":
            P = softmax(S, axis=1)
        else:
            P = np.exp(S) / n
        y = (P @ (X @ heads.V[h].T)) @ heads.W[h]  # sum_j p_ij W_h^T V_h x_j
        total += y if mlp is None else _dense_mlp(mlp, H * y, h) / H
    return total - np.sum(X * total, axis=1, keepdims=True) * X


def _dense_mlp(mlp: MLP, Y: np.ndarray, h: int) -> np.ndarray:
    """MLP^{[h]}(y) = W2 act(W1 y + b1) + b2 for each row y of Y, read from the weight arrays (head h's slice of
    per-head weights; the shared weights otherwise), with einsum instead of :meth:`MLP.__call__`."""
    pick = (lambda A: A) if mlp.heads is None else (lambda A: A[h])
    Z = np.einsum("md,nd->nm", pick(mlp.W1), Y) + pick(mlp.b1)
    return np.einsum("dm,nm->nd", pick(mlp.W2), ACTIVATIONS[mlp.activation](Z)) + pick(mlp.b2)


def discrete_transformer(X0: np.ndarray, schedule: Schedule, beta: float, kind: str = "sa", causal: bool = False,
                         h: float = 1.0) -> np.ndarray:
    """States after each of the schedule's layers: (L + 1, n, d), starting with X0."""
    X = np.array(X0, dtype=float)
    out = [X.copy()]
    for l in range(schedule.layers):
        mlp = None if schedule.mlps is None else schedule.mlps[l]
        Y = X + h * dense_block_velocity(X, schedule.heads[l], beta, kind, mlp, causal)
        X = Y / np.linalg.norm(Y, axis=1, keepdims=True)
        out.append(X.copy())
    return np.array(out)
