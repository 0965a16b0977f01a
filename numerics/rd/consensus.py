r"""Self-attention in :math:`\mathbb{R}^d` in its consensus (Frank-Wolfe) form, at a fixed inverse temperature or at
zero temperature.

A token :math:`z` is moved toward the attention-weighted mean of the tokens,

.. math::

    m_\beta(z) = \frac{\sum_j w_j e^{\beta z_j^\top A z} z_j}{\sum_j w_j e^{\beta z_j^\top A z}}, \qquad A = K^\top Q,

by the flow :math:`dz_i/dt = V (m_\beta(z_i) - z_i)` or by the layer map
:math:`z_i \leftarrow z_i + \gamma (m_\beta(z_i) - z_i)` (:math:`V = I`; a convex combination, so tokens stay in the
convex hull of the current tokens). This is the rescaled :math:`\mathbb{R}^d` equation of :mod:`numerics.rd.dynamics`
with its logit scale frozen (there the logits grow like :math:`e^{2\lambda t}`); at ``beta = inf`` :math:`m` is the
hardmax token :math:`z_{j^*}`, :math:`j^* = \operatorname{argmax}_j z_j^\top A z` (the first index on ties), and the
layer map is a Frank-Wolfe step for :math:`f(y) = -y^\top A y / 2` over :math:`\operatorname{conv}\{z_j\}` (arXiv
2508.09628: the linear minimisation of :math:`\langle \nabla f(z_i), y\rangle = -\langle A z_i, y\rangle` over the
hull is attained at a token). ``w`` are particle masses (default equal): with masses the same code is the
mean-field velocity of a weighted empirical measure.

Verified by: rd.frank-wolfe-step, rd.frank-wolfe-voronoi, rd.frank-wolfe-nsd-contraction,
rd.frank-wolfe-persistence, meanfield.low-temperature-concentration.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from numerics.common.errors import InputError, require_finite_array, require_int, require_real
from numerics.common.limits import check_memory, check_work, steps_of
from numerics.common.stepping import rk4_at_times
from numerics.core.field import block_rows


def _masses(weights, n: int) -> np.ndarray | None:
    if weights is None:
        return None
    w = require_finite_array(weights, "weights", ndim=1)
    if w.size != n or np.any(w < 0) or not w.sum() > 0:
        raise InputError(f"weights must be {n} non-negative numbers with a positive sum")
    return w / w.sum()


def attention_mean(Z: np.ndarray, A: np.ndarray, beta: float, weights=None, block: int | None = None) -> np.ndarray:
    r""":math:`m_\beta(z_i)` for every token (rows of the ``(n, d)`` array ``Z``); ``beta = inf`` gives the hardmax
    token.

    Logits :math:`L_{ij} = \beta z_j^\top A z_i`, shifted by their row maximum before exponentiation (no overflow for
    any finite :math:`\beta`); blocked by rows (memory :math:`O(\mathrm{block}\, n)`). Masses ``weights`` enter as
    log-weights.
    """
    n, d = Z.shape
    w = _masses(weights, n)
    block = block or block_rows(n)
    out = np.empty_like(Z)
    ZA = Z @ A.T  # row i: (A z_i)^T, so L_ij = (A z_i) . z_j
    logw = None if w is None else np.log(np.where(w > 0, w, 1.0)) + np.where(w > 0, 0.0, -np.inf)
    for start in range(0, n, block):
        rows = slice(start, min(n, start + block))
        L = ZA[rows] @ Z.T
        if math.isinf(beta):
            if logw is not None:
                L = np.where(np.isfinite(logw)[None, :], L, -np.inf)
            out[rows] = Z[np.argmax(L, axis=1)]
            continue
        L *= beta
        if logw is not None:
            L += logw[None, :]
        L -= L.max(axis=1, keepdims=True)
        np.exp(L, out=L)
        out[rows] = (L @ Z) / L.sum(axis=1, keepdims=True)
    return out


def consensus_velocity(Z: np.ndarray, A: np.ndarray, beta: float, V: np.ndarray | None = None,
                       weights=None) -> np.ndarray:
    r""":math:`dz_i/dt = V (m_\beta(z_i) - z_i)` (rows)."""
    D = attention_mean(Z, A, beta, weights) - Z
    return D if V is None else D @ V.T


def frank_wolfe_layer(Z: np.ndarray, A: np.ndarray, beta: float, step: float, weights=None) -> np.ndarray:
    r"""One layer :math:`z_i \leftarrow z_i + \mathrm{step}\, (m_\beta(z_i) - z_i)`: a Frank-Wolfe step of size ``step``
    at :math:`\beta = \infty`."""
    return Z + step * (attention_mean(Z, A, beta, weights) - Z)


def _validate(Z0, A, beta, d_name="Z0"):
    Z = require_finite_array(Z0, d_name, ndim=2).copy()
    n, d = Z.shape
    if n < 1:
        raise InputError(f"{d_name} must hold at least one token")
    A = require_finite_array(A, "A", ndim=2)
    if A.shape != (d, d):
        raise InputError(f"A must be {d} x {d}, got {A.shape}")
    beta = float(beta)
    if math.isnan(beta) or beta < 0:
        raise InputError(f"beta must be >= 0 or inf, got {beta}")
    return Z, A, beta


def _cost(n: int, d: int, evaluations: float, frames: int, what: str) -> None:
    """Memory: the saved frames and one block of logits; work: about (2 d + 3) n^2 per evaluation."""
    check_memory(8.0 * (frames * n * d + block_rows(n) * n + 4 * n * d), what)
    check_work(evaluations * ((2 * d + 3) * n * n + 1e5), what)


def iterate_layers(Z0, A, beta: float, step: float, layers: int, *, every: int = 1, weights=None,
                   progress: Callable[[float, float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``layers`` Frank-Wolfe layers from Z0; returns (layer indices (m,), frames (m, n, d)) every ``every``
    layers (and the last). ``step`` in (0, 1] (a convex combination)."""
    Z, A, beta = _validate(Z0, A, beta)
    step = require_real(step, "step", minimum=0.0, maximum=1.0, strict_minimum=True)
    layers = require_int(layers, "layers", minimum=0)
    every = require_int(every, "every", minimum=1)
    n, d = Z.shape
    frames = layers // every + 2
    _cost(n, d, layers, frames, f"{layers} attention layers of n = {n} tokens in R^{d}")
    idx, out = [0], [Z.copy()]
    for k in range(1, layers + 1):
        Z = frank_wolfe_layer(Z, A, beta, step, weights)
        if k % every == 0 or k == layers:
            idx.append(k)
            out.append(Z.copy())
        if progress is not None:
            progress(k, layers)
    return np.array(idx), np.array(out)


