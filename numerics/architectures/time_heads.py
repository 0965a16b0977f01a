"""Several heads with time-dependent weights as a time-dependent gradient flow (Massucco et al., arXiv 2605.18870;
note ``proofs_notes/architectures-time-dependent-heads.md``).

``usa`` heads h = 1..H with symmetric score maps s_h(t) B_h (B_h = B_h^T, s_h a time-dependent score weight) and
value maps c_h(t) s_h(t) B_h (c_h a time-dependent head weight). With

    E(X, t) = sum_h c_h(t) / (2 beta n^2) sum_{i,j} e^{beta s_h(t) <x_i, B_h x_j>}

the ambient gradient in x_i is (1/n^2) sum_h c_h s_h sum_j e^{...} B_h x_j, so the field is v_i = n grad_i E(., t)
(the Wasserstein gradient of the empirical measure's energy, evaluated at x_i). Along a trajectory

    dE/dt = (d/dt at fixed X) E + sum_i <grad_i E, v_i> = partial_t E + (1/n) sum_i |v_i|^2,
    partial_t E = sum_h [ c_h' / (2 beta n^2) sum_{ij} e^{beta s_h b_ij}
                          + c_h s_h' / (2 n^2) sum_{ij} b_ij e^{beta s_h b_ij} ],

with b_ij = <x_i, B_h x_j>: the energy-dissipation identity with time-dependent weights (:func:`dissipation`,
:func:`partial_time`). When the weights settle (their derivatives integrable), the limit points of a trajectory
are stationary for the energy at the limiting weights.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError
from numerics.core.blocks import MultiHead


@dataclass(frozen=True)
class HeadWeights:
    """Time-dependent per-head weights: ``c(t) -> (H,)`` head weights, ``s(t) -> (H,)`` score weights, and their
    derivatives ``dc``, ``ds``."""

    c: Callable[[float], np.ndarray]
    dc: Callable[[float], np.ndarray]
    s: Callable[[float], np.ndarray]
    ds: Callable[[float], np.ndarray]


def settling_weights(c0, c_inf, s0, s_inf, rate: float = 1.0) -> HeadWeights:
    """Weights relaxing exponentially to (c_inf, s_inf) (the mean of an Ornstein-Uhlenbeck path; derivatives
    integrable on [0, inf))."""
    c0, c_inf, s0, s_inf = (np.asarray(v, float) for v in (c0, c_inf, s0, s_inf))
    return HeadWeights(c=lambda t: c_inf + (c0 - c_inf) * np.exp(-rate * t),
                       dc=lambda t: -rate * (c0 - c_inf) * np.exp(-rate * t),
                       s=lambda t: s_inf + (s0 - s_inf) * np.exp(-rate * t),
                       ds=lambda t: -rate * (s0 - s_inf) * np.exp(-rate * t))


def oscillating_weights(c_mean, amplitude: float, omega: float, phases) -> HeadWeights:
    """c_h(t) = c_h (1 + amplitude sin(omega t + phase_h)), s_h = 1: weights that never settle."""
    c_mean, phases = np.asarray(c_mean, float), np.asarray(phases, float)
    if not 0 <= amplitude < 1:
        raise InputError(f"amplitude must be in [0, 1), got {amplitude}")
    ones = np.ones_like(c_mean)
    return HeadWeights(c=lambda t: c_mean * (1 + amplitude * np.sin(omega * t + phases)),
                       dc=lambda t: c_mean * amplitude * omega * np.cos(omega * t + phases),
                       s=lambda t: ones, ds=lambda t: 0.0 * ones)


def heads_at(Bs: np.ndarray, weights: HeadWeights, t: float) -> MultiHead:
    """The heads at time t: Q_h = s_h B_h, K_h = I (score map s_h B_h, scale 1), V_h = c_h s_h B_h, W_h = I."""
    H, d, _ = Bs.shape
    s, c = weights.s(t), weights.c(t)
    eye = np.repeat(np.eye(d)[None], H, 0)
    return MultiHead(s[:, None, None] * Bs, eye, (c * s)[:, None, None] * Bs, eye, scale=1.0)


def energy(X: np.ndarray, beta: float, Bs: np.ndarray, weights: HeadWeights, t: float) -> float:
    """E(X, t) of the module docstring."""
    n = X.shape[0]
    c, s = weights.c(t), weights.s(t)
    return float(sum(c[h] * np.exp(beta * s[h] * (X @ Bs[h] @ X.T)).sum() for h in range(Bs.shape[0]))
                 / (2.0 * beta * n * n))


def partial_time(X: np.ndarray, beta: float, Bs: np.ndarray, weights: HeadWeights, t: float) -> float:
    """The derivative of E(X, t) in t at fixed X (module docstring)."""
    n = X.shape[0]
    c, s, dc, ds = weights.c(t), weights.s(t), weights.dc(t), weights.ds(t)
    total = 0.0
    for h in range(Bs.shape[0]):
        b = X @ Bs[h] @ X.T
        e = np.exp(beta * s[h] * b)
        total += dc[h] * e.sum() / (2.0 * beta * n * n) + c[h] * ds[h] * (b * e).sum() / (2.0 * n * n)
    return float(total)


def dissipation(field: np.ndarray) -> float:
    """sum_i <grad_i E, v_i> = (1/n) sum_i |v_i|^2 for v_i = n grad_i E."""
    return float(np.sum(field * field) / field.shape[0])
