r"""Causal attention on the sphere with :math:`V = I`: two tokens, the merge time as a one-dimensional integral.

Model (Karagodin, Polyanskiy, Rigollet, arXiv 2411.04990, causal self-attention with :math:`V = I`):

.. math::

    \frac{dx_i}{dt} = P_{x_i}\Biggl(\frac{\sum_{j \le i} e^{\beta\langle Q x_i, K x_j\rangle} x_j}
    {\sum_{k \le i} e^{\beta\langle Q x_i, K x_k\rangle}}\Biggr).

Token 1 attends only to itself and :math:`P_{x_1} x_1 = 0`, so :math:`x_1(t) = x_1(0)`. For token 2, with
:math:`\theta` the angle between :math:`x_1` and :math:`x_2` and :math:`u` the unit vector of
:math:`x_2(0) - \langle x_1, x_2(0)\rangle x_1`,

.. math::

    \begin{aligned}
    x_2(t) &= \cos\theta(t)\, x_1 + \sin\theta(t)\, u, \\
    \frac{d\theta}{dt} &= -\sigma\bigl(\beta [\langle Q x_2, K x_1\rangle - \langle Q x_2, K x_2\rangle]\bigr)
      \sin\theta, \qquad \sigma(z) = \frac{1}{1 + e^{-z}},
    \end{aligned}

(derivation: :math:`v_2 = p_{21} P_{x_2} x_1` since :math:`P_{x_2} x_2 = 0`;
:math:`d\cos\theta/dt = \langle x_1, v_2\rangle = p_{21} \sin^2\theta`, and
:math:`p_{21} = \sigma(s_{21} - s_{22})`). The time for :math:`\theta` to fall from :math:`\theta_0` to
:math:`\theta_\varepsilon` is

.. math::

    \begin{aligned}
    T(\theta_0 \to \theta_\varepsilon) &= \int_{\theta_\varepsilon}^{\theta_0}
      \frac{d\theta}{\sigma(\beta g(\theta)) \sin\theta}, \\
    g(\theta) &= \langle Q x(\theta), K x_1\rangle - \langle Q x(\theta), K x(\theta)\rangle.
    \end{aligned}

Since the integrand :math:`\sim 1/(\sigma(0) \theta)` near 0 the merge is asymptotic (:math:`T \to \infty` as
:math:`\theta_\varepsilon \to 0`): the merge time to angle :math:`\varepsilon` grows like
:math:`2 \log(1/\varepsilon)` for small :math:`\varepsilon`. Note: proofs_notes/architectures-causal-collapse.md.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import quad

from numerics.common.errors import InputError, require_real


def _plane(x1: np.ndarray, x2: np.ndarray) -> tuple[float, np.ndarray]:
    c = float(np.clip(x1 @ x2, -1.0, 1.0))
    w = x2 - c * x1
    norm = float(np.linalg.norm(w))
    if norm < 1e-12:
        raise InputError("the two tokens are (anti)parallel: the great circle through them is not defined")
    return math.acos(c), w / norm


def two_token_rate(theta: float, x1: np.ndarray, u: np.ndarray, beta: float, Q: np.ndarray, K: np.ndarray) -> float:
    """d theta/dt at angle theta (negative): - sigma(beta g(theta)) sin theta."""
    x = math.cos(theta) * x1 + math.sin(theta) * u
    qx = Q @ x
    z = beta * (qx @ (K @ x1) - qx @ (K @ x))
    return -math.sin(theta) / (1.0 + math.exp(-z))


def two_token_merge_time(x1, x2, theta_eps: float, beta: float, Q=None, K=None) -> float:
    r""":math:`T(\theta_0 \to \theta_\varepsilon)`: the time the second token needs to come within angle
    ``theta_eps`` of the first.

    Adaptive Gauss-Kronrod quadrature (``scipy.integrate.quad``, ``epsabs = 0``, ``epsrel = 1e-12``) of the integral in
    the module docstring. Verified by: architectures.causal-collapse.
    """
    x1, x2 = np.asarray(x1, float), np.asarray(x2, float)
    d = x1.size
    Q = np.eye(d) if Q is None else np.asarray(Q, float)
    K = np.eye(d) if K is None else np.asarray(K, float)
    beta = require_real(beta, "beta")
    theta0, u = _plane(x1, x2)
    theta_eps = require_real(theta_eps, "theta_eps", minimum=0.0, strict_minimum=True)
    if theta_eps >= theta0:
        raise InputError(f"theta_eps={theta_eps:g} must be below the initial angle {theta0:g}")
    value, err = quad(lambda th: -1.0 / two_token_rate(th, x1, u, beta, Q, K), theta_eps, theta0,
                      epsabs=0.0, epsrel=1e-12, limit=200)
    return float(value)


def angle_between(x1: np.ndarray, x2: np.ndarray) -> float:
    """Angle between two unit vectors, accurate for small angles (2 asin(|x1 - x2|/2))."""
    return 2.0 * math.asin(min(1.0, float(np.linalg.norm(np.asarray(x1) - np.asarray(x2))) / 2.0))
