r"""Long contexts: attention whose inverse temperature grows with the number of tokens (sympy and mpmath).

Two models of arXiv 2510.05554 (Chen, Lin, Polyanskiy, Rigollet, "Critical attention scaling in long-context
transformers", ICLR 2026; "CLPR-LC" in the notes) and arXiv 2605.08505 ("Scaling limits of long-context
transformers"), and the gap-counting view of arXiv 2605.12697 (Karakida, Hayase). Conventions
(docs/conventions.md, section "Long contexts"):

- :math:`\beta_n = \gamma \log n` with the natural logarithm and :math:`n` the number of tokens (keys) that a
  query attends to, its own key included;
- **the simplex layer.** Tokens :math:`x_i = \sqrt{q}\, y_i` with unit directions :math:`y_i` whose pairwise
  inner products all equal :math:`\rho`. One layer with :math:`Q = K = V = I` and pre-layer normalisation,

  .. math::

      x_i' = \sum_j A_{ij} y_j + \alpha x_i, \qquad
      A_{ij} = \frac{e^{\beta \langle y_i, y_j\rangle}}{\sum_k e^{\beta \langle y_i, y_k\rangle}},

  with the residual coefficient :math:`\alpha` (:math:`\alpha = 0`: the layer without residual of the paper's
  figures). Only :math:`r = \alpha \sqrt{q}` enters the directions. By symmetry the output is again a simplex:
  the map :math:`(q, \rho) \mapsto (q', \rho')` is derived here with symbolic :math:`n`
  (:func:`simplex_layer_gram`), checked against an explicit :math:`n \times n` Gram computation and against the
  spectral form (:func:`simplex_layer_derivation`);
- the self weight is :math:`p_n = A_{ii} = 1 / (1 + (n - 1) n^{-\gamma (1 - \rho)})`; the off-diagonal mass
  :math:`R_n = (n - 1) n^{-\gamma (1 - \rho)}` has :math:`\log R_n / \log n \to 1 - \gamma (1 - \rho)`, so the
  **critical** :math:`\gamma` **is** :math:`1/(1 - \rho)` (:func:`critical_gamma`); :math:`p_n \to 0` below it
  (attention averages: the attention outputs collapse), :math:`\to 1` above it (attention acts as the identity),
  and :math:`\to 1/2` at it, where

  .. math::

      \rho' \to \frac{(1 + r)^2 \rho}{(1 + r)^2 \rho + (p + r)^2 (1 - \rho)}
      \qquad (p = 1/2;\ 0 \text{ below}, 1 \text{ above}),

  which is :math:`4 \rho / (1 + 3 \rho)` without residual (:func:`limit_inner_products`);
- **the flow.** The continuous-time ``sa`` flow from an equiangular start (theory.reductions, the equiangular
  ODE :math:`ds/dt = F(s)`) with :math:`\beta = \gamma \log n` has the initial speed
  :math:`F(\rho) \to 2 \rho (1 - \rho)`, :math:`\rho (1 - \rho)`, :math:`0` below, at and above the same critical
  :math:`\gamma` (:func:`flow_speed_limits`);
- **a fixed query against** :math:`n` **iid uniform keys on** :math:`\mathbb{S}^{d-1}`. The score
  :math:`t = \langle q, k\rangle` has the density :math:`c_d (1 - t^2)^{(d-3)/2}`; :math:`u = 1 - t` has
  :math:`P(u \le x) \sim \kappa_d x^{(d-1)/2}` as :math:`x \to 0` (:func:`poisson_constant`), so the
  :math:`n u_k` rescaled by :math:`n^{2/(d-1)}` converge to a Poisson process of intensity measure
  :math:`\kappa_d s^{(d-1)/2}` and the critical scale is :math:`\beta^*_n \sim n^{2/(d-1)}`. Below it the
  output's component along :math:`q` tends to
  :math:`M_d'(\beta)/M_d(\beta) = I_{d/2}(\beta)/I_{d/2-1}(\beta)` with :math:`M_d(\beta) = E\, e^{\beta t}`
  (:func:`sphere_moment`, :func:`mean_resultant`).

Closed forms are plain functions of floats (:func:`critical_gamma`, :func:`limit_inner_products`,
:func:`poisson_constant_value`) so that the certified stream can enclose them; the symbolic derivations return
:class:`theory.derivation.Derivation` objects. Verified by: longcontext.simplex-critical-gamma,
longcontext.simplex-reduction, longcontext.flow-transition, longcontext.fixed-query-critical-constant.
"""
from __future__ import annotations

