"""Anisotropic metastability on S^1: Q = V = I, beta = 1, K = diag(a, b) (note
``proofs_notes/circle-anisotropic.md``; the symbolic Jacobian is :mod:`theory.circle_anisotropic`).

Two antipodal clusters at angle phi are an equilibrium for every phi, with logits +-gamma(phi),
gamma(phi) = a cos^2 phi + b sin^2 phi. The linearisation has one unstable eigenvalue, the two clusters rotating
against each other: lambda_u = e^{-gamma}/cosh(gamma) for sa and e^{-gamma} for usa (:func:`unstable_rate`).
A state whose clusters are delta away from antipodal leaves the saddle after (1/lambda_u) ln(1/delta) + O(1)
(:func:`escape_time`); random starts of n tokens form the two clusters with delta of order n^{-1/2}, so the
merge time grows like ln(n) / (2 lambda_u) (:func:`merge_time`).
"""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError, require_real
from numerics.core.field import attention_field

#: central-difference step of the angle Jacobian (truncation ~ h^2, round-off ~ 1e-16 / h)
JACOBIAN_STEP = 1e-6


def gamma(phi: float, a: float, b: float) -> float:
    """gamma(phi) = a cos^2 phi + b sin^2 phi, the logit <x, K x> of a token at angle phi."""
    return a * np.cos(phi) ** 2 + b * np.sin(phi) ** 2


def unstable_rate(g: float, kind: str = "sa") -> float:
    """The unstable eigenvalue of the bipodal state with logit gamma (beta = 1): e^{-g}/cosh g (sa), e^{-g} (usa)."""
    if kind == "sa":
        return float(np.exp(-g) / np.cosh(g))
    if kind == "usa":
        return float(np.exp(-g))
    raise InputError(f"model must be sa or usa, got {kind!r}")


def bipodal_spectrum(g: float, m: int, kind: str = "sa") -> np.ndarray:
    """The whole derived spectrum, sorted: unstable rate, 0, and the stable rate 2m - 2 times (-tanh g for sa,
    -sinh g for usa)."""
    stable = -np.tanh(g) if kind == "sa" else -np.sinh(g)
    return np.sort(np.concatenate([[unstable_rate(g, kind), 0.0], np.full(2 * m - 2, stable)]))


def angle_velocity(theta: np.ndarray, a: float, b: float, kind: str = "sa") -> np.ndarray:
    """d theta_i/dt from attnflow's sphere field (Q = V = I, K = diag(a, b), beta = 1)."""
    X = np.column_stack([np.cos(theta), np.sin(theta)])
    v = attention_field(X, 1.0, kind, K=np.diag([a, b]))
    return -X[:, 1] * v[:, 0] + X[:, 0] * v[:, 1]


def bipodal_angles(phi: float, m: int, delta: float = 0.0) -> np.ndarray:
    """m tokens at phi + delta/2 and m at phi + pi - delta/2 (delta: the distance from antipodal)."""
    return np.concatenate([np.full(m, phi + delta / 2), np.full(m, phi + np.pi - delta / 2)])


def measured_spectrum(phi: float, m: int, a: float, b: float, kind: str = "sa") -> np.ndarray:
    """Eigenvalues (sorted by real part) of the central-difference Jacobian of :func:`angle_velocity` at the
    bipodal state."""
    theta = bipodal_angles(phi, m)
    n = theta.size
    J = np.empty((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = JACOBIAN_STEP
        J[:, i] = (angle_velocity(theta + e, a, b, kind) - angle_velocity(theta - e, a, b, kind)) / (2 * JACOBIAN_STEP)
    ev = np.linalg.eigvals(J)
    return ev[np.argsort(ev.real)]


def _first_merge(times: np.ndarray, X: np.ndarray) -> float:
    """First time at which every pair of tokens is less than pi/2 apart (min_ij <x_i, x_j> > 0), linearly
    interpolated between saved frames; nan if never."""
    mincos = np.array([np.min(x @ x.T) for x in X])
    k = int(np.argmax(mincos > 0))
    if mincos[k] <= 0:
        return float("nan")
    if k == 0:
        return float(times[0])
    c0, c1 = mincos[k - 1], mincos[k]
    return float(times[k - 1] + (times[k] - times[k - 1]) * (-c0) / (c1 - c0))


def escape_time(phi: float, m: int, delta: float, a: float, b: float, kind: str = "sa",
                dt_save: float = 0.05) -> float:
    """Time for the bipodal state delta away from antipodal (:func:`bipodal_angles`) to merge (all tokens within
    pi/2), by attnflow's simulation (dp5, rtol 1e-11), run to (ln(1/delta) + 10)/lambda_u."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate

    delta = require_real(delta, "delta", minimum=0.0, strict_minimum=True)
    theta = bipodal_angles(phi, m, delta)
    t_max = (np.log(1.0 / delta) + 10.0) / unstable_rate(gamma(phi, a, b), kind)
    times = np.arange(0.0, t_max, dt_save)
    tr = simulate(Model(kind, 1.0, K=np.diag([a, b])), np.column_stack([np.cos(theta), np.sin(theta)]),
                  float(times[-1]), solver=Solver("dp5", rtol=1e-11, atol=1e-14, backend="direct"),
                  save=SaveAt(times=times))
    return _first_merge(tr.times, tr.X)


def merge_time(n: int, seed: int, a: float, b: float, kind: str = "sa", t_max: float = 120.0) -> dict:
    """From n uniform random angles (seeded): the merge time and the axis of the clusters at half that time
    (phi from the second order parameter, |sin phi| = 1 on the b axis)."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate

    theta = np.random.default_rng(seed).uniform(0.0, 2 * np.pi, n)
    times = np.linspace(0.0, t_max, int(round(t_max / 0.1)) + 1)
    tr = simulate(Model(kind, 1.0, K=np.diag([a, b])), np.column_stack([np.cos(theta), np.sin(theta)]), t_max,
                  solver=Solver("dp5", rtol=1e-9, atol=1e-12, backend="direct"), save=SaveAt(times=times))
    T = _first_merge(tr.times, tr.X)
    half = tr.X[int(np.searchsorted(tr.times, T / 2))] if np.isfinite(T) else tr.X[-1]
    z = np.mean(np.exp(2j * np.arctan2(half[:, 1], half[:, 0])))
    return {"n": n, "seed": seed, "time": T, "axis": float(np.angle(z) / 2), "r2": float(abs(z))}
