r"""Zonal (axially symmetric) densities on :math:`\mathbb{S}^{d-1}`: quadrature, Gegenbauer basis, and the
Fokker-Planck solver.

A zonal density depends on :math:`t = \langle x, e\rangle` only. Under the uniform probability measure of
:math:`\mathbb{S}^{d-1}`, :math:`t` has the law :math:`c_d (1 - t^2)^{(d-3)/2}\, dt` (:math:`d \ge 3`; on the
circle :math:`t = \cos \theta` with :math:`\theta` uniform). With the normalised zonal profiles
:math:`P_l = C_l^{(d-2)/2} / C_l^{(d-2)/2}(1)` (:math:`T_l` on the circle) every zonal function is
:math:`\sum_l f_l P_l(t)`, and the self-attention convolution and the Laplacian are diagonal (Funk-Hecke;
theory.meanfield):

.. math::

    W * P_l(\langle \cdot, e\rangle) = \frac{a_l(\beta)}{\beta} P_l, \qquad \Delta_S P_l = -l (l + d - 2) P_l.

The Fokker-Planck equation :math:`\partial_t \rho = -\operatorname{div}(\rho X[\rho]) + D \Delta \rho` for zonal
:math:`\rho` reads, with :math:`w(t) = (1 - t^2)^{(d-3)/2}`,

.. math::

    \partial_t \rho = w^{-1} \frac{d}{dt} \Big[ w (1 - t^2) \big(D \rho' - \rho \Phi' / Z\big) \Big], \qquad
    \Phi = W * \rho,

:math:`Z = 1` (``usa``) or :math:`\beta \Phi` (``sa``). :class:`ZonalFokkerPlanck` is its Galerkin discretisation
in :math:`P_0, \dots, P_L`: the coefficient equations are
:math:`(P_l, \partial_t \rho)_w = -(P_l', (1 - t^2)(D \rho' - \rho \Phi'/Z))_w`, the integrals by
Gauss-Gegenbauer quadrature with :math:`2L + 2` nodes (exact for the ``usa`` products of degree :math:`\le 3L`).
The diffusion is exactly diagonal, mass (:math:`l = 0`) is conserved exactly. This covers the first unstable mode
(degree 1) and the axially symmetric stationary branch; non-zonal perturbations are not represented.

Verified by: noise.threshold (growth rates :math:`\lambda_l - D l(l+d-2)` in :math:`d = 3`),
tests/numerics/test_noise_zonal.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import eval_chebyt, eval_gegenbauer, gamma, ive, roots_gegenbauer

from numerics.common.errors import InputError, require_choice, require_int, require_real


def harmonic_dimension(d: int, l: int) -> int:
    """N_l = dim of degree-l spherical harmonics on S^{d-1} (2 on the circle for l >= 1)."""
    if l == 0:
        return 1
    return math.comb(l + d - 1, d - 1) - (math.comb(l + d - 3, d - 1) if l >= 2 else 0)


def couplings(d: int, beta: float, L: int) -> np.ndarray:
    """g_l = rho_0 a_l(beta)/beta for l = 0..L (g_0 unused): Gamma(d/2)(2/beta)^{d/2-1} I_{l+d/2-1}(beta)/beta.

    Overflow safe through ``ive`` for |beta| >= 1; below, the power series of I_nu in log space,
    g_l = (1/2) (b/2)^{l-1} sum_k Gamma(d/2) (b^2/4)^k / (k! Gamma(l + d/2 + k)), which keeps tiny |beta|
    (b^{-d/2} overflows there) and large d finite; beta = 0 is the limit g_1 = 1/d, g_l = 0 for l >= 2;
    beta < 0 uses a_l(-b) = (-1)^l a_l(b). The critical noise is D_c = g_1 (theory.noise.critical_noise).
    """
    l = np.arange(L + 1, dtype=float)
    if beta == 0.0:
        g = np.zeros(L + 1)
        if L >= 1:
            g[1] = 1.0 / d
        return g
    b = abs(beta)
    if b < SERIES_MAX_BETA:
        g = _couplings_series(d, b, l)
    else:
        nu = l + d / 2 - 1
        with np.errstate(all="ignore"):  # large d: Gamma(d/2) 2^{d/2} overflows and ive underflows
            g = gamma(d / 2) * 2 ** (d / 2 - 1) * b ** (-d / 2) * ive(nu, b) * math.exp(b)
        unusable = ~(np.isfinite(g) & (g > 0))
        if np.any(unusable):
            g[unusable] = _couplings_series(d, b, l[unusable])
    return g * np.sign(beta) ** (l + 1)


#: below this |beta| :func:`couplings` sums the power series of I_nu (also where the Bessel form is not finite)
SERIES_MAX_BETA = 1.0


def _couplings_series(d: int, b: float, l: np.ndarray) -> np.ndarray:
    """g_l from the series of I_{l + d/2 - 1}(b), every factor in log space (no overflow of b^{-d/2} or
    Gamma(l + d/2) for tiny b or large d); positive terms, so no cancellation. Terms: 30 for b < 1 (the k-th is
    below (1/4)^k / k!, 1e-50 at k = 30), else 60 + 2b (from k = b on each term is at most a quarter of the one
    before, so the 60 after it are below 4^-60 of the largest)."""
    from scipy.special import gammaln, logsumexp

    terms = 30 if b < 1.0 else 60 + 2 * math.ceil(b)
    k = np.arange(terms, dtype=float)[:, None]
    log_terms = gammaln(d / 2) + 2 * k * math.log(b / 2) - gammaln(k + 1) - gammaln(l[None, :] + d / 2 + k)
    with np.errstate(over="ignore"):  # g_0 = 1/b overflows only where 1/b does (b below 1/DBL_MAX)
        return np.exp(-math.log(2.0) + (l - 1) * math.log(b / 2) + logsumexp(log_terms, axis=0))


@dataclass(frozen=True)
class ZonalBasis:
    """Quadrature nodes t_j, probability weights w_j (sum 1) and P_l(t_j), P_l'(t_j) for l = 0..L."""

    d: int
    L: int
    t: np.ndarray
    w: np.ndarray
    P: np.ndarray          # (nodes, L+1)
    dP: np.ndarray         # (nodes, L+1)
    norms: np.ndarray      # E[P_l^2] = 1/N_l

    @classmethod
    def build(cls, d: int, L: int, nodes: int | None = None) -> "ZonalBasis":
        d = require_int(d, "d", minimum=2)
        L = require_int(L, "L", minimum=1)
        nodes = 2 * L + 2 if nodes is None else require_int(nodes, "nodes", minimum=L + 1)
        ls = np.arange(L + 1)
        if d == 2:
            theta = (np.arange(2 * nodes) + 0.5) * np.pi / (2 * nodes)    # Gauss-Chebyshev (midpoint in theta)
            t, w = np.cos(theta), np.full(2 * nodes, 1.0 / (2 * nodes))
            P = eval_chebyt(ls[None, :], t[:, None])
            sin = np.sin(theta)[:, None]
            dP = ls[None, :] * np.sin(ls[None, :] * theta[:, None]) / sin     # T_l'(t) = l U_{l-1}(t)
        else:
            lam = (d - 2) / 2
            t, w = roots_gegenbauer(nodes, lam)
            w = w / w.sum()
            scale = eval_gegenbauer(ls, lam, 1.0)
            P = eval_gegenbauer(ls[None, :], lam, t[:, None]) / scale
            dP = np.zeros_like(P)
            dP[:, 1:] = 2 * lam * eval_gegenbauer(ls[None, 1:] - 1, lam + 1, t[:, None]) / scale[1:]
        norms = (w[:, None] * P ** 2).sum(axis=0)
        return cls(d, L, t, w, P, dP, norms)

    def coefficients(self, values: np.ndarray) -> np.ndarray:
        """f_l with f = sum_l f_l P_l, from values at the nodes."""
        return (self.w[:, None] * values[:, None] * self.P).sum(axis=0) / self.norms

    def moments(self, density: np.ndarray) -> np.ndarray:
        """m_l = E_rho[P_l(t)] of a density (relative to the uniform measure) given at the nodes."""
        return (self.w[:, None] * density[:, None] * self.P).sum(axis=0) / float(self.w @ density)


