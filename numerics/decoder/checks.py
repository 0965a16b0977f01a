"""The checks of the forward pass, as functions that return their measurements (used by the claims and tests).

- :func:`block_gaps`: every layer map of a forward pass against the plain second code path
  (:mod:`numerics.decoder.reference_block`), attention rows summing to one and vanishing above the diagonal;
- :func:`greedy_answers`: greedy continuations of the factual prompts of ``data/factual_prompts.json``;
- :func:`recorded_gap`: the logits against the top logits that ``transformers`` + ``torch`` computed for the
  same file and token ids (``data/reference_logits.json``, written by
  :func:`numerics.decoder.torch_reference.record`);
- :func:`live_reference_gap`: the same comparison computed now (needs ``attnflow[reference]``).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from numerics.decoder.forward import run_decoder
from numerics.decoder.generation import greedy_generate
from numerics.decoder.reference_block import reference_block
from numerics.decoder.weights import Decoder

DATA = Path(__file__).resolve().parent / "data"
FACTUAL = DATA / "factual_prompts.json"
#: the short text of the layer-map check
BLOCK_TEXT = "The capital of France is"
#: tokens of shipped paragraph 1 in the recorded reference (rotary angles up to position 47)
REFERENCE_PARAGRAPH_TOKENS = 48


def factual_prompts() -> dict:
    """``plain`` and ``chat`` lists of {prompt, expected[, max_new_tokens]}."""
    return json.loads(FACTUAL.read_text())


def block_gaps(model: Decoder, text: str = BLOCK_TEXT, ids=None) -> dict:
    """Per layer the largest relative gap between the forward pass and :func:`reference_block` (block output
    and residual after attention, relative to their largest entry; attention probabilities absolute), the
    largest |row sum - 1| and the largest attention above the diagonal. ``ids`` (token ids) replaces ``text``
    for a model without a tokenizer (the in-process random checkpoint)."""
    if ids is None:
        ids = model.tokenizer.encode(text)
    else:
        text = f"token ids {list(ids)}"
    trace = run_decoder(model, ids, attentions=True, logits="none")
    gaps = []
    for l in range(trace.layers):
        Xn, Xm, P = reference_block(trace.states[l], model.blocks[l], model.config)
        gaps.append(max(float(np.abs(Xn - trace.states[l + 1]).max() / np.abs(Xn).max()),
                        float(np.abs(Xm - trace.mid[l]).max() / np.abs(Xm).max()),
                        float(np.abs(P - trace.attentions[l]).max())))
    A = trace.attentions
    iu = np.triu_indices(trace.n, 1)
    return {"layer_gaps": gaps, "row_sum_error": float(np.abs(A.sum(-1) - 1.0).max()),
            "above_diagonal": float(np.abs(A[..., iu[0], iu[1]]).max()) if iu[0].size else 0.0,
            "min_probability": float(A.min()), "tokens": trace.n, "text": text}


def head_score_gap(model: Decoder, layer: int = 1, text: str = BLOCK_TEXT, ids=None) -> dict:
    """The heads on unit tokens (:func:`numerics.decoder.heads.head_blocks`, the normalisation's gain folded into
    Q and K) against the block's own scores: for each head h, the largest relative gap between
    (d / sqrt(k)) <Q_h u_i, K_h u_j> f_i f_j and <q_i, k_j> / sqrt(k), the forward pass's projections of the
    normalised states without rotation (positions 0) and without biases, where u_i is the unit state and
    f_i = 1 / sqrt(1 + eps d / r_i^2) the norm's epsilon factor (llama family: RMSNorm)."""
    import dataclasses

    from numerics.decoder import heads as hd
    from numerics.decoder.forward import block_norm, projections

    cfg = model.config
    if cfg.family != "llama":
        raise ValueError("head_score_gap compares RMSNorm blocks (llama family)")
    if ids is None:
        ids = model.tokenizer.encode(text)
    X = run_decoder(model, ids, logits="none").states[layer]
    w = dataclasses.replace(model.blocks[layer], bq=None, bk=None, bv=None)
    q, k, _ = projections(block_norm(X, w.attn_norm_g, w.attn_norm_b, cfg), w,
                          dataclasses.replace(cfg, rope_base=None), np.zeros(len(X), dtype=int))
    Q, K, _, _ = hd.head_blocks(model, layer)
    r2 = np.sum(X * X, axis=1)
    f = 1.0 / np.sqrt(1.0 + cfg.norm_eps * cfg.d / r2)
    U = X / np.sqrt(r2)[:, None]
    gaps = []
    for h in range(cfg.heads):
        block = q[:, h] @ k[:, cfg.kv_head(h)].T / np.sqrt(cfg.d_head)
        ours = (cfg.d / np.sqrt(cfg.d_head)) * (U @ Q[h].T) @ (K[h] @ U.T) * np.outer(f, f)
        gaps.append(float(np.abs(block - ours).max() / np.abs(block).max()))
    return {"layer": layer, "head_gaps": gaps, "gain_spread": float(np.ptp(w.attn_norm_g))}


