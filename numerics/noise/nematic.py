"""Nematic (head-tail symmetric) kernels: Maier-Saupe and Doi-Onsager on S^1 and S^2, their isotropic-nematic
transition.

Two pair kernels of s = <x, y>, both even in s (so x and -x are the same direction: nematic order):

- ``maier-saupe``: W(s) = P_2(s), the normalised zonal profile of degree 2 (cos 2u on the circle, (3 s^2 - 1)/2
  on S^2). Its only Funk-Hecke eigenvalue is g_2 = 1/N_2 (1/2 on S^1, 1/5 on S^2), so phi = m_2 P_2 / D with
  m_2 = S = E_rho[P_2(<x, e>)] the order parameter: the classical Maier-Saupe mean field with the coupling U = 1
  and the temperature k T = D.
- ``onsager``: W(s) = -sqrt(1 - s^2) = -|sin gamma| (Onsager's excluded volume of thin rods, the Doi-Onsager
  kernel): on S^1 the couplings of :mod:`numerics.noise.doi_onsager`, on S^2 g_l = (1/2) int_0^pi
  -sin(theta)^2 P_l(cos theta) dtheta by Gauss-Legendre quadrature in theta (analytic there; zero for odd l).

The uniform (isotropic) state loses linear stability at D_# = g_2 (:func:`theory.noise_global.mode_bifurcation`).
On the circle the branch is a pitchfork of the pi-periodic states (decimation); on S^2 degree 2 is transcritical
(P_2 has a non-zero third moment): the nematic branch leaves D_# towards larger D, turns at a fold, and the
transition happens at the equal-free-energy noise D_1st in (D_#, D_fold) with a jump of the order parameter.
All three come from the generic zonal machinery (:mod:`numerics.noise.branches`): pseudo-arclength continuation,
the refined fold, Brent on Delta F = 0; the accuracy of each is its change with 8 more degrees and twice the
quadrature nodes.

Verified by: noise.maier-saupe.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import InputError, require_choice, require_int
from numerics.noise.branches import ModeBranch, ZonalProblem, equal_free_energy, refine_fold, trace_branch
from numerics.noise.zonal import harmonic_dimension

KERNELS = ("maier-saupe", "onsager")
#: the amplitude S the continuation aims for (the stable nematic states are ordered, S < 1)
S_MAX = 0.95


def onsager_sphere_couplings(L: int) -> np.ndarray:
    """g_0..g_L of W(s) = -sqrt(1 - s^2) on S^2: (1/2) int_0^pi -sin(theta)^2 P_l(cos theta) dtheta (s = cos
    theta, ds = -sin theta dtheta), Gauss-Legendre in theta with 2 L + 64 nodes (analytic integrand)."""
    from scipy.special import eval_legendre

    L = require_int(L, "L", minimum=2, maximum=4096)
    x, w = np.polynomial.legendre.leggauss(2 * L + 64)
    theta = (x + 1) * math.pi / 2
    f = -np.sin(theta) ** 2 * (w * math.pi / 2)
    return np.array([0.5 * float(f @ eval_legendre(l, np.cos(theta))) for l in range(L + 1)])


def nematic_couplings(kernel: str, d: int, L: int) -> np.ndarray:
    """Funk-Hecke eigenvalues g_0..g_L (uniform probability measure) of ``kernel`` on S^{d-1}, d = 2 or 3."""
    kernel = require_choice(kernel, "kernel", KERNELS)
    d = require_int(d, "d", minimum=2, maximum=3)
    L = require_int(L, "L", minimum=2, maximum=4096)
    if kernel == "maier-saupe":
        g = np.zeros(L + 1)
        g[2] = 1.0 / harmonic_dimension(d, 2)
        return g
    if d == 2:
        from numerics.noise.doi_onsager import doi_onsager_couplings

        return doi_onsager_couplings(L)
    return onsager_sphere_couplings(L)


def nematic_problem(kernel: str, d: int, L: int = 32, nodes: int | None = None) -> tuple[ZonalProblem, int]:
    """The head-tail symmetric states and the degree whose moment is the order parameter S: on the circle the
    pi-periodic states (couplings g_(2j), mode 1 = E cos 2u), on S^2 the even degrees (mode 2 = E P_2)."""
    if kernel == "maier-saupe":
        # one coupling (g_2): the moments above degree 2 do not feed back into phi, so degrees 2 and 4 are exact;
        # the quadrature must resolve e^{S P_2 / D} up to S = S_MAX (64 nodes: the classical numbers to 1e-15)
        L, nodes = 2, (64 if nodes is None else nodes)
    g = nematic_couplings(kernel, d, 2 * L)
    if d == 2:
        return ZonalProblem.build(2, g[: 2 * L + 1: 2], label="pi-periodic states (couplings g_(2j))",
                                  nodes=nodes), 1
    return ZonalProblem.build(3, g, active=range(2, 2 * L + 1, 2), label="states even under x -> -x",
                              nodes=nodes), 2


@dataclass(frozen=True)
class NematicTransition:
    """The isotropic-nematic transition of ``kernel`` on S^{d-1}: D_# (linear stability), the type, the fold
    (D, S) and the first-order point (D_1st, S at the jump), each D with an accuracy (absolute)."""

    kernel: str
    d: int
    threshold: float
    kind: str
    fold: tuple | None                 # (D, S, accuracy of D)
    first_order: tuple | None          # (D, S, accuracy of D, accuracy of S)
    branch: ModeBranch | None = None
    meta: dict = field(default_factory=dict)

    @property
    def coupling_threshold(self) -> float:
        """Mun and Rosenzweig's K_# = 1/(2 D_#)."""
        return 1.0 / (2.0 * self.threshold)

    @property
    def coupling_first_order(self) -> float | None:
        """K_c = 1/(2 D_1st)."""
        return None if self.first_order is None else 1.0 / (2.0 * self.first_order[0])


