r"""Hardmax self-attention as Frank-Wolfe (Alcalde, Geshkovski, Ruiz-Balet, arXiv 2508.09628).

The layer map of :mod:`numerics.rd.consensus` at :math:`\beta = \infty`,
:math:`z_i \leftarrow z_i + \gamma (z_{j^*(i)} - z_i)` with :math:`j^*(i) = \operatorname{argmax}_j z_j^\top A z_i`,
is a Frank-Wolfe step of size :math:`\gamma` for :math:`f(y) = -y^\top A y / 2` over the convex hull of the current
tokens. What this module computes (derivations in ``proofs_notes/rd-frank-wolfe-*.md``):

- :func:`definiteness`: the sign of the symmetric part of :math:`A` (the statements need :math:`A` symmetric);
- :func:`hull_oracle`: the linear minimisation oracle of Frank-Wolfe solved as a linear programme over the hull
  (scipy HiGHS), independent of the argmax code;
- :math:`A` negative semi-definite, :math:`A = -B`: the :math:`B`-diameter of the tokens contracts at every layer by
  at least :func:`nsd_contraction_factor` :math:`\sqrt{1 - 2\gamma + 2\gamma^2}` (the oracle is monotone:
  :math:`\langle z_i - z_k, s_i - s_k\rangle_B \le 0`), to a single point of the initial hull (not the origin in
  general);
- :math:`A` positive semi-definite: :func:`voronoi_cells` (each point of the hull belongs to the cell of the vertex
  :math:`v` maximising :math:`v^\top A y`; a vertex is *self-inclusive* when it lies in its own cell) and
  :func:`voronoi_prediction`: with every vertex self-inclusive, vertices never move and a token of the cell of
  :math:`v` is :math:`v + (1 - \gamma)^k (z - v)` after :math:`k` layers (a straight line, exponential convergence);
- finite :math:`\beta`: tokens gather at the vertices in a number of layers independent of :math:`\beta`, then the
  vertex clusters drift at the exponentially small velocity of :func:`cluster_drift` (logit gaps
  :math:`\Delta_{ml} = v_m^\top A (v_m - v_l)`), so they persist for times of order :math:`e^{\beta \min \Delta}`
  (:func:`persistence_time`).

Verified by: rd.frank-wolfe-step, rd.frank-wolfe-voronoi, rd.frank-wolfe-nsd-contraction,
rd.frank-wolfe-persistence.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_finite_array
from numerics.rd.consensus import attention_mean, consensus_velocity, integrate_flow
from numerics.rd.geometry import hull_vertices

#: relative tolerance on eigenvalues of the symmetric part of A (below it an eigenvalue counts as zero)
DEFINITENESS_RTOL = 1e-12


def definiteness(A, rtol: float = DEFINITENESS_RTOL) -> dict:
    """Eigenvalues of S = (A + A^T)/2 and their sign pattern: ``psd``, ``nsd``, ``zero`` or ``indefinite``.

    ``symmetric`` says whether A = A^T (to rounding): the Frank-Wolfe reading (gradient -A y) needs it.
    """
    A = require_finite_array(A, "A", ndim=2)
    S = 0.5 * (A + A.T)
    ev = np.linalg.eigvalsh(S)
    scale = max(float(np.max(np.abs(ev))), 1e-300)
    pos, neg = bool(np.any(ev > rtol * scale)), bool(np.any(ev < -rtol * scale))
    kind = "indefinite" if pos and neg else "psd" if pos else "nsd" if neg else "zero"
    return {"kind": kind, "eigenvalues": ev.tolist(),
            "symmetric": bool(np.allclose(A, A.T, rtol=0, atol=1e-12 * scale))}


def hull_oracle(Z: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, float]:
    r""":math:`\operatorname{argmax}` of :math:`\langle c, y\rangle` over :math:`\operatorname{conv}\{z_j\}` by linear
    programming over the barycentric weights (scipy HiGHS): the Frank-Wolfe linear minimisation oracle for the
    gradient :math:`-c`. Returns (maximiser, value)."""
    from scipy.optimize import linprog

    Z = np.asarray(Z, float)
    n = len(Z)
    res = linprog(-(Z @ c), A_eq=np.ones((1, n)), b_eq=[1.0], bounds=[(0, None)] * n, method="highs")
    if not res.success:  # pragma: no cover - a bounded feasible LP
        raise InputError(f"the hull oracle failed: {res.message}")
    y = res.x @ Z
    return y, float(c @ y)


def b_diameter(Z: np.ndarray, B: np.ndarray) -> float:
    """max_{i,k} |z_i - z_k|_B, |u|_B^2 = u^T B u (B symmetric positive semi-definite), from the differences
    z_i - z_k themselves (the Gram form q_i + q_k - 2 G_ik cancels: its error is 1e-16 |z|^2, not 1e-16 |z_i - z_k|^2);
    O(n^2 d^2) time, O(n d) memory per row."""
    Z = np.asarray(Z, float)
    best = 0.0
    for i in range(len(Z) - 1):
        D = Z[i + 1:] - Z[i]
        best = max(best, float(np.max(np.einsum("kd,de,ke->k", D, B, D))))
    return math.sqrt(max(0.0, best))


def nsd_contraction_factor(step: float) -> float:
    r""":math:`\sqrt{1 - 2\gamma + 2\gamma^2}`: the per-layer bound on the :math:`B`-diameter ratio when :math:`A = -B`,
    :math:`B \succeq 0`."""
    return math.sqrt(1.0 - 2.0 * step + 2.0 * step * step)


def voronoi_cells(Z: np.ndarray, A: np.ndarray) -> dict:
    r"""The hardmax cells of the hull's vertices: for every token the vertex maximising :math:`v^\top A z` and its gap.

    Returns ``vertices`` (token indices), ``cell`` (vertex token index of each token), ``gap`` (best minus
    second-best :math:`v^\top A z`, 0 when fewer than two vertices), ``self_inclusive`` (per vertex:
    :math:`v^\top A v > w^\top A v` for every other vertex :math:`w`, i.e. the vertex is in the interior of its own
    cell) and ``all_self_inclusive``.
    """
    Z = np.asarray(Z, float)
    verts = hull_vertices(Z)
    Vt = Z[verts]
    scores = (Z @ A.T) @ Vt.T   # [i, m] = v_m^T A z_i
    order = np.argsort(-scores, axis=1)
    best = order[:, 0]
    gap = (scores[np.arange(len(Z)), best] - scores[np.arange(len(Z)), order[:, 1]]) if len(verts) > 1 else \
        np.zeros(len(Z))
    own = np.array([int(best[v]) == m and gap[v] > 0 for m, v in enumerate(verts)])
    return {"vertices": [int(v) for v in verts], "cell": [int(verts[b]) for b in best], "gap": gap.tolist(),
            "self_inclusive": own.tolist(), "all_self_inclusive": bool(np.all(own))}


def voronoi_prediction(Z0: np.ndarray, A: np.ndarray, step: float, layers) -> np.ndarray:
    r"""Closed form of the hardmax layers when every vertex is self-inclusive:
    :math:`z_i(k) = v + (1 - \mathrm{step})^k (z_i - v)`, :math:`v` the vertex of :math:`z_i`'s cell (vertices have
    :math:`v = z_i` and stay put). Shape ``(len(layers), n, d)``."""
    Z0 = np.asarray(Z0, float)
    cells = voronoi_cells(Z0, A)
    if not cells["all_self_inclusive"]:
        raise InputError("the Voronoi prediction needs every vertex of the hull in its own cell "
                         "(v^T A v > w^T A v for all other vertices w)")
    Vc = Z0[cells["cell"]]
    k = np.asarray(layers, float)
    return Vc[None] + (1.0 - step) ** k[:, None, None] * (Z0 - Vc)[None]


def logit_gaps(centers: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Delta_ml = c_m^T A (c_m - c_l) (the logit by which cluster m prefers itself to cluster l; inf on l = m)."""
    C = np.asarray(centers, float)
    S = (C @ A.T) @ C.T          # [m, l] = c_l^T A c_m
    D = np.diag(S)[:, None] - S
    np.fill_diagonal(D, np.inf)
    return D


