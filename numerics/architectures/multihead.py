"""Several heads, quantitatively: per-head energies and their rates, the scalar-head equiangular reduction, the
critical inverse temperature, super-additive clustering rates and the attention-entropy identity.

Results of arXiv 2605.04279 (only its abstract and a third-party summary were at hand; the statements and
constants below are derived here, note ``proofs_notes/architectures-multihead-energy.md`` and the three notes
after it). Conventions: heads h = 1..H with score maps B_h (scores beta <x_i, B_h x_j>) and value maps M_h
(:class:`numerics.core.blocks.MultiHead`: ``score_maps`` and ``value_maps``); the energy of head h is

    E_h(X) = 1/(2 beta n^2) sum_{i,j} (e^{beta <x_i, B_h x_j>} - 1)          (defined on R^{n x d}),

with Euclidean gradient g_i^h = 1/(2 n^2) sum_j (e^{beta <x_i,B_h x_j>} B_h x_j + e^{beta <x_j,B_h x_i>} B_h^T x_j).

Energy rates (``usa``, M_h = B_h symmetric, so v_i = n P_{x_i} sum_h g_i^h on the sphere and n sum_h g_i^h in the
flat (unprojected) dynamics):

    dE_h/dt = n sum_i [ <g_i^h, g_i> - <x_i, g_i^h><x_i, g_i> ],   g_i = sum_h' g_i^h'   (sphere)

and without the second term in the flat dynamics. The total (sum over h) is n sum_i |P_{x_i} g_i|^2 >= 0. For
heads with orthogonal ranges (B_h B_h' = 0) the cross terms <g^h, g^h'> vanish, so each head's energy is
non-decreasing in the flat dynamics; on the sphere the RADIAL SHADOW terms -n sum_i <x_i, g_i^h><x_i, g_i^h'>
(h' != h) remain and can make one head's energy decrease.

Scalar heads (B_h = m_h I, M_h = w_h I, ``sa``) on an equiangular configuration <x_i, x_j> = rho (i != j):

    drho/dt = F(rho) = 2 (1 - rho)(1 + (n - 1) rho) sum_h w_h e^{beta m_h rho} / (e^{beta m_h} + (n - 1) e^{beta m_h rho}),

the initial speed F(0) = 2 sum_h w_h / (e^{beta m_h} + n - 1), and the critical inverse temperature of a head
beta_c = log(n - 1) / m: the speed g(m) = 1/(e^{beta m} + n - 1) is concave in m for beta m < log(n - 1) and convex
above, so spreading the heads' temperatures around a mean m speeds the start up exactly when beta > beta_c.
Clustering rates 1/T (T the time from rho_0 to rho_1) are super-additive: 1/T_{1+2} >= 1/T_1 + 1/T_2, with
equality iff F_1 / F_2 is constant on [rho_0, rho_1] (homogeneous heads), by the concavity of the harmonic mean.

Attention entropy of token i in head h, H_i = -sum_j A_ij log A_ij with A_ij = softmax_j(beta s_ij),
s_ij = <x_i, B_h x_j>: along any flow,

    dH_i/dt = -beta^2 Cov_{A_i}(s_i., ds_i./dt)         (the entropy-production identity),

and on an equiangular solution with rho' >= 0 it is beta^2 a (1 - a)(1 - rho) rho' >= 0 (a = A_ii).
"""
from __future__ import annotations

import numpy as np
from scipy import integrate

from numerics.common.errors import InputError
from numerics.core.blocks import MultiHead


def head_energy(X: np.ndarray, beta: float, B: np.ndarray) -> float:
    """E_h(X) = 1/(2 beta n^2) sum_{i,j} (e^{beta <x_i, B x_j>} - 1) (beta != 0)."""
    if beta == 0:
        raise InputError("the head energy needs beta != 0 (beta = 0 is a limit)")
    n = X.shape[0]
    return float(np.expm1(beta * (X @ B @ X.T)).sum() / (2.0 * beta * n * n))


def head_gradient(X: np.ndarray, beta: float, B: np.ndarray) -> np.ndarray:
    """Euclidean gradient of :func:`head_energy` in R^{n x d}: row i is g_i^h."""
    n = X.shape[0]
    W = np.exp(beta * (X @ B @ X.T))
    return (W @ X @ B.T + W.T @ X @ B) / (2.0 * n * n)


def energy_rate_terms(X: np.ndarray, beta: float, score_maps, projected: bool = True) -> list[dict]:
    """For ``usa`` heads with value maps = score maps (symmetric): per head, the three parts of dE_h/dt,
    ``own`` = n sum_i |P g_i^h|^2 (or |g_i^h|^2 flat), ``cross`` = n sum_i sum_{h' != h} <g_i^h, g_i^h'> and
    ``shadow`` = -n sum_i sum_{h' != h} <x_i, g_i^h><x_i, g_i^h'> (zero in the flat dynamics), and their sum."""
    n = X.shape[0]
    G = [head_gradient(X, beta, B) for B in score_maps]
    total = sum(G)
    out = []
    for g in G:
        other = total - g
        xg = np.sum(X * g, axis=1)
        own = n * float(np.sum(g * g) - (np.sum(xg * xg) if projected else 0.0))
        cross = n * float(np.sum(g * other))
        shadow = -n * float(np.sum(xg * np.sum(X * other, axis=1))) if projected else 0.0
        out.append({"own": own, "cross": cross, "shadow": shadow, "rate": own + cross + shadow})
    return out


