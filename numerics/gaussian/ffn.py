"""Softmax attention plus an affine feed-forward layer on Gaussians (Alcalde, Ji, Zuazua, arXiv 2606.07600).

The token field is dX/dt = V (alpha + Sigma A X) + W X + c: the softmax velocity on N(alpha, Sigma)
(theory.gaussian) plus the affine feed-forward map F(x) = W x + c. The total field is affine, so Gaussians stay
exactly Gaussian with

    d alpha/dt = V (I + Sigma A) alpha + W alpha + c,
    d Sigma/dt = V Sigma A Sigma + Sigma A^T Sigma V^T + W Sigma + Sigma W^T.

For V = v I the precision P = Sigma^{-1} solves a linear Lyapunov equation (theory.gaussian.ffn_precision_derivation),
dP/dt = -(W^T P + P W) - 2 v S_A, so with constant parameters (attnflow's derivation; the paper's conditions
were not read):

- if every eigenvalue of W has a positive real part, P(t) -> P*, the solution of W^T P* + P* W = -2 v S_A;
  if P* is positive definite and v S_A <= 0, Sigma(t) -> Sigma* = P*^{-1} for every Sigma_0 > 0 ("converges");
  if P* has a negative eigenvalue, P(t) becomes singular in finite time for every Sigma_0: Sigma blows up
  ("blow-up");
- otherwise the outcome depends on Sigma_0 (not classified here: "depends on Sigma_0").

Verified by: gaussian.gaussian-ffn-regimes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm, solve_continuous_lyapunov
from scipy.optimize import brentq

from numerics.common.errors import InputError, require_real


def _square(M, d: int, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=float)
    if M.shape != (d, d) or not np.all(np.isfinite(M)):
        raise InputError(f"{name} must be a finite {d}x{d} matrix, got shape {M.shape}")
    return M


@dataclass(frozen=True)
class FFNRegime:
    """The classification for V = v I and constant A, W (see the module docstring): ``kind`` is "converges",
    "blow-up" or "depends on Sigma_0"; ``P_star`` the Lyapunov solution (None if W has an eigenvalue with
    real part <= 0), ``Sigma_star`` its inverse when it is positive definite."""

    kind: str
    W_eigenvalues: np.ndarray
    P_star: np.ndarray | None
    P_star_eigenvalues: np.ndarray | None
    Sigma_star: np.ndarray | None


def ffn_regime(A, v: float, W) -> FFNRegime:
    """Classify the covariance flow of attention (V = v I) plus the feed-forward W x + c."""
    W = np.asarray(W, float)
    d = W.shape[0]
    A, W = _square(A, d, "A"), _square(W, d, "W")
    v = require_real(v, "v")
    lam = np.linalg.eigvals(W)
    if not np.all(lam.real > 0):
        return FFNRegime("depends on Sigma_0", lam, None, None, None)
    SA = (A + A.T) / 2
    P = solve_continuous_lyapunov(W.T, -2.0 * v * SA)       # W^T P + P W = -2 v S_A
    P = (P + P.T) / 2
    mu = np.linalg.eigvalsh(P)
    if mu.min() < 0:
        return FFNRegime("blow-up", lam, P, mu, None)
    if mu.min() > 0 and np.linalg.eigvalsh(v * SA).max() <= 0:
        return FFNRegime("converges", lam, P, mu, np.linalg.inv(P))
    return FFNRegime("depends on Sigma_0", lam, P, mu, None)


def precision_closed_form(t: float, cov0, A, v: float, W) -> np.ndarray:
    """P(t) = P* + e^{-W^T t} (P_0 - P*) e^{-W t} (W with no two eigenvalues summing to 0)."""
    W = np.asarray(W, float)
    SA = (np.asarray(A, float) + np.asarray(A, float).T) / 2
    P_star = solve_continuous_lyapunov(W.T, -2.0 * v * SA)
    E = expm(-W * t)
    P = P_star + E.T @ (np.linalg.inv(cov0) - P_star) @ E
    return (P + P.T) / 2


def blowup_time(cov0, A, v: float, W, t_max: float = 100.0, samples: int = 2000) -> float | None:
    """The first t at which lambda_min(P(t)) = 0 (Sigma blows up), by a grid scan and Brent's method; None if
    P(t) stays positive definite on [0, t_max]."""
    f = lambda t: float(np.linalg.eigvalsh(precision_closed_form(t, cov0, A, v, W)).min())  # noqa: E731
    ts = np.linspace(0.0, t_max, samples)
    prev = ts[0]
    for t in ts[1:]:
        if f(t) <= 0:
            return float(brentq(f, prev, t, xtol=1e-14, rtol=1e-15))
        prev = t
    return None


@dataclass(frozen=True)
class FFNSolution:
    times: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    status: str          # "completed" or "blow-up"


def solve_ffn_moments(A, V, W, c, mean, cov, t_end: float, *, rtol: float = 1e-11, atol: float = 1e-13,
                      blowup_norm: float = 1e8) -> FFNSolution:
    """The moment ODE (module docstring) by Dormand-Prince 8(5,3) (scipy DOP853); stops when |Sigma| exceeds
    ``blowup_norm``."""
    mean = np.asarray(mean, float)
    d = mean.size
    A, V, W = _square(A, d, "A"), _square(V, d, "V"), _square(W, d, "W")
    c = np.asarray(c, float).reshape(d)
    cov = _square(cov, d, "cov")
    t_end = require_real(t_end, "t_end", minimum=0.0)

    def rhs(_t, y):
        a, S = y[:d], y[d:].reshape(d, d)
        J = V @ S @ A + W
        return np.concatenate([V @ a + c + J @ a, (J @ S + S @ J.T).ravel()])

    def big(_t, y):
        return blowup_norm - float(np.max(np.abs(y[d:])))

    big.terminal = True
    sol = solve_ivp(rhs, (0.0, t_end), np.concatenate([mean, cov.ravel()]), method="DOP853", rtol=rtol, atol=atol,
                    events=big, dense_output=False)
    Y = sol.y.T
    status = "blow-up" if sol.status == 1 else "completed"
    return FFNSolution(sol.t, Y[:, :d], Y[:, d:].reshape(-1, d, d), status)


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b|."""
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), math.ulp(1.0)))
