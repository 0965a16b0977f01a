r"""Pair interaction kernels :math:`\phi(s)`, :math:`s = \langle x, y\rangle`, and the energy they define.

attnflow's energies are written at the level of the pair kernel (docs/conventions.md, section 1):

.. math::

    E(X) = \frac{1}{2n^2} \sum_{i,j} \phi(\langle x_i, x_j\rangle)
    \qquad (\text{self-interaction } j = i \text{ included, as in GLPR})

The attention energy :math:`E_\beta` is the kernel :math:`\phi_\beta(s) = (e^{\beta s} - 1) / \beta`, i.e.
GLPR's :math:`\frac{1}{2\beta n^2} \sum e^{\beta\langle x_i, x_j\rangle}` minus the constant
:math:`1/(2\beta)`: same gradient, and a genuine limit :math:`\phi_0(s) = s` at :math:`\beta = 0`. Its derivative
:math:`\phi_\beta'(s) = e^{\beta s}` is the attention weight, so the ``usa`` field is
:math:`P_{x_i}(\frac{1}{n} \sum_j \phi'(s_{ij}) x_j) = n \operatorname{grad}_{x_i} E` for any kernel, and the
``sa`` field normalises the weights :math:`\phi'(s_{ij})` (meaningful when :math:`\phi' > 0`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy as sp

from . import symbols as sym


@dataclass(frozen=True)
class PairKernel:
    r"""A pair interaction :math:`\phi(s)` as a sympy expression in ``s`` (and ``beta`` and declared parameters).

    Parameters
    ----------
    expr : sympy expression
        :math:`\phi(s)`. Free symbols must be among ``s``, ``beta`` and the keys of ``params``.
    params : mapping of sympy Symbol to value
        Declared parameters and their values (numbers, or the symbol itself to keep it symbolic).
    name : str
        Display name.
    """

    expr: sp.Expr
    params: Mapping[sp.Symbol, sp.Expr] = field(default_factory=dict)
    name: str = "phi"

    def __post_init__(self):
        expr = sp.sympify(self.expr)
        params = {sp.Symbol(str(k), real=True) if not isinstance(k, sp.Symbol) else k: sp.sympify(v)
                  for k, v in dict(self.params).items()}
        sym.check_symbols(expr, {sym.s, sym.beta, *params})
        object.__setattr__(self, "expr", expr)
        object.__setattr__(self, "params", params)

    @property
    def symbols(self) -> tuple[sp.Symbol, ...]:
        """Argument order of generated code: (``s``, ``beta``, ``*params`` sorted by name)."""
        return (sym.s, sym.beta, *sorted(self.params, key=str))

    def substituted(self) -> sp.Expr:
        r""":math:`\phi` with declared parameter values substituted."""
        return self.expr.xreplace(dict(self.params))

    def derivative(self, order: int = 1) -> sp.Expr:
        r""":math:`\phi^{(k)}(s)` with :math:`k` = ``order``, simplified."""
        return sp.simplify(sp.diff(self.expr, sym.s, order))

    def weight(self) -> sp.Expr:
        r"""The attention weight :math:`\phi'(s)` (:math:`e^{\beta s}` for the exponential kernel)."""
        return self.derivative(1)

    def __str__(self) -> str:
        return f"{self.name}(s) = {sp.sstr(self.expr)}"


def exponential_kernel() -> PairKernel:
    r""":math:`\phi_\beta(s) = (e^{\beta s} - 1)/\beta`, the kernel of :math:`E_\beta` (GLPR) with the constant
    removed."""
    return PairKernel((sp.exp(sym.beta * sym.s) - 1) / sym.beta, {}, name="phi_beta")


def kernel_at_beta_zero(kernel: PairKernel) -> sp.Expr:
    r"""The limit :math:`\beta \to 0` of :math:`\phi` (for :math:`\phi_\beta`: :math:`s`)."""
    return sp.limit(kernel.expr, sym.beta, 0)


def pair_energy(kernel: PairKernel, points) -> sp.Expr:
    r""":math:`E(X) = \frac{1}{2n^2} \sum_{i,j} \phi(\langle x_i, x_j\rangle)` for explicit symbolic points
    (small-:math:`n` path only).
    """
    pts = [sp.Matrix(p) for p in points]
    n = len(pts)
    total = sum(kernel.expr.subs(sym.s, (pi.T * pj)[0, 0]) for pi in pts for pj in pts)
    return total / (2 * n**2)
