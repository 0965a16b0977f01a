r"""Fields, energies and Riemannian gradients for ANY pair kernel :math:`\phi(s)`, :math:`s = \langle x_i, x_j\rangle`.

For a :class:`theory.kernels.PairKernel` :math:`\phi` (user kernels come from
:func:`theory.expression_parser.parse_kernel`) and unit vectors :math:`x_1, \dots, x_n` (docs/conventions.md, GLPR
arXiv 2312.10794 with :math:`e^{\beta s}` replaced by :math:`\phi'(s)`):

.. math::

    \begin{aligned}
    E(X) &= \frac{1}{2n^2} \sum_{i,j} \phi(s_{ij}) \qquad (j = i \text{ included}), \\
    \texttt{usa}:\quad v_i &= P_{x_i}\Big(\frac{1}{n} \sum_j \phi'(s_{ij}) x_j\Big) = n \operatorname{grad}_{x_i} E, \\
    \texttt{sa}:\quad v_i &= P_{x_i}\Big(\sum_j \phi'(s_{ij}) x_j \Big/ \sum_k \phi'(s_{ik})\Big)
        \qquad (\text{needs } \phi' > 0 \text{ on } [-1, 1])
    \end{aligned}

(the Riemannian Hessian of :math:`E` for any kernel is
:func:`numerics.critical.hessian.riemannian_hessian_tangent`). :math:`\phi`, :math:`\phi'`, :math:`\phi''` are
derived once from the kernel's sympy expression and compiled by :mod:`numerics.core.kernels` (cached); nothing
symbolic runs per call. The field is the weight :math:`\phi'` of the attention pipeline
(:mod:`numerics.core.attention`).

Time unit: the natural one (no rescaling exists for a general kernel). Overflow of :math:`\phi` or :math:`\phi'`
raises :class:`numerics.common.errors.InputError` rather than returning inf.

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
    r"""Validate once and return ``field(X) -> (n, d)`` for integrators (formula of :func:`kernel_field`): the
    weight :math:`\phi'` of the attention pipeline (:meth:`numerics.core.attention.Attention.kernel`), one system."""
    from numerics.core.attention import Attention

    compiled = kernel if isinstance(kernel, CompiledKernel) else compile_kernel(kernel)
    model = require_choice(model, "model", MODELS)
    beta = require_real(beta, "beta")
    return Attention.kernel(compiled, beta, model, block=block).single()


def kernel_field(X, kernel: PairKernel | CompiledKernel, beta: float, model: str = "usa", *,
                 block: int | None = None, normalize: bool = False) -> np.ndarray:
    r"""Velocity of every particle for the pair kernel :math:`\phi`.

    Parameters
    ----------
    X : (n, d) array_like
        Unit rows.
    kernel : PairKernel or CompiledKernel
        :math:`\phi(s)`; its derivative :math:`\phi'` is the attention weight.
    beta : float
        Value of the symbol ``beta`` in the kernel.
    model : {"usa", "sa"}
        ``usa``: :math:`P_{x_i}\big(\tfrac{1}{n} \sum_j \phi'(s_{ij}) x_j\big) = n \operatorname{grad}_i E`;
        ``sa``: :math:`P_{x_i}\big(\sum_j \phi'(s_{ij}) x_j / \sum_k \phi'(s_{ik})\big)`, requires
        :math:`\phi' > 0` on :math:`[-1, 1]` (checked).

    Returns
    -------
    (n, d) ndarray, in the natural time unit.

    Notes
    -----
    For :math:`\phi_\beta = (e^{\beta s} - 1)/\beta` this is :func:`numerics.core.field.attention_field` (GLPR
    arXiv 2312.10794).
    Verified by: conjecture.equiangular-ode and tests/numerics/test_conjecture_kernel_field.py.
    """
    X = require_points(X, "X", normalize=normalize)
    return make_kernel_field(kernel, beta, model, block=block)(X)


def kernel_energy(X, kernel: PairKernel | CompiledKernel, beta: float, *, block: int | None = None,
                  normalize: bool = False) -> float:
    r""":math:`E(X) = \frac{1}{2n^2} \sum_{i,j} \phi(\langle x_i, x_j\rangle)` (self-interaction included).

    At :math:`\beta = 0` a kernel singular there (like :math:`(e^{\beta s} - 1)/\beta`) is replaced by its limit
    :math:`\beta \to 0`. So is a subnormal :math:`\beta` (:math:`0 < \lvert\beta\rvert < 2.2 \cdot 10^{-308}`):
    there :math:`\beta s` cannot be resolved (``5e-324 * 0.56`` rounds to ``5e-324`` or 0), the direct formula is
    wrong by :math:`O(1)`, while the limit differs from the exact value by :math:`O(\lvert\beta\rvert)`.
    The pair sum is :func:`numerics.core.energy.pair_energies` with ``phi`` for a batch of one (upper block
    triangle, :math:`\phi(s_{ij}) = \phi(s_{ji})` formed once): a member of a batch gets this energy bit for bit.
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
    r""":math:`\operatorname{grad}_{x_i} E = P_{x_i}\big(\frac{1}{n^2} \sum_j \phi'(s_{ij}) x_j\big)`, i.e. the ``usa``
    field divided by :math:`n`."""
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
