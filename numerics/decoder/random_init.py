"""Decoders whose weights are drawn from a stated initialisation instead of read from a file.

Two uses:

- **the untrained model** (:func:`random_decoder`): a checkpoint's architecture (SmolLM2-135M's by default) with
  every matrix entry drawn independently from N(0, std^2) and every normalisation weight equal to 1, biases 0:
  the initialisation of ``transformers``' ``LlamaPreTrainedModel._init_weights`` (linear and embedding weights
  normal with standard deviation ``initializer_range``, RMSNorm weights one) and of GPT-2 (std 0.02). The standard
  deviation is the checkpoint's own ``initializer_range`` where it is known (:func:`initializer_std`): a
  checkpoint folder's ``config.json``; for the packaged SmolLM2-135M, whose GGUF file does not keep it, the value of
  its published ``config.json``, 0.041666... = 1/24 = 1/sqrt(576) (:data:`SMOLLM2_INITIALIZER_RANGE`); otherwise
  GPT-2's 0.02 (:data:`GPT2_STD`). A tied output head is the embedding matrix (as in the file);
- **the small checkpoint of the block check** (:func:`check_decoder`): a few-layer Llama-family decoder made
  in-process, so that the check of every layer map against the plain second path
  (:func:`numerics.decoder.checks.block_gaps`) runs without the packaged weights. Its shapes are chosen so that
  each part of the block is visible to that check: three query heads per key/value head (a grouping error moves
  a head to another key/value head), a small rotary base (every pair turns by a different, non-trivial angle
  over the sequence), normalisation weights away from 1 (a dropped weight changes the output) and an epsilon of
  the order of the mean square of the states (a dropped epsilon changes the output at the 1e-3 level).

The draws are reproducible: one :class:`numpy.random.Generator` seeded with ``seed`` fills the embedding, then
block 0's W_q, W_k, W_v, W_o, W_gate, W_up, W_down, then block 1's, ... in that order (float64 normals scaled by
``std``).
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.limits import check_memory
from numerics.decoder.weights import BlockWeights, Decoder, DecoderConfig, frozen64

#: the standard deviation of GPT-2's initialisation (and ``transformers``' default ``initializer_range``)
GPT2_STD = 0.02
DEFAULT_STD = GPT2_STD
#: ``initializer_range`` of SmolLM2-135M's published config.json (1/sqrt(576)); its GGUF file does not keep it
SMOLLM2_INITIALIZER_RANGE = 0.041666666666666664
#: the largest standard deviation accepted (beyond it the residual stream overflows within a few blocks)
MAX_STD = 10.0
#: the architecture of the block check's checkpoint (module docstring)
CHECK_CONFIG = DecoderConfig(family="llama", d=48, layers=3, heads=6, kv_heads=2, d_head=8, intermediate=80,
                             vocab=64, context=64, norm_eps=1e-3, rope_base=50.0, tied=False,
                             name="random check checkpoint (in-process)")
#: token ids of the block check on that checkpoint (distinct, in no particular order)
CHECK_IDS = (5, 17, 3, 42, 8, 61, 29, 0, 33, 12, 50, 7)


def _normal(rng: np.random.Generator, shape: tuple, std: float) -> np.ndarray:
    return frozen64(rng.standard_normal(shape) * std)


def random_blocks(cfg: DecoderConfig, rng: np.random.Generator, std: float, gains: float = 0.0) -> tuple:
    """``cfg.layers`` Llama blocks with N(0, std^2) matrices (module docstring's order); normalisation weights 1,
    or 1 + ``gains`` N(0, 1) when ``gains`` > 0 (the block check's checkpoint)."""
    d, k, H, Hkv, m = cfg.d, cfg.d_head, cfg.heads, cfg.kv_heads, cfg.intermediate
    out = []
    for _ in range(cfg.layers):
        Wq, Wk = _normal(rng, (H * k, d), std), _normal(rng, (Hkv * k, d), std)
        Wv, Wo = _normal(rng, (Hkv * k, d), std), _normal(rng, (d, H * k), std)
        W_gate, W_up, W_down = _normal(rng, (m, d), std), _normal(rng, (m, d), std), _normal(rng, (d, m), std)
        g1 = np.ones(d) if gains <= 0 else 1.0 + gains * rng.standard_normal(d)
        g2 = np.ones(d) if gains <= 0 else 1.0 + gains * rng.standard_normal(d)
        out.append(BlockWeights(attn_norm_g=frozen64(g1), attn_norm_b=None, Wq=Wq, bq=None, Wk=Wk, bk=None, Wv=Wv,
                                bv=None, Wo=Wo, bo=None, mlp_norm_g=frozen64(g2), mlp_norm_b=None, W_gate=W_gate,
                                W_up=W_up, b_up=None, W_down=W_down, b_down=None))
    return tuple(out)


def random_decoder(cfg: DecoderConfig, seed: int = 0, std: float = DEFAULT_STD, tokenizer=None,
                   rope: bool = True) -> Decoder:
    """The architecture ``cfg`` (``llama`` family) with weights drawn from N(0, std^2), norms 1 (module docstring).

    Parameters
    ----------
    cfg : DecoderConfig
        The architecture (for example a loaded checkpoint's ``model.config``).
    seed : int
        Seed of the one generator that fills every matrix (module docstring's order).
    std : float
        Standard deviation of every matrix entry, in (0, :data:`MAX_STD`].
    tokenizer : TextCodec, optional
        The text codec to attach (the loaded checkpoint's, so that the same text gives the same token ids).
    rope : bool
        False drops the rotary embedding (the same draws; positions then enter nowhere).

    Returns
    -------
    Decoder
        ``source`` records the initialisation.
    """
    if cfg.family != "llama":
        raise InputError(f"a random initialisation is implemented for the llama family, got {cfg.family!r}")
    seed = require_int(seed, "seed", 0, 2**63 - 1)
    std = require_real(std, "std", minimum=0.0, strict_minimum=True, maximum=MAX_STD)
    entries = cfg.vocab * cfg.d * (1 if cfg.tied else 2) + cfg.layers * (
        cfg.d * cfg.d_head * (2 * cfg.heads + 2 * cfg.kv_heads) + 3 * cfg.d * cfg.intermediate)
    check_memory(8.0 * entries, f"the random weights of {cfg.name}")
    rng = np.random.default_rng(seed)
    embed = _normal(rng, (cfg.vocab, cfg.d), std)
    blocks = random_blocks(cfg, rng, std)
    head = embed if cfg.tied else _normal(rng, (cfg.vocab, cfg.d), std)
    name = f"{cfg.name.split(' (random')[0]} (random init, seed {seed}, std {std:g}{'' if rope else ', no RoPE'})"
    c = DecoderConfig(**{**cfg.to_dict(), "name": name, "rope_base": cfg.rope_base if rope else None})
    return Decoder(config=c, embed=embed, positions=None, blocks=blocks, final_norm_g=frozen64(np.ones(cfg.d)),
                   final_norm_b=None, head=head, tokenizer=tokenizer,
                   source={"format": "random", "seed": seed, "std": std, "rope": rope,
                           "law": "every matrix entry N(0, std^2), norm weights 1"})


def initializer_std(model: Decoder) -> tuple[float, str]:
    """(standard deviation, where it comes from) of ``model``'s initialisation (module docstring)."""
    from numerics.decoder.gguf_reader import DEFAULT_NAME

    value = model.source.get("initializer_range")
    if value is not None:
        return float(value), "the checkpoint's initializer_range"
    if model.config.name == DEFAULT_NAME:
        return SMOLLM2_INITIALIZER_RANGE, "SmolLM2-135M's initializer_range (1/sqrt(576))"
    return GPT2_STD, "GPT-2's 0.02 (the checkpoint states no initializer_range)"


def check_decoder(seed: int = 0) -> Decoder:
    """The block check's small checkpoint (module docstring): :data:`CHECK_CONFIG`, embeddings N(0, 1), matrices
    N(0, 1 / d) (attention scores of order one), normalisation weights 1 + 0.3 N(0, 1)."""
    cfg = CHECK_CONFIG
    rng = np.random.default_rng(seed)
    embed = _normal(rng, (cfg.vocab, cfg.d), 1.0)
    blocks = random_blocks(cfg, rng, 1.0 / math.sqrt(cfg.d), gains=0.3)
    head = _normal(rng, (cfg.vocab, cfg.d), 1.0 / math.sqrt(cfg.d))
    return Decoder(config=cfg, embed=embed, positions=None, blocks=blocks,
                   final_norm_g=frozen64(1.0 + 0.3 * rng.standard_normal(cfg.d)), final_norm_b=None, head=head,
                   tokenizer=None, source={"format": "random", "seed": seed, "purpose": "block check"})
