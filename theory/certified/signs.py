"""The sign of a function on a whole interval, certified by adaptive subdivision.

:func:`certify_sign_map` covers [a, b] (exact rational endpoints) by pieces of three kinds, left to right:

- **sign**: the Arb enclosure of f over the whole piece excludes 0 (or f' excludes 0 on the piece and f has the
  same certain sign at both ends: f is monotone between two values of one sign);
- **simple zero**: f changes sign across the piece and f' excludes 0 on it (:mod:`theory.certified.roots`: one zero,
  enclosed tightly by interval Newton);
- **exact zero of order k** at a rational point r: SymPy shows f(r) = f'(r) = ... = f^(k-1)(r) = 0 exactly
  (the values are algebraic numbers, and SymPy's minimal polynomial of each is x), and the Arb enclosure of
  f^(k) over the piece excludes 0; Taylor's theorem f(x) = f^(k)(xi) (x - r)^k / k! then gives the sign of f on
  both sides of r.

Where none of these decides, the piece is halved; the run is refused (:class:`CertificateRefused`) when a piece
gets narrower than ``min_width`` or the number of pieces exceeds ``max_pieces`` (a double zero at an irrational
point, a function identically zero, or too little precision). ``progress(done, total)`` is called with the
width covered so far (exact rationals) after each piece.

The result, :class:`SignMap`, is a starting sign and the list of zeros; the sign between consecutive zeros is
constant and certified, and :meth:`SignMap.runs` names the subintervals with their bounds
(e.g. ``f >= 0.0123 on [0.1, 2.5]``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import sympy as sp
from flint import fmpq

from .balls import DEFAULT_PREC, CertificateRefused, Interval, ball_text, decimal, lower, sign_of, upper, working_precision
from .expressions import ArbFunction, arb_function
from .roots import certify_root, value

Progress = Callable[[fmpq, fmpq], None]


@dataclass(frozen=True)
class Zero:
    """A zero of f: inside ``enclosure`` (a point for an exact zero), f has sign ``left`` before and ``right``
    after it. ``kind``: ``simple`` (sign change, f' != 0 on ``piece``) or ``exact order k``."""

    enclosure: Interval
    piece: Interval
    left: int
    right: int
    kind: str
    derivative: str

    def to_dict(self, digits: int = 20) -> dict:
        return {"enclosure": self.enclosure.text(digits), "width": decimal(self.enclosure.width, 3, "up"),
                "kind": self.kind, "signs": [self.left, self.right], "isolated_in": self.piece.text(12),
                "derivative_bound": self.derivative}


@dataclass(frozen=True)
class SignRun:
    """f has the certain sign ``sign`` on ``interval`` (its ends may touch a zero's enclosure), with
    |f| >= ``bound`` on the pieces that were bounded directly (``bound`` None when a piece was decided by
    monotonicity near a zero)."""

    interval: Interval
    sign: int
    bound: fmpq | None
    pieces: int

    def to_dict(self, digits: int = 12) -> dict:
        word = {1: "> 0", -1: "< 0"}[self.sign]
        bound = None if self.bound is None else decimal(self.bound, 4, "down")
        return {"interval": self.interval.text(digits), "sign": word, "min_abs_bound": bound, "pieces": self.pieces}


@dataclass(frozen=True)
class SignMap:
    """The certified sign pattern of f on ``domain``: the zeros in order and the sign runs between them."""

    domain: Interval
    zeros: tuple[Zero, ...]
    sign_runs: tuple[SignRun, ...]
    pieces: int
    label: str = ""

    def sign_between(self, lo: fmpq, hi: fmpq) -> int:
        """The certified sign of f on (lo, hi), an open segment that meets no zero enclosure of f."""
        for z in self.zeros:
            if z.enclosure.lo < hi and lo < z.enclosure.hi:
                raise ValueError(f"({decimal(lo, 12)}, {decimal(hi, 12)}) meets the zero {z.enclosure.text(12)}")
        for run in self.sign_runs:
            if run.interval.lo <= lo and hi <= run.interval.hi:
                return run.sign
        # between zeros: the sign right after the last zero before the segment (or the first run's)
        before = [z for z in self.zeros if z.enclosure.hi <= lo]
        if before:
            return before[-1].right
        return self.sign_runs[0].sign

    def to_dict(self, digits: int = 20) -> dict:
        return {"domain": self.domain.text(12), "pieces": self.pieces,
                "zeros": [z.to_dict(digits) for z in self.zeros],
                "runs": [r.to_dict() for r in self.sign_runs]}


@dataclass
class _Builder:
    f: ArbFunction
    df: ArbFunction
    domain: Interval
    min_width: fmpq
    max_pieces: int
    progress: Progress | None
    exact_denominator: int
    derivatives: dict = field(default_factory=dict)
    pieces: list = field(default_factory=list)   # (interval, sign, bound) or Zero
    orders: dict = field(default_factory=dict)   # rational -> order of its exact zero (None: not a zero)

    def derivative(self, k: int) -> ArbFunction:
        if k not in self.derivatives:
            self.derivatives[k] = self.f.derivative(k)
        return self.derivatives[k]

    def emit(self, item, covered: Interval) -> None:
        self.pieces.append(item)
        if len(self.pieces) > self.max_pieces:
            raise CertificateRefused(f"more than {self.max_pieces} pieces needed on {self.domain.text(8)} "
                                     f"(stopped at {covered.text(8)})")
        if self.progress is not None:
            self.progress(covered.hi - self.domain.lo, self.domain.width)

    def run(self) -> None:
        stack = [self.domain]
        while stack:
            X = stack.pop()
            if self.decide(X):
                continue
            if X.width < self.min_width:
                raise CertificateRefused(f"sign of {self.f.expr} not decided on {X.text(15)} (width "
                                         f"{decimal(X.width, 3)}): a multiple zero at an irrational point, or "
                                         "too little precision")
            left, right = X.split()
            stack += [right, left]  # left first

    def decide(self, X: Interval) -> bool:
        v = value(self.f, X.ball())
        s = sign_of(v)
        if s:
            self.emit((X, s, lower(v) if s > 0 else -upper(v)), X)
            return True
        if X.width > self.domain.width / 16:
            return False
        dv = value(self.df, X.ball())
        if sign_of(dv):
            sa, sb = sign_of(value(self.f, X.lo)), sign_of(value(self.f, X.hi))
            if sa and sa == sb:
                self.emit((X, sa, None), X)
                return True
            if sa and sb:
                root = certify_root(self.f, self.df, X)
                self.emit(Zero(root.enclosure, X, sa, sb, "simple", ball_text(dv)), X)
                return True
        return self.exact_zero(X)

    def exact_zero(self, X: Interval) -> bool:
        """An exact zero of finite order at the simplest rational of X (small denominators only)."""
        r = X.simplest_rational()
        if r.q > self.exact_denominator or sign_of(value(self.f, r)) != 0:
            return False
        if r not in self.orders:
            self.orders[r] = self.zero_order(r)
        k = self.orders[r]
        if k is None:
            return False
        dk = value(self.derivative(k), X.ball())
        s = sign_of(dk)
        if not s:
            return False
        right = s
        left = s if k % 2 == 0 else -s
        self.emit(Zero(Interval(r, r), X, left, right, f"exact zero of order {k} at {r}", ball_text(dk)), X)
        return True

    def zero_order(self, r: fmpq) -> int | None:
        """k >= 1 with f(r) = ... = f^(k-1)(r) = 0 and f^(k)(r) != 0 exactly (SymPy), else None (k <= 4)."""
        point = sp.Rational(int(r.p), int(r.q))
        x = self.f.args[0]
        expr = self.f.expr
        for k in range(0, 5):
            if k:
                expr = sp.diff(expr, x)
            if not exactly_zero(expr.subs(x, point)):
                return k or None
        return None

    def result(self, label: str) -> SignMap:
        zeros, runs = [], []
        current: list = []

        def close():
            if current:
                bounds = [b for _, _, b in current]
                bound = None if any(b is None for b in bounds) else min(bounds)
                runs.append(SignRun(Interval(current[0][0].lo, current[-1][0].hi), current[0][1], bound,
                                    len(current)))
                current.clear()

        for item in self.pieces:
            if isinstance(item, Zero):
                close()
                if zeros and zeros[-1].enclosure == item.enclosure and item.enclosure.width == 0:
                    # an exact zero at a split point is found from both sides: one zero, both pieces
                    prev = zeros.pop()
                    item = Zero(item.enclosure, Interval(prev.piece.lo, item.piece.hi), prev.left, item.right,
                                item.kind, item.derivative)
                zeros.append(item)
                continue
            if current and current[-1][1] != item[1]:
                close()
            current.append(item)
        close()
        self.check_consistency(zeros, runs)
        return SignMap(self.domain, tuple(zeros), tuple(runs), len(self.pieces), label)

    def check_consistency(self, zeros, runs) -> None:
        """Adjacent pieces must agree: a sign run next to a zero has that zero's sign on its side."""
        events = sorted([("z", z.piece.lo, z) for z in zeros] + [("r", r.interval.lo, r) for r in runs],
                        key=lambda e: e[1])
        last_sign = None
        for kind, _, item in events:
            if kind == "z":
                if last_sign is not None and item.left != last_sign:
                    raise CertificateRefused(f"inconsistent signs at the zero {item.enclosure.text(12)}")
                last_sign = item.right
            else:
                if last_sign is not None and item.sign != last_sign:
                    raise CertificateRefused(f"sign changes at {decimal(item.interval.lo, 12)} without a zero")
                last_sign = item.sign


def exactly_zero(value_expr: sp.Expr) -> bool:
    """True only when SymPy shows exactly that the constant ``value_expr`` is 0: it evaluates to 0, or it is an
    algebraic number whose minimal polynomial is x (exact algebra, no numerical evaluation)."""
    v = sp.expand(value_expr)
    if v == 0:
        return True
    if v.free_symbols or v.has(sp.exp, sp.log, sp.besseli, sp.gamma):
        return False
    try:
        x = sp.Dummy("x")
        return sp.minimal_polynomial(v, x) == x
    except (NotImplementedError, ValueError):
        return False


def certify_sign_map(expr, variable: sp.Symbol, domain: Interval, *, progress: Progress | None = None,
                     min_width: fmpq | None = None, max_pieces: int = 20000, exact_denominator: int = 64,
                     label: str = "", prec: int = DEFAULT_PREC) -> SignMap:
    """The certified sign pattern of the SymPy expression ``expr`` in ``variable`` on ``domain`` (module doc).

    ``expr`` may also be an :class:`ArbFunction` of one argument.
    """
    f = expr if isinstance(expr, ArbFunction) else arb_function(expr, (variable,))
    if min_width is None:
        min_width = domain.width / fmpq(2) ** 60
    builder = _Builder(f, f.derivative(1), domain, min_width, max_pieces, progress, exact_denominator)
    with working_precision(prec):
        builder.run()
        return builder.result(label)


__all__ = ["SignMap", "SignRun", "Zero", "certify_sign_map", "exactly_zero"]
