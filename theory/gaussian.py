"""Gaussian solutions of the transformer PDE in R^d: derivations of the moment ODEs (sympy only).

Setting (Castin, Ablin, Carrillo, Peyre, arXiv 2501.18322, "CACP"; tokens in R^d, no sphere, no projection,
time = depth). A probability measure mu_t on R^d is transported by the attention velocity

    Gamma[mu](x) = int V y w(x, y) dmu(y) / int w(x, y) dmu(y),                       dX/dt = Gamma[mu_t](X),

with, for A = K^T Q (beta absorbed in Q, K):

- ``softmax`` (traditional attention): w(x, y) = exp(<Qx, Ky>) = exp(y^T A x);
- ``l2``: w(x, y) = exp(-|Qx - Ky|^2 / 2) (our scale; CACP's L2 attention may carry another constant in the
  exponent, which rescales Q and K: see proofs_notes/gaussian-ode-vs-quadrature.md);
- ``sinkhorn``: Gamma[mu](x) = V E_pi[Y | X = x] where pi is the entropic optimal-transport plan between mu and
  itself for the kernel exp(y^T A x) (x the query): pi(dx, dy) = f(x) g(y) exp(y^T A x) mu(dx) mu(dy) with
  both marginals equal to mu (the mean-field limit of doubly stochastic attention, Sinkformers arXiv 2110.11773).

For mu = N(alpha, Sigma) each Gamma is affine, Gamma(x) = b + J x, and an affine field transports Gaussians to
Gaussians with  d alpha/dt = b + J alpha = E[Gamma(X)],  d Sigma/dt = J Sigma + Sigma J^T.  Results (derived
below, general d in matrix form, checked symbolically at d = 1, 2):

    softmax   Gamma(x) = V (alpha + Sigma A x)                       (tilting N(alpha, Sigma) by e^{y^T A x})
              d alpha/dt = V (I + Sigma A) alpha,  d Sigma/dt = V Sigma A Sigma + Sigma A^T Sigma V^T
    l2        Gamma(x) = V Sigma~ (Sigma^{-1} alpha + A x),  Sigma~ = (Sigma^{-1} + K^T K)^{-1}
              d alpha/dt = V Sigma~ (Sigma^{-1} + A) alpha,  d Sigma/dt = V Sigma~ A Sigma + Sigma A^T Sigma~ V^T
    sinkhorn  Gamma(x) = V (alpha + S A (x - alpha)),  S = Cov(Y | X) solves S A Sigma A^T S + S = Sigma, i.e.
              S = Sigma^{1/2} 2 (I + (I + 4 G)^{1/2})^{-1} Sigma^{1/2},  G = Sigma^{1/2} A Sigma A^T Sigma^{1/2}
              d alpha/dt = V alpha,  d Sigma/dt = V S A Sigma + Sigma A^T S V^T

Note on the softmax mean: Gamma(x) = V(alpha + Sigma A x) (docs/conventions.md) and d alpha/dt = V(I + Sigma A) alpha
(docs/literature.md) are the same statement: the mean velocity is E[Gamma(X)] = V(alpha + Sigma A alpha).

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
    """A symmetric dim x dim matrix of real symbols ``name_ij``, i <= j (``name_ji`` is ``name_ij``)."""
    return sp.Matrix(dim, dim, lambda i, j: sp.Symbol(f"{name}_{min(i, j) + 1}{max(i, j) + 1}", real=True))


def upper_entries(M: sp.Matrix) -> list:
    """Entries M_ij with i <= j, row by row (the order used by generated code for symmetric matrices)."""
    return [M[i, j] for i in range(M.rows) for j in range(i, M.cols)]


@dataclass(frozen=True)
class GaussianSymbols:
    """Symbols of one Gaussian problem in R^d: query point x, key point y, mean, covariance, matrices."""

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
    """The symbols at explicit dimension d (1 <= d <= 3; derivations are symbolic at small d)."""
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
    """Completing the square: N(alpha, Sigma) tilted by exp(y^T A x) is N(alpha + Sigma A x, Sigma).

    Identity (in y, for every x): -1/2 (y-alpha)^T Sigma^{-1} (y-alpha) + y^T A x
    = -1/2 (y-m)^T Sigma^{-1} (y-m) + c(x),  m(x) = alpha + Sigma A x,  c(x) = (m^T Sigma^{-1} m - alpha^T
    Sigma^{-1} alpha)/2. The y-independent c(x) cancels between numerator and denominator of Gamma, so the
    normalised tilted law is N(m(x), Sigma) and Gamma(x) = V m(x).

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
    """Precision Sigma^{-1} + K^T K of N(alpha, Sigma) tilted by exp(-|Qx - Ky|^2/2)."""
    return g.Sigma.inv() + g.K.T * g.K


