"""The untrained decoder: the per-layer token geometry of a checkpoint's architecture at initialisation, beside the
trained model's (issue 40).

The trained model and ``len(seeds)`` draws of :func:`numerics.decoder.random_init.random_decoder` (same
architecture and tokenizer, every matrix entry N(0, std^2), norm weights 1) read the same text. Per layer
l = 0 .. L (l = 0: the embeddings) the same measurements as :func:`numerics.decoder.layers.layer_study`:

- the mean pairwise cosine of the tokens and their eps-cluster count (:mod:`numerics.trained.geometry`);
- the interaction energy E_beta of the normalised tokens at the fixed beta = 1 (:data:`numerics.decoder.layers.
  FIXED_BETA`, comparable across models) and at the layer's own effective beta (median beta_iso of its heads);
- the effective rank of the normalised tokens (:func:`effective_rank`, Roy and Vetterli 2007): exp of the Shannon
  entropy of the singular values divided by their sum, between 1 (all tokens on one line) and min(n, d);

and, for the draws, the band over seeds (mean, smallest, largest per layer), and how far each block's attention
is from the uniform causal attention (the Cesaro matrix C_ij = 1/(i + 1), j <= i, 0-based): the largest total
variation distance over heads and rows, max_{h,i} (1/2) sum_j |p^h_ij - C_ij| (the picture of
:mod:`numerics.longcontext.at_birth`).

The homogenized theory's prediction (:func:`homogenized_prediction`; theory.homogenized, attnflow's own derivation
for the Gaussian random transformer, arXiv 2604.01978 read in the abstract only) for this random network: the
attention overlaps G_ik = E[sum_j A_ij A_kj] of causal rows whose scores have the standard deviation std^2 d of the
drawn weights, the collapse ratio R = (d - 2) mean G_ik / ((d - 1) mean G_ii), and the mean pairwise cosine after
the first block when its attention kick dominates the residual; :func:`random_init_study`'s ``"random"`` entry is
the measurement it is compared with (``band["mean_cosine"]`` per layer).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from numerics.common.errors import InputError, require_int
from numerics.decoder.forward import DecoderTrace, run_decoder
from numerics.decoder.layers import FIXED_BETA, energy_rows, decoder_betas
from numerics.decoder.random_init import initializer_std, random_decoder
from numerics.decoder.weights import Decoder
from numerics.trained.geometry import DEFAULT_EPS, layer_geometry, unit_rows
from theory.homogenized import collapse_ratio

#: the quantities of the per-layer band
QUANTITIES = ("mean_cosine", "clusters", "effective_rank", "energy_fixed_beta")
#: the most draws of one study
MAX_SEEDS = 64


def effective_rank(X: np.ndarray) -> float:
    """exp(-sum_i p_i log p_i), p_i = sigma_i / sum_j sigma_j, sigma the singular values of the normalised rows of
    X (Roy and Vetterli, "The effective rank", EUSIPCO 2007)."""
    s = np.linalg.svd(unit_rows(X), compute_uv=False)
    p = s[s > 0] / s.sum()
    return float(np.exp(-np.sum(p * np.log(p))))


def cesaro_distance(attentions: np.ndarray) -> list[float]:
    """Per block, max over heads and rows of the total variation distance between the attention row and the
    uniform causal row (1/(i + 1) on j <= i)."""
    n = attentions.shape[-1]
    C = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    return [float(0.5 * np.abs(A - C).sum(axis=-1).max()) for A in attentions]


def cesaro_power_rows(n: int, depth: int) -> np.ndarray:
    """(depth, n): the last row of C^H, H = 1 .. depth, C the n x n uniform causal matrix (float64)."""
    C = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    row, out = np.eye(n)[-1], []
    for _ in range(depth):
        row = row @ C
        out.append(row)
    return np.array(out)


def influence_rows(attentions: np.ndarray) -> np.ndarray:
    """(L, n): the last row of the attention-only routing A_H ... A_1, H = 1 .. L, A_l the head average of block l's
    attention (the residual stream and the MLP left out: the Cesaro picture of arXiv 2603.10123)."""
    A = attentions.mean(axis=1)
    row, out = np.eye(A.shape[-1])[-1], []
    for layer in A:
        row = row @ layer
        out.append(row)
    return np.array(out)


def at_birth_study(model: Decoder, ids, std: float, seed: int = 0) -> dict:
    """The attention-only routing of one draw of ``model``'s architecture, with and without the rotary embedding,
    against the Cesaro powers: per depth H the L1 distance of the last rows, and between the two draws."""
    rows = {}
    for rope in (True, False):
        trace = run_decoder(random_decoder(model.config, seed, std, rope=rope), ids, attentions=True, logits="none")
        rows[rope] = influence_rows(trace.attentions)
    ces = cesaro_power_rows(len(ids), rows[True].shape[0])
    return {"std": std, "seed": seed, "tokens": len(ids),
            "to_cesaro_rope": np.abs(rows[True] - ces).sum(axis=1).tolist(),
            "to_cesaro_no_rope": np.abs(rows[False] - ces).sum(axis=1).tolist(),
            "rope_vs_no_rope": np.abs(rows[True] - rows[False]).sum(axis=1).tolist(),
            "first_token_weight": rows[True][:, 0].tolist(), "cesaro_first_token_weight": ces[:, 0].tolist()}


def homogenized_prediction(d: int, n: int, std: float, head_dim: int = 64, samples: int = 2000,
                           seed: int = 0) -> dict:
    """The homogenized Gaussian theory's prediction for the random decoder (d, n tokens, entries N(0, std^2)).

    After RMSNorm a token has |y|^2 = d, so a query or key coordinate has standard deviation std sqrt(d) and a score
    <q, k>/sqrt(head_dim) has standard deviation s = std^2 d (independent of head_dim). With nearly orthogonal
    embeddings (d = 576 >> n) the rows are those of the homogenized model: causal softmax of s <a_i, b_j>/sqrt(k),
    a_i, b_j independent N(0, I_k). From the overlaps G = E[A A^T]:

    - ``R``: the collapse ratio (d - 2) mean_{i != k} G_ik / ((d - 1) mean_i G_ii) of :mod:`theory.homogenized`;
    - ``first_block_cosine``: the mean over pairs of G_ik / sqrt((G_ii + e)(G_kk + e)), e = 1/(std^2 d^2): the
      cosine of x + u after one block, u the attention kick (|u_i|^2 = std^4 d^3 G_ii per unit of the value and
      output weights, |x|^2 = std^2 d for the embedding); the MLP of the block is left out of the prediction.

    Parameters
    ----------
    d, n : int
        Width and number of tokens.
    std : float
        Standard deviation of every weight entry.
    head_dim : int
        Width of a head (the scores' law does not depend on it beyond the Gaussian approximation).
    samples : int
        Draws of one head's scores.
    seed : int

    Returns
    -------
    dict
        ``score_std``, ``R``, ``first_block_cosine``, ``overlap_self``, ``overlap_cross`` (means over tokens and
        pairs).
    """
    d = require_int(d, "d", 3)
    n = require_int(n, "n", 2)
    if not std > 0:
        raise InputError(f"std must be > 0, got {std}")
    rng = np.random.default_rng(seed)
    s = std ** 2 * d
    a = rng.standard_normal((samples, n, head_dim))
    b = rng.standard_normal((samples, n, head_dim))
    S = s * a @ b.transpose(0, 2, 1) / np.sqrt(head_dim)
    S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A /= A.sum(axis=-1, keepdims=True)
    G = (A @ A.transpose(0, 2, 1)).mean(axis=0)
    off = ~np.eye(n, dtype=bool)
    e = 1.0 / (std ** 2 * d ** 2)
    diag = np.diag(G) + e
    cos = G / np.sqrt(np.outer(diag, diag))
    return {"score_std": s, "R": float(collapse_ratio(d, G[off].mean(), np.trace(G) / n)),
            "first_block_cosine": float(cos[off].mean()), "overlap_self": float(np.trace(G) / n),
            "overlap_cross": float(G[off].mean())}


def geometry_rows(model: Decoder, trace: DecoderTrace, eps: float) -> dict:
    """Per layer (0 .. L): mean cosine, clusters, effective rank, energies (fixed beta and own beta) and beta."""
    geo = layer_geometry(trace.states, eps)
    rows = energy_rows(trace.states, decoder_betas(model, trace))
    return {"mean_cosine": [g.mean_cosine for g in geo], "clusters": [g.clusters for g in geo],
            "largest_cluster": [g.largest_cluster for g in geo],
            "effective_rank": [effective_rank(X) for X in trace.states],
            "energy_fixed_beta": rows["energy_fixed_beta"], "energy": rows["energy"], "beta": rows["beta"]}


def band(runs: list[dict], quantities: Sequence[str] = QUANTITIES) -> dict:
    """quantity -> {"mean", "min", "max"} per layer over the runs."""
    out = {}
    for q in quantities:
        A = np.array([r[q] for r in runs], dtype=float)
        out[q] = {"mean": A.mean(axis=0).tolist(), "min": A.min(axis=0).tolist(), "max": A.max(axis=0).tolist()}
    return out


def random_init_study(model: Decoder, text: str, seeds: Sequence[int] = (0, 1, 2), std: float | None = None,
                      eps: float = DEFAULT_EPS, rope: bool = True,
                      progress: Callable[[float, float], None] | None = None,
                      note: Callable[[str], None] | None = None) -> dict:
    """The trained ``model`` and ``len(seeds)`` random draws of its architecture on ``text`` (module docstring).

    Parameters
    ----------
    model : Decoder
        The trained checkpoint (its architecture and tokenizer are reused; ``llama`` family).
    text : str
    seeds : sequence of int
        One draw per seed (at most :data:`MAX_SEEDS`).
    std : float, optional
        Standard deviation of the draws (default: the checkpoint's ``initializer_range``,
        :func:`numerics.decoder.random_init.initializer_std`).
    eps : float
        Cluster threshold (radians).
    rope : bool
        False draws the same weights and drops the rotary embedding.
    progress : callable, optional
        ``progress(done, total)`` over the runs (the trained model counts as one).
    note : callable, optional
        Called with a one-line description of each phase.

    Returns
    -------
    dict
        ``trained`` and ``random`` (``per_seed``, ``band``, ``cesaro_distance``), ``tokens``, ``seeds``, ``std``.
    """
    seeds = [require_int(s, "seed", 0, 2**63 - 1) for s in seeds]
    std_from = "given"
    if std is None:
        std, std_from = initializer_std(model)
    if not 1 <= len(seeds) <= MAX_SEEDS:
        raise InputError(f"the number of seeds must lie in [1, {MAX_SEEDS}], got {len(seeds)}")
    ids = model.tokenizer.encode(text)
    if len(ids) < 2:
        raise InputError("the text gives a single token: the geometry needs at least two")
    total = len(seeds) + 1
    say = note or (lambda _: None)
    say(f"trained model: forward pass and per-layer geometry of {len(ids)} tokens ...")
    trained = geometry_rows(model, run_decoder(model, ids, attentions=False, logits="none"), eps)
    if progress is not None:
        progress(1, total)
    per_seed, cesaro = [], []
    for k, seed in enumerate(seeds):
        say(f"random draw {k + 1}/{len(seeds)} (seed {seed}, std {std:g}): weights, forward pass, geometry ...")
        rnd = random_decoder(model.config, seed, std, tokenizer=model.tokenizer, rope=rope)
        trace = run_decoder(rnd, ids, attentions=True, logits="none")
        per_seed.append({"seed": seed, **geometry_rows(rnd, trace, eps)})
        cesaro.append(cesaro_distance(trace.attentions))
        del rnd, trace
        if progress is not None:
            progress(k + 2, total)
    return {"model": model.config.name, "tokens": len(ids), "eps": eps, "std": std, "std_from": std_from, "seeds": seeds,
            "rope": rope,
            "fixed_beta": FIXED_BETA, "trained": trained,
            "random": {"per_seed": per_seed, "band": band(per_seed), "cesaro_distance": cesaro}}
