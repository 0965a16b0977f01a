"""Fields, energies and Riemannian gradients for ANY pair kernel phi(s), s = <x_i, x_j>.

For a :class:`theory.kernels.PairKernel` phi (user kernels come from :func:`theory.expression_parser.parse_kernel`)
and unit vectors x_1..x_n (docs/conventions.md, GLPR arXiv 2312.10794 with e^{beta s} replaced by phi'(s)):

    E(X)   = 1/(2 n^2) sum_{i,j} phi(s_ij)                                   (j = i included)
    usa    v_i = P_{x_i}( (1/n) sum_j phi'(s_ij) x_j )  =  n grad_{x_i} E
    sa     v_i = P_{x_i}( sum_j phi'(s_ij) x_j / sum_k phi'(s_ik) )         (needs phi' > 0 on [-1, 1])

(the Riemannian Hessian of E for any kernel is :func:`numerics.critical.hessian.riemannian_hessian_tangent`). phi, phi',
phi'' are derived
once from the kernel's sympy expression and compiled by :mod:`numerics.core.kernels` (cached); nothing symbolic
runs per call. The field is the weight phi' of the attention pipeline (:mod:`numerics.core.attention`).

Time unit: the natural one (no rescaling exists for a general kernel). Overflow of phi or phi' raises
:class:`numerics.common.errors.InputError` rather than returning inf.

Verified by: tests/numerics/test_conjecture_kernel_field.py (against :func:`numerics.core.field.attention_field` for the
exponential kernel, against Taylor remainders of the energy, and against numerics.critical.hessian).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from theory import symbols as sym
from theory.kernels import PairKernel

from numerics.common.errors import InputError, require_choice, require_points, require_real
from numerics.core.field import MODELS, block_rows
# compilation and checks of a kernel (numerics.core.kernels); the names stay importable from here
from numerics.core.kernels import (POSITIVITY_GRID, CompiledKernel, check_kernel_on_interval,  # noqa: F401
                                   compile_kernel, require_positive_weight)

def make_kernel_field(kernel: PairKernel | CompiledKernel, beta: float, model: str = "usa", *,
                      block: int | None = None):
    """Validate once and return ``field(X) -> (n, d)`` for integrators (formula of :func:`kernel_field`): the
    weight phi' of the attention pipeline (:meth:`numerics.core.attention.Attention.kernel`), one system."""
    from numerics.core.attention import Attention

    compiled = kernel if isinstance(kernel, CompiledKernel) else compile_kernel(kernel)
    model = require_choice(model, "model", MODELS)
    beta = require_real(beta, "beta")
    return Attention.kernel(compiled, beta, model, block=block).single()


def kernel_field(X, kernel: PairKernel | CompiledKernel, beta: float, model: str = "usa", *,
                 block: int | None = None, normalize: bool = False) -> np.ndarray:
    """Velocity of every particle for the pair kernel phi.

    Parameters
    ----------
    X : (n, d) array_like
        Unit rows.
    kernel : PairKernel or CompiledKernel
        phi(s); its derivative phi' is the attention weight.
    beta : float
        Value of the symbol ``beta`` in the kernel.
    model : {"usa", "sa"}
        ``usa``: P_{x_i}((1/n) sum_j phi'(s_ij) x_j) = n grad_i E;
        ``sa``: P_{x_i}(sum_j phi'(s_ij) x_j / sum_k phi'(s_ik)), requires phi' > 0 on [-1, 1] (checked).

    Returns
    -------
    (n, d) ndarray, in the natural time unit.

    Notes
    -----
    For phi_beta = (e^{beta s} - 1)/beta this is :func:`numerics.core.field.attention_field` (GLPR arXiv 2312.10794).
    Verified by: conjecture.equiangular-ode and tests/numerics/test_conjecture_kernel_field.py.
    """
    X = require_points(X, "X", normalize=normalize)
    return make_kernel_field(kernel, beta, model, block=block)(X)


def kernel_energy(X, kernel: PairKernel | CompiledKernel, beta: float, *, block: int | None = None,
                  normalize: bool = False) -> float:
    """E(X) = 1/(2 n^2) sum_{i,j} phi(<x_i, x_j>) (self-interaction included).

    At beta = 0 a kernel singular there (like (e^{beta s} - 1)/beta) is replaced by its limit beta -> 0. So is a
    subnormal beta (0 < |beta| < 2.2e-308): there beta * s cannot be resolved (5e-324 * 0.56 rounds to 5e-324 or
    0), the direct formula is wrong by O(1), while the limit differs from the exact value by O(|beta|).
    The pair sum is :func:`numerics.core.energy.pair_energies` with ``phi`` for a batch of one (upper block
    triangle, phi(s_ij) = phi(s_ji) formed once): a member of a batch gets this energy bit for bit.
    Verified by: tests/numerics/test_conjecture_kernel_field.py (Taylor remainder of the gradient),
    tests/numerics/test_core_energy.py.
    """
    from numerics.core.energy import batch_energies
    from numerics.core.field import energy_block

    compiled = kernel if isinstance(kernel, CompiledKernel) else compile_kernel(kernel)
    beta = require_real(beta, "beta")
    X = require_points(X, "X", normalize=normalize)
    if abs(beta) < np.finfo(float).tiny:  # 0 and the subnormals
        compiled, beta = _beta_zero_limit(compiled), 0.0
    n, d = X.shape
    return float(batch_energies(X[None], np.array([beta]), block=block or energy_block(n, d),
                                phi=lambda S, b: compiled(0, S, b))[0])


def _beta_zero_limit(compiled: CompiledKernel) -> CompiledKernel:
    try:
        compiled(0, np.zeros(1), 0.0)
        return compiled
    except InputError:
        pass
    k = compiled.kernel
    limit = PairKernel(sp.limit(k.expr, sym.beta, 0), k.params, name=f"{k.name} at beta=0")
    return compile_kernel(limit)


def kernel_riemannian_gradient(X, kernel: PairKernel | CompiledKernel, beta: float, *,
                               normalize: bool = False) -> np.ndarray:
    """grad_{x_i} E = P_{x_i}((1/n^2) sum_j phi'(s_ij) x_j), i.e. the ``usa`` field divided by n."""
    X = require_points(X, "X", normalize=normalize)
    return make_kernel_field(kernel, beta, "usa")(X) / X.shape[0]


__all__ = [
    "CompiledKernel",
    "compile_kernel",
    "kernel_energy",
    "kernel_field",
    "kernel_riemannian_gradient",
    "make_kernel_field",
    "check_kernel_on_interval",
    "require_positive_weight",
]
