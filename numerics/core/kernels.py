"""User pair kernels phi(s), s = <x_i, x_j>, compiled once: phi, phi', phi'' as NumPy callables, and their checks.

phi, phi', phi'' are derived once from the kernel's sympy expression and compiled through
:func:`theory.codegen.compile_function` (cached); the declared parameters stay arguments of the generated code
(argument order ``(s, beta, *params)``, see ``PairKernel.symbols``), so a family of kernels compiles once. Nothing
symbolic runs per call. :func:`check_kernel_on_interval` refuses, before any run, a kernel that is not usable on the
whole range [-1, 1] of s (every command that takes ``--kernel`` calls it).

The fields and energies of a kernel are in :mod:`numerics.core.kernel_field` (phi' is a weight of the attention
pipeline, :mod:`numerics.core.attention`, which compiles a model's kernel here).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from sympy.codegen.rewriting import expm1_opt, log1p_opt, optimize
from sympy.printing.codeprinter import PrintMethodNotImplementedError

from theory import symbols as sym
from theory.codegen import compile_function, expression_key
from theory.kernels import PairKernel

from numerics.common.errors import InputError, require_real

#: points at which the positivity of phi' is checked for the ``sa`` model
POSITIVITY_GRID = 2001


@dataclass(frozen=True)
class CompiledKernel:
    """phi, phi', phi'' of a pair kernel as NumPy callables ``f(s, beta, *params)`` plus the parameter values."""

    kernel: PairKernel
    phi: object
    dphi: object
    d2phi: object
    params: tuple[float, ...]

    def __call__(self, order: int, S: np.ndarray, beta: float) -> np.ndarray:
        """phi^{(order)}(S) elementwise (order 0, 1 or 2), overflow raising InputError."""
        fn = (self.phi, self.dphi, self.d2phi)[order]
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            try:
                out = fn(S, beta, *self.params)
            except FloatingPointError:
                raise InputError(f"kernel {self.kernel.name} (derivative {order}) is not finite at "
                                 f"beta={beta:g} on the configuration") from None
        out = np.broadcast_to(np.asarray(out, dtype=float), np.shape(S))
        if not np.all(np.isfinite(out)):
            raise InputError(f"kernel {self.kernel.name} (derivative {order}) is not finite at beta={beta:g}")
        return out


_COMPILED: dict[str, tuple] = {}


def compile_kernel(kernel: PairKernel) -> CompiledKernel:
    r"""Compile :math:`\phi`, :math:`\phi'`, :math:`\phi''` of ``kernel`` (cached by the kernel's expression and
    parameter names).

    The parameter values are read from ``kernel.params`` (they must be numbers).
    """
    if not isinstance(kernel, PairKernel):
        raise InputError(f"kernel must be a theory.kernels.PairKernel, got {type(kernel).__name__}")
    args = kernel.symbols
    values = []
    for p in args[2:]:
        v = kernel.params[p]
        if not (v.is_number and v.is_real):
            raise InputError(f"kernel parameter {p} has no numeric value ({v})")
        values.append(float(v))
    key = expression_key(args, kernel.expr)
    fns = _COMPILED.get(key)
    if fns is None:
        names = ("s", "beta", *(f"p_{str(p)}" for p in args[2:]))
        # plain sp.diff (PairKernel.derivative also simplifies, which costs seconds for kernels like log cosh);
        # exp(x) - 1 -> expm1(x), log(1 + x) -> log1p(x): no cancellation at small beta (phi_beta = expm1(beta s)/beta)
        d1 = sp.diff(kernel.expr, sym.s)
        exprs = tuple(optimize(e, [expm1_opt, log1p_opt]) for e in (kernel.expr, d1, sp.diff(d1, sym.s)))
        _refuse_non_smooth(kernel, exprs)
        try:
            fns = tuple(compile_function(f"kernel_d{order}", args, e,
                                         doc=f"phi^({order})(s) of {sp.sstr(kernel.expr)}; args (s, beta, *params).",
                                         arg_names=names)
                        for order, e in enumerate(exprs))
        except PrintMethodNotImplementedError as exc:  # a function with no NumPy/SciPy counterpart
            raise InputError(f"kernel {kernel.name}: phi, phi' or phi'' has no numerical form "
                             f"({str(exc).splitlines()[0]})") from None
        _COMPILED[key] = fns
    return CompiledKernel(kernel, *fns, tuple(values))


