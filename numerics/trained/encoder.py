r"""NumPy forward pass of a BERT encoder (post-LayerNorm blocks), returning every layer's tokens and attentions.

The documented block (Devlin et al., BERT, arXiv 1810.04805; Vaswani et al., arXiv 1706.03762; the layout of
``transformers.BertModel``), for token states :math:`X \in \mathbb{R}^{n \times d}`, :math:`H` heads of width
:math:`k = d / H`:

.. math::

    \begin{aligned}
    &\text{embeddings} && X^0 = \mathrm{LN}\big(E_{\mathrm{word}}[\mathrm{ids}] + E_{\mathrm{pos}}[0 .. n-1]
        + E_{\mathrm{type}}[0]\big) \\
    &\text{attention} && q_i = W_q x_i + b_q \ (\text{and } k, v \text{ likewise}), \text{ per head } h
        \ (\text{rows } hk .. (h+1)k - 1): \\
    &&& P^h = \operatorname{softmax}_j\big(\langle q_i^h, k_j^h\rangle / \sqrt{k}\big), \quad
        c_i^h = \sum_j P^h_{ij} v_j^h \\
    &&& Y = \mathrm{LN}_1\big(X + W_o \operatorname{concat}_h(c^h) + b_o\big) \qquad (\text{attention sub-layer}) \\
    &\text{MLP} && X' = \mathrm{LN}_2\big(Y + W_2\, \mathrm{GELU}(W_1 Y + b_1) + b_2\big), \quad
        \mathrm{GELU}(z) = z\, \Phi(z) = \tfrac{1}{2} z \big(1 + \operatorname{erf}(z/\sqrt{2})\big) \\
    &\text{LN} && \mathrm{LN}(z) = g \odot (z - \operatorname{mean}(z)) / \sqrt{\operatorname{var}(z) + \epsilon} + b
        \qquad (\text{over the } d \text{ features of each token})
    \end{aligned}

Sentence embedding (sentence-transformers ``Pooling`` + ``Normalize``): the mean of the last layer's tokens
over the sequence (one sentence, no padding, so every token counts), scaled to unit norm.

Switches (for the idealisation study, :mod:`numerics.trained.flows`): ``mlp=False`` drops the MLP sub-layer,
``centre=False`` replaces LN by its uncentred form :math:`g \odot z / \sqrt{\operatorname{mean}(z^2) + \epsilon} + b`.

Notes: proofs_notes/trained-forward-pass.md (checked against the published sentence-transformers quick-start
similarities; claim trained.quickstart).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import erf

from numerics.common.errors import InputError
from numerics.trained.checkpoint import Checkpoint, LayerWeights


def layer_norm(Z: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float, centre: bool = True) -> np.ndarray:
    """LN(z) = g (z - mean z) / sqrt(var z + eps) + b per row; ``centre=False``: g z / sqrt(mean z^2 + eps) + b."""
    if centre:
        Z = Z - Z.mean(axis=-1, keepdims=True)
    return g * Z / np.sqrt((Z * Z).mean(axis=-1, keepdims=True) + eps) + b


def gelu(z: np.ndarray) -> np.ndarray:
    """Exact GELU z Phi(z) = z (1 + erf(z / sqrt 2)) / 2 (BERT's ``gelu``, not the tanh approximation)."""
    return 0.5 * z * (1.0 + erf(z / np.sqrt(2.0)))


def softmax_rows(L: np.ndarray) -> np.ndarray:
    """Row softmax of logits (shifted by the row maximum)."""
    E = np.exp(L - L.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def split_heads(Y: np.ndarray, H: int) -> np.ndarray:
    """(n, d) -> (H, n, d/H): head h holds features h k .. (h+1) k - 1."""
    n, d = Y.shape
    return Y.reshape(n, H, d // H).transpose(1, 0, 2)


def attention_probabilities(X: np.ndarray, w: LayerWeights, H: int) -> np.ndarray:
    """(H, n, n): P^h_ij = softmax_j(<W_q^h x_i + b_q^h, W_k^h x_j + b_k^h> / sqrt(k))."""
    q = split_heads(X @ w.Wq.T + w.bq, H)
    k = split_heads(X @ w.Wk.T + w.bk, H)
    return softmax_rows(q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1]))


def attention_output(X: np.ndarray, P: np.ndarray, w: LayerWeights) -> np.ndarray:
    """W_o concat_h(P^h V^h) + b_o for attention probabilities P (H, n, n)."""
    H, n, _ = P.shape
    v = split_heads(X @ w.Wv.T + w.bv, H)
    ctx = (P @ v).transpose(1, 0, 2).reshape(n, -1)
    return ctx @ w.Wo.T + w.bo


def mlp_output(Y: np.ndarray, w: LayerWeights) -> np.ndarray:
    """W_2 GELU(W_1 y + b_1) + b_2 per token."""
    return gelu(Y @ w.W1.T + w.b1) @ w.W2.T + w.b2


def encoder_layer(X: np.ndarray, w: LayerWeights, H: int, eps: float, *, mlp: bool = True, centre: bool = True
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One block: returns (X', Y, P) with Y the attention sub-layer output and P (H, n, n) the attentions."""
    P = attention_probabilities(X, w, H)
    Y = layer_norm(X + attention_output(X, P, w), w.ln1_g, w.ln1_b, eps, centre)
    if not mlp:
        return Y, Y, P
    return layer_norm(Y + mlp_output(Y, w), w.ln2_g, w.ln2_b, eps, centre), Y, P


@dataclass(frozen=True)
class EncoderTrace:
    """Everything a forward pass computes.

    Attributes
    ----------
    tokens : list of str
    ids : (n,) int array
    states : (L + 1, n, d)
        ``states[0]`` is the embedding output :math:`X^0`, ``states[l]`` the output of layer :math:`l` (1-based).
    sublayer : (L, n, d)
        sublayer[l] is the attention sub-layer output Y of layer l + 1 (after LN_1).
    attentions : (L, H, n, n)
        Row-stochastic attention matrices.
    """

    tokens: list
    ids: np.ndarray
    states: np.ndarray
    sublayer: np.ndarray
    attentions: np.ndarray

    @property
    def n(self) -> int:
        return int(self.states.shape[1])


def embed_tokens(ckpt: Checkpoint, ids: np.ndarray, centre: bool = True) -> np.ndarray:
    """X^0 = LN(E_word[ids] + E_pos[0..n-1] + E_type[0])."""
    e = ckpt.embeddings
    n = ids.size
    if n > e["position"].shape[0]:
        raise InputError(f"{n} tokens exceed the model's {e['position'].shape[0]} positions")
    Z = e["word"][ids] + e["position"][:n] + e["token_type"][0]
    return layer_norm(Z, e["ln_g"], e["ln_b"], ckpt.ln_eps, centre)


def run_encoder(ckpt: Checkpoint, text: str, *, layers: int | None = None, mlp: bool = True,
                centre: bool = True) -> EncoderTrace:
    """The forward pass of ``text`` through the first ``layers`` layers (default all).

    ``mlp``/``centre`` switch the MLP sub-layer and the LayerNorm centring off in every layer (not in the
    embedding LayerNorm), for the idealisation study; the defaults are the model.
    """
    tokens, ids = ckpt.tokenize(text)
    L = ckpt.layers if layers is None else int(layers)
    if not 0 <= L <= ckpt.layers:
        raise InputError(f"layers must be between 0 and {ckpt.layers}, got {layers}")
    X = embed_tokens(ckpt, ids)
    states, subs, atts = [X], [], []
    for w in ckpt.layer_weights[:L]:
        X, Y, P = encoder_layer(X, w, ckpt.heads, ckpt.ln_eps, mlp=mlp, centre=centre)
        states.append(X)
        subs.append(Y)
        atts.append(P)
    n, d = X.shape
    return EncoderTrace(tokens, ids, np.array(states), np.array(subs).reshape(L, n, d),
                        np.array(atts).reshape(L, ckpt.heads, n, n))


def sentence_embedding(ckpt: Checkpoint, text: str) -> np.ndarray:
    """Mean of the last layer's tokens, scaled to unit norm when the checkpoint has a Normalize module."""
    v = run_encoder(ckpt, text).states[-1].mean(axis=0)
    return v / np.linalg.norm(v) if ckpt.normalize else v


def sentence_embeddings(ckpt: Checkpoint, texts) -> np.ndarray:
    """(m, d) embeddings of several texts (each encoded alone, so no padding enters the mean)."""
    texts = list(texts)
    if not texts:
        raise InputError("give at least one text")
    return np.array([sentence_embedding(ckpt, t) for t in texts])
