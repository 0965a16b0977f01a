r"""The continuous-time ``sa`` flow from a simplex start with :math:`\beta = \gamma \log n`: the same critical
:math:`\gamma`.

From equal inner products :math:`\rho` the configuration stays equiangular and
:math:`s(t) = \langle x_i, x_j\rangle` solves the equiangular ODE of theory.reductions (docs/literature.md claim
6), here for ``sa`` with the exponential kernel:

.. math::

    \frac{ds}{dt} = F_n(s) = \frac{2 (1 - s) (1 + (n - 1) s)}{n - 1 + e^{\beta (1 - s)}}, \qquad
    \beta = \gamma \log n,

:math:`O(1)` per step for any :math:`n` (:func:`flow_speed`, overflow-safe in log space). As
:math:`n \to \infty` the initial speed :math:`F_n(\rho)` tends to :math:`2 \rho (1 - \rho)`,
:math:`\rho (1 - \rho)` and :math:`0` below, at and above :math:`\gamma_c = 1/(1 - \rho)`
(theory.longcontext.flow_speed_limits): collapse in a time of order one below, a frozen start above (times of
order :math:`n^{\gamma (1 - \rho) - 1}`). :func:`reduced_trajectory` integrates the ODE;
:func:`particle_trajectory` runs the :math:`O(n^2 d)` particle system through
``simulate(Model("sa", beta_scaling="log", gamma=...))`` from explicit simplex tokens, the path the reduction is
checked against.

Verified by: longcontext.flow-transition.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from numerics.common.errors import InputError, require_int, require_real
from numerics.longcontext.simplex import _rho, simplex_tokens

#: tolerances of the reduced ODE (DOP853); far below the particle integrator's error
RTOL, ATOL = 1e-12, 1e-14


def flow_speed(s, n, gamma) -> np.ndarray:
    r""":math:`F_n(s)` of the ``sa`` equiangular ODE at :math:`\beta = \gamma \log n` (vectorised; ``n`` may be a
    float up to :math:`\sim 10^{300}`)."""
    s = np.asarray(s, dtype=float)
    n = float(n)
    log_den = np.logaddexp(math.log(n - 1.0), gamma * math.log(n) * (1.0 - s))
    return 2.0 * (1.0 - s) * (1.0 / n + (1.0 - 1.0 / n) * s) * np.exp(math.log(n) - log_den)


def reduced_trajectory(n, gamma: float, rho: float, times) -> np.ndarray:
    r""":math:`s(t)` at the given increasing ``times`` (from :math:`t = 0`, :math:`s(0) = \rho`) by DOP853 on the
    reduced ODE."""
    rho = _rho(rho)
    gamma = require_real(gamma, "gamma", minimum=0.0, strict_minimum=True)
    times = np.asarray(times, dtype=float)
    sol = integrate.solve_ivp(lambda t, y: flow_speed(y, n, gamma), (0.0, float(times[-1])), [rho],
                              method="DOP853", t_eval=times, rtol=RTOL, atol=ATOL)
    if not sol.success:
        raise InputError(f"the reduced ODE failed: {sol.message}")
    return sol.y[0]


def collapse_time(n, gamma: float, rho: float, target: float | None = None) -> float:
    r"""The time for :math:`s` to rise from :math:`\rho` to ``target`` (default :math:`(1 + \rho)/2`):
    :math:`\int ds / F_n(s)` by quadrature."""
    rho = _rho(rho)
    target = (1.0 + rho) / 2.0 if target is None else require_real(target, "target", minimum=rho, maximum=1.0)
    val, _ = integrate.quad(lambda s: 1.0 / float(flow_speed(s, n, gamma)), rho, target, limit=200)
    return val


def particle_trajectory(n: int, gamma: float, rho: float, times, dt: float = 0.01, seed: int = 0) -> dict:
    r"""The particle system from :math:`n` explicit simplex tokens in :math:`\mathbb{R}^{n+1}` (randomly rotated,
    ``seed``) under ``Model("sa", beta_scaling="log", gamma=gamma)``, RK4 with step ``dt`` and the direct field
    (pinned): the mean and the spread of the pairwise inner products at ``times`` (saved exactly there)."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate

    n = require_int(n, "n", minimum=2)
    times = np.asarray(times, dtype=float)
    X0 = simplex_tokens(n, rho, d=n + 1, rng=np.random.default_rng(seed))
    model = Model("sa", beta_scaling="log", gamma=gamma)
    traj = simulate(model, X0, float(times[-1]), solver=Solver("rk4", dt=dt, backend="direct"),
                    save=SaveAt(times=times))
    off = ~np.eye(n, dtype=bool)
    G = np.einsum("tid,tjd->tij", traj.X, traj.X)[:, off]
    at = np.searchsorted(traj.times, times - 1e-12)
    return {"times": traj.times[at], "mean": G.mean(axis=1)[at], "spread": np.ptp(G, axis=1)[at],
            "beta": traj.meta["beta"], "meta": traj.meta}
