"""Causal attention and Renyi's parking problem (Karagodin, Polyanskiy, Rigollet, arXiv 2411.04990, section 5).

Causal ``sa`` on S^1 (Q = K = V = I): token k attends to tokens 1..k only. A token far (angle >= delta) from
every earlier token barely moves (a *strong Renyi center*); the *Renyi centers* are chosen greedily in causal
order: x_k is one iff its angle to every earlier Renyi center is >= delta. For iid uniform tokens and n -> oo
the centers are exactly Renyi's random sequential parking of cars of length delta on a circle of circumference
2 pi (a car is the arc of length delta centred at the token; two cars overlap iff the centres are closer than
delta), so their expected number is

    N(L) = 1 + M(L - 1),  L = 2 pi / delta,

with M(x) the expected number of unit cars parked on an interval of length x:
M(x) = 0 for x < 1 and M(x) = 1 + (2 / (x - 1)) int_0^{x-1} M(y) dy (Renyi 1958), M(x) ~ c_R x + c_R - 1 with
Renyi's constant c_R = int_0^oo exp(-2 int_0^x (1 - e^{-u})/u du) dx = 0.7475979202534...

Here: c_R by mpmath quadrature; M by a trapezoid solution of the delay equation; the same expectations by
Monte Carlo of the random sequential parking; Renyi centers of actual tokens; cluster counts of causal runs.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError

#: Renyi's parking constant to 16 digits (OEIS A050996), the reference for the quadrature
RENYI_CONSTANT = 0.7475979202534114


def renyi_constant(dps: int = 30) -> float:
    """c_R = int_0^oo exp(-2 Ein(x)) dx, Ein(x) = int_0^x (1 - e^{-u})/u du = gamma + log x + E_1(x) (mpmath)."""
    import mpmath

    with mpmath.workdps(dps):
        def ein(x):
            return mpmath.euler + mpmath.log(x) + mpmath.e1(x) if x > 0.5 else \
                -mpmath.nsum(lambda k: (-x) ** k / (k * mpmath.factorial(k)), [1, mpmath.inf])

        return float(mpmath.quad(lambda x: mpmath.exp(-2 * ein(x)), [0, 0.5, 2, 10, mpmath.inf]))


def parking_mean(x_max: float, h: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """(x, M(x)) on the grid x = 0, h, ..., x_max: the delay equation (x - 1) M(x) = (x - 1) + 2 int_0^{x-1} M,
    marched with the trapezoid rule (second order in h; M jumps from 0 to 1 at x = 1, a grid point)."""
    if not (h > 0 and 1.0 / h == round(1.0 / h)) or x_max < 1 or x_max / h > 1e7:
        raise InputError(f"parking_mean needs 1/h an integer, x_max >= 1 and x_max/h <= 1e7; got h={h}, x_max={x_max}")
    N = int(round(x_max / h))
    one = int(round(1.0 / h))
    x = np.arange(N + 1) * h
    M = np.zeros(N + 1)
    S = np.zeros(N + 1)  # S[k] = int_0^{x_k} M (trapezoid)
    for k in range(N + 1):
        if k >= one:
            j = k - one
            M[k] = 1.0 if j == 0 else 1.0 + 2.0 * S[j] / x[j]
        if k > 0:
            # M = 0 on [0, 1) and jumps to 1 at x = 1 (a grid point): the cell [1 - h, 1] adds nothing
            S[k] = S[k - 1] + (0.0 if k == one else 0.5 * h * (M[k - 1] + M[k]))
    return x, M


def circle_parking_mean(L: float, h: float = 1e-3) -> float:
    """Expected number of cars of length 1 parked at random on a circle of circumference L: 1 + M(L - 1)."""
    if L < 1:
        raise InputError(f"the circle must be at least one car long; got L = {L}")
    x, M = parking_mean(max(L - 1.0, 1.0) + 2 * h, h)
    return 1.0 + float(np.interp(L - 1.0, x, M)) if L - 1.0 >= 1.0 else 1.0


def parking_sample(L: float, rng: np.random.Generator) -> int:
    """One random sequential parking on a circle of circumference L (cars of length 1): the number of cars.
    The first car is anywhere; then each gap of length g >= 1 receives a car at a uniform position, splitting it
    into two gaps (equivalent to uniform proposals in the free space, Renyi's process)."""
    count = 1
    gaps = [L - 1.0]
    while gaps:
        g = gaps.pop()
        if g < 1.0:
            continue
        u = rng.uniform(0.0, g - 1.0)
        count += 1
        gaps += [u, g - 1.0 - u]
    return count


def renyi_centers(angles, delta: float, strong: bool = False) -> np.ndarray:
    """Indices of the Renyi centers of tokens at ``angles`` (causal order): token k is a center iff its angle to
    every earlier center (``strong``: every earlier token) is >= delta."""
    theta = np.asarray(angles, float)
    centers: list[int] = []
    for k, t in enumerate(theta):
        ref = theta[:k] if strong else theta[centers]
        d = np.abs(np.angle(np.exp(1j * (ref - t)))) if ref.size else np.array([])
        if d.size == 0 or d.min() >= delta:
            centers.append(k)
    return np.array(centers, int)


def circle_cluster_count(X: np.ndarray, gap: float) -> int:
    """Clusters of points of S^1 (rows of X): the number of angular gaps larger than ``gap`` (at least 1)."""
    th = np.sort(np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * math.pi))
    g = np.diff(np.r_[th, th[0] + 2 * math.pi])
    return max(1, int(np.sum(g > gap)))
