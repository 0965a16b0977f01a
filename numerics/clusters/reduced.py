r"""The reduced model: clusters as weighted particles with the same attention kernel, and merge predictions.

A configuration made of :math:`k` groups of exactly coincident particles (:math:`n_a` particles at :math:`y_a`,
masses :math:`m_a = n_a / n`) stays so under ``sa`` and ``usa`` (:math:`Q = K = V = I`), and the group positions
follow

.. math::

    \begin{aligned}
    \texttt{sa}:\quad \dot y_a &= P_{y_a}\Big(\sum_b m_b e^{\beta\langle y_a, y_b\rangle} y_b
        \Big/ \sum_b m_b e^{\beta\langle y_a, y_b\rangle}\Big), \\
    \texttt{usa}:\quad \dot y_a &= P_{y_a}\Big(\sum_b m_b e^{\beta\langle y_a, y_b\rangle} y_b\Big)
        \qquad (\text{rescaled unit: } e^{\beta(\langle y_a, y_b\rangle - 1)})
    \end{aligned}

because the full field of particle :math:`i` in group :math:`a` is the same sum with the :math:`n_b` equal terms
of group :math:`b` collected (self-interaction included, as in GLPR). For clustered (not coincident) states the
reduced model is an approximation whose error is of the order of the cluster diameters.

Predicting merges: :func:`predict_merges` integrates the reduced model from the clusters of a state, and when
two reduced particles come within geodesic distance :math:`\varepsilon` (the same threshold that defines
clusters) it locates the time by re-integration on finer sub-grids, replaces the pair by one particle of the
summed mass at the normalised weighted mean, and continues: the predicted merge sequence and times.

Two equal clusters on :math:`\mathbb{S}^1` at angle :math:`\theta` (``sa``): with masses :math:`1/2`,

.. math::

    \frac{d\theta}{dt} = -\frac{2 \sin\theta}{1 + e^{\beta(1 - \cos\theta)}},

so the time to go from :math:`\theta_0` to :math:`\varepsilon` is exactly (:func:`two_cluster_merge_time`)

.. math::

    T(\theta_0, \varepsilon) = \int_\varepsilon^{\theta_0} \frac{1 + e^{\beta(1 - \cos u)}}{2 \sin u}\, du,

whose endpoint Laplace expansion is (:func:`two_cluster_laplace`; derivation in
proofs_notes/clusters-two-cluster-merge-time.md)

.. math::

    \frac{e^{\beta(1 - \cos\theta_0)}}{2\beta \sin^2\theta_0}
    \Big(1 + \frac{2 \cos\theta_0}{\beta \sin^2\theta_0} + O(\beta^{-2})\Big).

Source: GLPR (arXiv 2312.10794), GKPR (arXiv 2410.06833). Verified by: clusters.two-cluster-merge-time,
clusters.staircase.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
from scipy.integrate import quad

from numerics.clusters.detection import Clusters, component_labels, eps_graph_edges, find_clusters
from numerics.common.errors import InputError, require_choice, require_finite_array, require_points, require_real
from numerics.core.field import MODELS, TIME_UNITS
from numerics.clusters.merge_tree import REFINE_ATOL, REFINE_RTOL, MergeEvent, MergeHistory, reintegrator


def _masses(sizes) -> np.ndarray:
    sizes = require_finite_array(sizes, "sizes", ndim=1)
    if sizes.size < 1 or np.any(sizes <= 0):
        raise InputError(f"sizes must be positive, got {sizes.tolist()}")
    return sizes / sizes.sum()


def make_reduced_field(beta: float, sizes, model: str = "sa", *, time_unit: str = "natural"
                       ) -> Callable[[np.ndarray], np.ndarray]:
    r"""``field(Y) -> (k, d)`` of the reduced model for clusters of ``sizes`` particles (masses ``sizes / n``).

    See the module docstring for the equations. Weights are :math:`e^{\beta\langle y_a, y_b\rangle + \log m_b - c_a}`
    with :math:`c_a` the row maximum (``sa``, exact) or :math:`\beta` (``usa``: the rescaled unit, times
    :math:`e^{\beta}` in the natural unit).
    Verified by: clusters.two-cluster-merge-time (coincident groups evolve like the reduced model).
    """
    beta = require_real(beta, "beta")
    model = require_choice(model, "model", MODELS)
    time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
    log_m = np.log(_masses(sizes))
    if model == "usa" and time_unit == "natural" and beta > 700:
        raise InputError(f"usa field overflows in the natural time unit at beta={beta:g}; use time_unit='rescaled'")
    scale = math.exp(beta) if (model == "usa" and time_unit == "natural") else 1.0

    def field(Y: np.ndarray) -> np.ndarray:
        G = Y @ Y.T
        logits = beta * G + log_m[None, :]
        W = np.exp(logits - (logits.max(axis=1, keepdims=True) if model == "sa" else beta))
        # Project each y_b before summing: P_{y_a} y_b = y_b - (<y_a, y_b> / |y_a|^2) y_a, with the self term
        # exactly 0. Summing first and projecting after (P(sum_b w_b y_b)) cancels the dominant self term and
        # leaves absolute rounding noise ~1e-16 in velocities that are ~e^{-beta(1 - cos theta)} on plateaus,
        # which caps adaptive steps far below the merge time scale. The exact orthogonal projector (also off
        # the sphere, at Runge-Kutta stages) has no radial mode: the extension y - <y, v> y of numerics.core.field
        # decays radially at rate ~2 and limits explicit steps to O(1).
        coef = G / np.diag(G)[:, None]
        P = Y[None, :, :] - coef[:, :, None] * Y[:, None, :]
        idx = np.arange(Y.shape[0])
        P[idx, idx] = 0.0
        V = np.einsum("ab,abk->ak", W, P)
        if model == "sa":
            return V / W.sum(axis=1, keepdims=True)
        return scale * V

    return field


def reduce_configuration(X, eps: float) -> tuple[np.ndarray, np.ndarray, Clusters]:
    """Clusters of X (threshold eps) as reduced particles: (centres (k, d), sizes (k,), clusters)."""
    cl = find_clusters(X, eps)
    if np.any(np.isnan(cl.centres)):
        raise InputError("a cluster has zero mean (antipodal members); choose a smaller eps")
    return cl.centres.copy(), cl.sizes.copy(), cl


def expand_reduced(Y, sizes) -> np.ndarray:
    """The full configuration of exactly coincident groups: row a of Y repeated sizes[a] times."""
    Y = require_points(Y, "Y")
    counts = np.asarray(sizes)
    if counts.shape != (Y.shape[0],) or np.any(counts < 1) or np.any(counts != np.round(counts)):
        raise InputError(f"sizes must be {Y.shape[0]} positive integers, got {counts.tolist()}")
    return np.repeat(Y, counts.astype(int), axis=0)


@dataclass
class MergePrediction:
    """Output of :func:`predict_merges`.

    ``events``: predicted :class:`MergeEvent` list (ids 0..k-1 are the initial clusters, new ids count up from
    k; ``bracket`` width is the located tolerance); ``leaves``: for every id, the frozenset of initial cluster
    ids it contains; ``t_start``, ``t_end``; ``final``: positions and sizes of the surviving reduced particles.
    """

    events: list[MergeEvent]
    leaves: dict[int, frozenset]
    t_start: float
    t_end: float
    final_positions: np.ndarray
    final_sizes: np.ndarray
    info: dict = field(default_factory=dict)


def predict_merges(Y, sizes, beta: float, *, eps: float, t_start: float, t_end: float, model: str = "sa",
                   time_unit: str = "natural", frames: int = 400, time_rtol: float = 1e-6,
                   time_atol: float = 1e-9, substeps: int = 16,
                   progress: Callable[[float, float], None] | None = None) -> MergePrediction:
    r"""Predicted merge sequence of the reduced model started from reduced particles Y with ``sizes``.

    Parameters
    ----------
    Y : (k, d) array_like
        Reduced particle positions (unit rows), e.g. cluster centres from :func:`reduce_configuration`.
    sizes : (k,) array_like
        Particles per cluster.
    beta, model, time_unit
        As for :func:`numerics.core.field.attention_field` (:math:`Q = K = V = I`).
    eps : float
        Two reduced particles merge when their geodesic distance is :math:`\le` ``eps``.
    t_start, t_end : float
        Time of the state Y and horizon.
    frames : int
        Checks on a log-spaced grid ``t_start + geomspace(1e-3, t_end - t_start, frames)``; merge times are then
        located to width :math:`\le` ``time_atol + time_rtol * t`` by re-integration on ``substeps`` sub-intervals.
    progress : callable, optional
        ``progress(merges_done, k - 1)``, called as merges are located.

    Returns
    -------
    MergePrediction
    """
    Y = require_points(Y, "Y").copy()
    sizes = require_finite_array(sizes, "sizes", ndim=1).copy()
    if sizes.shape != (Y.shape[0],):
        raise InputError(f"sizes has shape {sizes.shape}, expected ({Y.shape[0]},)")
    beta = require_real(beta, "beta")
    eps = require_real(eps, "eps", minimum=0.0, strict_minimum=True)
    t_start = require_real(t_start, "t_start")
    t_end = require_real(t_end, "t_end")
    if t_end <= t_start:
        raise InputError(f"t_end must exceed t_start={t_start:g}, got {t_end:g}")
    span = t_end - t_start
    grid = t_start + np.geomspace(min(1e-3, span / 2), span, max(2, int(frames)))
    grid[-1] = t_end
    ids = list(range(Y.shape[0]))
    leaves = {i: frozenset([i]) for i in ids}
    events: list[MergeEvent] = []
    t = t_start
    located = 0
    k0 = len(ids)
    while len(ids) > 1 and t < t_end:
        if progress is not None:
            progress(k0 - len(ids), k0 - 1)
        reduced = make_reduced_field(beta, sizes, model, time_unit=time_unit)
        run = reintegrator(reduced, REFINE_RTOL, REFINE_ATOL)
        lab = component_labels(len(ids), eps_graph_edges(Y, eps))
        if lab.max() + 1 == len(ids):
            # Time is origin + tau. The ODE is autonomous, so it is integrated in tau; the origin moves up
            # whenever steps become tiny relative to tau: near t ~ 1e17 the float64 spacing of t is ~30, far
            # too coarse for the O(1)-long collapse that ends a merge.
            origin, joined = t, None
            a, Ya = 0.0, Y
            while origin + a < t_end:
                # next check: the next grid time, or sooner (see _safe_interval): a merge must be caught before
                # the merged pair starts contracting at rate O(1), where integrating the rest of a log-grid
                # interval of length ~t would take O(t) stiff steps
                now = origin + a
                nxt = grid[np.searchsorted(grid, now, side="right")] if now < grid[-1] else t_end
                step = min(float(nxt) - now, _safe_interval(Ya, reduced, beta))
                if step <= 1e-9 * max(a, 1.0) or now + step == now:
                    origin, a = now, 0.0
                    step = max(step, 1e-12)
                b = a + step
                Yb = run(Ya, np.array([a, b]))[-1]
                lab = component_labels(len(ids), eps_graph_edges(Yb, eps))
                if lab.max() + 1 < len(ids):
                    joined = (a, Ya, b)
                    break
                a, Ya = b, Yb
            if joined is None:
                t, Y = t_end, Ya
                break
            a, Ya, b = joined
            while b - a > time_atol + time_rtol * abs(origin + b):
                sub = np.linspace(a, b, substeps + 1)
                states = run(Ya, sub)
                for j in range(1, substeps + 1):
                    lab = component_labels(len(ids), eps_graph_edges(states[j], eps))
                    if lab.max() + 1 < len(ids):
                        a, Ya, b, Yb = sub[j - 1], states[j - 1], sub[j], states[j]
                        break
                else:  # the finer integration is not yet joined at b (integration error near eps): keep b
                    a, Ya = sub[-2], states[-2]
                located += 1
            lab = component_labels(len(ids), eps_graph_edges(Yb, eps))
            bracket, t, Y = (float(origin + a), float(origin + b)), float(origin + b), Yb
        else:  # already within eps at the current time
            bracket = (float(t), float(t))
        new_Y, new_sizes, new_ids = [], [], []
        for c in range(int(lab.max()) + 1):
            members = np.flatnonzero(lab == c)
            if members.size == 1:
                new_Y.append(Y[members[0]])
                new_sizes.append(sizes[members[0]])
                new_ids.append(ids[members[0]])
                continue
            mean = (sizes[members, None] * Y[members]).sum(axis=0)
            new_id = max(leaves) + 1
            leaves[new_id] = frozenset().union(*(leaves[ids[m]] for m in members))
            events.append(MergeEvent(time=bracket[1], bracket=bracket,
                                     clusters=tuple(ids[m] for m in members),
                                     sizes=tuple(float(sizes[m]) for m in members), new=new_id))
            new_Y.append(mean / np.linalg.norm(mean))
            new_sizes.append(float(sizes[members].sum()))
            new_ids.append(new_id)
        Y, sizes, ids = np.array(new_Y), np.array(new_sizes), new_ids
    return MergePrediction(events=events, leaves=leaves, t_start=t_start, t_end=t_end, final_positions=Y,
                           final_sizes=sizes, info={"located_rounds": located, "time_rtol": time_rtol,
                                                    "time_atol": time_atol, "eps": eps, "model": model,
                                                    "time_unit": time_unit})


def _safe_interval(Y: np.ndarray, field, beta: float) -> float:
    """A time in which no chord |y_a - y_b| changes by more than min(gap / 4, 1 / (2 |beta|)), gap the smallest
    chord: the closest pair cannot jump far past eps, and no weight e^{beta<y_a,y_b>} (<y_a,y_b> = 1 - chord^2 /
    2, chord <= 2) changes by more than a factor e, so the speeds (which grow super-exponentially as clusters
    approach) stay comparable over the interval."""
    gaps = np.linalg.norm(Y[:, None, :] - Y[None, :, :], axis=-1)
    np.fill_diagonal(gaps, np.inf)
    speed = float(np.linalg.norm(field(Y), axis=1).max())
    move = min(float(gaps.min()) / 4.0, 1.0 / (2.0 * abs(beta)) if beta else math.inf)
    return math.inf if speed == 0 else move / (2.0 * speed)


def observed_leaves(history: MergeHistory) -> dict[int, frozenset]:
    """For every node of an observed merge tree, the frozenset of first-frame cluster ids (leaves) it contains."""
    tree = history.tree
    base = {v for v in tree if tree.in_degree(v) == 0}
    return {v: frozenset(({v} | nx.ancestors(tree, v)) & base) for v in tree}


def compare_merges(prediction: MergePrediction, history: MergeHistory) -> list[dict]:
    """Predicted merges beside observed ones, matched by the set of initial clusters the new cluster contains
    (the observed history must start at the prediction's state so that its leaves are the same clusters).

    Each row: ``clusters`` (sorted initial ids), ``predicted_time``, ``observed_time`` (None if not observed),
    ``ratio`` (predicted / observed), ``predicted_rank``, ``observed_rank``.
    """
    obs_leaves = observed_leaves(history)
    observed = {obs_leaves[e.new]: (rank, e) for rank, e in enumerate(history.merges)}
    rows = []
    for rank, e in enumerate(prediction.events):
        key = prediction.leaves[e.new]
        hit = observed.get(key)
        rows.append({"clusters": sorted(key), "merging": [sorted(prediction.leaves[c]) for c in e.clusters],
                     "predicted_time": e.time, "observed_time": None if hit is None else hit[1].time,
                     "ratio": None if hit is None or hit[1].time == 0 else e.time / hit[1].time,
                     "predicted_rank": rank, "observed_rank": None if hit is None else hit[0]})
    predicted_keys = {prediction.leaves[e.new] for e in prediction.events}
    for rank, e in enumerate(history.merges):
        key = obs_leaves[e.new]
        if key not in predicted_keys:
            rows.append({"clusters": sorted(key), "merging": [sorted(obs_leaves[c]) for c in e.clusters],
                         "predicted_time": None, "observed_time": e.time, "ratio": None,
                         "predicted_rank": None, "observed_rank": rank})
    return rows


def two_cluster_merge_time(theta0: float, beta: float, eps: float) -> float:
    r"""Exact time for two equal clusters (masses 1/2, ``sa``) on :math:`\mathbb{S}^1` at angle ``theta0`` to come
    within ``eps``.

    :math:`T = \int_\varepsilon^{\theta_0} \frac{1 + e^{\beta(1 - \cos u)}}{2 \sin u}\, du`, from
    :math:`d\theta/dt = -2 \sin\theta / (1 + e^{\beta(1 - \cos\theta)})` (reduced two-particle ODE; each cluster
    moves at half that speed). Evaluated with the factor :math:`e^{\beta(1 - \cos\theta_0)}` pulled out (no
    overflow inside the quadrature).
    Verified by: clusters.two-cluster-merge-time.
    """
    theta0 = require_real(theta0, "theta0", minimum=0.0, strict_minimum=True, maximum=math.pi)
    beta = require_real(beta, "beta", minimum=0.0)
    eps = require_real(eps, "eps", minimum=0.0, strict_minimum=True)
    if theta0 >= math.pi or eps >= theta0:
        raise InputError(f"need 0 < eps < theta0 < pi, got eps={eps:g}, theta0={theta0:g}")
    g0 = 1.0 - math.cos(theta0)

    def scaled(u):
        return (math.exp(-beta * g0) + math.exp(-beta * (math.cos(u) - math.cos(theta0)))) / (2.0 * math.sin(u))

    width = 1.0 / max(1.0, beta * math.sin(theta0))  # the Laplace peak at theta0 has this width
    cuts = sorted({max(eps, theta0 - k * width) for k in (1, 4, 16, 64)} - {eps, theta0})
    edges = [eps, *cuts, theta0]
    total = sum(quad(scaled, lo, hi, epsabs=0.0, epsrel=1e-13, limit=200)[0] for lo, hi in zip(edges, edges[1:]))
    return math.exp(beta * g0) * total


def two_cluster_laplace(theta0: float, beta: float, order: int = 1) -> float:
    r"""Laplace asymptotics of :func:`two_cluster_merge_time` as :math:`\beta \to \infty` (independent of ``eps``):
    ``order=1``: :math:`e^{\beta(1 - \cos\theta_0)} / (2\beta \sin^2\theta_0)` (GKPR / survey);
    ``order=2``: times :math:`1 + 2 \cos\theta_0 / (\beta \sin^2\theta_0)` (next term, derived in the note)."""
    s2 = math.sin(theta0) ** 2
    leading = math.exp(beta * (1.0 - math.cos(theta0))) / (2.0 * beta * s2)
    return leading if order == 1 else leading * (1.0 + 2.0 * math.cos(theta0) / (beta * s2))


def closest_pair_order(Y, sizes) -> list[frozenset]:
    r"""Hardmax merge order: repeatedly merge the two closest reduced particles (into their normalised weighted
    mean, masses added). Returns, for each merge, the frozenset of initial ids in the new cluster.

    This is the merge order the reduced model should follow at large :math:`\beta` for well-separated
    configurations (the closest pair's merge time :math:`e^{\beta(1 - \cos\theta)}` is exponentially shorter than
    every other pair's).
    Verified by: clusters.staircase.
    """
    Y = require_points(Y, "Y").copy()
    sizes = require_finite_array(sizes, "sizes", ndim=1).copy()
    groups = [frozenset([i]) for i in range(Y.shape[0])]
    order = []
    while len(groups) > 1:
        G = Y @ Y.T
        np.fill_diagonal(G, -np.inf)
        a, b = np.unravel_index(int(np.argmax(G)), G.shape)
        a, b = min(a, b), max(a, b)
        mean = sizes[a] * Y[a] + sizes[b] * Y[b]
        Y[a], sizes[a] = mean / np.linalg.norm(mean), sizes[a] + sizes[b]
        groups[a] = groups[a] | groups[b]
        order.append(groups[a])
        Y, sizes = np.delete(Y, b, axis=0), np.delete(sizes, b)
        del groups[b]
    return order
