"""Exact inputs, Arb balls and rational intervals: the only number types a certificate accepts.

A certificate is a chain of steps whose every number is either an exact rational (``flint.fmpq``) or an Arb
ball (``flint.arb``: a midpoint and a radius with the guarantee that the true value lies inside, every
operation rounded outward). A floating-point number has no such guarantee, so it is refused at the door:
:func:`exact` and :func:`ball` raise :class:`FloatingPointRefused` for a Python ``float``, a NumPy floating
scalar, a SymPy ``Float`` or a string that does not spell an exact rational. Nothing in this package calls
``float()`` or holds a float literal (``tests/certified/test_no_floats.py`` reads the source to make sure).

Working precision is the Arb context's (``flint.ctx.prec``, bits); :func:`working_precision` sets it for a
block and restores it. The default, :data:`DEFAULT_PREC` = 128 bits, gives enclosures about 1e-30 wide.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp
from flint import arb, ctx, fmpq, fmpz

#: working precision of the certificates, in bits (about 38 decimal digits)
DEFAULT_PREC = 128


class FloatingPointRefused(TypeError):
    """A floating-point number was offered where a certificate needs an exact rational or an Arb ball."""


class CertificateRefused(ArithmeticError):
    """A certificate could not be issued: a step did not prove what it had to (the reason says which)."""


_DECIMAL = re.compile(r"^\s*([+-]?)(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$")
_FRACTION = re.compile(r"^\s*([+-]?\d+)\s*/\s*(\d+)\s*$")


def _is_floating(value) -> bool:
    """Python floats, SymPy Floats and NumPy floating scalars/arrays (without importing NumPy)."""
    if isinstance(value, (float, complex, sp.Float)):
        return True
    kind = type(value)
    return kind.__module__.startswith("numpy") and ("float" in kind.__name__ or kind.__name__ == "ndarray")


#: the largest dimension d and harmonic degree l a certificate takes. Beyond them the closed forms of ``theory/``
#: leave SymPy's and Python's working range: d = 10**400 ends in a RecursionError inside SymPy, d = 10**4 in
#: Python's "Exceeds the limit (4300 digits) for integer string conversion" (kappa_d), d = 10**6 runs for minutes;
#: the claims use d <= 64
MAX_DIMENSION = 1000
MAX_DEGREE = 1000


def require_integer(name: str, value, low: int, high: int) -> int:
    """``value`` if it is an ``int`` (not a bool) in [low, high]; else ``ValueError`` naming ``name`` (checked
    before any SymPy expression is built from it: a string such as ``"3/0"`` would otherwise fail inside an
    arithmetic operation with a ``TypeError``)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return value


def exact(value) -> fmpq:
    """The exact rational ``value``: int, fmpz, fmpq, Fraction, SymPy Integer/Rational, or a string such as
    ``"2/3"``, ``"-0.125"`` or ``"1e-3"`` (read as the decimal it spells, exactly).

    Raises :class:`FloatingPointRefused` for floats (a binary float is not the decimal a user typed, and
    nothing about it is certified) and ``ValueError`` for anything else that is not an exact rational.
    """
    if _is_floating(value):
        raise FloatingPointRefused(f"a certificate takes exact rationals or Arb balls, not the float {value!r}; "
                                   "write it as a string ('0.1') or a fraction ('1/10')")
    if isinstance(value, bool):
        raise ValueError(f"expected a rational number, got the boolean {value!r}")
    if isinstance(value, fmpq):
        return value
    if isinstance(value, (int, fmpz)):
        return fmpq(value)
    if isinstance(value, Fraction):
        return fmpq(value.numerator, value.denominator)
    if isinstance(value, sp.Rational):  # Integer is a Rational
        return fmpq(int(value.p), int(value.q))
    if isinstance(value, str):
        m = _FRACTION.match(value)
        if m:
            num, den = int(m.group(1)), int(m.group(2))
            if den == 0:
                raise ValueError(f"zero denominator in {value!r}")
            return fmpq(num, den)
        m = _DECIMAL.match(value)
        if m:
            sign, whole, frac, expo = m.group(1), m.group(2), m.group(3) or "", int(m.group(4) or 0)
            q = fmpq(int(whole + frac)) * _pow10(expo - len(frac))
            return -q if sign == "-" else q
        raise ValueError(f"not an exact rational: {value!r} (write e.g. '2/3' or '0.125')")
    if isinstance(value, arb):
        raise ValueError(f"an Arb ball is not an exact rational: {value!r}")
    raise ValueError(f"expected an exact rational, got {type(value).__name__} {value!r}")


