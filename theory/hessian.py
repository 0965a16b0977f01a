r"""Gradient and Hessian of a pair energy on the product of spheres, in closed form at the kernel level.

For :math:`E(X) = \frac{1}{2n^2} \sum_{i,j} \phi(s_{ij})`, :math:`s_{ij} = \langle x_i, x_j\rangle` (see
:mod:`theory.kernels`), with :math:`P_i = I - x_i x_i^\top`:

.. math::

    \begin{aligned}
    &\text{Euclidean gradient:} && \nabla_i E = \frac{1}{n^2} \sum_j \phi'(s_{ij}) x_j
    \quad (j = i \text{ included}),\\
    &\text{Riemannian gradient:} && \operatorname{grad}_i E = P_i \nabla_i E,\\
    &\text{Riemannian Hessian, block } (i, j),\ i \ne j: &&
    \frac{1}{n^2} \big[\phi'(s_{ij}) P_i P_j + \phi''(s_{ij}) (P_i x_j)(P_j x_i)^\top\big],\\
    &\text{block } (i, i): &&
    \frac{1}{n^2} \sum_{j \ne i} \big[\phi''(s_{ij}) (P_i x_j)(P_i x_j)^\top - \phi'(s_{ij}) s_{ij} P_i\big]
    \end{aligned}

(the self-interaction terms :math:`\phi'(1) P_i` of the Euclidean Hessian and of the Weingarten term cancel).
These are derived here from the embedded-submanifold formulas of :mod:`theory.sphere` applied to one pair
term, never typed in twice: :func:`pair_hessian_blocks` is the one place the blocks are written,
:func:`hessian_derivation` proves them against the explicit small-:math:`n` Hessian, :mod:`theory.structured`
reduces them on symmetric configurations, and :mod:`numerics.critical.hessian` assembles the same blocks from
generated :math:`\phi'`, :math:`\phi''`.
"""
from __future__ import annotations

import random

import sympy as sp

from . import symbols as sym
from .derivation import Derivation, Step, rational_sphere_point, random_rational
from .kernels import PairKernel, exponential_kernel, pair_energy
from .sphere import euclidean_gradient, product_riemannian_hessian_matrix, projection_matrix


def _dphi(kernel: PairKernel, order: int, s_value):
    return kernel.derivative(order).subs(sym.s, s_value)


def pair_hessian_blocks(xi, xj, dphi1, dphi2) -> tuple[sp.Matrix, sp.Matrix]:
    r"""The two kernel-level pieces one pair :math:`(i, j)`, :math:`i \ne j`, contributes to :math:`n^2` times the
    Riemannian Hessian.

    Returns ``(off, diag)`` with, for :math:`s = \langle x_i, x_j\rangle`, ``dphi1`` :math:`= \phi'(s)`, ``dphi2``
    :math:`= \phi''(s)`:

    .. math::

        \begin{aligned}
        \mathrm{off} &= \phi'(s) P_i P_j + \phi''(s) (P_i x_j)(P_j x_i)^\top &&\text{(block } (i, j)\text{)},\\
        \mathrm{diag} &= \phi''(s) (P_i x_j)(P_i x_j)^\top - \phi'(s)\, s P_i &&\text{(added to block } (i, i)\text{)}.
        \end{aligned}

    ``dphi1``, ``dphi2`` may be values or free symbols (structured spectra keep them as symbols, see
    :mod:`theory.structured`). Every Hessian in attnflow is assembled from this one function.
    """
    xi, xj = sp.Matrix(xi), sp.Matrix(xj)
    Pi, Pj = projection_matrix(xi), projection_matrix(xj)
    sij = (xi.T * xj)[0, 0]
    off = dphi1 * Pi * Pj + dphi2 * (Pi * xj) * (Pj * xi).T
    diag = dphi2 * (Pi * xj) * (Pi * xj).T - dphi1 * sij * Pi
    return off, diag


