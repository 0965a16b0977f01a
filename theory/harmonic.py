r"""Spherical-harmonic expansion of self-attention on :math:`\mathbb{S}^{d-1}`: addition theorem, Funk-Hecke,
truncation bound.

Conventions (docs/conventions.md, section "Spherical harmonics"): :math:`\mu` is the uniform *probability* measure of
:math:`\mathbb{S}^{d-1}`; :math:`\{Y_{lm}\}` an orthonormal basis of the degree-:math:`l` harmonics in
:math:`L^2(\mu)`, :math:`N(d, l)` of them; :math:`P_l^{(d)} = C_l^{(d-2)/2} / C_l^{(d-2)/2}(1)` the normalised zonal
profile (Legendre :math:`P_l` on :math:`\mathbb{S}^2`). On :math:`\mathbb{S}^2` the real basis is
:math:`Y_{lm} = \Lambda_l^{\lvert m\rvert}(\cos \theta) \{1, \sqrt{2} \cos m \phi, \sqrt{2} \sin \lvert m\rvert \phi\}`,
:math:`\Lambda_l^m = \sqrt{(2l+1)(l-m)!/(l+m)!}\, P_l^m` without the Condon-Shortley phase (the basis of
:mod:`numerics.harmonic.transforms` and :mod:`numerics.noise.sphere`).

1. Addition theorem (:func:`addition_theorem_derivation`):
   :math:`\sum_m Y_{lm}(x) Y_{lm}(y) = N(d, l) P_l^{(d)}(\langle x, y\rangle)`; on :math:`\mathbb{S}^2`,
   :math:`N = 2l + 1`, proved here as a polynomial identity between solid harmonics.
2. Funk-Hecke (:func:`kernel_coefficient_mp`, :func:`kernel_expansion_derivation`): for the kernel
   :math:`e^{\beta t}`,
   :math:`\mathbb{E}_\mu[e^{\beta \langle x, y\rangle} Y_{lm}(y)] = \lambda_l(\beta) Y_{lm}(x)` with

   .. math::

       \lambda_l(\beta) = a_l(\beta) / \lvert\mathbb{S}^{d-1}\rvert
       = \Gamma(d/2) (2/\beta)^{d/2-1} I_{l+d/2-1}(\beta)

   (:math:`\mathbb{S}^2`: :math:`i_l(\beta)`, the modified spherical Bessel function), so
   :math:`e^{\beta t} = \sum_l N(d, l) \lambda_l P_l^{(d)}(t)`. The surface-measure coefficient :math:`a_l` is
   :func:`theory.meanfield.funk_hecke_closed_form` (derived and checked there).
3. Fields and energy in moments: with :math:`M^f_{lm} = \tfrac{1}{n} \sum_j f(x_j) Y_{lm}(x_j)`,

   .. math::

       \frac{1}{n} \sum_j e^{\beta \langle x, x_j\rangle} f(x_j) = \sum_l \lambda_l \sum_m M^f_{lm} Y_{lm}(x)

   (:math:`f = 1`: :math:`Z/n`; :math:`f = x`: :math:`N/n`), and

   .. math::

       E_\beta = \frac{1}{2 \beta n^2} \sum_{ij} \big(e^{\beta s_{ij}} - 1\big)
       = \frac{\lambda_0 - 1}{2 \beta} + \sum_{l \ge 1} \frac{\lambda_l}{2 \beta} R_l, \qquad
       R_l = \sum_m (M^1_{lm})^2

   (:func:`energy_in_moments_derivation`, an identity at explicit points).
4. Truncation (:func:`tail_exact_mp`, :func:`tail_bound_mp`): keeping :math:`l \le L` changes the kernel by
   :math:`e_L(t) = \sum_{l>L} N_l \lambda_l P_l(t)` with
   :math:`\sup \lvert e_L\rvert \le T_L = \sum_{l>L} N_l \lvert\lambda_l\rvert` (attained at :math:`t = 1` for
   :math:`\beta > 0`; :math:`T_L = e^{\lvert\beta\rvert} - \sum_{l \le L} N_l \lambda_l(\lvert\beta\rvert)` exactly).
   The majorant: the term ratios are at most :math:`r_L = (N_{L+2}/N_{L+1}) q_{L+1+\nu}`, :math:`\nu = d/2 - 1`,
   with Amos' :math:`I_{\nu+1}/I_\nu \le q_\nu` (both factors decrease in :math:`l`), so
   :math:`T_L \le N_{L+1} \lvert\lambda_{L+1}\rvert / (1 - r_L)`. It decays like
   :math:`(e \lvert\beta\rvert / (2L))^L`: :math:`L \sim e\lvert\beta\rvert/2 + \log(1/\mathrm{tol})`.
5. Practical dimensions (:func:`practical_dimensions`): the count of harmonics of degree :math:`\le L` on
   :math:`\mathbb{S}^{d-1}` is
   :math:`H(d, L) = \binom{L+d-1}{d-1} + \binom{L+d-2}{d-1} \sim 2 L^{d-1}/(d-1)!`, the per-token cost of the
   expansion.

sympy and mpmath only.
"""
from __future__ import annotations

