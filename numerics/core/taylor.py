r"""Taylor-remainder slope tests on the product of spheres and log-log slope fits.

For :math:`f` on :math:`(\mathbb{S}^{d-1})^n`, a point :math:`X`, a tangent direction :math:`\xi` and the
retraction :math:`R_X(t\xi)` = rows of :math:`X + t\xi` normalised (a second-order retraction), the remainders

.. math::

    \begin{aligned}
    r_1(t) &= \big\lvert f(R_X(t\xi)) - f(X) - t \langle \operatorname{grad} f(X), \xi\rangle\big\rvert = O(t^2), \\
    r_2(t) &= \big\lvert f(R_X(t\xi)) - f(X) - t \langle \operatorname{grad} f(X), \xi\rangle
        - \tfrac{t^2}{2} \langle \xi, \operatorname{Hess} f(X)[\xi]\rangle\big\rvert = O(t^3)
    \end{aligned}

have log-log slopes 2 and 3 exactly when the gradient and the Hessian are right (Boumal 2023, section 4.8 and
6.8). Slopes are fitted by least squares on the window of :math:`t` where the remainder is above the round-off floor;
the window is reported.
"""
from __future__ import annotations

import numpy as np

from numerics.core.integrators import renormalize


def tangent_direction(X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random unit-norm tangent direction at X (Gaussian, projected row by row, normalised overall)."""
    G = rng.standard_normal(X.shape)
    G -= np.einsum("ij,ij->i", X, G)[:, None] * X
    return G / np.linalg.norm(G)


def fitted_slope(t: np.ndarray, r: np.ndarray, floor: float) -> tuple[float, list[float]]:
    """Least-squares slope of log r against log t over the points with r > floor; returns (slope, window)."""
    t, r = np.asarray(t, float), np.asarray(r, float)
    keep = r > floor
    if keep.sum() < 3:
        return float("nan"), []
    slope = float(np.polyfit(np.log(t[keep]), np.log(r[keep]), 1)[0])
    return slope, [float(t[keep].min()), float(t[keep].max())]


def taylor_remainders(f, grad, hess_vec, X: np.ndarray, xi: np.ndarray, ts) -> tuple[np.ndarray, np.ndarray]:
    """First- and second-order Taylor remainders r1(t), r2(t) along the retraction (see module docstring).

    ``f(X) -> float``, ``grad(X) -> (n, d)`` Riemannian gradient, ``hess_vec(X, U) -> (n, d)`` Riemannian
    Hessian applied to a tangent U.
    """
    f0 = f(X)
    g = float(np.sum(grad(X) * xi))
    h = float(np.sum(xi * hess_vec(X, xi)))
    r1, r2 = [], []
    for t in ts:
        ft = f(renormalize(X + t * xi))
        r1.append(abs(ft - f0 - t * g))
        r2.append(abs(ft - f0 - t * g - 0.5 * t * t * h))
    return np.array(r1), np.array(r2)