def greedy_answers(model: Decoder, limit: int | None = None, chat: bool = True) -> list[dict]:
    """Each factual prompt with the expected word, the greedy answer and whether it matches (module docstring);
    ``limit`` takes the first plain prompts only, ``chat=False`` leaves out the chat prompts."""
    data = factual_prompts()
    rows = []
    for item in data["plain"][:limit]:
        g = greedy_generate(model, item["prompt"], 1)
        answer = model.tokenizer.pieces(g.tokens)[0].strip()
        rows.append({"prompt": item["prompt"], "chat": False, "expected": item["expected"], "answer": answer,
                     "ok": answer == item["expected"]})
    for item in data["chat"] if chat else ():
        g = greedy_generate(model, item["prompt"], item["max_new_tokens"], chat=True)
        rows.append({"prompt": item["prompt"], "chat": True, "expected": item["expected"], "answer": g.text,
                     "ok": item["expected"] in g.text})
    return rows


def reference_prompts(model: Decoder) -> dict:
    """Name -> token ids of the reference comparison: the factual prompts and the first
    :data:`REFERENCE_PARAGRAPH_TOKENS` tokens of shipped paragraph 1."""
    from numerics.trained.texts import shipped_paragraphs

    out = {item["prompt"]: model.tokenizer.encode(item["prompt"]) for item in factual_prompts()["plain"]}
    out["paragraph 1"] = model.tokenizer.encode(shipped_paragraphs()[0])[:REFERENCE_PARAGRAPH_TOKENS]
    return out


def _gaps(model: Decoder, reference: dict) -> dict:
    from numerics.decoder.torch_reference import compare_top

    per, agree = {}, True
    for name, entry in reference.items():
        logits = run_decoder(model, entry["ids"], attentions=False, logits="all").logits
        c = compare_top(logits, entry)
        per[name] = c["max_relative"]
        agree &= c["argmax_agrees"]
    return {"max_relative": max(per.values()), "per_prompt": per, "argmax_agrees": agree}


def recorded_gap(model: Decoder, only: tuple | None = None) -> dict:
    """The forward pass against the recorded ``transformers`` top logits (module docstring); ``only`` names the
    recorded prompts to compare (default all)."""
    from numerics.decoder.torch_reference import recorded

    rec = recorded()
    prompts = rec["prompts"] if only is None else {k: rec["prompts"][k] for k in only}
    out = _gaps(model, prompts)
    out["computed_by"] = rec["computed_by"]
    return out


def live_reference_gap(model: Decoder, path) -> dict:
    """The forward pass against ``transformers`` + ``torch`` run now on the file at ``path``; also the gap between
    the live run and the recorded one (how faithful the recording is)."""
    import transformers

    from numerics.decoder.torch_reference import load_reference_model, recorded, reference_logits, top_logits

    ref_model = load_reference_model(path)
    live = {name: {"ids": ids, **top_logits(reference_logits(ref_model, ids))}
            for name, ids in reference_prompts(model).items()}
    out = _gaps(model, live)
    rec = recorded()["prompts"]
    rec_gap = max(float(np.max(np.abs(np.asarray(live[k]["top_values"]) - np.asarray(rec[k]["top_values"]))
                               / np.abs(np.asarray(rec[k]["top_values"])))) for k in live if k in rec
                  and live[k]["ids"] == rec[k]["ids"])
    out["live_vs_recorded"] = rec_gap
    out["computed_by"] = {"transformers": transformers.__version__}
    return out