def _points(problem: ZonalProblem, mode: int, bif) -> tuple[ModeBranch, object, list]:
    s0 = 1e-3
    if bif.kind == "transcritical":
        D0 = bif.threshold + bif.slope * s0
    else:
        D0 = bif.threshold - s0 ** 2 / bif.slope
    branch = trace_branch(problem, mode, S_MAX, D0, s_first=s0)
    return branch, refine_fold(branch), equal_free_energy(branch)


def nematic_transition(kernel: str, d: int, L: int = 32, accuracy: bool = True) -> NematicTransition:
    """Threshold, type, fold and first-order point of the nematic branch (see the module docstring)."""
    from theory.noise_global import mode_bifurcation

    kernel = require_choice(kernel, "kernel", KERNELS)
    d = require_int(d, "d", minimum=2, maximum=3)
    L = require_int(L, "L", minimum=4, maximum=64)     # 64: degrees to 128, about 10 s for onsager on S^2
    problem, mode = nematic_problem(kernel, d, L)
    from numerics.common.limits import check_work
    from numerics.noise.transitions import estimate_work

    # the branch at L and again at L + 8 with twice the nodes (the accuracy): about three branches' work
    check_work((3 if accuracy else 1) * estimate_work(d, 1, 1, problem.L), f"the {kernel} transition on S^{d - 1}")
    bif = mode_bifurcation(d, mode, problem.g[: 2 * mode + 1])
    if bif.kind == "none":
        raise InputError(f"{kernel} on S^{d - 1}: g_{mode} <= 0, no nematic instability")
    branch, fold, roots = _points(problem, mode, bif)
    roots = [p for p in roots if p.D > bif.threshold]
    if accuracy:
        nodes = 128 if kernel == "maier-saupe" else 2 * (4 * (L + 8) + 8)
        larger, _ = nematic_problem(kernel, d, L + 8, nodes=nodes if d == 3 else None)
        _, fold2, roots2 = _points(larger, mode, bif)
        roots2 = [p for p in roots2 if p.D > bif.threshold]
    fold_out = first = None
    if fold is not None and bif.kind != "continuous":
        acc = abs(fold2.D - fold.D) if accuracy and fold2 is not None else math.nan
        fold_out = (fold.D, fold.s, acc)
    if roots:
        p = max(roots, key=lambda q: q.D)
        if accuracy and roots2:
            q = max(roots2, key=lambda r: r.D)
            first = (p.D, p.s, abs(q.D - p.D), abs(q.s - p.s))
        else:
            first = (p.D, p.s, math.nan, math.nan)
    elif bif.kind == "continuous":
        first = (bif.threshold, 0.0, 0.0, 0.0)
    return NematicTransition(kernel, d, float(bif.threshold), bif.kind, fold_out, first, branch,
                             {"L": problem.L, "states": problem.label, "stopped": branch.stopped,
                              "landau_slope": bif.slope, "points": int(branch.D.size)})
