"""Greedy generation: the prompt through the forward pass once, then one token at a time with cached keys/values.

Each new token x_t (position t) goes through every block (:func:`numerics.decoder.forward.decoder_block` with
``past``: its query against the cached rotated keys and the values of positions 0..t), so a step costs O(t) per
head instead of a new forward pass of t + 1 tokens. The next token is the argmax of the logits (ties: the
smallest id). The step shares the block with the full pass; what it adds (the cache, the position offset of the
rotary angles and of the mask) is checked by comparing its logits with the last row of
:func:`numerics.decoder.forward.run_decoder` on the extended sequence (tests).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError, require_int
from numerics.common.limits import check_work
from numerics.decoder.forward import decoder_block, embed, forward_flops, output_logits, run_decoder
from numerics.decoder.tokenizer import apply_chat_template, require_text
from numerics.decoder.weights import Decoder

#: most new tokens one call may ask for
MAX_NEW_TOKENS = 4096


@dataclass(frozen=True)
class Generation:
    """A greedy continuation: the prompt as the model saw it, its ids, the new ids and their text."""

    prompt: str
    prompt_ids: list
    tokens: list
    text: str
    stopped: str          # "eos" or "length"
    last_logits: np.ndarray

    def to_dict(self) -> dict:
        return {"prompt": self.prompt, "prompt_ids": self.prompt_ids, "tokens": self.tokens, "text": self.text,
                "stopped": self.stopped}


def step_logits(model: Decoder, cache: list, token: int, position: int) -> np.ndarray:
    """Logits (vocab,) after appending ``token`` at ``position`` (= the cache's length); extends ``cache``."""
    pos = np.array([position])
    X = embed(model, np.array([token]), position)
    for l, w in enumerate(model.blocks):
        X, _, cache[l] = decoder_block(X, w, model.config, pos, past=cache[l])
    return output_logits(model, X)[0]


def prompt_text(model: Decoder, prompt: str, chat: bool) -> str:
    """The prompt as the model sees it: raw, or wrapped in the model's chat template."""
    prompt = require_text(prompt, "prompt")
    if not chat:
        return prompt
    tok = model.tokenizer
    bos = tok.pieces([tok.bos_id])[0] if tok.bos_id is not None else ""
    eos = tok.pieces([tok.eos_ids[0]])[0] if tok.eos_ids else ""
    return apply_chat_template(model.chat_template, prompt, bos, eos)


def greedy_generate(model: Decoder, prompt: str, max_new_tokens: int = 20, *, chat: bool = False,
                    stop_at_eos: bool = True, progress: Callable[[float, float], None] | None = None) -> Generation:
    """Greedy continuation of ``prompt`` by at most ``max_new_tokens`` tokens (module docstring).

    ``chat`` wraps the prompt in the model's chat template (one user message, generation prompt added).
    Stops at an end-of-sequence id when ``stop_at_eos``. Raises :class:`InputError` for an empty prompt or
    one that, with the new tokens, exceeds the model's context.
    """
    max_new = require_int(max_new_tokens, "max_new_tokens", 1, MAX_NEW_TOKENS)
    text = prompt_text(model, prompt, chat)
    ids = model.tokenizer.encode(text)
    cfg = model.config
    limit = min(cfg.context, cfg.sliding_window or cfg.context)
    if len(ids) + max_new > limit:
        raise InputError(f"the prompt ({len(ids)} tokens) plus {max_new} new tokens exceed the model's context of "
                         f"{limit} tokens")
    n_end = len(ids) + max_new
    check_work(forward_flops(cfg, n_end, logits_rows=max_new), f"generating {max_new} tokens")
    trace = run_decoder(model, ids, attentions=False, logits="last", cache=True)
    cache = trace.cache
    logits = trace.logits[-1]
    new: list[int] = []
    stopped = "length"
    for s in range(max_new):
        tok = int(np.argmax(logits))
        new.append(tok)
        if progress is not None:
            progress(s + 1, max_new)
        if stop_at_eos and tok in model.tokenizer.eos_ids:
            stopped = "eos"
            break
        if s + 1 < max_new:
            logits = step_logits(model, cache, tok, len(ids) + s)
    return Generation(text, [int(i) for i in ids], new, model.tokenizer.decode(new), stopped, logits)
