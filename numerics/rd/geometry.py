r"""The limit geometry of the rescaled :math:`\mathbb{R}^d` dynamics (GLPR arXiv 2305.05465).

- :func:`boolean_limit`: leaders, assignment, Boolean gap and rank of :math:`P(t_{\text{end}})`.
- :func:`hull_vertices`: vertices of :math:`\operatorname{conv}\{z_i(0)\}` (:math:`d = 1`: the two extreme tokens).
- :func:`predicted_limit`: the hardmax prediction from the initial geometry: token :math:`i` is predicted to attend
  to :math:`j^*(i) = \operatorname{argmax}_j z_j^\top A z_i(0)`; the predicted leaders are the *self-attending*
  tokens :math:`j^*(j) = j`. In the hardmax (zero-temperature) dynamics this prediction is exact for :math:`A`
  symmetric positive semi-definite (the segment from :math:`z_i` to its leader stays in the leader's cell: arXiv
  2508.09628); for softmax attention it is exact once the initial logit gaps are large and is measured, not
  assumed, otherwise (``proofs_notes/rd-polytope-leaders.md``).
- :func:`hyperplane_coordinates`: :math:`w^\top z_i` with :math:`w` the left eigenvector of a simple positive top
  eigenvalue of :math:`V` (the tokens cluster on at most three hyperplanes :math:`\{w^\top z = c\}`).
- :func:`cluster_values` and :func:`limit_codimension`: clusters of scalar values and the codimension of the
  limit set (the largest affine dimension of a cluster of tokens sharing a Boolean row).
"""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError

#: logit gap (at t = 0) above which a row of the hardmax prediction is considered determined
PREDICTION_MARGIN = 5.0
#: numerical rank of P: singular values above this fraction of the largest count
RANK_RTOL = 1e-6


def boolean_limit(P: np.ndarray) -> dict:
    """Leaders (columns that win some row), assignment (argmax of each row), Boolean gap and rank of P."""
    P = np.asarray(P, dtype=float)
    assignment = np.argmax(P, axis=1)
    sv = np.linalg.svd(P, compute_uv=False)
    return {"leaders": sorted({int(a) for a in assignment}), "assignment": [int(a) for a in assignment],
            "boolean_gap": float(np.max(1.0 - P.max(axis=1))),
            "rank": int(np.sum(sv > RANK_RTOL * sv[0]))}


def hull_vertices(Z: np.ndarray) -> list[int]:
    """Indices of the vertices of conv{z_i} (d = 1: argmin and argmax; degenerate hulls: InputError)."""
    Z = np.asarray(Z, dtype=float)
    if Z.shape[1] == 1:
        return sorted({int(np.argmin(Z[:, 0])), int(np.argmax(Z[:, 0]))})
    from scipy.spatial import ConvexHull, QhullError

    try:
        return sorted(int(v) for v in ConvexHull(Z).vertices)
    except QhullError as exc:
        raise InputError(f"the convex hull of the tokens is degenerate (need n >= d + 1 points in general "
                         f"position): {str(exc).splitlines()[0]}") from None


def logits(Z: np.ndarray, A: np.ndarray) -> np.ndarray:
    """L_ij = z_j^T A z_i (the softmax logits of :mod:`numerics.gaussian.solutions`)."""
    return (Z @ A.T) @ Z.T


def predicted_limit(Z0: np.ndarray, A: np.ndarray, margin: float = PREDICTION_MARGIN) -> dict:
    r"""Hardmax prediction from the initial tokens: :math:`j^*(i) = \operatorname{argmax}_j z_j^\top A z_i`,
    leaders :math:`= \{j : j^*(j) = j\}`.

    Row :math:`i` is ``determined`` when its logit gap (best minus second best, at :math:`t = 0`) is at least
    ``margin`` and :math:`j^*(i)` is a self-attending token whose own gap is at least ``margin``: then softmax and
    hardmax agree from the start (weights off the winner below :math:`e^{-\mathrm{margin}}`, shrinking like
    :math:`e^{-\mathrm{margin}\, e^{2t}}` for :math:`V = I`) and the segment argument of the hardmax dynamics applies.
    Other rows are not predicted (a weak leader can be absorbed by a stronger one; tokens with a small gap drift
    before they lock).
    """
    L = logits(np.asarray(Z0, float), np.asarray(A, float))
    best = np.argmax(L, axis=1)
    part = np.sort(L, axis=1)
    gap = part[:, -1] - part[:, -2]
    self_attending = best == np.arange(len(L))
    determined = (gap >= margin) & self_attending[best] & (gap[best] >= margin)
    return {"assignment": [int(b) for b in best],
            "leaders": sorted(int(j) for j in np.nonzero(self_attending)[0]),
            "determined": [bool(v) for v in determined], "gaps": gap.tolist(), "margin": float(margin)}


