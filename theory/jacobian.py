r"""Jacobian of the attention fields at a fixed point, and why its unstable directions are the Hessian's.

Fields (docs/conventions.md, :math:`Q = K = V = I`), with :math:`E = \frac{1}{2n^2} \sum_{i,j} \phi(s_{ij})`,
:math:`s_{ij} = \langle x_i, x_j\rangle`, :math:`\phi'` the weight:

.. math::

    \begin{aligned}
    \texttt{usa}:\quad v_i &= P_i \frac{1}{n} \sum_j \phi'(s_{ij}) x_j &&= n \operatorname{grad}_i E,\\
    \texttt{sa}:\quad v_i &= P_i \sum_j \phi'(s_{ij}) x_j / Z_i,\quad Z_i = \sum_j \phi'(s_{ij})
    &&= (n^2 / Z_i) \operatorname{grad}_i E
    \end{aligned}

because :math:`\operatorname{grad}_i E = P_i \nabla_i E = \frac{1}{n^2} P_i \sum_j \phi'(s_{ij}) x_j`
(:math:`j = i` included; GLPR arXiv 2312.10794). These identities hold on all of :math:`(\mathbb{R}^d)^n` with
:math:`P_i = I - x_i x_i^\top` (:func:`sa_gradient_identity`).

Metric argument. Write :math:`v = D \operatorname{grad} E` with :math:`D = \operatorname{diag}(D_i)`
(:math:`D_i = n` for ``usa``, :math:`n^2/Z_i` for ``sa``; positive when :math:`\phi' > 0`). Differentiating at a
critical point :math:`X^*` (:math:`\operatorname{grad} E(X^*) = 0`), the term :math:`(dD) \operatorname{grad} E`
vanishes, so the linearisation on :math:`T_{X^*} = \prod_i x_i^\perp` is
:math:`J = D \operatorname{Hess} E(X^*)` (tangent-projected: :math:`P J P = D H`, :func:`jacobian_derivation`).
Then :math:`J = D^{1/2} (D^{1/2} H D^{1/2}) D^{-1/2}` is similar to :math:`S = D^{1/2} H D^{1/2}`, hence
diagonalisable with real eigenvalues, and :math:`S = C^\top H C` with :math:`C = D^{1/2}` invertible is congruent
to :math:`H`: by Sylvester's law of inertia, :math:`J` and :math:`H` have the same numbers of positive, zero and
negative eigenvalues. So the unstable directions of ``sa`` (and of ``usa``, where :math:`D = nI`) are counted by
the positive eigenvalues of the Hessian of :math:`E` (ascent convention), and the rotation zero modes of
:math:`H` are zero modes of :math:`J`. The rates themselves differ: eigenvalues of :math:`D^{1/2} H D^{1/2}`.
(``sa`` is thus the gradient ascent of :math:`E` in the metric
:math:`\langle u, w\rangle_X = \sum_i \langle u_i, w_i\rangle / D_i`, GLPR.)

Verified by: critical.hessian-formula (exact here; finite differences of numerics.core.field in the numerics
layer).
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
    r"""Explicit fields :math:`v_i` of ``sa`` or ``usa`` (weights :math:`\phi'(s_{ij})`) at explicit points
    (small-:math:`n` path).
    """
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
    r""":math:`D_i` with :math:`v_i = D_i \operatorname{grad}_i E`: :math:`n` (``usa``) or
    :math:`n^2 / Z_i` (``sa``)."""
    pts = [sp.Matrix(p) for p in points]
    n = len(pts)
    if model == "usa":
        return [sp.Integer(n)] * n
    weight = kernel.derivative(1)
    return [n**2 / sum(weight.subs(sym.s, (xi.T * xj)[0, 0]) for xj in pts) for xi in pts]


def sa_gradient_identity(kernel: PairKernel | None = None, n: int = 2, d: int = 2,
                         model: str = "sa") -> Derivation:
    r"""Derivation: :math:`v_i = D_i \operatorname{grad}_i E` for explicit symbolic particles (any :math:`X`, off the
    sphere too).
    """
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
    r"""Derivation: at an exact fixed point, :math:`P (dv/dX) P = D \operatorname{Hess} E` (ambient
    :math:`nd \times nd`, :math:`\beta` symbolic).

    The left side differentiates the explicit field of :func:`attention_field_expression` in all :math:`nd`
    coordinates and projects on the tangent space; the right side is :math:`\operatorname{blockdiag}(D_i I_d)` times
    the closed-form Riemannian Hessian of :func:`theory.hessian.closed_form_riemannian_hessian`.
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
