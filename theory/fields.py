r"""Single-particle velocity fields of ``sa`` and ``usa`` in terms of the pair kernel, for general :math:`Q, K, V`.

For a :class:`theory.spec.ModelSpec` with :math:`A = K^\top Q`, the attention weight of the pair :math:`(x, y)` is
the pair kernel evaluated at the query-key score

.. math::

    w(x, y) = e^{\beta \langle Q x, K y\rangle} = e^{\beta y^\top A x}
    \qquad (\text{the weight } \phi_\beta'(s) \text{ at } s = y^\top A x)

and the velocity of a particle :math:`x` among particles :math:`y_1, \dots, y_n` (:math:`x` itself is one of
them) is

.. math::

    \begin{aligned}
    \texttt{sa}:\quad v(x) &= P_x\big(N(x) / Z(x)\big), \quad N(x) = \sum_j w(x, y_j) V y_j, \quad
    Z(x) = \sum_j w(x, y_j),\\
    \texttt{usa}:\quad v(x) &= P_x\big(N(x) / n\big)
    \end{aligned}

(GLPR, arXiv 2312.10794, models SA and USA; docs/conventions.md). Everything here is written per pair or per
particle, so expression size never grows with :math:`n`; :func:`particle_field` is the explicit small-:math:`n`
path used as a cross-check. The overflow-safe form multiplies every weight by :math:`e^{-c}` for a per-particle
constant :math:`c`: exact for ``sa`` (:math:`N/Z` is unchanged, :func:`shift_invariance_derivation`), and for
``usa`` with :math:`c = \beta` it is the field in the rescaled time unit :math:`t' = e^{\beta} t`.

Verified by: core.equivariance (tangency), core.codegen (explicit_field vs generated code).
"""
from __future__ import annotations

import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step, sphere_point_sampler
from .spec import ModelSpec
from .sphere import tangent_projection


def _col(x) -> sp.Matrix:
    m = sp.Matrix(x)
    return m if m.shape[1] == 1 else m.reshape(len(m), 1)


def attention_score(spec: ModelSpec, x, y) -> sp.Expr:
    r"""The query-key score :math:`\langle Q x, K y\rangle = y^\top A x` (the argument :math:`s` of the pair kernel)."""
    x, y = _col(x), _col(y)
    return sp.expand(((spec.Q * x).T * (spec.K * y))[0, 0])


def attention_weight(spec: ModelSpec, x, y) -> sp.Expr:
    r""":math:`w(x, y) = \phi_\beta'(s)` at :math:`s = \langle Q x, K y\rangle`, i.e.
    :math:`e^{\beta \langle Q x, K y\rangle}` (:meth:`ModelSpec.pair_kernel`).
    """
    return spec.pair_kernel().subs(sym.s, attention_score(spec, x, y))


def pair_contribution(spec: ModelSpec, x, y) -> sp.Matrix:
    """The term :math:`w(x, y) V y` that particle :math:`y` contributes to the numerator :math:`N(x)`."""
    return attention_weight(spec, x, y) * (spec.V * _col(y))


def field_from_sums(spec: ModelSpec, x, numerator, normalizer) -> sp.Matrix:
    r""":math:`v(x) = P_x(\text{numerator} / \text{normalizer})`: normalizer is :math:`Z(x)` for ``sa`` and :math:`n`
    for ``usa``.
    """
    return tangent_projection(x, _col(numerator) / normalizer)


def particle_field(spec: ModelSpec, i: int, points) -> sp.Matrix:
    r"""Explicit velocity of particle ``i`` (0-based) among explicit ``points`` (small-:math:`n` cross-check path).

    ``sa``: :math:`P_{x_i}(\sum_j w_{ij} V x_j / \sum_k w_{ik})`; ``usa``:
    :math:`P_{x_i}(\frac{1}{n} \sum_j w_{ij} V x_j)`.
    """
    pts = [_col(p) for p in points]
    x = pts[i]
    numerator = sum((pair_contribution(spec, x, y) for y in pts), sp.zeros(spec.d, 1))
    if spec.model == "sa":
        normalizer = sum(attention_weight(spec, x, y) for y in pts)
    else:
        normalizer = sp.Integer(len(pts))
    return field_from_sums(spec, x, numerator, normalizer)


def explicit_field(spec: ModelSpec, points) -> sp.Matrix:
    """The ``(n, d)`` matrix whose rows are :func:`particle_field` of each particle (small-:math:`n` path)."""
    rows = [particle_field(spec, i, points).T for i in range(len(points))]
    return sp.Matrix.vstack(*rows)


def _spec_sampler(spec: ModelSpec, names_of_points):
    return sphere_point_sampler(names_of_points, spec.d, sym.beta)


def tangency_derivation(spec: ModelSpec) -> Derivation:
    r"""Derivation: :math:`\langle x, v(x)\rangle = 0` on the sphere for any numerator (the field is tangent, the sphere
    invariant).

    The numerator :math:`N` and the normaliser are kept as free symbols, so the statement holds for every :math:`n`.
    """
    x = sym.vector("x", spec.d)
    N = sym.vector("N", spec.d)
    Zs = sp.Symbol("Z", positive=True)
    normalizer = Zs if spec.model == "sa" else sym.n
    v = field_from_sums(spec, x, N, normalizer)
    lhs = sp.expand((x.T * v)[0, 0])
    rhs = sp.expand((1 - (x.T * x)[0, 0]) * (x.T * N)[0, 0] / normalizer)
    return Derivation(
        title=f"{spec.model} field is tangent: <x, v(x)> = (1 - |x|^2) <x, N>/{normalizer} = 0 on S^{spec.d - 1}",
        source="GLPR arXiv 2312.10794 (invariance of the sphere)",
        lhs=lhs, rhs=rhs,
        steps=(Step("velocity from numerator N and normaliser", v),),
        notes="exact for every x; the right side vanishes exactly when |x| = 1, so the flow preserves the sphere",
    )


