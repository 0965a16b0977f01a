r"""Noisy self-attention: Brownian tokens on :math:`\mathbb{S}^{d-1}` and the Fokker-Planck equation.

Particles (Stratonovich; :math:`B_i` standard Brownian motions of :math:`\mathbb{R}^d`):

.. math::

    dx_i = v_i(X)\, dt + \sqrt{2 D}\, P_{x_i} \circ dB_i, \qquad P_x = I - x x^\top,

which in Ito form reads :math:`dx_i = (v_i - D (d - 1) x_i)\, dt + \sqrt{2 D}\, P_{x_i} dB_i` (the Ito-Stratonovich
drift correction, :func:`ito_correction_derivation`); the noise part is Brownian motion on :math:`\mathbb{S}^{d-1}`
with generator :math:`D \Delta_S`. The mean-field limit is the Fokker-Planck equation

.. math::

    \partial_t \rho + \operatorname{div}_S\big(\rho\, X[\rho]\big) = D \Delta_S \rho
    \qquad \text{(density w.r.t. the surface measure)},

with :math:`X[\rho]` the mean-field velocity of :mod:`theory.meanfield`. (The survey arXiv 2512.01868 writes this
equation with both signs flipped and without the projection; the form above is what the particle system
gives: the drift transports mass along :math:`X`, the noise diffuses it.)

Linear stability of the uniform density (the Laplacian is diagonal on spherical harmonics, :math:`-l(l+d-2)`):

.. math::

    \mu_l(\beta, D) = \lambda_l(\beta) - D l (l + d - 2),

so degree :math:`l` is unstable iff :math:`D < \lambda_l / (l(l+d-2)) = \rho_0 a_l(\beta) / \beta` (``usa``; divide
by :math:`Z_0` for ``sa``). Because :math:`I_\nu(\beta)` decreases in :math:`\nu`, the largest of these is always
:math:`l = 1`: the linear-stability threshold of the uniform state is

.. math::

    \texttt{usa}: D_c(\beta) = \Gamma(d/2) (2/\beta)^{d/2-1} \frac{I_{d/2}(\beta)}{\beta}, \qquad
    \texttt{sa}: D_c = \frac{I_{d/2}(\beta)}{\beta I_{d/2-1}(\beta)},

and the first mode to become unstable when :math:`D` decreases through :math:`D_c` is :math:`l = 1` (whatever
:math:`l_{\max}(\beta)` is without noise). At :math:`\beta = 0` both give :math:`D_c = 1/d`; on the circle this is
the noisy Kuramoto threshold :math:`K_c = 2 D` with this project's coupling :math:`K = 1` (:math:`D_c = 1/2`).
:math:`D_c` is where the uniform state loses *linear* stability; it is the phase transition only for
:math:`\beta \le \beta^*(d)` (continuous case). Above :math:`\beta^*` the transition is first order, at the
equal-free-energy noise :math:`D_{1\text{st}} > D_c` (theory.noise_global, numerics.noise.transitions). Mun and
Rosenzweig (arXiv 2604.16288, 2606.05140) write the coupling :math:`K = 1/(2D)`: their :math:`K_\#` is
:math:`1/(2 D_c)`.

``usa`` is the Wasserstein gradient flow of the free energy

.. math::

    F[\rho] = D \int \rho \log \rho - E[\rho], \qquad
    E[\rho] = \tfrac{1}{2} \iint W(\langle x, y\rangle) \rho(x) \rho(y), \qquad W(s) = e^{\beta s}/\beta,

(:func:`free_energy_derivation`); its stationary points satisfy :math:`\rho = e^{(W * \rho)/D} / Z`. For zonal
densities (axially symmetric about :math:`e`) this is a fixed point in the moments
:math:`m_l = \mathbb{E}_\rho[P_l(\langle x, e\rangle)]` (:math:`P_l = C_l^{(d-2)/2}/C_l^{(d-2)/2}(1)`, :math:`T_l` on
the circle):

.. math::

    \rho(t) \propto \exp\Big( \sum_l g_l N_l m_l P_l(t) / D \Big), \qquad g_l = \rho_0 a_l(\beta)/\beta, \qquad
    N_l = \dim H_l,

(on the circle: :math:`r = I_1(r/D)/I_0(r/D)` at :math:`\beta = 0`, the Kuramoto self-consistency). The Landau
expansion of :math:`F` along the first unstable direction (:func:`landau_derivation`) gives the bifurcating branch
:math:`r^2 = (D_c - D) / (4 d^3 c_4)` with

.. math::

    c_4 = \frac{D_c}{4 d (d+2)} \Big(1 - \frac{d - 1}{d (1 - q)}\Big), \qquad
    q = \frac{g_2}{g_1} = \frac{I_{d/2+1}(\beta)}{I_{d/2}(\beta)},

so the transition is continuous (supercritical) iff :math:`q < 1/d` and discontinuous (subcritical, with hysteresis)
iff :math:`q > 1/d`; :math:`q` increases from 0 to 1 with :math:`\beta`, so it is continuous for
:math:`\beta < \beta^*(d)` and discontinuous above (:func:`discontinuity_threshold`).

Verified by: noise.brownian-moments, noise.kuramoto, noise.threshold, noise.bifurcation (numerics.noise.claims);
tests/theory/test_noise_theory.py. Notes: ``proofs_notes/noise-*.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath as mp
import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step
from .meanfield import growth_rate, growth_rate_expr

_SOURCE = ("noisy mean-field self-attention: Fokker-Planck d rho/dt + div(rho X[rho]) = D Lap rho "
           "(GLPR arXiv 2312.10794 mean field; Shalova-Schlichting arXiv 2412.14813, noisy transformers on the "
           "sphere; Bertini-Giacomin-Pakdaman 2010, noisy Kuramoto)")
#: the noise strength D (diffusion coefficient: generator D Lap_S)
D = sp.Symbol("D", positive=True)


def _check_d(d) -> int:
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    return d


def laplacian_eigenvalue(l: int, d: int) -> int:
    r""":math:`l (l + d - 2)`: minus the eigenvalue of :math:`\Delta_S` on degree-:math:`l` spherical harmonics of
    :math:`\mathbb{S}^{d-1}`.
    """
    return l * (l + _check_d(d) - 2)


# -- Ito correction ----------------------------------------------------------------------------------------
def ito_correction_derivation(d: int) -> Derivation:
    r"""Stratonovich :math:`\sqrt{2D} P_x \circ dB` has the Ito drift
    :math:`\tfrac{1}{2} \sum_k (Db_k) b_k = -D (d-1) x` on the sphere.

    :math:`b_k(x) = \sqrt{2 D} P_x e_k` with :math:`P_x = I - x x^\top` extended off the sphere by the same formula;
    the identity proved is :math:`D \sum_{j,k} \partial_j(P)_{ik} P_{jk} = -D (d - 1 + \dots) x_i` evaluated at
    :math:`\lVert x\rVert^2 = 1`.
    """
    d = _check_d(d)
    x = sym.vector("x", d)
    P = sp.eye(d) - x * x.T
    drift = sp.Matrix([D * sum(sp.diff(P[i, k], x[j]) * P[j, k] for j in range(d) for k in range(d))
                       for i in range(d)])
    r2 = sp.Symbol("r2", positive=True)
    on_sphere = sp.simplify(drift.subs(x[0] ** 2, r2 - sum(xi ** 2 for xi in x[1:])).subs(r2, 1))
    return Derivation(
        title=f"Ito drift of the Stratonovich noise sqrt(2D) P_x o dB on S^{d - 1}",
        source="Hsu, Stochastic Analysis on Manifolds (2002), Brownian motion on embedded spheres",
        lhs=sp.expand(on_sphere), rhs=-(d - 1) * D * x,
        steps=(Step("P_x = I - x x^T", P), Step("(1/2) sum_k (Db_k) b_k with b_k = sqrt(2D) P e_k", drift)),
        notes="the drift is normal to the sphere; the projected Euler step's renormalisation produces it to "
              "first order, so that scheme must not add it again")


# -- linear stability with noise ----------------------------------------------------------------------------
def noisy_growth_rate_expr(model: str, d: int, l=sym.l, beta=sym.beta) -> sp.Expr:
    r""":math:`\mu_l(\beta, D) = \lambda_l(\beta) - D l(l+d-2)` (sympy, :math:`\beta > 0` form)."""
    return growth_rate_expr(model, d, l, beta) - D * l * (l + d - 2)


def critical_noise_expr(model: str, d: int, beta=sym.beta) -> sp.Expr:
    r""":math:`D_c(\beta) = \lambda_1(\beta)/(d-1)`: ``usa``
    :math:`\Gamma(d/2)(2/\beta)^{d/2-1} I_{d/2}(\beta)/\beta`; ``sa`` :math:`I_{d/2}/(\beta I_{d/2-1})`.
    """
    d = _check_d(d)
    return sp.simplify(growth_rate_expr(model, d, 1, beta) / (d - 1))


def linear_stability_derivation(model: str, d: int) -> Derivation:
    r"""The degree-:math:`l` rate with noise: linearising :math:`D \Delta_S \rho` at
    :math:`\rho_0 + \varepsilon Y_l` adds :math:`-D l(l+d-2)` to :math:`\lambda_l`.

    Identity proved: :math:`\tfrac{d}{d\varepsilon}` of :math:`D \Delta(\rho_0 + \varepsilon Y) = -D L Y` with
    :math:`L = l(l+d-2)` (abstract harmonic :math:`Y`), plus the noiseless rate of
    :func:`theory.meanfield.linearization_derivation`; and :math:`\mu_1(\beta, D_c) = 0`.
    """
    from .meanfield import linearization_derivation

    eps, Y, L, rho0 = sp.symbols("epsilon Y L rho_0", real=True)
    lap = -L * Y                                   # Lap Y = -L Y; Lap rho_0 = 0
    noise_term = sp.diff(D * (0 + eps * lap), eps)
    base = linearization_derivation(model, d)
    total = base.rhs + noise_term.subs(L, sym.l * (sym.l + d - 2))
    crit = noisy_growth_rate_expr(model, d, 1).subs(D, critical_noise_expr(model, d))
    return Derivation(
        title=f"{model} on S^{d - 1} with noise: mu_l = lambda_l(beta) - D l(l+d-2); mu_1(D_c) = 0",
        source=_SOURCE, lhs=sp.Matrix([total, sp.simplify(crit)]),
        rhs=sp.Matrix([noisy_growth_rate_expr(model, d) * Y, 0]),
        steps=(Step("noiseless linearisation (theory.meanfield)", base.rhs),
               Step("noise term: d/d eps D Lap(rho_0 + eps Y) = -D L Y", noise_term),
               Step("critical noise D_c = lambda_1/(d-1)", critical_noise_expr(model, d))),
        notes="Lap_S Y_l = -l(l+d-2) Y_l; rho_0 is constant so Lap rho_0 = 0")


def critical_noise(model: str, d: int, beta, lmax: int = 40, dps: int = 20) -> tuple[float, int]:
    r""":math:`(D_c, l^*)`: the linear-stability threshold of the uniform state, the maximum over
    :math:`1 \le l \le l_{\max}` of :math:`\lambda_l(\beta)/(l(l+d-2))`, and the degree attaining it (mpmath).

    For every real :math:`\beta` the maximiser is :math:`l^* = 1` (checked here over :math:`l \le l_{\max}`, not
    assumed); :math:`D_c \le 0` means no degree is unstable for any :math:`D \ge 0`. :math:`D_c` is the noise of the
    phase transition only for :math:`\beta \le \beta^*(d)`; above, the transition (first order) happens at a larger
    noise. Also available as :func:`linear_stability_threshold`, the name used in the documentation.
    """
    d = _check_d(d)
    vals = [(float(growth_rate(model, d, l, beta, dps=dps) / laplacian_eigenvalue(l, d)), l)
            for l in range(1, lmax + 1)]
    best = max(vals)
    return best[0], best[1]


#: D_c under the name the documentation uses (``critical_noise`` is the original name, kept)
linear_stability_threshold = critical_noise


def first_unstable_degree(model: str, d: int, beta, D_value: float, lmax: int = 40) -> int | None:
    r"""The degree with the largest :math:`\mu_l(\beta, D)` if it is positive, else None (the uniform state is
    stable).
    """
    d = _check_d(d)
    mus = [float(growth_rate(model, d, l, beta)) - D_value * laplacian_eigenvalue(l, d) for l in range(1, lmax + 1)]
    i = max(range(len(mus)), key=lambda j: mus[j])
    return i + 1 if mus[i] > 0 else None


# -- free energy ---------------------------------------------------------------------------------------------
def free_energy_derivation() -> Derivation:
    r"""``usa`` Fokker-Planck = Wasserstein gradient flow of
    :math:`F = D \int \rho \log \rho - \tfrac{1}{2} \iint W \rho \rho`.

    With :math:`\Phi = W * \rho` (so that :math:`X_{\texttt{usa}}[\rho] = \nabla \Phi`) and
    :math:`\delta F/\delta \rho = D(\log \rho + 1) - \Phi`, proved in one variable on the circle with abstract
    functions :math:`\rho(\theta)`, :math:`\Phi(\theta)`:

    .. math::

        \frac{d}{d\theta}\Big( \rho \frac{d}{d\theta} \frac{\delta F}{\delta \rho} \Big)
        = D \rho'' - \frac{d}{d\theta}(\rho \Phi'),

    the right-hand side of the Fokker-Planck equation. (The same computation holds on :math:`\mathbb{S}^{d-1}` with
    div and grad: :math:`\operatorname{div}(\rho \nabla \log \rho) = \Delta \rho`.) Hence
    :math:`dF/dt = - \int \rho \lvert\nabla(\delta F/\delta \rho)\rvert^2 \le 0`.
    """
    th = sym.theta
    rho, Phi = sp.Function("rho")(th), sp.Function("Phi")(th)
    dF = D * (sp.log(rho) + 1) - Phi
    lhs = sp.diff(rho * sp.diff(dF, th), th)
    rhs = D * sp.diff(rho, th, 2) - sp.diff(rho * sp.diff(Phi, th), th)
    return Derivation(
        title="usa with noise is the Wasserstein gradient flow of F = D int rho log rho - E[rho]",
        source=_SOURCE, lhs=sp.expand(lhs), rhs=sp.expand(rhs),
        steps=(Step("first variation delta F / delta rho", dF),),
        notes="E[rho] = (1/2) int int e^{beta<x,y>}/beta rho rho: the mean-field E_beta (GLPR's minus a constant); "
              "usa = gradient ascent of E, so F has -E")


# -- zonal moments and the Landau expansion ----------------------------------------------------------------
def sphere_moment(d: int, power: int) -> sp.Expr:
    r""":math:`\mathbb{E}[x_1^p]` (``power`` :math:`= p`) for :math:`x` uniform on :math:`\mathbb{S}^{d-1}`; 0 for
    odd powers.

    :math:`d = 2`: :math:`\tfrac{1}{2\pi} \int_0^{2\pi} \cos^p` (sympy). :math:`d \ge 3`: :math:`t = x_1` has
    density proportional to :math:`(1-t^2)^{(d-3)/2}`, and
    :math:`\int_{-1}^{1} t^{2k} (1-t^2)^a\, dt = B(k + 1/2, a + 1)`, so the moment is
    :math:`B(k+1/2, a+1)/B(1/2, a+1)` with :math:`a = (d-3)/2`. The closed form
    :math:`\Gamma(d/2) \Gamma((p+1)/2)/(\sqrt{\pi}\, \Gamma((p+d)/2))` and mpmath quadrature are compared with it in
    tests/theory/test_noise_theory.py.
    """
    d = _check_d(d)
    if power % 2:
        return sp.Integer(0)
    if d == 2:
        th = sp.Symbol("vartheta", real=True)
        return sp.integrate(sp.cos(th) ** power, (th, 0, 2 * sp.pi)) / (2 * sp.pi)
    a, k = sp.Rational(d - 3, 2), sp.Rational(power, 2)
    beta_fn = lambda x, y: sp.gamma(x) * sp.gamma(y) / sp.gamma(x + y)  # noqa: E731
    return sp.simplify(beta_fn(k + sp.Rational(1, 2), a + 1) / beta_fn(sp.Rational(1, 2), a + 1))


def landau_derivation(d: int) -> Derivation:
    r"""Quartic Landau coefficient of :math:`F` along the first unstable mode, and the branch near :math:`D_c`
    (``usa``).

    :math:`\rho = \rho_0 (1 + \varepsilon Y + \varepsilon^2 h)`, :math:`Y = x_1` (degree 1), :math:`h` slaved in
    degree 2 (:math:`Y^2 = 1/d + (x_1^2 - 1/d)`).

    .. math::

        F/\lvert S\rvert = \tfrac{1}{2} \sum_l (D - g_l) \langle u_l^2\rangle
        + D \langle -u^3/6 + u^4/12\rangle + O(u^5)

    (uniform averages :math:`\langle\cdot\rangle`, :math:`g_l = \rho_0 a_l/\beta`). Minimising over :math:`h` gives
    :math:`F = \tfrac{1}{2}(D - g_1)\langle Y^2\rangle \varepsilon^2 + c_4 \varepsilon^4` with

    .. math::

        c_4 = D\langle Y^4\rangle/12 - D^2 \langle (P_2 Y^2)^2\rangle / (8 (D - g_2)).

    The identity proved: :math:`c_4` at :math:`D = g_1` equals
    :math:`\tfrac{g_1}{4d(d+2)} \big(1 - \tfrac{d-1}{d(1-q)}\big)` with :math:`q = g_2/g_1`; and the branch
    :math:`r = \langle x_1\rangle = \varepsilon/d` satisfies :math:`r^2 = (g_1 - D)/(4 d^3 c_4)`.
    """
    d = _check_d(d)
    u = sp.Symbol("u")
    entropy = sp.series((1 + u) * sp.log(1 + u), u, 0, 5).removeO()
    g1, g2, q, eps = sp.symbols("g_1 g_2 q epsilon", positive=True)
    m2, m4 = sphere_moment(d, 2), sphere_moment(d, 4)
    p2sq = sp.simplify(m4 - m2 ** 2)                     # <(x_1^2 - 1/d)^2>
    hcoef = sp.Symbol("h_2", real=True)                  # h = h_2 (x_1^2 - 1/d)
    # eps^4 terms of F: quadratic part in h, cubic entropy cross term, quartic entropy term
    F4 = (sp.Rational(1, 2) * (D - g2) * hcoef ** 2 * p2sq - D / 2 * hcoef * p2sq + D * m4 / 12)
    hstar = sp.solve(sp.diff(F4, hcoef), hcoef)[0]
    c4 = sp.simplify(F4.subs(hcoef, hstar))
    c4_crit = sp.simplify(c4.subs({D: g1, g2: q * g1}))
    closed = g1 / (4 * d * (d + 2)) * (1 - sp.Rational(d - 1, d) / (1 - q))
    r2 = sp.simplify((g1 - D) * m2 / (4 * c4_crit) / d ** 2)
    branch_closed = (g1 - D) / (4 * d ** 3 * closed)
    return Derivation(
        title=f"Landau expansion of the usa free energy on S^{d - 1} at D_c: quartic coefficient and branch",
        source=_SOURCE,
        lhs=sp.Matrix([sp.simplify(c4_crit - closed), sp.simplify(r2 - branch_closed)]),
        rhs=sp.Matrix([0, 0]),
        steps=(Step("(1+u) log(1+u) to order 4", entropy),
               Step("moments <x_1^2>, <x_1^4>, <(x_1^2 - 1/d)^2>", sp.Matrix([m2, m4, p2sq])),
               Step("slaved degree-2 amplitude h_2", hstar),
               Step("c_4(D)", c4), Step("c_4 at D = g_1, g_2 = q g_1", c4_crit),
               Step("branch r^2 (r = <x_1> = eps <Y^2>)", r2)),
        notes="continuous (supercritical) iff c_4 > 0 iff q < 1/d; rho_0 = 1/|S^{d-1}|")


def quartic_sign_threshold(d: int) -> sp.Rational:
    r"""The critical value :math:`1/d` of :math:`q = I_{d/2+1}(\beta)/I_{d/2}(\beta)`: continuous below,
    discontinuous above.
    """
    return sp.Rational(1, _check_d(d))


def coupling(d: int, l: int, beta, dps: int = 20) -> mp.mpf:
    r""":math:`g_l(\beta) = \rho_0 a_l(\beta)/\beta = \lambda_l^{\texttt{usa}}(\beta)/(l(l+d-2))`
    (:math:`\beta = 0`: :math:`1/d` for :math:`l = 1`, 0 for :math:`l \ge 2`).
    """
    d = _check_d(d)
    if l == 0:
        raise ValueError("g_0 is not used (mass conservation)")
    with mp.workdps(dps):   # the division too: outside, it would round to the caller's precision
        return growth_rate("usa", d, l, beta, dps=dps) / laplacian_eigenvalue(l, d)


def bessel_ratio(d: int, beta, dps: int = 30) -> mp.mpf:
    r""":math:`q(\beta) = g_2/g_1 = I_{d/2+1}(\beta)/I_{d/2}(\beta)` (:math:`\beta > 0`; 0 at :math:`\beta = 0`)."""
    d = _check_d(d)
    with mp.workdps(dps):
        b = mp.mpf(beta)
        if b == 0:
            return mp.mpf(0)
        return mp.besseli(mp.mpf(d) / 2 + 1, b) / mp.besseli(mp.mpf(d) / 2, b)


@lru_cache(maxsize=32)
def discontinuity_threshold(d: int, dps: int = 30) -> float:
    r""":math:`\beta^*(d) > 0` where :math:`q(\beta) = 1/d`: ``usa``'s transition at :math:`D_c` is continuous for
    :math:`\beta < \beta^*`, discontinuous above."""
    d = _check_d(d)
    with mp.workdps(dps):
        f = lambda b: bessel_ratio(d, b, dps) - mp.mpf(1) / d  # noqa: E731
        lo, hi = mp.mpf("0.01"), mp.mpf(1)
        while f(hi) < 0:
            lo, hi = hi, 2 * hi
        return float(mp.findroot(f, (lo, hi), solver="anderson"))


@dataclass(frozen=True)
class Bifurcation:
    r"""The ``usa`` bifurcation at :math:`D_c`: type, Landau coefficient and the branch slope
    :math:`r^2 = \text{slope}\,(D_c - D)`.
    """

    d: int
    beta: float
    critical_noise: float
    q: float
    quartic: float        # c_4 at D_c
    continuous: bool
    slope: float          # r^2 ~ slope * (D_c - D); negative: the branch exists for D > D_c (subcritical)


#: :math:`|\beta - \beta^*| \le` this times :math:`\beta^*` counts as :math:`\beta = \beta^*` (8 units of the last
#: place: the sign of the quartic coefficient is not resolved closer in double precision)
BETA_STAR_TOLERANCE = 8 * 2.0 ** -52


def bifurcation(d: int, beta: float) -> Bifurcation:
    r"""Numbers of :func:`landau_derivation` at ``(d, beta)``, ``usa``.

    At :math:`\beta = \beta^*(d)` (within :data:`BETA_STAR_TOLERANCE`) the quartic coefficient vanishes: the
    transition is continuous there (Mun-Rosenzweig count the point as continuous; the branch is
    :math:`D_c - D \sim r^4`, measured by noise.global-first-order), ``quartic`` is 0 and ``slope`` infinite.
    """
    d = _check_d(d)
    g1 = float(coupling(d, 1, beta))
    q = float(bessel_ratio(d, beta)) if beta > 0 else float(coupling(d, 2, beta) / coupling(d, 1, beta))
    c4 = g1 / (4 * d * (d + 2)) * (1 - (d - 1) / (d * (1 - q)))
    if c4 == 0 or (beta > 0 and abs(beta - discontinuity_threshold(d)) <= BETA_STAR_TOLERANCE * beta):
        return Bifurcation(d, float(beta), g1, q, 0.0, True, math.inf)
    return Bifurcation(d, float(beta), g1, q, c4, c4 > 0, 1.0 / (4 * d ** 3 * c4))


def _bisect(f, lo, hi, iterations: int = 200):
    """Root of f in [lo, hi] with f(lo) < 0 < f(hi), by bisection (robust near the bifurcation, where r -> 0)."""
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def kuramoto_order_parameter(D_value: float, dps: int = 30) -> float:
    r"""Positive root :math:`r` of :math:`r = I_1(r/D)/I_0(r/D)` (``usa``, :math:`\beta = 0`, :math:`d = 2`); 0 for
    :math:`D \ge 1/2` (:math:`= D_c`).
    """
    if D_value >= 0.5:
        return 0.0
    with mp.workdps(dps):
        Dm = mp.mpf(D_value)
        f = lambda r: r - mp.besseli(1, r / Dm) / mp.besseli(0, r / Dm)  # noqa: E731
        return float(_bisect(f, mp.mpf(10) ** (-dps // 2), mp.mpf(1)))


def von_mises_order_parameter(d: int, D_value: float, dps: int = 30) -> float:
    r""":math:`\beta = 0` in any :math:`d`: :math:`r = A_d(r/D)`, :math:`A_d(k) = I_{d/2}(k)/I_{d/2-1}(k)` (von
    Mises-Fisher); 0 for :math:`D \ge 1/d`.
    """
    d = _check_d(d)
    if D_value >= 1.0 / d:
        return 0.0
    with mp.workdps(dps):
        Dm, nu = mp.mpf(D_value), mp.mpf(d) / 2
        f = lambda r: r - mp.besseli(nu, r / Dm) / mp.besseli(nu - 1, r / Dm)  # noqa: E731
        return float(_bisect(f, mp.mpf(10) ** (-dps // 2), mp.mpf(1)))


# -- the weak-order-2 geodesic step --------------------------------------------------------------------------
def zonal_taylor_derivation(d: int) -> Derivation:
    r"""Spherical means: the normalised zonal profile
    :math:`g(\psi) = P_l(\cos \psi) = 1 + a \psi^2 + b \psi^4 + O(\psi^6)` with :math:`a = -\kappa/(2(d-1))`,
    :math:`b = \kappa(\kappa - 2(d-2)/3)/(8(d-1)(d+1))`, :math:`\kappa = l(l+d-2)`.

    Derived from :math:`g'' + (d-2) \cot(\psi) g' + \kappa g = 0` (Laplacian in geodesic polar coordinates) by
    series; checked here against the Gegenbauer polynomial for :math:`l = 1, \dots, 4`. Consequence (weak order 2 of
    the isotropic geodesic step with squared length :math:`s`):
    :math:`\mathbb{E} g = 1 - D \kappa h + D^2 \kappa^2 h^2/2 + O(h^3)` for all :math:`l` iff

    .. math::

        \mathbb{E} s = 2(d-1)D h - \tfrac{2}{3}(d-1)(d-2) D^2 h^2 + O(h^3), \qquad
        \mathbb{E} s^2 = 4(d-1)(d+1) D^2 h^2 + O(h^3);

    the tangent Gaussian of variance :math:`2 D h (1 - (d-2) D h/3)` per direction does both.
    """
    from .meanfield import zonal_profile

    d = _check_d(d)
    psi, kap = sp.symbols("psi kappa", positive=True)
    a = -kap / (2 * (d - 1))
    b = kap * (kap - sp.Rational(2 * (d - 2), 3)) / (8 * (d - 1) * (d + 1))
    diffs = []
    for l in range(1, 5):
        series = sp.series(zonal_profile(d, l, sym.s).subs(sym.s, sp.cos(psi)), psi, 0, 6).removeO()
        expected = 1 + (a * psi ** 2 + b * psi ** 4).subs(kap, l * (l + d - 2))
        diffs.append(sp.simplify(sp.expand(series - expected)))
    h = sp.Symbol("h", positive=True)
    Es = 2 * (d - 1) * D * h * (1 - sp.Rational(d - 2, 3) * D * h)
    Es2 = 4 * (d - 1) * (d + 1) * D ** 2 * h ** 2
    weak = sp.expand(1 + a * Es + b * Es2 - (1 - D * kap * h + D ** 2 * kap ** 2 * h ** 2 / 2))
    weak = sp.simplify(weak - weak.coeff(h, 3) * h ** 3 - weak.coeff(h, 4) * h ** 4)
    return Derivation(
        title=f"Zonal Taylor coefficients on S^{d - 1} and the weak-order-2 geodesic step",
        source="spherical mean-value expansion (Helgason); Brownian motion on S^{d-1}",
        lhs=sp.Matrix(diffs + [weak]), rhs=sp.zeros(5, 1),
        steps=(Step("a (psi^2 coefficient)", a), Step("b (psi^4 coefficient)", b),
               Step("E s and E s^2 of the corrected tangent Gaussian", sp.Matrix([Es, Es2]))),
        notes="d = 2: b = kappa^2/24 and the correction vanishes (the circle is flat)")


def brownian_correlation(d: int, D_value: float, t: float) -> float:
    r""":math:`\mathbb{E}\langle x(t), x(0)\rangle = e^{-D (d-1) t}` for Brownian motion on :math:`\mathbb{S}^{d-1}`
    with generator :math:`D \Delta_S`.
    """
    return math.exp(-D_value * (_check_d(d) - 1) * t)
