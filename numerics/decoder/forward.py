r"""NumPy float64 forward pass of a decoder: every layer's token states, every head's attention, the logits.

The documented block (Touvron et al., Llama, arXiv 2302.13971; Ainslie et al., grouped-query attention, arXiv
2305.13245; Su et al., RoPE, arXiv 2104.09864; Radford et al., GPT-2; the layout of ``transformers``' Llama and
GPT-2 models), for token states :math:`X \in \mathbb{R}^{n \times d}`, :math:`H` query heads of width :math:`k`,
:math:`H_{kv}` key/value heads:

.. math::

    \begin{aligned}
    &\text{embeddings} && X^0 = E[\mathrm{ids}] \qquad (\texttt{gpt2}: +\, P[0 .. n-1], \text{ learned positions}) \\
    &\text{attention} && Y = N_1(X); \quad q_i^h = R_i (W_q^h y_i + b_q^h), \quad k_i^g = R_i (W_k^g y_i + b_k^g),
        \quad v_i^g = W_v^g y_i + b_v^g \\
    &&& p^h_{ij} = \operatorname{softmax}_{j \le i}\big(\langle q_i^h, k_j^{g(h)}\rangle / \sqrt{k}\big), \quad
        g(h) = \lfloor h / (H / H_{kv}) \rfloor \\
    &&& X' = X + W_o \operatorname{concat}_h\Big(\sum_j p^h_{ij} v_j^{g(h)}\Big) + b_o
        \qquad (\text{causal: } j \le i) \\
    &\text{MLP} && Z = N_2(X'); \quad
        X'' = X' + W_{\mathrm{down}}\big(\mathrm{SiLU}(W_{\mathrm{gate}} z) \odot (W_{\mathrm{up}} z)\big)
        \qquad (\texttt{llama}) \\
    &&& X'' = X' + W_2\, \mathrm{GELU}_{\tanh}(W_1 z + b_1) + b_2 \qquad (\texttt{gpt2}) \\
    &\text{output} && \mathrm{logits} = W_{\mathrm{head}} N_f(X^L) \qquad (W_{\mathrm{head}} = E \text{ when tied})
    \end{aligned}

with the norms

.. math::

    \begin{aligned}
    N\ (\texttt{llama}):\quad & \mathrm{RMSNorm}(x) = g \odot x / \sqrt{\operatorname{mean}(x^2) + \epsilon}, \\
    N\ (\texttt{gpt2}):\quad & \mathrm{LayerNorm}(x) = g \odot (x - \operatorname{mean} x)
        / \sqrt{\operatorname{var} x + \epsilon} + b,
    \end{aligned}

:math:`R_i` the rotary map (``llama`` only): in each head, the pair :math:`(c_p, c_{p+k/2})` of coordinates is
rotated by the angle :math:`i\, \theta_p`, :math:`\theta_p = \mathrm{base}^{-2p/k}`,
:math:`p = 0, \dots, k/2 - 1` ("rotate half"), and

.. math::

    \mathrm{SiLU}(z) = \frac{z}{1 + e^{-z}}, \qquad
    \mathrm{GELU}_{\tanh}(z) = \tfrac{1}{2} z \Big(1 + \tanh\big(\sqrt{2/\pi}\, (z + 0.044715 z^3)\big)\Big).

Positions are 0-based; token :math:`i` attends to tokens :math:`0, \dots, i` (rows of X in sequence order).
Attention logits are shifted by their row maximum before the exponential (exact). Rows are processed in blocks
so that one head's :math:`n \times n` scores never exist at once.

Returned (:class:`DecoderTrace`): ``states`` :math:`X^0, \dots, X^L`, ``mid`` (the residual stream between the
attention and the MLP of each block), optionally the attention matrices, per head and row the attention entropy
and the attention paid to the first token, and the logits of the last (or every) position.

Verified by: decoder.reference (transformers + torch on the same GGUF, slow), decoder.reference-recorded,
decoder.block (every layer map against :mod:`numerics.decoder.reference_block`), decoder.greedy.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from numerics.common.errors import InputError, require_int
from numerics.common.limits import check_memory, check_work
from numerics.decoder.weights import BlockWeights, Decoder, DecoderConfig, params_per_block
from numerics.trained.encoder import layer_norm

#: entries of one block of attention scores (rows x keys) computed at once, and its most rows
SCORE_BLOCK_ENTRIES = 1 << 21
SCORE_ROWS = 128
#: the logit added to a masked pair: finite, so that the entropy's p s terms stay 0 * finite; e^{MASKED - max}
#: is exactly 0
MASKED = -1e300
LOGITS = ("last", "all", "none")
KEEP = ("all", "ends")


# -- the pieces of the block ----------------------------------------------------------------------------------
def rms_norm(X: np.ndarray, g: np.ndarray, eps: float) -> np.ndarray:
    """g * x / sqrt(mean(x^2) + eps) per row."""
    return g * (X / np.sqrt(np.mean(X * X, axis=-1, keepdims=True) + eps))


def block_norm(X: np.ndarray, g: np.ndarray, b: np.ndarray | None, cfg: DecoderConfig) -> np.ndarray:
    """The family's normalisation: RMSNorm (llama) or LayerNorm (gpt2)."""
    if cfg.family == "llama":
        return rms_norm(X, g, cfg.norm_eps)
    return layer_norm(X, g, b, cfg.norm_eps)