import math

import mpmath as mp
import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step
from .meanfield import funk_hecke_value

SOURCE = ("Funk-Hecke theorem and the addition theorem for spherical harmonics (Muller, Spherical Harmonics, "
          "LNM 17); GLPR arXiv 2312.10794 (the sa/usa fields and E_beta); Amos 1974 (Bessel ratio bound)")


# -- counting ------------------------------------------------------------------------------------------------------
def harmonic_count(d: int, l: int) -> int:
    r""":math:`N(d, l)`: the dimension of the degree-:math:`l` spherical harmonics on :math:`\mathbb{S}^{d-1}`
    (:math:`2l + 1` on :math:`\mathbb{S}^2`; 2 on :math:`\mathbb{S}^1`, :math:`l \ge 1`).
    """
    if d < 2 or l < 0:
        raise ValueError(f"need d >= 2 and l >= 0, got d={d}, l={l}")
    if l == 0:
        return 1
    return math.comb(l + d - 1, d - 1) - (math.comb(l + d - 3, d - 1) if l >= 2 else 0)


def total_harmonics(d: int, L: int) -> int:
    r""":math:`H(d, L) = \sum_{l \le L} N(d, l) = \binom{L+d-1}{d-1} + \binom{L+d-2}{d-1}`: :math:`(L+1)^2` on
    :math:`\mathbb{S}^2`.
    """
    return math.comb(L + d - 1, d - 1) + (math.comb(L + d - 2, d - 1) if L >= 1 else 0)


# -- Funk-Hecke coefficients in the probability normalisation ------------------------------------------------------
def kernel_coefficient_mp(d: int, l: int, beta, dps: int = 30) -> mp.mpf:
    r""":math:`\lambda_l(\beta) = a_l(\beta) / \lvert\mathbb{S}^{d-1}\rvert` (probability measure):
    :math:`\Gamma(d/2)(2/\beta)^{d/2-1} I_{l+d/2-1}(\beta)`; :math:`\lambda_0(0) = 1`, :math:`\lambda_l(0) = 0` for
    :math:`l \ge 1`; :math:`\lambda_l(-\beta) = (-1)^l \lambda_l(\beta)`.
    """
    with mp.workdps(dps):
        area = 2 * mp.pi ** (mp.mpf(d) / 2) / mp.gamma(mp.mpf(d) / 2)
        return +(funk_hecke_value(d, l, beta, dps=dps) / area)


def zonal_profile_mp(d: int, l: int, t) -> mp.mpf:
    """:math:`P_l^{(d)}(t) = C_l^{(d-2)/2}(t) / C_l^{(d-2)/2}(1)` (Legendre :math:`P_l` for :math:`d = 3`), by the
    three-term recursion.
    """
    t = mp.mpf(t)
    nu = mp.mpf(d - 2) / 2
    if l == 0:
        return mp.mpf(1)
    prev, cur = mp.mpf(1), t
    for k in range(1, l):
        # (k + 2 nu) P_{k+1} = (2k + 2 nu) t P_k - k P_{k-1} for the normalised profiles P = C / C(1)
        prev, cur = cur, ((2 * k + 2 * nu) * t * cur - k * prev) / (k + 2 * nu)
    return cur


