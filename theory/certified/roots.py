"""Certified roots of real functions of one variable: existence, uniqueness and a tight enclosure.

A root of f in X = [a, b] (exact rational endpoints) is certified by

1. **existence**: f(a) and f(b) evaluated in ball arithmetic have opposite certain signs (intermediate value
   theorem; f is continuous on X because its derivative has a finite enclosure there);
2. **uniqueness**: the enclosure of f' over the whole of X excludes 0, so f is strictly monotone on X and has
   at most one zero there;
3. **tightening** by the interval Newton operator N(X) = m - f(m)/f'(X) (m the exact midpoint): every zero of f
   in X lies in N(X), so X is replaced by X intersected with N(X), which converges quadratically.

Bisection at exact dyadic points shrinks X until step 2 succeeds. Every number here is an exact rational or an
Arb ball (:mod:`theory.certified.balls`); nothing is estimated in floating point.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flint import arb, fmpq

from .balls import (DEFAULT_PREC, CertificateRefused, Interval, ball_text, decimal, lower, require_ball, sign_of,
                    upper, working_precision)

RealFunction = Callable[[arb], arb]


def value(f: RealFunction, x) -> arb:
    """f at an exact rational or on a ball, checked to be a ball (a float result is refused)."""
    return require_ball(f(x if isinstance(x, arb) else arb(x)), "a function value")


def dyadic_between(lo: fmpq, hi: fmpq) -> fmpq:
    """A dyadic rational near the midpoint of (lo, hi), strictly inside (short numbers keep Arb exact)."""
    mid = (lo + hi) / 2
    width = hi - lo
    k = 0
    while fmpq(1, 2 ** k) > width / 8:
        k += 1
    scale = 2 ** (k + 2)
    q = fmpq((mid * scale).floor(), scale)
    return q if lo < q < hi else mid


@dataclass(frozen=True)
class RootCertificate:
    """A zero of f in ``enclosure`` (exact rational endpoints), unique in ``bracket`` (f strictly monotone there).

    ``left_sign``/``right_sign`` are the certified signs of f at the bracket's ends; ``derivative`` the Arb
    enclosure of f' over the bracket (excluding 0); ``newton_steps`` the interval Newton contractions.
    """

    enclosure: Interval
    bracket: Interval
    left_sign: int
    right_sign: int
    derivative: arb
    bisections: int
    newton_steps: int

    @property
    def method(self) -> str:
        return ("sign change at the exact endpoints of the bracket (f(a) f(b) < 0) and f' bounded away from 0 on "
                "the whole bracket (unique zero); interval Newton X <- X n (m - f(m)/f'(X)) to tighten")

    def to_dict(self, digits: int = 25) -> dict:
        return {"lo": decimal(self.enclosure.lo, digits, "down"), "hi": decimal(self.enclosure.hi, digits, "up"),
                "width": decimal(self.enclosure.width, 3, "up"),
                "unique_in": self.bracket.text(12),
                "signs": [self.left_sign, self.right_sign],
                "derivative_on_bracket": ball_text(self.derivative),
                "bisections": self.bisections, "newton_steps": self.newton_steps}


def certify_root(f: RealFunction, fprime: RealFunction, bracket: Interval, *, tolerance: fmpq | None = None,
                 max_bisections: int = 400, prec: int = DEFAULT_PREC) -> RootCertificate:
    """Certify the unique zero of f in ``bracket`` (raises :class:`CertificateRefused` if any step fails).

    ``tolerance``: the target width of the enclosure (default: 2^-100 times max(1, |root|), reached by the
    Newton steps at ``prec`` = 128 bits, the Arb working precision of the whole run).
    """
    with working_precision(prec):
        return _certify_root(f, fprime, bracket, tolerance, max_bisections)


def _certify_root(f, fprime, bracket, tolerance, max_bisections) -> RootCertificate:
    if not isinstance(bracket, Interval):
        raise TypeError(f"bracket must be a theory.certified.balls.Interval, got {bracket!r}")
    a, b = bracket.lo, bracket.hi
    sa, sb = sign_of(value(f, a)), sign_of(value(f, b))
    if sa == 0 or sb == 0 or sa == sb:
        raise CertificateRefused(f"no certified sign change of f on {bracket.text(12)}: signs {sa}, {sb}")
    X, bisections = bracket, 0
    while True:
        dX = value(fprime, X.ball())
        if sign_of(dX) != 0:
            break
        if bisections >= max_bisections:
            raise CertificateRefused(f"f' not bounded away from 0 near {X.text(12)} after {bisections} bisections "
                                     "(a multiple root, or too little precision)")
        m = dyadic_between(X.lo, X.hi)
        sm = sign_of(value(f, m))
        if sm == 0:  # f(m) undecided: m is within the ball's radius of the root; try a nearby point
            m = dyadic_between(X.lo, m) if bisections % 2 else dyadic_between(m, X.hi)
            sm = sign_of(value(f, m))
            if sm == 0:
                raise CertificateRefused(f"sign of f undecided near {decimal(m, 15)}: increase the precision")
        X = Interval(X.lo, m) if sm == sb else Interval(m, X.hi)
        bisections += 1
    bracket_unique, derivative = X, dX
    # interval Newton: the zero stays in X n N(X); stop when the width no longer halves
    if tolerance is None:
        scale = max(fmpq(1), abs(X.lo), abs(X.hi))
        tolerance = scale / fmpq(2) ** 100
    steps = 0
    while X.width > tolerance and steps < 60:
        m = X.mid
        N = arb(m) - value(f, m) / value(fprime, X.ball())
        if not N.is_finite():
            break
        lo, hi = max(X.lo, lower(N)), min(X.hi, upper(N))
        if lo > hi:
            raise CertificateRefused(f"interval Newton found no zero in {X.text(12)} (inconsistent evaluation)")
        new = Interval(lo, hi)
        steps += 1
        if new.width * 2 > X.width:
            X = new
            break
        X = new
    # the enclosure's endpoints still bracket the zero: f is monotone on the unique bracket, and every zero
    # in the bracket lies in X by the Newton theorem
    return RootCertificate(X, bracket_unique, sa, sb, derivative, bisections, steps)


def bracket_by_doubling(f: RealFunction, start: fmpq, direction: int = 1, limit: int = 60) -> Interval:
    """[x, 2x] (or [x/2, x] going down, ``direction = -1``) around a sign change of f, from ``start > 0``:
    exact rational points, certified signs. Raises if none is found within ``limit`` doublings."""
    x = start
    s0 = sign_of(value(f, x))
    if s0 == 0:
        raise CertificateRefused(f"sign of f undecided at the start {decimal(x, 12)}")
    for _ in range(limit):
        y = x * 2 if direction > 0 else x / 2
        sy = sign_of(value(f, y))
        if sy == 0:
            raise CertificateRefused(f"sign of f undecided at {decimal(y, 12)}")
        if sy != s0:
            return Interval(x, y) if direction > 0 else Interval(y, x)
        x = y
    raise CertificateRefused(f"no sign change of f found from {decimal(start, 12)} in {limit} doublings")
