r"""Stationary states of the noisy ``usa`` mean-field equation: the self-consistency equation and its branch.

A stationary zonal density of :math:`\partial_t \rho + \operatorname{div}(\rho \nabla(W * \rho)) = D \Delta \rho`
is a critical point of the free energy :math:`F = D \int \rho \log \rho - E[\rho]` (theory.noise),
:math:`\rho = e^{(W * \rho)/D}/Z`. In the moments :math:`m_l = E_\rho[P_l(\langle x, e\rangle)]`
(numerics.noise.zonal) this is the fixed point

.. math::

    m_l = \frac{E_u[P_l e^{\phi}]}{E_u[e^{\phi}]}, \qquad \phi(t) = \sum_{l=1}^{L} g_l N_l m_l P_l(t) / D,

(:math:`E_u`: uniform measure; :math:`g_l = \rho_0 a_l(\beta)/\beta`; :math:`N_l = \dim H_l`). On the circle at
:math:`\beta = 0` it is the Kuramoto equation :math:`r = I_1(r/D)/I_0(r/D)`.

Continuation: the non-uniform branch is traced as a graph over the order parameter :math:`r = m_1` (natural
continuation in :math:`r`, Newton on :math:`(m_2, \dots, m_L, D)` from the previous point). A fold in :math:`D`
(the discontinuous case) is passed without arclength because the branch is a graph over :math:`r`; the first
point starts from the Landau prediction :math:`D = D_c - r^2 / \text{slope}` (theory.noise.bifurcation).
Stability within the branch (for the gradient flow restricted to the branch's symmetry): stable where
:math:`dD/dr < 0`, unstable where :math:`dD/dr > 0` (the free energy's second variation changes sign at folds);
this is reported as ``stable_guess``.

Verified by: noise.kuramoto, noise.bifurcation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from scipy.optimize import fsolve

from numerics.common.errors import InputError, require_int, require_real
from numerics.noise.zonal import ZonalBasis, couplings, harmonic_dimension


@lru_cache(maxsize=64)
def _dimensions(d: int, L: int) -> np.ndarray:
    return np.array([harmonic_dimension(d, l) for l in range(1, L + 1)], dtype=float)


def self_consistency_map(basis: ZonalBasis, g: np.ndarray, D: float, m: np.ndarray) -> np.ndarray:
    """G(m) = E_u[P_l e^phi]/E_u[e^phi] for l = 1..L (m = m_1..m_L)."""
    N = _dimensions(basis.d, basis.L)
    phi = basis.P[:, 1:] @ (g[1:] * N * m) / D
    e = np.exp(phi - phi.max())
    Z = float(basis.w @ e)
    return (basis.w * e) @ basis.P[:, 1:] / Z


@dataclass(frozen=True)
class Branch:
    """Points (D, m) of the non-uniform stationary branch, with r = m_1."""

    d: int
    beta: float
    D: np.ndarray
    r: np.ndarray
    moments: np.ndarray          # (points, L)
    residual: np.ndarray         # max |m - G(m)| at each point
    tail: np.ndarray             # |g_L N_L m_L| / D, the last retained term of phi (truncation monitor)
    stable_guess: np.ndarray     # dD/dr < 0
    meta: dict = field(default_factory=dict)

    @property
    def fold(self) -> tuple[float, float] | None:
        """(D, r) at the largest D on the branch if it exceeds the first point's D (subcritical), else None."""
        i = int(np.argmax(self.D))
        return (float(self.D[i]), float(self.r[i])) if i > 0 else None