def kernel_series_mp(d: int, beta, t, L: int, dps: int = 30) -> mp.mpf:
    r""":math:`\sum_{l \le L} N(d, l) \lambda_l(\beta) P_l^{(d)}(t)`: the truncated expansion of
    :math:`e^{\beta t}`.
    """
    with mp.workdps(dps):
        return +mp.fsum(harmonic_count(d, l) * kernel_coefficient_mp(d, l, beta, dps) * zonal_profile_mp(d, l, t)
                        for l in range(L + 1))


# -- the truncation bound -------------------------------------------------------------------------------------------
def amos_ratio_bound_mp(nu, x) -> mp.mpf:
    r""":math:`q_\nu = x / \big(\nu + 1/2 + \sqrt{x^2 + (\nu + 1/2)^2}\big) \ge I_{\nu+1}(x)/I_\nu(x)` (Amos 1974,
    Math. Comp. 28; :math:`\nu \ge 0`).
    """
    h = mp.mpf(nu) + mp.mpf(1) / 2
    x = mp.mpf(x)
    return x / (h + mp.sqrt(x * x + h * h))


def tail_exact_mp(d: int, L: int, beta, dps: int = 30) -> mp.mpf:
    r""":math:`T_L(\beta) = \sum_{l>L} N(d, l) \lvert\lambda_l(\beta)\rvert`
    (:math:`= e^{\lvert\beta\rvert} - \sum_{l \le L} N(d, l) \lambda_l(\lvert\beta\rvert)`, the expansion at
    :math:`t = 1`), summed term by term (positive terms, no cancellation) until a term falls below
    :math:`10^{-\text{dps}}` of the sum once the terms decrease (:math:`l > \lvert\beta\rvert`).
    """
    with mp.workdps(dps + 5):
        x = abs(mp.mpf(beta))
        total, l = mp.mpf(0), L + 1
        while True:
            term = harmonic_count(d, l) * kernel_coefficient_mp(d, l, x, dps + 5)
            total += term
            if l > x and term < mp.mpf(10) ** (-dps) * total:
                return +total
            l += 1


def tail_bound_mp(d: int, L: int, beta, dps: int = 30) -> mp.mpf:
    r"""The geometric majorant :math:`N_{L+1} \lvert\lambda_{L+1}\rvert / (1 - r_L)` of :math:`T_L` (module
    docstring, item 4); :math:`+\infty` when :math:`r_L \ge 1`.
    """
    with mp.workdps(dps):
        x = abs(mp.mpf(beta))
        if x == 0:
            return mp.mpf(0)
        nu = mp.mpf(d - 2) / 2
        r = mp.mpf(harmonic_count(d, L + 2)) / harmonic_count(d, L + 1) * amos_ratio_bound_mp(L + 1 + nu, x)
        if r >= 1:
            return mp.inf
        return +(harmonic_count(d, L + 1) * abs(kernel_coefficient_mp(d, L + 1, x, dps)) / (1 - r))


def degree_for_tolerance_mp(d: int, beta, relative_tol, dps: int = 30) -> int:
    r"""Smallest :math:`L \ge 1` with :func:`tail_bound_mp` :math:`\le` ``relative_tol``
    :math:`\cdot\, \lambda_0(\lvert\beta\rvert)` (the reference for
    :func:`numerics.harmonic.expansion.degree_for_tolerance`).
    """
    with mp.workdps(dps):
        target = mp.mpf(relative_tol) * kernel_coefficient_mp(d, 0, abs(mp.mpf(beta)), dps)
        L = 1
        while tail_bound_mp(d, L, beta, dps) > target:
            L += 1
        return L


def practical_dimensions(beta=4, relative_tol=1e-10, dims=range(3, 9)) -> list[dict]:
    r"""Per :math:`d`: the degree :math:`L` that the tail criterion needs at ``(beta, relative_tol)``, the count
    :math:`H(d, L)` of harmonics per token, and the memory of one token's harmonic values (:math:`8 H` bytes).

    The expansion costs about :math:`H(d, L)` operations per token and pass against :math:`n` per token for the
    direct field, so it pays for :math:`n \gtrsim c H(d, L)` and is practical while :math:`H` stays in the
    thousands. At :math:`\beta = 4` and relative tolerance :math:`10^{-10}`: :math:`d = 3` needs :math:`L = 17`,
    :math:`H = 324`; :math:`d = 4`: :math:`L = 18`, :math:`H = 2470`; :math:`d = 5`: :math:`H = 13300`;
    :math:`d = 6`: :math:`H = 76153`; :math:`d = 7`: :math:`H \sim 3 \cdot 10^5` (tests/theory/test_harmonic.py). So
    :math:`\mathbb{S}^2` and :math:`\mathbb{S}^3` are practical, :math:`\mathbb{S}^4` only for
    :math:`n \gtrsim 10^5`, and from :math:`d = 6` on the expansion costs more per token than the direct field does
    for any :math:`n` that fits in memory.
    """
    out = []
    for d in dims:
        L = degree_for_tolerance_mp(d, beta, relative_tol)
        H = total_harmonics(d, L)
        out.append({"d": d, "degree": L, "harmonics": H, "bytes_per_token": 8 * H})
    return out


