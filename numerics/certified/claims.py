"""Certified claims: thresholds, rates and Hessian signs proved in Arb ball arithmetic (theory.certified).

Their verdict is ``certified`` (never ``passed``): every number is an enclosure with exact rational endpoints
and a proof, checked to contain the independent 50-digit mpmath value and to be tight
(``numerics.certified.runs``). Notes: ``proofs_notes/certified-*.md``.

- certified.noise-threshold: beta*(d), the root of I_{d/2+1}(beta)/I_{d/2}(beta) = 1/d, d = 2..8.
- certified.critical-noise: D_c(beta) = lambda_1(beta)/(d-1) at beta in {1/2, 1, 2, 5}, d = 2..8.
- certified.growth-rates: lambda_l(beta) (usa and sa) for l = 1..6, beta in {1, 5, 10}, d = 2..8.
- certified.switch-points: the roots of lambda_{l+1} = lambda_l, l = 1, 2, d = 2..8, in increasing order
  (``certified.switch-points-full``, slow: l = 1..8).
- certified.circle-three-clusters: three clusters of two on S^1: the in-plane p = 1 eigenvalue changes sign
  exactly at beta = -2/3 (PRY's threshold) and every other non-rotation eigenvalue is <= 0 on [-4, 2].
- certified.circle-polygons: regular n-gons on S^1 (n = 3..6): every non-rotation Hessian eigenvalue is > 0
  on (0, 10]; the synchronised state has negative non-rotation eigenvalues on [-8, 8]
  (``certified.circle-polygons-full``, slow: n = 3..8 on (0, 20]).
- certified.strict-saddles: simplex and cross-polytope on S^{d-1}, d = 3..8: a positive Hessian eigenvalue
  (an ascent direction of E, so unstable) on the whole of (0, 20]; every non-rotation eigenvalue is > 0 there.
- certified.longcontext-*, certified.noise-first-order*, certified.noise-fold, certified.landau-quartic*: the
  transitions (numerics.certified.claims_transitions: long contexts; numerics.certified.claims_noise: the noisy
  transitions).
"""
from __future__ import annotations

from numerics.certified.runs import (ROOT_METHOD, SIGN_METHOD, VALUE_METHOD, Ledger, enclose_all,
                                     reference_growth_rate, reference_noise_threshold, reference_switch_point,
                                     root_entry)
from numerics.common.verification import CheckResult, claim

DIMENSIONS = tuple(range(2, 9))
_NOISE = ("noisy mean-field usa: Landau coefficient changes sign where I_{d/2+1}/I_{d/2} = 1/d (theory.noise; "
          "Shalova-Schlichting arXiv 2412.14813)")
_MEANFIELD = "BPA arXiv 2410.23228 / GLPR arXiv 2312.10794, linearisation at the uniform measure (theory.meanfield)"
_PRY = "PRY arXiv 2507.22857 (failure of synchronisation below -2/3 on S^1); CRMB arXiv 2405.18273"
_SADDLES = "CRMB arXiv 2405.18273 / GLPR arXiv 2312.10794, landscape for d >= 3 (theory.structured spectra)"


# -- 1. the noisy transition -----------------------------------------------------------------------------------
@claim(id="certified.noise-threshold",
       title="beta*(d): the root of I_{d/2+1}(beta)/I_{d/2}(beta) = 1/d, certified unique and tight, d = 2..8",
       source=_NOISE, note="certified-noise-threshold.md")
def check_noise_threshold() -> CheckResult:
    from theory.certified.statements import noise_threshold

    ledger = Ledger("certified.noise-threshold")
    for d in DIMENSIONS:
        ledger.attempt(f"beta*({d})", lambda d=d: root_entry(ledger, f"beta*({d})", noise_threshold(d),
                                                            reference_noise_threshold(d)))
    first = ledger.items.get("beta*(2)", {}).get("enclosure", "refused")
    return ledger.result(f"beta*(2) in {first}", "mpmath 50-digit root inside every enclosure",
                         "exact enclosure; relative width <= 1e-30", ROOT_METHOD, {"d": list(DIMENSIONS)})


CRITICAL_NOISE_BETAS = ("1/2", "1", "2", "5")