@dataclass(frozen=True)
class ZonalHistory:
    r"""Solution of the zonal Fokker-Planck equation: coefficients :math:`f_l(t)` of
    :math:`\rho/\rho_0 = \sum_l f_l P_l`."""

    times: np.ndarray
    coefficients: np.ndarray       # (T, L+1); f_0 = 1
    order_parameter: np.ndarray    # m_1 = E<x, e> = f_1 / N_1 (d >= 3) or f_1 / 2 (circle)
    meta: dict = field(default_factory=dict)


class ZonalFokkerPlanck:
    r"""Right-hand side of the Galerkin system for :math:`f` = coefficients of :math:`\rho/\rho_0` (see the module
    docstring)."""

    def __init__(self, d: int, beta: float, noise: float, L: int, model: str = "usa"):
        self.model = require_choice(model, "model", ("usa", "sa"))
        self.beta = require_real(beta, "beta")
        self.noise = require_real(noise, "noise", minimum=0.0)
        if model == "sa" and self.beta == 0.0:
            raise InputError("sa at beta = 0 is not implemented in the zonal solver; use usa (same dynamics)")
        self.basis = ZonalBasis.build(d, L)
        self.d, self.L = d, L
        # potential of rho/rho_0 = sum f_l P_l: Phi/rho_0... = sum_l g_l f_l P_l (g_l = rho_0 a_l/beta)
        self.g = couplings(d, self.beta, L)
        self.g0 = float(self.g[0])       # rho_0 a_0/beta: the sa denominator beta (W * rho) / rho_0
        self.weight_factor = (1 - self.basis.t ** 2)

    def __call__(self, _t: float, f: np.ndarray) -> np.ndarray:
        B = self.basis
        rho = B.P @ f
        drho = B.dP @ f
        gf = self.g * f
        dphi = B.dP @ gf
        if self.model == "sa":
            phi = B.P[:, 1:] @ gf[1:] + self.g0 * f[0]
            dphi = dphi / (self.beta * phi)
        flux = self.weight_factor * (self.noise * drho - rho * dphi)
        out = -(B.w[:, None] * B.dP * flux[:, None]).sum(axis=0) / B.norms
        out[0] = 0.0
        return out