def top_left_eigenvector(V: np.ndarray) -> tuple[float, np.ndarray]:
    """(lambda_1, w) with w^T V = lambda_1 w^T, |w| = 1, for a simple, real, positive top eigenvalue of V."""
    V = np.asarray(V, dtype=float)
    mu, W = np.linalg.eig(V.T)
    order = np.argsort(-mu.real)
    lam = mu[order[0]]
    if abs(lam.imag) > 1e-12 or lam.real <= 0:
        raise InputError(f"V has no real positive top eigenvalue (top eigenvalue {complex(lam):.6g})")
    if len(mu) > 1 and mu[order[1]].real > lam.real - 1e-9 * max(1.0, abs(lam.real)):
        raise InputError("the top eigenvalue of V is not simple")
    w = W[:, order[0]].real
    w = w / np.linalg.norm(w)
    return float(lam.real), w * np.sign(w[np.argmax(np.abs(w))])


def cluster_values(c: np.ndarray, rel_gap: float = 1e-2) -> list[np.ndarray]:
    """Split scalar values into clusters at gaps larger than ``rel_gap`` times their range (index arrays)."""
    c = np.asarray(c, dtype=float)
    order = np.argsort(c)
    span = max(float(c.max() - c.min()), 1e-300)
    cuts = np.nonzero(np.diff(c[order]) > rel_gap * span)[0] + 1
    return np.split(order, cuts)


def hyperplane_coordinates(Z: np.ndarray, V: np.ndarray) -> dict:
    r""":math:`w^\top z_i`, the hyperplane clusters :math:`\{w^\top z = c_k\}` and the largest within-cluster spread."""
    lam, w = top_left_eigenvector(V)
    c = np.asarray(Z, dtype=float) @ w
    groups = cluster_values(c)
    return {"eigenvalue": lam, "normal": w.tolist(), "values": [float(np.mean(c[g])) for g in groups],
            "count": len(groups), "spread": float(max(np.ptp(c[g]) for g in groups)),
            "range": float(np.ptp(c))}


def spread(Z: np.ndarray) -> float:
    """max_i |z_i - mean(z)|."""
    Z = np.asarray(Z, dtype=float)
    return float(np.max(np.linalg.norm(Z - Z.mean(axis=0), axis=1)))


def limit_codimension(Z: np.ndarray, assignment, rel_tol: float = 1e-3, scale: float | None = None) -> dict:
    """Codimension d - k of the limit set, k = the largest affine dimension of a group of tokens sharing a leader.

    The affine dimension of a group is the number of singular values of its centred coordinates above
    ``rel_tol`` times ``scale``: pass the spread of the *initial* tokens (max_i |z_i(0) - mean|), a fixed
    reference against which contracting directions shrink and expanding ones grow; the default, the spread of
    ``Z`` itself, cannot see a single collapsed group. For V = I the groups collapse to points (codimension d).
    """
    Z = np.asarray(Z, dtype=float)
    assignment = np.asarray(assignment)
    if scale is None:
        scale = spread(Z)
    scale = max(scale, 1e-300)
    dims = []
    for leader in np.unique(assignment):
        G = Z[assignment == leader]
        sv = np.linalg.svd(G - G.mean(axis=0), compute_uv=False) if len(G) > 1 else np.zeros(1)
        dims.append(int(np.sum(sv > rel_tol * scale)))
    k = max(dims)
    return {"codimension": Z.shape[1] - k, "group_dimensions": dims}
