"""The solvers of the integration loop (:mod:`numerics.core.loop`): Butcher tableaux and one step each.

Every step takes ``f(Y, tau)``, the field of the step at the absolute time tau (the loop freezes the piece of a
piecewise field for the whole step, :func:`numerics.core.loop.stage_field`), and returns the state at t + h
*before* the space's retraction (the loop retracts).

- :data:`LAYER`: x + h v(x, t), the transformer layer before renormalisation (projected Euler). First order.
- :data:`RK4`: classical Runge-Kutta, stages at t, t + h/2, t + h/2, t + h. Fourth order.
- :data:`DP5`: Dormand-Prince 5(4) (Hairer, Norsett, Wanner, Solving ODEs I, Table 5.2) with its embedded
  error estimate; 6 evaluations per attempt plus the first-same-as-last evaluation at the new point.
- :data:`DOP853`: Dormand-Prince 8(5,3) (the same book, section II.10; Hairer's DOP853 code, coefficients as
  tabulated in ``scipy.integrate._ivp.dop853_coefficients``) with its 7th-order dense output (3 more
  evaluations in a step that holds output times); 12 evaluations per attempt (FSAL).

The adaptive solvers only compute; step-size control (tolerances, norm, factors) is
:class:`numerics.core.controllers.Adaptive`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

StageField = Callable[[np.ndarray, float], np.ndarray]


def layer(f: StageField, X: np.ndarray, t: float, h: float) -> np.ndarray:
    """x + h v(x, t): the layer step before the retraction."""
    return X + h * f(X, t)


def rk4(f: StageField, X: np.ndarray, t: float, h: float) -> np.ndarray:
    """One classical RK4 step (before the retraction)."""
    k1 = f(X, t)
    k2 = f(X + 0.5 * h * k1, t + 0.5 * h)
    k3 = f(X + 0.5 * h * k2, t + 0.5 * h)
    k4 = f(X + h * k3, t + h)
    return X + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


@dataclass(frozen=True)
class Explicit:
    """A fixed-step explicit method: ``step(f, X, t, h)`` before the retraction."""

    name: str
    order: int
    step: Callable


LAYER, RK4 = Explicit("layer", 1, layer), Explicit("rk4", 4, rk4)
EXPLICIT = {"layer": LAYER, "rk4": RK4}

# Dormand-Prince 5(4) tableau (Hairer, Norsett, Wanner, Solving ODEs I, Table 5.2)
DP_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
DP_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
DP_B5 = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0])
DP_B4 = np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])
DP_E = DP_B5 - DP_B4


def dp5_stages(f: StageField, X: np.ndarray, k_first: np.ndarray, t: float, h, fsal: bool = True, b5=None):
    """The Dormand-Prince 5(4) stages of one step from X at time t (``k_first`` = f at X): returns
    ``(K, X_new)`` with X_new the 5th-order solution; with ``fsal`` the 7th stage, f at X_new (the last row of A
    is the 5th-order weights), is appended to K for the error estimate. ``h`` may be an array broadcasting
    against X (one step per member: (m, 1, 1)); then ``t`` is not used by the field (per-member runs take
    autonomous fields). ``b5``: the 5th-order weights (default :data:`DP_B5`)."""
    K = [k_first]
    for stage in range(1, 6):
        K.append(f(X + h * sum(a * K[j] for j, a in enumerate(DP_A[stage]) if a != 0.0), t + DP_C[stage] * h))
    X_new = X + h * sum(b * K[j] for j, b in enumerate((DP_B5 if b5 is None else b5)[:6]) if b != 0.0)
    if fsal:
        K.append(f(X_new, t + h))
    return K, X_new


def dp5_error(K, h) -> np.ndarray:
    """The embedded error estimate h sum_j e_j K_j (5th minus 4th order) of a :func:`dp5_stages` step."""
    return h * sum(e * K[j] for j, e in enumerate(DP_E) if e != 0.0)


def dop853_tableau():
    """DOP853 coefficients: C, A (16 x 16, the last 3 rows for the dense output), B, E3, E5 (13 weights, the
    13th on f(y_new)), D."""
    from scipy.integrate._ivp import dop853_coefficients as c

    return c.C, c.A, c.B, c.E3, c.E5, c.D


def dop853_stages(f: StageField, X: np.ndarray, fX: np.ndarray, t: float, h: float, K: np.ndarray,
                  tableau=None) -> np.ndarray:
    """The 11 further stages of one DOP853 step from X (fX = f(X, t)) into K[:12]; returns the 8th-order
    solution at t + h. ``tableau``: :func:`dop853_tableau`'s result (default: that)."""
    C, A, B, _, _, _ = dop853_tableau() if tableau is None else tableau
    K[0] = fX
    for s in range(1, 12):
        K[s] = f(X + h * np.tensordot(A[s, :s], K[:s], axes=1), t + C[s] * h)
    return X + h * np.tensordot(B, K[:12], axes=1)


def dop853_error(K: np.ndarray, h: float, scale, norm: Callable[[np.ndarray], float], tableau=None) -> float:
    """DOP853's error h |e5|^2 / sqrt(|e5|^2 + 0.01 |e3|^2), |.| = ``norm`` of the estimates divided by ``scale``
    (K[12] must hold f at the new point)."""
    _, _, _, E3, E5, _ = dop853_tableau() if tableau is None else tableau
    size = K[0].size
    e5 = norm(np.tensordot(E5, K[:13], axes=1) / scale) if size else 0.0
    e3 = norm(np.tensordot(E3, K[:13], axes=1) / scale) if size else 0.0
    return 0.0 if e5 == 0.0 and e3 == 0.0 else h * e5 * e5 / math.sqrt(e5 * e5 + 0.01 * e3 * e3)


def dop853_dense(f: StageField, X, X_new, fX, f_new, K, t, h, A, C, D):
    """The 7th-order DOP853 interpolant on [t, t + h] (3 more stages); returns ``y(s)``."""
    for s in range(13, 16):
        K[s] = f(X + h * np.tensordot(A[s, :s], K[:s], axes=1), t + C[s] * h)
    delta = X_new - X
    F = [delta, h * fX - delta, 2.0 * delta - h * (f_new + fX)]
    F += [h * np.tensordot(D[k], K, axes=1) for k in range(D.shape[0])]

    def y(target: float) -> np.ndarray:
        x = (target - t) / h
        out = np.zeros_like(X)
        for i, Fi in enumerate(reversed(F)):
            out += Fi
            out *= x if i % 2 == 0 else 1.0 - x
        return out + X

    return y


@dataclass(frozen=True)
class Embedded:
    """An embedded pair for the adaptive loop.

    ``evaluations``: field evaluations of one attempt; ``lands_on_saves``: steps are shortened to end on every
    save time (``dp5``) instead of interpolating outputs (``dop853``); ``retracts_each_step``: the accepted
    state goes through the space's retraction (``dp5``) or only the outputs do (``dop853``: the exact orthogonal
    projection in the field keeps every |x_i| constant along the extended flow, and FSAL survives).
    """

    name: str
    order: int
    evaluations: int
    lands_on_saves: bool
    retracts_each_step: bool


DP5 = Embedded("dp5", 5, 6, lands_on_saves=True, retracts_each_step=True)
DOP853 = Embedded("dop853", 8, 12, lands_on_saves=False, retracts_each_step=False)
EMBEDDED = {"dp5": DP5, "dop853": DOP853}
