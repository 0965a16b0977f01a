"""A whitelist parser for user-supplied kernel strings such as ``"exp(beta*s) + c*s**3"``.

Strings typed by users (CLI ``--kernel``, configuration files) are turned into sympy trees by a hand-written
tokenizer and recursive-descent parser that calls sympy constructors directly. No string ever reaches
``eval``, ``exec``, ``sympify``, ``parse_expr`` or ``lambdify``; nothing is imported or looked up by name
outside the fixed tables below.

Grammar (``**`` is right-associative and binds tighter than unary minus, as in Python: ``-s**2 = -(s**2)``)::

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/") unary)*
    unary   := ("+" | "-") unary | power
    power   := atom ("**" unary)?
    atom    := NUMBER | NAME | FUNCTION "(" expr ")" | "(" expr ")"

Accepted names: ``s`` (the inner product), ``beta``, ``pi``, declared parameters, and the functions of
:data:`FUNCTIONS`. Everything else is rejected with a one-line ``ValueError`` naming the offending token and its
(0-based) character position.

Resource limits keep hostile input cheap: at most :data:`MAX_LENGTH` characters, nesting depth at most
:data:`MAX_DEPTH`, numeric literals at most :data:`MAX_LITERAL_DIGITS` characters, numeric exponents at most
:data:`MAX_EXPONENT` in absolute value, and powers of numbers whose exact value would exceed
:data:`MAX_RESULT_BITS` bits are refused before sympy evaluates them (so ``9**9**9`` costs nothing). SymPy
also evaluates while it builds (``(2*s)**100`` becomes ``2**100*s**100``), so every intermediate result is
bounded too: its exact numbers at most :data:`MAX_RESULT_BITS` bits, its integer exponents at most
:data:`MAX_RESULT_EXPONENT`, and the whole tree at most :data:`MAX_NODES` nodes. Each operation can grow a
number by a factor of at most :data:`MAX_EXPONENT` in bit length before it is checked, so any string is
accepted or rejected in milliseconds, with a one-line error naming the bound it hit. Decimal
literals become exact rationals (``0.5 -> 1/2``), so no floating-point function is evaluated at parse time.
"""
from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from . import symbols as sym
from .kernels import PairKernel

MAX_LENGTH = 2000
MAX_DEPTH = 50
MAX_EXPONENT = 100
MAX_RESULT_BITS = 4096
MAX_LITERAL_DIGITS = 40
MAX_NAME_LENGTH = 32
MAX_RESULT_EXPONENT = 10_000
MAX_NODES = 5_000

#: the only callable names: one argument each, mapped to sympy constructors
FUNCTIONS = {
    "exp": sp.exp,
    "log": sp.log,
    "sqrt": sp.sqrt,
    "sin": sp.sin,
    "cos": sp.cos,
    "tan": sp.tan,
    "sinh": sp.sinh,
    "cosh": sp.cosh,
    "tanh": sp.tanh,
    "abs": sp.Abs,
}
CONSTANTS = {"pi": sp.pi}
#: the largest |argument| of a function applied to a constant (no ``s``, ``beta`` or parameter in it). SymPy
#: decides the sign of a constant by evaluating it, and ``sin``/``cos``/``tan`` of a huge constant need its
#: reduction modulo :math:`\pi` at a precision that grows with its size: ``tan(cosh(10^40))`` ran for minutes
#: (found by the kernel fuzz). Beyond :math:`10^{15}` a periodic function of a float64 argument has no correct
#: digit anyway; :math:`e^{10^4}` is :math:`10^{4343}`.
MAX_CONSTANT_ARGUMENT = {"sin": 1e15, "cos": 1e15, "tan": 1e15, "exp": 1e4, "sinh": 1e4, "cosh": 1e4}
RESERVED = frozenset({"s", "beta", *FUNCTIONS, *CONSTANTS})

_NUMBER = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # ASCII digits only
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = ("**", "+", "-", "*", "/", "(", ")")


@dataclass(frozen=True)
class Token:
    kind: str  # "number", "name", "op", "end"
    text: str
    pos: int


def _show(text: str) -> str:
    """A short printable form of a token for error messages (hostile tokens can be long)."""
    return repr(text if len(text) <= 24 else text[:21] + "...")


