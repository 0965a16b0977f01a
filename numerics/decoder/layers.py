"""Token geometry layer by layer for a decoder, with the interaction energy, and MiniLM's beside it.

For real text through the model (:func:`layer_study`), per layer l = 0 .. L (l = 0: the embeddings):

- the geometry of the normalised tokens u_i = x_i / |x_i| (:func:`numerics.trained.geometry.layer_geometry`):
  the histogram of pairwise cosines, the mean cosine, the eps-cluster count;
- the interaction energy E_beta(U) = 1/(2 beta n^2) sum_{i,j} (e^{beta <u_i, u_j>} - 1) (GLPR's E_beta minus
  1/(2 beta), :func:`numerics.core.field.interaction_energy`, normalisation ``glpr-shifted``) at the layer's
  effective inverse temperature beta_l = the median over the heads of block l of ``beta_iso``
  (:mod:`numerics.decoder.heads`; the energy of the embeddings uses block 1's); the sa and usa flows with
  Q = K = V = I increase E_beta along trajectories, so a trained decoder that followed them would give a
  non-decreasing sequence when beta is held fixed. Because beta_l changes from layer to layer the sequence at
  the layers' own betas is not a Lyapunov sequence; the energy at one fixed beta (:data:`FIXED_BETA`) is
  reported too, and both are said to be monotone or not, plainly;
- the same for all-MiniLM-L6-v2 (:mod:`numerics.trained`, post-LN encoder, 6 layers) on the same text
  (:func:`minilm_study`; beta_l from :func:`numerics.trained.comparison.effective_betas`).
"""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError
from numerics.core.field import interaction_energy
from numerics.decoder.forward import DecoderTrace, run_decoder
from numerics.decoder.heads import beta_iso_values
from numerics.decoder.weights import Decoder
from numerics.trained.geometry import DEFAULT_EPS, layer_geometry, unit_rows

#: the fixed inverse temperature of the second energy sequence
FIXED_BETA = 1.0
#: |beta| above which the glpr-shifted energy overflows (e^{beta} beyond float64): log-mean-exp is used instead
ENERGY_BETA_MAX = 600.0
#: rounding allowance of "non-decreasing" (relative to the energy's scale)
MONOTONE_ROUNDING = 1e-12


def energy(U: np.ndarray, beta: float) -> tuple[float, str]:
    """(energy, normalisation): glpr-shifted E_beta, or log-mean-exp beyond :data:`ENERGY_BETA_MAX`."""
    norm = "glpr-shifted" if abs(beta) <= ENERGY_BETA_MAX else "log-mean-exp"
    return float(interaction_energy(U, beta, normalization=norm)), norm


def monotone(values) -> dict:
    """Whether a sequence is non-decreasing (up to rounding) and the layers where it decreases."""
    v = np.asarray(values, dtype=float)
    tol = MONOTONE_ROUNDING * max(1.0, float(np.abs(v).max()))
    drops = [int(i + 1) for i in np.nonzero(np.diff(v) < -tol)[0]]
    return {"non_decreasing": not drops, "decreases_at": drops}


def energy_rows(states: np.ndarray, betas: list[float]) -> dict:
    """Energies of the normalised frames at their own betas (frame l at ``betas[max(l - 1, 0)]``) and at
    :data:`FIXED_BETA`, with their monotonicity."""
    own, norms, fixed = [], [], []
    for l, X in enumerate(states):
        U = unit_rows(X)
        e, nrm = energy(U, betas[max(l - 1, 0)])
        own.append(e)
        norms.append(nrm)
        fixed.append(energy(U, FIXED_BETA)[0])
    return {"beta": [betas[max(l - 1, 0)] for l in range(len(states))], "energy": own, "normalization": norms,
            "energy_fixed_beta": fixed, "fixed_beta": FIXED_BETA,
            "monotone_own_beta": monotone(own), "monotone_fixed_beta": monotone(fixed)}


def decoder_betas(model: Decoder, trace: DecoderTrace) -> list[float]:
    """beta_l = median over the heads of block l of beta_iso (module docstring), l = 1 .. L."""
    return [float(np.median(beta_iso_values(model, l))) for l in range(trace.layers)]


def layer_study(model: Decoder, text: str, eps: float = DEFAULT_EPS, trace: DecoderTrace | None = None) -> dict:
    """Per-layer geometry and energies of ``text`` through the decoder (module docstring)."""
    if trace is None:
        trace = run_decoder(model, model.tokenizer.encode(text), attentions=False, logits="none")
    if trace.n < 2:
        raise InputError("the text gives a single token: the geometry needs at least two")
    geo = [g.to_dict() for g in layer_geometry(trace.states, eps)]
    betas = decoder_betas(model, trace)
    rows = energy_rows(trace.states, betas)
    mean_cos = [g["mean_cosine"] for g in geo]
    return {"model": model.config.name, "tokens": trace.n, "eps": eps, "layers": geo, **rows,
            "mean_cosine_monotone": monotone(mean_cos), "token_pieces": model.tokenizer.pieces(trace.ids)}


def minilm_study(text: str, eps: float = DEFAULT_EPS) -> dict:
    """The same measurements for all-MiniLM-L6-v2 on ``text`` (its tokenizer, at most 256 tokens)."""
    from numerics.trained.checkpoint import load_checkpoint
    from numerics.trained.comparison import effective_betas
    from numerics.trained.encoder import run_encoder
    from numerics.trained.heads import mean_square_norm

    ckpt = load_checkpoint()
    tr = run_encoder(ckpt, text)
    geo = [g.to_dict() for g in layer_geometry(tr.states, eps)]
    betas = [effective_betas(ckpt, l + 1, mean_square_norm(tr.states[l]))["beta_iso_median"] for l in range(ckpt.layers)]
    rows = energy_rows(tr.states, betas)
    return {"model": ckpt.name, "tokens": tr.n, "eps": eps, "layers": geo, **rows,
            "mean_cosine_monotone": monotone([g["mean_cosine"] for g in geo])}
