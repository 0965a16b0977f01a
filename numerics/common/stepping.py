"""Classical RK4 on a plain state to a list of save times (small dense systems: rings, weighted angles, R^d tokens).

The areas' reduced systems (the radial mean field of the low-temperature regime, the weighted angles of the
quantitative rates, the consensus flow in R^d) integrate an autonomous ODE y' = f(y) on a flat state and keep an
observable at given times. Each interval between save times is split into equal steps no longer than ``dt``, so
every save time is hit exactly. The sphere flows use :mod:`numerics.core.integrators` instead (projection,
adaptivity, energies).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np


def rk4_at_times(f: Callable[[np.ndarray], np.ndarray], y: np.ndarray, times: Sequence[float],
                 dt: float) -> Iterator[tuple[float, np.ndarray]]:
    """Yield ``(t, y(t))`` for each save time after the first (``times[0]`` is the time of ``y``).

    Parameters
    ----------
    f : callable
        The right-hand side of the autonomous ODE y' = f(y).
    y : ndarray
        The state at ``times[0]``.
    times : sequence of float
        Increasing save times.
    dt : float
        The largest step; each interval gets ceil(length / dt) equal steps.
    """
    t = float(times[0])
    for target in times[1:]:
        m = max(1, math.ceil((target - t) / dt - 1e-12))
        h = (target - t) / m
        for _ in range(m):
            k1 = f(y)
            k2 = f(y + 0.5 * h * k1)
            k3 = f(y + 0.5 * h * k2)
            k4 = f(y + h * k3)
            y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = float(target)
        yield t, y
