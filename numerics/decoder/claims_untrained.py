"""The claim about the untrained decoder (issue 40): what SmolLM2's architecture does at initialisation, beside the
trained model (:mod:`numerics.decoder.untrained`), at two initialisation scales.

Measured, honestly whichever way it goes: with GPT-2's standard deviation 0.02 the untrained decoder's attention
is nearly the uniform causal (Cesaro) average and its tokens collapse with depth, where the trained model's do not;
with SmolLM2's own ``initializer_range`` 1/sqrt(576) = 1/24 the attention is far from uniform and the tokens do not
collapse either. So "an untrained model collapses" is a statement about the initialisation scale, not about the
architecture. ``default=False``: it reads SmolLM2 (architecture and tokenizer) and draws six random models of 135M
parameters (about a minute of CPU); ``attnflow verify --all`` runs it.
"""
from __future__ import annotations

from numerics.common.verification import CheckResult, claim

SOURCE_INIT = ("issue 40's question of what an untrained model does at step 0; transformers' "
               "LlamaPreTrainedModel._init_weights (N(0, initializer_range^2), RMSNorm weights 1) and SmolLM2-135M's "
               "config.json (initializer_range 1/24); GPT-2 (std 0.02); Chowdhury arXiv 2603.10123 (uniform causal "
               "attention at initialisation)")
#: the draws of the claim
SEEDS = (0, 1, 2)
#: thresholds at std 0.02, the collapse (measured: last-layer mean cosine 0.84 .. 0.89 against 0.62 trained;
#: 2 clusters against 58; effective rank 0.37 of the embeddings' at most, trained 0.98; Cesaro distance 0.19)
COLLAPSE = {"mean_cosine_min": 0.75, "margin": 0.1, "clusters_max": 3, "rank_ratio_max": 0.5, "cesaro_max": 0.3}
#: thresholds at std 1/24, no collapse (measured: mean cosine at most 0.36, 60 clusters of 60, effective rank
#: 1.21 of the embeddings', Cesaro distance 0.71)
NO_COLLAPSE = {"mean_cosine_max": 0.45, "rank_ratio_min": 1.0, "cesaro_min": 0.5}
#: the trained model's side (measured 0.98 of the embeddings' effective rank)
TRAINED_RANK_RATIO_MIN = 0.8


def _summary(study: dict) -> dict:
    runs = study["random"]["per_seed"]
    return {"std": study["std"],
            "last_mean_cosine_min": min(r["mean_cosine"][-1] for r in runs),
            "last_mean_cosine_max": max(r["mean_cosine"][-1] for r in runs),
            "last_clusters_min": min(r["clusters"][-1] for r in runs),
            "last_clusters_max": max(r["clusters"][-1] for r in runs),
            "last_largest_cluster_min": min(r["largest_cluster"][-1] for r in runs),
            "rank_ratio_min": min(r["effective_rank"][-1] / r["effective_rank"][0] for r in runs),
            "rank_ratio_max": max(r["effective_rank"][-1] / r["effective_rank"][0] for r in runs),
            "last_effective_rank_mean": study["random"]["band"]["effective_rank"]["mean"][-1],
            "cesaro_distance": max(max(c) for c in study["random"]["cesaro_distance"]),
            "mean_cosine_band": study["random"]["band"]["mean_cosine"]}


@claim(id="decoder.random-init-collapse", title="SmolLM2's architecture at initialisation: with std 0.02 (GPT-2) its "
       "attention is nearly uniform-causal and its tokens collapse with depth (the trained model's do not); with its "
       "own initializer_range 1/24 they do not collapse", source=SOURCE_INIT, note="decoder-random-init-collapse.md",
       default=False)
