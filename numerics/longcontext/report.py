"""The payloads of ``attnflow long-context``: the simplex model, the fixed query, the gap-counting families.

Each ``*_report`` estimates its work first (:func:`numerics.common.limits.check_work` on the total, so an absurd
request is refused before anything runs), then computes, reporting progress through ``progress(done, total)``.
Closed forms come from :mod:`theory.longcontext` (imported here, off the hot paths).
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.limits import check_array, check_work
from numerics.longcontext import almost_simplex, fixed_query, gaps, simplex

#: the largest n of the Monte Carlo parts (finite d, the direct fixed-query route, gap counting): O(n) memory each
MC_MAX_N = 10**7
#: the largest n of the exact reductions (float arithmetic in log space)
EXACT_MAX_N = 1e300
#: the largest n of the fixed-query order-statistics route (distances ~ n^{-2/(d-1)} stay far above the float floor)
ORDER_MAX_N = 1e15
CONVENTIONS = ("beta_n = gamma log n (natural log, n tokens including the query's own); simplex layer "
               "x_i' = sum_j A_ij y_j + alpha x_i with |x_i|^2 = q, A = softmax(beta <y_i, y_j>) (arXiv 2510.05554)")


def decades(n_max: float, n_min: float = 10.0) -> list[float]:
    """10, 100, ... up to n_max (and n_max itself when it is not a power of ten)."""
    n_max = require_real(n_max, "n-max", minimum=n_min, maximum=EXACT_MAX_N)
    k_max = int(math.floor(math.log10(n_max) + 1e-12))
    out = [10.0**k for k in range(int(math.log10(n_min)), k_max + 1)]
    if n_max > out[-1] * (1 + 1e-12):
        out.append(float(n_max))
    return out


def _int_n(n: float, what: str) -> int:
    if n > MC_MAX_N:
        raise InputError(f"{what} draws O(n) numbers per sample: n = {n:.3g} is above the limit of {MC_MAX_N:.0e} "
                         f"(use a smaller --n-max)")
    return int(round(n))


# -- the simplex model --------------------------------------------------------------------------------------------
#: the smallest n of the almost-simplex Monte Carlo (the 10% level needs n - 1 > 9)
MC_MIN_N = 100.0


def simplex_work(ns, d, queries, configurations) -> float:
    if d is None:
        return 1e6 * len(ns)
    return sum(almost_simplex.work_estimate(_int_n(n, "--d (almost-simplex Monte Carlo)"), d, queries,
                                            configurations) for n in ns if n >= MC_MIN_N)


def simplex_report(rho: float, alpha: float = 0.0, q: float = 1.0, n_max: float = 1e6, d: int | None = None,
                   queries: int = 8, configurations: int = 8, seed: int = 0, progress=None) -> dict:
    """Critical gamma, the limits, the exact transition over decades of n and, with ``d``, the almost-simplex
    Monte Carlo in R^d (gamma_{1/2} with standard errors, against the annealed prediction)."""
    from theory.longcontext import critical_gamma, limit_inner_products

    rho, alpha, q = simplex.check_parameters(rho, None, alpha, q)
    ns = decades(n_max)
    if d is not None:
        d = require_int(d, "d", minimum=3)
        queries = require_int(queries, "queries", minimum=1)
        configurations = require_int(configurations, "configurations", minimum=2)
        seed = require_int(seed, "seed", minimum=0)
    check_work(simplex_work(ns, d, queries, configurations), f"long-context simplex up to n = {ns[-1]:.3g}")
    rows = simplex.transition_table(ns, rho, alpha, q)
    fit = simplex.width_scaling_fit(rows) if len(rows) >= 3 else None
    payload = {"model": "simplex", "rho": rho, "alpha": alpha, "q": q, "conventions": CONVENTIONS,
               "critical_gamma": critical_gamma(rho),
               "limits": {"self_weight": {"subcritical": 0.0, "critical": 0.5, "supercritical": 1.0},
                          "inner_product": limit_inner_products(rho, alpha, q)},
               "transition": rows, "width_fit": fit, "reduction": "exact O(1) map per n (spectral form)"}
    if d is not None:
        finite = []
        done = [0]
        total = sum(queries * configurations for n in ns if n >= MC_MIN_N)

        def tick(k, _total):
            if progress is not None:
                progress(done[0] + k, total)

        for n in [n for n in ns if n >= MC_MIN_N]:
            res = almost_simplex.crossing_gammas(_int_n(n, "--d"), d, rho, queries, configurations, seed, tick)
            done[0] += queries * configurations
            finite.append(almost_simplex.summarise(res))
        payload["finite_d"] = {"d": d, "queries": queries, "configurations": configurations, "seed": seed,
                               "rows": finite, "method": "almost-simplex tokens sqrt(rho) e_0 + sqrt(1 - rho) z, "
                               "z uniform on S^{d-2}; O(n d) per query; standard error over configurations"}
    return payload


# -- the fixed query -------------------------------------------------------------------------------------------------
def fixed_query_work(ns, replicates: int, route: str) -> float:
    """Operations: per n, about 60 evaluations of the replicates' top weights (root search and regimes), each
    over the K kept keys and the Laguerre tail (~2 K terms of ~100 operations); the direct route also draws all
    n distances per replicate; plus the Poisson Monte Carlo and the quadrature."""
    per_evaluation = replicates * 2.0 * fixed_query.TOP_K * 100.0
    total = 60 * per_evaluation * (len(ns) + 1) + 2e9
    if route == "direct":
        total += sum(replicates * n * 70.0 for n in ns)
    return total


def fixed_query_report(d: int = 3, n_max: float = 1e6, replicates: int = 2000, seed: int = 0, route: str = "order",
                       progress=None) -> dict:
    """C_d by quadrature and by simulated Poisson processes, C_d(n) over decades of n (``order``: exact top
    order statistics, any n; ``direct``: all n distances), and E W_1 in the three regimes."""
    d = require_int(d, "d", minimum=2)
    replicates = require_int(replicates, "replicates", minimum=10)
    seed = require_int(seed, "seed", minimum=0)
    if route not in ("order", "direct"):
        raise InputError(f"route must be order or direct, got {route!r}")
    if require_real(n_max, "n-max", minimum=10.0) > ORDER_MAX_N:
        raise InputError(f"--fixed-query: n-max is at most {ORDER_MAX_N:.0e} (got {n_max:.3g})")
    ns = decades(n_max, n_min=1e3) if n_max >= 1e3 else decades(n_max, n_min=10.0 ** math.floor(math.log10(n_max)))
    if route == "direct":
        for n in ns:
            _int_n(n, "--route direct")
        check_array((replicates, fixed_query.DIRECT_KEEP), "direct fixed-query rows", copies=4)
    if route == "order" and ns[0] <= fixed_query.TOP_K:
        raise InputError(f"the order-statistics route keeps {fixed_query.TOP_K} keys: --n-max must exceed it")
    check_array((replicates, fixed_query.TOP_K + 1), "fixed-query replicates", copies=8)
    check_work(fixed_query_work(ns, replicates, route), f"fixed-query transition up to n = {ns[-1]:.3g}")
    steps = len(ns) + 2
    tick = (lambda k: progress(k, steps)) if progress is not None else (lambda k: None)
    C = fixed_query.poisson_half_constant_quadrature(d)
    tick(1)
    mc = fixed_query.poisson_half_constant(d, replicates, seed)
    tick(2)
    rows = []
    a_c = fixed_query.critical_exponent(d)
    for i, n in enumerate(ns):
        n_int = int(round(n))  # n <= ORDER_MAX_N
        res = fixed_query.finite_n_half_constant(n_int, d, replicates, seed, route=route)
        top = fixed_query.TopKeys(n_int, d, replicates, np.random.default_rng([seed, d, 7, i]))
        regimes = {}
        for label, beta in (("below", float(n) ** (0.5 * a_c)), ("at", C * float(n) ** a_c),
                            ("above", float(n) ** (1.5 * a_c))):
            W = top.top_weight(beta)
            regimes[label] = {"beta": beta, "top_weight": float(W.mean()),
                              "standard_error": float(W.std(ddof=1) / math.sqrt(W.size))}
        rows.append({"n": float(n), "constant": res["constant"], "standard_error": res["standard_error"],
                     "route": route, "regimes": regimes})
        tick(3 + i)
    return {"model": "fixed-query", "d": d, "critical_exponent": a_c,
            "poisson_constant": fixed_query.poisson_constant(d), "constant_quadrature": C,
            "constant_poisson_mc": mc["constant"], "constant_poisson_mc_se": mc["standard_error"],
            "replicates": replicates, "seed": seed, "rows": rows,
            "definition": "C_d: E W_1 = 1/2 at beta_n = C_d n^{2/(d-1)} (W_1 the top attention weight), n -> oo",
            "regimes": "E W_1 at beta = n^{a_c/2} (below), C_d n^{a_c} (at), n^{3 a_c/2} (above), a_c = 2/(d-1)"}


# -- gap counting ---------------------------------------------------------------------------------------------------
def gap_report(n_max: float = 1e4, rows: int = 100, seed: int = 0, rho: float = 0.5, d: int = 3,
               progress=None) -> dict:
    """beta_{1/2}(n) / A_n for the four score families over decades of n, with the limits."""
    rows = require_int(rows, "rows", minimum=10)
    seed = require_int(seed, "seed", minimum=0)
    ns = [_int_n(n, "--gap-counting") for n in decades(n_max, n_min=100.0)]
    fams = [gaps.ScoreFamily(name, rho=rho, d=d) for name in gaps.FAMILIES]
    check_work(sum(rows * n * 60.0 for n in ns) * len(fams), f"gap counting up to n = {ns[-1]:.3g}")
    check_array((rows, gaps.KEEP + 3 * gaps.BINS), f"gap counting with {rows} rows", copies=2)
    total = len(fams) * len(ns) * rows
    out = []
    done = 0
    for fam in fams:
        results = []
        for n in ns:
            def tick(k, _t, base=done):
                if progress is not None:
                    progress(base + k, total)

            results.append(gaps.measure_family(fam, n, rows, seed, tick))
            done += rows
        fit = gaps.ratio_fit(results) if len(results) >= 3 and fam.name != "simplex" else None
        out.append({"family": fam.name, "law": gaps.LAWS[fam.name], "limit_ratio": fam.limit_ratio(),
                    "rows": results, "fit": fit})
    return {"model": "gap-counting", "families": out, "rows_per_n": rows, "seed": seed, "rho": rho, "d": d,
            "definition": "A_n = sup_delta log Nbar_n(delta)/delta; beta_1/2: E W_1 = 1/2 over independent rows"}