def cluster_drift(centers: np.ndarray, masses, A: np.ndarray, beta: float) -> np.ndarray:
    """Velocity m_beta(c_m) - c_m of point clusters of the given masses (the consensus flow of the reduced
    configuration, exact for clusters of zero width). For large beta it is
    sum_{l != m} (w_l / w_m) e^{-beta Delta_ml} (c_l - c_m) (1 + O(e^{-beta min Delta}))."""
    C = np.asarray(centers, float)
    return attention_mean(C, A, beta, weights=masses) - C


def persistence_time(centers: np.ndarray, masses, A: np.ndarray, beta: float, delta: float) -> float:
    """Leading-order time for the first vertex cluster to move by ``delta``: delta / max_m |drift_m| (the
    drift is constant to relative order delta while the clusters stay within delta of the vertices)."""
    v = np.linalg.norm(cluster_drift(centers, masses, A, beta), axis=1)
    return float(delta / max(float(np.max(v)), 1e-300))


#: flow time allotted to the gathering phase (the hardmax prediction is log(spread / width) ~ 3.5 for width 0.03)
GATHER_TIME = 6.0
#: a vertex cluster has escaped when its centre has moved by this much from its gathered position
ESCAPE_DISTANCE = 0.05


def persistence_run(beta: float, Z0: np.ndarray, A: np.ndarray) -> dict:
    """Finite-beta persistence of the vertex clusters (continuous flow, V = I): gather (RK4 to GATHER_TIME), then
    integrate the full flow and the reduced point clusters with the gathered masses (scipy LSODA: the slow phase is
    stiff) until a cluster centre has moved by ESCAPE_DISTANCE from its gathered position. Returns both escape
    times (counted from the end of gathering), the gathered width and the smallest logit gap of the centres."""
    from scipy.integrate import solve_ivp

    from numerics.common.limits import check_work

    n, d = np.shape(Z0)
    # gathering: RK4 steps of 4 evaluations; escape: LSODA, budgeted at 2e4 evaluations per route
    check_work((4.0 * GATHER_TIME / 0.02 + 4e4) * ((2 * d + 3) * n * n + 1e5),
               f"the persistence run (n = {n}, beta = {beta:g})")
    cells = voronoi_cells(Z0, A)
    cell, verts = np.array(cells["cell"]), cells["vertices"]
    masses = np.array([np.mean(cell == v) for v in verts])
    _, fr = integrate_flow(Z0, A, beta, GATHER_TIME, 0.02, saves=2)
    Zg = fr[-1]
    centres = np.array([Zg[cell == v].mean(axis=0) for v in verts])
    width = float(max(np.max(np.linalg.norm(Zg[cell == v] - c, axis=1)) for v, c in zip(verts, centres)))
    gaps = logit_gaps(centres, A)
    horizon = 1e3 * math.exp(beta * float(np.min(gaps)))

    def escape(fun, y0, centre_of):
        def event(t, y):
            return float(np.max(np.linalg.norm(centre_of(y) - centres, axis=1))) - ESCAPE_DISTANCE
        event.terminal, event.direction = True, 1
        counted = {"evaluations": 0}

        def budgeted(t, y):
            counted["evaluations"] += 1
            if counted["evaluations"] > 2e4:
                raise InputError(f"the persistence run at beta = {beta:g} needed more than 2e4 field evaluations")
            return fun(t, y)

        sol = solve_ivp(budgeted, (0.0, horizon), y0, method="LSODA", rtol=1e-8, atol=1e-11, events=event)
        return float(sol.t_events[0][0]) if len(sol.t_events[0]) else math.inf

    full = escape(lambda t, y: consensus_velocity(y.reshape(n, -1), A, beta).ravel(), Zg.ravel(),
                  lambda y: np.array([y.reshape(n, -1)[cell == v].mean(axis=0) for v in verts]))
    k = len(verts)
    reduced = escape(lambda t, y: consensus_velocity(y.reshape(k, -1), A, beta, weights=masses).ravel(),
                     centres.ravel(), lambda y: y.reshape(k, -1))
    return {"beta": beta, "escape_full": full, "escape_reduced": reduced, "gathered_width": width,
            "min_gap_at_centres": float(np.min(gaps)), "centre_offset": float(np.max(np.linalg.norm(
                centres - Z0[verts], axis=1)))}