def check_random_init_collapse() -> CheckResult:
    cid = "decoder.random-init-collapse"
    from numerics.decoder.gguf_reader import PACKAGE_HINT, packaged_available

    if not packaged_available():
        return CheckResult(cid, "inconclusive", None, None, None,
                           {"reason": f"the packaged decoder (architecture and tokenizer) is missing: {PACKAGE_HINT}"})
    from numerics.decoder.checkpoint import load_decoder
    from numerics.decoder.random_init import GPT2_STD, SMOLLM2_INITIALIZER_RANGE
    from numerics.decoder.untrained import random_init_study
    from numerics.trained.texts import shipped_paragraphs

    model, text = load_decoder(), shipped_paragraphs()[0]
    small = random_init_study(model, text, SEEDS, GPT2_STD)
    own = random_init_study(model, text, SEEDS, SMOLLM2_INITIALIZER_RANGE)
    tr, n = small["trained"], small["tokens"]
    a, b = _summary(small), _summary(own)
    trained_cos, trained_ratio = tr["mean_cosine"][-1], tr["effective_rank"][-1] / tr["effective_rank"][0]
    c = COLLAPSE
    collapse = (a["last_mean_cosine_min"] >= c["mean_cosine_min"]
                and a["last_mean_cosine_min"] - trained_cos >= c["margin"] and a["last_clusters_max"] <= c["clusters_max"]
                and a["rank_ratio_max"] <= c["rank_ratio_max"] and a["cesaro_distance"] <= c["cesaro_max"])
    q = NO_COLLAPSE
    no_collapse = (b["last_mean_cosine_max"] <= q["mean_cosine_max"] and b["last_clusters_min"] >= n // 2
                   and b["rank_ratio_min"] >= q["rank_ratio_min"] and b["cesaro_distance"] >= q["cesaro_min"])
    trained_side = tr["clusters"][-1] >= n // 2 and trained_ratio >= TRAINED_RANK_RATIO_MIN
    measured = {"std 0.02: last mean cosine (min)": a["last_mean_cosine_min"],
                "std 0.02: last clusters (max)": a["last_clusters_max"], "std 0.02: rank ratio (max)": a["rank_ratio_max"],
                "std 0.02: Cesaro distance": a["cesaro_distance"],
                "std 1/24: last mean cosine (max)": b["last_mean_cosine_max"],
                "std 1/24: last clusters (min)": b["last_clusters_min"], "std 1/24: rank ratio (min)": b["rank_ratio_min"],
                "std 1/24: Cesaro distance": b["cesaro_distance"],
                "trained: last mean cosine": trained_cos, "trained: last clusters": tr["clusters"][-1],
                "trained: rank ratio": trained_ratio}
    expected = {"std 0.02": f"mean cosine >= {c['mean_cosine_min']} and trained + {c['margin']}, clusters <= "
                            f"{c['clusters_max']}, rank ratio <= {c['rank_ratio_max']}, Cesaro <= {c['cesaro_max']}",
                "std 1/24": f"mean cosine <= {q['mean_cosine_max']}, clusters >= {n // 2}, rank ratio >= "
                            f"{q['rank_ratio_min']}, Cesaro >= {q['cesaro_min']}",
                "trained": f"clusters >= {n // 2}, rank ratio >= {TRAINED_RANK_RATIO_MIN}"}
    return CheckResult(cid, "passed" if collapse and no_collapse and trained_side else "failed", measured, expected,
                       "as stated", {"tokens": n, "seeds": list(SEEDS), "trained": tr, "std_002": a, "std_own": b,
                                     "collapse_at_002": collapse, "no_collapse_at_own": no_collapse,
                                     "trained_last_mean_cosine": trained_cos, "trained_rank_ratio": trained_ratio,
                                     "trained_last_clusters": tr["clusters"][-1]})


#: the at-birth comparison: the largest L1 distance of the attention-only routing row from the Cesaro power's over
#: the 30 depths (measured at std 0.02: 0.059 with RoPE, 0.074 without, 0.050 between them; at std 1/24: 0.28,
#: 0.32, 0.26)
AT_BIRTH_SMALL = 0.1
AT_BIRTH_OWN = 0.4


@claim(id="decoder.random-init-at-birth", title="at initialisation SmolLM2's attention-only routing over 1 .. 30 "
       "blocks is the Cesaro power within L1 distance 0.1 at std 0.02, with or without RoPE (0.4 at its own std "
       "1/24)", source=SOURCE_INIT + "; longcontext.at-birth (the exact Cesaro powers)",
       note="decoder-random-init-at-birth.md", default=False)
def check_random_init_at_birth() -> CheckResult:
    cid = "decoder.random-init-at-birth"
    from numerics.decoder.gguf_reader import PACKAGE_HINT, packaged_available

    if not packaged_available():
        return CheckResult(cid, "inconclusive", None, None, None,
                           {"reason": f"the packaged decoder (architecture and tokenizer) is missing: {PACKAGE_HINT}"})
    from numerics.decoder.checkpoint import load_decoder
    from numerics.decoder.random_init import GPT2_STD, SMOLLM2_INITIALIZER_RANGE
    from numerics.decoder.untrained import at_birth_study
    from numerics.trained.texts import shipped_paragraphs

    model = load_decoder()
    ids = model.tokenizer.encode(shipped_paragraphs()[0])
    small, own = at_birth_study(model, ids, GPT2_STD), at_birth_study(model, ids, SMOLLM2_INITIALIZER_RANGE)

    def worst(s):
        return {k: max(s[k]) for k in ("to_cesaro_rope", "to_cesaro_no_rope", "rope_vs_no_rope")}

    a, b = worst(small), worst(own)
    ok = max(a.values()) <= AT_BIRTH_SMALL and max(b.values()) <= AT_BIRTH_OWN
    return CheckResult(cid, "passed" if ok else "failed", {"std 0.02": a, "std 1/24": b},
                       {"std 0.02": f"<= {AT_BIRTH_SMALL}", "std 1/24": f"<= {AT_BIRTH_OWN}"}, "as stated",
                       {"tokens": len(ids), "std_002": small, "std_own": own,
                        "small_rope": a["to_cesaro_rope"], "small_no_rope": a["to_cesaro_no_rope"],
                        "small_rope_vs_no_rope": a["rope_vs_no_rope"], "own_rope": b["to_cesaro_rope"],
                        "own_no_rope": b["to_cesaro_no_rope"],
                        "first_token_weight_H5": small["first_token_weight"][4],
                        "cesaro_first_token_weight_H5": small["cesaro_first_token_weight"][4]})