def solve_zonal(d: int, beta: float, noise: float, *, L: int = 24, t_end: float, f0=None, amplitude: float = 1e-4,
                degrees=(1, 2, 3, 4), model: str = "usa", saves: int = 201, rtol: float = 1e-9,
                atol: float = 1e-12) -> ZonalHistory:
    r"""Integrate the zonal Fokker-Planck equation (Dormand-Prince 5(4), scipy RK45) from ``f0`` or from
    :math:`1 + \text{amplitude} \sum_{l \in \text{degrees}} P_l`."""
    d = require_int(d, "d", minimum=2)
    L = require_int(L, "L", minimum=2)
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    op = ZonalFokkerPlanck(d, beta, noise, L, model)
    if f0 is None:
        f0 = np.zeros(L + 1)
        f0[0] = 1.0
        for l in degrees:
            f0[l] = amplitude
    f0 = np.asarray(f0, dtype=float)
    if f0.shape != (L + 1,) or not np.all(np.isfinite(f0)) or f0[0] != 1.0:
        raise InputError(f"f0 must be finite of shape ({L + 1},) with f0[0] = 1 (a probability density)")
    ts = np.linspace(0.0, t_end, saves)
    sol = solve_ivp(op, (0.0, t_end), f0, method="RK45", t_eval=ts, rtol=rtol, atol=atol)
    if sol.status < 0:
        raise InputError(f"zonal Fokker-Planck solver failed: {sol.message}")
    F = sol.y.T
    N1 = harmonic_dimension(d, 1)
    meta = {"d": d, "beta": beta, "noise": noise, "L": L, "model": model, "nodes": op.basis.t.size,
            "integrator": "Dormand-Prince 5(4) (scipy RK45)", "rtol": rtol, "atol": atol, "nfev": int(sol.nfev)}
    return ZonalHistory(sol.t, F, F[:, 1] / N1, meta)


def linear_phase(coefficients: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The linear phase of a run near the uniform state: M(t) = max_{j >= 1} |c_j(t)| (all but the mass entry
    0) and the frames with M < ``threshold``. Fewer than 5 such frames is an :class:`InputError` (no slope can
    be fitted). Shared by this module's and :mod:`numerics.noise.sphere`'s ``fitted_rates``."""
    M = np.max(np.abs(coefficients[:, 1:]), axis=1)
    linear = M < threshold
    if np.count_nonzero(linear) < 5:
        raise InputError("fewer than 5 frames in the linear phase; lower the amplitude or t_end")
    return M, linear


def log_slope(times: np.ndarray, values: np.ndarray) -> float:
    """Least-squares slope of log|values| against ``times`` (the growth rate of an exponential)."""
    return float(np.polyfit(times, np.log(np.abs(values)), 1)[0])


def fitted_rates(history: ZonalHistory, degrees, threshold: float = 1e-2) -> dict[int, float]:
    """Least-squares slope of log|f_l(t)| over the frames where max_l |f_l| < threshold (the linear phase)."""
    _, linear = linear_phase(history.coefficients, threshold)
    idx = np.flatnonzero(linear)
    return {l: log_slope(history.times[idx], history.coefficients[idx, l]) for l in degrees}
