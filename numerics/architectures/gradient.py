r"""Where the gradient-flow structure survives with several heads, and numerical counterexamples where it does not.

Survives (derived in :mod:`theory.architectures`, note ``proofs_notes/architectures-gradient-structure.md``):

- ``usa``, heads with symmetric score maps :math:`B_h = c Q_h^\top K_h` and value maps
  :math:`W_h^\top V_h = c_h B_h`: :math:`v_i = n \operatorname{grad}_i E` (Riemannian gradient on
  :math:`(\mathbb{S}^{d-1})^n`),
  :math:`E(X) = \sum_h \frac{c_h}{2\beta n^2} \sum_{i,j} e^{\beta x_i^\top B_h x_j}`.
  Heads with :math:`B_h = b_h I` and value maps :math:`w_h I` are the case :math:`c_h = w_h / b_h` (the mixed
  kernel).
- ``sa`` with one head :math:`Q = K = V = I`: :math:`v_i = (n^2 / Z_i) \operatorname{grad}_i E_\beta` (GLPR: a
  gradient flow for the metric :math:`(Z_i / n^2) \langle\cdot, \cdot\rangle` on the :math:`i`-th sphere).

Does not survive (checked by a nonzero circulation of the velocity 1-form
:math:`\omega = \sum_i m_i \langle v_i, dx_i\rangle` around a small closed loop, which vanishes for
:math:`v_i = m_i^{-1} \operatorname{grad}_i F` whatever :math:`F` is): ``usa`` with :math:`V = I` and a symmetric
:math:`B \ne bI` (round metric); ``sa`` with two heads at different temperatures for the metric factors
:math:`m_i = Z_i^1`, :math:`Z_i^2` and :math:`Z_i^1 + Z_i^2`. The loops are taken on :math:`\mathbb{S}^1` in two angle
coordinates, :math:`\theta_a(\phi) = \theta_a + r \cos\phi`, :math:`\theta_b(\phi) = \theta_b + r \sin\phi`, with the
periodic trapezoid rule (spectrally accurate), so that circulation :math:`/ (\pi r^2) = C_{ab} + O(r^2)`,
:math:`C_{ab} = \partial a_b/\partial\theta_a - \partial a_a/\partial\theta_b` the curl of :math:`\omega` at the
centre (compared with the symbolic curl :func:`theory.architectures.curl_at` in the tests).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from numerics.common.errors import InputError
from numerics.core.blocks import MultiHead

#: central-difference step of the energy gradient: truncation O(h^2) ~ 1e-10, round-off ~ 1e-16 / h ~ 1e-11
FD_STEP = 1e-5


def symmetric_energy_terms(heads: MultiHead, tol: float = 1e-13) -> list[tuple[np.ndarray, float]] | None:
    """[(B_h, c_h)] when every score map B_h is symmetric and the value map is c_h B_h, else ``None``."""
    out = []
    for B, M in zip(heads.score_maps, heads.value_maps):
        scale = max(1.0, float(np.max(np.abs(B))))
        if np.max(np.abs(B - B.T)) > tol * scale:
            return None
        k = int(np.argmax(np.abs(B)))
        c = float(M.flat[k] / B.flat[k])
        if np.max(np.abs(M - c * B)) > tol * max(1.0, float(np.max(np.abs(M)))):
            return None
        out.append((B, c))
    return out


def heads_energy(X: np.ndarray, beta: float, terms: list[tuple[np.ndarray, float]]) -> float:
    r""":math:`E(X) = \sum_h \frac{c_h}{2\beta n^2} \sum_{i,j} e^{\beta x_i^\top B_h x_j}` (defined on
    :math:`\mathbb{R}^{n \times d}`, not only the sphere)."""
    n = X.shape[0]
    return float(sum(c / (2.0 * beta * n * n) * np.exp(beta * (X @ B @ X.T)).sum() for B, c in terms))


def fd_riemannian_gradient(energy: Callable[[np.ndarray], float], X: np.ndarray, h: float = FD_STEP) -> np.ndarray:
    r""":math:`P_{x_i}` of the ambient central-difference gradient of ``energy`` (the Riemannian gradient on the product
    of spheres: the energy's extension off the sphere does not matter after projection)."""
    G = np.empty_like(X)
    for idx in np.ndindex(X.shape):
        E = np.zeros_like(X)
        E[idx] = h
        G[idx] = (energy(X + E) - energy(X - E)) / (2.0 * h)
    return G - np.sum(G * X, axis=1, keepdims=True) * X


def circle_points(thetas) -> np.ndarray:
    thetas = np.asarray(thetas, float)
    return np.column_stack([np.cos(thetas), np.sin(thetas)])


def angle_circulation(field: Callable[[np.ndarray], np.ndarray], thetas, a: int, b: int, r: float,
                      metric: Callable[[np.ndarray], np.ndarray] | None = None, nodes: int = 64) -> float:
    r"""Circulation :math:`/ (\pi r^2)` of :math:`\omega = \sum_i m_i v_i^\theta\, d\theta_i` around the loop
    :math:`\theta_a + r \cos\phi`, :math:`\theta_b + r \sin\phi` (other angles fixed) on :math:`(\mathbb{S}^1)^n`: the
    curl :math:`C_{ab}` at the centre up to :math:`O(r^2)`.

    ``field(X) -> (n, 2)`` the velocity, ``metric(X) -> (n,)`` the factors :math:`m_i` (default 1, the round metric).
    Periodic trapezoid rule with ``nodes`` points (exact for trigonometric polynomials of degree < ``nodes``).
    """
    thetas = np.asarray(thetas, float)
    if a == b or not (0 <= a < thetas.size and 0 <= b < thetas.size):
        raise InputError("the loop needs two different token indices")
    total = 0.0
    for phi in 2.0 * np.pi * np.arange(nodes) / nodes:
        th = thetas.copy()
        th[a] += r * np.cos(phi)
        th[b] += r * np.sin(phi)
        X = circle_points(th)
        V = field(X)
        ang = -X[:, 1] * V[:, 0] + X[:, 0] * V[:, 1]
        m = np.ones(th.size) if metric is None else metric(X)
        total += m[a] * ang[a] * (-r * np.sin(phi)) + m[b] * ang[b] * (r * np.cos(phi))
    return float(total * (2.0 * np.pi / nodes) / (np.pi * r * r))


def head_normaliser(heads: MultiHead, h: int, beta: float) -> Callable[[np.ndarray], np.ndarray]:
    """X -> Z_i^h = sum_j e^{beta <x_i, B_h x_j>} (the sa metric factor of head h, constant n^{-2} dropped)."""
    B = heads.score_maps[h]
    return lambda X: np.exp(beta * (X @ B @ X.T)).sum(axis=1)
