"""Spherical-harmonic expansion of self-attention on S^{d-1}: addition theorem, Funk-Hecke, truncation bound.

Conventions (docs/conventions.md, section "Spherical harmonics"): mu is the uniform *probability* measure of
S^{d-1}; {Y_lm} an orthonormal basis of the degree-l harmonics in L^2(mu), N(d, l) of them; P_l^{(d)} =
C_l^{(d-2)/2} / C_l^{(d-2)/2}(1) the normalised zonal profile (Legendre P_l on S^2). On S^2 the real basis is
Y_lm = Lam_l^{|m|}(cos theta) {1, sqrt2 cos m phi, sqrt2 sin |m| phi}, Lam_l^m = sqrt((2l+1)(l-m)!/(l+m)!) P_l^m
without the Condon-Shortley phase (the basis of :mod:`numerics.harmonic.transforms` and :mod:`numerics.noise.sphere`).

1. Addition theorem (:func:`addition_theorem_derivation`): sum_m Y_lm(x) Y_lm(y) = N(d, l) P_l^{(d)}(<x, y>);
   on S^2, N = 2l + 1, proved here as a polynomial identity between solid harmonics.
2. Funk-Hecke (:func:`kernel_coefficient_mp`, :func:`kernel_expansion_derivation`): for the kernel e^{beta t},
   E_mu[e^{beta <x, y>} Y_lm(y)] = lambda_l(beta) Y_lm(x) with
   lambda_l(beta) = a_l(beta) / |S^{d-1}| = Gamma(d/2) (2/beta)^{d/2-1} I_{l+d/2-1}(beta)  (S^2: i_l(beta),
   the modified spherical Bessel function), so e^{beta t} = sum_l N(d, l) lambda_l P_l^{(d)}(t). The surface-measure
   coefficient a_l is :func:`theory.meanfield.funk_hecke_closed_form` (derived and checked there).
3. Fields and energy in moments: with M^f_lm = (1/n) sum_j f(x_j) Y_lm(x_j),
   (1/n) sum_j e^{beta <x, x_j>} f(x_j) = sum_l lambda_l sum_m M^f_lm Y_lm(x)  (f = 1: Z/n; f = x: N/n), and
   E_beta = (1/(2 beta n^2)) sum_ij (e^{beta s_ij} - 1) = (lambda_0 - 1)/(2 beta) + sum_{l>=1} lambda_l/(2 beta) R_l,
   R_l = sum_m (M^1_lm)^2 (:func:`energy_in_moments_derivation`, an identity at explicit points).
4. Truncation (:func:`tail_exact_mp`, :func:`tail_bound_mp`): keeping l <= L changes the kernel by
   e_L(t) = sum_{l>L} N_l lambda_l P_l(t) with sup |e_L| <= T_L = sum_{l>L} N_l |lambda_l| (attained at t = 1 for
   beta > 0; T_L = e^{|beta|} - sum_{l<=L} N_l lambda_l(|beta|) exactly). The majorant: the term ratios are at
   most r_L = (N_{L+2}/N_{L+1}) q_{L+1+nu}, nu = d/2 - 1, with Amos' I_{nu+1}/I_nu <= q_nu (both factors decrease in
   l), so T_L <= N_{L+1} |lambda_{L+1}| / (1 - r_L). It decays like (e |beta| / (2L))^L: L ~ e|beta|/2 + log(1/tol).
5. Practical dimensions (:func:`practical_dimensions`): the count of harmonics of degree <= L on S^{d-1} is
   H(d, L) = C(L+d-1, d-1) + C(L+d-2, d-1) ~ 2 L^{d-1}/(d-1)!, the per-token cost of the expansion.

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
    """N(d, l): the dimension of the degree-l spherical harmonics on S^{d-1} (2l + 1 on S^2; 2 on S^1, l >= 1)."""
    if d < 2 or l < 0:
        raise ValueError(f"need d >= 2 and l >= 0, got d={d}, l={l}")
    if l == 0:
        return 1
    return math.comb(l + d - 1, d - 1) - (math.comb(l + d - 3, d - 1) if l >= 2 else 0)


def total_harmonics(d: int, L: int) -> int:
    """H(d, L) = sum_{l<=L} N(d, l) = C(L+d-1, d-1) + C(L+d-2, d-1): (L+1)^2 on S^2."""
    return math.comb(L + d - 1, d - 1) + (math.comb(L + d - 2, d - 1) if L >= 1 else 0)


# -- Funk-Hecke coefficients in the probability normalisation ------------------------------------------------------
def kernel_coefficient_mp(d: int, l: int, beta, dps: int = 30) -> mp.mpf:
    """lambda_l(beta) = a_l(beta) / |S^{d-1}| (probability measure): Gamma(d/2)(2/beta)^{d/2-1} I_{l+d/2-1}(beta);
    lambda_0(0) = 1, lambda_l(0) = 0 for l >= 1; lambda_l(-beta) = (-1)^l lambda_l(beta)."""
    with mp.workdps(dps):
        area = 2 * mp.pi ** (mp.mpf(d) / 2) / mp.gamma(mp.mpf(d) / 2)
        return +(funk_hecke_value(d, l, beta, dps=dps) / area)


def zonal_profile_mp(d: int, l: int, t) -> mp.mpf:
    """P_l^{(d)}(t) = C_l^{(d-2)/2}(t) / C_l^{(d-2)/2}(1) (Legendre P_l for d = 3), by the three-term recursion."""
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
    """sum_{l<=L} N(d, l) lambda_l(beta) P_l^{(d)}(t): the truncated expansion of e^{beta t}."""
    with mp.workdps(dps):
        return +mp.fsum(harmonic_count(d, l) * kernel_coefficient_mp(d, l, beta, dps) * zonal_profile_mp(d, l, t)
                        for l in range(L + 1))


# -- the truncation bound -------------------------------------------------------------------------------------------
def amos_ratio_bound_mp(nu, x) -> mp.mpf:
    """q_nu = x / (nu + 1/2 + sqrt(x^2 + (nu + 1/2)^2)) >= I_{nu+1}(x)/I_nu(x) (Amos 1974, Math. Comp. 28; nu >= 0)."""
    h = mp.mpf(nu) + mp.mpf(1) / 2
    x = mp.mpf(x)
    return x / (h + mp.sqrt(x * x + h * h))


def tail_exact_mp(d: int, L: int, beta, dps: int = 30) -> mp.mpf:
    """T_L(beta) = sum_{l>L} N(d, l) |lambda_l(beta)| (= e^{|beta|} - sum_{l<=L} N(d, l) lambda_l(|beta|), the
    expansion at t = 1), summed term by term (positive terms, no cancellation) until a term falls below 10^-dps of
    the sum once the terms decrease (l > |beta|)."""
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
    """The geometric majorant N_{L+1} |lambda_{L+1}| / (1 - r_L) of T_L (module docstring, item 4); +inf when
    r_L >= 1."""
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
    """Smallest L >= 1 with :func:`tail_bound_mp` <= relative_tol * lambda_0(|beta|) (the reference for
    :func:`numerics.harmonic.expansion.degree_for_tolerance`)."""
    with mp.workdps(dps):
        target = mp.mpf(relative_tol) * kernel_coefficient_mp(d, 0, abs(mp.mpf(beta)), dps)
        L = 1
        while tail_bound_mp(d, L, beta, dps) > target:
            L += 1
        return L


def practical_dimensions(beta=4, relative_tol=1e-10, dims=range(3, 9)) -> list[dict]:
    """Per d: the degree L that the tail criterion needs at (beta, relative_tol), the count H(d, L) of harmonics
    per token, and the memory of one token's harmonic values (8 H bytes).

    The expansion costs about H(d, L) operations per token and pass against n per token for the direct field,
    so it pays for n >~ c H(d, L) and is practical while H stays in the thousands. At beta = 4 and relative
    tolerance 1e-10: d = 3 needs L = 17, H = 324; d = 4: L = 18, H = 2470; d = 5: H = 13300; d = 6: H = 76153;
    d = 7: H ~ 3e5 (tests/theory/test_harmonic.py). So S^2 and S^3 are practical, S^4 only for n >~ 10^5, and from
    d = 6 on the expansion costs more per token than the direct field does for any n that fits in memory.
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
    """r^l Y_lm(x/r) as a polynomial (S^2, the convention of the module docstring, no Condon-Shortley phase):
    sqrt((2l+1)(l-|m|)!/(l+|m|)!) (d^{|m|} P_l / dz^{|m|})(z/r) r^{l-|m|} {1, sqrt2 Re, sqrt2 Im}((x1 + i x2)^{|m|}).

    Built from sympy's Legendre polynomial (not from the recursion of the numerics), so comparing the two is an
    independent check of the basis."""
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
    """sum_m H_lm(x) H_lm(y) = (2l+1) |x|^l |y|^l P_l(<x,y> / (|x||y|)) as polynomials in x, y in R^3 (H_lm the
    solid harmonics of :func:`solid_harmonic`): on the unit sphere, sum_m Y_lm(x) Y_lm(y) = (2l+1) P_l(<x, y>).

    The right side is a polynomial: P_l has the parity of l, so each term (<x,y>)^p (|x|^2 |y|^2)^{(l-p)/2} has an
    integer power. Verified by: harmonic.addition-theorem (tests/theory/test_harmonic.py)."""
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
    """On S^2: lambda_l(beta) = (1/2) int_{-1}^{1} e^{beta t} P_l(t) dt equals i_l(beta) = sqrt(pi/(2 beta))
    I_{l+1/2}(beta), coefficient by coefficient in beta up to ``order`` (exact moments of t^p P_l on the left,
    the power series of I_{l+1/2} on the right)."""
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
    """At explicit rational unit vectors: (1/n^2) sum_ij (2l+1) P_l(<x_i, x_j>) = sum_m M_lm^2 for each l <= L (the
    addition theorem summed over pairs), which with Funk-Hecke gives E_beta = (lambda_0 - 1)/(2 beta) +
    sum_l lambda_l R_l / (2 beta). Exact rational arithmetic (points from :func:`theory.derivation.rational_sphere_point`)."""
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
