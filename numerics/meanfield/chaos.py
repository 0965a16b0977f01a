"""Propagation of chaos for a distinguished token (Chen, Lin, Liu, Rigollet, arXiv 2605.16747, abstract): the
finite-context system (a token among n context tokens drawn iid from a population mu_0) against the
infinite-context one (the same token driven by the mean-field solution mu_t), on S^1 and on S^2.

What is measured, for ``sa`` with Q = K = V = I:

- **the token**: a population symmetric about a point x* (S^1: rho_0 = (1 + a cos theta)/(2 pi), x* = (1, 0);
  S^2: the uniform measure, x* any point) keeps the mean-field velocity at x* equal to zero for all t (the
  reflection that fixes x* preserves mu_t, so v[mu_t](x*) is fixed by it and tangent: zero). The infinite-context
  token therefore stays at x*, exactly, and the deviation of the finite-context token is |x_n(t) - x*|.
- **the context** (S^1): the first ``K`` Fourier moments of the context's empirical measure against those of the
  mean-field density from the pseudo-spectral solver (:func:`numerics.meanfield.pde.solve_continuity_circle`):
  D_n(t) = (sum_{k=1}^K |m_k^n(t) - m_k(t)|^2)^{1/2}, m_k = int e^{-ik theta} d mu.

Both are averaged over an ensemble of B independent contexts (one (B, n + 1, d) simulation of the core driver),
their supremum over t in [0, T] is taken member by member (the bound is uniform in depth), and the slope of
log E sup_t against log n is fitted by weighted least squares with its standard error.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: amplitude a of the S^1 population rho_0 = (1 + a cos theta) / (2 pi)
AMPLITUDE = 0.5


@dataclass(frozen=True)
class SlopeFit:
    """log E = c + slope log n by weighted least squares (weights 1/se^2 of log E): slope and its standard error."""

    slope: float
    stderr: float
    intercept: float

    def to_dict(self) -> dict:
        return {"slope": self.slope, "stderr": self.stderr, "intercept": self.intercept}


def fit_slope(ns, means, errors) -> SlopeFit:
    """Weighted least-squares slope of log(means) on log(ns), se(log mean) = errors / means (delta method).

    Parameters
    ----------
    ns, means, errors : sequences of float
        Context lengths, sample means of the deviation, standard errors of those means.

    Returns
    -------
    SlopeFit
        The slope and its standard error (from the weighted normal equations, scaled by the reduced chi^2 when
        that exceeds 1: the fit's own scatter then dominates the sampling error).
    """
    x, y = np.log(np.asarray(ns, float)), np.log(np.asarray(means, float))
    w = (np.asarray(means, float) / np.asarray(errors, float)) ** 2
    A = np.stack([np.ones_like(x), x], axis=1)
    cov = np.linalg.inv(A.T @ (w[:, None] * A))
    coef = cov @ (A.T @ (w * y))
    resid = y - A @ coef
    chi2 = float(np.sum(w * resid ** 2)) / max(1, x.size - 2)
    return SlopeFit(float(coef[1]), float(np.sqrt(cov[1, 1] * max(1.0, chi2))), float(coef[0]))


def sample_circle_population(n: int, rng: np.random.Generator, amplitude: float = AMPLITUDE) -> np.ndarray:
    """n angles iid from rho_0 = (1 + a cos theta) / (2 pi), by rejection from the uniform law."""
    out = np.empty(0)
    while out.size < n:
        theta = rng.uniform(0.0, 2 * np.pi, size=2 * n)
        keep = rng.uniform(0.0, 1.0 + amplitude, size=2 * n) < 1.0 + amplitude * np.cos(theta)
        out = np.concatenate([out, theta[keep]])
    return out[:n]


def initial_contexts(sphere: str, n: int, members: int, seed: int) -> np.ndarray:
    """(members, n + 1, d) initial states: token x* = e_1 in row 0, then n context tokens iid from the
    population (S^1: rho_0; S^2: uniform)."""
    from numerics.core.sampling import uniform_sphere

    rng = np.random.default_rng(seed)
    if sphere == "S1":
        X = np.empty((members, n + 1, 2))
        for b in range(members):
            theta = np.concatenate([[0.0], sample_circle_population(n, rng)])
            X[b] = np.stack([np.cos(theta), np.sin(theta)], axis=1)
        return X
    X = np.stack([uniform_sphere(n + 1, 3, rng) for _ in range(members)])
    X[:, 0] = [1.0, 0.0, 0.0]
    return X


def circle_meanfield_moments(beta: float, times: np.ndarray, K: int, grid: int = 256) -> np.ndarray:
    """m_k(t) = int e^{-ik theta} rho(t, theta) d theta, k = 1..K, at ``times`` (equally spaced from 0), from the
    pseudo-spectral solver started at rho_0."""
    from numerics.meanfield.pde import solve_continuity_circle

    theta = 2 * np.pi * np.arange(grid) / grid
    rho0 = (1.0 + AMPLITUDE * np.cos(theta)) / (2 * np.pi)
    hist = solve_continuity_circle(beta, "sa", grid=grid, t_end=float(times[-1]), rho0=rho0, saves=times.size,
                                   rtol=1e-10, atol=1e-13)
    if hist.stopped != "t_end" or not np.allclose(hist.times, times, rtol=0, atol=1e-12):
        raise RuntimeError(f"the mean-field solve stopped early ({hist.stopped}) or at other times")
    # c_k = (1/M) sum_j rho_j e^{-ik theta_j} = (1/2 pi) int rho e^{-ik theta}: m_k = 2 pi c_k
    return 2 * np.pi * hist.coefficients[:, 1:K + 1]


@dataclass(frozen=True)
class ChaosRun:
    """One context length: the member-wise suprema over t of the token's and the context's deviations."""

    n: int
    token_sup: np.ndarray      # (B,) sup_t |x_n(t) - x*|
    context_sup: np.ndarray | None  # (B,) sup_t D_n(t) (S^1 only)
    token_path: np.ndarray     # (m,) E |x_n(t) - x*| over members, at the saved times


def chaos_run(sphere: str, n: int, members: int, beta: float, t_end: float, dt: float, seed: int,
              reference: np.ndarray | None = None, K: int = 4) -> ChaosRun:
    """Simulate ``members`` independent contexts of length n with the core driver (RK4, step dt, frames every
    dt) and measure the deviations against the infinite-context token x* and, on S^1, the mean-field moments
    ``reference`` ((m, K) at the same frames)."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.simulate import simulate

    X0 = initial_contexts(sphere, n, members, seed)
    steps = int(round(t_end / dt))
    tr = simulate(Model("sa", beta), X0, t_end, solver=Solver("rk4", dt=dt),
                  save=SaveAt(times=np.linspace(0.0, t_end, steps + 1)))
    X = tr.X                                          # (m, B, n + 1, d)
    star = np.zeros(X.shape[-1])
    star[0] = 1.0
    token = np.linalg.norm(X[:, :, 0, :] - star, axis=-1)      # (m, B)
    context = None
    if sphere == "S1" and reference is not None:
        theta = np.arctan2(X[:, :, 1:, 1], X[:, :, 1:, 0])       # (m, B, n)
        k = np.arange(1, K + 1)
        emp = np.exp(-1j * theta[..., None] * k).mean(axis=2)   # (m, B, K)
        context = np.sqrt(np.sum(np.abs(emp - reference[:, None, :]) ** 2, axis=-1)).max(axis=0)
    return ChaosRun(n, token.max(axis=0), context, token.mean(axis=1))


def chaos_study(sphere: str, ns=(64, 128, 256, 512, 1024), members: int = 24, beta: float = 1.0,
                t_end: float = 4.0, dt: float = 0.1, seed: int = 0, K: int = 4) -> dict:
    """E sup_t of the deviations for each n, their standard errors, and the fitted slopes in n (with
    uncertainty). S^1 also fits the slope of the context's moment deviation against the mean-field solver."""
    steps = int(round(t_end / dt))
    times = np.linspace(0.0, t_end, steps + 1)
    reference = circle_meanfield_moments(beta, times, K) if sphere == "S1" else None
    rows, paths = [], []
    for i, n in enumerate(ns):
        run = chaos_run(sphere, n, members, beta, t_end, dt, seed + 1000 * i, reference, K)
        row = {"n": n, "token_mean": float(run.token_sup.mean()),
               "token_se": float(run.token_sup.std(ddof=1) / np.sqrt(members))}
        if run.context_sup is not None:
            row.update(context_mean=float(run.context_sup.mean()),
                       context_se=float(run.context_sup.std(ddof=1) / np.sqrt(members)))
        rows.append(row)
        paths.append(run.token_path)
    out = {"sphere": sphere, "beta": beta, "t_end": t_end, "dt": dt, "members": members, "rows": rows,
           "token_fit": fit_slope(ns, [r["token_mean"] for r in rows], [r["token_se"] for r in rows]).to_dict()}
    if sphere == "S1":
        out["context_fit"] = fit_slope(ns, [r["context_mean"] for r in rows],
                                       [r["context_se"] for r in rows]).to_dict()
    # the same contexts (largest n, first two members) one by one through the O(n K) field of the sphere:
    # the circle's Fourier sums on S^1, the spherical-harmonic expansion on S^2 (ensembles run the direct sums)
    out["backend_check"] = backend_check(sphere, ns[-1], beta, t_end, dt, seed + 1000 * (len(ns) - 1))
    # uniformity in depth: sqrt(n) E|x_n(t) - x*| at every saved t, its spread across n (relative)
    scaled = np.array([np.sqrt(n) * p for n, p in zip(ns, paths)])[:, 1:]
    out["depth_spread"] = float(np.max(np.abs(scaled / scaled.mean(axis=0) - 1)))
    return out


def backend_check(sphere: str, n: int, beta: float, t_end: float, dt: float, seed: int, members: int = 2) -> dict:
    """The token's path of the first ``members`` contexts of :func:`chaos_run` integrated one system at a time
    with the fast field of the sphere (``fourier`` on S^1, ``harmonic`` on S^2) against the ensemble's direct
    sums: the largest difference of the token positions over the saved frames."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.simulate import simulate

    X0 = initial_contexts(sphere, n, members, seed)
    steps = int(round(t_end / dt))
    save = SaveAt(times=np.linspace(0.0, t_end, steps + 1))
    backend = "fourier" if sphere == "S1" else "harmonic"
    ens = simulate(Model("sa", beta), X0, t_end, solver=Solver("rk4", dt=dt), save=save)
    worst = 0.0
    for b in range(members):
        one = simulate(Model("sa", beta), X0[b], t_end, solver=Solver("rk4", dt=dt, backend=backend), save=save)
        worst = max(worst, float(np.max(np.abs(one.X[:, 0, :] - ens.X[:, b, 0, :]))))
    return {"backend": backend, "n": n, "members": members, "max_token_difference": worst}