def hessian_from_pair_blocks(points, derivatives) -> sp.Matrix:
    r"""Assemble the :math:`nd \times nd` ambient Riemannian Hessian of
    :math:`E = \frac{1}{2n^2} \sum \phi(s_{ij})` from :func:`pair_hessian_blocks`.

    ``derivatives(s_value) -> (phi'(s_value), phi''(s_value))`` supplies the kernel derivatives (numbers,
    expressions or symbols). Small-:math:`n` explicit path (size grows with :math:`n`): for cross-checks and
    structured spectra.
    """
    pts = [sp.Matrix(p) for p in points]
    n, d = len(pts), pts[0].shape[0]
    blocks = [[sp.zeros(d, d) for _ in range(n)] for _ in range(n)]
    for i, xi in enumerate(pts):
        for j, xj in enumerate(pts):
            if i == j:
                continue
            d1, d2 = derivatives(sp.expand((xi.T * xj)[0, 0]))
            off, diag = pair_hessian_blocks(xi, xj, d1, d2)
            blocks[i][j] = off / n**2
            blocks[i][i] += diag / n**2
    return sp.BlockMatrix(blocks).as_explicit()


def closed_form_riemannian_hessian(kernel: PairKernel, points) -> sp.Matrix:
    r"""The :math:`nd \times nd` matrix of the closed-form Riemannian Hessian blocks above at explicit points."""
    return hessian_from_pair_blocks(points, lambda s_value: (_dphi(kernel, 1, s_value), _dphi(kernel, 2, s_value)))


def closed_form_euclidean_gradient(kernel: PairKernel, points) -> list[sp.Matrix]:
    r""":math:`[\frac{1}{n^2} \sum_j \phi'(s_{ij}) x_j]_i` at explicit points."""
    pts = [sp.Matrix(p) for p in points]
    n = len(pts)
    return [sum((_dphi(kernel, 1, (xi.T * xj)[0, 0]) * xj for xj in pts), sp.zeros(*xi.shape)) / n**2
            for xi in pts]


def _sampler(n: int, d: int, kernel: PairKernel, names):
    def sample(rng: random.Random):
        subs = {}
        for i in range(n):
            for c, value in enumerate(rational_sphere_point(rng, d)):
                subs[names[i][c]] = value
        subs[sym.beta] = random_rational(rng, -2, 3, 5)
        for p in kernel.params:
            subs[p] = random_rational(rng)
        return subs

    return sample


def hessian_derivation(kernel: PairKernel | None = None, n: int = 2, d: int = 3) -> Derivation:
    r"""Derivation: the explicit small-:math:`n` Riemannian Hessian of :math:`E` equals the closed-form blocks.

    The left side applies the embedded formula block
    :math:`(i, j) = P_i \nabla^2_{ij} E P_j - \delta_{ij} \langle x_i, \nabla_i E\rangle P_i`
    (:func:`theory.sphere.product_riemannian_hessian_matrix`) to the explicit energy of :math:`n` symbolic particles;
    the right side is :func:`closed_form_riemannian_hessian`. Equality is checked on the sphere
    (:math:`\lvert x_i\rvert = 1`), so the sampler draws exact rational points of :math:`\mathbb{S}^{d-1}`.
    """
    kernel = kernel or exponential_kernel()
    points = [sym.particle(i + 1, d) for i in range(n)]
    energy = pair_energy(kernel, points)
    explicit = product_riemannian_hessian_matrix(energy, points)
    closed = closed_form_riemannian_hessian(kernel, points)
    names = [list(p) for p in points]
    return Derivation(
        title=f"Riemannian Hessian of E = 1/(2n^2) sum phi(<x_i,x_j>) on (S^{d - 1})^{n}: closed-form blocks",
        source="GLPR arXiv 2312.10794 (energy); embedded Hessian formula (Absil-Mahony-Sepulchre)",
        lhs=explicit, rhs=closed,
        steps=(Step("kernel", kernel.expr),
               Step("explicit energy of the small-n system", energy),
               Step("Euclidean gradient of particle 1", euclidean_gradient(energy, points[0])),
               Step("closed-form block (1, 2)", closed[:d, d:2 * d])),
        sampler=_sampler(n, d, kernel, names),
        notes="holds on the sphere only (|x_i| = 1); self-interaction terms cancel in the diagonal blocks",
        structured=kernel_lines(kernel) + HESSIAN_BLOCK_LINES,
    )


