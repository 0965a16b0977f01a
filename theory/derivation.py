"""Derivation objects: a chain of symbolic steps ending in an identity that can verify itself.

A :class:`Derivation` states an identity ``lhs == rhs`` (or ``lhs >= 0`` written as a sum of squares) together
with the steps that produced it. ``verify()`` first tries symbolic simplification of ``lhs - rhs`` to zero; if
that is inconclusive it evaluates the residual *exactly* (rational arithmetic) at random admissible points
produced by the derivation's ``sampler``, and says so in the result: evidence at points is not a proof.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

Sampler = Callable[[random.Random], Mapping[sp.Symbol, sp.Expr]]


@dataclass(frozen=True)
class Step:
    """One step of a derivation: a sentence and the expression it produces."""

    text: str
    expr: sp.Basic


@dataclass(frozen=True)
class Verification:
    """Outcome of :meth:`Derivation.verify`.

    ``status`` is ``"proved"`` (simplified to zero), ``"checked-at-points"`` (simplification inconclusive, the
    residual was exactly zero at ``points`` random admissible points), ``"failed"`` (a nonzero residual was
    found, shown in ``detail``) or ``"inconclusive"`` (every drawn point was a singularity of the expressions,
    e.g. a kernel's pole: nothing was shown either way).
    """

    status: str
    method: str
    points: int
    detail: str

    @property
    def ok(self) -> bool:
        return self.status in ("proved", "checked-at-points")


@dataclass(frozen=True)
class Derivation:
    r"""A symbolic derivation ending in the identity ``lhs == rhs``.

    Parameters
    ----------
    title : str
        What is derived, in one line.
    source : str
        Where the statement comes from (paper id and topic).
    lhs, rhs : sympy expressions (scalars or matrices of equal shape)
        The two sides of the identity.
    steps : sequence of Step
        The chain of intermediate results, for display.
    sampler : callable, optional
        ``sampler(rng)`` returns a substitution dict of exact values at which the identity must hold (for
        instance rational points on the sphere). Needed when simplification is inconclusive.
    notes : str
        Conventions and remarks (normalisations, time units).
    structured : sequence of (label, text, latex)
        The result in structured form, for a reader: formulas in terms of the pair kernel :math:`\phi` and its
        derivatives, valid for every :math:`n` (and :math:`d`); shown by ``attnflow derive`` by default, the
        expanded coordinates of the identity on request. Empty when the derivation has no separate structured form.
    """

    title: str
    source: str
    lhs: sp.Basic
    rhs: sp.Basic
    steps: Sequence[Step] = field(default_factory=tuple)
    sampler: Sampler | None = None
    notes: str = ""
    structured: Sequence[tuple[str, str, str]] = field(default_factory=tuple)

    # -- display ---------------------------------------------------------------------------------------------
    def to_text(self) -> str:
        lines = [self.title, f"  source: {self.source}"]
        if self.notes:
            lines.append(f"  notes: {self.notes}")
        for i, step in enumerate(self.steps, 1):
            lines.append(f"  ({i}) {step.text}")
            lines.append("      " + sp.sstr(step.expr).replace("\n", "\n      "))
        lines.append("  identity:")
        lines.append(f"      {sp.sstr(self.lhs)}")
        lines.append(f"    = {sp.sstr(self.rhs)}")
        return "\n".join(lines)

    def to_structured_text(self) -> str:
        """Title, source, notes and the structured form (no expanded coordinates)."""
        lines = [self.title, f"  source: {self.source}"]
        if self.notes:
            lines.append(f"  notes: {self.notes}")
        width = max((len(label) for label, _, _ in self.structured), default=0)
        lines += [f"  {label.ljust(width)}  {text}" for label, text, _ in self.structured]
        return "\n".join(lines)

    def to_structured_latex(self) -> str:
        body = [f"% {self.title} ({self.source})", r"\begin{align*}"]
        body += [rf"&\text{{{label}}} && {tex} \\" for label, _, tex in self.structured]
        body[-1] = body[-1].rstrip(" \\")
        body.append(r"\end{align*}")
        return "\n".join(body)

    def to_latex(self) -> str:
        body = [f"% {self.title} ({self.source})", r"\begin{align*}"]
        for step in self.steps:
            body.append(rf"&\text{{{step.text}}}\\ &\quad {sp.latex(step.expr)} \\")
        body.append(rf"&{sp.latex(self.lhs)} = {sp.latex(self.rhs)}")
        body.append(r"\end{align*}")
        return "\n".join(body)

    def to_dict(self) -> dict:
        return {
            "title": self.title,
            "source": self.source,
            "notes": self.notes,
            "steps": [{"text": st.text, "expr": sp.sstr(st.expr), "latex": sp.latex(st.expr)} for st in self.steps],
            "lhs": sp.sstr(self.lhs),
            "rhs": sp.sstr(self.rhs),
            "latex": self.to_latex(),
            "structured": [{"label": label, "text": text, "latex": tex} for label, text, tex in self.structured],
        }

    # -- verification ----------------------------------------------------------------------------------------
    def residual(self) -> sp.Basic:
        return self.lhs - self.rhs

    def verify(self, points: int = 5, seed: int = 0, simplify: bool = True) -> Verification:
        """Check the identity: symbolic simplification first, exact evaluation at random points second."""
        res = self.residual()
        if simplify:
            simplified = _simplify_to_zero(res)
            if simplified is True:
                return Verification("proved", "symbolic simplification to zero", 0, "")
        if self.sampler is None:
            return Verification("failed", "symbolic simplification", 0,
                                "simplification inconclusive and no sampler to evaluate at points")
        rng = random.Random(seed)
        checked = singular = 0
        # a point at a singularity (a kernel's pole) says nothing about the identity: draw another, up to 3x
        while checked < points and checked + singular < 3 * points:
            subs = self.sampler(rng)
            value = _exact_value(res, subs)
            if value is _SINGULAR:
                singular += 1
                continue
            checked += 1
            if value is not True:
                return Verification("failed", "exact evaluation at random points", checked,
                                    f"nonzero residual {value} at {dict(subs)}")
        why = "simplification inconclusive" if simplify else "simplification not attempted"
        skipped = f"{singular} drawn points at singularities skipped" if singular else ""
        if checked < points:
            return Verification("inconclusive", f"exact evaluation at random points ({why})", checked,
                                f"only {checked} of {points} points were regular; {skipped}")
        return Verification("checked-at-points", f"exact evaluation at random points ({why})", points, skipped)


def _simplify_to_zero(expr: sp.Basic) -> bool:
    entries = list(expr) if isinstance(expr, sp.MatrixBase) else [expr]
    for e in entries:
        if e == 0:
            continue
        # cancel(together(.)) decides rational identities (most of ours) far faster than simplify, which
        # can take minutes on them; simplify remains the fallback for transcendental cancellations.
        if sp.cancel(sp.together(e)) == 0:
            continue
        if sp.simplify(sp.expand(e)) != 0:
            return False
    return True


#: returned by :func:`_exact_value` when the point is a singularity of the expression (zoo, nan, oo)
_SINGULAR = object()


def _exact_value(expr: sp.Basic, subs: Mapping[sp.Symbol, sp.Expr]):
    """True if ``expr`` is exactly zero at ``subs``; :data:`_SINGULAR` at a singularity; otherwise the
    offending (numerical) value."""
    entries = list(expr) if isinstance(expr, sp.MatrixBase) else [expr]
    for e in entries:
        v = e.xreplace(dict(subs))
        if v.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            return _SINGULAR
        zero = _is_exactly_zero_exp_rational(v)
        if zero is None:  # not a rational function of exponentials of rationals: fall back to simplify
            v = sp.simplify(v)
            zero = v == 0
        if not zero:
            return sp.N(v, 20)
    return True


def _is_exactly_zero_exp_rational(value: sp.Basic):
    """Decide exactly whether a rational function of rationals and e^{q} (q rational) is zero; None if not of
    that form.

    With L the common denominator of the exponents, every e^{q} is z^{qL} for z = e^{1/L}, which is
    transcendental (Lindemann), so the value is zero iff the rational function of z vanishes identically: a
    polynomial identity, decided by expanding the numerator. Fast and exact (no floating point).
    """
    value = sp.sympify(value)
    if value.is_Rational:
        return value == 0
    exps = value.atoms(sp.exp)
    if any(not a.args[0].is_Rational for a in exps):
        return None
    z = sp.Dummy("z")
    L = 1
    for a in exps:
        L = sp.ilcm(L, a.args[0].q)
    replace = {a: z ** int(a.args[0] * L) for a in exps}
    replace[sp.E] = z ** int(L)  # exp(1) evaluates to the number symbol E
    w = value.xreplace(replace)
    if any(not (atom.is_Rational or atom == z) for atom in w.atoms()) or w.atoms(sp.Function):
        return None
    if any(not p.exp.is_Integer for p in w.atoms(sp.Pow)):  # radicals: not a rational function of z
        return None
    numerator = sp.numer(sp.together(w))
    return sp.expand(numerator) == 0


def rational_sphere_point(rng: random.Random, dim: int, denominator: int = 97) -> list[sp.Rational]:
    r"""An exact rational point of :math:`\mathbb{S}^{\mathrm{dim}-1}`, by inverse stereographic projection of a random
    rational point.

    :math:`y \in \mathbb{Q}^{\mathrm{dim}-1}` maps to :math:`(2y, \lvert y\rvert^2 - 1) / (\lvert y\rvert^2 + 1)`,
    which has unit norm exactly.
    """
    y = [sp.Rational(Fraction(rng.randint(-3 * denominator, 3 * denominator), denominator)) for _ in range(dim - 1)]
    r2 = sum(c * c for c in y)
    return [2 * c / (r2 + 1) for c in y] + [(r2 - 1) / (r2 + 1)]


def random_rational(rng: random.Random, low: int = -3, high: int = 3, denominator: int = 7) -> sp.Rational:
    r"""A random rational in :math:`[\mathrm{low}, \mathrm{high}]` with the given denominator."""
    return sp.Rational(rng.randint(low * denominator, high * denominator), denominator)


def sphere_point_sampler(names_of_points, dim: int, beta_symbol: sp.Symbol | None = None, extra=()) -> Sampler:
    r"""A sampler placing each list of coordinate symbols at an exact rational point of
    :math:`\mathbb{S}^{\mathrm{dim}-1}`.

    ``beta_symbol`` (if given) gets a random nonzero rational in :math:`[-2, 3]` (denominator 5); symbols in
    ``extra`` get random rationals in :math:`[1, 3]`. Used by derivations that hold on the sphere only.
    """

    def sample(rng: random.Random):
        subs = {}
        for names in names_of_points:
            for c, value in zip(names, rational_sphere_point(rng, dim)):
                subs[c] = value
        if beta_symbol is not None:
            value = random_rational(rng, -2, 3, 5)
            subs[beta_symbol] = value if value != 0 else sp.Rational(1, 5)
        for symbol in extra:
            subs[symbol] = random_rational(rng, 1, 3, 5)
        return subs

    return sample
