r"""Long contexts: attention entropy and token clustering of a decoder against the context length n.

For each length n (prefixes of one text: the shipped ``data/long_text.txt``, 8519 tokens of SmolLM2, by
default), one forward pass (:func:`numerics.decoder.forward.run_decoder` with ``keep="ends"``, no attention
matrices) gives per block and head the entropy :math:`H_i = -\sum_j p_{ij} \log p_{ij}` of every attention row.
Measured:

- ``entropy``: the mean of :math:`H_i` over the heads and over the late rows :math:`i \ge n/2` (each sees at least
  :math:`n/2` keys), per block and averaged over blocks; ``uniform``: the mean of :math:`\log(i + 1)` over the same
  rows (the entropy of uniform attention); ``first``: the attention on the first token in those rows;
- the mean pairwise cosine and the eps-cluster count of the last block's tokens.

**The theory beside it.** With a fixed inverse temperature and scores that stay of order one as n grows, a
softmax row spreads over the keys: for iid scores :math:`H = \log n - O(1)`, a slope 1 against :math:`\log n`
(Chen, Lin, Polyanskiy, Rigollet, arXiv 2510.05554: below the critical scaling :math:`\beta_n = \gamma \log n`
attention becomes uniform over long contexts; at and above it, it stays concentrated). :func:`entropy_slopes` fits
:math:`H` against :math:`\log n` per block (least squares over the lengths): a slope near 1 is the uniform regime,
a slope near 0 a bounded number of attended keys, i.e. a model that behaves as if its :math:`\beta` grew at least
like :math:`\log n`. The scaling laws themselves (:math:`\beta_n = \gamma \log n` and the critical :math:`\gamma`)
come from the long-context area of
attnflow when it is present (:data:`LONGCONTEXT_MODULE`, looked up by name at run time, never imported here
statically); without it the slopes are reported alone.
"""
from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import numpy as np

from numerics.clusters.detection import find_clusters
from numerics.common.errors import InputError, require_int
from numerics.decoder.forward import run_decoder
from numerics.decoder.weights import Decoder
from numerics.trained.geometry import DEFAULT_EPS, pair_cosines, unit_rows

LONG_TEXT = Path(__file__).resolve().parent / "data" / "long_text.txt"
#: where the long-context scaling laws live when the long-context work is installed
LONGCONTEXT_MODULE = "numerics.longcontext"
DEFAULT_LENGTHS = (64, 128, 256, 512, 1024, 2048)
#: the largest text file a decoder command reads (bytes): the whole text is tokenised (about a microsecond per
#: character) but a study uses at most the model's context (8192 tokens of SmolLM2, some 40 kB of English), so a
#: larger file is refused from its size before it is read, instead of minutes of tokenising
MAX_TEXT_BYTES = 2 << 20


def long_text() -> str:
    """The shipped long text (written for attnflow: essays on a river valley, clocks, bread, music, bees,
    lighthouses, a market, maps, tides and paper)."""
    return LONG_TEXT.read_text(encoding="utf-8")


def check_lengths(lengths, available: int, context: int) -> list[int]:
    """Sorted distinct lengths, each >= 2 and at most the tokens available and the model's context."""
    out = sorted({require_int(n, "context length", 2) for n in lengths})
    if not out:
        raise InputError("give at least one context length")
    limit = min(available, context)
    if out[-1] > limit:
        raise InputError(f"context length {out[-1]} exceeds the {limit} tokens available "
                         f"(text: {available} tokens, model context: {context})")
    return out


def length_row(model: Decoder, ids: np.ndarray, eps: float) -> dict:
    """The measurements of one prefix (module docstring)."""
    n = ids.size
    tr = run_decoder(model, ids, attentions=False, logits="none", keep="ends")
    late = slice(n // 2, n)
    entropy = tr.entropy[:, :, late].mean(axis=(1, 2))
    uniform = float(np.mean(np.log(np.arange(n // 2, n) + 1.0)))
    U = unit_rows(tr.states[-1])
    clusters = find_clusters(U, eps, method="gram")
    return {"n": n, "entropy": entropy.tolist(), "entropy_mean": float(entropy.mean()), "uniform": uniform,
            "first": tr.first[:, :, late].mean(axis=(1, 2)).tolist(), "mean_cosine": float(pair_cosines(U).mean()),
            "clusters": int(clusters.count)}


def entropy_slopes(rows: list[dict]) -> dict:
    """Least-squares slopes of the entropy against log n: per block, of the block average, and of the uniform
    entropy (1 by construction up to the late-row averaging)."""
    if len(rows) < 2:
        return {"per_layer": None, "mean": None, "uniform": None}
    x = np.log([r["n"] for r in rows])
    E = np.array([r["entropy"] for r in rows])
    fit = np.polyfit(x, E, 1)[0]
    return {"per_layer": fit.tolist(), "mean": float(np.polyfit(x, E.mean(axis=1), 1)[0]),
            "uniform": float(np.polyfit(x, [r["uniform"] for r in rows], 1)[0])}


def longcontext_available() -> bool:
    """Whether attnflow's long-context area (the beta_n = gamma log n laws) is installed."""
    try:
        return importlib.util.find_spec(LONGCONTEXT_MODULE) is not None
    except ModuleNotFoundError:
        return False


def context_study(model: Decoder, text: str | None = None, lengths=DEFAULT_LENGTHS, eps: float = DEFAULT_EPS,
                  progress: Callable[[float, float], None] | None = None) -> dict:
    """Per context length the entropies, first-token attention and last-layer clustering (module docstring)."""
    ids = np.asarray(model.tokenizer.encode(long_text() if text is None else text))
    lengths = check_lengths(lengths, ids.size, model.config.context)
    rows = []
    for k, n in enumerate(lengths):
        rows.append(length_row(model, ids[:n], eps))
        if progress is not None:
            progress(k + 1, len(lengths))
    return {"eps": eps, "text_tokens": int(ids.size), "lengths": rows, "slopes": entropy_slopes(rows),
            "longcontext_area": longcontext_available()}
