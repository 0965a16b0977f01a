"""The certified sign of the mode-1 Landau quartic coefficient of noisy usa on a beta interval.

c_4(beta) = D <P_1^4>/12 - sum_j D^2 <P_1^2 P_j>^2 / (8 (D - g_j) <P_j^2>) at D = D_c = g_1(beta)
(:func:`theory.noise_global.quartic_coefficient_expr`, the g_j SymPy Bessel forms of ``theory``): the transition
at D_c is continuous where c_4 > 0 and first order where c_4 < 0. Its zero is beta*(d) (c_4 is a positive
multiple of 1/d - I_{d/2+1}/I_{d/2}, a different expression of the same number: the certificate checks that the
zero it finds contains :func:`theory.certified.statements.noise_threshold`'s reference value).

Method: the zero is a certified root (:func:`theory.certified.roots.certify_root`: sign change, c_4' bounded
away from 0 on its bracket, interval Newton); on the rest of [lo, hi] c_4 is enclosed on pieces by Arb
evaluation over the whole piece, bisected until every enclosure excludes 0. Every number is exact or a ball.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import sympy as sp
from .balls import DEFAULT_PREC, CertificateRefused, Interval, sign_of, working_precision
from .expressions import arb_function
from .roots import RootCertificate, bracket_by_doubling, certify_root
from .statements import BETA, BRACKET_START, growth_rate_expr


def quartic_expr(d: int) -> sp.Expr:
    """c_4(beta) at D = g_1(beta), g_j = lambda_j/(j (j + d - 2)) (usa), as a SymPy expression in BETA."""
    from theory.noise import D, laplacian_eigenvalue
    from theory.noise_global import quartic_coefficient_expr

    c4 = quartic_coefficient_expr(d, 1)
    subs = {D: growth_rate_expr("usa", d, 1) / laplacian_eigenvalue(1, d)}
    for s in c4.free_symbols:
        if s.name.startswith("g_"):
            j = int(s.name[2:])
            subs[s] = growth_rate_expr("usa", d, j) / laplacian_eigenvalue(j, d)
    return c4.subs(subs)


@lru_cache(maxsize=16)
def _compiled(d: int):
    return arb_function(quartic_expr(d), (BETA,))


@dataclass(frozen=True)
class QuarticSigns:
    """Signs of c_4 on [lo, hi]: ``runs`` (Interval, sign, pieces) either side of the certified zero."""

    d: int
    domain: Interval
    zero: RootCertificate
    runs: tuple = field(default_factory=tuple)

    @property
    def pieces(self) -> int:
        return sum(p for _, _, p in self.runs)

    def to_dict(self, digits: int = 12) -> dict:
        return {"zero": self.zero.enclosure.text(25), "unique in": self.zero.bracket.text(digits),
                "signs at the bracket ends": [self.zero.left_sign, self.zero.right_sign],
                "runs": [{"interval": iv.text(digits), "sign": s, "pieces": p} for iv, s, p in self.runs]}


def _sign_on(f, X: Interval, max_pieces: int) -> tuple[int, int]:
    """The common certified sign of f on X by bisection (pieces used); refused if it is not constant."""
    stack, pieces, sign = [X], 0, 0
    while stack:
        piece = stack.pop()
        s = sign_of(f(piece.ball()))
        if s == 0:
            if pieces + len(stack) > max_pieces:
                raise CertificateRefused(f"sign of c_4 undecided near {piece.text(12)} after {pieces} pieces")
            stack.extend(piece.split())
            continue
        if sign and s != sign:
            raise CertificateRefused(f"c_4 changes sign on {X.text(12)} outside the certified zero")
        sign, pieces = s, pieces + 1
    return sign, pieces


def quartic_sign_map(d: int, lo, hi, prec: int = DEFAULT_PREC, max_pieces: int = 4000,
                     sign_prec: int = 64) -> QuarticSigns:
    """The certified sign pattern of c_4 on [lo, hi]: one certified zero and a constant sign either side.

    The sign pieces run at ``sign_prec`` bits (Arb's Bessel functions on wide balls are the cost; a sign needs
    few bits, and a lower precision only widens the balls, it never makes them wrong)."""
    domain = Interval.of(lo, hi)
    f = _compiled(d)
    with working_precision(prec):
        bracket = bracket_by_doubling(f, BRACKET_START)
        zero = certify_root(f, f.derivative(), bracket, prec=prec)
        U = zero.bracket
        if not domain.lo < U.lo and U.hi < domain.hi:
            raise CertificateRefused(f"the zero's bracket {U.text(12)} is not inside {domain.text(12)}")
    with working_precision(sign_prec):
        runs = []
        for X in (Interval(domain.lo, U.lo), Interval(U.hi, domain.hi)):
            s, p = _sign_on(f, X, max_pieces)
            runs.append((X, s, p))
        if runs[0][1] != zero.left_sign or runs[1][1] != zero.right_sign:
            raise CertificateRefused("the signs either side disagree with the zero's bracket signs")
    return QuarticSigns(d, domain, zero, tuple(runs))


__all__ = ["QuarticSigns", "quartic_expr", "quartic_sign_map"]
