"""Claim ``architectures.causal-parking``: the metastable cluster count of causal attention on S^1 from random
starts against Renyi's parking problem (KPR arXiv 2411.04990, section 5). Slow (``--all``): causal runs of
n = 200 tokens at several beta."""
from __future__ import annotations

import math

import numpy as np

from numerics.architectures import parking as pk
from numerics.common.verification import CheckResult, claim
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere

SOURCE = ("Karagodin, Polyanskiy, Rigollet arXiv 2411.04990, section 5 (Renyi centers, delta = 4 beta^{-1/2} in "
          "their Figure 2; Renyi's parking problem)")
#: KPR's Figure 2 radius: delta = DELTA_FACTOR / sqrt(beta)
DELTA_FACTOR = 4.0
#: c_R: mpmath (30 digits) vs the slope M(40) - M(39) of the trapezoid solution (h = 1e-3, error O(h^2) ~ 1e-8)
CONSTANT_TOLERANCE = 1e-6
#: Monte Carlo of the parking (4000 samples) vs the delay equation: within 4 standard errors
MC_SIGMAS = 4.0
#: metastable count vs the Renyi-center count of the same starts: mean difference within 3 standard errors
AGREE_SIGMAS = 3.0
#: clusters are counted with the gap delta/2 (centers are >= delta apart); delta/4 is reported alongside
GAP_FRACTIONS = (0.5, 0.25)
#: a strong Renyi center must stay within delta/10 of its start up to t_meta (KPR Lemma 5.1: nearly fixed)
STRONG_MOTION = 0.1


def parking_routes(betas=(16.0, 36.0, 64.0), samples: int = 4000, seed: int = 0) -> dict:
    """Renyi's constant by quadrature and by the delay equation; the expected number of Renyi centers
    (delta = 4/sqrt(beta)) by the delay equation and by Monte Carlo of the parking."""
    x, M = pk.parking_mean(40.0, 1e-3)
    k = int(round(1 / 1e-3))
    c_quad = pk.renyi_constant()
    c_slope = float(M[-1] - M[-1 - k])
    rng = np.random.default_rng(seed)
    rows = []
    for beta in betas:
        L = 2 * math.pi * math.sqrt(beta) / DELTA_FACTOR
        s = np.array([pk.parking_sample(L, rng) for _ in range(samples)])
        mean, se = float(s.mean()), float(s.std(ddof=1) / math.sqrt(samples))
        expect = pk.circle_parking_mean(L)
        rows.append({"beta": beta, "L": L, "delay_equation": expect, "monte_carlo": mean, "standard_error": se,
                     "sigmas": abs(mean - expect) / se})
    return {"c_quadrature": c_quad, "c_delay_equation_slope": c_slope, "c_reference": pk.RENYI_CONSTANT,
            "expected_centers": rows}


def causal_counts(beta: float, seeds, n: int = 200, t_meta: float = 20.0) -> list[dict]:
    """Per seed: clusters of causal sa (Q = K = V = I, d = 2, backend direct, adaptive) at ``t_meta`` for the two
    gap thresholds, Renyi centers and strong Renyi centers of the start (delta = 4/sqrt(beta)), and whether the
    strong centers stayed within delta/10 of their start."""
    delta = DELTA_FACTOR / math.sqrt(beta)
    out = []
    for seed in seeds:
        X0 = uniform_sphere(n, 2, seed)
        tr = simulate(Model("sa", beta, causal=True), X0, t_meta,
                      solver=Solver("adaptive", rtol=1e-8, atol=1e-10, backend="direct"),
                      save=SaveAt(times=[0.0, t_meta]))
        angles = np.arctan2(X0[:, 1], X0[:, 0])
        strong = pk.renyi_centers(angles, delta, strong=True)
        moved = np.arccos(np.clip(np.sum(tr.X[-1][strong] * X0[strong], axis=1), -1, 1))
        counts = [pk.circle_cluster_count(tr.X[-1], f * delta) for f in GAP_FRACTIONS]
        out.append({"seed": seed, "clusters": counts[0], "clusters_by_gap": counts,
                    "renyi_centers": int(pk.renyi_centers(angles, delta).size), "strong_centers": int(strong.size),
                    "strong_max_motion": float(moved.max()), "delta": delta})
    return out


def count_rows(betas=(16.0, 36.0, 64.0), seeds=range(8), n: int = 200, t_meta: float = 20.0) -> list[dict]:
    rows = []
    for beta in betas:
        runs = causal_counts(beta, seeds, n, t_meta)
        c = np.array([r["clusters"] for r in runs], float)
        rc = np.array([r["renyi_centers"] for r in runs], float)
        diff = c - rc
        se = float(diff.std(ddof=1) / math.sqrt(len(runs))) if len(runs) > 1 else float("nan")
        L = 2 * math.pi * math.sqrt(beta) / DELTA_FACTOR
        rows.append({"beta": beta, "n": n, "t_meta": t_meta, "delta": DELTA_FACTOR / math.sqrt(beta),
                     "mean_clusters": float(c.mean()),
                     "clusters_standard_error": float(c.std(ddof=1) / math.sqrt(len(runs))),
                     "mean_renyi_centers": float(rc.mean()), "parking_expectation": pk.circle_parking_mean(L),
                     "mean_difference": float(diff.mean()), "difference_standard_error": se,
                     "difference_sigmas": abs(float(diff.mean())) / se if se > 0 else (0.0 if diff.mean() == 0 else math.inf),
                     "fraction_gap_independent": float(np.mean([len(set(r["clusters_by_gap"])) == 1 for r in runs])),
                     "strong_le_clusters": all(r["strong_centers"] <= r["clusters"] for r in runs),
                     "runs": runs})
    return rows


@claim(id="architectures.causal-parking",
       title="causal sa on S^1 from iid uniform starts (n = 200): metastable cluster count = number of Renyi centers "
             "(delta = 4 beta^{-1/2}) within 3 standard errors at beta = 16, 36, 64; parking constant two ways",
       source=SOURCE, note="architectures-causal-parking.md", default=False)
def check_causal_parking() -> CheckResult:
    routes = parking_routes()
    rows = count_rows()
    c_err = abs(routes["c_quadrature"] - routes["c_delay_equation_slope"])
    ref_err = abs(routes["c_quadrature"] - routes["c_reference"])
    mc_ok = all(r["sigmas"] <= MC_SIGMAS for r in routes["expected_centers"])
    agree = max(r["difference_sigmas"] for r in rows)
    strong_ok = all(r["strong_le_clusters"] for r in rows) and all(
        run["strong_max_motion"] <= STRONG_MOTION * run["delta"] for r in rows for run in r["runs"])
    ok = c_err <= CONSTANT_TOLERANCE and ref_err <= 1e-15 and mc_ok and agree <= AGREE_SIGMAS and strong_ok
    return CheckResult("architectures.causal-parking", "passed" if ok else "failed", agree, 0.0,
                       f"count - Renyi centers within {AGREE_SIGMAS:g} standard errors; c_R two ways <= "
                       f"{CONSTANT_TOLERANCE:g}; Monte Carlo within {MC_SIGMAS:g} SE; strong centers fixed",
                       {"parking": routes, "counts": rows, "c_error": c_err,
                        "paths": "mpmath quadrature vs delay equation (trapezoid) vs Monte Carlo parking; causal sa "
                                 "(Model(causal=True), backend direct, adaptive rtol 1e-8) cluster counts vs Renyi "
                                 "centers of the same starts"})