#: what a derivative of a kernel that is not twice differentiable contains (abs -> sign -> DiracDelta)
_NON_SMOOTH = (sp.DiracDelta, sp.Heaviside, sp.Derivative, sp.Subs)


def _refuse_non_smooth(kernel: PairKernel, exprs) -> None:
    """Refuse phi whose phi' or phi'' is a distribution or an unevaluated derivative: the dynamics and the
    Hessian need phi twice continuously differentiable on [-1, 1] (abs(s) has a kink at s = 0)."""
    for order, e in enumerate(exprs):
        bad = sorted({type(a).__name__ for a in e.atoms(*_NON_SMOOTH)} |
                     {type(f).__name__ for f in e.atoms(sp.Function) if isinstance(f, _NON_SMOOTH)})
        if bad:
            raise InputError(f"kernel {kernel.name}: phi{chr(39) * order}(s) involves {', '.join(bad)}: phi must be twice "
                             f"continuously differentiable on [-1, 1] (abs and sign have a kink or a jump at 0)")


_CHECKED: dict[tuple, str | None] = {}


def check_kernel_on_interval(kernel: PairKernel | CompiledKernel, beta: float, model: str | None = None) -> None:
    """Refuse a kernel that is not usable on the whole range s = <x, y> in [-1, 1], before any run.

    phi, phi' and phi'' (with beta and the parameters substituted) must be continuous on the closed interval
    [-1, 1] (SymPy's ``continuous_domain`` of phi'': a pole such as tan(pi s/2) at the self-interaction
    s = 1, or the infinite slope of sqrt(1 - s^2) at s = +-1, is refused) and finite on a grid of [-1, 1] that includes the end points; the
    ``sa`` model also needs phi'(s) > 0 there. Every command that takes ``--kernel`` calls this (simulate,
    critical, conjecture, derive checks, codegen), so a kernel is accepted or refused the same way everywhere.
    Results are cached per (kernel, beta).
    """
    compiled = kernel if isinstance(kernel, CompiledKernel) else compile_kernel(kernel)
    beta = require_real(beta, "beta")
    key = (expression_key(compiled.kernel.symbols, compiled.kernel.expr), compiled.params, beta)
    if key not in _CHECKED:
        _CHECKED[key] = _continuity_problem(compiled.kernel, beta)
    if _CHECKED[key]:
        raise InputError(_CHECKED[key])
    grid = np.linspace(-1.0, 1.0, POSITIVITY_GRID)
    for order in ((0, 1, 2) if beta != 0.0 else (1, 2)):  # phi itself is a 0/0 limit at beta = 0
        compiled(order, grid, beta)  # raises InputError where it is not finite
    if model == "sa":
        require_positive_weight(compiled, beta)


def _continuity_problem(kernel: PairKernel, beta: float) -> str | None:
    # phi'' continuous on the closed interval implies phi' and phi are (they are its antiderivatives there);
    # differentiating before substituting beta keeps beta = 0 regular ((e^{beta s} - 1)/beta has phi'' = beta e^{beta s})
    d2 = sp.diff(kernel.expr, sym.s, 2).subs({sym.beta: sp.Float(beta), **kernel.params})
    interval = sp.Interval(-1, 1)
    try:
        domain = sp.calculus.util.continuous_domain(d2, sym.s, interval)
    except Exception:  # noqa: BLE001 - SymPy cannot decide: the numeric grid check still runs
        return None
    if domain != interval:
        return (f"kernel {kernel.name}: phi''(s) is not continuous on [-1, 1] at beta={beta:g} (only on "
                f"{sp.sstr(domain)}); s = <x_i, x_j> takes every value there, s = 1 included")
    return None


def require_positive_weight(compiled: CompiledKernel, beta: float) -> None:
    """Check phi'(s) > 0 on a grid of [-1, 1] (needed to normalise the ``sa`` weights)."""
    grid = np.linspace(-1.0, 1.0, POSITIVITY_GRID)
    w = compiled(1, grid, beta)
    if np.min(w) <= 0:
        k = int(np.argmin(w))
        raise InputError(f"model sa needs phi'(s) > 0 on [-1, 1]; phi'({grid[k]:.4g}) = {w[k]:.4g} at beta={beta:g}")