import random
from functools import lru_cache

import mpmath as mp
import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step
from .kernels import exponential_kernel
from .reductions import equiangular_rate

SOURCE_SIMPLEX = ("arXiv 2510.05554 (Chen, Lin, Polyanskiy, Rigollet), simplex tokens, beta_n = gamma log n, "
                  "residual coefficient alpha")
SOURCE_FIXED_QUERY = "arXiv 2605.08505 (scaling limits of long-context transformers), fixed query, iid uniform keys"

#: the scaling constant: :math:`\beta = \gamma \log n`
gamma = sp.Symbol("gamma", positive=True)
#: the common inner product of the simplex tokens' directions
rho = sp.Symbol("rho", real=True)
#: the residual coefficient and the squared token norm (:math:`x_i = \sqrt{q}\, y_i`)
alpha = sp.Symbol("alpha", real=True)
q = sp.Symbol("q", positive=True)
#: the self weight :math:`A_{ii}` of the simplex layer
p = sp.Symbol("p", positive=True)
#: the residual weight :math:`r = \alpha \sqrt{q}` of the directions
r = sp.Symbol("r", real=True)

REGIMES = ("subcritical", "critical", "supercritical")


# -- the simplex layer ----------------------------------------------------------------------------------------
def self_weight(n=sym.n, beta=sym.beta, rho_=rho) -> sp.Expr:
    r""":math:`A_{ii} = e^{\beta} / (e^{\beta} + (n - 1) e^{\beta \rho})` on a simplex (softmax row of token
    :math:`i`)."""
    return sp.exp(beta) / (sp.exp(beta) + (n - 1) * sp.exp(beta * rho_))


def simplex_layer_gram(n=sym.n, p_=p, rho_=rho, r_=r) -> tuple[sp.Expr, sp.Expr]:
    r"""(diagonal, off-diagonal) of the Gram matrix of :math:`x_i' = \sum_j A_{ij} y_j + r y_i` on a simplex.

    With :math:`A_{ii} = p` and :math:`A_{ij} = e = (1 - p)/(n - 1)`, :math:`x_i' = u y_i + e S` with
    :math:`u = p - e + r` and :math:`S = \sum_j y_j`; the Gram rules :math:`\langle y_i, y_j\rangle = \rho`
    (:math:`i \ne j`), :math:`\langle y_i, S\rangle = 1 + (n - 1) \rho` and
    :math:`\lVert S\rVert^2 = n (1 + (n - 1) \rho)` give both entries with :math:`n` symbolic (no expression grows
    with :math:`n`).
    """
    e = (1 - p_) / (n - 1)
    u = p_ - e + r_
    yS = 1 + (n - 1) * rho_
    SS = n * yS
    cross = 2 * u * e * yS + e**2 * SS
    return sp.expand(u**2 + cross), sp.expand(u**2 * rho_ + cross)


def simplex_spectral_gram(n=sym.n, p_=p, rho_=rho, r_=r) -> tuple[sp.Expr, sp.Expr]:
    r"""The same two entries from the spectra: :math:`G = (1 - \rho) I + \rho \mathbf{1} \mathbf{1}^T` and
    :math:`A + r I` share the eigenvectors :math:`\mathbf{1}` (eigenvalues :math:`1 + (n - 1) \rho` and
    :math:`1 + r`: :math:`A` is row-stochastic) and :math:`\mathbf{1}^\perp` (:math:`1 - \rho` and
    :math:`p - e + r`), so :math:`G' = (A + r I) G (A + r I)^T` has eigenvalues
    :math:`\lambda_1 = (1 + r)^2 (1 + (n - 1) \rho)` and :math:`\lambda_\perp = (p - e + r)^2 (1 - \rho)`;
    diagonal :math:`(\lambda_1 + (n - 1) \lambda_\perp)/n`, off-diagonal :math:`(\lambda_1 - \lambda_\perp)/n`.
    """
    e = (1 - p_) / (n - 1)
    lam1 = (1 + r_) ** 2 * (1 + (n - 1) * rho_)
    lamp = (p_ - e + r_) ** 2 * (1 - rho_)
    return (lam1 + (n - 1) * lamp) / n, (lam1 - lamp) / n