@claim(id="certified.critical-noise",
       title="D_c(beta) = lambda_1(beta)/(d-1) enclosed at beta in {1/2, 1, 2, 5}, d = 2..8",
       source=_NOISE, note="certified-critical-noise.md")
def check_critical_noise() -> CheckResult:
    from theory.certified.balls import exact
    from theory.certified.statements import critical_noise

    ledger = Ledger("certified.critical-noise")
    enclose_all(ledger, [(f"D_c(d={d}, beta={text})", lambda d=d, b=exact(text): critical_noise(d, b),
                          lambda d=d, b=exact(text): reference_growth_rate("usa", d, 1, b) / (d - 1))
                         for d in DIMENSIONS for text in CRITICAL_NOISE_BETAS])
    first = ledger.items.get("D_c(d=2, beta=1)", {}).get("enclosure", "refused")
    return ledger.result(f"D_c(2, 1) in {first}", "mpmath 50-digit value inside every enclosure",
                         "relative width <= 1e-30", VALUE_METHOD,
                         {"betas": list(CRITICAL_NOISE_BETAS), "d": list(DIMENSIONS), "model": "usa"})


# -- 2. the mean-field linearisation ---------------------------------------------------------------------------
GROWTH_BETAS = ("1", "5", "10")
GROWTH_DEGREES = tuple(range(1, 7))


@claim(id="certified.growth-rates",
       title="lambda_l(beta), usa and sa, l = 1..6, beta in {1, 5, 10}, d = 2..8: enclosures with the mpmath value",
       source=_MEANFIELD, note="certified-growth-rates.md")
def check_growth_rates() -> CheckResult:
    from theory.certified.balls import exact
    from theory.certified.statements import growth_rate

    ledger = Ledger("certified.growth-rates")
    enclose_all(ledger, [(f"lambda_{l}({model}, d={d}, beta={text})",
                          lambda d=d, b=exact(text), m=model, l=l: growth_rate(m, d, l, b),  # noqa: E741
                          lambda d=d, b=exact(text), m=model, l=l: reference_growth_rate(m, d, l, b))  # noqa: E741
                         for d in DIMENSIONS for text in GROWTH_BETAS for model in ("usa", "sa")
                         for l in GROWTH_DEGREES])  # noqa: E741 - degree
    first = ledger.items.get("lambda_1(usa, d=3, beta=1)", {}).get("enclosure", "refused")
    return ledger.result(f"lambda_1(usa, 3, 1) in {first}", "mpmath 50-digit value inside every enclosure",
                         "relative width <= 1e-30", VALUE_METHOD,
                         {"betas": list(GROWTH_BETAS), "degrees": list(GROWTH_DEGREES), "d": list(DIMENSIONS),
                          "count": len(DIMENSIONS) * len(GROWTH_BETAS) * 2 * len(GROWTH_DEGREES)})


def _switch_points(cid: str, degrees) -> CheckResult:
    from theory.certified.statements import switch_point

    ledger = Ledger(cid)
    order = {}
    for d in DIMENSIONS:
        previous = None
        for l in degrees:  # noqa: E741 - degree
            name = f"beta_{l}(d={d})"
            cert_box = {}

            def work(d=d, l=l, name=name, box=cert_box):  # noqa: E741
                box["c"] = switch_point(d, l)
                return root_entry(ledger, name, box["c"], reference_switch_point(d, l))
            ledger.attempt(name, work)
            cert = cert_box.get("c")
            if cert is not None and previous is not None and not previous.enclosure.hi < cert.enclosure.lo:
                ledger.problems.append(f"d={d}: beta_{l - 1} and beta_{l} are not certified in increasing order")
            previous = cert
        order[f"d={d}"] = "beta_1 < beta_2 < ... certified (disjoint enclosures)"
    first = ledger.items.get("beta_1(d=2)", {}).get("enclosure", "refused")
    return ledger.result(f"beta_1(2) in {first}", "mpmath 50-digit root inside every enclosure, increasing in l",
                         "relative width <= 1e-30", ROOT_METHOD,
                         {"degrees": list(degrees), "d": list(DIMENSIONS), "order": order,
                          "l_max": "l_max(beta) = l on (beta_{l-1}, beta_l) given the ordering of all beta_l "
                                   "(the Bessel-ratio monotonicity theorem; certified here for the l listed)"})


