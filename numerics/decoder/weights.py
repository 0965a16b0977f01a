r"""The weights of a decoder-only transformer, independent of the file they came from.

Two families are described by one set of arrays (float64, PyTorch layout ``y = x W^T + b``):

- ``llama`` (Llama, Mistral, SmolLM): RMSNorm before attention and MLP, rotary positions, grouped-query attention
  (``kv_heads`` key/value heads shared by ``heads / kv_heads`` query heads each), the gated MLP
  :math:`W_{\mathrm{down}}\big(\mathrm{SiLU}(W_{\mathrm{gate}} y) \odot (W_{\mathrm{up}} y)\big)`, no biases (optional
  q/k/v/o biases), a final RMSNorm, the output head (tied to the token embeddings or not);
- ``gpt2``: LayerNorm (with bias) before attention and MLP, learned absolute position embeddings, one key/value head per
  query head, biases everywhere, the MLP :math:`W_2\, \mathrm{GELU}_{\tanh}(W_1 y + b_1) + b_2`, a final LayerNorm and
  the output head tied to the token embeddings.

Query and key rows of a head are in the order of ``transformers`` (the rotary pairs are :math:`(i, i + k/2)`, the
"rotate half" convention); readers of files that store them otherwise (GGUF interleaves the pairs) put them in
this order when loading (:func:`numerics.decoder.gguf_reader.unpermute_rotary_rows`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

FAMILIES = ("llama", "gpt2")


@dataclass(frozen=True)
class DecoderConfig:
    r"""Shapes and constants of a decoder.

    Attributes
    ----------
    family : {"llama", "gpt2"}
    d, layers, heads, kv_heads, d_head, intermediate, vocab : int
        Width, depth, query heads, key/value heads, head width k, MLP width, vocabulary size.
    context : int
        Longest sequence the model was trained for (positions 0 .. context - 1).
    norm_eps : float
        Epsilon of the RMSNorm (``llama``) or LayerNorm (``gpt2``).
    rope_base : float or None
        Rotary base :math:`b`: pair :math:`p` of a head rotates by the angle :math:`t\, b^{-2p/k}` at position :math:`t`
        (``llama`` only).
    tied : bool
        Whether the output head is the token embedding matrix.
    name : str
        Where the weights came from.
    sliding_window : int or None
        Mistral's attention window; sequences longer than it are refused (not implemented).
    """

    family: str
    d: int
    layers: int
    heads: int
    kv_heads: int
    d_head: int
    intermediate: int
    vocab: int
    context: int
    norm_eps: float
    rope_base: float | None
    tied: bool
    name: str
    sliding_window: int | None = None

    @property
    def group(self) -> int:
        """Query heads per key/value head."""
        return self.heads // self.kv_heads

    def kv_head(self, h: int) -> int:
        """The key/value head that query head ``h`` reads (transformers' ``repeat_kv``: consecutive groups)."""
        return h // self.group

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class BlockWeights:
    """One block's tensors (float64, read-only). ``*_b`` entries are ``None`` where the family has no bias.

    attn_norm_g/b (d,), Wq (H k, d), Wk (H_kv k, d), Wv (H_kv k, d), Wo (d, H k), mlp_norm_g/b (d,),
    W_gate (m, d) (``llama`` only), W_up (m, d), W_down (d, m).
    """

    attn_norm_g: np.ndarray
    attn_norm_b: np.ndarray | None
    Wq: np.ndarray
    bq: np.ndarray | None
    Wk: np.ndarray
    bk: np.ndarray | None
    Wv: np.ndarray
    bv: np.ndarray | None
    Wo: np.ndarray
    bo: np.ndarray | None
    mlp_norm_g: np.ndarray
    mlp_norm_b: np.ndarray | None
    W_gate: np.ndarray | None
    W_up: np.ndarray
    b_up: np.ndarray | None
    W_down: np.ndarray
    b_down: np.ndarray | None


@dataclass(frozen=True, eq=False)
class Decoder:
    """A loaded decoder: configuration, embeddings, blocks, final norm, output head and tokenizer.

    Attributes
    ----------
    config : DecoderConfig
    embed : (vocab, d) array
    positions : (context, d) array or None
        Learned position embeddings (``gpt2``).
    blocks : tuple of BlockWeights
    final_norm_g, final_norm_b : (d,) arrays (``final_norm_b`` None for RMSNorm)
    head : (vocab, d) array
        The output head (the same array as ``embed`` when tied).
    tokenizer : numerics.decoder.tokenizer.TextCodec
    chat_template : str or None
        The Jinja chat template stored with the model.
    """

    config: DecoderConfig
    embed: np.ndarray
    positions: np.ndarray | None
    blocks: tuple
    final_norm_g: np.ndarray
    final_norm_b: np.ndarray | None
    head: np.ndarray
    tokenizer: Any
    chat_template: str | None = None
    source: dict = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        """Bytes held by the weight arrays (a tied head counted once)."""
        seen, total = set(), 0
        arrays = [self.embed, self.positions, self.head, self.final_norm_g, self.final_norm_b]
        arrays += [a for b in self.blocks for a in b.__dict__.values()]
        for a in arrays:
            if a is not None and id(a) not in seen:
                seen.add(id(a))
                total += a.nbytes
        return total

    def parameter_count(self) -> int:
        return self.nbytes // 8


def frozen64(arr) -> np.ndarray:
    """``arr`` as a read-only float64 array (cast when it is not float64; the caller hands over ownership)."""
    out = np.asarray(arr, dtype=np.float64)
    out.flags.writeable = False
    return out


def params_per_block(c: DecoderConfig) -> int:
    """Matrix entries of one block (the float64 work of a token through it is about twice this)."""
    k = c.d_head
    attn = c.d * k * (2 * c.heads + 2 * c.kv_heads)
    mlp = (3 if c.family == "llama" else 2) * c.d * c.intermediate
    return attn + mlp
