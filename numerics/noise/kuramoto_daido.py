"""The noisy mean-field Kuramoto-Daido model (Mun and Rosenzweig, arXiv 2602.14954): W(u) = cos u + m cos 2u.

On the circle with the uniform probability measure the kernel's Fourier couplings are g_1 = 1/2, g_2 = m/2 and
g_l = 0 for l >= 3; with attnflow's conversion K = 1/(2D) (theory.noise_global, noise.global-conversion) the
uniform state is linearly unstable in mode k iff D < g_k, so

    D_# = max(1/2, m/2),    K_# = 1/(2 D_#) = min(1, 1/m)      (their K_#).

The transition noise D_c (their K_c = 1/(2 D_c)) is the largest D at which some density has a lower free
energy than the uniform one. Every stationary state has phi = (m_1 cos u + m m_2 cos 2u)/D, so the problem is
the zonal one of :mod:`numerics.noise.branches` with couplings (0, 1/2, m/2, 0, ...): exact for any truncation
L >= 2 (the moments above degree 2 do not feed back). Two kinds of ordered states compete:

- **polar** states (m_1 != 0): the mode-1 branch, subcritical for m > 1/2 (the quartic Landau coefficient of
  mode 1 has the sign of 1/2 - q with q = g_2/g_1 = m);
- **nematic** states (m_1 = 0, pi-periodic): the mode-2 branch, a supercritical pitchfork (its own q is g_4/g_2
  = 0), bifurcating at D = m/2.

:func:`polar_first_order` follows the polar minimum of Delta F (BFGS, :func:`numerics.noise.free_energy.minimise`;
no stationary equation) upwards in D from deep in the ordered phase and locates Delta F = 0 on it by Brent's
method. If that noise lies above D_# the transition is first order there (K_c < K_#, the order parameters jump);
otherwise the global minimiser leaves the uniform state continuously at D_# (K_c = K_#), polar for m < 1 and
nematic for m > 1.

:func:`grid_minimum` is an independent check that needs no zonal symmetry: it minimises Delta F over
phi = a cos u + b cos 2u + c sin 2u (every stationary state up to a rotation) on a uniform grid of the circle
(the trapezoid rule, spectrally accurate for periodic integrands), from several starts.

Verified by: noise.kuramoto-daido.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize

from numerics.common.errors import require_real
from numerics.noise.branches import ZonalProblem
from numerics.noise.free_energy import minimise

#: truncation of the zonal problem (exact for L >= 2; 8 keeps the moments m_3..m_8 of the states for plots)
L_KD = 8
#: quadrature nodes of the zonal problem (the circle uses twice as many angles): resolves e^{phi} for D >= 0.1
NODES = 128
#: a polar first-order noise within this (relative) of D_# is not resolved from it
RESOLUTION = 1e-9
#: |m_1| below this: the polar minimum has merged with a state without polar order
POLAR_FLOOR = 1e-6


def kd_couplings(m: float, L: int = L_KD) -> np.ndarray:
    """g_0..g_L of W(u) = cos u + m cos 2u w.r.t. the uniform probability measure: g_1 = 1/2, g_2 = m/2."""
    g = np.zeros(L + 1)
    g[1], g[2] = 0.5, m / 2
    return g


def kd_problem(m: float, nodes: int = NODES) -> ZonalProblem:
    """The zonal problem of the Kuramoto-Daido kernel (every degree 1..L_KD active)."""
    m = require_real(m, "m", minimum=0.0, maximum=100.0)
    return ZonalProblem.build(2, kd_couplings(m), nodes=nodes)


def linear_threshold(m: float) -> tuple[float, int]:
    """(D_#, the first unstable mode) = (max_k g_k, its k): max(1/2, m/2), mode 1 if m <= 1 (both at m = 1)."""
    g = kd_couplings(m)
    k = 1 if g[1] >= g[2] else 2
    return float(g[k]), k


@dataclass(frozen=True)
class PolarCrossing:
    """Where the polar minimum's Delta F crosses 0 (None if it loses its polar order first), its order
    parameters r_1 = E cos u, r_2 = E cos 2u there, and how many minimisations it took."""

    D: float | None
    r1: float
    r2: float
    evaluations: int


def polar_first_order(m: float, *, problem: ZonalProblem | None = None, points: int = 40) -> PolarCrossing:
    """Follow the polar local minimum of Delta F from D = 0.8 D_# upwards (warm-started BFGS, steps of
    0.5 D_#/``points``, halved whenever the next minimum has lost its polar order: the polar minimum may end at a
    fold just above its Delta F = 0 point) and locate Delta F = 0 on it by Brent's method (tolerance 1e-14 in D).
    None if the polar minimum loses its order before Delta F reaches 0, or does not exist at 0.8 D_#."""
    problem = kd_problem(m) if problem is None else problem
    Ds = linear_threshold(m)[0]
    c = np.zeros(len(problem.active))
    c[0], c[1] = 3.0, 2.0                     # a polar start with some nematic order (both aligned)
    prev = minimise(problem, 0.8 * Ds, c)
    count, h = 1, 0.5 * Ds / points
    if abs(prev.moments[0]) < POLAR_FLOOR:
        return PolarCrossing(None, 0.0, float(prev.moments[1]), count)
    while prev.D < 1.3 * Ds:
        mn = minimise(problem, prev.D + h, prev.coefficients)
        count += 1
        if abs(mn.moments[0]) < POLAR_FLOOR:
            h /= 2
            if h < 1e-12 * Ds:
                break
            continue
        if mn.free_energy > 0:
            cache = [prev]

            def gap(x):
                q = minimise(problem, x, cache[-1].coefficients)
                cache.append(q)
                return q.free_energy

            root = brentq(gap, prev.D, mn.D, xtol=1e-14, rtol=1e-15)
            last = minimise(problem, root, cache[-1].coefficients)
            return PolarCrossing(float(root), abs(float(last.moments[0])), float(last.moments[1]),
                                 count + len(cache))
        prev = mn
    return PolarCrossing(None, abs(float(prev.moments[0])), float(prev.moments[1]), count)


@dataclass(frozen=True)
class KuramotoDaidoTransition:
    """D_#, K_#, the transition noise D_c and K_c = 1/(2 D_c), its type, the ordered state at the transition
    (which kind; r_1, r_2 at the jump, 0 for a continuous transition), and the polar crossing."""

    m: float
    threshold: float
    unstable_mode: int
    noise: float
    kind: str
    ordered: str
    r1: float
    r2: float
    polar: PolarCrossing

    @property
    def coupling_threshold(self) -> float:
        return 1.0 / (2.0 * self.threshold)

    @property
    def coupling(self) -> float:
        return 1.0 / (2.0 * self.noise)


def kuramoto_daido_transition(m: float) -> KuramotoDaidoTransition:
    """K_#, K_c and the type for W = cos u + m cos 2u (see the module docstring)."""
    m = require_real(m, "m", minimum=0.0, maximum=100.0)
    Ds, mode = linear_threshold(m)
    polar = polar_first_order(m)
    if polar.D is not None and polar.D > Ds * (1 + RESOLUTION):
        return KuramotoDaidoTransition(m, Ds, mode, polar.D, "discontinuous", "polar", polar.r1, polar.r2, polar)
    return KuramotoDaidoTransition(m, Ds, mode, Ds, "continuous", "polar" if mode == 1 else "nematic", 0.0, 0.0,
                                   polar)


def polar_nematic_crossover(lo: float = 1.0, hi: float = 2.0) -> float:
    """The m at which the polar crossing meets D_# = m/2 (first order below, continuous above; m > 1), by Brent's
    method on D_polar(m) - m/2 (tolerance 1e-12)."""
    def f(m):
        p = polar_first_order(m)
        return (p.D if p.D is not None else 0.0) - m / 2

    return float(brentq(f, lo, hi, xtol=1e-12, rtol=1e-14))


# -- the independent check without zonal symmetry ------------------------------------------------------------
#: angles of the grid (the trapezoid rule on the circle is exact for trigonometric polynomials below this degree
#: and spectrally accurate for e^phi at the moderate concentrations of the transition)
GRID = 512


def grid_free_energy(coefficients: np.ndarray, D: float, m: float) -> tuple[float, np.ndarray, np.ndarray]:
    """(Delta F, its gradient, (E cos u, E sin u, E cos 2u, E sin 2u)) of rho = e^phi/Z with phi = a cos u +
    b cos 2u + c sin 2u on a uniform grid of GRID angles:

        Delta F = D E_rho[log(rho/rho_0)] - (1/2)(|E e^{iu}|^2 + m |E e^{2iu}|^2),

    the interaction (1/2) E_{rho x rho}[W(u - v)] with cos k(u - v) = cos ku cos kv + sin ku sin kv. Gradient:
    dF/dc_j = Cov_rho(B_j, D phi - psi), psi = W * rho the mean-field potential, B_j the three basis functions."""
    u = 2 * np.pi * np.arange(GRID) / GRID
    basis = np.stack([np.cos(u), np.cos(2 * u), np.sin(2 * u)])
    phi = np.asarray(coefficients, float) @ basis
    top = phi.max()
    e = np.exp(phi - top)
    Z = e.mean()
    rho = e / Z
    waves = np.stack([np.cos(u), np.sin(u), np.cos(2 * u), np.sin(2 * u)])
    r = waves @ rho / GRID
    entropy = float(np.mean(rho * (phi - top - math.log(Z))))
    weights = np.array([1.0, 1.0, m, m])
    dF = D * entropy - 0.5 * float(weights @ (r * r))
    psi = (weights * r) @ waves
    f = D * phi - psi
    grad = (basis * rho) @ f / GRID - (basis @ rho / GRID) * float(rho @ f / GRID)
    return dF, grad, r


#: starts of :func:`grid_minimum`: polar, nematic, aligned and crossed mixtures, a rotated nematic axis
GRID_STARTS = tuple(np.array(s, float) for s in
                    [(1, 0, 0), (5, 0, 0), (12, 0, 0), (0, 1, 0), (0, 5, 0), (0, 12, 0), (3, 3, 0), (6, 4, 0),
                     (3, -3, 0), (6, -4, 0), (2, 0, 3), (5, 1, -4)])


def grid_minimum(m: float, D: float) -> tuple[float, np.ndarray]:
    """The lowest Delta F reached by BFGS from :data:`GRID_STARTS` and its order parameters
    (|E e^{iu}|, |E e^{2iu}|) (rotation invariant)."""
    best, moments = math.inf, np.zeros(4)
    for s in GRID_STARTS:
        res = minimize(lambda c: grid_free_energy(c, D, m)[:2], s, jac=True, method="BFGS",
                       options={"gtol": 1e-13, "maxiter": 2000})
        if res.fun < best:
            best, moments = float(res.fun), grid_free_energy(res.x, D, m)[2]
    return best, np.array([math.hypot(moments[0], moments[1]), math.hypot(moments[2], moments[3])])
