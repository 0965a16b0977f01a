"""Claim decoder.random-init-law: the random initialisations draw their entries from the law they state (note
proofs_notes/decoder-random-init-law.md). Registered from :mod:`numerics.decoder.claims`.

The untrained-decoder claims (``decoder.random-init-*``, slow) read their prediction off the stated standard
deviation, and the block check (``decoder.block``) compares two code paths on the same weights: neither sees weights
drawn at the wrong scale. This default claim judges the draws themselves, on the block check's architecture, in a
few milliseconds and without the packaged weights.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.verification import CheckResult, claim

SOURCE = ("transformers' LlamaPreTrainedModel._init_weights (linear and embedding weights N(0, initializer_range^2), "
          "RMSNorm weights one) and GPT-2's std 0.02; the block check's checkpoint as documented in "
          "numerics.decoder.random_init")
#: the initialisation judged: GPT-2's standard deviation, and the seed
STD, SEED = 0.02, 0
#: a z-score above this fails (about 50 matrices judged by two statistics; a Gaussian exceeds 5 with probability
#: 6e-7, so a correct draw fails with probability below 1e-4 at any seed)
Z_MAX = 5.0
_MATRICES = ("Wq", "Wk", "Wv", "Wo", "W_gate", "W_up", "W_down")


def moment_scores(values: np.ndarray, std: float) -> dict:
    """z-scores of the sample mean and of the mean square of iid N(0, std^2) draws: the mean has standard error
    std/sqrt(N), the mean square over std^2 has mean 1 and standard error sqrt(2/N)."""
    x = np.asarray(values, float).ravel()
    n = x.size
    return {"entries": n, "std": float(np.sqrt(np.mean(x * x))), "stated": std,
            "z_mean": float(x.mean() / (std / math.sqrt(n))),
            "z_scale": float((np.mean(x * x) / std ** 2 - 1.0) / math.sqrt(2.0 / n))}


def init_law_scores() -> dict:
    """Every matrix of ``random_decoder`` (block check architecture, std :data:`STD`) and of ``check_decoder``
    (embedding N(0, 1), block and head matrices N(0, 1/d), as its docstring states) against its stated law."""
    from numerics.decoder.random_init import CHECK_CONFIG, check_decoder, random_decoder

    out = {}
    m = random_decoder(CHECK_CONFIG, seed=SEED, std=STD)
    out["random_decoder embed"] = moment_scores(m.embed, STD)
    out["random_decoder head"] = moment_scores(m.head, STD)
    for b, block in enumerate(m.blocks):
        for name in _MATRICES:
            out[f"random_decoder block {b} {name}"] = moment_scores(getattr(block, name), STD)
    # all entries of one stated law pooled: a common scale error of 1.5% already leaves 5 standard errors
    out["random_decoder pooled"] = moment_scores(np.concatenate([v.ravel() for v in _arrays(m)]), STD)
    norms_one = all(np.array_equal(g, np.ones(CHECK_CONFIG.d))
                    for g in [m.final_norm_g] + [x for b in m.blocks for x in (b.attn_norm_g, b.mlp_norm_g)])
    c = check_decoder(SEED)
    scale = 1.0 / math.sqrt(CHECK_CONFIG.d)
    out["check_decoder embed"] = moment_scores(c.embed, 1.0)
    out["check_decoder head"] = moment_scores(c.head, scale)
    for b, block in enumerate(c.blocks):
        for name in _MATRICES:
            out[f"check_decoder block {b} {name}"] = moment_scores(getattr(block, name), scale)
    out["check_decoder pooled 1/sqrt(d)"] = moment_scores(np.concatenate([v.ravel() for v in _arrays(c)[1:]]), scale)
    return {"scores": out, "random_decoder_norms_one": norms_one}


def _arrays(model) -> list:
    """The embedding, the head (when not tied) and every block matrix."""
    head = [] if model.head is model.embed else [model.head]
    return [model.embed] + head + [getattr(b, n) for b in model.blocks for n in _MATRICES]


@claim(id="decoder.random-init-law",
       title="the random decoders draw every matrix entry from the stated N(0, std^2) (std 0.02, and the block "
             "check's 1 and 1/sqrt(d)), normalisation weights one: each matrix's sample mean and mean square within "
             "5 standard errors",
       source=SOURCE, note="decoder-random-init-law.md")
def check_random_init_law() -> CheckResult:
    r = init_law_scores()
    scores = r["scores"]
    worst_mean = max(abs(s["z_mean"]) for s in scores.values())
    worst_scale = max(abs(s["z_scale"]) for s in scores.values())
    ok = worst_mean < Z_MAX and worst_scale < Z_MAX and r["random_decoder_norms_one"]
    return CheckResult("decoder.random-init-law", "passed" if ok else "failed",
                       {"max_z_mean": worst_mean, "max_z_scale": worst_scale,
                        "norms_one": r["random_decoder_norms_one"]},
                       {"max_z_mean": f"< {Z_MAX:g}", "max_z_scale": f"< {Z_MAX:g}", "norms_one": True},
                       f"every matrix's mean and mean square within {Z_MAX:g} standard errors of N(0, std^2)",
                       {**r, "matrices": len(scores)})