def field_derivation(spec: ModelSpec, n: int = 2) -> Derivation:
    r"""Derivation of the single-particle field from the pair kernel, checked against the explicit :math:`n`-particle
    field.

    Steps: kernel :math:`\phi_\beta`, weight :math:`\phi_\beta'` at the score :math:`\langle Qx, Ky\rangle`, the pair
    contribution :math:`w V y`, the field :math:`P_x(N / Z)` (``sa``) or :math:`P_x(N / n)` (``usa``). The identity
    states that assembling the pair contributions of ``n`` explicit particles gives the field of particle 1 as
    transcribed directly from the model table,
    :math:`(I - x x^\top)(\sum_j e^{\beta (Qx)^\top (K x_j)} V x_j) / Z` (or :math:`/ n`).
    """
    x = sym.particle(1, spec.d)
    pts = [x] + [sym.particle(j + 2, spec.d) for j in range(n - 1)]
    numerator = sum((pair_contribution(spec, x, y) for y in pts), sp.zeros(spec.d, 1))
    if spec.model == "sa":
        Z = sum(attention_weight(spec, x, y) for y in pts)
    else:
        Z = sp.Integer(n)
    lhs = field_from_sums(spec, x, numerator, Z)
    # Right side: a direct transcription of the table in docs/conventions.md (matrix products, no helper of this module).
    weights = [sp.exp(spec.beta * ((spec.Q * x).T * (spec.K * y))[0, 0]) for y in pts]
    raw = sum((w * (spec.V * y) for w, y in zip(weights, pts)), sp.zeros(spec.d, 1))
    raw = raw / (sum(weights) if spec.model == "sa" else n)
    rhs = (sp.eye(spec.d) - x * x.T) * raw
    y = sym.vector("y", spec.d)
    kernel = (sp.exp(sym.beta * sym.s) - 1) / sym.beta
    return Derivation(
        title=f"{spec.model} velocity of one particle on S^{spec.d - 1} from the pair kernel (A = K^T Q)",
        source="GLPR arXiv 2312.10794, models SA and USA",
        lhs=lhs, rhs=rhs,
        steps=(Step("pair kernel phi_beta(s)", kernel),
               Step("attention weight w(x, y) = phi_beta'(<Qx, Ky>)", attention_weight(spec, sym.vector("x", spec.d), y)),
               Step("pair contribution w(x, y) V y", pair_contribution(spec, sym.vector("x", spec.d), y)),
               Step("velocity v(x) = P_x(N / Z)" if spec.model == "sa" else "velocity v(x) = P_x(N / n)",
                    field_from_sums(spec, sym.vector("x", spec.d), sym.vector("N", spec.d),
                                    sp.Symbol("Z", positive=True) if spec.model == "sa" else sym.n))),
        sampler=_spec_sampler(spec, [list(p) for p in pts]),
        notes=("N(x) = sum_j w(x, y_j) V y_j over all particles (j = i included); "
               + ("Z(x) = sum_j w(x, y_j); multiplying every weight by e^{-c} leaves the field unchanged"
                  if spec.model == "sa" else
                  "time = depth; with weights e^{beta(s - 1)} the same formula is the field in t' = e^{beta} t")),
    )


def shift_invariance_derivation(spec: ModelSpec) -> Derivation:
    """Derivation: the ``sa`` field is unchanged when every weight of a row is multiplied by :math:`e^{-c}`
    (overflow-safe form).

    Per particle with free numerator :math:`N` and normaliser :math:`Z`:
    :math:`P_x((e^{-c} N)/(e^{-c} Z)) = P_x(N / Z)`, for every :math:`n`.
    """
    x = sym.vector("x", spec.d)
    N = sym.vector("N", spec.d)
    Zs = sp.Symbol("Z", positive=True)
    c = sp.Symbol("c", real=True)
    lhs = field_from_sums(spec, x, sp.exp(-c) * N, sp.exp(-c) * Zs)
    rhs = field_from_sums(spec, x, N, Zs)
    return Derivation(
        title="sa field is invariant under the row shift w -> w e^{-c} (overflow-safe e^{beta s - c} weights)",
        source="GLPR arXiv 2312.10794, model SA",
        lhs=lhs, rhs=rhs, steps=(Step("shifted field", lhs),),
        notes="c_i = |beta| |A x_i| bounds the logits beta x_j^T A x_i over unit x_j so that no exponent is positive; for usa the shift c = beta "
              "changes the time unit to t' = e^{beta} t instead",
    )


__all__ = [
    "attention_score",
    "attention_weight",
    "explicit_field",
    "field_derivation",
    "field_from_sums",
    "pair_contribution",
    "particle_field",
    "shift_invariance_derivation",
    "tangency_derivation",
]
