"""The whitelist kernel parser: correct trees for valid input, one-line rejections without side effects."""
import builtins
import os
import sys
import time

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from theory import symbols as sym
from theory.expression_parser import (
    MAX_DEPTH,
    MAX_LENGTH,
    parse_expression,
    parse_kernel,
    parse_parameter_assignment,
    tokenize,
)

s, beta = sym.s, sym.beta
c = sp.Symbol("c", real=True)


@pytest.mark.parametrize("text, expected", [
    ("exp(beta*s) + c*s**3", sp.exp(beta * s) + c * s**3),
    ("-s**2", -s**2),                      # ** binds tighter than unary minus, as in Python
    ("2**-1", sp.Rational(1, 2)),
    ("2**3**2", sp.Integer(2**9)),          # right associative
    ("(exp(beta*s) - 1)/beta", (sp.exp(beta * s) - 1) / beta),
    ("0.25*s + 1.5e-1", s / 4 + sp.Rational(3, 20)),  # decimals are exact rationals
    ("abs(s) + sqrt(1 + s) + log(2 + s)", sp.Abs(s) + sp.sqrt(1 + s) + sp.log(2 + s)),
    ("sin(s)*cos(s) - tan(s) + sinh(s) + cosh(s) + tanh(c*s)",
     sp.sin(s) * sp.cos(s) - sp.tan(s) + sp.sinh(s) + sp.cosh(s) + sp.tanh(c * s)),
    ("pi*s", sp.pi * s),
    ("  s  /  2 ", s / 2),
])
def test_valid_expressions_build_the_expected_tree(text, expected):
    expr, _ = parse_expression(text, ["c"])
    assert sp.simplify(expr - expected) == 0


def test_parse_kernel_returns_pair_kernel_with_declared_parameters():
    k = parse_kernel("exp(beta*s) + c*s**3", {"c": 0.5})
    assert k.params == {c: sp.Float(0.5, 17)}
    assert k.symbols == (s, beta, c)
    assert sp.simplify(k.weight() - (beta * sp.exp(beta * s) + 3 * c * s**2)) == 0
    assert sp.simplify(k.substituted() - (sp.exp(beta * s) + s**3 / 2)) == 0


HOSTILE = [
    ("s.__class__", "'.'"),
    ("s.__class__.__mro__", "'.'"),
    ("__import__(os)", "'__import__'"),
    ("__import__('os').system('touch x')", "'__import__'"),
    ("__builtins__", "'__builtins__'"),
    ("lambda", "'lambda'"),
    ("lambda s: s", "'lambda'"),
    ("eval(s)", "'eval'"),
    ("exec", "'exec'"),
    ("sympify(s)", "'sympify'"),
    ("Symbol('x')", "'Symbol'"),
    ("s; import os", "';'"),
    ("[s for s in ()]", "'['"),
    ("s if s else s", "'if'"),
    ("exp(s)(s)", "'('"),
    ("exp", "'exp'"),
    ("s**", "end of input"),
    ("s^2", "'^'"),
    ("x + 1", "'x'"),
    ("1/0", "'/'"),
    ("log(0)", "'log'"),
    ("9**9**9", "'**'"),
    ("s**1000", "'**'"),
    ("(2**100)**100", "'**'"),
    ("1e400", "'1e400'"),
    ("s # comment", "'#'"),
    ("'s'", '"\'"'),
    ("s\n+1", "'\\n'"),
    ("\u0663*s", "'\u0663'"),          # non-ASCII digits are not numbers
    ("s\u00b2", "'\u00b2'"),
]


@pytest.mark.parametrize("text, token", HOSTILE)
def test_hostile_input_is_rejected_with_one_line_naming_the_token(text, token):
    with pytest.raises(ValueError) as info:
        parse_kernel(text)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("kernel: ")
    assert token in msg and "position" in msg


def test_rejections_have_no_side_effects(tmp_path, monkeypatch):
    """Hostile strings neither run code nor import modules, and the parser never calls eval/exec/sympify."""
    sentinel = tmp_path / "sentinel"
    calls = []

    def trap(name):
        def f(*a, **k):
            calls.append(name)
            raise AssertionError(f"{name} called")
        return f

    monkeypatch.setattr(builtins, "eval", trap("eval"))
    monkeypatch.setattr(builtins, "exec", trap("exec"))
    monkeypatch.setattr(sp, "sympify", trap("sympify"))
    monkeypatch.setattr(sp, "parse_expr", trap("parse_expr"))
    assert "antigravity" not in sys.modules and "this" not in sys.modules
    payloads = [
        f"__import__('os').system('touch {sentinel}')",
        "__import__(os).system(touch)",
        "__import__('antigravity')",
        "__import__(this)",
        "s.__class__.__base__.__subclasses__()",
        f"open('{sentinel}', 'w')",
        "lambda: __import__('this')",
    ]
    for text in payloads:
        with pytest.raises(ValueError):
            parse_expression(text)
    # a valid kernel goes through the same path without touching any of the trapped functions
    expr, _ = parse_expression("exp(beta*s) - 1 + c*s**2", ["c"])
    monkeypatch.undo()
    assert calls == []
    assert not sentinel.exists() and not os.path.exists("sentinel")
    assert "antigravity" not in sys.modules and "this" not in sys.modules
    assert expr.has(sp.exp(beta * s))