#: the closed-form blocks of :func:`pair_hessian_blocks`, for every n and d, as (label, text, LaTeX)
HESSIAN_BLOCK_LINES = (
    ("block (i, j), i != j", "(1/n^2) [ phi'(s_ij) P_i P_j + phi''(s_ij) (P_i x_j)(P_j x_i)^T ]",
     r"H_{ij} = \frac{1}{n^2}\left[\phi'(s_{ij}) P_i P_j + \phi''(s_{ij}) (P_i x_j)(P_j x_i)^\top\right]"),
    ("block (i, i)", "(1/n^2) sum_{j != i} [ phi''(s_ij) (P_i x_j)(P_i x_j)^T - phi'(s_ij) s_ij P_i ]",
     r"H_{ii} = \frac{1}{n^2}\sum_{j \ne i}\left[\phi''(s_{ij}) (P_i x_j)(P_i x_j)^\top"
     r" - \phi'(s_{ij})\, s_{ij} P_i\right]"),
    ("where", "s_ij = <x_i, x_j>, P_i = I - x_i x_i^T (tangent vectors at x_i)",
     r"s_{ij} = \langle x_i, x_j\rangle,\quad P_i = I - x_i x_i^\top"),
)


def kernel_lines(kernel: PairKernel) -> tuple[tuple[str, str, str], ...]:
    r""":math:`\phi`, :math:`\phi'` and :math:`\phi''` of a kernel as structured-form lines (label, text, LaTeX)."""
    d1, d2 = kernel.derivative(1), kernel.derivative(2)
    return (("kernel", f"phi(s) = {sp.sstr(kernel.expr)}", rf"\phi(s) = {sp.latex(kernel.expr)}"),
            ("", f"phi'(s) = {sp.sstr(d1)}", rf"\phi'(s) = {sp.latex(d1)}"),
            ("", f"phi''(s) = {sp.sstr(d2)}", rf"\phi''(s) = {sp.latex(d2)}"))


def gradient_derivation(kernel: PairKernel | None = None, n: int = 2, d: int = 3) -> Derivation:
    r"""Derivation: :math:`\nabla_i E = \frac{1}{n^2} \sum_j \phi'(s_{ij}) x_j` for explicit small-:math:`n` symbolic
    particles.
    """
    kernel = kernel or exponential_kernel()
    points = [sym.particle(i + 1, d) for i in range(n)]
    energy = pair_energy(kernel, points)
    lhs = sp.Matrix.vstack(*[euclidean_gradient(energy, x) for x in points])
    rhs = sp.Matrix.vstack(*closed_form_euclidean_gradient(kernel, points))
    names = [list(p) for p in points]
    return Derivation(
        title=f"Euclidean gradient of E = 1/(2n^2) sum phi(<x_i,x_j>) (n={n}, d={d})",
        source="GLPR arXiv 2312.10794",
        lhs=lhs, rhs=rhs,
        steps=(Step("explicit energy", energy),),
        sampler=_sampler(n, d, kernel, names),
        structured=kernel_lines(kernel)[:2] + (
            ("Euclidean gradient", "nabla_i E = (1/n^2) sum_j phi'(s_ij) x_j   (j = i included)",
             r"\nabla_i E = \frac{1}{n^2}\sum_j \phi'(s_{ij})\, x_j"),
            ("Riemannian gradient", "grad_i E = P_i nabla_i E", r"\operatorname{grad}_i E = P_i \nabla_i E"),
            HESSIAN_BLOCK_LINES[-1]),
    )


__all__ = [
    "closed_form_euclidean_gradient",
    "closed_form_riemannian_hessian",
    "gradient_derivation",
    "hessian_derivation",
    "hessian_from_pair_blocks",
    "pair_hessian_blocks",
]