def _error(token: Token | str, pos: int, why: str = "unexpected token") -> ValueError:
    if isinstance(token, Token) and token.kind == "bad":
        return _bad_character(token)
    text = token.text if isinstance(token, Token) else token
    shown = "end of input" if text == "" else _show(text)
    return ValueError(f"kernel: {why} {shown} at position {pos}")


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into number, name and operator tokens.

    Scanning stops at the first character outside the alphabet, which becomes a ``bad`` token (the parser
    raises when it reaches it); the list otherwise ends with an ``end`` token.
    """
    if not isinstance(text, str):
        raise ValueError(f"kernel: expected a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"kernel: expression too long ({len(text)} > {MAX_LENGTH} characters)")
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch in " \t":
            pos += 1
            continue
        m = _NUMBER.match(text, pos)
        if m:
            tokens.append(Token("number", m.group(), pos))
            pos = m.end()
            continue
        m = _NAME.match(text, pos)
        if m:
            tokens.append(Token("name", m.group(), pos))
            pos = m.end()
            continue
        for op in _OPERATORS:
            if text.startswith(op, pos):
                tokens.append(Token("op", op, pos))
                pos += len(op)
                break
        else:
            # Stop here: the parser reports this character when it reaches it, so that an earlier forbidden
            # name (``__import__('os')``) is the token named in the error.
            tokens.append(Token("bad", ch, pos))
            return tokens
    tokens.append(Token("end", "", len(text)))
    return tokens


def _bad_character(tok: Token) -> ValueError:
    hint = " (use ** for powers)" if tok.text == "^" else ""
    return ValueError(f"kernel: unexpected character {_show(tok.text)} at position {tok.pos}{hint}")


def _number(token: Token) -> sp.Rational:
    if len(token.text) > MAX_LITERAL_DIGITS:
        raise _error(token, token.pos, "numeric literal too long")
    mantissa, _, exponent = token.text.lower().partition("e")
    if exponent and abs(int(exponent)) > 300:
        raise _error(token, token.pos, "numeric literal out of range")
    value = Fraction(token.text)  # exact decimal -> rational; no float rounding, no evaluation
    return sp.Rational(value.numerator, value.denominator)


def _bits(q: sp.Rational) -> int:
    return max(int(q.p).bit_length(), int(q.q).bit_length(), 1)


def _bounded(expr: sp.Expr, tok: Token) -> sp.Expr:
    """``expr`` if the numbers and integer exponents SymPy created while building it are within bounds.

    Automatic evaluation only rewrites the node being built, so its numbers stand at most two levels down
    (``Mul(2**k, Pow(s, j))``); the deeper levels were checked when they were built.
    """
    for node in (expr, *expr.args, *(a for arg in expr.args for a in arg.args)):
        if node.is_Rational and _bits(node) > MAX_RESULT_BITS:
            raise _error(tok, tok.pos, f"an intermediate number exceeds {MAX_RESULT_BITS} bits at")
        if node.is_Pow and node.exp.is_Number and abs(node.exp) > MAX_RESULT_EXPONENT:
            raise _error(tok, tok.pos, f"an intermediate exponent exceeds {MAX_RESULT_EXPONENT} at")
    return expr


#: how the API asks for a parameter's declaration; the command line names its own option instead
#: (numerics.core.kernel_options)
UNDECLARED_HINT = "declare parameters with params"


class _Parser:
    def __init__(self, tokens: list[Token], names: Mapping[str, sp.Symbol]):
        self.tokens = tokens
        self.i = 0
        self.names = names
        self.depth = 0
        self.used: set[str] = set()

    # -- helpers ---------------------------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind == "bad":
            raise _bad_character(tok)
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        if self.tok.text != text or self.tok.kind != "op":
            raise _error(self.tok, self.tok.pos, f"expected {text!r}, found")
        self.advance()

    def enter(self, tok: Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _error(tok, tok.pos, f"nesting deeper than {MAX_DEPTH} at")

    # -- grammar ---------------------------------------------------------------------------------------------
    def parse(self) -> sp.Expr:
        expr = self.expr()
        if self.tok.kind != "end":
            raise _error(self.tok, self.tok.pos)
        return expr

    def expr(self) -> sp.Expr:
        out = self.term()
        while self.tok.kind == "op" and self.tok.text in "+-":
            op_tok = self.advance()
            op = op_tok.text
            rhs = self.term()
            out = _bounded(sp.Add(out, rhs) if op == "+" else sp.Add(out, sp.Mul(-1, rhs)), op_tok)
        return out

    def term(self) -> sp.Expr:
        out = self.unary()
        while self.tok.kind == "op" and self.tok.text in ("*", "/"):
            op_tok = self.advance()
            rhs = self.unary()
            if op_tok.text == "/":
                if rhs.is_zero:
                    raise _error(op_tok, op_tok.pos, "division by zero for")
                rhs = _bounded(sp.Pow(rhs, -1), op_tok)
            out = _bounded(sp.Mul(out, rhs), op_tok)
        return out

    def unary(self) -> sp.Expr:
        tok = self.tok
        if tok.kind == "op" and tok.text in "+-":
            self.advance()
            self.enter(tok)  # signs, '**', '(' and calls nest: each counts towards MAX_DEPTH
            try:
                inner = self.unary()
            finally:
                self.depth -= 1
            return _bounded(sp.Mul(-1, inner), tok) if tok.text == "-" else inner
        return self.power()

    def power(self) -> sp.Expr:
        base = self.atom()
        if self.tok.kind == "op" and self.tok.text == "**":
            op_tok = self.advance()
            self.enter(op_tok)
            try:
                exponent = self.unary()
            finally:
                self.depth -= 1
            return self.safe_pow(base, exponent, op_tok)
        return base

    def safe_pow(self, base: sp.Expr, exponent: sp.Expr, op_tok: Token) -> sp.Expr:
        if exponent.is_Number:
            if abs(exponent) > MAX_EXPONENT:
                raise _error(op_tok, op_tok.pos, f"exponent {_short(exponent)} exceeds {MAX_EXPONENT} for")
            if base.is_Number:
                if base.is_zero and exponent.is_negative:
                    raise _error(op_tok, op_tok.pos, "zero to a negative power for")
                if abs(exponent) * _bits(base) > MAX_RESULT_BITS:
                    raise _error(op_tok, op_tok.pos, "power too large to evaluate for")
            else:
                # SymPy distributes integer powers over products of numbers: bound the coefficient first
                coeff = base.as_coeff_Mul()[0]
                if coeff.is_Rational and abs(exponent) * _bits(coeff) > MAX_RESULT_BITS:
                    raise _error(op_tok, op_tok.pos, f"an intermediate number exceeds {MAX_RESULT_BITS} bits at")
        return _bounded(sp.Pow(base, exponent), op_tok)

    def atom(self) -> sp.Expr:
        tok = self.tok
        if tok.kind == "number":
            self.advance()
            return _number(tok)
        if tok.kind == "op" and tok.text == "(":
            self.advance()
            self.enter(tok)
            try:
                inner = self.expr()
            finally:
                self.depth -= 1
            self.expect(")")
            return inner
        if tok.kind == "name":
            self.advance()
            name = tok.text
            if name in FUNCTIONS:
                if not (self.tok.kind == "op" and self.tok.text == "("):
                    raise _error(tok, tok.pos, "function name without '(':")
                self.advance()
                self.enter(tok)
                try:
                    arg = self.expr()
                finally:
                    self.depth -= 1
                self.expect(")")
                return _apply(name, arg, tok)
            if name in CONSTANTS:
                return CONSTANTS[name]
            if name in self.names:
                self.used.add(name)
                return self.names[name]
            forbidden = name.startswith("_") or keyword.iskeyword(name) or name in ("eval", "exec", "import")
            why = "forbidden name" if forbidden else f"undeclared name ({UNDECLARED_HINT})"
            raise _error(tok, tok.pos, why)
        raise _error(tok, tok.pos)


def _short(x: sp.Expr) -> str:
    text = sp.sstr(x)
    return text if len(text) <= 24 else text[:21] + "..."


def _apply(name: str, arg: sp.Expr, tok: Token) -> sp.Expr:
    if name in ("log", "sqrt") and arg.is_Number and arg.is_zero:
        raise _error(tok, tok.pos, f"{name}(0) is not finite:")
    limit = MAX_CONSTANT_ARGUMENT.get(name)
    if limit is not None and not arg.free_symbols and not _constant_within(arg, limit):
        raise _error(tok, tok.pos, f"argument of {name} above {limit:g} in magnitude (a constant) for")
    return _bounded(FUNCTIONS[name](arg), tok)


def _constant_within(arg: sp.Expr, limit: float) -> bool:
    """Whether the constant ``arg`` has |arg| <= ``limit``, from a 15-digit evaluation (cheap: the functions
    inside it were bounded when they were built); a value that cannot be evaluated counts as too large."""
    if arg.is_Number:
        return bool(abs(arg) <= limit)
    try:
        return abs(complex(sp.N(arg, 15))) <= limit
    except (TypeError, ValueError, OverflowError, ArithmeticError):
        return False


def check_parameter_name(name: str) -> str:
    """Validate a declared parameter name: a plain identifier, no leading underscore, not reserved."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
        raise ValueError(f"kernel: invalid parameter name {_show(str(name))}")
    if name.startswith("_") or keyword.iskeyword(name):
        raise ValueError(f"kernel: forbidden parameter name {_show(name)}")
    if name in RESERVED:
        raise ValueError(f"kernel: parameter name {_show(name)} is reserved (s, beta, pi and function names)")
    return name