def silu(z: np.ndarray) -> np.ndarray:
    """z / (1 + e^{-z}) (overflow-free through the logistic function)."""
    return z * expit(z)


def gelu_tanh(z: np.ndarray) -> np.ndarray:
    """GPT-2's GELU: z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) / 2."""
    return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3)))


def rotary_frequencies(k: int, base: float) -> np.ndarray:
    """theta_p = base^{-2p/k}, p = 0 .. k/2 - 1."""
    return base ** (-np.arange(0, k, 2, dtype=np.float64) / k)


def rotary_tables(positions: np.ndarray, k: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of the angles t theta_p, each (len(positions), k/2)."""
    angles = np.outer(np.asarray(positions, dtype=np.float64), rotary_frequencies(k, base))
    return np.cos(angles), np.sin(angles)


def apply_rotary(Z: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate each head's pairs (c_p, c_{p + k/2}) of Z (n, heads, k) by the angles of row i (rotate half)."""
    half = Z.shape[-1] // 2
    a, b = Z[..., :half], Z[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def mlp(Z: np.ndarray, w: BlockWeights, family: str) -> np.ndarray:
    """The block's MLP on normalised states Z (module docstring)."""
    if family == "llama":
        return (silu(Z @ w.W_gate.T) * (Z @ w.W_up.T)) @ w.W_down.T
    return gelu_tanh(Z @ w.W_up.T + w.b_up) @ w.W_down.T + w.b_down


def _bias(x: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    return x if b is None else x + b


def projections(Y: np.ndarray, w: BlockWeights, cfg: DecoderConfig, positions: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q (n, H, k), k (n, H_kv, k), v (n, H_kv, k)) of normalised states Y, rotary applied (llama)."""
    n, k = Y.shape[0], cfg.d_head
    q = _bias(Y @ w.Wq.T, w.bq).reshape(n, cfg.heads, k)
    kk = _bias(Y @ w.Wk.T, w.bk).reshape(n, cfg.kv_heads, k)
    v = _bias(Y @ w.Wv.T, w.bv).reshape(n, cfg.kv_heads, k)
    if cfg.rope_base is not None:
        cos, sin = rotary_tables(positions, k, cfg.rope_base)
        q, kk = apply_rotary(q, cos, sin), apply_rotary(kk, cos, sin)
    return q, kk, v


@dataclass
class HeadStats:
    """Per (head, query row): entropy of the attention row (nats) and the attention on the first token."""

    entropy: np.ndarray
    first: np.ndarray


def causal_bias(rows: np.ndarray, cols: int) -> np.ndarray:
    """(len(rows), cols): 0 where key j <= query position i (rows holds the positions i), :data:`MASKED` above."""
    return np.where(np.arange(cols)[None, :] > rows[:, None], MASKED, 0.0)


def causal_attention(q: np.ndarray, kk: np.ndarray, v: np.ndarray, cfg: DecoderConfig, offset: int = 0,
                     probs: np.ndarray | None = None, stats: HeadStats | None = None) -> np.ndarray:
    """Context vectors (n_q, H, k) of queries q (n_q, H, k) at positions offset .. offset + n_q - 1 against keys and
    values (n_k, H_kv, k) at positions 0 .. n_k - 1 (n_k = offset + n_q), causal.

    Fills ``probs`` (H, n_q, n_k) and ``stats`` when given. Query rows are taken in blocks of at most
    :data:`SCORE_ROWS` (and :data:`SCORE_BLOCK_ENTRIES` scores), each against the keys up to its last row only.
    The entropy of a row is log Z - sum_j p_ij s_ij with s the max-shifted logits and Z = sum_j e^{s_ij}.
    """
    nq, H, k = q.shape
    nk = kk.shape[0]
    qh = np.ascontiguousarray(q.transpose(1, 0, 2)) * (1.0 / math.sqrt(k))
    kh = np.ascontiguousarray(kk.transpose(1, 0, 2))
    vh = np.ascontiguousarray(v.transpose(1, 0, 2))
    ctx = np.empty((H, nq, k))
    # the query heads of each key/value head, scored together in one product
    groups = [[h for h in range(H) if cfg.kv_head(h) == g] for g in range(kh.shape[0])]
    b = max(1, min(nq, SCORE_ROWS, SCORE_BLOCK_ENTRIES // max(nk, 1)))
    for a in range(0, nq, b):
        e = min(nq, a + b)
        cols = offset + e                      # keys beyond the block's last query are all masked
        mask = causal_bias(offset + np.arange(a, e), cols)
        for g, hs in enumerate(groups):
            if not hs:
                continue
            m = e - a
            S = (qh[hs, a:e].reshape(len(hs) * m, k) @ kh[g, :cols].T).reshape(len(hs), m, cols)
            S += mask
            S -= S.max(axis=2, keepdims=True)
            P = np.exp(S)
            Z = P.sum(axis=2, keepdims=True)
            P /= Z
            ctx[hs, a:e] = (P.reshape(len(hs) * m, cols) @ vh[g, :cols]).reshape(len(hs), m, k)
            if probs is not None:
                probs[hs, a:e, :cols] = P
                probs[hs, a:e, cols:] = 0.0
            if stats is not None:
                stats.entropy[hs, a:e] = np.log(Z[..., 0]) - np.einsum("hij,hij->hi", P, S)
                stats.first[hs, a:e] = P[..., 0]
    return ctx.transpose(1, 0, 2)


def attention_block(X: np.ndarray, w: BlockWeights, cfg: DecoderConfig, positions: np.ndarray,
                    probs: np.ndarray | None = None, stats: HeadStats | None = None, past: tuple | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(attention output (n, d), rotated keys, values) of the block for the residual stream X.

    ``past``: the rotated keys and values of positions 0 .. positions[0] - 1 (a cache); the returned keys and
    values then include them.
    """
    Y = block_norm(X, w.attn_norm_g, w.attn_norm_b, cfg)
    q, kk, v = projections(Y, w, cfg, positions)
    if past is not None:
        kk, v = np.concatenate([past[0], kk]), np.concatenate([past[1], v])
    ctx = causal_attention(q, kk, v, cfg, int(positions[0]), probs, stats)
    return _bias(ctx.reshape(X.shape[0], -1) @ w.Wo.T, w.bo), kk, v


def decoder_block(X: np.ndarray, w: BlockWeights, cfg: DecoderConfig, positions: np.ndarray,
                  probs: np.ndarray | None = None, stats: HeadStats | None = None, past: tuple | None = None
                  ) -> tuple[np.ndarray, np.ndarray, tuple]:
    """One block: (X'', X', (keys, values)) with X' = X + attention, X'' = X' + MLP(N_2(X'))."""
    A, kk, v = attention_block(X, w, cfg, positions, probs, stats, past)
    Xm = X + A
    Z = block_norm(Xm, w.mlp_norm_g, w.mlp_norm_b, cfg)
    return Xm + mlp(Z, w, cfg.family), Xm, (kk, v)


def embed(model: Decoder, ids: np.ndarray, offset: int = 0) -> np.ndarray:
    """X^0: token embeddings (plus learned position embeddings for gpt2)."""
    X = model.embed[ids]
    if model.positions is not None:
        X = X + model.positions[offset:offset + len(ids)]
    return X


def output_logits(model: Decoder, X: np.ndarray) -> np.ndarray:
    """logits = W_head N_f(x) per row of X."""
    return block_norm(X, model.final_norm_g, model.final_norm_b, model.config) @ model.head.T


# -- the whole pass -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DecoderTrace:
    """Everything a forward pass computes.

    Attributes
    ----------
    ids : (n,) int array
    states : (L + 1, n, d)
        ``states[0]`` :math:`= X^0` (embeddings), ``states[l]`` = output of block :math:`l` (1-based). With
        ``keep="ends"``: (2, n, d), the embeddings and the output of the last block.
    mid : (L, n, d)
        ``mid[l]`` = :math:`X'` of block :math:`l + 1` (after the attention residual, before the MLP); (0, n, d)
        with ``keep="ends"``.
    attentions : (L, H, n, n) or None
        Row-stochastic, zero above the diagonal.
    entropy, first : (L, H, n)
        Per head and query row: entropy of the attention row (nats) and the attention on token 0.
    logits : (m, vocab) or None
        Of the last position (m = 1) or of every position (m = n).
    cache : list of (keys, values) per layer, or None
        Rotated keys and values, for continuing the sequence (:mod:`numerics.decoder.generation`).
    """

    ids: np.ndarray
    states: np.ndarray
    mid: np.ndarray
    attentions: np.ndarray | None
    entropy: np.ndarray
    first: np.ndarray
    logits: np.ndarray | None
    cache: list | None = None

    @property
    def n(self) -> int:
        return int(self.states.shape[1])

    @property
    def layers(self) -> int:
        return int(self.entropy.shape[0])


def forward_flops(cfg: DecoderConfig, n: int, layers: int | None = None, logits_rows: int = 1) -> float:
    """Floating-point operations of the matrix products of a forward pass of n tokens (the benchmark's bound):
    2 n per matrix entry of every block, 4 k per (query, key) pair of every head (scores and values; causal:
    n (n + 1) / 2 pairs), 2 d vocab per logits row."""
    L = cfg.layers if layers is None else layers
    pairs = n * (n + 1) / 2
    return L * (2.0 * n * params_per_block(cfg) + 4.0 * cfg.d_head * cfg.heads * pairs) + 2.0 * logits_rows * cfg.d * cfg.vocab


def forward_bytes(cfg: DecoderConfig, n: int, layers: int, attentions: bool, logits_rows: int, cache: bool,
                  keep: str = "all") -> float:
    """Bytes of a forward pass's outputs and largest temporaries (the estimate made before the run)."""
    m = max(cfg.intermediate, 3 * cfg.d)
    frames = 2 * layers + 1 if keep == "all" else 3
    total = frames * n * cfg.d + 2 * layers * cfg.heads * n                 # states, mid, entropy, first
    total += 4 * n * m + n * min(n, SCORE_BLOCK_ENTRIES // max(n, 1)) * 2   # MLP temporaries, score block
    total += logits_rows * cfg.vocab
    if attentions:
        total += layers * cfg.heads * float(n) * n
    if cache:
        total += 2 * layers * n * cfg.kv_heads * cfg.d_head
    return 8.0 * total


def check_ids(model: Decoder, ids) -> np.ndarray:
    """Token ids as an int array, each in the vocabulary, at most the model's context."""
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"token ids must be a non-empty 1-D sequence, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise InputError(f"token ids must be integers, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= model.config.vocab:
        raise InputError(f"token ids must lie in [0, {model.config.vocab}), got {int(arr.min())}..{int(arr.max())}")
    ctx = model.config.context
    if model.config.sliding_window:
        ctx = min(ctx, model.config.sliding_window)
    if arr.size > ctx:
        raise InputError(f"{arr.size} tokens exceed the model's context of {ctx} tokens")
    return arr.astype(np.int64)


def run_decoder(model: Decoder, ids, *, layers: int | None = None, attentions: bool = True, logits: str = "last",
                cache: bool = False, keep: str = "all", progress: Callable[[float, float], None] | None = None
                ) -> DecoderTrace:
    """The forward pass of token ids through the first ``layers`` blocks (default all).

    ``attentions`` keeps the (L, H, n, n) attention matrices (refused beyond the memory limit: pass False for
    long sequences; entropies and first-token attention are always kept). ``logits``: ``last``, ``all`` or
    ``none`` (the final norm and head are applied only after the last block). ``cache`` keeps the rotated keys
    and values. ``keep="ends"`` keeps only the embeddings and the last block's output (long sequences).
    Work and memory are estimated and checked before anything is allocated.
    """
    cfg = model.config
    ids = check_ids(model, ids)
    L = cfg.layers if layers is None else require_int(layers, "layers", 0, cfg.layers)
    if logits not in LOGITS:
        raise InputError(f"logits must be one of {', '.join(LOGITS)}, got {logits!r}")
    if keep not in KEEP:
        raise InputError(f"keep must be one of {', '.join(KEEP)}, got {keep!r}")
    n = ids.size
    rows = {"last": 1, "all": n, "none": 0}[logits] if L == cfg.layers else 0
    check_memory(forward_bytes(cfg, n, L, attentions, rows, cache, keep), f"a forward pass of {n} tokens")
    check_work(forward_flops(cfg, n, L, rows), f"a forward pass of {n} tokens")
    positions = np.arange(n)
    X = embed(model, ids)
    every = keep == "all"
    states = np.empty((L + 1 if every else 2, n, cfg.d))
    mid = np.empty((L if every else 0, n, cfg.d))
    states[0] = X
    probs = np.empty((L, cfg.heads, n, n)) if attentions else None
    entropy = np.empty((L, cfg.heads, n))
    first = np.empty((L, cfg.heads, n))
    kv = [] if cache else None
    for l in range(L):
        stats = HeadStats(entropy[l], first[l])
        X, Xm, keys_values = decoder_block(X, model.blocks[l], cfg, positions,
                                           None if probs is None else probs[l], stats)
        if every:
            states[l + 1], mid[l] = X, Xm
        if kv is not None:
            kv.append(keys_values)
        if progress is not None:
            progress(l + 1, L)
    states[-1] = X
    out = None
    if rows:
        out = output_logits(model, X[-rows:])
    return DecoderTrace(ids, states, mid, probs, entropy, first, out, kv)