def l2_tilting_derivation(d: int) -> Derivation:
    """Completing the square for L2 attention, w = exp(-|Qx - Ky|^2 / 2).

    The tilted law is N(m(x), Sigma~) with precision Sigma~^{-1} = Sigma^{-1} + K^T K and mean
    m(x) = Sigma~ (Sigma^{-1} alpha + K^T Q x) = Sigma~ (Sigma^{-1} alpha + A x); hence Gamma(x) = V m(x).

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
    """d = 1 from scratch: the Gaussian entropic plan between N(alpha, sigma) and itself for kernel e^{a x y}.

    A jointly Gaussian pi with both marginals N(alpha, sigma) and cross-covariance c has density ratio
    f(x) g(y) e^{a x y} with respect to mu x mu iff its joint precision has off-diagonal entry -a, i.e.
    c / (sigma^2 - c^2) = a. The root with |c| < sigma is c = (sqrt(1 + 4 a^2 sigma^2) - 1) / (2 a), and the
    conditional variance s = Var(Y | X) = sigma - c^2/sigma equals 2 sigma / (1 + sqrt(1 + 4 a^2 sigma^2)).

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
    """The Gaussian entropic plan at dimension d: joint covariance [[Sigma, C], [C^T, Sigma]], C = Sigma A^T S.

    Identity: [[Sigma, C], [C^T, Sigma]] [[-A^T], [S^{-1}]] - [[0], [I]] = [[0], [R S^{-1}]] with the Riccati
    residual R = Sigma - S - S A Sigma A^T S. So when R = 0 the right block column of the joint precision is
    (-A^T, S^{-1}): the plan's density ratio to mu x mu is f(x) g(y) exp(y^T A x) (the cross precision is -A^T),
    both marginals are N(alpha, Sigma), and Y | X = x ~ N(alpha + S A (x - alpha), S).

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
    """S = Sigma^{1/2} f(G) Sigma^{1/2}, f(g) = 2 / (1 + sqrt(1 + 4 g)), solves S A Sigma A^T S + S = Sigma.

    With S = Sigma^{1/2} T Sigma^{1/2} the Riccati equation reads T G T + T = I, G = Sigma^{1/2} A Sigma A^T
    Sigma^{1/2} (symmetric, >= 0). T = f(G) commutes with G, so by the functional calculus it suffices that the
    scalar identity g f(g)^2 + f(g) - 1 = 0 holds for g >= 0 (proved here); f > 0 makes T, hence S, positive
    definite. Equivalently S = f(Sigma B) Sigma with B = A Sigma A^T (Sigma B is similar to G).

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
    """Gamma(x) for mu = N(alpha, Sigma) as a symbolic column vector (from the derivations above)."""
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
    """(b, J) with Gamma(x) = b + J x: J = dGamma/dx (constant, so Gamma is affine), b = Gamma(0)."""
    g = gaussian_symbols(d)
    gamma = affine_velocity(attention, d)
    J = gamma.jacobian(g.x)
    if any(e.free_symbols & set(g.x) for e in J):
        raise RuntimeError("velocity is not affine in x")
    b = gamma.subs({xi: 0 for xi in g.x})
    return b, J