def _pow10(e: int) -> fmpq:
    return fmpq(10 ** e) if e >= 0 else fmpq(1, 10 ** (-e))


def ball(value) -> arb:
    """An Arb ball: an ``arb`` unchanged, or the ball of the exact rational :func:`exact` reads (at the current
    precision). Floats are refused (:class:`FloatingPointRefused`)."""
    if isinstance(value, arb):
        return value
    return arb(exact(value))


def require_ball(value, what: str = "value") -> arb:
    """``value`` if it is an Arb ball, else :class:`FloatingPointRefused` (a float or a float64 bound) or
    ``TypeError``: used where only a rigorously computed enclosure may enter a certificate."""
    if isinstance(value, arb):
        return value
    if _is_floating(value):
        raise FloatingPointRefused(f"{what} is the floating-point number {value!r}: a certificate takes only "
                                   "Arb balls computed with rigorous error bounds")
    raise TypeError(f"{what} must be an Arb ball, got {type(value).__name__} {value!r}")


def rational_of(x: arb) -> fmpq:
    """The exact rational value of an exact ball (a midpoint or an endpoint: dyadic)."""
    if not x.is_exact():
        raise ValueError(f"not an exact ball: {x}")
    mantissa, exponent = x.man_exp()
    return fmpq(mantissa) * (fmpq(2) ** int(exponent) if exponent >= 0 else fmpq(1, 2 ** int(-exponent)))


def lower(x: arb) -> fmpq:
    """A rational lower bound of every point of ``x`` (exact)."""
    return rational_of(x.lower())


def upper(x: arb) -> fmpq:
    """A rational upper bound of every point of ``x`` (exact)."""
    return rational_of(x.upper())


def sign_of(x: arb) -> int:
    """+1 or -1 when the ball lies strictly on one side of 0, 0 when it does not decide (contains 0 or is NaN)."""
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0


@contextmanager
def working_precision(bits: int = DEFAULT_PREC) -> Iterator[int]:
    """Run a block at ``bits`` bits of Arb precision (restored afterwards)."""
    if isinstance(bits, bool) or not isinstance(bits, int) or not 32 <= bits <= 4096:
        raise ValueError(f"precision must be an integer number of bits in [32, 4096], got {bits!r}")
    saved = ctx.prec
    ctx.prec = bits
    try:
        yield bits
    finally:
        ctx.prec = saved


# -- decimal text, rounded outward ----------------------------------------------------------------------------
def decimal(q: fmpq, digits: int = 20, direction: str = "nearest") -> str:
    """``q`` in scientific decimal with ``digits`` significant digits, rounded down, up or to nearest (exact
    integer arithmetic: the ``down``/``up`` strings are true lower/upper bounds of ``q``)."""
    if q == 0:
        return "0"
    num, den = int(q.p), int(q.q)
    neg = num < 0
    num = abs(num)
    # exponent e with 10^e <= |q| < 10^(e+1)
    e = len(str(num)) - len(str(den))
    if num * 10 ** max(0, -e) < den * 10 ** max(0, e):
        e -= 1
    shift = digits - 1 - e
    scaled_num = num * 10 ** max(0, shift)
    scaled_den = den * 10 ** max(0, -shift)
    whole, rest = divmod(scaled_num, scaled_den)
    mode = direction
    if neg and direction in ("down", "up"):
        mode = "up" if direction == "down" else "down"  # rounding |q| the other way
    if rest and (mode == "up" or (mode == "nearest" and 2 * rest >= scaled_den)):
        whole += 1
    if whole >= 10 ** digits:  # 9.99 rounded up to 10.0
        whole //= 10
        e += 1
    text = str(whole)
    mantissa = text[0] + ("." + text[1:].rstrip("0") if text[1:].rstrip("0") else "")
    return f"{'-' if neg else ''}{mantissa}e{e:+d}" if e not in range(-4, 6) else \
        f"{'-' if neg else ''}{_plain(text, e)}"