# -- symbolic derivations -------------------------------------------------------------------------------------------
X1, X2, X3, Y1, Y2, Y3 = sp.symbols("x1 x2 x3 y1 y2 y3", real=True)


def solid_harmonic(l: int, m: int, x=(X1, X2, X3)) -> sp.Expr:
    r""":math:`r^l Y_{lm}(x/r)` as a polynomial (:math:`\mathbb{S}^2`, the convention of the module docstring, no
    Condon-Shortley phase):

    .. math::

        \sqrt{\frac{(2l+1)(l-\lvert m\rvert)!}{(l+\lvert m\rvert)!}}\,
        \frac{d^{\lvert m\rvert} P_l}{dz^{\lvert m\rvert}}(z/r)\, r^{l-\lvert m\rvert}
        \,\{1, \sqrt{2} \operatorname{Re}, \sqrt{2} \operatorname{Im}\}\big((x_1 + i x_2)^{\lvert m\rvert}\big).

    Built from sympy's Legendre polynomial (not from the recursion of the numerics), so comparing the two is an
    independent check of the basis.
    """
    k = abs(m)
    z = sp.Symbol("z")
    r2 = x[0] ** 2 + x[1] ** 2 + x[2] ** 2
    deriv = sp.Poly(sp.diff(sp.legendre(l, z), z, k), z)
    # r^{l-k} Q(z/r): Q has the parity of l - k, so each term z^p r^{l-k-p} has an even power of r
    radial = sum(coef * x[2] ** e[0] * r2 ** sp.Rational(l - k - e[0], 2) for e, coef in deriv.terms())
    norm = sp.sqrt(sp.Rational((2 * l + 1) * math.factorial(l - k), math.factorial(l + k)))
    w = sp.expand((x[0] + sp.I * x[1]) ** k)
    if m == 0:
        ang = sp.Integer(1)
    elif m > 0:
        ang = sp.sqrt(2) * sp.re(w)
    else:
        ang = sp.sqrt(2) * sp.im(w)
    return sp.expand(norm * radial * ang)


def addition_theorem_derivation(l: int) -> Derivation:
    r""":math:`\sum_m H_{lm}(x) H_{lm}(y)
    = (2l+1) \lVert x\rVert^l \lVert y\rVert^l P_l\big(\langle x, y\rangle / (\lVert x\rVert \lVert y\rVert)\big)`
    as polynomials in :math:`x, y \in \mathbb{R}^3` (:math:`H_{lm}` the
    solid harmonics of :func:`solid_harmonic`): on the unit sphere,
    :math:`\sum_m Y_{lm}(x) Y_{lm}(y) = (2l+1) P_l(\langle x, y\rangle)`.

    The right side is a polynomial: :math:`P_l` has the parity of :math:`l`, so each term
    :math:`\langle x, y\rangle^p (\lVert x\rVert^2 \lVert y\rVert^2)^{(l-p)/2}` has an integer power. Verified by:
    harmonic.addition-theorem (tests/theory/test_harmonic.py).
    """
    xs, ys = (X1, X2, X3), (Y1, Y2, Y3)
    lhs = sp.expand(sum(solid_harmonic(l, m, xs) * solid_harmonic(l, m, ys) for m in range(-l, l + 1)))
    t = sp.Symbol("t")
    dot = X1 * Y1 + X2 * Y2 + X3 * Y3
    rr = (X1 ** 2 + X2 ** 2 + X3 ** 2) * (Y1 ** 2 + Y2 ** 2 + Y3 ** 2)
    P = sp.Poly(sp.legendre(l, t), t)
    rhs = sp.expand((2 * l + 1) * sum(coef * dot ** e[0] * rr ** sp.Rational(l - e[0], 2) for e, coef in P.terms()))
    return Derivation(title=f"addition theorem on S^2, degree {l}: sum_m Y_lm(x) Y_lm(y) = (2l+1) P_l(<x,y>)",
                      source=SOURCE, lhs=lhs, rhs=rhs,
                      steps=(Step("solid harmonics r^l Y_lm from d^m P_l/dz^m (no Condon-Shortley phase)",
                                  solid_harmonic(l, 0, xs)),))


