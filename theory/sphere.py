r"""Riemannian geometry of the unit sphere :math:`\mathbb{S}^{d-1}` embedded in :math:`\mathbb{R}^d` (sympy).

Written once and used by every derivation. Points are column vectors ``x`` with :math:`\lvert x\rvert = 1`; a
function on the sphere is given by an expression ``f`` in the coordinates of ``x`` (any smooth extension to
:math:`\mathbb{R}^d`: the Riemannian quantities below do not depend on the extension).

Formulas (embedded submanifold, e.g. Absil, Mahony, Sepulchre 2008, and Boumal 2023, ch. 5 and 7):

- tangent projection :math:`P_x y = y - \langle x, y\rangle x`
- Riemannian gradient :math:`\operatorname{grad} f(x) = P_x (\nabla f(x))`
- Riemannian Hessian
  :math:`\operatorname{Hess} f(x)[u] = P_x (\nabla^2 f(x) u) - \langle x, \nabla f(x)\rangle u`,
  :math:`u \in T_x \mathbb{S}^{d-1}`

On a product of spheres (particles :math:`x_1, \dots, x_n`), these apply blockwise: the gradient with respect to
:math:`x_i` uses :math:`P_{x_i}`; the Hessian block :math:`(i, j)` is
:math:`P_{x_i} \nabla^2_{x_i x_j} f P_{x_j} - \delta_{ij} \langle x_i, \nabla_{x_i} f\rangle P_{x_i}`.
"""
from __future__ import annotations

from collections.abc import Sequence

import sympy as sp


def _col(x) -> sp.Matrix:
    m = sp.Matrix(x)
    if m.shape[1] != 1:
        m = m.reshape(len(m), 1)
    return m


def tangent_projection(x, y) -> sp.Matrix:
    r""":math:`P_x y = y - \langle x, y\rangle x` (the orthogonal projection of :math:`y` onto the tangent space at the
    unit vector :math:`x`).
    """
    x, y = _col(x), _col(y)
    return y - (x.T * y)[0, 0] * x


def projection_matrix(x) -> sp.Matrix:
    r"""The matrix of :math:`P_x`: :math:`I - x x^\top`."""
    x = _col(x)
    return sp.eye(x.shape[0]) - x * x.T


def euclidean_gradient(f: sp.Expr, x) -> sp.Matrix:
    r""":math:`\nabla f` with respect to the coordinate symbols in ``x`` (a column vector)."""
    x = _col(x)
    return sp.Matrix([sp.diff(f, xi) for xi in x])


def euclidean_hessian(f: sp.Expr, x, y=None) -> sp.Matrix:
    r"""The matrix of second derivatives :math:`\partial^2 f / \partial x_a \partial y_b` (:math:`y` defaults to
    :math:`x`).
    """
    x = _col(x)
    y = x if y is None else _col(y)
    return sp.Matrix(len(x), len(y), lambda a, b: sp.diff(f, x[a], y[b]))


def riemannian_gradient(f: sp.Expr, x) -> sp.Matrix:
    r""":math:`\operatorname{grad} f(x) = P_x \nabla f(x)` on :math:`\mathbb{S}^{d-1}`."""
    return tangent_projection(x, euclidean_gradient(f, x))


def riemannian_hessian(f: sp.Expr, x, u) -> sp.Matrix:
    r""":math:`\operatorname{Hess} f(x)[u] = P_x(\nabla^2 f(x) u) - \langle x, \nabla f(x)\rangle u` for :math:`u`
    tangent at :math:`x`.
    """
    x, u = _col(x), _col(u)
    g = euclidean_gradient(f, x)
    return tangent_projection(x, euclidean_hessian(f, x) * u) - (x.T * g)[0, 0] * u


def riemannian_hessian_matrix(f: sp.Expr, x) -> sp.Matrix:
    r"""The ambient :math:`d \times d` matrix :math:`H` with :math:`\operatorname{Hess} f(x)[u] = H u` for tangent
    :math:`u`: :math:`P \nabla^2 f P - \langle x, \nabla f\rangle P`.
    """
    x = _col(x)
    P = projection_matrix(x)
    g = euclidean_gradient(f, x)
    return P * euclidean_hessian(f, x) * P - (x.T * g)[0, 0] * P


def product_riemannian_gradient(f: sp.Expr, points: Sequence) -> list[sp.Matrix]:
    r"""Blockwise Riemannian gradient of :math:`f` on :math:`(\mathbb{S}^{d-1})^n`:
    :math:`[P_{x_i} \nabla_{x_i} f]_i`."""
    return [riemannian_gradient(f, x) for x in points]


def product_riemannian_hessian_matrix(f: sp.Expr, points: Sequence) -> sp.Matrix:
    r"""The :math:`nd \times nd` ambient matrix of the Riemannian Hessian of :math:`f` on :math:`(\mathbb{S}^{d-1})^n`.

    Block
    :math:`(i, j) = P_{x_i} \nabla^2_{x_i x_j} f P_{x_j} - \delta_{ij} \langle x_i, \nabla_{x_i} f\rangle P_{x_i}`.
    Restricted to the tangent space (the range of :math:`\operatorname{blockdiag}(P_{x_i})`) it is the Riemannian
    Hessian. Explicit in :math:`n`: use it for small-:math:`n` cross-checks only.
    """
    pts = [_col(x) for x in points]
    blocks = []
    for i, xi in enumerate(pts):
        row = []
        Pi = projection_matrix(xi)
        for j, xj in enumerate(pts):
            Pj = projection_matrix(xj)
            block = Pi * euclidean_hessian(f, xi, xj) * Pj
            if i == j:
                block -= (xi.T * euclidean_gradient(f, xi))[0, 0] * Pi
            row.append(block)
        blocks.append(row)
    return sp.BlockMatrix(blocks).as_explicit()