def stationary_branch(d: int, beta: float, *, L: int = 24, r_max: float = 0.95, points: int = 60,
                      r_min: float = 1e-3, model: str = "usa") -> Branch:
    r"""Trace the stationary branch bifurcating from the uniform state at :math:`D_c = g_1` (``usa``), :math:`r`
    from ``r_min`` to ``r_max``.

    Stops early (and says so in ``meta["stopped"]``) if Newton fails or the last retained term of :math:`\phi`,
    :math:`\lvert g_L N_L m_L\rvert/D`, exceeds 1e-8 (truncation).
    """
    if model != "usa":
        raise InputError("the self-consistency branch is implemented for usa (the gradient flow of F)")
    d = require_int(d, "d", minimum=2)
    beta = require_real(beta, "beta")
    L = require_int(L, "L", minimum=2)
    points = require_int(points, "points", minimum=3)
    basis = ZonalBasis.build(d, L, nodes=4 * L + 8)
    g = couplings(d, beta, L)
    Dc = float(g[1])
    if Dc <= 0:
        raise InputError(f"no instability at beta={beta:g}: D_c = {Dc:g}")
    # Landau start (theory.noise.bifurcation, recomputed here from g): r^2 = slope (D_c - D)
    q = g[2] / g[1]
    c4 = Dc / (4 * d * (d + 2)) * (1 - (d - 1) / (d * (1 - q)))
    slope = 1.0 / (4 * d ** 3 * c4) if c4 != 0 else math.inf    # beta = beta*: the quartic term vanishes
    if not 0 < r_min < 0.05 < r_max < 1:
        raise InputError(f"need 0 < r_min < 0.05 < r_max < 1, got r_min={r_min:g}, r_max={r_max:g}")
    rs = np.concatenate([np.geomspace(r_min, 0.05, points // 3, endpoint=False),
                         np.linspace(0.05, r_max, points - points // 3)])
    m = np.zeros(L)
    Dv = Dc - rs[0] ** 2 / slope
    out_D, out_r, out_m, res, tails = [], [], [], [], []
    stopped = "r_max"
    for r in rs:
        def eqs(z):
            mm = np.concatenate([[r], z[:-1]])
            return (mm - self_consistency_map(basis, g, z[-1], mm)) / r   # O(1) near the bifurcation

        guess = np.concatenate([m[1:], [Dv]])
        z, info, ier, msg = fsolve(eqs, guess, full_output=True, xtol=1e-12)
        resid = float(np.max(np.abs(eqs(z)))) * r
        if resid > 1e-11 or z[-1] <= 0:
            stopped = f"newton failed at r = {r:.4g}: {msg.strip()}"
            break
        m = np.concatenate([[r], z[:-1]])
        Dv = float(z[-1])
        tail = abs(g[-1] * harmonic_dimension(d, L) * m[-1]) / Dv     # last retained term of phi
        if tail > 1e-8:
            stopped = f"truncation: last term of phi {tail:.2g} at r = {r:.4g}"
            break
        out_D.append(Dv)
        out_r.append(r)
        out_m.append(m.copy())
        res.append(resid)
        tails.append(tail)
    Ds, rr = np.array(out_D), np.array(out_r)
    stable = np.gradient(Ds, rr) < 0 if Ds.size > 1 else np.array([slope > 0])
    return Branch(d, beta, Ds, rr, np.array(out_m), np.array(res), np.array(tails), stable,
                  {"L": L, "nodes": basis.t.size, "critical_noise": Dc, "landau_slope": slope,
                   "continuous_predicted": bool(c4 > 0), "stopped": stopped,
                   "method": "natural continuation in r = m_1, scipy fsolve on (m_2..m_L, D)"})


def stationary_moments(d: int, beta: float, D: float, guess: np.ndarray) -> np.ndarray:
    r"""The fixed point :math:`m = G(m)` at noise :math:`D`, by Newton (scipy fsolve) from ``guess`` (length
    :math:`L`); residual :math:`\le 10^{-11}`."""
    guess = np.asarray(guess, dtype=float)
    L = guess.size
    basis = ZonalBasis.build(d, L, nodes=4 * L + 8)
    g = couplings(d, beta, L)
    # full_output: MINPACK reports "not making good progress" (ier 5) once it sits at the root within rounding,
    # before xtol = 1e-13 is met; the residual below is the criterion, so the message is only shown on failure
    m, _, ier, msg = fsolve(lambda mm: mm - self_consistency_map(basis, g, D, mm), guess, xtol=1e-13,
                            full_output=True)
    resid = float(np.max(np.abs(m - self_consistency_map(basis, g, D, m))))
    if resid > 1e-11:
        raise InputError(f"no stationary state found near the guess at D = {D:g} (residual {resid:.2g}; "
                         f"{msg.strip() if ier != 1 else 'converged elsewhere'})")
    return m


def order_parameter_at(branch: Branch, D: float, stable_only: bool = True) -> float | None:
    """r on the branch at noise D: the bracketing branch points (on a stable piece) give a guess, refined by
    :func:`stationary_moments`; None if D is not covered."""
    D = require_real(D, "D")
    mask = branch.stable_guess if stable_only else np.ones_like(branch.D, bool)
    Ds, Ms = branch.D[mask], branch.moments[mask]
    for i in range(len(Ds) - 1):
        lo, hi = sorted((Ds[i], Ds[i + 1]))
        if lo <= D <= hi and hi > lo:
            w = (D - Ds[i]) / (Ds[i + 1] - Ds[i])
            guess = (1 - w) * Ms[i] + w * Ms[i + 1]
            return float(stationary_moments(branch.d, branch.beta, D, guess)[0])
    return None