def flat_usa_field(heads: MultiHead, beta: float):
    """The ``usa`` heads field WITHOUT the tangent projection (tokens in R^d): (1/n) sum_h sum_j e^{beta <x_i,
    B_h x_j>} M_h x_j."""
    Bs, Ms = heads.score_maps, heads.value_maps

    def field(X):
        n = X.shape[0]
        return sum(np.exp(beta * (X @ B @ X.T)) @ X @ M.T for B, M in zip(Bs, Ms)) / n

    return field


def directional_rate(energy, X: np.ndarray, V: np.ndarray, eps: float = 1e-6) -> float:
    """d/dt energy(X + t V) at t = 0 by central differences (truncation O(eps^2), round-off ~1e-16/eps)."""
    return (energy(X + eps * V) - energy(X - eps * V)) / (2.0 * eps)


# -- scalar heads on equiangular configurations ------------------------------------------------------------
def equiangular_points(n: int, rho: float, rng: np.random.Generator, d: int | None = None) -> np.ndarray:
    """n unit vectors of R^d (d >= n) with all pairwise inner products rho (-1/(n-1) < rho < 1): the Cholesky
    factor of (1 - rho) I + rho 1 1^T, randomly rotated."""
    d = n if d is None else d
    if d < n or not -1.0 / (n - 1) < rho < 1.0:
        raise InputError(f"an equiangular configuration needs d >= n and -1/(n-1) < rho < 1; got n={n}, d={d}, "
                         f"rho={rho}")
    G = (1 - rho) * np.eye(n) + rho * np.ones((n, n))
    L = np.linalg.cholesky(G)
    Qm, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return np.hstack([L, np.zeros((n, d - n))]) @ Qm.T


def equiangular_speed(rho, beta: float, n: int, ms, ws) -> np.ndarray:
    """F(rho) for scalar ``sa`` heads (score m_h I, value w_h I): the right-hand side of drho/dt."""
    rho = np.asarray(rho, float)
    total = 0.0
    for m, w in zip(ms, ws):
        # e^{beta m rho} / (e^{beta m} + (n - 1) e^{beta m rho}) = 1 / (e^{beta m (1 - rho)} + n - 1)
        total = total + w / (np.exp(beta * m * (1.0 - rho)) + (n - 1))
    return 2.0 * (1.0 - rho) * (1.0 + (n - 1) * rho) * total


def critical_beta(n: int, m: float = 1.0) -> float:
    """beta_c = log(n - 1) / m: where the self-attention weight e^{beta m} equals the weight n - 1 of the others at
    rho = 0, and the initial speed 1/(e^{beta m} + n - 1) turns from concave to convex in m."""
    if n < 3 or m <= 0:
        raise InputError(f"the critical beta needs n >= 3 and m > 0; got n={n}, m={m}")
    return float(np.log(n - 1) / m)


def clustering_time(beta: float, n: int, ms, ws, rho0: float = 0.0, rho1: float = 0.9) -> float:
    """T = int_{rho0}^{rho1} drho / F(rho) (adaptive quadrature, rel. 1e-12)."""
    val, _ = integrate.quad(lambda r: 1.0 / float(equiangular_speed(r, beta, n, ms, ws)), rho0, rho1,
                            epsabs=0.0, epsrel=1e-12, limit=200)
    return float(val)


# -- attention entropy ------------------------------------------------------------------------------------
def attention_entropy(X: np.ndarray, beta: float, B: np.ndarray) -> np.ndarray:
    """H_i = -sum_j A_ij log A_ij, A_i = softmax_j(beta <x_i, B x_j>) (log-sum-exp form)."""
    S = beta * (X @ B @ X.T)
    S = S - S.max(axis=1, keepdims=True)
    logA = S - np.log(np.exp(S).sum(axis=1, keepdims=True))
    return -np.sum(np.exp(logA) * logA, axis=1)


def entropy_production(X: np.ndarray, V: np.ndarray, beta: float, B: np.ndarray) -> np.ndarray:
    """dH_i/dt along the velocity V from the identity -beta^2 Cov_{A_i}(s_i., ds_i./dt), s_ij = <x_i, B x_j>."""
    S = X @ B @ X.T
    dS = V @ B @ X.T + X @ B @ V.T
    Z = beta * S
    A = np.exp(Z - Z.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    mean_s = np.sum(A * S, axis=1)
    mean_ds = np.sum(A * dS, axis=1)
    return -beta**2 * (np.sum(A * S * dS, axis=1) - mean_s * mean_ds)
