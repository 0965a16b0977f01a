r"""The one symbol vocabulary of attnflow.

Every derivation builds its expressions from the symbols defined here, so that two derivations of the same
quantity can be compared term by term and stray symbols are caught (:func:`check_symbols`).

Conventions (docs/conventions.md): ``s`` is an inner product :math:`\langle x, y\rangle` of two unit vectors,
``beta`` the inverse temperature :math:`\beta` (real, any sign), ``t`` time (depth), ``n`` the number of
particles, ``theta`` an angle :math:`\theta` on :math:`\mathbb{S}^1`.
"""
from __future__ import annotations

from collections.abc import Iterable

import sympy as sp

#: inner product :math:`\langle x, y\rangle` of two points of the sphere (the argument of the pair kernel)
s = sp.Symbol("s", real=True)
#: inverse temperature; real, of any sign (:math:`\beta = 0` is taken as a limit)
beta = sp.Symbol("beta", real=True)
#: time (the depth of the transformer in the continuum limit)
t = sp.Symbol("t", real=True)
#: number of particles (tokens)
n = sp.Symbol("n", integer=True, positive=True)
#: an angle on the circle, and the difference of two angles
theta = sp.Symbol("theta", real=True)
u = sp.Symbol("u", real=True)
#: harmonic / spherical-harmonic degree
k = sp.Symbol("k", integer=True, nonnegative=True)
l = sp.Symbol("l", integer=True, nonnegative=True)  # noqa: E741 - the standard name of a degree
#: ambient dimension (the sphere is :math:`\mathbb{S}^{d-1}` in :math:`\mathbb{R}^d`)
d = sp.Symbol("d", integer=True, positive=True)


def coordinates(name: str, dim: int) -> tuple[sp.Symbol, ...]:
    r"""Real coordinate symbols ``name_1 .. name_dim`` of one point of :math:`\mathbb{R}^{\mathrm{dim}}` (e.g.
    ``x_1, x_2, x_3``).
    """
    if dim < 1:
        raise ValueError(f"dimension must be >= 1, got {dim}")
    return tuple(sp.Symbol(f"{name}_{i + 1}", real=True) for i in range(dim))


def vector(name: str, dim: int) -> sp.Matrix:
    """A column vector of fresh real coordinate symbols (see :func:`coordinates`)."""
    return sp.Matrix(coordinates(name, dim))


def particle(i: int, dim: int) -> sp.Matrix:
    r"""Coordinates of particle ``i`` (1-based) in :math:`\mathbb{R}^{\mathrm{dim}}` as a column vector
    ``x_{i,1} .. x_{i,dim}``.
    """
    return sp.Matrix([sp.Symbol(f"x_{i},{c + 1}", real=True) for c in range(dim)])


def check_symbols(expr: sp.Basic, allowed: Iterable[sp.Symbol]) -> None:
    """Raise ``ValueError`` naming any free symbol of ``expr`` outside ``allowed``.

    Derivations call this on their inputs so that a user kernel written with an undeclared parameter fails
    loudly instead of producing a silently different formula.
    """
    stray = set(getattr(expr, "free_symbols", set())) - set(allowed)
    if stray:
        names = ", ".join(sorted(str(x) for x in stray))
        raise ValueError(f"expression {expr} has undeclared symbols: {names}")


# -- normalisation schemes (theory.normalization): a token x = r theta, the attention output A(theta) ----------
#: radius :math:`r = |x|` of a token and its initial value
radius = sp.Symbol("r", positive=True)
radius0 = sp.Symbol("r_0", positive=True)
#: :math:`a = \langle \theta, A\rangle`: the radial component of the attention output
radial = sp.Symbol("a", real=True)
#: :math:`w = |P_\theta A| \ge 0`: its tangential magnitude, and :math:`m = |A|` its norm
tangential = sp.Symbol("w", positive=True)
attention_norm = sp.Symbol("m", positive=True)
#: :math:`c`: the factor of the residual branch (1, or :math:`(1 + t/\tau)^{-1/2}` for the sqrt-scaled scheme);
#: :math:`\tau` its scale
branch_scale = sp.Symbol("c", positive=True)
tau = sp.Symbol("tau", positive=True)
#: nGPT's step size :math:`\alpha` and the Mix-LN switch time :math:`T`
alpha = sp.Symbol("alpha", positive=True)
switch_time = sp.Symbol("T", nonnegative=True)
#: :math:`\epsilon_0 = 1 - \rho(0)` of an equiangular start
epsilon0 = sp.Symbol("epsilon_0", positive=True)
