r"""Mean-field linearisation of self-attention dynamics around the uniform measure on :math:`\mathbb{S}^{d-1}`.

The continuity equation (GLPR, arXiv 2312.10794; BPA, arXiv 2410.23228)

.. math::

    \partial_t \rho + \operatorname{div}\big(\rho\, X[\rho]\big) = 0, \qquad
    \rho \text{ a density w.r.t. the surface measure of } \mathbb{S}^{d-1},

with the mean-field velocity (docs/conventions.md, :math:`Q = K = V = I`, natural time unit)

.. math::

    \begin{aligned}
    \texttt{usa}:\quad X[\rho](x) &= P_x \int e^{\beta\langle x, y\rangle} y\, \rho(y)\, dy
        = \nabla_S (W * \rho)(x), \\
    \texttt{sa}:\quad X[\rho](x) &= P_x \int e^{\beta\langle x, y\rangle} y\, \rho(y)\, dy \,/\, Z(x)
        = \nabla_S (W * \rho)(x) \,/\, \big(\beta (W * \rho)(x)\big),
    \end{aligned}

where :math:`W(s) = e^{\beta s} / \beta`, :math:`(W * \rho)(x) = \int W(\langle x, y\rangle) \rho(y)\, dy` and
:math:`Z = \beta (W * \rho)`. The uniform probability density :math:`\rho_0 = 1/\lvert\mathbb{S}^{d-1}\rvert` is
stationary (:math:`W * \rho_0` is constant), and around it

.. math::

    \partial_t \rho_1 = - \rho_0 \Delta_S (W * \rho_1) / D_0, \qquad
    D_0 = 1 \ (\texttt{usa}), \qquad D_0 = Z_0 = \beta \rho_0 (W * 1) \ (\texttt{sa}).

A spherical harmonic :math:`Y_l` of degree :math:`l` is an eigenfunction of both :math:`\Delta_S` (eigenvalue
:math:`-l(l+d-2)`) and of the convolution (Funk-Hecke: :math:`W * Y_l = \tfrac{a_l(\beta)}{\beta} Y_l`) with

.. math::

    \begin{aligned}
    a_l(\beta) &= \lvert\mathbb{S}^{d-2}\rvert \int_{-1}^{1} e^{\beta t}
        \frac{C_l^{(d-2)/2}(t)}{C_l^{(d-2)/2}(1)} (1-t^2)^{(d-3)/2}\, dt \\
    &= (2 \pi)^{d/2} \beta^{1-d/2} I_{l+d/2-1}(\beta)
    \end{aligned}

(:math:`d = 2`: :math:`T_l` in place of :math:`C_l/C_l(1)`), so degree :math:`l` grows at

.. math::

    \begin{aligned}
    \lambda_l^{\texttt{usa}}(\beta) &= l (l+d-2)\, \Gamma(d/2) (2/\beta)^{d/2-1} I_{l+d/2-1}(\beta) / \beta, \\
    \lambda_l^{\texttt{sa}}(\beta) &= \lambda_l^{\texttt{usa}}(\beta) / Z_0(\beta), \qquad
        Z_0 = \Gamma(d/2) (2/\beta)^{d/2-1} I_{d/2-1}(\beta).
    \end{aligned}

On :math:`\mathbb{S}^1` this is :math:`\lambda_k^{\texttt{usa}} = k^2 I_k(\beta)/\beta` and
:math:`\lambda_k^{\texttt{sa}} = k^2 I_k(\beta)/(\beta I_0(\beta))`. The fastest degree :math:`l_{\max}(\beta)` does
not depend on the model (the two rates differ by a factor independent of :math:`l`) and its switch points are the
roots of :math:`\lambda_{l+1} = \lambda_l`, a pure Bessel-ratio equation.

Everything here is sympy and mpmath; :func:`growth_rate_function` emits the overflow-safe NumPy callable through
:mod:`theory.codegen` (``scipy.special.ive``).

Verified by: meanfield.funk-hecke, meanfield.pde-rates, meanfield.particle-rates.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import lru_cache

import mpmath as mp
import sympy as sp

from . import codegen
from . import symbols as sym
from .derivation import Derivation, Step

GROWTH_MODELS = ("usa", "sa")
TIME_UNITS = ("natural", "rescaled")
#: ratio :math:`\lambda_{l_{\max}} / \lambda_{\text{runner-up}}` below which :func:`dominant_degree` reports a near tie
NEAR_TIE_RATIO = 1.05

_SOURCE = "BPA arXiv 2410.23228, linearisation around the uniform measure; GLPR arXiv 2312.10794, mean-field SA/USA"


def _check_d(d) -> int:
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    return d


def _check_l(l) -> int:  # noqa: E741 - degree
    if isinstance(l, bool) or not isinstance(l, int) or l < 0:
        raise ValueError(f"degree l must be an integer >= 0, got {l!r}")
    return l


def _check_model(model) -> str:
    if model not in GROWTH_MODELS:
        raise ValueError(f"model must be one of {', '.join(GROWTH_MODELS)}; got {model!r}")
    return model


# -- geometry constants --------------------------------------------------------------------------------------
def gegenbauer_parameter(d: int) -> sp.Rational:
    r""":math:`\lambda = (d - 2)/2`, the Gegenbauer index of zonal harmonics on :math:`\mathbb{S}^{d-1}` (0 on the
    circle).
    """
    return sp.Rational(_check_d(d) - 2, 2)


def sphere_area(dim_ambient: int) -> sp.Expr:
    r""":math:`\lvert\mathbb{S}^{m-1}\rvert = 2 \pi^{m/2} / \Gamma(m/2)`, the surface area of the unit sphere of
    :math:`\mathbb{R}^m` (:math:`m \ge 1`; :math:`\lvert\mathbb{S}^0\rvert = 2`).
    """
    m = sp.Integer(dim_ambient)
    return sp.simplify(2 * sp.pi ** (m / 2) / sp.gamma(m / 2))


def uniform_density(d: int) -> sp.Expr:
    r""":math:`\rho_0 = 1/\lvert\mathbb{S}^{d-1}\rvert`: the uniform probability density w.r.t. the surface measure."""
    return 1 / sphere_area(_check_d(d))


def zonal_profile(d: int, l: int, t: sp.Symbol = sym.s) -> sp.Expr:
    """:math:`C_l^{(d-2)/2}(t) / C_l^{(d-2)/2}(1)`; on the circle (parameter 0) the limit :math:`T_l(t)`
    (Chebyshev).
    """
    _check_d(d)
    _check_l(l)
    lam = gegenbauer_parameter(d)
    if lam == 0:  # the d = 2 path: C_l^lambda / C_l^lambda(1) -> T_l as lambda -> 0
        return sp.chebyshevt(l, t)
    return sp.expand(sp.gegenbauer(l, lam, t) / sp.gegenbauer(l, lam, 1))


# -- Funk-Hecke coefficients of e^{beta t} -------------------------------------------------------------------
def funk_hecke_closed_form(d: int, l=sym.l, beta=sym.beta) -> sp.Expr:
    r""":math:`a_l(\beta) = (2 \pi)^{d/2} \beta^{1-d/2} I_{l+d/2-1}(\beta)` (sympy; :math:`\beta > 0` for
    half-integer orders).

    :math:`\int_{\mathbb{S}^{d-1}} e^{\beta\langle x, y\rangle} Y_l(y)\, dy = a_l(\beta) Y_l(x)` for every spherical
    harmonic :math:`Y_l` of degree :math:`l` (surface measure, not normalised). :math:`d = 2`:
    :math:`a_l = 2 \pi I_l(\beta)`.

    Verified by: meanfield.funk-hecke.
    """
    d = _check_d(d)
    return (2 * sp.pi) ** sp.Rational(d, 2) * beta ** (1 - sp.Rational(d, 2)) * sp.besseli(l + sp.Rational(d, 2) - 1, beta)


def funk_hecke_integral(d: int, l: int, beta=sym.beta) -> sp.Integral:
    r"""The defining Funk-Hecke integral of :math:`e^{\beta t}` for degree :math:`l`, unevaluated, in the angle
    :math:`t = \cos\theta`.

    :math:`\lvert\mathbb{S}^{d-2}\rvert \int_0^\pi e^{\beta \cos \theta} P(\cos \theta) \sin(\theta)^{d-2}\,
    d\theta`, :math:`P` = :func:`zonal_profile` (the substitution :math:`t = \cos \theta` removes the endpoint
    singularity of :math:`(1-t^2)^{(d-3)/2}` at :math:`d = 2`).
    """
    th = sp.Symbol("vartheta", real=True)
    profile = zonal_profile(d, l, sym.s).subs(sym.s, sp.cos(th))
    return sphere_area(d - 1) * sp.Integral(sp.exp(beta * sp.cos(th)) * profile * sp.sin(th) ** (d - 2), (th, 0, sp.pi))


def funk_hecke_quadrature(d: int, l: int, beta, dps: int = 30) -> mp.mpf:
    r""":math:`a_l(\beta)` by mpmath tanh-sinh quadrature of :func:`funk_hecke_integral` at ``dps`` digits."""
    d, l = _check_d(d), _check_l(l)
    with mp.workdps(dps):
        b = mp.mpf(beta)
        lam = mp.mpf(d - 2) / 2
        if d == 2:
            def profile(x):
                return mp.cos(l * x)  # T_l(cos x) = cos(l x)
        else:
            def profile(x):
                return _gegenbauer_ratio(l, lam, mp.cos(x))
        area = 2 * mp.pi ** (mp.mpf(d - 1) / 2) / mp.gamma(mp.mpf(d - 1) / 2)
        # split at pi/2 so that the peak of e^{beta cos} and the oscillation of the profile are resolved
        value = area * mp.quad(lambda x: mp.exp(b * mp.cos(x)) * profile(x) * mp.sin(x) ** (d - 2),
                               [0, mp.pi / 2, mp.pi])
    return +value


def _gegenbauer_ratio(l: int, lam, x):
    """C_l^lam(x) / C_l^lam(1) in mpmath by the three-term recurrence (faster than the hypergeometric form)."""
    prev, cur = mp.mpf(1), 2 * lam * x
    nprev, ncur = mp.mpf(1), 2 * lam
    if l == 0:
        return prev
    for m in range(1, l):
        prev, cur = cur, (2 * (m + lam) * x * cur - (m + 2 * lam - 1) * prev) / (m + 1)
        nprev, ncur = ncur, (2 * (m + lam) * ncur - (m + 2 * lam - 1) * nprev) / (m + 1)
    return cur / ncur


def funk_hecke_value(d: int, l: int, beta, dps: int = 30) -> mp.mpf:
    r""":math:`a_l(\beta)` from the closed form (mpmath), valid for any real :math:`\beta`
    (:math:`a_l(-b) = (-1)^l a_l(b)`); :math:`a_l(0) = 0` for :math:`l \ge 1` and
    :math:`\lvert\mathbb{S}^{d-1}\rvert` for :math:`l = 0`.
    """
    d, l = _check_d(d), _check_l(l)
    with mp.workdps(dps):
        b = mp.mpf(beta)
        if b == 0:
            return mp.mpf(0) if l else +(2 * mp.pi ** (mp.mpf(d) / 2) / mp.gamma(mp.mpf(d) / 2))
        lam = mp.mpf(d - 2) / 2
        sign = 1 if (b > 0 or l % 2 == 0) else -1
        ab = abs(b)
        return +(sign * (2 * mp.pi) ** (mp.mpf(d) / 2) * ab ** (1 - mp.mpf(d) / 2) * mp.besseli(l + lam, ab))


def funk_hecke_series_derivation(d: int, l: int, order: int = 12) -> Derivation:
    r"""Exact Taylor coefficients (in :math:`\beta`, up to ``order``) of the Funk-Hecke integral and of the Bessel
    form.

    Left: :math:`\lvert\mathbb{S}^{d-2}\rvert \sum_m \tfrac{\beta^m}{m!} \int_{-1}^1 t^m P_l(t) (1-t^2)^{(d-3)/2}\,
    dt`, each moment computed exactly with
    :math:`\int_{-1}^1 t^{2q} (1-t^2)^a\, dt = \Gamma(q+1/2) \Gamma(a+1) / \Gamma(q+a+3/2)`. Right: the power series
    :math:`I_\nu(\beta) = \sum_j (\beta/2)^{2j+\nu} / (j!\, \Gamma(j+\nu+1))` in the closed form. Two independent
    routes; the identity holds coefficient by coefficient (``verify()`` proves it by simplification).
    """
    d, l = _check_d(d), _check_l(l)
    t, b = sym.s, sym.beta
    a = sp.Rational(d - 3, 2)
    profile = sp.Poly(zonal_profile(d, l, t), t)

    def moment(p: int) -> sp.Expr:
        if p % 2:
            return sp.Integer(0)
        q = p // 2
        return sp.gamma(sp.Rational(2 * q + 1, 2)) * sp.gamma(a + 1) / sp.gamma(q + a + sp.Rational(3, 2))

    lhs = 0
    for m in range(order + 1):
        integral = sum(coef * moment(m + e[0]) for e, coef in profile.terms())
        lhs += sp.nsimplify(sphere_area(d - 1) * integral) * b**m / sp.factorial(m)
    lam = gegenbauer_parameter(d)
    rhs = 0
    j = 0
    while 2 * j + l <= order:
        rhs += (2 * sp.pi) ** sp.Rational(d, 2) * 2 ** (-lam) * (b / 2) ** (2 * j + l) / (
            sp.factorial(j) * sp.gamma(j + l + lam + 1))
        j += 1
    lhs, rhs = sp.expand(sp.simplify(lhs)), sp.expand(rhs)
    return Derivation(
        title=f"Funk-Hecke coefficient of e^(beta t), d = {d}, degree l = {l}: Taylor coefficients to beta^{order}",
        source=_SOURCE,
        lhs=lhs, rhs=rhs,
        steps=(Step("zonal profile (Gegenbauer C_l^{(d-2)/2}/C_l(1); Chebyshev T_l when d = 2)", profile.as_expr()),
               Step("closed form a_l(beta)", funk_hecke_closed_form(d, l))),
        notes="surface measure (not normalised); the d = 2 path uses T_l because the Gegenbauer parameter is 0")


# -- the linearisation ---------------------------------------------------------------------------------------
def _abstract_linearisation(model: str):
    """The continuity equation for rho = rho_0 + eps Y, Y a spherical harmonic, in abstract symbols.

    Symbols: Y (the harmonic's value), G = |grad Y|^2, w = convolution eigenvalue (W * Y = w Y),
    F0 = W * rho_0 (a constant by rotation invariance), L = l(l+d-2) (Lap Y = -L Y).
    Returns (rhs(eps) = -div(rho X[rho]), symbols).
    """
    eps, Y, G, w, F0, L, rho0 = sp.symbols("epsilon Y G w F_0 L rho_0", real=True)
    rho = rho0 + eps * Y
    F = F0 + eps * w * Y                 # W * rho
    grad_rho_dot_gradF = eps * eps * w * G   # <grad rho, grad F> = eps^2 w |grad Y|^2
    grad_F_sq = (eps * w) ** 2 * G          # |grad F|^2
    lap_F = -eps * w * L * Y
    if model == "usa":
        D = sp.Integer(1)
        grad_D_dot_gradF = sp.Integer(0)
    else:
        D = sym.beta * F                  # Z = beta (W * rho)
        grad_D_dot_gradF = sym.beta * grad_F_sq
    # div(rho grad F / D) = <grad rho, grad F>/D - rho <grad D, grad F>/D^2 + rho Lap F / D
    div_flux = grad_rho_dot_gradF / D - rho * grad_D_dot_gradF / D**2 + rho * lap_F / D
    return -div_flux, dict(eps=eps, Y=Y, G=G, w=w, F0=F0, L=L, rho0=rho0, D=D)


def linearization_derivation(model: str, d: int) -> Derivation:
    r"""Linearise :math:`\partial_t \rho = -\operatorname{div}(\rho X[\rho])` at the uniform density on
    :math:`\mathbb{S}^{d-1}`; degree-:math:`l` rate in closed form.

    Identity proved: :math:`\tfrac{d}{d\varepsilon} \big[ -\operatorname{div}(\rho X[\rho]) \big]` at
    :math:`\varepsilon = 0` equals :math:`\lambda_l(\beta) Y` for :math:`\rho = \rho_0 + \varepsilon Y`, :math:`Y` a
    spherical harmonic of degree :math:`l` (abstract symbols :math:`Y`, :math:`G = \lvert\nabla Y\rvert^2`;
    :math:`\Delta Y = -l(l+d-2) Y`), after substituting the Funk-Hecke eigenvalue :math:`w = a_l(\beta)/\beta` and
    :math:`F_0 = W * \rho_0 = \rho_0 a_0(\beta)/\beta`. Steps record that the right-hand side vanishes at
    :math:`\varepsilon = 0` (stationarity) and, for ``sa``, that freezing the denominator at its uniform value
    :math:`Z_0` gives the same derivative (the denominator does not contribute).

    Verified by: meanfield.pde-rates (numerically), tests/theory/test_meanfield_theory.py (symbolically).
    """
    model, d = _check_model(model), _check_d(d)
    rhs_eps, S = _abstract_linearisation(model)
    eps, Y = S["eps"], S["Y"]
    at_zero = sp.simplify(rhs_eps.subs(eps, 0))
    linear = sp.simplify(sp.diff(rhs_eps, eps).subs(eps, 0))
    rho0_val = uniform_density(d)
    subs = {S["w"]: funk_hecke_closed_form(d, sym.l) / sym.beta,
            S["F0"]: rho0_val * funk_hecke_closed_form(d, 0) / sym.beta,
            S["L"]: sym.l * (sym.l + d - 2), S["rho0"]: rho0_val}
    lhs = linear.subs(subs)
    rhs = growth_rate_expr(model, d) * Y
    steps = [
        Step("perturbed density and potential: rho = rho_0 + eps Y, W*rho = F_0 + eps w Y", S["rho0"] + eps * Y),
        Step("right-hand side -div(rho X[rho]) (X = grad(W*rho)/D, D = 1 for usa, beta W*rho for sa)", rhs_eps),
        Step("at eps = 0 (uniform density): vanishes, so the uniform measure is stationary", at_zero),
        Step("first-order coefficient (abstract)", linear),
    ]
    if model == "sa":
        frozen = sp.simplify(sp.diff(_frozen_denominator_rhs(S), eps).subs(eps, 0))
        steps.append(Step("denominator frozen at Z_0 = beta F_0: same first-order coefficient (difference)",
                           sp.simplify(linear - frozen)))
    steps.append(Step("Funk-Hecke eigenvalue w = a_l(beta)/beta, F_0 = rho_0 a_0(beta)/beta, L = l(l+d-2)",
                      sp.Matrix([subs[S["w"]], subs[S["F0"]]])))
    return Derivation(
        title=f"Linearisation of the {model} continuity equation at the uniform measure on S^{d - 1}",
        source=_SOURCE, lhs=lhs, rhs=rhs, steps=tuple(steps), sampler=_rate_sampler,
        notes="density w.r.t. surface measure; rho_0 = 1/|S^{d-1}|; natural time unit; W(s) = e^{beta s}/beta")


def _frozen_denominator_rhs(S) -> sp.Expr:
    """-div(rho grad F / Z_0) with the sa denominator frozen at its eps = 0 value Z_0 = beta F_0."""
    eps, Y, G, w, F0, L, rho0 = (S[k] for k in ("eps", "Y", "G", "w", "F0", "L", "rho0"))
    rho = rho0 + eps * Y
    D0 = sym.beta * F0
    return -(eps * eps * w * G / D0 + rho * (-eps * w * L * Y) / D0)


def denominator_derivation(d: int) -> Derivation:
    r"""The ``sa`` denominator does not contribute: :math:`\tfrac{d}{d\varepsilon}` of
    :math:`-\operatorname{div}(\rho \nabla F / Z[\rho])` at :math:`\varepsilon = 0` equals that of
    :math:`-\operatorname{div}(\rho \nabla F / Z_0)`. Reason: :math:`\nabla F` vanishes at the uniform density, so
    :math:`\tfrac{d}{d\varepsilon} (1/Z)` multiplies zero.
    """
    d = _check_d(d)
    rhs_eps, S = _abstract_linearisation("sa")
    eps = S["eps"]
    lhs = sp.diff(rhs_eps, eps).subs(eps, 0)
    rhs = sp.diff(_frozen_denominator_rhs(S), eps).subs(eps, 0)
    return Derivation(
        title=f"sa on S^{d - 1}: the softmax denominator drops out of the linearisation at the uniform measure",
        source=_SOURCE, lhs=sp.simplify(lhs), rhs=sp.simplify(rhs),
        steps=(Step("full sa right-hand side", rhs_eps), Step("denominator frozen at Z_0", _frozen_denominator_rhs(S))),
        notes="X_sa[rho] = grad(W*rho)/Z[rho]; d(1/Z) is multiplied by grad(W*rho_0) = 0")


def stationarity_derivation(d: int) -> Derivation:
    r"""The mean-field velocity vanishes at the uniform measure (both models: the ``sa`` denominator is positive).

    :math:`d = 2`: at :math:`x = (\cos\theta, \sin\theta)`, :math:`X[\rho_0](x)` is the tangent vector times
    :math:`\tfrac{1}{2\pi} \int_0^{2\pi} e^{\beta \cos u} \sin u\, du`, computed by sympy (:math:`= 0`).
    :math:`d = 3`: at the north pole, :math:`P_x y = \sqrt{1-t^2}(\cos\phi, \sin\phi, 0)`, and
    :math:`\tfrac{1}{4\pi} \iint e^{\beta t} P_x y\, d\phi\, dt` is computed by sympy (:math:`= 0`).
    :math:`d \ge 4`: with :math:`y = t x + \sqrt{1-t^2}\, w`, :math:`w \in \mathbb{S}^{d-2}` orthogonal to
    :math:`x`, the projected integrand :math:`e^{\beta t} \sqrt{1-t^2}\, w` is odd in :math:`w`; the identity proved
    is :math:`g(w) + g(-w) = 0`, so its integral over :math:`\mathbb{S}^{d-2}` vanishes.
    """
    d = _check_d(d)
    u, ph = sp.symbols("u varphi", real=True)
    b, t = sym.beta, sym.s
    if d == 2:
        integrand = sp.exp(b * sp.cos(u)) * sp.sin(u) / (2 * sp.pi)
        lhs = sp.integrate(integrand, (u, 0, 2 * sp.pi))
        steps = (Step("tangential component of e^{beta cos u} (cos u, sin u) at x = e_1, over 2 pi", integrand),)
    elif d == 3:
        integrand = sp.exp(b * t) * sp.sqrt(1 - t**2) * sp.Matrix([sp.cos(ph), sp.sin(ph)]) / (4 * sp.pi)
        lhs = integrand.applyfunc(lambda e: sp.integrate(sp.integrate(e, (ph, 0, 2 * sp.pi)), (t, -1, 1)))
        steps = (Step("P_x y e^{beta<x,y>} at the north pole, y = (sqrt(1-t^2) cos ph, sqrt(1-t^2) sin ph, t)",
                      integrand),)
    else:
        w = sp.Matrix(sp.symbols(f"w_1:{d}", real=True))
        g = lambda v: sp.exp(b * t) * sp.sqrt(1 - t**2) * v  # noqa: E731 - the projected integrand
        lhs = sp.simplify(g(w) + g(-w))
        steps = (Step("projected integrand in y = t x + sqrt(1-t^2) w", g(w)),)
    rhs = sp.zeros(*lhs.shape) if isinstance(lhs, sp.MatrixBase) else sp.Integer(0)
    return Derivation(
        title=f"The uniform measure on S^{d - 1} is stationary (X[rho_0] = 0)", source=_SOURCE,
        lhs=lhs, rhs=rhs, steps=steps, notes="same for usa and sa (sa divides by Z_0 > 0)")


def circle_linearization_derivation(model: str) -> Derivation:
    r"""The :math:`\mathbb{S}^1` path in Fourier modes: :math:`\rho = 1/(2 \pi) + \varepsilon \cos(k \theta)`,
    velocity from the particle kernel.

    ``usa``: :math:`v(\theta) = \int e^{\beta \cos(\phi-\theta)} \sin(\phi-\theta) \rho(\phi)\, d\phi
    = \tfrac{d}{d\theta} (W * \rho)(\theta)`, :math:`W(u) = e^{\beta \cos u}/\beta` (docs/conventions.md's
    :math:`d = 2` form); the Fourier multiplier of :math:`W` is :math:`2 \pi I_k(\beta)/\beta` (Funk-Hecke on
    :math:`\mathbb{S}^1`, Chebyshev path). ``sa`` divides by :math:`Z = \beta (W * \rho)`. The identity proved: the
    first-order coefficient of :math:`-\tfrac{d}{d\theta} (\rho v)` equals :math:`\lambda_k \cos(k \theta)`, with
    :math:`\lambda_k` from :func:`growth_rate_expr` at :math:`d = 2`.
    """
    model = _check_model(model)
    eps, ph = sp.symbols("epsilon varphi", real=True)
    k = sp.Symbol("k", integer=True, positive=True)
    th, b = sym.theta, sym.beta
    W = lambda arg: sp.exp(b * sp.cos(arg)) / b  # noqa: E731
    kernel_identity = sp.simplify(sp.diff(W(th - ph), th) - sp.exp(b * sp.cos(ph - th)) * sp.sin(ph - th))
    rho = 1 / (2 * sp.pi) + eps * sp.cos(k * th)
    conv = sp.besseli(0, b) / b + eps * 2 * sp.pi * sp.besseli(k, b) / b * sp.cos(k * th)
    v = sp.diff(conv, th)
    if model == "sa":
        v = v / (b * conv)
    rhs_eps = -sp.diff(rho * v, th)
    at_zero = sp.simplify(rhs_eps.subs(eps, 0))
    lhs = sp.simplify(sp.diff(rhs_eps, eps).subs(eps, 0))
    rhs = growth_rate_expr(model, 2, k) * sp.cos(k * th)
    return Derivation(
        title=f"{model} on S^1: Fourier mode k grows at lambda_k (linearisation at the uniform density)",
        source=_SOURCE, lhs=lhs, rhs=rhs,
        steps=(Step("d/dth W(th - ph) - e^{beta cos(ph-th)} sin(ph-th) (the particle kernel is a gradient)",
                    kernel_identity),
               Step("W * rho (Fourier multipliers 2 pi I_k(beta)/beta)", conv),
               Step("-d/dth (rho v)", rhs_eps),
               Step("at eps = 0: stationary", at_zero)),
        notes="natural time unit; rho w.r.t. d theta, total mass 1")


# -- growth rates ----------------------------------------------------------------------------------------------
def growth_rate_expr(model: str, d: int, l=sym.l, beta=sym.beta) -> sp.Expr:
    r""":math:`\lambda_l(\beta)` (natural time unit) as a sympy expression (:math:`\beta > 0` form with
    ``besseli``).

    ``usa``: :math:`l(l+d-2)\, \Gamma(d/2) (2/\beta)^{d/2-1} I_{l+d/2-1}(\beta)/\beta`; ``sa``: the same over
    :math:`\Gamma(d/2)(2/\beta)^{d/2-1} I_{d/2-1}(\beta)`, i.e.
    :math:`l(l+d-2) I_{l+d/2-1}(\beta) / (\beta I_{d/2-1}(\beta))`.
    """
    model, d = _check_model(model), _check_d(d)
    lam = gegenbauer_parameter(d)
    usa = l * (l + d - 2) * sp.gamma(sp.Rational(d, 2)) * (2 / beta) ** lam * sp.besseli(l + lam, beta) / beta
    if model == "usa":
        return usa
    return sp.simplify(usa / (sp.gamma(sp.Rational(d, 2)) * (2 / beta) ** lam * sp.besseli(lam, beta)))


def _rate_sampler(rng: random.Random):
    return {sym.l: rng.randint(1, 6), sym.beta: sp.Rational(rng.randint(1, 40), 7),
            sp.Symbol("Y", real=True): sp.Rational(rng.randint(-9, 9), 5)}


def scaled_growth_rate_expr(model: str, d: int, time_unit: str = "natural") -> sp.Expr:
    r""":math:`\lambda_l(\beta)` for any real :math:`\beta \ne 0`, overflow safe, in :math:`(l, \beta)`: the form
    the generated code uses.

    With :math:`\nu = l + d/2 - 1` and :math:`I_\nu(\lvert\beta\rvert) = \operatorname{ive}(\nu, \lvert\beta\rvert)
    e^{\lvert\beta\rvert}` (``codegen.besselie``): ``usa``:

    .. math::

        l(l+d-2)\, \Gamma(d/2)\, 2^{d/2-1} \operatorname{sign}(\beta)^{l+1} \lvert\beta\rvert^{-d/2}
        \operatorname{ive}(\nu, \lvert\beta\rvert)\, e^{\lvert\beta\rvert - c \beta},

    :math:`c = 0` (natural) or 1 (rescaled time :math:`t' = e^\beta t`); ``sa``: :math:`l(l+d-2)
    \operatorname{sign}(\beta)^{l+1} \operatorname{ive}(\nu, \lvert\beta\rvert) / \big(\lvert\beta\rvert
    \operatorname{ive}(d/2-1, \lvert\beta\rvert)\big)`. Uses :math:`\beta^{-\mu} I_{l+\mu}(\beta) =
    \operatorname{sign}(\beta)^l \lvert\beta\rvert^{-\mu} I_{l+\mu}(\lvert\beta\rvert)`.
    """
    model, d = _check_model(model), _check_d(d)
    if time_unit not in TIME_UNITS:
        raise ValueError(f"time_unit must be one of {TIME_UNITS}, got {time_unit!r}")
    l, b = sym.l, sym.beta
    lam = gegenbauer_parameter(d)
    ab = sp.Abs(b)
    sgn = sp.sign(b) ** (l + 1)
    if model == "sa":
        return l * (l + d - 2) * sgn * codegen.besselie(l + lam, ab) / (ab * codegen.besselie(lam, ab))
    shift = ab - (b if time_unit == "rescaled" else 0)
    return (l * (l + d - 2) * sp.gamma(sp.Rational(d, 2)) * 2**lam * sgn * ab ** (-lam - 1)
            * codegen.besselie(l + lam, ab) * sp.exp(shift))


@lru_cache(maxsize=64)
def growth_rate_function(model: str, d: int, time_unit: str = "natural"):
    r"""Generated NumPy callable ``rate(l, beta)`` (broadcasting, float arrays) of :func:`scaled_growth_rate_expr`.

    Argument order: ``(l, beta)``. Valid for :math:`\beta \ne 0` (use :func:`growth_rate_at_beta_zero` at
    :math:`\beta = 0`).
    Memoised here because ``codegen.compile_function`` runs sympy's cse before its cache lookup.
    Verified by: meanfield.pde-rates (and tests against mpmath).
    """
    expr = scaled_growth_rate_expr(model, d, time_unit)
    return codegen.compile_function(f"meanfield_rate_{model}_d{d}_{time_unit}", (sym.l, sym.beta), expr,
                                    doc=f"lambda_l(beta), model {model}, d = {d}, time unit {time_unit}. "
                                        "Arguments: (l, beta), broadcasting; beta != 0.")


def growth_rates_module_source(dims=(2, 3), time_unit: str = "natural") -> str:
    r"""Source of a standalone NumPy/SciPy module with ``rate_<model>_d<d>(l, beta)`` for the given dimensions.

    Write it with :func:`theory.codegen.write_module`; each function is the generated form of
    :func:`scaled_growth_rate_expr` (argument order ``(l, beta)``, :math:`\beta \ne 0`).
    """
    chunks = []
    for d in dims:
        for model in GROWTH_MODELS:
            chunks.append(codegen.function_source(
                f"rate_{model}_d{d}", (sym.l, sym.beta), scaled_growth_rate_expr(model, d, time_unit),
                doc=f"lambda_l(beta) around the uniform measure on S^{d - 1}, model {model}, {time_unit} time. "
                    "Arguments: (l, beta), broadcasting; beta != 0.").source)
    return codegen.module_source("Mean-field growth rates lambda_l(beta) around the uniform measure "
                                 "(attnflow theory.meanfield; BPA arXiv 2410.23228).", chunks,
                                 generator="theory.meanfield.growth_rates_module_source")


@lru_cache(maxsize=16)
def convolution_multiplier_function(d: int = 2):
    r"""Generated ``mult(l, beta)`` :math:`= a_l(\beta) e^{-|\beta|} / |\mathbb{S}^{d-1}|` (``ive`` form, any
    real :math:`\beta \ne 0`).

    This is the eigenvalue of
    :math:`\rho \mapsto \int e^{\beta\langle x, y\rangle} \rho(y)\,dy / |\mathbb{S}^{d-1}|` on degree-:math:`l`
    harmonics, scaled by :math:`e^{-|\beta|}`. On :math:`\mathbb{S}^1` it is
    :math:`I_k(\beta) e^{-|\beta|} = \operatorname{sign}(\beta)^k` ``ive(k, |beta|)``: the Fourier multiplier of
    :math:`\rho \mapsto \frac{1}{2\pi} \int e^{\beta \cos(\theta - \varphi)} \rho(\varphi)\,d\varphi`, scaled.
    Argument order: ``(l, beta)``.
    Verified by: meanfield.pde-rates (and the trapezoid cross-check in tests/numerics/test_meanfield_pde.py).
    """
    d = _check_d(d)
    l, b = sym.l, sym.beta
    lam = gegenbauer_parameter(d)
    ab = sp.Abs(b)
    expr = (2 * sp.pi) ** sp.Rational(d, 2) / sphere_area(d) * sp.sign(b) ** l * ab ** (-lam) * codegen.besselie(l + lam, ab)
    return codegen.compile_function(f"meanfield_multiplier_d{d}", (l, b), expr,
                                    doc="a_l(beta) e^{-|beta|} / |S^{d-1}|. Arguments: (l, beta).")


def growth_rate_at_beta_zero(l: int, d: int) -> sp.Rational:
    r""":math:`\lim_{\beta \to 0} \lambda_l` (same for ``usa`` and ``sa``): :math:`(d-1)/d` for :math:`l = 1` and 0
    for :math:`l \ge 2`.
    """
    l, d = _check_l(l), _check_d(d)
    return sp.Rational(d - 1, d) if l == 1 else sp.Integer(0)


def growth_rate(model: str, d: int, l: int, beta, time_unit: str = "natural", dps: int = 20) -> mp.mpf:
    r""":math:`\lambda_l(\beta)` in mpmath at ``dps`` digits, any real :math:`\beta` (``time_unit`` only matters for
    ``usa``).
    """
    model, d, l = _check_model(model), _check_d(d), _check_l(l)
    with mp.workdps(dps):
        b = mp.mpf(beta)
        if b == 0:
            limit = growth_rate_at_beta_zero(l, d)
            return mp.mpf(limit.p) / limit.q
        rho0 = mp.gamma(mp.mpf(d) / 2) / (2 * mp.pi ** (mp.mpf(d) / 2))
        usa = l * (l + d - 2) * rho0 * funk_hecke_value(d, l, b, dps) / b
        if model == "sa":
            return +(usa / (rho0 * funk_hecke_value(d, 0, b, dps)))
        return +(usa * mp.exp(-b)) if time_unit == "rescaled" else +usa


def growth_rates(model: str, d: int, beta, lmax: int, time_unit: str = "natural") -> list[float]:
    r""":math:`[\lambda_1, \dots, \lambda_{l_{\max}}]` as floats (index 0 is :math:`l = 1`)."""
    if isinstance(lmax, bool) or not isinstance(lmax, int) or lmax < 1:
        raise ValueError(f"lmax must be an integer >= 1, got {lmax!r}")
    return [float(growth_rate(model, d, l, beta, time_unit)) for l in range(1, lmax + 1)]


@dataclass(frozen=True)
class DominantDegree:
    """The fastest degree and its closest competitor."""

    l_max: int
    rate: float
    runner_up: int
    runner_up_rate: float
    ratio: float          # rate / runner_up_rate (>= 1; inf if the runner-up does not grow)
    near_tie: bool        # ratio < NEAR_TIE_RATIO
    searched_up_to: int


def dominant_degree(model: str, d: int, beta, *, near_tie_ratio: float = NEAR_TIE_RATIO,
                    time_unit: str = "natural") -> DominantDegree:
    r""":math:`l_{\max}(\beta) = \operatorname{argmax}_l \lambda_l(\beta)` over :math:`l \ge 1`, with the runner-up
    and the ratio of their rates.

    The search runs to :math:`l = 4 \sqrt{\lvert\beta\rvert} + 12`, far beyond the peak (rates decay like
    :math:`(\beta/2)^l / l!` there).
    """
    b = float(beta)
    top = int(4 * math.sqrt(abs(b))) + 12
    rates = growth_rates(model, d, b, top, time_unit)
    order = sorted(range(top), key=lambda i: rates[i], reverse=True)
    first, second = order[0], order[1]
    r1, r2 = rates[first], rates[second]
    ratio = r1 / r2 if r2 > 0 else math.inf
    return DominantDegree(first + 1, r1, second + 1, r2, ratio, ratio < near_tie_ratio, top)


def _log_pair_ratio(d: int, l: int, beta: mp.mpf) -> mp.mpf:
    """log(lambda_{l+1}/lambda_l) for beta > 0: model independent (the Z_0 and beta factors cancel)."""
    lam = mp.mpf(d - 2) / 2
    return (mp.log((l + 1) * (l + d - 1)) + mp.log(mp.besseli(l + 1 + lam, beta))
            - mp.log(l * (l + d - 2)) - mp.log(mp.besseli(l + lam, beta)))


def switch_point(d: int, l: int, dps: int = 30) -> float:
    r"""The unique :math:`\beta > 0` where :math:`\lambda_{l+1}(\beta) = \lambda_l(\beta)` (root of a Bessel-ratio
    equation).

    :math:`I_{\nu+1}/I_\nu` is increasing in :math:`\beta` from 0 to 1, so :math:`\log(\lambda_{l+1}/\lambda_l)`
    increases from :math:`-\infty` to :math:`\log\big((l+1)(l+d-1)/(l(l+d-2))\big) > 0`: exactly one root, bracketed
    by doubling and refined by mpmath.
    """
    d, l = _check_d(d), _check_l(l)
    if l < 1:
        raise ValueError(f"switch points exist for l >= 1, got {l}")
    with mp.workdps(dps):
        lo, hi = mp.mpf("0.01"), mp.mpf(1)
        while _log_pair_ratio(d, l, hi) < 0:
            lo, hi = hi, 2 * hi
        root = mp.findroot(lambda x: _log_pair_ratio(d, l, x), (lo, hi), solver="anderson")
    return float(root)


def switch_points(d: int, beta_max: float) -> list[tuple[float, int, int]]:
    r"""All switch points in :math:`(0, \beta_{\max}]`: ``[(beta_l, l, l+1), ...]`` where :math:`l_{\max}` changes
    from :math:`l` to :math:`l+1`.

    Valid for both models (same :math:`l_{\max}` for :math:`\beta > 0`). Relies on :math:`\beta_l` increasing in
    :math:`l`, which is checked.
    """
    d = _check_d(d)
    out: list[tuple[float, int, int]] = []
    l = 1
    while True:
        b = switch_point(d, l)
        if out and b <= out[-1][0]:
            raise ArithmeticError(f"switch points not increasing at l = {l}: {out[-1][0]} then {b}")
        if b > beta_max:
            return out
        out.append((b, l, l + 1))
        l += 1