def integrate_flow(Z0, A, beta: float, t_end: float, dt: float, *, V=None, saves: int = 101, weights=None,
                   observe: Callable[[np.ndarray], object] | None = None,
                   progress: Callable[[float, float], None] | None = None):
    r"""RK4 for :math:`dz/dt = V (m_\beta(z) - z)` from ``Z0`` to ``t_end`` with steps :math:`\le` ``dt``.

    Returns (times ``(saves,)``, frames): the states ``(saves, n, d)``, or ``observe(Z)`` of each saved state when given
    (large :math:`n`: only what is needed is kept). At ``beta = inf`` the field switches where a token's target changes;
    RK4 is then first order at the switches (use the layer map for exact hardmax statements).
    """
    Z, A, beta = _validate(Z0, A, beta)
    n, d = Z.shape
    t_end = require_real(t_end, "t_end", minimum=0.0)
    dt = require_real(dt, "dt", minimum=0.0, strict_minimum=True)
    saves = require_int(saves, "saves", minimum=2)
    if V is not None:
        V = require_finite_array(V, "V", ndim=2)
        if V.shape != (d, d):
            raise InputError(f"V must be {d} x {d}, got {V.shape}")
    steps = steps_of(t_end, dt)
    _cost(n, d, 4.0 * (steps + saves), saves if observe is None else 1,
          f"the consensus flow of n = {n} tokens in R^{d} to t = {t_end:g} (dt = {dt:g})")
    f = lambda Y: consensus_velocity(Y, A, beta, V, weights)  # noqa: E731
    times = np.linspace(0.0, t_end, saves)
    keep = (lambda Y: Y.copy()) if observe is None else observe
    out = [keep(Z)]
    for t, Z in rk4_at_times(f, Z, times, dt):
        if not np.all(np.isfinite(Z)):
            raise InputError(f"the tokens became non-finite at t = {t:.6g} (reduce dt)")
        out.append(keep(Z))
        if progress is not None:
            progress(t, t_end)
    return times, (np.array(out) if observe is None else out)