def _plain(digits_text: str, e: int) -> str:
    """Positional notation for 10^-4 <= |q| < 10^6 (digits_text: the significant digits, first at 10^e)."""
    if e >= 0:
        head, tail = digits_text[: e + 1].ljust(e + 1, "0"), digits_text[e + 1:]
    else:
        head, tail = "0", "0" * (-e - 1) + digits_text
    tail = tail.rstrip("0")
    return head + ("." + tail if tail else "")


@dataclass(frozen=True)
class Interval:
    """A closed interval [lo, hi] with exact rational endpoints (lo <= hi), the unit of subdivision."""

    lo: fmpq
    hi: fmpq

    def __post_init__(self):
        if not isinstance(self.lo, fmpq) or not isinstance(self.hi, fmpq):
            raise FloatingPointRefused(f"interval endpoints must be exact rationals (fmpq), got "
                                       f"{self.lo!r}, {self.hi!r}")
        if self.lo > self.hi:
            raise ValueError(f"empty interval [{self.lo}, {self.hi}]")

    @classmethod
    def of(cls, lo, hi) -> Interval:
        """[lo, hi] from anything :func:`exact` reads (floats refused)."""
        return cls(exact(lo), exact(hi))

    @property
    def width(self) -> fmpq:
        return self.hi - self.lo

    @property
    def mid(self) -> fmpq:
        return (self.lo + self.hi) / 2

    def ball(self) -> arb:
        """An Arb ball containing every point of [lo, hi] (the union of the endpoint balls)."""
        return arb(self.lo).union(arb(self.hi))

    def split(self, at: fmpq | None = None) -> tuple[Interval, Interval]:
        at = self.mid if at is None else at
        return Interval(self.lo, at), Interval(at, self.hi)

    def contains(self, q: fmpq) -> bool:
        return self.lo <= q <= self.hi

    def simplest_rational(self) -> fmpq:
        """The rational with the smallest denominator in [lo, hi] (Stern-Brocot descent; 0 if 0 is inside)."""
        lo, hi = self.lo, self.hi
        if lo <= 0 <= hi:
            return fmpq(0)
        if hi < 0:
            return -Interval(-hi, -lo).simplest_rational()
        return _simplest(Fraction(int(lo.p), int(lo.q)), Fraction(int(hi.p), int(hi.q)))

    def text(self, digits: int = 20) -> str:
        """[lo, hi] in decimal, rounded outward."""
        return f"[{decimal(self.lo, digits, 'down')}, {decimal(self.hi, digits, 'up')}]"


def _simplest(a: Fraction, b: Fraction) -> fmpq:
    """Simplest rational in [a, b], 0 < a <= b: an integer if one is inside, else n + 1/(simplest of the
    reciprocal interval) with n = floor(a) (the continued-fraction descent; depth ~ log of the denominators)."""
    n = a.numerator // a.denominator
    if n == a:
        return fmpq(n)
    if n + 1 <= b:
        return fmpq(n + 1)
    inner = _simplest(1 / (b - n), 1 / (a - n))
    return fmpq(n) + 1 / inner


def enclosure_of(x: arb) -> Interval:
    """The rational interval [lower(x), upper(x)] of a finite ball (raises on NaN or infinity; a float, e.g. a
    value computed in float64 on the way, is refused with :class:`FloatingPointRefused`)."""
    x = require_ball(x, "an enclosure")
    if not x.is_finite():
        raise CertificateRefused(f"the enclosure {x} is not finite")
    return Interval(lower(x), upper(x))


def ball_text(x: arb, digits: int = 6) -> str:
    """A ball as [lo, hi] in decimal, rounded outward (Arb's own printing may widen a ball to [+/- r])."""
    if not x.is_finite():
        return "[not finite]"
    return enclosure_of(x).text(digits)
