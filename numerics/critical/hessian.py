r"""Numeric Riemannian gradient and Hessian of a pair energy on :math:`(\mathbb{S}^{d-1})^n`, in an orthonormal tangent basis.

Energy (docs/conventions.md; :mod:`theory.kernels`):
:math:`E(X) = \frac{1}{2n^2} \sum_{i,j} \phi(\langle x_i, x_j\rangle)`, for the attention energy
:math:`\phi_\beta(s) = (e^{\beta s} - 1)/\beta` (GLPR's :math:`E_\beta` minus a constant: same gradient and
Hessian).

The Hessian blocks are those of :func:`theory.hessian.pair_hessian_blocks` (the one place they are written):

.. math::

    \begin{aligned}
    \text{block } (i, j),\ i \ne j:&\quad \frac{1}{n^2} \Big[\phi'(s_{ij}) P_i P_j
        + \phi''(s_{ij}) (P_i x_j)(P_j x_i)^\top\Big], \\
    \text{block } (i, i):&\quad \frac{1}{n^2} \sum_{j \ne i} \Big[\phi''(s_{ij}) (P_i x_j)(P_i x_j)^\top
        - \phi'(s_{ij})\, s_{ij} P_i\Big].
    \end{aligned}

Here they are assembled for all pairs at once in the tangent coordinates :math:`u_i = U_i c_i`, where the
columns of :math:`U_i` (:math:`d \times (d-1)`) are an orthonormal basis of :math:`T_{x_i} \mathbb{S}^{d-1}`; then
:math:`U_i^\top P_i = U_i^\top` and the :math:`(i, j)` block becomes
:math:`\phi'(s_{ij}) U_i^\top U_j + \phi''(s_{ij}) (U_i^\top x_j)(U_j^\top x_i)^\top`. :math:`\phi'` and
:math:`\phi''` are generated once per kernel by :func:`theory.codegen.compile_function` (no sympy on the hot
path). Cost :math:`O(n^2 d^2)` memory and time to assemble, :math:`O((n(d-1))^3)` to diagonalise: meant for
:math:`n(d-1)` up to a few thousand.

Verified by: critical.hessian-formula.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from theory import symbols as sym
from theory.codegen import compile_function
from theory.kernels import PairKernel, exponential_kernel

from numerics.common.errors import InputError, require_points, require_real
from numerics.core.field import interaction_energy

#: largest tangent dimension n (d - 1) for which a dense Hessian is assembled
MAX_TANGENT_DIMENSION = 4000


def _resolve(kernel: PairKernel | None) -> tuple[PairKernel, sp.Expr]:
    kernel = kernel or exponential_kernel()
    if not isinstance(kernel, PairKernel):
        raise InputError(f"kernel must be a theory.kernels.PairKernel, got {type(kernel).__name__}")
    expr = kernel.substituted()
    stray = expr.free_symbols - {sym.s, sym.beta}
    if stray:
        raise InputError(f"kernel {kernel} has parameters without numeric values: "
                         f"{', '.join(sorted(map(str, stray)))}")
    return kernel, expr


_GENERATED: dict[tuple[str, str], object] = {}


def _generated(kernel: PairKernel | None, what: str):
    """Generated callables per (kernel, what), built once: sympy runs at setup only, never per call."""
    key = ("default" if kernel is None else sp.srepr(kernel.substituted()), what)
    fn = _GENERATED.get(key)
    if fn is None:
        _, expr = _resolve(kernel)
        if what == "exponential":
            fn = sp.simplify(expr - exponential_kernel().expr) == 0
        elif what == "values":
            fn = compile_function("pair_kernel", (sym.s, sym.beta), expr,
                                  doc="phi(s) of the pair kernel; arguments (s, beta), elementwise.")
        else:
            d1 = sp.simplify(sp.diff(expr, sym.s))
            d2 = sp.simplify(sp.diff(d1, sym.s))
            fn = compile_function("pair_kernel_derivatives", (sym.s, sym.beta), (d1, d2),
                                  doc="(phi'(s), phi''(s)) of the pair kernel; arguments (s, beta), elementwise.")
        _GENERATED[key] = fn
    return fn


def is_exponential(kernel: PairKernel | None) -> bool:
    """True for the attention kernel phi_beta (the default)."""
    return bool(_generated(kernel, "exponential"))


def kernel_derivatives(kernel: PairKernel | None = None):
    """Generated ``f(s, beta) -> (phi'(s), phi''(s))`` for ``kernel`` (default: phi_beta), elementwise, cached."""
    return _generated(kernel, "derivatives")


def kernel_values(kernel: PairKernel | None = None):
    """Generated ``f(s, beta) -> phi(s)`` for ``kernel``, elementwise, cached."""
    return _generated(kernel, "values")


def pair_weights(X: np.ndarray, beta: float, kernel):
    """(G, phi'(G), phi''(G)) with G = X X^T clipped to [-1, 1]; overflow raises InputError."""
    G = X @ X.T
    np.clip(G, -1.0, 1.0, out=G)
    with np.errstate(over="raise", invalid="raise"):
        try:
            W1, W2 = kernel_derivatives(kernel)(G, beta)
        except FloatingPointError:
            raise InputError(f"kernel derivatives overflow at beta={beta:g} (use smaller |beta|)") from None
    W1 = np.broadcast_to(np.asarray(W1, dtype=float), G.shape)
    W2 = np.broadcast_to(np.asarray(W2, dtype=float), G.shape)
    if not (np.all(np.isfinite(W1)) and np.all(np.isfinite(W2))):
        raise InputError(f"kernel derivatives are not finite at beta={beta:g}")
    return G, W1, W2


def tangent_basis(X, rng: np.random.Generator | None = None) -> np.ndarray:
    r"""Orthonormal bases of the tangent spaces: U of shape ``(n, d, d-1)``, :math:`U_i^\top x_i = 0`,
    :math:`U_i^\top U_i = I`.

    From a complete Householder QR of each :math:`x_i`. With ``rng``, each basis is rotated by a random orthogonal
    (d-1) x (d-1) matrix (to test that results do not depend on the choice of basis).
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    Q, _ = np.linalg.qr(X[:, :, None], mode="complete")
    U = Q[:, :, 1:]
    if rng is not None and d > 2:
        R, _ = np.linalg.qr(rng.standard_normal((n, d - 1, d - 1)))
        U = U @ R
    elif rng is not None:
        U = U * rng.choice([-1.0, 1.0], size=(n, 1, 1))
    return U


def require_tangent_basis(U, X: np.ndarray) -> np.ndarray:
    """Validate user-supplied tangent bases: shape (n, d, d-1), orthonormal columns orthogonal to x_i (1e-8)."""
    n, d = X.shape
    U = np.asarray(U, dtype=float)
    if U.shape != (n, d, d - 1):
        raise InputError(f"tangent basis U must have shape {(n, d, d - 1)}, got {U.shape}")
    gram = np.einsum("ida,idb->iab", U, U) - np.eye(d - 1)
    normal = np.einsum("ida,id->ia", U, X)
    err = max(float(np.abs(gram).max(initial=0.0)), float(np.abs(normal).max(initial=0.0)))
    if err > 1e-8:
        raise InputError(f"tangent basis U is not orthonormal and tangent (deviation {err:.3g} > 1e-8)")
    return U


def riemannian_gradient(X, beta, kernel: PairKernel | None = None) -> np.ndarray:
    """grad_i E = (1/n^2) P_i sum_j phi'(s_ij) x_j as an (n, d) array (tangent vectors).

    Verified by: critical.hessian-formula.
    """
    beta = require_real(beta, "beta")
    X = require_points(X, "X")
    _, W1, _ = pair_weights(X, beta, kernel)
    n = X.shape[0]
    g = W1 @ X / n**2
    return g - np.einsum("ij,ij->i", X, g)[:, None] * X


def relative_residual(X, beta, kernel: PairKernel | None = None) -> float:
    r"""Scale-free fixed-point residual
    :math:`\max_i \big\lVert P_i \sum_j \phi'(s_{ij}) x_j\big\rVert / \sum_j \lvert\phi'(s_{ij})\rvert`.

    For :math:`\phi' > 0` this is the largest speed of the ``sa`` field (a number in [0, 1]); it vanishes exactly at the
    critical points of :math:`E`, which are the fixed points of both ``sa`` and ``usa``.
    """
    beta = require_real(beta, "beta")
    X = require_points(X, "X")
    _, W1, _ = pair_weights(X, beta, kernel)
    v = W1 @ X
    v -= np.einsum("ij,ij->i", X, v)[:, None] * X
    scale = np.abs(W1).sum(axis=1)
    scale[scale == 0] = 1.0
    return float(np.max(np.linalg.norm(v, axis=1) / scale))


def riemannian_hessian_tangent(X, beta, kernel: PairKernel | None = None, U: np.ndarray | None = None) -> np.ndarray:
    """The Riemannian Hessian of E at X as a symmetric n(d-1) x n(d-1) matrix in the tangent basis ``U``.

    Row/column index i*(d-1) + a is the coefficient of U[i][:, a]. ``U`` defaults to :func:`tangent_basis`.

    Verified by: critical.hessian-formula.
    """
    beta = require_real(beta, "beta")
    X = require_points(X, "X")
    n, d = X.shape
    if n * (d - 1) > MAX_TANGENT_DIMENSION:
        raise InputError(f"tangent dimension n(d-1) = {n * (d - 1)} exceeds {MAX_TANGENT_DIMENSION} "
                         "for a dense Hessian")
    U = tangent_basis(X) if U is None else require_tangent_basis(U, X)
    G, W1, W2 = pair_weights(X, beta, kernel)
    C = np.einsum("ida,jd->iaj", U, X)               # C[i, a, j] = <U_i e_a, x_j> (zero for j = i)
    H = W1[:, None, :, None] * np.einsum("ida,jdb->iajb", U, U)
    H += W2[:, None, :, None] * np.einsum("iaj,jbi->iajb", C, C)
    idx = np.arange(n)
    H[idx, :, idx, :] = 0.0
    diag = np.einsum("ij,iaj,ibj->iab", W2, C, C)     # phi''(s_ij) (U_i^T x_j)(U_i^T x_j)^T; j = i adds zero
    trace = (W1 * G).sum(axis=1) - np.diag(W1) * np.diag(G)
    diag -= trace[:, None, None] * np.eye(d - 1)
    H[idx, :, idx, :] = diag
    H = H.reshape(n * (d - 1), n * (d - 1)) / n**2
    return 0.5 * (H + H.T)


def energy(X, beta, kernel: PairKernel | None = None) -> float:
    """E(X) = 1/(2 n^2) sum_{i,j} phi(<x_i, x_j>) (for phi_beta: :func:`numerics.core.field.interaction_energy`)."""
    beta = require_real(beta, "beta")
    X = require_points(X, "X")
    if is_exponential(kernel):
        return interaction_energy(X, beta)
    G = np.clip(X @ X.T, -1.0, 1.0)
    with np.errstate(over="raise", invalid="raise"):
        try:
            values = np.broadcast_to(kernel_values(kernel)(G, beta), G.shape)
        except FloatingPointError:
            raise InputError(f"kernel values overflow or are undefined at beta={beta:g}") from None
    return float(values.sum() / (2 * X.shape[0] ** 2))


def hessian_spectrum(X, beta, kernel: PairKernel | None = None) -> np.ndarray:
    """Eigenvalues (ascending) of the Riemannian Hessian of E at X, n(d-1) of them."""
    return np.linalg.eigvalsh(riemannian_hessian_tangent(X, beta, kernel))


__all__ = [
    "energy",
    "hessian_spectrum",
    "kernel_derivatives",
    "relative_residual",
    "require_tangent_basis",
    "riemannian_gradient",
    "riemannian_hessian_tangent",
    "tangent_basis",
]