def polygon_tokens(angles, interior: int, seed: int, A=None, margin: float = 0.3) -> np.ndarray:
    r""":math:`d = 2` test configurations: vertices on the unit :math:`A`-sphere :math:`\{v^\top A v = 1\}` (so every
    vertex is self-inclusive) at the given angles, then ``interior`` tokens drawn uniformly in their hull whose best
    cell score beats the second by at least ``margin`` (rejection sampling, seeded). Returns the ``(k + interior, 2)``
    tokens, vertices first."""
    from scipy.spatial import ConvexHull

    U = np.c_[np.cos(angles), np.sin(angles)]
    if A is not None:
        w, Q = np.linalg.eigh(A)
        U = U @ (Q @ np.diag(w ** -0.5) @ Q.T).T   # v = A^{-1/2} u: v^T A v = 1
    facets = ConvexHull(U).equations            # inside: facets[:, :2] @ p + facets[:, 2] < 0
    rng = np.random.default_rng(seed)
    lo, hi = U.min(axis=0), U.max(axis=0)
    S = np.eye(2) if A is None else A
    pts, tries = [], 0
    while len(pts) < interior:
        tries += 1
        if tries > 1000 * (interior + 1):
            raise InputError(f"could not place {interior} interior tokens with cell margin {margin:g}")
        p = rng.uniform(lo, hi)
        if np.any(facets[:, :2] @ p + facets[:, 2] >= 0):
            continue
        s = np.sort(U @ (S @ p))
        if s[-1] - s[-2] >= margin:
            pts.append(p)
    return np.vstack([U, pts])


def collapse_point(centres: np.ndarray, masses, A: np.ndarray, beta: float, width: float = 1e-6) -> dict:
    r"""Where point clusters of the given masses end at finite :math:`\beta`: the reduced consensus flow (LSODA) run
    until their diameter is below ``width``. Returns the final point, the time and the evaluations used."""
    from scipy.integrate import solve_ivp

    C = np.asarray(centres, float)
    k, d = C.shape

    def fun(t, y):
        return consensus_velocity(y.reshape(k, d), A, beta, weights=masses).ravel()

    def event(t, y):
        Y = y.reshape(k, d)
        return float(np.max(np.linalg.norm(Y - Y.mean(axis=0), axis=1))) - width

    event.terminal, event.direction = True, -1
    horizon = 1e6 * math.exp(beta * float(np.max(logit_gaps(C, A)[np.isfinite(logit_gaps(C, A))])))
    sol = solve_ivp(fun, (0.0, horizon), C.ravel(), method="LSODA", rtol=1e-9, atol=1e-12, events=event)
    Y = sol.y[:, -1].reshape(k, d)
    return {"point": Y.mean(axis=0).tolist(), "time": float(sol.t[-1]), "evaluations": int(sol.nfev),
            "collapsed": bool(len(sol.t_events[0]))}
