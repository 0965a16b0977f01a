"""SymPy expressions evaluated in Arb ball arithmetic: the derivations of ``theory/`` are not typed in again.

:func:`arb_function` walks a SymPy expression tree once and builds a tree of Python closures over Arb
operations; calling it with Arb balls for the arguments returns a ball that contains the exact value of the
expression for every point of the argument balls (each Arb operation is rounded outward). Supported nodes:
integers and rationals (exact), pi and E, +, *, integer and rational powers, exp, log, sqrt, sin, cos, sinh, cosh, gamma,
``besseli`` (the modified Bessel function I_nu, nu an exact rational expression) and Abs.

Refused, with :class:`theory.certified.balls.FloatingPointRefused`: a SymPy ``Float`` anywhere in the tree (a decimal
constant is not an exact number; ``theory/`` writes exact rationals), and a call with anything but Arb balls.
Refused with ``ValueError``: symbols that are not arguments, and functions with no rigorous Arb counterpart
(undefined functions such as ``dphi``, ``sign``, ``Piecewise``): a certificate must not silently step around
them.

Derivatives are taken by SymPy (exact) before compiling: ``arb_function(sp.diff(expr, x), (x,))``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sympy as sp
from flint import arb, fmpq

from .balls import FloatingPointRefused, require_ball

Node = Callable[[tuple], arb]


def _const(make: Callable[[], arb]) -> Node:
    # built at call time: a constant's rounding depends on the working precision of the call
    return lambda env: make()


def _rational(value: sp.Rational) -> Node:
    q = fmpq(int(value.p), int(value.q))
    return lambda env: arb(q)


class _Compiler:
    def __init__(self, args: Sequence[sp.Symbol]):
        self.index = {a: k for k, a in enumerate(args)}

    def __call__(self, e: sp.Basic) -> Node:
        if isinstance(e, sp.Float):
            raise FloatingPointRefused(f"the expression holds the floating-point constant {e} (write exact "
                                       "rationals in theory/): nothing about it is certified")
        if e in self.index:
            k = self.index[e]
            return lambda env: env[k]
        if isinstance(e, sp.Symbol):
            raise ValueError(f"free symbol {e} is not an argument of the certified function")
        if isinstance(e, sp.Rational):
            return _rational(e)
        if e is sp.pi:
            return _const(arb.pi)
        if e is sp.E:
            return _const(arb.const_e)
        if isinstance(e, sp.Add):
            parts = [self(a) for a in e.args]

            def add(env, parts=parts):
                total = parts[0](env)
                for p in parts[1:]:
                    total = total + p(env)
                return total
            return add
        if isinstance(e, sp.Mul):
            parts = [self(a) for a in e.args]

            def mul(env, parts=parts):
                total = parts[0](env)
                for p in parts[1:]:
                    total = total * p(env)
                return total
            return mul
        if isinstance(e, sp.Pow):
            return self._pow(e)
        if isinstance(e, sp.exp):
            a = self(e.args[0])
            return lambda env: a(env).exp()
        if isinstance(e, sp.log):
            a = self(e.args[0])
            return lambda env: a(env).log()
        if isinstance(e, sp.sin):
            a = self(e.args[0])
            return lambda env: a(env).sin()
        if isinstance(e, sp.cos):
            a = self(e.args[0])
            return lambda env: a(env).cos()
        if isinstance(e, (sp.sinh, sp.cosh)):  # SymPy writes half-integer Bessel functions with these
            a = self(e.args[0])
            name = type(e).__name__
            return lambda env: getattr(a(env), name)()
        if isinstance(e, sp.gamma):
            if isinstance(e.args[0], sp.Rational) and e.args[0] > 0:  # exact argument: Arb's rational gamma
                q = fmpq(int(e.args[0].p), int(e.args[0].q))
                return lambda env: arb.gamma_fmpq(q)
            a = self(e.args[0])
            return lambda env: a(env).gamma()
        if isinstance(e, sp.Abs):
            a = self(e.args[0])
            return lambda env: _abs(a(env))
        if isinstance(e, sp.besseli):
            nu, x = e.args
            order = self(nu)
            a = self(x)

            def bessel(env, key=e):
                # the costliest node: one evaluation per distinct I_nu(x) per call (a derivative repeats them)
                cache = env[-1]
                if key not in cache:
                    cache[key] = a(env).bessel_i(order(env))
                return cache[key]
            return bessel
        raise ValueError(f"no rigorous Arb evaluation for {type(e).__name__} in {sp.sstr(e)[:80]}")

    def _pow(self, e: sp.Pow) -> Node:
        base, expo = e.args
        b = self(base)
        if isinstance(expo, sp.Integer):
            n = int(expo)
            if n >= 0:
                return lambda env: b(env) ** n
            return lambda env: 1 / (b(env) ** (-n))
        if isinstance(expo, sp.Rational) and expo.q == 2:
            n = int(expo.p)  # x^(n/2) = sqrt(x)^n: the branch SymPy means for x > 0; NaN (undecided) for x < 0
            if n >= 0:
                return lambda env: b(env).sqrt() ** n
            return lambda env: 1 / (b(env).sqrt() ** (-n))
        p = self(expo)
        return lambda env: b(env) ** p(env)


def _abs(x: arb) -> arb:
    """|x| as a ball: x or -x when the sign is certain, else the ball [0, max |x|]."""
    if x >= 0:
        return x
    if x <= 0:
        return -x
    top = x.abs_upper()
    return (top / 2).union(arb(0)).union(top) if top.is_finite() else arb("nan")


@dataclass(frozen=True)
class ArbFunction:
    """A SymPy expression compiled to Arb: ``f(*balls) -> ball`` (argument order ``args``)."""

    expr: sp.Expr
    args: tuple
    _node: Node = field(repr=False, compare=False)

    def __call__(self, *values) -> arb:
        if len(values) != len(self.args):
            raise TypeError(f"expected {len(self.args)} Arb balls ({', '.join(map(str, self.args))}), "
                            f"got {len(values)}")
        # the last slot of the environment caches the Bessel values of this call
        env = tuple(require_ball(v, f"argument {a}") for a, v in zip(self.args, values)) + ({},)
        out = self._node(env)
        return out if isinstance(out, arb) else require_ball(out, "the value of " + sp.sstr(self.expr)[:40])

    def derivative(self, k: int = 1) -> ArbFunction:
        """The k-th derivative in the first argument, differentiated exactly by SymPy, then compiled."""
        return arb_function(sp.diff(self.expr, self.args[0], k), self.args)


def arb_function(expr: sp.Expr, args: Sequence[sp.Symbol]) -> ArbFunction:
    """Compile ``expr`` (SymPy) to an :class:`ArbFunction` of ``args`` (see the module doc for what is refused)."""
    expr = sp.sympify(expr)
    if expr.atoms(sp.Float):
        raise FloatingPointRefused(f"the expression holds floating-point constants {sorted(map(str, expr.atoms(sp.Float)))}"
                                   ": write exact rationals")
    args = tuple(args)
    return ArbFunction(expr, args, _Compiler(args)(expr))