def moment_ode_from_field(attention: str, d: int) -> tuple[sp.Matrix, sp.Matrix]:
    """(d alpha/dt, d Sigma/dt) = (b + J alpha, J Sigma + Sigma J^T) from the derived affine field."""
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
    """An affine field b + J x transports N(alpha, Sigma) to N(alpha(t), Sigma(t)) with the moment ODE.

    The Gaussian density p solves the continuity equation d_t p + div(p (b + J x)) = 0, i.e.
    d_t log p + tr J + (b + J x) . grad log p = 0, where d_t log p is taken along alpha' = b + J alpha and
    Sigma' = J Sigma + Sigma J^T. Checked here with b, J, alpha, Sigma, x all symbolic.

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
    """Sigma(t) = (Sigma_0^{-1} - 2 t S_A)^{-1} for softmax with V = I, S_A = (A + A^T)/2 (Sigma = Sigma_0 at t=0).

    Because d(Sigma^{-1})/dt = -Sigma^{-1} (Sigma A Sigma + Sigma A^T Sigma) Sigma^{-1} = -2 S_A.
    """
    g = gaussian_symbols(d)
    SA = (g.A + g.A.T) / 2
    return (g.Sigma.inv() - 2 * sym.t * SA).inv()


def softmax_closed_form_derivation(d: int) -> Derivation:
    """Softmax, V = I: Sigma(t) = (Sigma_0^{-1} - 2 t S_A)^{-1} solves d Sigma/dt = Sigma A Sigma + Sigma A^T Sigma.

    Here ``Sigma`` denotes Sigma_0. Verified by: gaussian.softmax-closed-form
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
    """d = 1, any v: sigma(t) = sigma0 / (1 - 2 v a sigma0 t), alpha(t) = alpha0 e^{v t} (1 - 2 v a sigma0 t)^{-1/2}."""
    a, v, s0, a0, t = _scalar_symbols()
    D = 1 - 2 * v * a * s0 * t
    return s0 / D, a0 * sp.exp(v * t) / sp.sqrt(D)


def _scalar_symbols():
    return (sp.Symbol("a", real=True), sp.Symbol("v", real=True), sp.Symbol("sigma0", positive=True),
            sp.Symbol("alpha0", real=True), sym.t)


def softmax_scalar_derivation() -> Derivation:
    """d = 1: the scalar closed form solves sigma' = 2 v a sigma^2, alpha' = v (1 + sigma a) alpha.

    Blow-up at t* = 1 / (2 v a sigma0) when v a > 0, none otherwise. Verified by: gaussian.softmax-closed-form
    """
    a, v, s0, a0, t = _scalar_symbols()
    sig, al = softmax_scalar_solution()
    lhs = sp.Matrix([sig.diff(t), al.diff(t), sig.subs(t, 0), al.subs(t, 0)])
    rhs = sp.Matrix([2 * v * a * sig**2, v * (1 + sig * a) * al, s0, a0])
    return Derivation(title="softmax attention, d = 1: closed-form mean and variance", source=SOURCE,
                      lhs=lhs, rhs=rhs, steps=(Step("sigma(t)", sig), Step("alpha(t)", al)),
                      notes="initial values are the last two rows")


def softmax_blowup_derivation(d: int) -> Derivation:
    """det(Sigma_0^{-1} - 2 t S_A) det(Sigma_0) = det(I - 2 t Sigma_0 S_A): Sigma(t) blows up at the first root.

    The eigenvalues of Sigma_0 S_A are those of the symmetric Sigma_0^{1/2} S_A Sigma_0^{1/2}; so
    t* = 1 / (2 lambda_max(Sigma_0^{1/2} S_A Sigma_0^{1/2})) if lambda_max > 0, else no blow-up (V = I).
    At d = 2: det(I - 2tM) = 1 - 2 t tr M + 4 t^2 det M. Verified by: gaussian.softmax-closed-form
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
    """d = 2, V = I, S_A = -s n n^T (negative semi-definite, singular): Sigma(t) -> N (N^T Sigma_0^{-1} N)^{-1} N^T.

    N spans ker S_A = n^perp. The limit t -> oo of the rational Sigma(t) = (Sigma_0^{-1} + 2 t s n n^T)^{-1} is
    computed by substituting t = 1/eps, cancelling and setting eps = 0. The limit has rank 1 (= dim ker S_A):
    the Gaussian collapses onto a line. Verified by: gaussian.softmax-closed-form
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
    """d = 1, L2 (q k v != 0): sigma(t) = 1 / (k^2 W(e^{-C(t)/k^2} / k^2)), C(t) = k^2 ln sigma0 - 1/sigma0 + 2 v k q t;
    alpha(t) = alpha0 sqrt(sigma/sigma0) exp((1/sigma0 - 1/sigma) / (2 k q)).

    From sigma' = 2 v k q sigma^2 / (1 + k^2 sigma): k^2 ln sigma - 1/sigma = C(t) (W = Lambert W, principal).
    No finite-time blow-up: for large sigma, sigma' ~ (2 v q / k) sigma grows at most exponentially.
    """
    qq, kk, v, s0, a0, t = (sp.Symbol("q", real=True, nonzero=True), sp.Symbol("k", real=True, nonzero=True),
                            sp.Symbol("v", real=True), sp.Symbol("sigma0", positive=True),
                            sp.Symbol("alpha0", real=True), sym.t)
    C = kk**2 * sp.log(s0) - 1 / s0 + 2 * v * kk * qq * t
    sig = 1 / (kk**2 * sp.LambertW(sp.exp(-C / kk**2) / kk**2))
    al = a0 * sp.sqrt(sig / s0) * sp.exp((1 / s0 - 1 / sig) / (2 * kk * qq))
    return sig, al


