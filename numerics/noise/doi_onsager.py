"""The Doi-Onsager model on the circle (Mun and Rosenzweig, arXiv 2604.16288): K_# = K_c = 3 pi/4.

Their interaction on T = R/Z is W(theta) = -|sin(2 pi theta)| with coupling K; on S^1 in attnflow's
conventions (theory.noise_global) it is the pair kernel W(s) = -sqrt(1 - s^2) of s = <x, y> = cos(u) with noise
D = 1/(2K). Its Fourier coefficients g_k = (1/2pi) int -|sin u| cos(k u) du vanish for odd k (every stationary
state is pi-periodic: nematic order) and are 2/(pi (k^2 - 1)) for even k, largest at k = 2: the uniform state
is linearly stable iff D > D_# = g_2 = 2/(3 pi), K_# = 3 pi/4. The branch from k = 2 is the circle problem of
the couplings g'_j = g_{2j} (:meth:`numerics.noise.branches.ZonalProblem.decimated`); its Landau coefficient
is positive (q = g_4/g_2 = 1/5 < 1/2): continuous, so K_c = K_#.

Here the couplings are computed by quadrature of the kernel (Gauss-Legendre on [0, pi] and on [pi, 2 pi]: the
kinks of |sin| sit at the ends, so each piece is analytic), not from the closed form, which theory.noise_global
derives with sympy.

Verified by: noise.global-doi-onsager.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from numerics.common.errors import require_int


def doi_onsager_kernel(s):
    """W(s) = -sqrt(1 - s^2), s = <x, y> on S^1."""
    return -np.sqrt(np.maximum(0.0, 1.0 - np.asarray(s, float) ** 2))


@lru_cache(maxsize=8)
def doi_onsager_couplings(L: int) -> np.ndarray:
    """g_0..g_L, g_k = (1/2pi) int_0^{2pi} W(cos u) cos(k u) du by Gauss-Legendre quadrature with 2 L + 64
    nodes on each of [0, pi] and [pi, 2 pi] (the integrand is analytic on each; exact to round-off)."""
    L = require_int(L, "L", minimum=2, maximum=4096)
    x, w = np.polynomial.legendre.leggauss(2 * L + 64)
    out = np.zeros(L + 1)
    k = np.arange(L + 1)[:, None]
    for a in (0.0, math.pi):
        u = a + (x + 1) * math.pi / 2
        out += (np.cos(k * u) * doi_onsager_kernel(np.cos(u))[None, :]) @ w * (math.pi / 2)
    return out / (2 * math.pi)


def doi_onsager_problem(L: int = 32):
    """The pi-periodic (2-fold) states: the circle problem with couplings g'_j = g_{2j}, j = 0..L."""
    from numerics.noise.branches import ZonalProblem

    return ZonalProblem.build(2, doi_onsager_couplings(2 * L)).decimated(2, L)
