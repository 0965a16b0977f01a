"""The free energy of zonal densities and its direct minimisation (the second route to the first-order noise).

For u = rho/rho_0 = e^phi / Z with phi = sum_{l active} c_l P_l (any coefficients, not a stationary state),

    Delta F(c) = F[rho] - F[rho_0] = D E_u[u log u] - (1/2) sum_l g_l N_l m_l^2,   m_l = E_u[u P_l],

evaluated by the zonal quadrature (theory.noise_global derives it; E_u[u log u] = sum c_l m_l - log Z). Its
gradient is dF/dc_i = sum_j Cov_rho(P_i, P_j) (D c_j - g_j N_j m_j), zero exactly at the stationary states of
:mod:`numerics.noise.branches` (D c_j = g_j N_j m_j). :func:`minimise` runs BFGS on c from a given start: it
finds a local minimum of F without the self-consistency equation or the continuation, so the noise where its
minimum has Delta F = 0 (:func:`first_order_by_minimisation`) is an independent measurement of the
first-order noise.

Verified by: noise.global-first-order, noise.global-doi-onsager.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize

from numerics.common.errors import InputError
from numerics.noise.branches import ZonalProblem, harmonic_dimensions

#: gradient tolerance of the BFGS minimisation (the gradient is O(D) at O(1) coefficients)
GTOL = 1e-11


def density_free_energy(problem: ZonalProblem, D: float, c: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(Delta F, its gradient in the active c, the moments m_1..m_L) of u = e^phi/Z, phi = sum c_l P_l."""
    B = problem.basis
    idx = problem.index
    phi = B.P[:, 1:][:, idx] @ c
    top = phi.max()
    e = B.w * np.exp(phi - top)
    Z = float(e.sum())
    u = e / Z                                               # quadrature weights of rho
    P = B.P[:, 1:]
    m = u @ P
    uf = u * (phi - top - math.log(Z))                      # u log u, up to the weights (log u = phi - log Z)
    entropy = float(uf.sum())
    gN = problem.g[1:] * harmonic_dimensions(problem.d, problem.L)
    dF = D * entropy - 0.5 * float(np.sum(gN * m * m))
    Pa = P[:, idx]
    C = (Pa * u[:, None]).T @ P - np.outer(m[idx], m)       # Cov(P_i, P_j), i active, j all
    grad = C[:, idx] @ (D * c) - C @ (gN * m)
    return dF, grad, m


@dataclass(frozen=True)
class Minimum:
    D: float
    free_energy: float
    moments: np.ndarray
    coefficients: np.ndarray
    gradient: float
    iterations: int


def minimise(problem: ZonalProblem, D: float, c0) -> Minimum:
    """A local minimum of Delta F over phi = sum c_l P_l (active degrees) by BFGS from ``c0``."""
    c0 = np.asarray(c0, float)
    if c0.shape != (len(problem.active),):
        raise InputError(f"c0 must have one entry per active degree ({len(problem.active)}), got {c0.shape}")
    res = minimize(lambda c: density_free_energy(problem, D, c)[:2], c0, jac=True, method="BFGS",
                   options={"gtol": GTOL * max(1.0, D), "maxiter": 5000})
    dF, grad, m = density_free_energy(problem, D, res.x)
    return Minimum(D, dF, m, res.x, float(np.max(np.abs(grad))), int(res.nit))


def clustered_start(problem: ZonalProblem, mode: int, kappa: float) -> np.ndarray:
    """phi = kappa P_mode (a von Mises-Fisher bump for mode 1): a start inside the clustered basin."""
    c = np.zeros(len(problem.active))
    c[list(problem.active).index(mode)] = kappa
    return c


def first_order_by_minimisation(problem: ZonalProblem, mode: int, D_lo: float, D_hi: float,
                                kappa: float) -> tuple[float, dict]:
    """The D in [D_lo, D_hi] where the local minimum reached from the clustered start phi = kappa P_mode has
    Delta F = 0 (Brent's root finder on D -> Delta F of :func:`minimise`); the bracket must hold a sign change
    (the clustered minimum below the uniform state at D_lo, above it at D_hi)."""
    c0 = clustered_start(problem, mode, kappa)
    lo, hi = minimise(problem, D_lo, c0), minimise(problem, D_hi, c0)
    if not (lo.free_energy < 0 < hi.free_energy):
        raise InputError(f"no sign change of the minimised free energy on [{D_lo:g}, {D_hi:g}]: "
                         f"{lo.free_energy:.3g}, {hi.free_energy:.3g}")
    calls = [hi]

    def f(D):
        # warm start from the last minimum (the clustered basin persists across the bracket; BFGS still
        # minimises from there: no stationarity equation is used)
        mn = minimise(problem, D, calls[-1].coefficients)
        calls.append(mn)
        return mn.free_energy

    root = brentq(f, D_lo, D_hi, xtol=1e-15 * D_hi, rtol=1e-15)
    last = calls[-1]
    return root, {"bracket": [D_lo, D_hi], "evaluations": len(calls) + 1, "kappa": kappa,
                  "max_gradient": max(c.gradient for c in calls), "amplitude": float(last.moments[mode - 1])}


def sphere_free_energy(coefficients: np.ndarray, beta: float, D: float, L: int, n_lat: int | None = None) -> float:
    """Delta F of a (non-zonal) density on S^2 given by its packed real-harmonic coefficients
    (:mod:`numerics.noise.sphere`: u = rho/rho_uniform = sum c_lm Y_lm, E[Y_lm^2] = 1): D E[u log u] by the
    Gauss-Legendre x longitude grid (finer than the solver's, ``n_lat`` latitudes, default 2 L + 8) minus
    (1/2) sum_{l >= 1} g_l sum_m c_lm^2 (Funk-Hecke). A density that is negative somewhere is refused."""
    from numerics.noise.sphere import SphereGrid, degrees_of, unpack
    from numerics.noise.zonal import couplings

    G = SphereGrid.build(L, n_lat=2 * L + 8 if n_lat is None else n_lat, n_lon=4 * L + 16)
    a, b = unpack(np.asarray(coefficients, float), L)
    u = G.synthesis(a, b)
    if np.min(u) <= 0:
        raise InputError(f"the density is not positive on the grid (min {np.min(u):.3g}): truncation too coarse")
    entropy = float(G.w @ (u * np.log(u)).mean(axis=1))
    g = couplings(3, beta, L)
    deg = degrees_of(L)
    c = np.asarray(coefficients, float)
    return D * entropy - 0.5 * float(np.sum(g[deg[deg >= 1]] * c[deg >= 1] ** 2))
