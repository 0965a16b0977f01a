"""Certified claims of the long-context transition (issue 30, second part). Registered from
:mod:`numerics.certified.claims`; notes ``proofs_notes/certified-longcontext-*.md``. The noisy first-order
transition, the Landau quartic and the fold are in :mod:`numerics.certified.claims_noise`.

- certified.longcontext-critical-gamma: gamma_c = 1/(1 - rho) exactly (the exponent's root and signs) on a rho
  grid, and gamma_n(p*) (p_n = 1/10, 1/2, 9/10) as certified unique roots for n = 10^2..10^6, with the width
  gamma_n(9/10) - gamma_n(1/10) = 2 log 9/((1 - rho) log n) and the midpoint log(n - 1)/((1 - rho) log n).
- certified.longcontext-critical-limit: rho'_n at gamma_c exact, inside the Arb value of the exp/log form and
  next to simplex_layer_mp; the limit (4 rho/(1 + 3 rho) without residual) and |rho'_n - limit| <= K/n for all
  n >= 100 (proved).
- certified.longcontext-poisson-constant: kappa_d (d = 2..8): SymPy's limit equals the closed form; enclosures.
"""
from __future__ import annotations

import mpmath as mp

from numerics.certified.runs import REFERENCE_DPS, ROOT_METHOD, Ledger, as_mpf, root_entry
from numerics.common.verification import CheckResult, claim

_LC = ("CLPR-LC arXiv 2510.05554 (Chen, Lin, Polyanskiy, Rigollet), simplex model, beta_n = gamma log n "
       "(theory.longcontext)")
_FIXED = "arXiv 2605.08505 (fixed query against n iid uniform keys), theory.longcontext.poisson_constant"

#: the rho grid (exact rationals) and the token counts of the long-context certificates
RHOS = ("0", "1/10", "1/2", "9/10")
TOKENS = (10 ** 2, 10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6)
TARGETS = ("1/10", "1/2", "9/10")


# -- long contexts -----------------------------------------------------------------------------------------------
def _crossing_reference(n: int, rho, p) -> mp.mpf:
    """gamma_n(p) = (log(n - 1) - log((1 - p)/p)) / ((1 - rho) log n), mpmath at 60 digits (closed form)."""
    x, pp = as_mpf(rho), as_mpf(p)
    return (mp.log(n - 1) - mp.log((1 - pp) / pp)) / ((1 - x) * mp.log(n))


@claim(id="certified.longcontext-critical-gamma",
       title="simplex layer: gamma_c = 1/(1 - rho) exactly; gamma_n where p_n = 1/10, 1/2, 9/10 certified unique, "
             "n = 1e2..1e6; width 2 log 9/((1 - rho) log n)",
       source=_LC, note="certified-longcontext-critical-gamma.md")
def check_longcontext_critical_gamma() -> CheckResult:
    from theory.certified.balls import Interval, exact
    from theory.certified.longcontext import critical_gamma, crossing_gamma
    from theory.longcontext import critical_gamma as float_gamma

    ledger = Ledger("certified.longcontext-critical-gamma")
    with mp.workdps(REFERENCE_DPS + 10):
        for text in RHOS:
            def exponent(text=text):
                c = critical_gamma(text)
                entry = ledger.enclosure(f"gamma_c(rho={text})", Interval(c.gamma_c, c.gamma_c),
                                         1 / (1 - as_mpf(exact(text))))
                entry.update({"exact": str(c.gamma_c), "exponent slope": str(c.slope),
                              "e(gamma_c/2)": str(c.below[1]), "e(2 gamma_c)": str(c.above[1]),
                              "float critical_gamma": float_gamma(float(mp.mpf(as_mpf(exact(text)))))})
                return entry
            ledger.attempt(f"gamma_c(rho={text})", exponent)
            for n in TOKENS:
                certs = {}
                for p in TARGETS:
                    name = f"gamma_n(n={n}, rho={text}, p={p})"

                    def work(n=n, text=text, p=p, name=name):
                        certs[p] = crossing_gamma(n, text, p)
                        return root_entry(ledger, name, certs[p], _crossing_reference(n, exact(text), exact(p)))
                    ledger.attempt(name, work)
                if len(certs) == len(TARGETS):  # width and midpoint: differences of certified enclosures
                    lo, mid, hi = (certs[p].enclosure for p in TARGETS)
                    width = Interval(hi.lo - lo.hi, hi.hi - lo.lo)
                    x = as_mpf(exact(text))
                    ledger.attempt(f"width(n={n}, rho={text})", lambda w=width, n=n, x=x, text=text: ledger.enclosure(
                        f"width(n={n}, rho={text})", w, 2 * mp.log(9) / ((1 - x) * mp.log(n))))
                    ledger.attempt(f"midpoint(n={n}, rho={text})", lambda m=mid, n=n, x=x, text=text:
                                   ledger.enclosure(f"midpoint(n={n}, rho={text})", m,
                                                    mp.log(n - 1) / ((1 - x) * mp.log(n))))
    first = ledger.items.get("gamma_n(n=1000000, rho=1/2, p=1/2)", {}).get("enclosure", "refused")
    return ledger.result(f"gamma_n(1e6, rho=1/2, p=1/2) in {first}",
                         "gamma_c = 1/(1 - rho) exactly; every root enclosure contains the mpmath closed form",
                         "exact membership (gamma_c); relative width <= 1e-30", ROOT_METHOD,
                         {"rho": list(RHOS), "n": list(TOKENS), "p": list(TARGETS), "bracket": "[0, 3/(1 - rho)]",
                          "statement": "for each rho: e(gamma) = 1 - gamma (1 - rho) has the exact root 1/(1 - rho) "
                                       "and slope -(1 - rho) < 0; for each (n, rho, p) p_n(gamma) = p has exactly "
                                       "one root in the certificate's bracket (p_n' > 0 there) and it lies in the "
                                       "enclosure; width and midpoint are differences of those enclosures",
                          "exact width": "2 log 9/((1 - rho) log n)"})


