r"""An iterated trained layer against the theory of clustering: :math:`l_{\max}`, metastable plateaus, reduced-model merges.

For a run of :func:`numerics.trained.flows.iterate_layer` (one layer applied again and again, the ALBERT setting of
GLPR arXiv 2312.10794), this module measures

- per iteration: the mean pairwise cosine and the eps-cluster count (:mod:`numerics.trained.geometry`);
- the metastable plateaus: maximal runs of :math:`\ge` ``min_length`` iterations with the same count :math:`k`,
  :math:`2 \le k < n`;

and sets them against what the theory predicts for attnflow's ``sa`` model with :math:`Q = K = V = I` on
:math:`\mathbb{S}^{d-1}` at the layer's effective inverse temperature (:mod:`numerics.trained.heads`: ``beta_iso``, the
median over heads of the isotropic part, and ``beta_spec``, the largest score norm):

- the mean-field dominant degree :math:`l_{\max}(\beta)` (:func:`theory.meanfield.dominant_degree`, Bruno,
  Pasqualotto, Agazzi arXiv 2410.23228): near the uniform measure the degree-:math:`l_{\max}` mode grows fastest;
  on :math:`\mathbb{S}^{d-1}` with :math:`d = 384`, :math:`l_{\max} = 1` (a single cluster, no multi-cluster
  metastable state) up to :math:`\beta = 256`
  (:func:`theory.meanfield.switch_point`);
- the merge times of the reduced model (:func:`numerics.clusters.reduced.predict_merges`, GKPR arXiv
  2410.06833): started from the clusters of the first plateau, the time (in layers: the ``layer`` step has size
  1) until its next merge, against the observed length of the plateau.

The comparison is reported as numbers, never tuned: a trained layer is not Q = K = V = I (its heads are far from
isotropic and its value maps far from the identity), so disagreement is expected and stated.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.clusters.reduced import predict_merges, reduce_configuration
from numerics.common.errors import InputError
from numerics.trained.checkpoint import Checkpoint
from numerics.trained.flows import IteratedRun
from numerics.trained.geometry import DEFAULT_EPS, layer_geometry, plateaus, unit_rows
from numerics.trained.heads import head_reports

MIN_PLATEAU = 3
ROUNDING = 1e-12


def effective_betas(ckpt: Checkpoint, layer: int, r2: float) -> dict:
    """``beta_iso`` (median over heads), ``beta_spec`` (max over heads) and the mean value trace of a layer."""
    reps = head_reports(ckpt, layer - 1, r2)
    return {"beta_iso_median": float(np.median([r.beta_iso for r in reps])),
            "beta_spec_max": float(max(r.beta_spec for r in reps)),
            "value_trace_mean": float(np.mean([r.value_trace for r in reps]))}


def dominant_degrees(d: int, betas: dict) -> dict:
    """l_max(beta) of ``sa`` on S^{d-1} for each named beta (negative beta: reported as None)."""
    from theory.meanfield import dominant_degree, switch_point

    out = {"switch_to_l2": float(switch_point(d, 1))}
    for name, beta in betas.items():
        out[name] = None if beta < 0 else int(dominant_degree("sa", d, beta).l_max)
    return out


def reduced_merge(frames: np.ndarray, plateau: tuple[int, int, int], beta: float, eps: float,
                  horizon: float = 1e4) -> dict:
    """Reduced-model prediction for a plateau (count, first, last): time to its next merge vs observed."""
    count, first, last = plateau
    Y, sizes, _ = reduce_configuration(unit_rows(frames[first]), eps)
    observed = (last + 1 - first) if last + 1 < len(frames) else None
    try:
        pred = predict_merges(Y, sizes, max(beta, 0.0), eps=eps, t_start=float(first), t_end=first + horizon)
        first_merge = (pred.events[0].time - first) if pred.events else None
    except InputError as exc:  # e.g. clusters too close for the reduced model's threshold
        return {"clusters": count, "from": first, "observed_layers": observed, "predicted_layers": None,
                "error": str(exc)}
    return {"clusters": count, "from": first, "observed_layers": observed, "predicted_layers": first_merge,
            "horizon": horizon, "beta": max(beta, 0.0)}


def compare_iterated(ckpt: Checkpoint, run: IteratedRun, eps: float = DEFAULT_EPS,
                     min_length: int = MIN_PLATEAU) -> dict:
    """Measurements of an iterated-layer run and the theory's predictions (module docstring)."""
    geo = layer_geometry(run.frames, eps)
    counts = [g.clusters for g in geo]
    mean_cos = [g.mean_cosine for g in geo]
    n = run.frames.shape[1]
    steps = np.diff(mean_cos)
    plats = [p for p in plateaus(counts, min_length) if 2 <= p[0] < n]
    betas = effective_betas(ckpt, run.layer, run.r2)
    degrees = dominant_degrees(ckpt.d, {"beta_iso_median": betas["beta_iso_median"],
                                        "beta_spec_max": betas["beta_spec_max"]})
    reduced = (reduced_merge(run.frames, plats[0], betas["beta_iso_median"], eps) if plats else None)
    return {"layer": run.layer, "variant": run.variant, "steps": run.steps, "n": n, "eps": eps, "r2": run.r2,
            "mean_cosine": mean_cos, "counts": counts,
            # non-decreasing up to rounding: a converged run moves by +-1e-16 per step
            "mean_cosine_increasing_fraction": float(np.mean(steps >= -ROUNDING)) if steps.size else math.nan,
            "largest_mean_cosine_drop": float(max(0.0, -steps.min())) if steps.size else 0.0,
            "plateaus": [{"clusters": c, "first": a, "last": b} for c, a, b in plats],
            "final_clusters": counts[-1], "betas": betas, "l_max": degrees, "reduced": reduced}
