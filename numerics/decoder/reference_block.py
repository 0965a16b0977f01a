"""A second, deliberately plain code path for one decoder block (the check of :mod:`numerics.decoder.forward`).

Written from the documented block, sharing no code with the vectorised forward pass: a loop over query heads
with each head's rows of the weights, the key/value head of query head h computed here as h H_kv / H (integer
division), the rotary embedding as multiplication of the complex numbers c_p + i c_{p + k/2} by
e^{i t theta_p}, the causal mask from :func:`numpy.triu_indices`, :func:`scipy.special.softmax`, RMSNorm through
the row norm |x| / sqrt(d), LayerNorm through :func:`numpy.var`, SiLU as z e^{-log(1 + e^{-z})} and GPT-2's
GELU as z sigmoid(2 u) with u = sqrt(2/pi) (z + 0.044715 z^3) (the same function as z (1 + tanh u) / 2).
Used by the claim decoder.block and its tests.
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax

from numerics.decoder.weights import BlockWeights, DecoderConfig


def _norm(X: np.ndarray, g: np.ndarray, b: np.ndarray | None, cfg: DecoderConfig) -> np.ndarray:
    if cfg.family == "llama":
        rms = np.linalg.norm(X, axis=1, keepdims=True) / np.sqrt(X.shape[1])
        return X / np.sqrt(rms**2 + cfg.norm_eps) * g
    return (X - X.mean(1, keepdims=True)) / np.sqrt(X.var(1, keepdims=True) + cfg.norm_eps) * g + b


def _rotate(Z: np.ndarray, base: float) -> np.ndarray:
    """Rows t of Z (n, k): (c_p + i c_{p+k/2}) e^{i t base^{-2p/k}} back to real coordinates."""
    n, k = Z.shape
    half = k // 2
    theta = np.power(float(base), -2.0 * np.arange(half) / k)
    z = (Z[:, :half] + 1j * Z[:, half:]) * np.exp(1j * np.arange(n)[:, None] * theta[None, :])
    return np.concatenate([z.real, z.imag], axis=1)


def _plus(x: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    return x if b is None else x + b


def reference_block(X: np.ndarray, w: BlockWeights, cfg: DecoderConfig
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(block output, residual after attention, attentions (H, n, n)) for token states X (n, d) at positions
    0 .. n - 1."""
    n = X.shape[0]
    k, H, Hkv = cfg.d_head, cfg.heads, cfg.kv_heads
    Y = _norm(X, w.attn_norm_g, w.attn_norm_b, cfg)
    out = np.zeros_like(X)
    probs = []
    upper = np.triu_indices(n, 1)
    for h in range(H):
        g = h * Hkv // H
        qs, ks = slice(h * k, (h + 1) * k), slice(g * k, (g + 1) * k)
        q = _plus(Y @ w.Wq[qs].T, None if w.bq is None else w.bq[qs])
        kk = _plus(Y @ w.Wk[ks].T, None if w.bk is None else w.bk[ks])
        v = _plus(Y @ w.Wv[ks].T, None if w.bv is None else w.bv[ks])
        if cfg.rope_base is not None:
            q, kk = _rotate(q, cfg.rope_base), _rotate(kk, cfg.rope_base)
        S = q @ kk.T / np.sqrt(k)
        S[upper] = -np.inf
        P = softmax(S, axis=1)
        probs.append(P)
        out += (P @ v) @ w.Wo[:, qs].T
    Xm = _plus(X + out, w.bo)
    Z = _norm(Xm, w.mlp_norm_g, w.mlp_norm_b, cfg)
    if cfg.family == "llama":
        a = Z @ w.W_gate.T
        hidden = a * np.exp(-np.logaddexp(0.0, -a)) * (Z @ w.W_up.T)
        return Xm + hidden @ w.W_down.T, Xm, np.array(probs)
    a = Z @ w.W_up.T + w.b_up
    u = np.sqrt(2.0 / np.pi) * (a + 0.044715 * a**3)
    return Xm + (a * expit(2.0 * u)) @ w.W_down.T + w.b_down, Xm, np.array(probs)
