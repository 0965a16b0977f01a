r"""The global phase transition of noisy ``usa``: Mun and Rosenzweig's coupling, the branches of every degree, the
Doi-Onsager model and the first-order (equal free energy) noise at high precision.

Conventions (docs/conventions.md, section "Noise"). attnflow's free energy of a probability density :math:`\rho` on
:math:`\mathbb{S}^{d-1}` (w.r.t. the surface measure) is
:math:`F = D \int \rho \log \rho - \tfrac{1}{2} \iint W(\langle x, y\rangle) \rho(x) \rho(y)`,
:math:`W(s) = e^{\beta s}/\beta` (:func:`theory.noise.free_energy_derivation`). Mun and Rosenzweig (arXiv 2604.16288
on the circle :math:`\mathbb{T} = \mathbb{R}/\mathbb{Z}`, arXiv 2606.05140 on :math:`\mathbb{S}^{d-1}`) study the free
energy with a coupling :math:`K` in front of the interaction; their linear-stability thresholds
:math:`K_\# = 3 \pi/4` (Doi-Onsager, :math:`W(\theta) = -\lvert\sin 2 \pi \theta\rvert`) and
:math:`K_\#^{(d)}(\beta) = \beta^{d/2} / \big(2^{d/2} \Gamma(d/2) I_{d/2}(\beta)\big)` (noisy transformer) are both
reproduced by :math:`F_K = \int \rho \log \rho - K \iint W \rho \rho`, which is :math:`F / D` with

.. math::

    K = \frac{1}{2 D}, \qquad \text{so} \qquad K_\# D_c = \frac{1}{2}

(:func:`coupling_conversion_derivation`). (We read the abstracts and the first page of arXiv 2606.05140, not the
definition of :math:`F_K` in the body: the form above is inferred from the two thresholds, which it reproduces
exactly; ``proofs_notes/noise-global-*.md``.)

Zonal states. With :math:`u = \rho/\rho_0 = \sum_l f_l P_l` (:math:`P_l = C_l^{(d-2)/2}/C_l^{(d-2)/2}(1)`,
:math:`T_l` on the circle), :math:`m_l = \mathbb{E}_\rho[P_l] = f_l / N_l` (:math:`N_l = \dim H_l`) and :math:`g_l` the
Funk-Hecke eigenvalue of the interaction w.r.t. the uniform probability measure
(:math:`g_l = \rho_0 a_l(\beta)/\beta` for ``usa``), the free energy difference to the uniform state is

.. math::

    \Delta F = F[\rho] - F[\rho_0] = D\, \mathbb{E}_u[u \log u] - \frac{1}{2} \sum_{l \ge 1} g_l N_l m_l^2 .

At a stationary state :math:`u = e^\phi / Z`, :math:`\phi = \sum_l g_l N_l m_l P_l / D`,
:math:`Z = \mathbb{E}_u[e^\phi]`, this is :math:`\tfrac{1}{2} \sum_l g_l N_l m_l^2 - D \log Z`. The first-order noise
of a branch is the :math:`D` at which :math:`\Delta F = 0` on it away from the uniform state;
:func:`first_order_noise_mp` solves (:math:`m = G(m, D)`, :math:`\Delta F = 0`) in mpmath.

Branches of degree :math:`l` (Lyapunov-Schmidt in the zonal class,
:math:`u = 1 + \varepsilon P_l + \varepsilon^2 h`, :math:`h` orthogonal to :math:`P_l`):

.. math::

    \begin{aligned}
    F &= \tfrac{1}{2}(D - g_l) \langle P_l^2\rangle \varepsilon^2 + c_3 \varepsilon^3 + c_4 \varepsilon^4 + \dots,
        \qquad c_3 = -D \langle P_l^3\rangle/6, \\
    c_4 &= D \langle P_l^4\rangle/12 - \sum_j \frac{D^2 \langle P_l^2 P_j\rangle^2}{8 (D - g_j) \langle P_j^2\rangle}
        \qquad (j \text{ over the degrees of } P_l^2),
    \end{aligned}

(:math:`\langle\cdot\rangle` the uniform average). :math:`\langle P_l^3\rangle = 0` for odd :math:`l` and on the
circle (pitchfork: continuous iff :math:`c_4 > 0` at :math:`D = g_l`), and is positive for even :math:`l` on
:math:`\mathbb{S}^{d-1}`, :math:`d \ge 3` (transcritical: a branch on both sides of :math:`g_l`, first order within
the zonal class). :func:`mode_landau_derivation` derives :math:`c_4` by eliminating the slaved amplitudes and checks
the closed form; for :math:`l = 1` it is :func:`theory.noise.landau_derivation`'s coefficient.

Verified by: noise.global-conversion, noise.global-first-order, noise.global-higher-modes,
noise.global-doi-onsager (numerics.noise.claims_global); tests/theory/test_noise_global_theory.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import mpmath as mp
import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step
from .noise import D, _check_d, critical_noise_expr, sphere_moment

_SOURCE = ("Mun-Rosenzweig arXiv 2604.16288 (circle: Doi-Onsager, noisy transformer) and arXiv 2606.05140 "
           "(S^{d-1}); free energy of noisy usa (theory.noise)")
#: Mun and Rosenzweig's coupling strength
K = sp.Symbol("K", positive=True)


# -- the conversion K = 1/(2D) -------------------------------------------------------------------------------
def coupling_of_noise(D_value):
    """K = 1/(2 D): Mun and Rosenzweig's coupling for attnflow's noise D (exact for sympy input)."""
    return 1 / (2 * D_value) if isinstance(D_value, sp.Basic) else 1.0 / (2.0 * float(D_value))


def mun_rosenzweig_threshold_expr(d: int, beta=sym.beta) -> sp.Expr:
    r""":math:`K_\#^{(d)}(\beta) = \beta^{d/2} / \big(2^{d/2} \Gamma(d/2) I_{d/2}(\beta)\big)` as printed in arXiv
    2606.05140.
    """
    d = _check_d(d)
    h = sp.Rational(d, 2)
    return beta ** h / (2 ** h * sp.gamma(h) * sp.besseli(h, beta))


def coupling_conversion_derivation(d: int) -> Derivation:
    r""":math:`K_\#^{(d)}(\beta)\, D_c(\beta) = 1/2` for ``usa`` on :math:`\mathbb{S}^{d-1}`, and :math:`F/D = F_K`
    at :math:`K = 1/(2D)`.

    The identity proved: :math:`K_\#` (their formula) times :math:`D_c = \lambda_1/(d-1)`
    (:func:`theory.noise.critical_noise_expr`) simplifies to :math:`1/2`; and
    :math:`D^{-1} (D S - \tfrac{1}{2} E_2) - (S - K E_2)` vanishes at :math:`K = 1/(2D)` (:math:`S` the entropy,
    :math:`E_2 = \iint W \rho \rho`, abstract symbols).
    """
    d = _check_d(d)
    Ks = mun_rosenzweig_threshold_expr(d)
    Dc = critical_noise_expr("usa", d)
    product = sp.simplify(sp.powsimp(sp.simplify(Ks * Dc), force=True))
    S, E2 = sp.symbols("S E_2", real=True)
    ours = (D * S - E2 / 2) / D
    theirs = (S - K * E2).subs(K, 1 / (2 * D))
    return Derivation(
        title=f"Mun-Rosenzweig's coupling on S^{d - 1}: K = 1/(2D), K_# D_c = 1/2",
        source=_SOURCE, lhs=sp.Matrix([product, sp.simplify(ours - theirs)]), rhs=sp.Matrix([sp.Rational(1, 2), 0]),
        steps=(Step("K_#^{(d)}(beta), arXiv 2606.05140", Ks), Step("D_c(beta) = lambda_1/(d-1) (usa)", Dc)),
        notes="F_K = int rho log rho - K int int W rho rho (inferred from the papers' thresholds); F/D with "
              "F = D int rho log rho - (1/2) int int W rho rho")


# -- zonal averages and the Landau coefficients of every degree ----------------------------------------------
def zonal_polynomial(d: int, l: int, t: sp.Symbol = sym.s) -> sp.Expr:
    r""":math:`P_l(t)`: :math:`C_l^{(d-2)/2}(t)/C_l^{(d-2)/2}(1)` for :math:`d \ge 3`, :math:`T_l(t)` on the circle
    (polynomial in :math:`t`).
    """
    from .meanfield import zonal_profile

    return sp.expand(zonal_profile(_check_d(d), l, t))


def _moment(d: int, power: int) -> sp.Expr:
    """E[t^power] for t = <x, e>, x uniform on S^{d-1}: on the circle E[cos^p] = binomial(p, p/2)/2^p (even p;
    equal to :func:`theory.noise.sphere_moment`'s integral, checked in the tests, and much faster), else
    :func:`theory.noise.sphere_moment`."""
    if d == 2:
        return sp.Integer(0) if power % 2 else sp.Rational(sp.binomial(power, power // 2), 2 ** power)
    return sphere_moment(d, power)


def zonal_average(d: int, poly: sp.Expr, t: sp.Symbol = sym.s) -> sp.Expr:
    r""":math:`\mathbb{E}[\operatorname{poly}(\langle x, e\rangle)]` for :math:`x` uniform on
    :math:`\mathbb{S}^{d-1}`, exactly, from the moments of :math:`t`.
    """
    p = sp.Poly(sp.expand(poly), t)
    return sp.nsimplify(sum(c * _moment(d, int(k[0])) for k, c in zip(p.monoms(), p.coeffs())))


@lru_cache(maxsize=64)
def mode_products(d: int, l: int) -> dict:
    r"""Exact uniform averages for degree :math:`l`: :math:`\langle P_l^2\rangle`, :math:`\langle P_l^3\rangle`,
    :math:`\langle P_l^4\rangle`, and for :math:`j = 1, \dots, 2l`: :math:`\langle P_l^2 P_j\rangle`,
    :math:`\langle P_j^2\rangle`."""
    d = _check_d(d)
    if l < 1:
        raise ValueError(f"degree l must be >= 1, got {l!r}")
    t = sym.s
    P = zonal_polynomial(d, l, t)
    out = {"P2": zonal_average(d, P ** 2), "P3": zonal_average(d, P ** 3), "P4": zonal_average(d, P ** 4),
           "cross": {}, "norm": {}}
    for j in range(1, 2 * l + 1):
        Pj = zonal_polynomial(d, j, t)
        out["cross"][j] = zonal_average(d, P ** 2 * Pj)
        out["norm"][j] = zonal_average(d, Pj ** 2)
    return out


def _g(j: int) -> sp.Symbol:
    return sp.Symbol(f"g_{j}", real=True)


def quartic_coefficient_expr(d: int, l: int) -> sp.Expr:
    r""":math:`c_4(D) = D \langle P_l^4\rangle/12
    - \sum_j D^2 \langle P_l^2 P_j\rangle^2 / \big(8 (D - g_j) \langle P_j^2\rangle\big)`, :math:`j \ne l`
    (closed form; :math:`g_j` symbols).
    """
    pr = mode_products(d, l)
    slaved = sum(D ** 2 * pr["cross"][j] ** 2 / (8 * (D - _g(j)) * pr["norm"][j])
                 for j in pr["cross"] if j != l and pr["cross"][j] != 0)
    return D * pr["P4"] / 12 - slaved


def mode_landau_derivation(d: int, l: int) -> Derivation:
    r"""Quartic Landau coefficient of the degree-:math:`l` zonal branch by elimination of the slaved amplitudes.

    .. math::

        F_4(h) = \sum_j \Big[ \tfrac{1}{2}(D - g_j) h_j^2 \langle P_j^2\rangle
        - \tfrac{D}{2} h_j \langle P_l^2 P_j\rangle \Big] + D \langle P_l^4\rangle/12

    (the :math:`\varepsilon^4` terms of
    :math:`D \langle (1+u) \log(1+u)\rangle - \tfrac{1}{2} \sum g_j \langle u_j^2\rangle` with
    :math:`u = \varepsilon P_l + \varepsilon^2 \sum_{j \ne l} h_j P_j`); the stationary point in :math:`h` gives
    :math:`c_4`. Identities proved: :math:`c_4` (elimination) = :func:`quartic_coefficient_expr` (closed form), and
    for :math:`l = 1`, :math:`c_4` at :math:`D = g_1`, :math:`g_2 = q g_1` equals
    :math:`g_1 \big(1 - (d-1)/(d(1-q))\big)/(4 d (d+2))` (theory.noise).
    """
    d = _check_d(d)
    pr = mode_products(d, l)
    hs = {j: sp.Symbol(f"h_{j}", real=True) for j in pr["cross"] if j != l}
    F4 = D * pr["P4"] / 12 + sum(sp.Rational(1, 2) * (D - _g(j)) * h ** 2 * pr["norm"][j]
                                 - D / 2 * h * pr["cross"][j] for j, h in hs.items())
    sol = sp.solve([sp.diff(F4, h) for h in hs.values()], list(hs.values()), dict=True)[0]
    c4_elim = sp.simplify(F4.subs(sol))
    closed = quartic_coefficient_expr(d, l)
    rows, rhs = [sp.simplify(sp.together(c4_elim - closed))], [0]
    if l == 1:
        q, g1 = sp.symbols("q g_1", positive=True)
        at_threshold = sp.simplify(closed.subs({D: g1}).subs(_g(2), q * g1))
        rows.append(sp.simplify(at_threshold - g1 * (1 - sp.Rational(d - 1, d) / (1 - q)) / (4 * d * (d + 2))))
        rhs.append(0)
    return Derivation(
        title=f"Landau coefficients of the degree-{l} zonal branch on S^{d - 1}",
        source=_SOURCE + "; Lyapunov-Schmidt reduction of F",
        lhs=sp.Matrix(rows), rhs=sp.Matrix(rhs),
        steps=(Step("<P_l^2>, <P_l^3>, <P_l^4>", sp.Matrix([pr["P2"], pr["P3"], pr["P4"]])),
               Step("eps^4 part of F with slaved amplitudes h_j", F4),
               Step("c_4 by elimination", c4_elim),
               Step("c_3 = -D <P_l^3>/6", -D * pr["P3"] / 6)),
        notes="transcritical (c_3 != 0) for even l on S^{d-1}, d >= 3; pitchfork otherwise")


@dataclass(frozen=True)
class ModeBifurcation:
    r"""The degree-:math:`l` branch at its threshold :math:`D_l = g_l`: kind, Landau coefficients, the initial
    slope.

    ``kind``: "continuous" (pitchfork, :math:`c_4 > 0`), "discontinuous" (pitchfork, :math:`c_4 < 0`), "degenerate"
    (:math:`c_4 = 0`: decided by higher orders), "transcritical" (:math:`c_3 \ne 0`) or "none" (:math:`g_l \le 0`:
    no instability for :math:`D > 0`). ``slope``: pitchfork :math:`s^2 = \text{slope}\,(g_l - D)`; transcritical
    :math:`D - g_l = \text{slope}\, s` (:math:`s = m_l = \mathbb{E}_\rho[P_l]`).
    """

    d: int
    l: int
    threshold: float
    kind: str
    cubic: float
    quartic: float
    slope: float | None


def mode_bifurcation(d: int, l: int, g) -> ModeBifurcation:
    """Numbers of :func:`mode_landau_derivation` for the couplings ``g`` (g[j] = g_j, j = 0..2l at least)."""
    d = _check_d(d)
    pr = mode_products(d, l)
    gl = float(g[l])
    P2, P3 = float(pr["P2"]), float(pr["P3"])
    if not gl > 0:
        return ModeBifurcation(d, l, gl, "none", 0.0, 0.0, None)
    c3 = -gl * P3 / 6
    subs = {D: gl, **{_g(j): float(g[j]) for j in pr["cross"]}}
    c4 = float(quartic_coefficient_expr(d, l).subs(subs))
    if P3 != 0:
        return ModeBifurcation(d, l, gl, "transcritical", c3, c4, gl * P3 / (2 * P2 ** 2))
    if c4 == 0:
        return ModeBifurcation(d, l, gl, "degenerate", 0.0, 0.0, None)
    return ModeBifurcation(d, l, gl, "continuous" if c4 > 0 else "discontinuous", 0.0, c4, P2 ** 3 / (4 * c4))


# -- the Doi-Onsager model on the circle ---------------------------------------------------------------------
def doi_onsager_kernel(s: sp.Expr = sym.s) -> sp.Expr:
    r""":math:`W(s) = -\sqrt{1 - s^2}`: Mun-Rosenzweig's :math:`W(\theta) = -\lvert\sin(2 \pi \theta)\rvert` on
    :math:`\mathbb{T} = \mathbb{R}/\mathbb{Z}` written on :math:`\mathbb{S}^1` with :math:`s = \cos(u)`,
    :math:`u = 2 \pi \theta` the angle between the two directions
    (:math:`-\lvert\sin u\rvert = -\sqrt{1 - \cos^2 u}`).
    """
    return -sp.sqrt(1 - s ** 2)


def doi_onsager_coefficient(k: int) -> sp.Expr:
    r""":math:`g_k = \tfrac{1}{2\pi} \int_0^{2\pi} -\lvert\sin u\rvert \cos(k u)\, du` (exact):
    :math:`2/(\pi (k^2 - 1))` for even :math:`k \ge 2`, 0 for odd :math:`k`.

    :math:`\lvert\sin u\rvert` on :math:`[\pi, 2\pi]` is :math:`\sin(u - \pi)`, and
    :math:`\cos(k(v + \pi)) = (-1)^k \cos(k v)`, so the integral is
    :math:`(1 + (-1)^k) \int_0^\pi -\sin(v) \cos(k v)\, dv / (2 \pi)`; sympy integrates the last one exactly.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    v = sp.Symbol("v", real=True)
    half = sp.integrate(-sp.sin(v) * sp.cos(k * v), (v, 0, sp.pi))
    return sp.simplify((1 + (-1) ** k) * half / (2 * sp.pi))


def doi_onsager_derivation(kmax: int = 12) -> Derivation:
    r"""Doi-Onsager on :math:`\mathbb{S}^1` (noise :math:`D`, coupling :math:`K = 1/(2D)`):
    :math:`D_\# = \max_k g_k = g_2 = 2/(3 \pi)`, so :math:`K_\# = 3 \pi/4`; the degree-2 branch is a pitchfork with
    :math:`q = g_4/g_2 = 1/5 < 1/2`, continuous.

    Identities proved: :math:`g_k` (sympy integral) :math:`= 2/(\pi(k^2 - 1))` for even :math:`k` and 0 for odd
    :math:`k` (:math:`k \le k_{\max}`); :math:`1/(2 g_2) = 3 \pi/4`; :math:`g_4/g_2 = 1/5`; the degree-2 quartic
    coefficient :math:`c_4` at :math:`D = g_2` equals :math:`\tfrac{g_2}{32}\big(1 - \tfrac{1}{2(1 - q)}\big)` with
    :math:`q = 1/5` (positive).
    """
    gs = {k: doi_onsager_coefficient(k) for k in range(1, kmax + 1)}
    closed = {k: (2 / (sp.pi * (k ** 2 - 1)) if k % 2 == 0 else sp.Integer(0)) for k in gs}
    diffs = [sp.simplify(gs[k] - closed[k]) for k in gs]
    q = sp.simplify(gs[4] / gs[2])
    c4 = quartic_coefficient_expr(2, 2).subs({D: gs[2], _g(4): gs[4], _g(1): gs[1], _g(3): gs[3]})
    lhs = sp.Matrix(diffs + [sp.simplify(1 / (2 * gs[2])), q,
                             sp.simplify(c4 - gs[2] / 32 * (1 - 1 / (2 * (1 - q))))])
    rhs = sp.Matrix([0] * len(diffs) + [3 * sp.pi / 4, sp.Rational(1, 5), 0])
    return Derivation(
        title="Doi-Onsager on the circle: K_# = 3 pi/4 (D_# = 2/(3 pi)), continuous degree-2 branch",
        source=_SOURCE + "; Fourier series of |sin u|",
        lhs=lhs, rhs=rhs,
        steps=(Step("W(s) = -sqrt(1 - s^2), s = cos u", doi_onsager_kernel()),
               Step("g_k for k = 1..kmax", sp.Matrix([gs[k] for k in gs])),
               Step("q = g_4/g_2", q), Step("c_4 at D = g_2", sp.simplify(c4))),
        notes="only even modes couple: every stationary state is pi-periodic (nematic); mode 1 never destabilises")


# -- the equal-free-energy noise at high precision -------------------------------------------------------------
@dataclass(frozen=True)
class FirstOrderPoint:
    r""":math:`(D, m)` with :math:`m = G(m, D)` and :math:`\Delta F(m, D) = 0` (mpmath), and the residual of the
    system.
    """

    D: mp.mpf
    moments: list
    residual: mp.mpf
    dps: int
    nodes: int


class _ZonalQuadrature:
    """Gauss-Legendre in the angle theta in [0, pi] with the weight sin^{d-2}(theta) (normalised), and P_l at the
    nodes by the three-term recurrences, in mpmath. The integrands are analytic on [0, pi], so the rule
    converges exponentially. The nodes are mpmath's own (3 2^(degree-1) of them, computed by Newton's method)."""

    def __init__(self, d: int, L: int, degree: int):
        from mpmath.calculus.quadrature import GaussLegendre

        rule = GaussLegendre(mp.mp).calc_nodes(degree, mp.mp.prec)
        self.theta = [mp.pi * (x + 1) / 2 for x, _ in rule]
        w = [wi * mp.sin(th) ** (d - 2) for (_, wi), th in zip(rule, self.theta)]
        total = mp.fsum(w)
        self.w = [wi / total for wi in w]
        self.P = [self._profiles(d, L, mp.cos(th)) for th in self.theta]

    @staticmethod
    def _profiles(d: int, L: int, t) -> list:
        """P_1..P_L at t: T_l on the circle, C_l^lam / C_l^lam(1) (lam = (d-2)/2) otherwise."""
        lam = mp.mpf(d - 2) / 2
        prev, cur = mp.mpf(1), (t if d == 2 else 2 * lam * t)
        at_one_prev, at_one = mp.mpf(1), (mp.mpf(1) if d == 2 else 2 * lam)
        out = [cur / at_one]
        for l in range(1, L):
            if d == 2:
                prev, cur = cur, 2 * t * cur - prev
                at_one_prev, at_one = at_one, mp.mpf(1)
            else:
                nxt = (2 * (l + lam) * t * cur - (l + 2 * lam - 1) * prev) / (l + 1)
                nxt_one = (2 * (l + lam) * at_one - (l + 2 * lam - 1) * at_one_prev) / (l + 1)
                prev, cur, at_one_prev, at_one = cur, nxt, at_one, nxt_one
            out.append(cur / at_one)
        return out


def harmonic_dimensions(d: int, L: int) -> list[int]:
    r""":math:`N_l = \dim H_l`, the dimension of the spherical harmonics of degree :math:`l` on
    :math:`\mathbb{S}^{d-1}`, for :math:`l = 1, \dots, L`:
    :math:`\binom{l + d - 1}{d - 1} - \binom{l + d - 3}{d - 1}` (the second term for :math:`l \ge 2`);
    :math:`N_l = 2` on the circle (:math:`d = 2`).
    """
    from math import comb

    return [comb(l + d - 1, d - 1) - (comb(l + d - 3, d - 1) if l >= 2 else 0) if d > 2 else 2 for l in range(1, L + 1)]


def first_order_noise_mp(d: int, g, D0, m0, *, dps: int = 30, degree: int = 6, tol=None) -> FirstOrderPoint:
    r"""Solve :math:`m_l = \mathbb{E}_u[P_l e^\phi]/\mathbb{E}_u[e^\phi]` (:math:`l = 1, \dots, L`) and
    :math:`\Delta F = \tfrac{1}{2} \sum g_l N_l m_l^2 - D \log Z = 0` in mpmath at ``dps`` digits, by Newton with
    the analytic Jacobian from the guess ``(D0, m0)``; the quadrature has :math:`3 \cdot 2^{\text{degree}-1}` nodes
    (96 for degree 6).

    ``g`` = :math:`g_1, \dots, g_L` (any kernel's Funk-Hecke eigenvalues), ``m0`` of length :math:`L`; the
    truncation :math:`L` and the quadrature are the caller's (this compares the float solver with exact arithmetic
    at the same :math:`L`).
    """
    d = _check_d(d)
    with mp.workdps(dps + 10):
        L = len(m0)
        gg = [mp.mpf(x) for x in g]
        N = [mp.mpf(n) for n in harmonic_dimensions(d, L)]
        q = _ZonalQuadrature(d, L, degree)
        z = [mp.mpf(x) for x in m0] + [mp.mpf(D0)]
        tol = mp.mpf(10) ** (-dps) if tol is None else mp.mpf(tol)
        resid = mp.inf
        for _ in range(60):
            m, Dv = z[:L], z[L]
            coef = [gg[i] * N[i] * m[i] for i in range(L)]
            phi = [mp.fsum(c * p for c, p in zip(coef, row)) / Dv for row in q.P]
            top = max(phi)
            e = [wi * mp.exp(f - top) for wi, f in zip(q.w, phi)]
            Z = mp.fsum(e)
            u = [x / Z for x in e]                               # the weights of rho at the nodes
            G = [mp.fsum(ui * row[i] for ui, row in zip(u, q.P)) for i in range(L)]
            logZ = mp.log(Z) + top
            F = [m[i] - G[i] for i in range(L)] + [mp.fsum(c * mi for c, mi in zip(coef, m)) / 2 - Dv * logZ]
            resid = max(abs(x) for x in F)
            if resid < tol:
                break
            # covariances C_ij = E_rho[P_i P_j] - G_i G_j
            C = [[mp.fsum(ui * row[i] * row[j] for ui, row in zip(u, q.P)) - G[i] * G[j] for j in range(L)]
                 for i in range(L)]
            J = mp.matrix(L + 1, L + 1)
            for i in range(L):
                for j in range(L):
                    J[i, j] = (1 if i == j else 0) - C[i][j] * gg[j] * N[j] / Dv
                J[i, L] = mp.fsum(C[i][j] * coef[j] for j in range(L)) / Dv ** 2
            for j in range(L):
                J[L, j] = gg[j] * N[j] * (m[j] - G[j])
            J[L, L] = -logZ + mp.fsum(c * Gi for c, Gi in zip(coef, G)) / Dv
            step = mp.lu_solve(J, mp.matrix(F))
            z = [z[i] - step[i] for i in range(L + 1)]
        return FirstOrderPoint(+z[L], [+x for x in z[:L]], resid, dps, len(q.w))
