"""Jacobian of the attention fields at a fixed point, and why its unstable directions are the Hessian's.

Fields (docs/conventions.md, Q = K = V = I), with E = 1/(2 n^2) sum_{i,j} phi(s_ij), s_ij = <x_i, x_j>, phi' the weight:

    usa: v_i = P_i (1/n) sum_j phi'(s_ij) x_j              = n grad_i E
    sa:  v_i = P_i sum_j phi'(s_ij) x_j / Z_i,  Z_i = sum_j phi'(s_ij)   = (n^2 / Z_i) grad_i E

because grad_i E = P_i nabla_i E = (1/n^2) P_i sum_j phi'(s_ij) x_j (j = i included; GLPR arXiv 2312.10794).
These identities hold on all of (R^d)^n with P_i = I - x_i x_i^T (:func:`sa_gradient_identity`).

Metric argument. Write v = D grad E with D = diag(D_i) (D_i = n for usa, n^2/Z_i for sa; positive when phi' > 0).
Differentiating at a critical point X* (grad E(X*) = 0), the term (dD) grad E vanishes, so the linearisation on
T_{X*} = prod_i x_i^perp is J = D Hess E(X*) (tangent-projected: P J P = D H, :func:`jacobian_derivation`).
Then J = D^{1/2} (D^{1/2} H D^{1/2}) D^{-1/2} is similar to S = D^{1/2} H D^{1/2}, hence diagonalisable with real
eigenvalues, and S = C^T H C with C = D^{1/2} invertible is congruent to H: by Sylvester's law of inertia, J and H
have the same numbers of positive, zero and negative eigenvalues. So the unstable directions of ``sa`` (and of
``usa``, where D = n I) are counted by the positive eigenvalues of the Hessian of E (ascent convention), and the
rotation zero modes of H are zero modes of J. The rates themselves differ: eigenvalues of D^{1/2} H D^{1/2}.
(``sa`` is thus the gradient ascent of E in the metric <u, w>_X = sum_i <u_i, w_i> / D_i, GLPR.)

Verified by: critical.hessian-formula (exact here; finite differences of numerics.core.field in the numerics layer).
"""
from __future__ import annotations

import random

import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step, rational_sphere_point, random_rational
from .hessian import closed_form_riemannian_hessian
from .kernels import PairKernel, exponential_kernel, pair_energy
from .sphere import product_riemannian_gradient, projection_matrix, tangent_projection
from .structured import orthoplex_points


def attention_field_expression(kernel: PairKernel, points, model: str) -> list[sp.Matrix]:
    """Explicit fields v_i of ``sa`` or ``usa`` (weights phi'(s_ij)) at explicit points (small-n path)."""
    if model not in ("sa", "usa"):
        raise ValueError(f"model must be sa or usa, got {model!r}")
    pts = [sp.Matrix(p) for p in points]
    n = len(pts)
    weight = kernel.derivative(1)
    out = []
    for xi in pts:
        w = [weight.subs(sym.s, (xi.T * xj)[0, 0]) for xj in pts]
        total = sum((wj * xj for wj, xj in zip(w, pts)), sp.zeros(*xi.shape))
        norm = sum(w) if model == "sa" else n
        out.append(tangent_projection(xi, total / norm))
    return out


def metric_factors(kernel: PairKernel, points, model: str) -> list[sp.Expr]:
    """D_i with v_i = D_i grad_i E: n (usa) or n^2 / Z_i (sa)."""
    pts = [sp.Matrix(p) for p in points]
    n = len(pts)
    if model == "usa":
        return [sp.Integer(n)] * n
    weight = kernel.derivative(1)
    return [n**2 / sum(weight.subs(sym.s, (xi.T * xj)[0, 0]) for xj in pts) for xi in pts]


def sa_gradient_identity(kernel: PairKernel | None = None, n: int = 2, d: int = 2,
                         model: str = "sa") -> Derivation:
    """Derivation: v_i = D_i grad_i E for explicit symbolic particles (any X, off the sphere too)."""
    kernel = kernel or exponential_kernel()
    points = [sym.particle(i + 1, d) for i in range(n)]
    field = sp.Matrix.vstack(*attention_field_expression(kernel, points, model))
    grad = product_riemannian_gradient(pair_energy(kernel, points), points)
    D = metric_factors(kernel, points, model)
    rhs = sp.Matrix.vstack(*[Di * gi for Di, gi in zip(D, grad)])
    names = [list(p) for p in points]

    def sample(rng: random.Random):
        subs = {sym.beta: random_rational(rng, -2, 3, 5)}
        for i in range(n):
            subs.update(zip(names[i], rational_sphere_point(rng, d)))
        return subs

    return Derivation(
        title=f"{model} field = D_i grad_i E with D_i = {'n^2/Z_i' if model == 'sa' else 'n'} (n={n}, d={d})",
        source="GLPR arXiv 2312.10794 (gradient-flow structure of SA and USA)",
        lhs=field, rhs=rhs, steps=(Step("metric factors D_i", sp.Matrix(D)),), sampler=sample,
        notes="holds for any X (P_i = I - x_i x_i^T extended off the sphere)")


def _fixed_point(config: str, d: int) -> list[sp.Matrix]:
    if config == "antipodal":
        return orthoplex_points(d)[:2]
    if config == "orthoplex":
        return orthoplex_points(d)
    raise ValueError(f"config must be antipodal or orthoplex, got {config!r}")


def jacobian_derivation(kernel: PairKernel | None = None, config: str = "orthoplex", d: int = 2,
                        model: str = "sa") -> Derivation:
    """Derivation: at an exact fixed point, P (dv/dX) P = D Hess E (ambient nd x nd, beta symbolic).

    The left side differentiates the explicit field of :func:`attention_field_expression` in all nd
    coordinates and projects on the tangent space; the right side is blockdiag(D_i I_d) times the closed-form
    Riemannian Hessian of :func:`theory.hessian.closed_form_riemannian_hessian`.
    """
    kernel = kernel or exponential_kernel()
    pts = _fixed_point(config, d)
    n = len(pts)
    symbols = [sym.particle(i + 1, d) for i in range(n)]
    coords = [c for p in symbols for c in p]
    field = sp.Matrix.vstack(*attention_field_expression(kernel, symbols, model))
    subs = {c: v for p, q in zip(symbols, pts) for c, v in zip(p, q)}
    J = field.jacobian(coords).xreplace(subs)
    P = sp.diag(*[projection_matrix(x) for x in pts])
    lhs = (P * J * P).applyfunc(sp.simplify)
    D = metric_factors(kernel, pts, model)
    rhs = sp.diag(*[Di * sp.eye(d) for Di in D]) * closed_form_riemannian_hessian(kernel, pts)
    return Derivation(
        title=f"Jacobian of the {model} field at the {config} fixed point (n={n}, d={d}) = D Hess E",
        source="GLPR arXiv 2312.10794 (SA is a gradient flow in a modified metric); Sylvester's law of inertia",
        lhs=lhs, rhs=rhs.applyfunc(sp.simplify),
        steps=(Step("metric factors D_i", sp.Matrix(D)),),
        notes="J = D H is similar to D^{1/2} H D^{1/2}, congruent to H: same inertia (module docstring)")


__all__ = [
    "attention_field_expression",
    "jacobian_derivation",
    "metric_factors",
    "sa_gradient_identity",
]