def parse_expression(text: str, parameters=()) -> tuple[sp.Expr, dict[str, sp.Symbol]]:
    """Parse ``text`` into a sympy expression in ``s``, ``beta`` and the named ``parameters``.

    Returns the expression and the parameter symbols actually used (by name). Parameter symbols are
    ``sympy.Symbol(name, real=True)``, the convention of :class:`theory.kernels.PairKernel`.
    """
    declared = {check_parameter_name(p): sp.Symbol(p, real=True) for p in parameters}
    names = {"s": sym.s, "beta": sym.beta, **declared}
    tokens = tokenize(text)
    if tokens[0].kind == "end":
        raise ValueError("kernel: empty expression")
    parser = _Parser(tokens, names)
    expr = parser.parse()
    size = sum(1 for _ in zip(sp.preorder_traversal(expr), range(MAX_NODES + 1)))
    if size > MAX_NODES:
        raise ValueError(f"kernel: expression has more than {MAX_NODES} nodes after evaluation")
    return expr, {p: declared[p] for p in declared if p in parser.used}


def parse_kernel(text: str, params: Mapping[str, float] | None = None, name: str | None = None) -> PairKernel:
    r"""Parse a kernel string into a :class:`theory.kernels.PairKernel` :math:`\phi(s)`.

    Parameters
    ----------
    text : str
        The kernel :math:`\phi(s)` in the grammar of this module, e.g. ``"exp(beta*s) + c*s**3"``. ``s`` is the
        inner product :math:`\langle x, y\rangle` and ``beta`` the inverse temperature (given separately to the
        model).
    params : mapping str -> float
        Values of the declared parameters (each must appear in ``text``; finite reals). Values are stored
        exactly as given (floats become sympy Floats).
    name : str, optional
        Display name (defaults to the text).

    Returns
    -------
    PairKernel
        With ``params`` keyed by ``Symbol(name, real=True)``.

    Raises
    ------
    ValueError
        One line naming the offending token and its position, or the bad parameter.

    Notes
    -----
    Verified by: tests/theory/test_conjecture_parser.py (hostile inputs rejected without side effects).
    """
    params = dict(params or {})
    values = {}
    for key, value in params.items():
        check_parameter_name(key)
        if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
            raise ValueError(f"kernel: parameter {key} must be a real number, got {_show(repr(value))}")
        if not float("-inf") < float(value) < float("inf"):
            raise ValueError(f"kernel: parameter {key} must be finite, got {value!r}")
        values[key] = value
    expr, used = parse_expression(text, values)
    unused = sorted(set(values) - set(used))
    if unused:
        raise ValueError(f"kernel: declared parameter {unused[0]!r} does not appear in the kernel")
    kernel_params = {used[k]: (sp.Integer(v) if isinstance(v, int) else sp.Float(v, 17) if isinstance(v, float)
                               else sp.Rational(v.numerator, v.denominator)) for k, v in values.items()}
    return PairKernel(expr, kernel_params, name=name or text.strip())


def parse_parameter_assignment(text: str) -> tuple[str, float]:
    """Parse ``"name=value"`` (CLI ``--param``) into a validated (name, float) pair."""
    name, sep, value = str(text).partition("=")
    name = name.strip()
    if not sep:
        raise ValueError(f"kernel: parameter must look like name=value, got {_show(str(text))}")
    check_parameter_name(name)
    try:
        number = float(value.strip())
    except ValueError:
        raise ValueError(f"kernel: parameter {name} needs a real value, got {_show(value.strip())}") from None
    if not float("-inf") < number < float("inf"):
        raise ValueError(f"kernel: parameter {name} must be finite, got {_show(value.strip())}")
    return name, number


__all__ = [
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_LENGTH",
    "check_parameter_name",
    "parse_expression",
    "parse_kernel",
    "parse_parameter_assignment",
    "tokenize",
]
