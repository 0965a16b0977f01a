"""Metastable clusters on S^2 from uniform random starts at large n, through the harmonic backend.

BPA (arXiv 2410.23228): starting near the uniform measure, the degree l_max(beta) with the largest linear growth
rate (:func:`theory.meanfield.dominant_degree`, d = 3) dominates the end of the linear phase, and the tokens
then collapse into clusters at the maxima of that degree's component of the density. At n = 10^5 (beyond the
direct field in a test run: 10^10 pairs per evaluation) the run measures, per beta:

- the degree powers R_l(t) = sum_m M_lm(t)^2 of the empirical measure (:func:`numerics.harmonic.field.degree_powers`)
  at every saved frame; the end of the linear phase t_lin is the first frame where sqrt(sum_{l>=1} R_l) reaches
  ``linear_end`` (the density's deviation from uniform is then of order one), and the observed dominant degree
  is argmax_l R_l(t_lin) / R_l(0);
- the predicted cluster count: the local maxima, above the mean density, of the dominant degree's component
  sum_m M_{l*, m}(t_lin) Y_{l*, m} on a Fibonacci grid of the sphere (:func:`component_maxima`);
- the observed count at t_end (``collapse_time`` after t_lin): clusters by single linkage at ``eps`` radians
  (:func:`numerics.clusters.detection.find_clusters`) on a random subsample of :data:`CLUSTER_SAMPLE` tokens,
  holding at least ``min_fraction`` of them.

Verified by: harmonic.metastable-lmax (slow).
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError
from numerics.harmonic.field import degree_powers
from numerics.harmonic.transforms import point_synthesis

#: tokens on which the final clusters are counted (clusters of >= 1% then hold >= 40 sampled tokens)
CLUSTER_SAMPLE = 4000


def fibonacci_sphere(k: int) -> np.ndarray:
    """k nearly uniform points of S^2 (the Fibonacci lattice)."""
    i = np.arange(k) + 0.5
    z = 1.0 - 2.0 * i / k
    phi = math.pi * (1.0 + math.sqrt(5.0)) * i
    r = np.sqrt(1.0 - z * z)
    return np.c_[r * np.cos(phi), r * np.sin(phi), z]


def component_maxima(C: np.ndarray, degree: int, grid: int = 20000, neighbours: int = 10) -> int:
    """Local maxima with positive value of the degree-``degree`` part of the coefficients C (2, L+1, L+1) on a
    Fibonacci grid: a grid point is a maximum when it exceeds its ``neighbours`` nearest grid points."""
    from scipy.spatial import cKDTree

    part = np.zeros((1,) + C.shape)
    part[0, :, degree, :] = C[:, degree, :]
    P = fibonacci_sphere(grid)
    values = point_synthesis(part, P)[:, 0]
    _, idx = cKDTree(P).query(P, k=neighbours + 1)
    is_max = np.all(values[:, None] >= values[idx[:, 1:]], axis=1) & (values > 0)
    return int(is_max.sum())


def metastable_run(beta: float, n: int = 100_000, seed: int = 0, *, dt: float = 0.1, collapse_time: float = 10.0,
                   linear_end: float = 0.3, max_time: float = 60.0, eps: float = 0.1, min_fraction: float = 0.01,
                   max_degree: int = 12, progress=None) -> dict:
    """One run (module docstring): ``sa`` from n iid uniform tokens, RK4 step dt through the harmonic backend."""
    from numerics.clusters.detection import find_clusters
    from numerics.core.integrators import integrate
    from numerics.core.model import Model
    from numerics.core.trajectory import uniform_sphere
    from theory.meanfield import dominant_degree

    predicted = dominant_degree("sa", 3, beta)
    field, backend = Model("sa", beta).vector_field(n, 3, backend="harmonic")
    X = uniform_sphere(n, 3, seed)
    R0 = degree_powers(X, max_degree)
    t, chunk = 0.0, 1.0
    history = [(0.0, R0)]
    t_lin = None
    while t < max_time:
        _, states, _ = integrate(field, X, chunk, "rk4", dt=dt, save_every=10**9)
        X, t = states[-1], t + chunk
        R = degree_powers(X, max_degree)
        history.append((t, R))
        if progress is not None:
            progress(t, max_time)
        if t_lin is None and math.sqrt(float(R[1:].sum())) >= linear_end:
            t_lin, R_lin, X_lin = t, R, X.copy()
            break
    if t_lin is None:
        raise InputError(f"no linear-phase end by t = {max_time:g} at beta = {beta:g}, n = {n}")
    growth = R_lin[1:] / R0[1:]
    observed_degree = int(np.argmax(growth)) + 1
    C = np.zeros((2, max_degree + 1, max_degree + 1))
    from numerics.harmonic.transforms import point_moments

    C[:] = point_moments(X_lin, np.ones((n, 1)), max_degree)[0] / n
    predicted_count = component_maxima(C, observed_degree)
    _, states, _ = integrate(field, X, collapse_time, "rk4", dt=dt, save_every=10**9)
    X_end = states[-1]
    # single linkage on a random subsample: the eps-graph of a whole cluster of 10^4 tokens has 10^8 edges
    pick = np.random.default_rng(seed + 1).choice(n, size=min(n, CLUSTER_SAMPLE), replace=False)
    clusters = find_clusters(X_end[pick], eps, method="kdtree")
    sizes = np.sort(np.asarray(clusters.sizes, dtype=float))[::-1] * (n / pick.size)
    big = sizes[sizes >= min_fraction * n]
    return {"beta": beta, "n": n, "seed": seed, "dt": dt, "backend": backend, "degree_L": field.degree,
            "engine": field.engine, "l_max": predicted.l_max, "runner_up": predicted.runner_up,
            "rate_ratio": predicted.ratio, "near_tie": predicted.near_tie, "t_linear_end": t_lin,
            "observed_dominant_degree": observed_degree,
            "growth_by_degree": [float(g) for g in growth],
            "predicted_clusters_from_dominant_component": predicted_count,
            "t_end": t_lin + collapse_time, "clusters": int(big.size),
            "cluster_fractions": [float(s / n) for s in big], "stragglers_fraction": float(1 - big.sum() / n),
            "eps": eps, "min_fraction": min_fraction, "field_evaluations": field.stats["evaluations"],
            "sa_direct_rows": field.stats["direct_rows"]}