@claim(id="certified.switch-points",
       title="switch points of l_max: lambda_{l+1} = lambda_l, l = 1, 2, d = 2..8, certified roots in order",
       source=_MEANFIELD, note="certified-switch-points.md")
def check_switch_points() -> CheckResult:
    return _switch_points("certified.switch-points", (1, 2))


@claim(id="certified.switch-points-full",
       title="switch points of l_max, l = 1..8, d = 2..8 (slow)",
       source=_MEANFIELD, note="certified-switch-points.md", default=False)
def check_switch_points_full() -> CheckResult:
    return _switch_points("certified.switch-points-full", tuple(range(1, 9)))


# -- 3. Hessian signs on beta intervals ---------------------------------------------------------------------
def _progress(label: str, total: int):
    """Progress of a claim's subdivision runs on stderr (silent for the first 2 s): eigenvalue branches done."""
    from numerics.common.provenance import StderrProgress

    bar = StderrProgress(f"certify {label}", unit="branches ", clock="construction")
    done = [0]

    def step():
        done[0] += 1
        bar(done[0], total)
    return step


def branch_entry(ledger: Ledger, name: str, branch, lo: str, hi: str, want: str) -> dict:
    """Certify one eigenvalue branch's sign map on [lo, hi] and check the wanted pattern.

    ``want``: ``positive`` (> 0 on (lo, hi], an exact zero allowed only at lo), ``negative`` (< 0 on the whole
    interval), ``nonpositive`` (< 0 except at exact zeros of even order).
    """
    from theory.certified.balls import exact
    from theory.certified.statements import branch_sign_map

    signs = branch_sign_map(branch.label, branch.multiplicity, branch.value, lo, hi).signs
    entry = {"eigenvalue": str(branch.value), "multiplicity": branch.multiplicity, **signs.to_dict(12)}
    start = exact(lo)
    if want == "positive":
        ok = all(r.sign > 0 for r in signs.sign_runs) and all(
            z.enclosure.hi <= start and z.right > 0 for z in signs.zeros)
    elif want == "negative":
        ok = not signs.zeros and all(r.sign < 0 for r in signs.sign_runs)
    else:
        ok = all(r.sign < 0 for r in signs.sign_runs) and all(
            z.left < 0 and z.right < 0 and z.enclosure.width == 0 for z in signs.zeros)
    entry["wanted"] = want
    ledger.number(name, "pieces", signs.pieces)
    bounds = [r.to_dict()["min_abs_bound"] for r in signs.sign_runs if r.bound is not None]
    if bounds:
        ledger.number(name, "min_bound", min(bounds, key=lambda b: abs(exact(b))))
    if not ok:
        ledger.problems.append(f"{name}: the certified signs are not '{want}' on [{lo}, {hi}]")
    return entry


@claim(id="certified.circle-three-clusters",
       title="S^1, three clusters of two: the p = 1 eigenvalue changes sign exactly at -2/3; other modes <= 0 "
             "on [-4, 2]",
       source=_PRY, note="certified-circle-three-clusters.md")
def check_circle_three_clusters() -> CheckResult:
    from flint import fmpq

    from theory.certified.statements import branch_sign_map
    from theory.structured import circle_cluster_spectrum

    ledger = Ledger("certified.circle-three-clusters")
    branches = [b for b in circle_cluster_spectrum(3, 2, 2) if not b.rotation]
    threshold = {}
    for b in branches:
        if b.label == "in-plane cluster mode p=1":
            def work(b=b):
                signs = branch_sign_map(b.label, b.multiplicity, b.value, -4, 2).signs
                entry = {"eigenvalue": str(b.value), "multiplicity": b.multiplicity, **signs.to_dict(12)}
                ledger.number(b.label, "pieces", signs.pieces)
                simple = [z for z in signs.zeros if z.left < 0 < z.right]
                if len(signs.zeros) != 1 or len(simple) != 1:
                    ledger.problems.append(f"p=1 mode: expected one sign change - to +, got {entry['zeros']}")
                    return entry
                threshold["zero"] = simple[0]
                entry.update(ledger.enclosure("threshold", simple[0].enclosure, fmpq(-2, 3)))
                return entry
            ledger.attempt(b.label, work)
        else:
            ledger.attempt(b.label, lambda b=b: branch_entry(ledger, b.label, b, "-4", "2", "nonpositive"))
    measured = threshold["zero"].enclosure.text(25) if "zero" in threshold else "refused"
    return ledger.result(f"sign change in {measured}", "-2/3 (exact, PRY)", "exact membership; width <= 1e-30",
                         SIGN_METHOD, {"configuration": "3 equally spaced clusters of 2 on S^1 (d = 2), usa energy",
                                       "statement": "for beta in [-4, -2/3) every non-rotation eigenvalue is < 0 "
                                                    "(a strict local maximum); for beta in (-2/3, 2] the p = 1 "
                                                    "mode is > 0 (an ascent direction)"})