def _explicit_gram(n: int) -> tuple[sp.Expr, sp.Expr]:
    """Entries (0, 0) and (0, 1) of (A + r I) G (A + r I)^T with explicit n x n matrices (small-n path)."""
    e = (1 - p) / (n - 1)
    A = sp.Matrix(n, n, lambda i, j: p if i == j else e)
    G = sp.Matrix(n, n, lambda i, j: 1 if i == j else rho)
    M = A + r * sp.eye(n)
    out = M * G * M.T
    return out[0, 0], out[0, 1]


def simplex_layer_derivation(n: int = 4) -> Derivation:
    r"""Derivation: the Gram-algebra entries (:func:`simplex_layer_gram`, symbolic :math:`n`) equal the explicit
    :math:`n \times n` product and the spectral form at this ``n`` (both sides proved by simplification, symbols
    :math:`p, \rho, r`)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    algebra = simplex_layer_gram(sp.Integer(n))
    spectral = simplex_spectral_gram(sp.Integer(n))
    explicit = _explicit_gram(n)
    lhs = sp.Matrix([algebra[0], algebra[1], algebra[0], algebra[1]])
    rhs = sp.Matrix([explicit[0], explicit[1], spectral[0], spectral[1]])
    steps = (Step("x_i' = u y_i + e S, e = (1 - p)/(n - 1), u = p - e + r (symbolic n)", sp.Matrix(algebra)),
             Step(f"explicit (A + r I) G (A + r I)^T, n = {n}", sp.Matrix(explicit)),
             Step("spectral form (eigenvectors 1 and 1^perp)", sp.Matrix(spectral)))
    return Derivation(f"simplex layer Gram entries, n = {n} (diagonal, off-diagonal; twice)", SOURCE_SIMPLEX,
                      lhs, rhs, steps, notes="x_i' = sum_j A_ij y_j + r y_i, r = alpha sqrt(q); pre-LN, Q=K=V=I")


def simplex_inner_product(n=sym.n, p_=p, rho_=rho, r_=r) -> sp.Expr:
    r""":math:`\rho' = \langle x_i', x_j'\rangle / \lVert x_i'\rVert^2` of the simplex layer (spectral form,
    symbolic :math:`n`)."""
    diag, off = simplex_spectral_gram(n, p_, rho_, r_)
    return off / diag


@lru_cache(maxsize=None)
def off_diagonal_mass_exponent() -> sp.Expr:
    r""":math:`\lim_{n \to \infty} \log R_n / \log n` for :math:`R_n = (n - 1) e^{-\beta_n (1 - \rho)}`,
    :math:`\beta_n = \gamma \log n` (sympy limit)."""
    nn = sp.Symbol("n", positive=True)
    expr = sp.log(nn - 1) / sp.log(nn) - gamma * (1 - rho)
    return sp.simplify(sp.limit(expr, nn, sp.oo))


@lru_cache(maxsize=None)
def critical_gamma_expr() -> sp.Expr:
    r"""The root in :math:`\gamma` of the exponent of :func:`off_diagonal_mass_exponent` (the critical scaling)."""
    roots = sp.solve(sp.Eq(off_diagonal_mass_exponent(), 0), gamma)
    if len(roots) != 1:
        raise ArithmeticError(f"expected one critical gamma, got {roots}")
    return sp.simplify(roots[0])


@lru_cache(maxsize=None)
def critical_off_diagonal_mass_limit() -> sp.Expr:
    r""":math:`\lim R_n` at :math:`\gamma = 1/(1 - \rho)`: :math:`(n - 1) n^{-1} \to 1`, hence
    :math:`p_n \to 1/2` (sympy limit)."""
    nn = sp.Symbol("n", positive=True)
    R = (nn - 1) * sp.exp(-critical_gamma_expr() * sp.log(nn) * (1 - rho))
    return sp.limit(sp.simplify(R), nn, sp.oo)


def limit_self_weights() -> dict[str, sp.Expr]:
    r""":math:`p_\infty` in each regime: :math:`R_n \to \infty` (exponent :math:`> 0`), :math:`R_n \to \lim` at
    the critical :math:`\gamma`, :math:`R_n \to 0` (exponent :math:`< 0`)."""
    R_crit = critical_off_diagonal_mass_limit()
    return {"subcritical": sp.Integer(0), "critical": sp.simplify(1 / (1 + R_crit)), "supercritical": sp.Integer(1)}


def limit_inner_product_expr(p_inf) -> sp.Expr:
    r""":math:`\lim_{n \to \infty} \rho'(n, p)` at a fixed self weight :math:`p` = ``p_inf`` (sympy limit of the
    symbolic-:math:`n` map)."""
    nn = sp.Symbol("n", positive=True)
    ratio = sp.cancel(sp.together(simplex_inner_product(nn, sp.sympify(p_inf))))  # rational in n
    return sp.factor(sp.limit(ratio, nn, sp.oo))


def limit_inner_products_expr() -> dict[str, sp.Expr]:
    r""":math:`\rho'_\infty` in the three regimes as expressions of :math:`\rho` and :math:`r = \alpha \sqrt{q}`."""
    return {k: limit_inner_product_expr(v) for k, v in limit_self_weights().items()}


def _check_rho(value) -> float:
    x = float(value)
    if not 0.0 <= x < 1.0:
        raise ValueError(f"rho must be in [0, 1) (n -> oo needs rho >= 0), got {value!r}")
    return x


def critical_gamma(rho_value: float) -> float:
    r""":math:`\gamma_c = 1/(1 - \rho)`: the critical scaling :math:`\beta_n = \gamma_c \log n` of the simplex layer
    (closed form of :func:`critical_gamma_expr`). Verified by: longcontext.simplex-critical-gamma."""
    return 1.0 / (1.0 - _check_rho(rho_value))


def limit_inner_products(rho_value: float, alpha_value: float = 0.0, q_value: float = 1.0) -> dict[str, float]:
    r"""The :math:`n \to \infty` limits of :math:`\rho'` below, at and above :math:`\gamma_c` (closed forms of
    :func:`limit_inner_products_expr`):

    .. math::

        \rho'_\infty(p) = \frac{(1 + r)^2 \rho}{(1 + r)^2 \rho + (p + r)^2 (1 - \rho)}, \qquad
        r = \alpha \sqrt{q}, \quad p = 0, \tfrac{1}{2}, 1.

    For :math:`\rho = 0` and :math:`r = 0` the subcritical value is :math:`0/0` and returned as nan: orthogonal
    tokens give :math:`\rho' \to 1` for :math:`\gamma < 1/2` and :math:`\rho' \to 0` for
    :math:`1/2 < \gamma < 1` (the self weight :math:`p_n^2` against :math:`1/n`), not one limit.
    """
    x = _check_rho(rho_value)
    if not float(q_value) > 0:
        raise ValueError(f"q must be > 0, got {q_value!r}")
    rr = float(alpha_value) * float(q_value) ** 0.5
    out = {}
    for regime, pp in zip(REGIMES, (0.0, 0.5, 1.0)):
        num = (1 + rr) ** 2 * x
        den = num + (pp + rr) ** 2 * (1 - x)
        out[regime] = num / den if den > 0 else float("nan")
    return out


def simplex_layer_mp(n, gamma_value, rho_value, alpha_value=0, q_value=1, dps: int = 50) -> tuple:
    r""":math:`(p, q', \rho')` of one simplex layer at :math:`\beta = \gamma \log n` in mpmath (reference; the
    spectral route)."""
    with mp.workdps(dps):
        n, g, x = mp.mpf(n), mp.mpf(gamma_value), mp.mpf(rho_value)
        rr = mp.mpf(alpha_value) * mp.sqrt(mp.mpf(q_value))
        pp = 1 / (1 + (n - 1) * mp.exp(-g * mp.log(n) * (1 - x)))
        e = (1 - pp) / (n - 1)
        lam1 = (1 + rr) ** 2 * (1 + (n - 1) * x)
        lamp = (pp - e + rr) ** 2 * (1 - x)
        diag, off = (lam1 + (n - 1) * lamp) / n, (lam1 - lamp) / n
        return pp, diag, off / diag


def simplex_map_function():
    """The generated NumPy function ``simplex_map(n, p, rho, r) -> (q', rho')`` (theory.codegen)."""
    from .codegen import compile_function

    diag, off = simplex_layer_gram()
    return compile_function("simplex_map", (sym.n, p, rho, r), (diag, off / diag),
                            doc="(q', rho') of the simplex layer; arguments n, p = A_ii, rho, r = alpha sqrt(q)")


# -- the continuous-time flow from an equiangular start --------------------------------------------------------
def flow_speed(n=sym.n, gamma_=gamma, rho_=rho) -> sp.Expr:
    r""":math:`F(\rho)` of the ``sa`` equiangular ODE (theory.reductions.equiangular_rate) at
    :math:`\beta = \gamma \log n`."""
    F = equiangular_rate(exponential_kernel(), "sa", n)
    return F.subs(sym.beta, gamma_ * sp.log(n)).subs(sym.s, rho_)


@lru_cache(maxsize=None)
def flow_speed_limits() -> dict[str, sp.Expr]:
    r""":math:`\lim_{n \to \infty} F(\rho)` at :math:`\gamma = \gamma_c / 2`, :math:`\gamma_c` and
    :math:`2 \gamma_c` (sympy limits; :math:`2 \rho (1 - \rho)`, :math:`\rho (1 - \rho)`, :math:`0`): the
    equiangular flow has the same critical :math:`\gamma` as the layer."""
    nn = sp.Symbol("n", positive=True)
    w = sp.Symbol("w", positive=True)  # w = 1 - rho > 0: the limits need the sign of 1 - rho
    gc = critical_gamma_expr()
    out = {}
    for regime, factor in zip(REGIMES, (sp.Rational(1, 2), sp.Integer(1), sp.Integer(2))):
        F = sp.powsimp(sp.simplify(flow_speed(nn, factor * gc).subs(rho, 1 - w)), force=True)
        out[regime] = sp.factor(sp.limit(F, nn, sp.oo).subs(w, 1 - rho))
    return out


# -- a fixed query against iid uniform keys on S^{d-1} ------------------------------------------------------------
def _check_d(d) -> int:
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    return d


def score_density_constant(d: int) -> sp.Expr:
    r""":math:`c_d` with density :math:`c_d (1 - t^2)^{(d-3)/2}` of :math:`t = \langle q, k\rangle` for :math:`k`
    uniform on :math:`\mathbb{S}^{d-1}`."""
    d = _check_d(d)
    return sp.gamma(sp.Rational(d, 2)) / (sp.sqrt(sp.pi) * sp.gamma(sp.Rational(d - 1, 2)))


def poisson_constant(d: int) -> sp.Expr:
    r""":math:`\kappa_d = \lim_{x \to 0} P(1 - t \le x) / x^{(d-1)/2}` (sympy limit of the exact integral's
    ratio)."""
    d = _check_d(d)
    x, v = sp.Symbol("x", positive=True), sp.Symbol("v", positive=True)
    m = sp.Rational(d - 1, 2)
    # near u = 1 - t = 0: (1 - t^2)^{(d-3)/2} = (u (2 - u))^{(d-3)/2}; the ratio's limit is the integral of the
    # leading term (2u)^{(d-3)/2}, obtained here as a limit of the exact expression after u = x v
    integrand = score_density_constant(d) * (x * v * (2 - x * v)) ** sp.Rational(d - 3, 2) * x / x**m
    return sp.simplify(sp.integrate(sp.limit(integrand, x, 0), (v, 0, 1)))


def poisson_constant_value(d: int) -> float:
    r""":math:`\kappa_d = c_d 2^{(d-1)/2} / (d - 1)` as a float (closed form of :func:`poisson_constant`)."""
    d = _check_d(d)
    return float(score_density_constant(d) * sp.Integer(2) ** sp.Rational(d - 1, 2) / (d - 1))


def sphere_moment(d: int, beta=sym.beta) -> sp.Expr:
    r""":math:`M_d(\beta) = E\, e^{\beta t} = \Gamma(d/2) (2/\beta)^{d/2-1} I_{d/2-1}(\beta)` (Funk-Hecke degree
    0)."""
    d = _check_d(d)
    nu = sp.Rational(d, 2) - 1
    return sp.gamma(sp.Rational(d, 2)) * (2 / beta) ** nu * sp.besseli(nu, beta)


def sphere_moment_mp(d: int, beta, dps: int = 30):
    r""":math:`E\, e^{\beta t}` by mpmath quadrature of :math:`c_d (1 - t^2)^{(d-3)/2} e^{\beta t}` (reference)."""
    d = _check_d(d)
    with mp.workdps(dps):
        c = mp.gamma(mp.mpf(d) / 2) / (mp.sqrt(mp.pi) * mp.gamma(mp.mpf(d - 1) / 2))
        b = mp.mpf(beta)
        return c * mp.quad(lambda t: (1 - t * t) ** (mp.mpf(d - 3) / 2) * mp.exp(b * t), [-1, 0, 1])


def mean_resultant(d: int, beta=sym.beta) -> sp.Expr:
    r""":math:`E[t e^{\beta t}] / E[e^{\beta t}] = \frac{d}{d\beta} \log M_d(\beta)` (unsimplified; equal to
    :math:`I_{d/2}(\beta)/I_{d/2-1}(\beta)` by :func:`mean_resultant_derivation`): the component along :math:`q`
    of the subcritical attention output (the deterministic bias is 1 minus it)."""
    M = sphere_moment(d, beta)
    return sp.diff(M, beta) / M


def mean_resultant_derivation(d: int) -> Derivation:
    r"""Derivation: :math:`\frac{d}{d\beta} \log M_d = I_{d/2}(\beta) / I_{d/2-1}(\beta)` (checked at random
    rational :math:`\beta > 0`)."""
    d = _check_d(d)
    nu = sp.Rational(d, 2) - 1
    rhs = sp.besseli(nu + 1, sym.beta) / sp.besseli(nu, sym.beta)
    lhs = sp.diff(sphere_moment(d), sym.beta) / sphere_moment(d)

    def sampler(rng: random.Random):
        return {sym.beta: sp.Rational(rng.randint(1, 400), rng.randint(1, 20))}

    return Derivation(f"mean resultant of the softmax over uniform keys on S^{d - 1}", SOURCE_FIXED_QUERY, lhs, rhs,
                      (Step("M_d(beta) = E e^{beta t}", sphere_moment(d)),), sampler=sampler,
                      notes="I_{nu+1} = I_nu' - (nu/beta) I_nu")


def mean_resultant_mp(d: int, beta, dps: int = 30):
    r""":math:`I_{d/2}(\beta)/I_{d/2-1}(\beta)` in mpmath (reference)."""
    d = _check_d(d)
    with mp.workdps(dps):
        nu = mp.mpf(d) / 2 - 1
        return mp.besseli(nu + 1, beta) / mp.besseli(nu, beta)


# -- the gap-counting accumulation scale ----------------------------------------------------------------------------
def accumulation_scale_laws() -> dict[str, sp.Expr]:
    r"""Leading laws of :math:`A_n = \sup_{\delta > 0} \log \bar N_n(\delta) / \delta` for the score families of
    :mod:`numerics.longcontext.gaps` (:math:`\bar N_n`: expected number of scores within :math:`\delta` of the
    typical maximum :math:`a_n`, :math:`n \bar F(a_n) = 1`). For a log-concave tail the sup is the slope at
    :math:`\delta = 0`, the hazard rate at :math:`a_n`:

    - gaussian :math:`N(0, 1)`: :math:`\text{hazard}(a_n) \sim a_n \sim \sqrt{2 \log n}`;
    - simplex (one score 1, :math:`n - 1` scores :math:`\rho`):
      :math:`\bar N = 1 + (n - 1) \mathbf{1}\{\delta \ge 1 - \rho\}`, sup at :math:`\delta = 1 - \rho`:
      :math:`\log n / (1 - \rho)`;
    - flat edge (:math:`a = -1/Y`, :math:`Y \sim \mathrm{Exp}(1)`, :math:`\bar F(-x) = e^{-1/x}`):
      :math:`a_n = -1/\log n`, hazard :math:`1/a_n^2 = (\log n)^2`;
    - sphere (:math:`t = \langle q, k\rangle`, :math:`d`): :math:`P(1 - t \le x) \sim \kappa_d x^m`,
      :math:`m = (d-1)/2`: hazard :math:`m / u_n = m (\kappa_d n)^{1/m}`.
    """
    nn = sp.Symbol("n", positive=True)
    xx = sp.Symbol("x", positive=True)
    # flat edge: the slope at delta = 0 of log(n e^{-1/(x_n + delta)}), x_n = 1/log n, derived (not typed in)
    delta = sp.Symbol("delta", positive=True)
    flat = sp.simplify(sp.diff(sp.log(nn * sp.exp(-1 / (1 / sp.log(nn) + delta))), delta).subs(delta, 0))
    m = sp.Symbol("m", positive=True)
    kap = sp.Symbol("kappa", positive=True)
    u_n = sp.solve(sp.Eq(nn * kap * xx**m, 1), xx)[0]
    sphere = sp.simplify(sp.diff(sp.log(nn * kap * (u_n + delta) ** m), delta).subs(delta, 0))
    return {"gaussian": sp.sqrt(2 * sp.log(nn)), "simplex": sp.log(nn) / (1 - rho), "flat-edge": flat,
            "sphere": sphere}