def test_limits_on_length_depth_and_power_are_cheap():
    start = time.process_time()  # CPU time, which load does not stretch (tests/cpu_budget.py)
    with pytest.raises(ValueError, match="too long"):
        parse_kernel("s+" * MAX_LENGTH + "s")
    with pytest.raises(ValueError, match="nesting deeper"):
        parse_kernel("(" * (MAX_DEPTH + 1) + "s" + ")" * (MAX_DEPTH + 1))
    with pytest.raises(ValueError, match="nesting deeper"):
        parse_kernel("exp(" * (MAX_DEPTH + 1) + "s" + ")" * (MAX_DEPTH + 1))
    with pytest.raises(ValueError, match="nesting deeper"):
        parse_kernel("-" * 200 + "s")
    with pytest.raises(ValueError, match="nesting deeper"):
        parse_kernel("s**" * 600 + "s")  # would otherwise exhaust the recursion limit
    for text in ("9**9**9**9", "(9**99)**(9**99)", "10**300**100", "999999999999999**99"):
        with pytest.raises(ValueError):
            parse_kernel(text)
    parse_kernel("(" * MAX_DEPTH + "s" + ")" * MAX_DEPTH)  # just inside the limit
    assert time.process_time() - start < 10.0  # generous: each rejection is a few ms of CPU


def test_functions_of_huge_constants_are_refused_at_once():
    """The kernel fuzz found tan(cosh(10^40)): SymPy decided the sign of the power by evaluating the tangent,
    which reduces cosh(10^40) modulo pi at a precision growing with it (minutes). Constants inside sin/cos/tan
    are bounded by 1e15 and inside exp/sinh/cosh by 1e4, checked as each function is built."""
    start = time.process_time()  # CPU time (tests/cpu_budget.py)
    for text, name in (("(-(0-9999999999999999999999999999999999999999)**tan(cosh(9999999999999999999999999999999999999999)))",
                        "cosh"), ("sin(1e16)*s", "sin"), ("tan(exp(40))", "tan"), ("exp(1e5)+s", "exp")):
        with pytest.raises(ValueError, match=f"argument of {name} above"):
            parse_kernel(text)
    assert time.process_time() - start < 10.0  # the failure this guards against took minutes
    for text in ("sin(1e15)*s", "cosh(2)*exp(beta*(s-1))", "tanh(1e40)*s", "exp(1e4)*s", "sin(s*1e20)"):
        parse_kernel(text)   # at the limits, or not constant: accepted


def test_parameters_are_validated():
    with pytest.raises(ValueError, match="does not appear"):
        parse_kernel("s", {"c": 1.0})
    with pytest.raises(ValueError, match="reserved"):
        parse_kernel("s", {"beta": 1.0})
    with pytest.raises(ValueError, match="forbidden"):
        parse_kernel("s", {"__class__": 1.0})
    with pytest.raises(ValueError, match="finite"):
        parse_kernel("c*s", {"c": float("nan")})
    with pytest.raises(ValueError, match="real number"):
        parse_kernel("c*s", {"c": "1"})
    assert parse_parameter_assignment("c=0.5") == ("c", 0.5)
    for bad in ("c", "c=abc", "__x=1", "c=inf", "exp=1"):
        with pytest.raises(ValueError):
            parse_parameter_assignment(bad)


ALPHABET = "sbetacxp()+-*/.0123456789e _^'[]:;,"


@given(st.text(alphabet=ALPHABET, max_size=40))
def test_fuzz_only_value_errors(text):
    """Arbitrary strings either parse to a sympy expression or raise ValueError; nothing else escapes."""
    try:
        expr, _ = parse_expression(text, ["c"])
    except ValueError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(expr, sp.Basic)
        assert expr.free_symbols <= {s, beta, c}


@st.composite
def polynomials(draw):
    coeffs = draw(st.lists(st.integers(-9, 9), min_size=1, max_size=5))
    return sum(cf * s**k for k, cf in enumerate(coeffs)) + draw(st.integers(-3, 3)) * sp.exp(beta * s)


@given(polynomials())
def test_round_trip_of_printed_expressions(expr):
    parsed, _ = parse_expression(sp.sstr(expr))
    assert sp.expand(parsed - expr) == 0


def test_tokenizer_positions():
    toks = tokenize("exp(beta*s)")
    assert [(t.kind, t.text, t.pos) for t in toks] == [
        ("name", "exp", 0), ("op", "(", 3), ("name", "beta", 4), ("op", "*", 8), ("name", "s", 9),
        ("op", ")", 10), ("end", "", 11)]