def kernel_expansion_derivation(l: int, order: int = 10) -> Derivation:
    r"""On :math:`\mathbb{S}^2`: :math:`\lambda_l(\beta) = \tfrac{1}{2} \int_{-1}^{1} e^{\beta t} P_l(t)\, dt`
    equals :math:`i_l(\beta) = \sqrt{\pi/(2 \beta)}\, I_{l+1/2}(\beta)`, coefficient by coefficient in :math:`\beta`
    up to ``order`` (exact moments of :math:`t^p P_l` on the left, the power series of :math:`I_{l+1/2}` on the
    right).
    """
    b, t = sym.beta, sp.Symbol("t")
    P = sp.legendre(l, t)
    lhs = sum(sp.integrate(t ** p * P, (t, -1, 1)) / 2 * b ** p / sp.factorial(p) for p in range(order + 1))
    rhs = 0
    j = 0
    while 2 * j + l <= order:
        # sqrt(pi/(2b)) (b/2)^{2j+l+1/2} / (j! Gamma(j+l+3/2)) = sqrt(pi)/2 (b/2)^{2j+l} / (j! Gamma(j+l+3/2))
        rhs += sp.sqrt(sp.pi) / 2 * (b / 2) ** (2 * j + l) / (sp.factorial(j) * sp.gamma(j + l + sp.Rational(3, 2)))
        j += 1
    return Derivation(title=f"Funk-Hecke coefficient of e^(beta t) on S^2, degree {l}: Taylor coefficients to "
                            f"beta^{order}", source=SOURCE, lhs=sp.expand(lhs), rhs=sp.expand(sp.simplify(rhs)),
                      steps=(Step("Legendre profile", P),
                             Step("i_l(beta) = sqrt(pi/(2 beta)) I_{l+1/2}(beta)",
                                  sp.sqrt(sp.pi / (2 * b)) * sp.besseli(l + sp.Rational(1, 2), b))))


def energy_in_moments_derivation(points, L: int) -> Derivation:
    r"""At explicit rational unit vectors:
    :math:`\tfrac{1}{n^2} \sum_{ij} (2l+1) P_l(\langle x_i, x_j\rangle) = \sum_m M_{lm}^2` for each :math:`l \le L`
    (the addition theorem summed over pairs), which with Funk-Hecke gives
    :math:`E_\beta = (\lambda_0 - 1)/(2 \beta) + \sum_l \lambda_l R_l / (2 \beta)`. Exact rational arithmetic
    (points from :func:`theory.derivation.rational_sphere_point`).
    """
    pts = [tuple(sp.sympify(c) for c in p) for p in points]
    n = len(pts)
    lhs, rhs = [], []
    t = sp.Symbol("t")
    for l in range(L + 1):
        P = sp.legendre(l, t)
        pair = sum((2 * l + 1) * P.subs(t, sum(a * b for a, b in zip(p, q))) for p in pts for q in pts) / n ** 2
        moments = [sum(solid_harmonic(l, m).subs(dict(zip((X1, X2, X3), p))) for p in pts) / n
                   for m in range(-l, l + 1)]
        lhs.append(sp.expand(pair))
        rhs.append(sp.expand(sum(M ** 2 for M in moments)))
    return Derivation(title=f"degree powers R_l = (1/n^2) sum_ij (2l+1) P_l(s_ij), n = {n}, l <= {L}",
                      source=SOURCE, lhs=sp.Matrix(lhs), rhs=sp.Matrix(rhs),
                      steps=(Step("R_l = sum_m M_lm^2, M_lm = (1/n) sum_j Y_lm(x_j)", sp.Integer(L)),))