def _polygons(cid: str, sides, hi: str) -> CheckResult:
    from theory.structured import circle_cluster_spectrum

    ledger = Ledger(cid)
    jobs = [(f"{n}-gon: {b.label}", b, "0", hi, "positive")
            for n in sides for b in circle_cluster_spectrum(n, 1, 2) if not b.rotation]
    jobs += [(f"synchronised (4 coincident): {b.label}", b, "-8", "8", "negative")
             for b in circle_cluster_spectrum(1, 4, 2) if not b.rotation]
    step = _progress(cid, len(jobs))
    for name, b, lo, top, want in jobs:
        ledger.attempt(name, lambda name=name, b=b, lo=lo, top=top, want=want:
                       branch_entry(ledger, name, b, lo, top, want))
        step()
    return ledger.result(f"n = {sides[0]}..{sides[-1]}: every non-rotation eigenvalue > 0 on (0, {hi}]",
                         "regular polygons unstable for beta > 0; synchronised state a strict local max",
                         "certified signs on the whole interval", SIGN_METHOD,
                         {"sides": list(sides), "beta interval": f"(0, {hi}]", "d": 2})


@claim(id="certified.circle-polygons",
       title="S^1: regular n-gons (n = 3..6) have all non-rotation Hessian eigenvalues > 0 on (0, 10]; sync < 0",
       source=_PRY, note="certified-circle-polygons.md")
def check_circle_polygons() -> CheckResult:
    return _polygons("certified.circle-polygons", (3, 4, 5, 6), "10")


@claim(id="certified.circle-polygons-full",
       title="S^1: regular n-gons, n = 3..8, eigenvalues > 0 on (0, 20] (slow)",
       source=_PRY, note="certified-circle-polygons.md", default=False)
def check_circle_polygons_full() -> CheckResult:
    return _polygons("certified.circle-polygons-full", tuple(range(3, 9)), "20")


@claim(id="certified.strict-saddles",
       title="simplex and cross-polytope on S^{d-1}, d = 3..8: a certified positive eigenvalue on all of (0, 20]",
       source=_SADDLES, note="certified-strict-saddles.md")
def check_strict_saddles() -> CheckResult:
    from theory.structured import orthoplex_spectrum, simplex_spectrum

    ledger = Ledger("certified.strict-saddles")
    jobs = [(f"{family} d={d}: {b.label}", b) for d in range(3, 9)
            for family, spectrum in (("simplex", simplex_spectrum(d)), ("orthoplex", orthoplex_spectrum(d)))
            for b in spectrum if not b.rotation]
    step = _progress("certified.strict-saddles", len(jobs))
    for name, b in jobs:
        ledger.attempt(name, lambda b=b, name=name: branch_entry(ledger, name, b, "0", "20", "positive"))
        step()
    return ledger.result("every non-rotation eigenvalue > 0 on (0, 20], d = 3..8",
                         "an ascent direction at every beta in (0, 20]: unstable (saddle or minimum of E)",
                         "certified signs on the whole interval", SIGN_METHOD,
                         {"families": ["simplex (n = d+1)", "cross-polytope (n = 2d)"], "d": list(range(3, 9)),
                          "beta interval": "(0, 20]"})


from numerics.certified import claims_transitions  # noqa: E402,F401  (registers the long-context certificates)
from numerics.certified import claims_noise  # noqa: E402,F401  (registers the noisy-transition certificates)
