r"""Gaussian solutions of the transformer PDE in :math:`\mathbb{R}^d`: derivations of the moment ODEs (sympy only).

Setting (Castin, Ablin, Carrillo, Peyre, arXiv 2501.18322, "CACP"; tokens in :math:`\mathbb{R}^d`, no sphere, no
projection, time = depth). A probability measure :math:`\mu_t` on :math:`\mathbb{R}^d` is transported by the
attention velocity

.. math::

    \Gamma[\mu](x) = \frac{\int V y\, w(x, y)\, d\mu(y)}{\int w(x, y)\, d\mu(y)}, \qquad
    \frac{dX}{dt} = \Gamma[\mu_t](X),

with, for :math:`A = K^\top Q` (:math:`\beta` absorbed in :math:`Q, K`):

- ``softmax`` (traditional attention): :math:`w(x, y) = e^{\langle Qx, Ky\rangle} = e^{y^\top A x}`;
- ``l2``: :math:`w(x, y) = e^{-\lVert Qx - Ky\rVert^2 / 2}` (our scale; CACP's L2 attention may carry another
  constant in the exponent, which rescales :math:`Q` and :math:`K`: see proofs_notes/gaussian-ode-vs-quadrature.md);
- ``sinkhorn``: :math:`\Gamma[\mu](x) = V\, \mathbb{E}_\pi[Y \mid X = x]` where :math:`\pi` is the entropic
  optimal-transport plan between :math:`\mu` and itself for the kernel :math:`e^{y^\top A x}` (:math:`x` the
  query): :math:`\pi(dx, dy) = f(x) g(y) e^{y^\top A x} \mu(dx) \mu(dy)` with both marginals equal to :math:`\mu`
  (the mean-field limit of doubly stochastic attention, Sinkformers arXiv 2110.11773).

For :math:`\mu = N(\alpha, \Sigma)` each :math:`\Gamma` is affine, :math:`\Gamma(x) = b + J x`, and an affine field
transports Gaussians to Gaussians with :math:`\tfrac{d\alpha}{dt} = b + J \alpha = \mathbb{E}[\Gamma(X)]`,
:math:`\tfrac{d\Sigma}{dt} = J \Sigma + \Sigma J^\top`. Results (derived below, general :math:`d` in matrix form,
checked symbolically at :math:`d = 1, 2`):

- ``softmax``: :math:`\Gamma(x) = V (\alpha + \Sigma A x)` (tilting :math:`N(\alpha, \Sigma)` by
  :math:`e^{y^\top A x}`),

  .. math::

      \frac{d\alpha}{dt} = V (I + \Sigma A) \alpha, \qquad
      \frac{d\Sigma}{dt} = V \Sigma A \Sigma + \Sigma A^\top \Sigma V^\top;

- ``l2``: :math:`\Gamma(x) = V \tilde\Sigma (\Sigma^{-1} \alpha + A x)`,
  :math:`\tilde\Sigma = (\Sigma^{-1} + K^\top K)^{-1}`,

  .. math::

      \frac{d\alpha}{dt} = V \tilde\Sigma (\Sigma^{-1} + A) \alpha, \qquad
      \frac{d\Sigma}{dt} = V \tilde\Sigma A \Sigma + \Sigma A^\top \tilde\Sigma V^\top;

- ``sinkhorn``: :math:`\Gamma(x) = V (\alpha + S A (x - \alpha))`, where :math:`S = \operatorname{Cov}(Y \mid X)`
  solves :math:`S A \Sigma A^\top S + S = \Sigma`, i.e.

  .. math::

      S = \Sigma^{1/2}\, 2 \big(I + (I + 4 G)^{1/2}\big)^{-1} \Sigma^{1/2}, \qquad
      G = \Sigma^{1/2} A \Sigma A^\top \Sigma^{1/2},

  .. math::

      \frac{d\alpha}{dt} = V \alpha, \qquad \frac{d\Sigma}{dt} = V S A \Sigma + \Sigma A^\top S V^\top.

Note on the softmax mean: :math:`\Gamma(x) = V(\alpha + \Sigma A x)` (docs/conventions.md) and
:math:`\tfrac{d\alpha}{dt} = V(I + \Sigma A) \alpha` (docs/literature.md) are the same statement: the mean velocity
is :math:`\mathbb{E}[\Gamma(X)] = V(\alpha + \Sigma A \alpha)`.

Every formula here is a :class:`theory.derivation.Derivation` that verifies itself; the right-hand sides are
emitted as NumPy code through :mod:`theory.codegen` (:func:`moment_rhs_function`).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

import sympy as sp

from . import symbols as sym
from .codegen import compile_function, function_source, module_source
from .derivation import Derivation, Step, random_rational

ATTENTIONS = ("softmax", "l2", "sinkhorn")
SOURCE = "arXiv 2501.18322 (CACP), Gaussian solutions of the Transformer PDE"


# -- symbols ----------------------------------------------------------------------------------------------------
def square_matrix(name: str, dim: int) -> sp.Matrix:
    """A dim x dim matrix of real symbols ``name_ij`` (1-based)."""
    return sp.Matrix(dim, dim, lambda i, j: sp.Symbol(f"{name}_{i + 1}{j + 1}", real=True))


def symmetric_matrix(name: str, dim: int) -> sp.Matrix:
    r"""A symmetric ``dim`` x ``dim`` matrix of real symbols ``name_ij``, :math:`i \le j` (``name_ji`` is
    ``name_ij``).
    """
    return sp.Matrix(dim, dim, lambda i, j: sp.Symbol(f"{name}_{min(i, j) + 1}{max(i, j) + 1}", real=True))


def upper_entries(M: sp.Matrix) -> list:
    r"""Entries :math:`M_{ij}` with :math:`i \le j`, row by row (the order used by generated code for symmetric
    matrices).
    """
    return [M[i, j] for i in range(M.rows) for j in range(i, M.cols)]


@dataclass(frozen=True)
class GaussianSymbols:
    r"""Symbols of one Gaussian problem in :math:`\mathbb{R}^d`: query point :math:`x`, key point :math:`y`, mean,
    covariance, matrices.
    """

    d: int
    x: sp.Matrix
    y: sp.Matrix
    alpha: sp.Matrix
    Sigma: sp.Matrix
    A: sp.Matrix
    V: sp.Matrix
    Q: sp.Matrix
    K: sp.Matrix
    S: sp.Matrix  # conditional covariance of the Sinkhorn plan (defined by the Riccati equation)


@cache
def gaussian_symbols(d: int) -> GaussianSymbols:
    r"""The symbols at explicit dimension :math:`d` (:math:`1 \le d \le 3`; derivations are symbolic at small
    :math:`d`)."""
    if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 3:
        raise ValueError(f"symbolic Gaussian derivations are built at d in {{1, 2, 3}}, got {d!r}")
    return GaussianSymbols(d, sym.vector("x", d), sym.vector("y", d), sym.vector("alpha", d),
                           symmetric_matrix("Sigma", d), square_matrix("A", d), square_matrix("V", d),
                           square_matrix("Q", d), square_matrix("K", d), symmetric_matrix("S", d))


def _scalar(M: sp.Matrix) -> sp.Expr:
    return M[0, 0]


def _rational_spd(rng: random.Random, d: int) -> sp.Matrix:
    """An exact rational symmetric positive-definite matrix (L L^T + I/2 with rational L)."""
    L = sp.Matrix(d, d, lambda i, j: random_rational(rng, -2, 2, 5) if j <= i else 0)
    return L * L.T + sp.eye(d) / 2


def _sampler(g: GaussianSymbols, spd=("Sigma",)):
    """Exact rational points: PD matrices for the names in ``spd``, rationals for everything else."""

    def sample(rng: random.Random):
        subs = {}
        for name in ("Sigma", "S"):
            M = getattr(g, name)
            if name in spd:
                val = _rational_spd(rng, g.d)
                subs.update({M[i, j]: val[i, j] for i in range(g.d) for j in range(g.d)})
        for M in (g.x, g.y, g.alpha, g.A, g.V, g.Q, g.K):
            for e in M:
                subs.setdefault(e, random_rational(rng))
        subs.setdefault(sym.t, random_rational(rng, 0, 1, 13))
        return subs

    return sample


# -- step 1: the Gaussian integrals ---------------------------------------------------------------------------
def _gaussian_exponent(g: GaussianSymbols) -> sp.Expr:
    r = g.y - g.alpha
    return -_scalar(r.T * g.Sigma.inv() * r) / 2


def softmax_tilting_derivation(d: int) -> Derivation:
    r"""Completing the square: :math:`N(\alpha, \Sigma)` tilted by :math:`e^{y^\top A x}` is
    :math:`N(\alpha + \Sigma A x, \Sigma)`.

    Identity (in :math:`y`, for every :math:`x`):

    .. math::

        -\tfrac{1}{2} (y-\alpha)^\top \Sigma^{-1} (y-\alpha) + y^\top A x
        = -\tfrac{1}{2} (y-m)^\top \Sigma^{-1} (y-m) + c(x), \qquad m(x) = \alpha + \Sigma A x, \qquad
        c(x) = \tfrac{1}{2}\big(m^\top \Sigma^{-1} m - \alpha^\top \Sigma^{-1} \alpha\big).

    The :math:`y`-independent :math:`c(x)` cancels between numerator and denominator of :math:`\Gamma`, so the
    normalised tilted law is :math:`N(m(x), \Sigma)` and :math:`\Gamma(x) = V m(x)`.

    Verified by: gaussian.ode-vs-quadrature
    """
    g = gaussian_symbols(d)
    P = g.Sigma.inv()
    m = g.alpha + g.Sigma * g.A * g.x
    lhs = _gaussian_exponent(g) + _scalar(g.y.T * g.A * g.x)
    c = (_scalar(m.T * P * m) - _scalar(g.alpha.T * P * g.alpha)) / 2
    rhs = -_scalar((g.y - m).T * P * (g.y - m)) / 2 + c
    return Derivation(
        title=f"softmax attention: tilting N(alpha, Sigma) by exp(y^T A x) (d = {d})",
        source=SOURCE, lhs=sp.expand(lhs), rhs=sp.expand(rhs),
        steps=(Step("log-weight of the tilted Gaussian", lhs),
               Step("its maximiser in y (the tilted mean)", m),
               Step("velocity Gamma(x) = V m(x), affine in x", g.V * m)),
        sampler=_sampler(g),
        notes="w = exp(y^T A x), A = K^T Q; the quadratic part in y is unchanged, so the tilted covariance is Sigma",
    )


def l2_precision(g: GaussianSymbols) -> sp.Matrix:
    r"""Precision :math:`\Sigma^{-1} + K^\top K` of :math:`N(\alpha, \Sigma)` tilted by
    :math:`e^{-\lVert Qx - Ky\rVert^2/2}`.
    """
    return g.Sigma.inv() + g.K.T * g.K


def l2_tilting_derivation(d: int) -> Derivation:
    r"""Completing the square for L2 attention, :math:`w = e^{-\lVert Qx - Ky\rVert^2 / 2}`.

    The tilted law is :math:`N(m(x), \tilde\Sigma)` with precision
    :math:`\tilde\Sigma^{-1} = \Sigma^{-1} + K^\top K` and mean
    :math:`m(x) = \tilde\Sigma (\Sigma^{-1} \alpha + K^\top Q x) = \tilde\Sigma (\Sigma^{-1} \alpha + A x)`; hence
    :math:`\Gamma(x) = V m(x)`.

    Verified by: gaussian.ode-vs-quadrature
    """
    g = gaussian_symbols(d)
    P = l2_precision(g)
    m = P.inv() * (g.Sigma.inv() * g.alpha + g.K.T * g.Q * g.x)
    diff = g.Q * g.x - g.K * g.y
    lhs = _gaussian_exponent(g) - _scalar(diff.T * diff) / 2
    c = (_scalar(m.T * P * m) - _scalar(g.alpha.T * g.Sigma.inv() * g.alpha) - _scalar((g.Q * g.x).T * g.Q * g.x)) / 2
    rhs = -_scalar((g.y - m).T * P * (g.y - m)) / 2 + c
    return Derivation(
        title=f"L2 attention: tilting N(alpha, Sigma) by exp(-|Qx - Ky|^2/2) (d = {d})",
        source=SOURCE, lhs=lhs, rhs=rhs,
        steps=(Step("log-weight of the tilted Gaussian", lhs),
               Step("tilted precision Sigma^{-1} + K^T K", P),
               Step("tilted mean (Sigma^{-1} + K^T K)^{-1} (Sigma^{-1} alpha + K^T Q x)", m)),
        sampler=_sampler(g),
        notes="our scale exp(-|Qx-Ky|^2/2); a scale exp(-c|Qx-Ky|^2) is ours with Q, K multiplied by sqrt(2c)",
    )


def sinkhorn_scalar_plan_derivation() -> Derivation:
    r""":math:`d = 1` from scratch: the Gaussian entropic plan between :math:`N(\alpha, \sigma)` and itself for
    kernel :math:`e^{a x y}`.

    A jointly Gaussian :math:`\pi` with both marginals :math:`N(\alpha, \sigma)` and cross-covariance :math:`c` has
    density ratio :math:`f(x) g(y) e^{a x y}` with respect to :math:`\mu \otimes \mu` iff its joint precision has
    off-diagonal entry :math:`-a`, i.e. :math:`c / (\sigma^2 - c^2) = a`. The root with
    :math:`\lvert c\rvert < \sigma` is :math:`c = \big(\sqrt{1 + 4 a^2 \sigma^2} - 1\big) / (2 a)`, and the
    conditional variance :math:`s = \operatorname{Var}(Y \mid X) = \sigma - c^2/\sigma` equals
    :math:`2 \sigma / \big(1 + \sqrt{1 + 4 a^2 \sigma^2}\big)`.

    Verified by: gaussian.ode-vs-quadrature
    """
    a = sp.Symbol("a", real=True, nonzero=True)
    sigma = sp.Symbol("sigma", positive=True)
    c = sp.Symbol("c", real=True)
    condition = sp.Eq(a * (sigma**2 - c**2), c)
    roots = sp.solve(condition, c)
    root = (sp.sqrt(1 + 4 * a**2 * sigma**2) - 1) / (2 * a)
    if not any(sp.simplify(r - root) == 0 for r in roots):  # the admissible root must be among sympy's roots
        raise RuntimeError(f"unexpected roots {roots}")
    lhs = sigma - root**2 / sigma
    rhs = 2 * sigma / (1 + sp.sqrt(1 + 4 * a**2 * sigma**2))
    return Derivation(
        title="Sinkhorn attention, d = 1: conditional variance of the Gaussian entropic plan",
        source=SOURCE + "; Sinkformers arXiv 2110.11773", lhs=lhs, rhs=rhs,
        steps=(Step("off-diagonal precision of [[sigma, c], [c, sigma]] must be -a", condition),
               Step("roots in c", sp.Matrix(roots)),
               Step("admissible root (|c| < sigma; c -> a sigma^2 as a -> 0)", root),
               Step("conditional mean E[Y|X=x] = alpha + (c/sigma)(x - alpha) = alpha + s a (x - alpha)",
                    sp.simplify(root / sigma - lhs * a))),
        notes="s a = c / sigma, so the velocity v (alpha + s a (x - alpha)) matches the matrix form S A",
    )


def sinkhorn_plan_derivation(d: int) -> Derivation:
    r"""The Gaussian entropic plan at dimension :math:`d`: joint covariance
    :math:`\begin{pmatrix} \Sigma & C \\ C^\top & \Sigma \end{pmatrix}`, :math:`C = \Sigma A^\top S`.

    Identity:

    .. math::

        \begin{pmatrix} \Sigma & C \\ C^\top & \Sigma \end{pmatrix}
        \begin{pmatrix} -A^\top \\ S^{-1} \end{pmatrix} - \begin{pmatrix} 0 \\ I \end{pmatrix}
        = \begin{pmatrix} 0 \\ R S^{-1} \end{pmatrix}

    with the Riccati residual :math:`R = \Sigma - S - S A \Sigma A^\top S`. So when :math:`R = 0` the right block
    column of the joint precision is :math:`(-A^\top, S^{-1})`: the plan's density ratio to :math:`\mu \otimes \mu`
    is :math:`f(x) g(y) e^{y^\top A x}` (the cross precision is :math:`-A^\top`), both marginals are
    :math:`N(\alpha, \Sigma)`, and :math:`Y \mid X = x \sim N(\alpha + S A (x - \alpha), S)`.

    Verified by: gaussian.ode-vs-quadrature
    """
    g = gaussian_symbols(d)
    C = g.Sigma * g.A.T * g.S
    joint = sp.Matrix(sp.BlockMatrix([[g.Sigma, C], [C.T, g.Sigma]]))
    Sinv = g.S.inv()
    column = sp.Matrix(sp.BlockMatrix([[-g.A.T], [Sinv]]))
    R = g.Sigma - g.S - g.S * g.A * g.Sigma * g.A.T * g.S
    lhs = joint * column - sp.Matrix(sp.BlockMatrix([[sp.zeros(d, d)], [sp.eye(d)]]))
    rhs = sp.Matrix(sp.BlockMatrix([[sp.zeros(d, d)], [R * Sinv]]))
    return Derivation(
        title=f"Sinkhorn attention: Gaussian entropic plan between N(alpha, Sigma) and itself (d = {d})",
        source=SOURCE + "; Sinkformers arXiv 2110.11773", lhs=lhs, rhs=rhs,
        steps=(Step("cross-covariance C = Sigma A^T S", C),
               Step("Riccati residual (zero for the plan)", R),
               Step("conditional mean of Y given X = x", g.alpha + C.T * g.Sigma.inv() * (g.x - g.alpha))),
        sampler=_sampler(g, spd=("Sigma", "S")),
        notes="S = Cov(Y | X) is the unique symmetric positive-definite solution of S A Sigma A^T S + S = Sigma",
    )


def sinkhorn_riccati_derivation() -> Derivation:
    r""":math:`S = \Sigma^{1/2} f(G) \Sigma^{1/2}`, :math:`f(g) = 2 / (1 + \sqrt{1 + 4 g})`, solves
    :math:`S A \Sigma A^\top S + S = \Sigma`.

    With :math:`S = \Sigma^{1/2} T \Sigma^{1/2}` the Riccati equation reads :math:`T G T + T = I`,
    :math:`G = \Sigma^{1/2} A \Sigma A^\top \Sigma^{1/2}` (symmetric, :math:`\succeq 0`). :math:`T = f(G)` commutes
    with :math:`G`, so by the functional calculus it suffices that the scalar identity
    :math:`g f(g)^2 + f(g) - 1 = 0` holds for :math:`g \ge 0` (proved here); :math:`f > 0` makes :math:`T`, hence
    :math:`S`, positive definite. Equivalently :math:`S = f(\Sigma B) \Sigma` with :math:`B = A \Sigma A^\top`
    (:math:`\Sigma B` is similar to :math:`G`).

    Verified by: gaussian.ode-vs-quadrature
    """
    gg = sp.Symbol("g", nonnegative=True)
    f = 2 / (1 + sp.sqrt(1 + 4 * gg))
    return Derivation(
        title="Sinkhorn attention: the Riccati equation T G T + T = I solved by T = f(G)",
        source=SOURCE, lhs=gg * f**2 + f - 1, rhs=sp.Integer(0),
        steps=(Step("f(g) = 2/(1 + sqrt(1 + 4 g)) = (sqrt(1 + 4 g) - 1)/(2 g)", f),),
        notes="f(0) = 1: with A = 0 the plan is the independent coupling and S = Sigma",
    )


# -- step 2: affine velocity and the moment ODE ---------------------------------------------------------------
def affine_velocity(attention: str, d: int) -> sp.Matrix:
    r""":math:`\Gamma(x)` for :math:`\mu = N(\alpha, \Sigma)` as a symbolic column vector (from the derivations
    above).
    """
    g = gaussian_symbols(d)
    if attention == "softmax":
        return g.V * (g.alpha + g.Sigma * g.A * g.x)
    if attention == "l2":
        return g.V * l2_precision(g).inv() * (g.Sigma.inv() * g.alpha + g.K.T * g.Q * g.x)
    if attention == "sinkhorn":
        C = g.Sigma * g.A.T * g.S
        return g.V * (g.alpha + C.T * g.Sigma.inv() * (g.x - g.alpha))
    raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")


def affine_parts(attention: str, d: int) -> tuple[sp.Matrix, sp.Matrix]:
    r""":math:`(b, J)` with :math:`\Gamma(x) = b + J x`: :math:`J = d\Gamma/dx` (constant, so :math:`\Gamma` is
    affine), :math:`b = \Gamma(0)`.
    """
    g = gaussian_symbols(d)
    gamma = affine_velocity(attention, d)
    J = gamma.jacobian(g.x)
    if any(e.free_symbols & set(g.x) for e in J):
        raise RuntimeError("velocity is not affine in x")
    b = gamma.subs({xi: 0 for xi in g.x})
    return b, J


def moment_ode_from_field(attention: str, d: int) -> tuple[sp.Matrix, sp.Matrix]:
    r""":math:`(d\alpha/dt, d\Sigma/dt) = (b + J \alpha, J \Sigma + \Sigma J^\top)` from the derived affine field."""
    g = gaussian_symbols(d)
    b, J = affine_parts(attention, d)
    return b + J * g.alpha, J * g.Sigma + g.Sigma * J.T


def moment_ode_matrix_form(attention: str, d: int) -> tuple[sp.Matrix, sp.Matrix]:
    """The general-d matrix formulas (module docstring) instantiated at dimension d."""
    g = gaussian_symbols(d)
    I = sp.eye(d)
    if attention == "softmax":
        return (g.V * (I + g.Sigma * g.A) * g.alpha,
                g.V * g.Sigma * g.A * g.Sigma + g.Sigma * g.A.T * g.Sigma * g.V.T)
    if attention == "l2":
        A = g.K.T * g.Q
        St = l2_precision(g).inv()
        return (g.V * St * (g.Sigma.inv() + A) * g.alpha, g.V * St * A * g.Sigma + g.Sigma * A.T * St * g.V.T)
    if attention == "sinkhorn":
        return g.V * g.alpha, g.V * g.S * g.A * g.Sigma + g.Sigma * g.A.T * g.S * g.V.T
    raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")


def moment_ode_derivation(attention: str, d: int) -> Derivation:
    """The moment ODE derived from the affine field (small d) equals the general-d matrix formula.

    Verified by: gaussian.ode-vs-quadrature
    """
    da_f, dS_f = moment_ode_from_field(attention, d)
    da_m, dS_m = moment_ode_matrix_form(attention, d)
    b, J = affine_parts(attention, d)
    g = gaussian_symbols(d)
    spd = ("Sigma", "S") if attention == "sinkhorn" else ("Sigma",)
    return Derivation(
        title=f"{attention} attention: Gaussian moment ODE (d = {d})",
        source=SOURCE,
        lhs=sp.Matrix.vstack(da_f, dS_f.reshape(d * d, 1)),
        rhs=sp.Matrix.vstack(da_m, dS_m.reshape(d * d, 1)),
        steps=(Step("velocity Gamma(x)", affine_velocity(attention, d)),
               Step("slope J = dGamma/dx (independent of x)", J),
               Step("intercept b = Gamma(0)", b)),
        sampler=_sampler(g, spd=spd),
        notes="d alpha/dt = b + J alpha, d Sigma/dt = J Sigma + Sigma J^T (see affine_transport_derivation)",
    )


def affine_transport_derivation(d: int) -> Derivation:
    r"""An affine field :math:`b + J x` transports :math:`N(\alpha, \Sigma)` to :math:`N(\alpha(t), \Sigma(t))` with
    the moment ODE.

    The Gaussian density :math:`p` solves the continuity equation
    :math:`\partial_t p + \operatorname{div}(p (b + J x)) = 0`, i.e.
    :math:`\partial_t \log p + \operatorname{tr} J + (b + J x) \cdot \nabla \log p = 0`, where
    :math:`\partial_t \log p` is taken along :math:`\alpha' = b + J \alpha` and
    :math:`\Sigma' = J \Sigma + \Sigma J^\top`. Checked here with :math:`b, J, \alpha, \Sigma, x` all symbolic.

    Verified by: gaussian.ode-vs-quadrature
    """
    g = gaussian_symbols(d)
    b = sym.vector("b", d)
    J = square_matrix("J", d)
    P = g.Sigma.inv()
    r = g.x - g.alpha
    logp = -sp.log(g.Sigma.det()) / 2 - _scalar(r.T * P * r) / 2
    dalpha = b + J * g.alpha
    dSigma = J * g.Sigma + g.Sigma * J.T
    dt_logp = sum(sp.diff(logp, g.alpha[k]) * dalpha[k] for k in range(d))
    dt_logp += sum(sp.diff(logp, g.Sigma[i, j]) * dSigma[i, j] for i in range(d) for j in range(i, d))
    v = b + J * g.x
    grad = sp.Matrix([sp.diff(logp, xi) for xi in g.x])
    residual = dt_logp + J.trace() + _scalar(v.T * grad)
    return Derivation(
        title=f"affine fields preserve Gaussians: continuity equation (d = {d})",
        source=SOURCE, lhs=sp.together(residual), rhs=sp.Integer(0),
        steps=(Step("log-density of N(alpha, Sigma)", logp), Step("mean ODE", dalpha), Step("covariance ODE", dSigma)),
        sampler=_sampler(g),
        notes="the symmetric entries Sigma_ij (i <= j) are independent symbols, so the chain rule sums over i <= j",
    )


# -- step 3: closed forms -------------------------------------------------------------------------------------
def softmax_identity_value_covariance(d: int) -> sp.Matrix:
    r""":math:`\Sigma(t) = (\Sigma_0^{-1} - 2 t S_A)^{-1}` for softmax with :math:`V = I`,
    :math:`S_A = (A + A^\top)/2` (:math:`\Sigma = \Sigma_0` at :math:`t = 0`).

    Because :math:`d(\Sigma^{-1})/dt = -\Sigma^{-1} (\Sigma A \Sigma + \Sigma A^\top \Sigma) \Sigma^{-1} = -2 S_A`.
    """
    g = gaussian_symbols(d)
    SA = (g.A + g.A.T) / 2
    return (g.Sigma.inv() - 2 * sym.t * SA).inv()


def softmax_closed_form_derivation(d: int) -> Derivation:
    r"""Softmax, :math:`V = I`: :math:`\Sigma(t) = (\Sigma_0^{-1} - 2 t S_A)^{-1}` solves
    :math:`d\Sigma/dt = \Sigma A \Sigma + \Sigma A^\top \Sigma`.

    Here ``Sigma`` denotes :math:`\Sigma_0`. Verified by: gaussian.softmax-closed-form
    """
    g = gaussian_symbols(d)
    St = softmax_identity_value_covariance(d)
    lhs = St.diff(sym.t)
    rhs = St * g.A * St + St * g.A.T * St
    return Derivation(
        title=f"softmax attention, V = I: closed-form covariance (d = {d})",
        source=SOURCE, lhs=lhs, rhs=rhs,
        steps=(Step("d(Sigma^{-1})/dt = -(A + A^T), so Sigma(t)^{-1} = Sigma_0^{-1} - 2 t S_A", St.inv()),),
        sampler=_sampler(g),
        notes="Sigma stands for Sigma_0; blow-up when Sigma_0^{-1} - 2 t S_A becomes singular",
    )


def softmax_scalar_solution() -> tuple[sp.Expr, sp.Expr]:
    r""":math:`d = 1`, any :math:`v`: :math:`\sigma(t) = \sigma_0 / (1 - 2 v a \sigma_0 t)`,
    :math:`\alpha(t) = \alpha_0 e^{v t} (1 - 2 v a \sigma_0 t)^{-1/2}`.
    """
    a, v, s0, a0, t = _scalar_symbols()
    D = 1 - 2 * v * a * s0 * t
    return s0 / D, a0 * sp.exp(v * t) / sp.sqrt(D)


def _scalar_symbols():
    return (sp.Symbol("a", real=True), sp.Symbol("v", real=True), sp.Symbol("sigma0", positive=True),
            sp.Symbol("alpha0", real=True), sym.t)


def softmax_scalar_derivation() -> Derivation:
    r""":math:`d = 1`: the scalar closed form solves :math:`\sigma' = 2 v a \sigma^2`,
    :math:`\alpha' = v (1 + \sigma a) \alpha`.

    Blow-up at :math:`t^* = 1 / (2 v a \sigma_0)` when :math:`v a > 0`, none otherwise. Verified by:
    gaussian.softmax-closed-form
    """
    a, v, s0, a0, t = _scalar_symbols()
    sig, al = softmax_scalar_solution()
    lhs = sp.Matrix([sig.diff(t), al.diff(t), sig.subs(t, 0), al.subs(t, 0)])
    rhs = sp.Matrix([2 * v * a * sig**2, v * (1 + sig * a) * al, s0, a0])
    return Derivation(title="softmax attention, d = 1: closed-form mean and variance", source=SOURCE,
                      lhs=lhs, rhs=rhs, steps=(Step("sigma(t)", sig), Step("alpha(t)", al)),
                      notes="initial values are the last two rows")


def softmax_blowup_derivation(d: int) -> Derivation:
    r""":math:`\det(\Sigma_0^{-1} - 2 t S_A) \det(\Sigma_0) = \det(I - 2 t \Sigma_0 S_A)`: :math:`\Sigma(t)` blows
    up at the first root.

    The eigenvalues of :math:`\Sigma_0 S_A` are those of the symmetric :math:`\Sigma_0^{1/2} S_A \Sigma_0^{1/2}`; so
    :math:`t^* = 1 / \big(2 \lambda_{\max}(\Sigma_0^{1/2} S_A \Sigma_0^{1/2})\big)` if :math:`\lambda_{\max} > 0`,
    else no blow-up (:math:`V = I`). At :math:`d = 2`:
    :math:`\det(I - 2tM) = 1 - 2 t \operatorname{tr} M + 4 t^2 \det M`. Verified by: gaussian.softmax-closed-form
    """
    if d != 2:
        raise ValueError("the characteristic-polynomial form is stated at d = 2")
    g = gaussian_symbols(d)
    SA = (g.A + g.A.T) / 2
    M = g.Sigma * SA
    lhs = (g.Sigma.inv() - 2 * sym.t * SA).det() * g.Sigma.det()
    rhs = 1 - 2 * sym.t * M.trace() + 4 * sym.t**2 * M.det()
    return Derivation(title="softmax attention, V = I: blow-up time from det(I - 2 t Sigma_0 S_A)", source=SOURCE,
                      lhs=lhs, rhs=rhs, steps=(Step("M = Sigma_0 S_A", M),), sampler=_sampler(g))


def softmax_low_rank_limit_derivation() -> Derivation:
    r""":math:`d = 2`, :math:`V = I`, :math:`S_A = -s\, n n^\top` (negative semi-definite, singular):
    :math:`\Sigma(t) \to N (N^\top \Sigma_0^{-1} N)^{-1} N^\top`.

    :math:`N` spans :math:`\ker S_A = n^\perp`. The limit :math:`t \to \infty` of the rational
    :math:`\Sigma(t) = (\Sigma_0^{-1} + 2 t s\, n n^\top)^{-1}` is computed by substituting
    :math:`t = 1/\varepsilon`, cancelling and setting :math:`\varepsilon = 0`. The limit has rank 1
    (:math:`= \dim \ker S_A`): the Gaussian collapses onto a line. Verified by: gaussian.softmax-closed-form
    """
    g = gaussian_symbols(2)
    s = sp.Symbol("s", positive=True)
    p, q = sp.symbols("p q", real=True)
    eps = sp.Symbol("epsilon", positive=True)
    nvec = sp.Matrix([p, q])
    St = (g.Sigma.inv() + 2 * sym.t * s * nvec * nvec.T).inv()
    limit = St.subs(sym.t, 1 / eps).applyfunc(lambda e: sp.cancel(sp.together(e)).subs(eps, 0))
    N = sp.Matrix([-q, p])
    rhs = N * (N.T * g.Sigma.inv() * N).inv() * N.T
    return Derivation(title="softmax attention, V = I, S_A <= 0 singular: low-rank limit of Sigma(t) (d = 2)",
                      source=SOURCE, lhs=limit, rhs=rhs,
                      steps=(Step("Sigma(t) with S_A = -s n n^T", St), Step("kernel basis N", N)),
                      notes="when S_A is negative definite, Sigma(t) -> 0 like (2t)^{-1} |S_A|^{-1}")


def l2_scalar_solution() -> tuple[sp.Expr, sp.Expr]:
    r""":math:`d = 1`, L2 (:math:`q k v \ne 0`): :math:`\sigma(t) = 1 / \big(k^2 W(e^{-C(t)/k^2} / k^2)\big)`,
    :math:`C(t) = k^2 \ln \sigma_0 - 1/\sigma_0 + 2 v k q t`;
    :math:`\alpha(t) = \alpha_0 \sqrt{\sigma/\sigma_0}\, e^{(1/\sigma_0 - 1/\sigma) / (2 k q)}`.

    From :math:`\sigma' = 2 v k q \sigma^2 / (1 + k^2 \sigma)`: :math:`k^2 \ln \sigma - 1/\sigma = C(t)` (:math:`W`
    = Lambert W, principal). No finite-time blow-up: for large :math:`\sigma`,
    :math:`\sigma' \sim (2 v q / k) \sigma` grows at most exponentially.
    """
    qq, kk, v, s0, a0, t = (sp.Symbol("q", real=True, nonzero=True), sp.Symbol("k", real=True, nonzero=True),
                            sp.Symbol("v", real=True), sp.Symbol("sigma0", positive=True),
                            sp.Symbol("alpha0", real=True), sym.t)
    C = kk**2 * sp.log(s0) - 1 / s0 + 2 * v * kk * qq * t
    sig = 1 / (kk**2 * sp.LambertW(sp.exp(-C / kk**2) / kk**2))
    al = a0 * sp.sqrt(sig / s0) * sp.exp((1 / s0 - 1 / sig) / (2 * kk * qq))
    return sig, al


def l2_scalar_derivation() -> Derivation:
    r""":math:`d = 1`: the Lambert-W closed form solves the L2 moment ODE.

    With :math:`w = W(z(t))`, :math:`z = e^{-C(t)/k^2}/k^2`, implicit differentiation of :math:`w e^w = z` gives
    :math:`w' = -(C'/k^2) w / (1 + w)`; then :math:`\sigma = 1/(k^2 w)` satisfies
    :math:`\sigma' = 2 v k q \sigma^2 / (1 + k^2 \sigma)`. The initial value: :math:`w_0 = 1/(k^2 \sigma_0)`
    satisfies :math:`w_0 e^{w_0} = z(0)`. For the mean,
    :math:`\alpha(\sigma) = \alpha_0 \sqrt{\sigma/\sigma_0}\, e^{(1/\sigma_0 - 1/\sigma)/(2 k q)}` satisfies
    :math:`\tfrac{d\alpha}{d\sigma} \sigma' = v \tfrac{1 + k q \sigma}{1 + k^2 \sigma} \alpha`. Verified by:
    gaussian.ode-vs-quadrature (and numerically in tests)
    """
    qq, kk, v = sp.Symbol("q", real=True, nonzero=True), sp.Symbol("k", real=True, nonzero=True), sp.Symbol("v", real=True)
    s0, a0, w = sp.Symbol("sigma0", positive=True), sp.Symbol("alpha0", real=True), sp.Symbol("w", positive=True)
    sigma = sp.Symbol("sigma", positive=True)
    C0 = kk**2 * sp.log(s0) - 1 / s0
    dC = 2 * v * kk * qq
    w_dot = -(dC / kk**2) * w / (1 + w)
    sig_w = 1 / (kk**2 * w)
    ode = lambda sg: 2 * v * kk * qq * sg**2 / (1 + kk**2 * sg)
    al = a0 * sp.sqrt(sigma / s0) * sp.exp((1 / s0 - 1 / sigma) / (2 * kk * qq))
    w0 = 1 / (kk**2 * s0)
    lhs = sp.Matrix([sp.diff(sig_w, w) * w_dot, sp.diff(al, sigma) * ode(sigma), w0 * sp.exp(w0), al.subs(sigma, s0)])
    rhs = sp.Matrix([ode(sig_w), v * (1 + kk * qq * sigma) / (1 + kk**2 * sigma) * al,
                     sp.exp(-C0 / kk**2) / kk**2, a0])
    return Derivation(title="L2 attention, d = 1: Lambert-W closed form", source=SOURCE, lhs=lhs, rhs=rhs,
                      steps=(Step("sigma(t)", l2_scalar_solution()[0]), Step("alpha(t)", l2_scalar_solution()[1]),
                             Step("w' from w e^w = z(t)", w_dot)),
                      notes="W(z) e^{W(z)} = z; rows: sigma ODE, alpha ODE, initial conditions of w and alpha")


def sinkhorn_scalar_invariant() -> tuple[sp.Expr, sp.Expr]:
    r""":math:`d = 1`, Sinkhorn: :math:`\sigma' = (v/a)\big(\sqrt{1 + 4 a^2 \sigma^2} - 1\big)`. With
    :math:`2\lvert a\rvert \sigma = \sinh\theta`:
    :math:`\theta - \coth(\theta/2) = \theta_0 - \coth(\theta_0/2) + 2 v \operatorname{sign}(a) t` (implicit closed
    form), :math:`\alpha = \alpha_0 e^{vt}`.

    :math:`F(\theta) = \theta - \coth(\theta/2)` increases from :math:`-\infty` to :math:`+\infty` on
    :math:`(0, \infty)`, so :math:`\theta(t)` exists for all :math:`t`: no finite-time blow-up (:math:`\sigma` grows
    like :math:`e^{2 v \operatorname{sign}(a) t}` or decays like :math:`1/t`). Returns :math:`(F(\theta), \theta')`.
    """
    theta = sp.Symbol("theta", positive=True)
    a, v = sp.Symbol("a", real=True, nonzero=True), sp.Symbol("v", real=True)
    sigma = sp.sinh(theta) / (2 * sp.Abs(a))
    sigma_dot = v / a * (sp.sqrt(1 + 4 * a**2 * sigma**2) - 1)
    theta_dot = sigma_dot / sp.diff(sigma, theta)
    return theta - sp.coth(theta / 2), theta_dot


def sinkhorn_scalar_derivation() -> Derivation:
    r""":math:`d = 1`: :math:`\tfrac{d}{dt} \big[\theta - \coth(\theta/2)\big] = 2 v \operatorname{sign}(a)` along
    the Sinkhorn variance ODE, and the scalar ODE :math:`\sigma' = 2 v a s \sigma` with
    :math:`s = 2 \sigma/\big(1 + \sqrt{1 + 4 a^2 \sigma^2}\big)` equals
    :math:`(v/a)\big(\sqrt{1+4a^2 \sigma^2} - 1\big)`.

    Verified by: gaussian.sinkhorn-mean
    """
    F, theta_dot = sinkhorn_scalar_invariant()
    theta = next(s for s in F.free_symbols if s.name == "theta")
    a = next(s for s in theta_dot.free_symbols if s.name == "a")
    v = next(s for s in theta_dot.free_symbols if s.name == "v")
    sigma = sp.Symbol("sigma", positive=True)
    s_cond = 2 * sigma / (1 + sp.sqrt(1 + 4 * a**2 * sigma**2))
    lhs = sp.Matrix([sp.diff(F, theta) * theta_dot, 2 * v * a * s_cond * sigma])
    rhs = sp.Matrix([2 * v * sp.sign(a), v / a * (sp.sqrt(1 + 4 * a**2 * sigma**2) - 1)])

    def sample(rng):
        return {theta: random_rational(rng, 1, 3, 7), a: random_rational(rng, 1, 2, 5) * rng.choice((-1, 1)),
                v: random_rational(rng, -2, 2, 5), sigma: random_rational(rng, 1, 3, 5)}

    return Derivation(title="Sinkhorn attention, d = 1: implicit closed form and no blow-up", source=SOURCE,
                      lhs=lhs, rhs=rhs, steps=(Step("invariant F(theta)", F), Step("theta'", theta_dot)),
                      sampler=sample)


# -- code generation ------------------------------------------------------------------------------------------
def sinkhorn_conditional_covariance_expr(d: int) -> sp.Matrix:
    r""":math:`S = 2 (I + M^{1/2})^{-1} \Sigma`, :math:`M = I + 4 \Sigma A \Sigma A^\top`, explicitly at
    :math:`d = 1` or 2 (for codegen).

    :math:`M` has real eigenvalues :math:`\ge 1` (it is similar to :math:`I + 4 G`, :math:`G \succeq 0`). At
    :math:`d = 2` the principal root is :math:`M^{1/2} = (M + r I)/\tau` with :math:`r = \sqrt{\det M}`,
    :math:`\tau = \sqrt{\operatorname{tr} M + 2 r}`, so :math:`I + M^{1/2} = (c I + M)/\tau` with
    :math:`c = \tau + r`, and :math:`(c I + M)^{-1} = \big((c + \operatorname{tr} M) I - M\big) / (c^2 + c
    \operatorname{tr} M + \det M)` (Cayley-Hamilton).
    """
    g = gaussian_symbols(d)
    M = sp.eye(d) + 4 * g.Sigma * g.A * g.Sigma * g.A.T
    if d == 1:
        return sp.Matrix([[2 * g.Sigma[0, 0] / (1 + sp.sqrt(M[0, 0]))]])
    if d != 2:
        raise ValueError("explicit Sinkhorn conditional covariance is emitted for d = 1, 2")
    tr, det = M.trace(), M[0, 0] * M[1, 1] - M[0, 1] * M[1, 0]
    r = sp.sqrt(det)
    tau = sp.sqrt(tr + 2 * r)
    c = tau + r
    inverse = ((c + tr) * sp.eye(2) - M) / (c**2 + c * tr + det)
    return 2 * tau * inverse * g.Sigma


def moment_rhs_arguments(attention: str, d: int) -> tuple[list[sp.Symbol], list[str]]:
    r"""Argument order of the generated right-hand side: :math:`\alpha_i`, :math:`\Sigma_{ij}` (:math:`i \le j`),
    then :math:`A` (or :math:`Q, K` for L2), then :math:`V`, each matrix row by row, and for Sinkhorn finally
    :math:`S_{ij}` (:math:`i \le j`), the plan's conditional covariance (from
    :func:`sinkhorn_conditional_covariance_function`).
    """
    g = gaussian_symbols(d)
    mats = [g.Q, g.K] if attention == "l2" else [g.A]
    args = list(g.alpha) + upper_entries(g.Sigma) + [e for M in mats + [g.V] for e in M]
    if attention == "sinkhorn":
        args += upper_entries(g.S)
    return args, [str(a) for a in args]


def moment_rhs_exprs(attention: str, d: int) -> tuple:
    r""":math:`(d\alpha_i/dt, \dots, d\Sigma_{ij}/dt \text{ for } i \le j, \dots)` from the derived affine field."""
    da, dS = moment_ode_from_field(attention, d)
    return tuple(list(da) + upper_entries(dS))


def _rhs_doc(attention, d, names):
    return (f"Gaussian moment ODE for {attention} attention at d = {d} (arXiv 2501.18322).\n\n"
            f"Arguments: {', '.join(names)}.\nReturns d alpha_i/dt then d Sigma_ij/dt for i <= j (row by row).")


def moment_rhs_source(attention: str, d: int) -> str:
    """Source of the generated NumPy function ``gaussian_<attention>_rhs_d<d>`` (see moment_rhs_function)."""
    args, names = moment_rhs_arguments(attention, d)
    return function_source(f"gaussian_{attention}_rhs_d{d}", args, moment_rhs_exprs(attention, d),
                           _rhs_doc(attention, d, names), names).source


def _check_generated(attention: str, d: int) -> None:
    if attention not in ATTENTIONS:
        raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")
    if d not in (1, 2):
        raise ValueError(f"generated Gaussian code exists for d = 1, 2; got {d!r}")


@cache
def moment_rhs_function(attention: str, d: int):
    r"""Compiled NumPy right-hand side of the moment ODE at :math:`d \in \{1, 2\}` (elementwise over array
    arguments).

    Signature: see :func:`moment_rhs_arguments`; returns :math:`d\alpha_i/dt` then :math:`d\Sigma_{ij}/dt`
    (:math:`i \le j`). Verified by: gaussian.ode-vs-quadrature
    """
    _check_generated(attention, d)
    args, names = moment_rhs_arguments(attention, d)
    return compile_function(f"gaussian_{attention}_rhs_d{d}", args, moment_rhs_exprs(attention, d),
                            _rhs_doc(attention, d, names), names)


@cache
def sinkhorn_conditional_covariance_function(d: int):
    r"""Compiled :math:`S(\Sigma, A) = 2 \big(I + (I + 4 \Sigma A \Sigma A^\top)^{1/2}\big)^{-1} \Sigma` at
    :math:`d \in \{1, 2\}`.

    Signature: ``f(Sigma_ij for i <= j, A_ij row by row) -> S_ij for i <= j``. Verified by:
    gaussian.ode-vs-quadrature
    """
    _check_generated("sinkhorn", d)
    g = gaussian_symbols(d)
    args = upper_entries(g.Sigma) + list(g.A)
    names = [str(a) for a in args]
    exprs = tuple(upper_entries(sinkhorn_conditional_covariance_expr(d)))
    return compile_function(f"sinkhorn_conditional_covariance_d{d}", args, exprs,
                            f"Sinkhorn plan conditional covariance S at d = {d}.\n\nArguments: {', '.join(names)}.\n"
                            "Returns S_ij for i <= j.", names)


def gaussian_module_source(dims=(1, 2)) -> str:
    r"""A standalone module (NumPy/SciPy only) with every generated moment right-hand side and the Sinkhorn
    :math:`S(\Sigma, A)` at the given dimensions; write it with :func:`theory.codegen.write_module`.
    """
    chunks = []
    for d in dims:
        _check_generated("sinkhorn", d)
        chunks += [moment_rhs_source(a, d) for a in ATTENTIONS]
        g = gaussian_symbols(d)
        args = upper_entries(g.Sigma) + list(g.A)
        chunks.append(function_source(f"sinkhorn_conditional_covariance_d{d}", args,
                                      tuple(upper_entries(sinkhorn_conditional_covariance_expr(d))),
                                      "Sinkhorn plan conditional covariance S; returns S_ij for i <= j.").source)
    return module_source("Gaussian moment ODEs of softmax, L2 and Sinkhorn attention (arXiv 2501.18322).", chunks)


def gaussian_derivations(d: int = 2) -> list[Derivation]:
    """Every derivation of this module at dimension d (d = 1 or 2), for display and self-verification."""
    out = [softmax_tilting_derivation(d), l2_tilting_derivation(d), sinkhorn_plan_derivation(d),
           affine_transport_derivation(d)]
    out += [moment_ode_derivation(a, d) for a in ATTENTIONS]
    out += [softmax_closed_form_derivation(d), sinkhorn_riccati_derivation(), sinkhorn_scalar_plan_derivation(),
            softmax_scalar_derivation(), l2_scalar_derivation(), sinkhorn_scalar_derivation()]
    if d == 2:
        out += [softmax_blowup_derivation(2), softmax_low_rank_limit_derivation()]
    return out


# -- the affine feed-forward layer (Alcalde, Ji, Zuazua, arXiv 2606.07600; only the abstract was read) ----------
FFN_SOURCE = ("arXiv 2606.07600 (Alcalde, Ji, Zuazua), Gaussian transformers with affine feed-forward layers "
              "(abstract read; the statements here are derived in attnflow)")


def ffn_covariance_rhs(d: int) -> tuple[sp.Matrix, sp.Matrix]:
    r""":math:`(d\alpha/dt, d\Sigma/dt)` of softmax attention plus the affine feed-forward field :math:`W x + c`:
    the total velocity :math:`V (\alpha + \Sigma A x) + W x + c` is affine with :math:`b = V \alpha + c`,
    :math:`J = V \Sigma A + W` (symbolic :math:`W, c`).
    """
    g = gaussian_symbols(d)
    W = square_matrix("W", d)
    c = sym.vector("c", d)
    J = g.V * g.Sigma * g.A + W
    return g.V * g.alpha + c + J * g.alpha, J * g.Sigma + g.Sigma * J.T


def ffn_precision_derivation(d: int) -> Derivation:
    r"""With :math:`V = v I` the precision :math:`P = \Sigma^{-1}` of attention + feed-forward solves the LINEAR
    Lyapunov equation

    .. math::

        \frac{dP}{dt} = -P \frac{d\Sigma}{dt} P = -(W^\top P + P W) - 2 v S_A, \qquad S_A = (A + A^\top)/2,

    so :math:`P(t) = P^* + e^{-W^\top t} (P_0 - P^*) e^{-W t}` with :math:`W^\top P^* + P^* W = -2 v S_A` (when no
    two eigenvalues of :math:`W` sum to 0). Checked with :math:`\Sigma, A, W` and :math:`v` symbolic. Verified by:
    gaussian.gaussian-ffn-regimes
    """
    g = gaussian_symbols(d)
    W = square_matrix("W", d)
    v = sp.Symbol("v", real=True)
    SA = (g.A + g.A.T) / 2
    J = v * g.Sigma * g.A + W
    dSigma = J * g.Sigma + g.Sigma * J.T
    P = g.Sigma.inv()
    lhs = (-P * dSigma * P).applyfunc(sp.together)
    rhs = -(W.T * P + P * W) - 2 * v * SA
    base = _sampler(g)

    def sample(rng):
        subs = base(rng)
        subs.update({e: random_rational(rng) for e in W})
        subs[v] = random_rational(rng)
        return subs

    return Derivation(title=f"attention + affine feed-forward, V = v I: dP/dt = -(W^T P + P W) - 2 v S_A (d = {d})",
                      source=FFN_SOURCE, lhs=lhs, rhs=rhs.applyfunc(sp.together),
                      steps=(Step("covariance ODE (J = v Sigma A + W)", dSigma),), sampler=sample)


def ffn_scalar_solution() -> tuple[sp.Expr, sp.Expr]:
    r""":math:`d = 1`, :math:`V = v`: :math:`(\sigma(t), p^*)` with :math:`\sigma' = 2 w \sigma + 2 v a \sigma^2`,
    :math:`p = 1/\sigma = p^* + (p_0 - p^*) e^{-2wt}`, :math:`p^* = -v a / w` (the positive equilibrium
    :math:`\sigma^* = 1/p^*` exists iff :math:`v a / w < 0`).
    """
    t = sym.t
    w, v, a, s0 = sp.symbols("w v a sigma_0", real=True)
    pstar = -v * a / w
    return 1 / (pstar + (1 / s0 - pstar) * sp.exp(-2 * w * t)), pstar


def ffn_scalar_derivation() -> Derivation:
    r"""The scalar closed form solves :math:`\sigma' = 2 w \sigma + 2 v a \sigma^2` with
    :math:`\sigma(0) = \sigma_0`. Verified by: gaussian.gaussian-ffn-regimes
    """
    t = sym.t
    w, v, a, s0 = sp.symbols("w v a sigma_0", real=True)
    sigma, _ = ffn_scalar_solution()
    residual = sp.diff(sigma, t) - 2 * w * sigma - 2 * v * a * sigma ** 2
    return Derivation(title="attention + affine feed-forward, d = 1: sigma = 1/(p* + (1/sigma_0 - p*) e^{-2wt})",
                      source=FFN_SOURCE, lhs=sp.simplify(residual) + sp.simplify(sigma.subs(t, 0) - s0),
                      rhs=sp.Integer(0))
