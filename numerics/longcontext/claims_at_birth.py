"""The claim ``longcontext.at-birth``: depth-H causal attention at initialisation as powers of the Cesaro matrix
(Chowdhury, arXiv 2603.10123), checked exactly and in its continuous limit (:mod:`numerics.longcontext.at_birth`).

The comparison with the untrained decoder (SmolLM2's architecture at initialisation, with and without the rotary
embedding) is the slow claim ``decoder.random-init-at-birth`` of :mod:`numerics.decoder.claims_untrained`.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from numerics.common.verification import CheckResult, claim
from numerics.longcontext import at_birth as ab

SOURCE = ("Chowdhury, arXiv 2603.10123 (Lost in the Middle at Birth: powers of the Cesaro matrix, primacy tail, "
          "recency delta, factorial dead zone); derived here: the last row of M^H as complete homogeneous symmetric "
          "polynomials, their generating function Gamma(n+1) Gamma(1-t) / Gamma(n+1-t)")
#: sizes of the exact checks
EXACT_N, EXACT_DEPTHS = 40, range(0, 7)
PRIMACY_N, PRIMACY_DEPTHS = 200, (2, 3, 4, 6)
#: continuous limit: depths, sizes, the first-order ratio window and the largest gap at the largest n
CONTINUUM_DEPTHS, CONTINUUM_N = (2, 3, 4, 5), (10**4, 10**5)
CONTINUUM_RATIO, CONTINUUM_GAP = (8.0, 12.0), 2e-3
MIDDLE_N, MIDDLE_DEPTHS, MIDDLE_RTOL = 10**5, (2, 4, 6, 8), 1e-3
RECENCY_N, RECENCY_DEPTH, RECENCY_ALPHA = 1000, 4, 0.5
#: the recency weight against the largest other weight (measured 0.0628 against 0.0150, the first token's)
RECENCY_ISOLATION = 3.0


@claim(id="longcontext.at-birth", title="causal attention at initialisation: the last row of the H-th Cesaro power "
       "(two exact routes), its primacy tail (generating function), continuous limit (ln 1/y)^{H-1}/(H-1)!, the "
       "middle dead zone and the residual's O(1) recency weight", source=SOURCE, note="longcontext-at-birth.md")
def check_at_birth() -> CheckResult:
    cid = "longcontext.at-birth"
    import mpmath as mp

    # exact: r <- r M H times against (1/n) h_{H-1}(1/j, ..., 1/n), in rationals; float matrix powers beside
    exact_equal = all(ab.last_row_power(EXACT_N, H) == ab.last_row_h(EXACT_N, H) for H in EXACT_DEPTHS)
    sums_to_one = all(sum(ab.last_row_h(EXACT_N, H)) == 1 for H in EXACT_DEPTHS)
    M = ab.cesaro_matrix(EXACT_N)
    float_gap = max(float(np.max(np.abs(np.array(ab.last_row_h(EXACT_N, H), dtype=float)
                                        - np.linalg.matrix_power(M, H)[-1]))) for H in EXACT_DEPTHS)
    third = Fraction(1, 3)
    binomial_exact = ab.residual_row(30, 5, third) == ab.residual_row_direct(30, 5, third)
    # primacy: n (M^H)_{n1} = h_{H-1}(1, ..., 1/n) = [t^{H-1}] Gamma(n+1) Gamma(1-t) / Gamma(n+1-t)
    harmonic = ab.last_row_h(PRIMACY_N, 2)[0] * PRIMACY_N == sum(Fraction(1, i) for i in range(1, PRIMACY_N + 1))
    primacy = []
    with mp.workdps(50):
        for H in PRIMACY_DEPTHS:
            coef = mp.taylor(lambda t: mp.gamma(PRIMACY_N + 1) * mp.gamma(1 - t) / mp.gamma(PRIMACY_N + 1 - t),
                             0, H - 1)[H - 1]
            ex = ab.last_row_h(PRIMACY_N, H)[0] * PRIMACY_N
            primacy.append({"H": H, "first_token_weight_times_n": float(ex),
                            "relative_gap": float(abs(mp.mpf(ex.numerator) / ex.denominator - coef) / coef),
                            "leading_log_term": math.log(PRIMACY_N) ** (H - 1) / math.factorial(H - 1)})
    primacy_ok = harmonic and max(p["relative_gap"] for p in primacy) < 1e-40
    # continuous limit, first order in 1/n
    continuum = []
    for H in CONTINUUM_DEPTHS:
        g = [ab.continuum_gap(n, H) for n in CONTINUUM_N]
        continuum.append({"H": H, "gaps": g, "ratio": g[0] / g[1]})
    continuum_ok = all(CONTINUUM_RATIO[0] <= c["ratio"] <= CONTINUUM_RATIO[1] and c["gaps"][-1] <= CONTINUUM_GAP
                       for c in continuum)
    # dead zone: the middle third's attention-only mass against its limit and the factorial bound
    middle = []
    for H in MIDDLE_DEPTHS:
        mass, limit = ab.middle_mass(MIDDLE_N, H), ab.middle_mass_limit(H)
        middle.append({"H": H, "mass": mass, "limit": limit, "relative_gap": abs(mass - limit) / limit,
                       "bound": math.log(3.0) ** (H - 1) / (3.0 * math.factorial(H - 1))})
    middle_ok = all(m["relative_gap"] <= MIDDLE_RTOL and m["limit"] <= m["bound"] for m in middle)
    # recency: with residual weight 1 - alpha the last token keeps (1 - alpha)^H + O(1/n)
    row = ab.residual_row(RECENCY_N, RECENCY_DEPTH, RECENCY_ALPHA, exact=False)
    delta = row[-1]
    anchor = (1 - RECENCY_ALPHA) ** RECENCY_DEPTH
    # isolated: the last token's weight is O(1) and at least RECENCY_ISOLATION times any other token's
    recency_ok = abs(delta - anchor) <= RECENCY_DEPTH / RECENCY_N and delta >= RECENCY_ISOLATION * max(row[:-1])
    ok = exact_equal and sums_to_one and float_gap <= 1e-14 and binomial_exact and primacy_ok and continuum_ok \
        and middle_ok and recency_ok
    worst_continuum = max(c["gaps"][-1] for c in continuum)
    return CheckResult(cid, "passed" if ok else "failed",
                       {"continuum gap (n = 1e5)": worst_continuum,
                        "middle mass relative gap": max(m["relative_gap"] for m in middle),
                        "recency weight": delta},
                       {"continuum gap (n = 1e5)": f"<= {CONTINUUM_GAP:g}, ratio in {CONTINUUM_RATIO}",
                        "middle mass relative gap": f"<= {MIDDLE_RTOL:g}", "recency weight": anchor},
                       "exact (rationals) and as stated",
                       {"exact_routes_equal": exact_equal, "rows_sum_to_one": sums_to_one, "float_power_gap": float_gap,
                        "residual_binomial_exact": binomial_exact, "harmonic_number": harmonic, "primacy": primacy,
                        "continuum": continuum, "middle": middle, "recency_weight": delta, "recency_anchor": anchor,
                        "recency_largest_other": max(row[:-1]), "worst_continuum_gap": worst_continuum,
                        "continuum_ratio_H5": continuum[-1]["ratio"], "middle_mass_H8": middle[-1]["mass"],
                        "middle_limit_H8": middle[-1]["limit"]})
