r"""The rescaled equation of self-attention in :math:`\mathbb{R}^d` without normalisation (GLPR arXiv 2305.05465,
section 2).

Tokens :math:`x_i` in :math:`\mathbb{R}^d` move by :math:`dx_i/dt = V \sum_j P_{ij} x_j` with a row-stochastic
attention matrix :math:`P` (softmax, L2 or Sinkhorn, computed from :math:`x`). With the rescaling
:math:`z_i = e^{-tV} x_i` (so :math:`x_i = E(t) z_i`, :math:`E(t) = e^{tV}`):

.. math::

    \frac{dx_i}{dt} = E' z_i + E z_i' = V E z_i + E z_i' \quad\text{and}\quad
    V \sum_j P_{ij} x_j = V E \sum_j P_{ij} z_j,

and since :math:`E` commutes with :math:`V`, :math:`E^{-1} V E = V`, so

.. math::

    \frac{dz_i}{dt} = V \Big(\sum_j P_{ij} z_j - z_i\Big),

with :math:`P` computed from :math:`x = E z`, i.e. the logits
:math:`\langle Q x_i, K x_j\rangle = z_j^\top E^\top A E z_i`, :math:`A = K^\top Q`. The derivation below checks
the identity symbolically for :math:`d = 2`, :math:`n = 2` and a triangular
:math:`V = \begin{pmatrix} a & b \\ 0 & c \end{pmatrix}` (:math:`a \ne c`), whose exponential is explicit, and
checks :math:`E' = V E`, :math:`E(0) = I` and :math:`E V = V E`; the numerical check against finite differences
of the unrescaled solution is ``tests/numerics/test_rd.py::test_rescaled_equation_matches_unrescaled``.
Note: ``proofs_notes/rd-rescaled-equation.md``.
"""
from __future__ import annotations

import sympy as sp

from .derivation import Derivation, Step

SOURCE = "GLPR arXiv 2305.05465 (rescaling z = e^{-tV} x); CACP arXiv 2501.18322 (R^d conventions)"


def triangular_exponential(a: sp.Expr, b: sp.Expr, c: sp.Expr, t: sp.Symbol) -> sp.Matrix:
    r""":math:`e^{tV}` for :math:`V = \begin{pmatrix} a & b \\ 0 & c \end{pmatrix}`, :math:`a \ne c`:
    :math:`\begin{pmatrix} e^{at} & b (e^{at} - e^{ct}) / (a - c) \\ 0 & e^{ct} \end{pmatrix}`.
    """
    return sp.Matrix([[sp.exp(a * t), b * (sp.exp(a * t) - sp.exp(c * t)) / (a - c)], [0, sp.exp(c * t)]])


def rescaled_velocity_expr(V: sp.Matrix, P: sp.Matrix, Z: list[sp.Matrix], i: int) -> sp.Matrix:
    r""":math:`dz_i/dt = V (\sum_j P_{ij} z_j - z_i)`."""
    return V * (sum((P[i, j] * Z[j] for j in range(len(Z))), sp.zeros(*Z[0].shape)) - Z[i])


def rescaled_equation_derivation() -> Derivation:
    r""":math:`\frac{d}{dt}(E z_i)` with :math:`z_i' = V (\sum_j P_{ij} z_j - z_i)` equals :math:`V \sum_j P_{ij} E z_j`
    (:math:`d = 2`, :math:`n = 2`).

    The attention weights are kept as symbols :math:`p_{i1}`, :math:`p_{i2} = 1 - p_{i1}` (row-stochastic): the
    identity holds for any row-stochastic :math:`P`, hence for softmax, L2 and Sinkhorn alike (:math:`P` is the same
    function of :math:`x` on both sides).
    """
    t, a, b, c = sp.symbols("t a b c", real=True)
    V = sp.Matrix([[a, b], [0, c]])
    E = triangular_exponential(a, b, c, t)
    zf = [sp.Matrix([sp.Function(f"z{i}{k}")(t) for k in (1, 2)]) for i in (1, 2)]
    p = sp.symbols("p1 p2", real=True)
    P = sp.Matrix([[p[0], 1 - p[0]], [p[1], 1 - p[1]]])
    residuals = []
    for i in range(2):
        x_i = E * zf[i]
        dz = rescaled_velocity_expr(V, P, zf, i)
        lhs = sp.diff(x_i, t).subs({sp.Derivative(zf[i][k], t): dz[k] for k in range(2)})
        rhs = V * sum((P[i, j] * E * zf[j] for j in range(2)), sp.zeros(2, 1))
        residuals.append(sp.simplify(lhs - rhs))
    lhs = sp.Matrix.vstack(*residuals)
    props = sp.Matrix.vstack(sp.simplify(sp.diff(E, t) - V * E).reshape(4, 1),
                             sp.simplify(E.subs(t, 0) - sp.eye(2)).reshape(4, 1),
                             sp.simplify(E * V - V * E).reshape(4, 1))
    return Derivation(
        title="rescaled R^d self-attention: z = e^{-tV} x obeys dz_i/dt = V (sum_j P_ij z_j - z_i)",
        source=SOURCE, lhs=sp.Matrix.vstack(lhs, props), rhs=sp.zeros(4 + 12, 1),
        steps=(Step("propagator E(t) = e^{tV} for V = [[a, b], [0, c]]", E),
               Step("E' - V E, E(0) - I, E V - V E (all zero)", props),
               Step("rescaled velocity of token 1", rescaled_velocity_expr(V, P, zf, 0)),
               Step("d/dt (E z_i) - V sum_j P_ij E z_j after substituting z_i'", lhs)),
        notes="x = e^{tV} z; logits <Q x_i, K x_j> = z_j^T e^{tV^T} A e^{tV} z_i; any row-stochastic P",
    )


def rescaled_logit_derivation() -> Derivation:
    r""":math:`\langle Q E z_i, K E z_j\rangle = z_j^\top (E^\top K^\top Q E) z_i`:
    the logits of :math:`x` written in the rescaled tokens (:math:`d = 2`).
    """
    Q = sp.Matrix(2, 2, sp.symbols("q11 q12 q21 q22", real=True))
    K = sp.Matrix(2, 2, sp.symbols("k11 k12 k21 k22", real=True))
    E = sp.Matrix(2, 2, sp.symbols("e11 e12 e21 e22", real=True))
    zi = sp.Matrix(sp.symbols("zi1 zi2", real=True))
    zj = sp.Matrix(sp.symbols("zj1 zj2", real=True))
    lhs = ((Q * E * zi).T * (K * E * zj))[0, 0]
    rhs = (zj.T * (E.T * K.T * Q * E) * zi)[0, 0]
    return Derivation(title="logits in the rescaled tokens: A(t) = e^{tV^T} K^T Q e^{tV}", source=SOURCE,
                      lhs=sp.expand(lhs), rhs=sp.expand(rhs),
                      steps=(Step("A(t)", E.T * K.T * Q * E),), notes="E stands for e^{tV}")
