"""The certified layer's number types, roots and sign maps (theory/certified): floats are refused at the door,
root and sign certificates contain the true values and fail when they must."""
from __future__ import annotations

import ast
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp
from flint import arb, fmpq

from theory.certified.balls import (CertificateRefused, FloatingPointRefused, Interval, ball, decimal, exact,
                                    lower, require_ball, upper)
from theory.certified.expressions import arb_function
from theory.certified.roots import certify_root
from theory.certified.signs import certify_sign_map

PACKAGE = Path(__file__).resolve().parents[2] / "theory" / "certified"


def test_no_float_literal_or_float_call_in_the_certified_package():
    """The source of theory/certified holds no float literal and never calls float(): nothing in the chain of a
    certificate is a binary floating-point number."""
    sources = sorted(PACKAGE.glob("*.py"))
    assert len(sources) >= 5
    for path in sources:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            assert not (isinstance(node, ast.Constant) and isinstance(node.value, (float, complex))), \
                f"{path.name}:{node.lineno}: float literal {node.value!r}"
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                assert name not in ("float", "float64", "complex"), f"{path.name}:{node.lineno}: {name}() call"


@pytest.mark.parametrize("bad", [0.1, np.float64(0.5), sp.Float("0.25"), np.array([0.5]), 1j])
def test_floats_are_refused(bad):
    with pytest.raises(FloatingPointRefused):
        exact(bad)
    with pytest.raises(FloatingPointRefused):
        ball(bad)
    with pytest.raises((FloatingPointRefused, TypeError)):
        require_ball(bad)


def test_exact_reads_decimals_and_fractions_exactly():
    assert exact("0.1") == fmpq(1, 10)
    assert exact("-2/3") == fmpq(-2, 3)
    assert exact("1e-3") == fmpq(1, 1000)
    assert exact(Fraction(3, 7)) == fmpq(3, 7)
    assert exact(sp.Rational(5, 4)) == fmpq(5, 4)
    with pytest.raises(ValueError):
        exact("pi")
    with pytest.raises(ValueError):
        exact(True)


def test_decimal_rounds_outward():
    q = fmpq(2, 3)
    assert decimal(q, 5, "down") == "0.66666"
    assert decimal(q, 5, "up") == "0.66667"
    assert decimal(-q, 5, "down") == "-0.66667"
    x = arb(1) / 3
    assert lower(x) < fmpq(1, 3) < upper(x)


def test_float_constant_in_an_expression_is_refused():
    x = sp.Symbol("x")
    with pytest.raises(FloatingPointRefused):
        arb_function(x - sp.Float("0.5"), (x,))
    f = arb_function(x - sp.Rational(1, 2), (x,))
    with pytest.raises(FloatingPointRefused):
        f(0.5)


def test_root_of_a_bessel_ratio_contains_the_mpmath_value():
    """sqrt(2) as the zero of x^2 - 2, and the zero of I_1(x)/I_0(x) - 1/2 against mpmath.findroot at 50 digits."""
    x = sp.Symbol("x")
    f = arb_function(x**2 - 2, (x,))
    cert = certify_root(f, f.derivative(), Interval.of(1, 2))
    assert cert.enclosure.lo ** 2 < 2 < cert.enclosure.hi ** 2
    assert cert.enclosure.width < fmpq(1, 10**25)
    g = arb_function(sp.besseli(1, x) / sp.besseli(0, x) - sp.Rational(1, 2), (x,))
    cert = certify_root(g, g.derivative(), Interval.of(1, 2))
    with mpmath.workdps(50):
        r = mpmath.findroot(lambda t: mpmath.besseli(1, t) / mpmath.besseli(0, t) - mpmath.mpf(1) / 2, 1.1)
        lo = mpmath.mpf(int(cert.enclosure.lo.p)) / int(cert.enclosure.lo.q)
        hi = mpmath.mpf(int(cert.enclosure.hi.p)) / int(cert.enclosure.hi.q)
        assert lo <= r <= hi


def test_root_without_sign_change_is_refused():
    x = sp.Symbol("x")
    f = arb_function(x**2 + 1, (x,))
    with pytest.raises(CertificateRefused):
        certify_root(f, f.derivative(), Interval.of(-1, 2))


def test_sign_map_names_runs_and_zeros():
    """(x - 1/3)(x - 2)^2 on [0, 3]: a simple zero at 1/3 and an exact double zero at 2."""
    x = sp.Symbol("x")
    m = certify_sign_map((x - sp.Rational(1, 3)) * (x - 2) ** 2, x, Interval.of(0, 3))
    assert [z.kind.split(" at")[0] for z in m.zeros] == ["simple", "exact zero of order 2"]
    assert m.zeros[0].enclosure.contains(fmpq(1, 3))
    assert [r.sign for r in m.sign_runs] == [-1, 1, 1]
    assert m.sign_between(fmpq(1, 2), fmpq(3, 2)) == 1