def l2_scalar_derivation() -> Derivation:
    """d = 1: the Lambert-W closed form solves the L2 moment ODE.

    With w = W(z(t)), z = e^{-C(t)/k^2}/k^2, implicit differentiation of w e^w = z gives
    w' = -(C'/k^2) w / (1 + w); then sigma = 1/(k^2 w) satisfies sigma' = 2 v k q sigma^2 / (1 + k^2 sigma).
    The initial value: w0 = 1/(k^2 sigma0) satisfies w0 e^{w0} = z(0). For the mean, alpha(sigma) =
    alpha0 sqrt(sigma/sigma0) exp((1/sigma0 - 1/sigma)/(2 k q)) satisfies (d alpha/d sigma) sigma' =
    v (1 + k q sigma)/(1 + k^2 sigma) alpha. Verified by: gaussian.ode-vs-quadrature (and numerically in tests)
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
    """d = 1, Sinkhorn: sigma' = (v/a)(sqrt(1 + 4 a^2 sigma^2) - 1). With 2|a| sigma = sinh(theta):
    theta - coth(theta/2) = theta0 - coth(theta0/2) + 2 v sign(a) t (implicit closed form), alpha = alpha0 e^{vt}.

    F(theta) = theta - coth(theta/2) increases from -oo to +oo on (0, oo), so theta(t) exists for all t: no
    finite-time blow-up (sigma grows like e^{2 v sign(a) t} or decays like 1/t). Returns (F(theta), theta').
    """
    theta = sp.Symbol("theta", positive=True)
    a, v = sp.Symbol("a", real=True, nonzero=True), sp.Symbol("v", real=True)
    sigma = sp.sinh(theta) / (2 * sp.Abs(a))
    sigma_dot = v / a * (sp.sqrt(1 + 4 * a**2 * sigma**2) - 1)
    theta_dot = sigma_dot / sp.diff(sigma, theta)
    return theta - sp.coth(theta / 2), theta_dot


def sinkhorn_scalar_derivation() -> Derivation:
    """d = 1: d/dt [theta - coth(theta/2)] = 2 v sign(a) along the Sinkhorn variance ODE, and the scalar ODE
    sigma' = 2 v a s sigma with s = 2 sigma/(1 + sqrt(1 + 4 a^2 sigma^2)) equals (v/a)(sqrt(1+4a^2 sigma^2) - 1).

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
    """S = 2 (I + M^{1/2})^{-1} Sigma, M = I + 4 Sigma A Sigma A^T, explicitly at d = 1 or 2 (for codegen).

    M has real eigenvalues >= 1 (it is similar to I + 4 G, G >= 0). At d = 2 the principal root is
    M^{1/2} = (M + r I)/tau with r = sqrt(det M), tau = sqrt(tr M + 2 r), so I + M^{1/2} = (c I + M)/tau with
    c = tau + r, and (c I + M)^{-1} = ((c + tr M) I - M) / (c^2 + c tr M + det M) (Cayley-Hamilton).
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
    """Argument order of the generated right-hand side: alpha_i, Sigma_ij (i <= j), then A (or Q, K for L2),
    then V, each matrix row by row, and for Sinkhorn finally S_ij (i <= j), the plan's conditional covariance
    (from :func:`sinkhorn_conditional_covariance_function`)."""
    g = gaussian_symbols(d)
    mats = [g.Q, g.K] if attention == "l2" else [g.A]
    args = list(g.alpha) + upper_entries(g.Sigma) + [e for M in mats + [g.V] for e in M]
    if attention == "sinkhorn":
        args += upper_entries(g.S)
    return args, [str(a) for a in args]


def moment_rhs_exprs(attention: str, d: int) -> tuple:
    """(d alpha_i/dt ..., d Sigma_ij/dt for i <= j ...) from the derived affine field."""
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
    """Compiled NumPy right-hand side of the moment ODE at d in {1, 2} (elementwise over array arguments).

    Signature: see :func:`moment_rhs_arguments`; returns d alpha_i/dt then d Sigma_ij/dt (i <= j).
    Verified by: gaussian.ode-vs-quadrature
    """
    _check_generated(attention, d)
    args, names = moment_rhs_arguments(attention, d)
    return compile_function(f"gaussian_{attention}_rhs_d{d}", args, moment_rhs_exprs(attention, d),
                            _rhs_doc(attention, d, names), names)


@cache
def sinkhorn_conditional_covariance_function(d: int):
    """Compiled S(Sigma, A) = 2 (I + (I + 4 Sigma A Sigma A^T)^{1/2})^{-1} Sigma at d in {1, 2}.

    Signature: f(Sigma_ij for i <= j, A_ij row by row) -> S_ij for i <= j. Verified by: gaussian.ode-vs-quadrature
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
    """A standalone module (NumPy/SciPy only) with every generated moment right-hand side and the Sinkhorn S(Sigma, A)
    at the given dimensions; write it with :func:`theory.codegen.write_module`."""
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
    """(d alpha/dt, d Sigma/dt) of softmax attention plus the affine feed-forward field W x + c: the total
    velocity V (alpha + Sigma A x) + W x + c is affine with b = V alpha + c, J = V Sigma A + W (symbolic W, c)."""
    g = gaussian_symbols(d)
    W = square_matrix("W", d)
    c = sym.vector("c", d)
    J = g.V * g.Sigma * g.A + W
    return g.V * g.alpha + c + J * g.alpha, J * g.Sigma + g.Sigma * J.T


def ffn_precision_derivation(d: int) -> Derivation:
    """With V = v I the precision P = Sigma^{-1} of attention + feed-forward solves the LINEAR Lyapunov equation

        dP/dt = -P (dSigma/dt) P = -(W^T P + P W) - 2 v S_A,      S_A = (A + A^T)/2,

    so P(t) = P* + e^{-W^T t} (P_0 - P*) e^{-W t} with W^T P* + P* W = -2 v S_A (when no two eigenvalues of W
    sum to 0). Checked with Sigma, A, W and v symbolic. Verified by: gaussian.gaussian-ffn-regimes
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
    """d = 1, V = v: (sigma(t), p*) with sigma' = 2 w sigma + 2 v a sigma^2, p = 1/sigma = p* + (p_0 - p*) e^{-2wt},
    p* = -v a / w (the positive equilibrium sigma* = 1/p* exists iff v a / w < 0)."""
    t = sym.t
    w, v, a, s0 = sp.symbols("w v a sigma_0", real=True)
    pstar = -v * a / w
    return 1 / (pstar + (1 / s0 - pstar) * sp.exp(-2 * w * t)), pstar


def ffn_scalar_derivation() -> Derivation:
    """The scalar closed form solves sigma' = 2 w sigma + 2 v a sigma^2 with sigma(0) = sigma_0.
    Verified by: gaussian.gaussian-ffn-regimes"""
    t = sym.t
    w, v, a, s0 = sp.symbols("w v a sigma_0", real=True)
    sigma, _ = ffn_scalar_solution()
    residual = sp.diff(sigma, t) - 2 * w * sigma - 2 * v * a * sigma ** 2
    return Derivation(title="attention + affine feed-forward, d = 1: sigma = 1/(p* + (1/sigma_0 - p*) e^{-2wt})",
                      source=FFN_SOURCE, lhs=sp.simplify(residual) + sp.simplify(sigma.subs(t, 0) - s0),
                      rhs=sp.Integer(0))