CRITICAL_LIMIT_CASES = (("1/10", "0"), ("1/2", "0"), ("9/10", "0"), ("1/2", "1/2"))


@claim(id="certified.longcontext-critical-limit",
       title="simplex layer at gamma_c: rho'_n exact (p_n = n/(2n - 1)), limit 4 rho/(1 + 3 rho) (and with "
             "residual), |rho'_n - limit| <= K/n proved for all n >= 100",
       source=_LC, note="certified-longcontext-critical-limit.md")
def check_longcontext_critical_limit() -> CheckResult:
    from theory.certified.balls import Interval, decimal, exact
    from theory.certified.longcontext import critical_limit
    from theory.longcontext import critical_gamma as float_gamma
    from theory.longcontext import simplex_layer_mp

    ledger = Ledger("certified.longcontext-critical-limit")
    for rho_text, r_text in CRITICAL_LIMIT_CASES:
        name = f"rho={rho_text}, r={r_text}"

        def work(rho_text=rho_text, r_text=r_text, name=name):
            c = critical_limit(rho_text, r_text)
            x, rr = as_mpf(exact(rho_text)), as_mpf(exact(r_text))
            with mp.workdps(REFERENCE_DPS + 10):
                closed = (1 + rr) ** 2 * x / ((1 + rr) ** 2 * x + (mp.mpf(1) / 2 + rr) ** 2 * (1 - x))
                entry = {"limit": str(c.limit), "limit_formula": mp.nstr(closed, 30),
                         "p_n at gamma_c": str(c.self_weight),
                         "bound": f"|rho'_n - {c.limit}| <= {c.bound}/n for every integer n >= {c.n0}",
                         "lim n (rho'_n - limit)": str(c.leading)}
                entry.update(ledger.enclosure(f"{name}: limit", Interval(c.limit, c.limit), closed))
                gc = 1 / (1 - x)
                per_n = {}
                for n, value in c.values.items():
                    ref = simplex_layer_mp(n, gc, x, rr, 1, dps=REFERENCE_DPS)[2]
                    e = ledger.enclosure(f"{name}: rho'_{n}", Interval(value, value), ref)
                    err = value - c.limit
                    if not abs(err) * n <= c.bound:
                        ledger.problems.append(f"{name}: n = {n}: |rho'_n - limit| = {decimal(abs(err), 4)} "
                                               f"exceeds the proved bound")
                    per_n[str(n)] = {"rho'_n": decimal(value, 25), "Arb (exp/log form)": c.arb_values[n].text(25),
                                     "simplex_layer_mp": e.get("mpmath (50 digits)"),
                                     "rho'_n - limit": decimal(err, 6)}
                ledger.number(name, "bound", decimal(c.bound, 8))
                entry["n"] = per_n
                entry["float critical_gamma"] = float_gamma(float(x))
                if rr == 0 and c.limit != 4 * exact(rho_text) / (1 + 3 * exact(rho_text)):
                    ledger.problems.append(f"{name}: the limit {c.limit} is not 4 rho/(1 + 3 rho)")
                return entry
        ledger.attempt(name, work)
    first = ledger.items.get("rho=1/2, r=0", {}).get("bound", "refused")
    return ledger.result(first, "limit 4 rho/(1 + 3 rho) (r = 0) = theory's limit; simplex_layer_mp on every "
                         "exact rho'_n", "exact (rationals); mpmath within 1e-45 relative",
                         "exact rational arithmetic (SymPy: p_n at gamma_c, the symbolic-n map, the limit); Arb "
                         "enclosure of the exp/log form of p_n; the bound by Sturm real-root counting of integer "
                         "polynomials on [100, oo)",
                         {"cases (rho, r = alpha sqrt(q))": [list(c) for c in CRITICAL_LIMIT_CASES],
                          "n": list(TOKENS)})


@claim(id="certified.longcontext-poisson-constant",
       title="fixed query vs n uniform keys: kappa_d = c_d 2^{(d-1)/2}/(d-1) equals SymPy's limit exactly, "
             "enclosed, d = 2..8",
       source=_FIXED, note="certified-longcontext-poisson-constant.md")
def check_longcontext_poisson_constant() -> CheckResult:
    from theory.certified.longcontext import poisson_constant, poisson_constant_closed

    ledger = Ledger("certified.longcontext-poisson-constant")

    def reference(d: int) -> mp.mpf:  # mpmath: c_d from Gamma functions, independent of SymPy
        with mp.workdps(REFERENCE_DPS + 10):
            c = mp.gamma(mp.mpf(d) / 2) / (mp.sqrt(mp.pi) * mp.gamma(mp.mpf(d - 1) / 2))
            return c * mp.mpf(2) ** (mp.mpf(d - 1) / 2) / (d - 1)
    for d in range(2, 9):
        def work(d=d):
            entry = ledger.enclosure(f"kappa_{d}", poisson_constant(d), reference(d))
            entry["closed form"] = str(poisson_constant_closed(d))
            return entry
        ledger.attempt(f"kappa_{d}", work)
    first = ledger.items.get("kappa_3", {}).get("enclosure", "refused")
    return ledger.result(f"kappa_3 in {first}", "SymPy limit = closed form; mpmath value inside",
                         "exact identity; relative width <= 1e-30",
                         "SymPy (limit of the exact integral = closed form, simplify to 0), then Arb",
                         {"d": list(range(2, 9))})
