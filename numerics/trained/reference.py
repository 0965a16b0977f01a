"""A second, deliberately plain code path for one BERT layer (the check of :mod:`numerics.trained.encoder`).

A loop over heads with each head's rows of the weight matrices, :func:`scipy.special.softmax`, LayerNorm written
with :func:`numpy.var`, and GELU as z Phi(z) with :func:`scipy.stats.norm.cdf`: no code shared with the
vectorised forward pass. Used by the claim trained.block and its tests.
"""
from __future__ import annotations

import numpy as np
from scipy.special import softmax
from scipy.stats import norm

from numerics.trained.checkpoint import LayerWeights


def reference_layer(X: np.ndarray, w: LayerWeights, H: int, eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(layer output, attention sub-layer output, attentions (H, n, n)) of the documented post-LN block."""
    d = X.shape[1]
    k = d // H

    def ln(Z, g, b):
        return g * (Z - Z.mean(1, keepdims=True)) / np.sqrt(Z.var(1, keepdims=True) + eps) + b

    out = np.zeros_like(X)
    probs = []
    for h in range(H):
        rows = slice(h * k, (h + 1) * k)
        q = X @ w.Wq[rows].T + w.bq[rows]
        kk = X @ w.Wk[rows].T + w.bk[rows]
        v = X @ w.Wv[rows].T + w.bv[rows]
        P = softmax(q @ kk.T / np.sqrt(k), axis=1)
        probs.append(P)
        out += (P @ v) @ w.Wo[:, rows].T
    Y = ln(X + out + w.bo, w.ln1_g, w.ln1_b)
    z = Y @ w.W1.T + w.b1
    return ln(Y + (z * norm.cdf(z)) @ w.W2.T + w.b2, w.ln2_g, w.ln2_b), Y, np.array(probs)
