"""Claims on self-attention in R^d without normalisation (GLPR arXiv 2305.05465; CACP arXiv 2501.18322).

Each check integrates in the rescaled variables z = e^{-tV} x (:mod:`numerics.rd.dynamics`, RK4 pinned) and
reads the limit geometry with :mod:`numerics.rd.geometry`; the well-posedness check measures exact W_p with POT
(:mod:`numerics.rd.stability`). Scenario parameters are fixed below, not tuned per run.
"""
from __future__ import annotations

import numpy as np

from numerics.common.verification import CheckResult, claim
from numerics.core.model import SaveAt, Solver
from numerics.rd.dynamics import simulate_rd
from numerics.rd.geometry import (
    boolean_limit,
    hull_vertices,
    hyperplane_coordinates,
    limit_codimension,
    predicted_limit,
    spread,
)
from numerics.rd.model import RdModel
from numerics.rd.stability import adversarial_search, stability_ratios

GLPR = "GLPR arXiv 2305.05465"
CACP = "CACP arXiv 2501.18322"
#: P(t_end) counts as Boolean when every row's largest entry is within this of 1
BOOLEAN_TOL = 1e-8
#: the RK4 step of every check (|V| <= 1.05 here: dt |V| = 0.025, far inside RK4's stability region; halving
#: it changes no leader, assignment or cluster count, see the notes)
DT = 0.025
#: polytope scenario with a non-symmetric A = K^T Q (positive definite: symmetric part I, skew part 0.4): with
#: A = I a transposed score z_i^T A z_j for z_j^T A z_i is invisible (issue 43, "transposes checked only with
#: symmetric matrices")
A_GENERAL = np.array([[1.0, 0.4], [-0.4, 1.0]])
#: hyperplane scenario: a simple positive top eigenvalue 1 and a negative one, non-normal
V_HYPERPLANE = np.array([[1.0, 0.3], [0.0, -0.5]])


def _status(ok: bool) -> str:
    return "passed" if ok else "failed"


def polytope_leaders(seeds=(0, 1, 2, 3), n: int = 20, scale: float = 4.0, t_end: float = 12.0,
                     general_seeds=(0, 1)) -> CheckResult:
    """V = I, d = 2, A = K^T Q = I on ``seeds`` and the non-symmetric positive definite A_GENERAL on
    ``general_seeds``: Boolean limit, leaders among the self-attending hull vertices, hardmax prediction."""
    cid = "rd.polytope-leaders"
    cases, general, ok = [], [], True
    for A, seed in [(np.eye(2), s) for s in seeds] + [(A_GENERAL, s) for s in general_seeds]:
        model = RdModel("softmax", 2, V=np.eye(2), A=A)
        X0 = scale * np.random.default_rng(seed).standard_normal((n, 2))
        run = simulate_rd(model, X0, t_end, solver=Solver("rk4", dt=DT), save=SaveAt(every=10_000))
        lim = boolean_limit(run.P[-1])
        pred = predicted_limit(X0, A)
        hull = hull_vertices(X0)
        a = np.array(lim["assignment"])
        det = np.array(pred["determined"])
        agree = int(np.sum(a[det] == np.array(pred["assignment"])[det]))
        ZT = run.Z[-1]
        collapse = float(np.max(np.linalg.norm(ZT - ZT[a], axis=1)) / np.ptp(X0, axis=0).max())
        case = {"seed": seed, "boolean_gap": lim["boolean_gap"], "leaders": lim["leaders"],
                "self_attending": pred["leaders"], "hull_vertices": hull, "determined_rows": int(det.sum()),
                "determined_agree": agree, "undetermined_agree": int(np.sum(a[~det] == np.array(pred["assignment"])[~det])),
                "collapse_to_leaders": collapse, "rank": lim["rank"]}
        case_ok = (lim["boolean_gap"] <= BOOLEAN_TOL and set(lim["leaders"]) <= set(pred["leaders"]) <= set(hull)
                   and agree == det.sum() and det.sum() > 0 and collapse <= 1e-3)
        ok &= case_ok
        (cases if A is not A_GENERAL else general).append(case)
    worst = max(c["boolean_gap"] for c in cases)
    return CheckResult(cid, _status(ok), {"worst_boolean_gap": worst,
                                          "determined_agree": sum(c["determined_agree"] for c in cases),
                                          "determined_rows": sum(c["determined_rows"] for c in cases),
                                          "worst_collapse": max(c["collapse_to_leaders"] for c in cases)},
                       "Boolean P; leaders in self-attending hull vertices; determined rows all predicted",
                       f"gap <= {BOOLEAN_TOL:g}, collapse <= 1e-3 of the spread",
                       {"cases": cases, "general_A": A_GENERAL.tolist(), "general_A_cases": general, "n": n,
                        "scale": scale, "t_end": t_end, "integrator": "rk4", "dt": DT,
                        "prediction_margin": pred["margin"]})


@claim(id="rd.polytope-leaders",
       title="V = I, A = I and a non-symmetric positive definite A: rescaled tokens collapse onto leaders (hull "
             "vertices), P(t) -> the predicted Boolean matrix",
       source=GLPR + ", V = I_d: convergence to the vertices of a polytope", note="rd-polytope-leaders.md")
def check_polytope_leaders() -> CheckResult:
    return polytope_leaders()


def one_dimensional_boolean(seeds=(0, 1, 2, 3, 4), n: int = 15, t_end: float = 10.0) -> CheckResult:
    """d = 1, V = A = 1: P(t_end) Boolean of rank <= 2, leaders among the two extreme tokens."""
    cid = "rd.one-dimensional-boolean"
    model = RdModel("softmax", 1, V=[[1.0]], A=[[1.0]])
    cases, ok = [], True
    for seed in seeds:
        X0 = np.random.default_rng(seed).standard_normal((n, 1))
        run = simulate_rd(model, X0, t_end, solver=Solver("rk4", dt=DT), save=SaveAt(every=10_000))
        lim = boolean_limit(run.P[-1])
        extremes = hull_vertices(X0)
        case_ok = lim["boolean_gap"] <= BOOLEAN_TOL and lim["rank"] <= 2 and set(lim["leaders"]) <= set(extremes)
        ok &= case_ok
        cases.append({"seed": seed, "boolean_gap": lim["boolean_gap"], "rank": lim["rank"],
                      "leaders": lim["leaders"], "extremes": extremes})
    return CheckResult(cid, _status(ok), {"worst_boolean_gap": max(c["boolean_gap"] for c in cases),
                                          "max_rank": max(c["rank"] for c in cases)},
                       "Boolean, rank <= 2, leaders = extreme tokens", f"gap <= {BOOLEAN_TOL:g}",
                       {"cases": cases, "n": n, "t_end": t_end, "integrator": "rk4", "dt": DT})


@claim(id="rd.one-dimensional-boolean", title="d = 1: P(t) becomes Boolean of rank <= 2, led by the extreme tokens",
       source=GLPR + ", d = 1: low-rank Boolean limit of the attention matrix", note="rd-one-dimensional-boolean.md")
def check_one_dimensional_boolean() -> CheckResult:
    return one_dimensional_boolean()


def hyperplanes(seeds=(0, 1, 2), n: int = 30, t_end: float = 10.0, V=V_HYPERPLANE) -> CheckResult:
    """Simple positive top eigenvalue: w^T z_i cluster on <= 3 values (hyperplanes {w^T z = c}), w^T V = l w^T."""
    cid = "rd.hyperplanes"
    model = RdModel("softmax", 2, V=V, A=np.eye(2))
    cases, ok = [], True
    for seed in seeds:
        X0 = np.random.default_rng(seed).standard_normal((n, 2))
        run = simulate_rd(model, X0, t_end, solver=Solver("rk4", dt=DT), save=SaveAt(times=[0.0, t_end / 2, t_end]),
                          keep_P=True)
        mid, end = hyperplane_coordinates(run.Z[1], V), hyperplane_coordinates(run.Z[-1], V)
        lim = boolean_limit(run.P[-1])
        codim = limit_codimension(run.Z[-1], lim["assignment"], scale=spread(run.Z[0]))
        rel = end["spread"] / end["range"]
        # the hyperplanes are not points: the spread across them stays O(1) in the orthogonal direction
        ortho = float(np.ptp(run.Z[-1] @ np.array([-end["normal"][1], end["normal"][0]])))
        case_ok = end["count"] <= 3 and rel <= 1e-3 and end["spread"] < mid["spread"] and ortho > 1e-2
        ok &= case_ok
        cases.append({"seed": seed, "hyperplanes": end["count"], "values": end["values"],
                      "relative_spread": rel, "spread_half_time": mid["spread"], "spread_end": end["spread"],
                      "orthogonal_extent": ortho, "codimension": codim["codimension"]})
    return CheckResult(cid, _status(ok), {"max_hyperplanes": max(c["hyperplanes"] for c in cases),
                                          "worst_relative_spread": max(c["relative_spread"] for c in cases)},
                       "<= 3 parallel hyperplanes {w^T z = c}, spread shrinking", "relative spread <= 1e-3",
                       {"cases": cases, "V": np.asarray(V).tolist(), "n": n, "t_end": t_end, "integrator": "rk4",
                        "dt": DT})


@claim(id="rd.hyperplanes",
       title="V with a simple positive top eigenvalue: rescaled tokens cluster on at most three parallel hyperplanes",
       source=GLPR + ", simple positive top eigenvalue of V: hyperplanes", note="rd-hyperplanes.md")
def check_hyperplanes() -> CheckResult:
    return hyperplanes()


def well_posedness(seeds=(0, 1), n: int = 20, t_end: float = 1.0, R0: float = 0.5, adversarial_starts: int = 1,
                   adversarial_evals: int = 40) -> CheckResult:
    """Radius <= e^{t ||V||} R_0 and W_2(t)/W_2(0) <= C(t) on random and adversarial initial measures."""
    cid = "rd.well-posedness"
    V = np.array([[1.0, 0.2], [-0.3, 0.8]])
    A = np.array([[0.8, 0.3], [-0.2, 0.5]])
    model = RdModel("softmax", 2, V=V, A=A)
    cases, ok, worst_radius, worst_log_gap = [], True, 0.0, np.inf
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X0 = rng.standard_normal((n, 2))
        X0 *= R0 / np.max(np.linalg.norm(X0, axis=1))
        Y0 = X0 + 0.01 * rng.standard_normal((n, 2))
        r = stability_ratios(model, X0, Y0, t_end, dt=DT, p=2.0, every=8, backend="pot")
        # t = 0 is excluded: both ratios are 1 there by definition
        radius_ratio = float(np.max(r["radius"][1:] / r["radius_bound"][1:]))
        log_gap = float(np.min(r["log_constant"][1:] - np.log(r["ratio"][1:])))
        worst_radius, worst_log_gap = max(worst_radius, radius_ratio), min(worst_log_gap, log_gap)
        ok &= radius_ratio <= 1.0 + 1e-12 and log_gap >= 0.0
        cases.append({"seed": seed, "max_radius_over_bound": radius_ratio, "final_ratio": float(r["ratio"][-1]),
                      "log_C_end": float(r["log_constant"][-1]), "min_log_C_minus_log_ratio": log_gap})
    # the radius bound is attained: symmetric V, all tokens at R0 u (u its top eigenvector, spread 1e-9), so
    # x(t) = e^{tV} x0 = e^{t |V|} x0; any error in the dynamics moves R(t)/bound off 1
    Vs = np.array([[1.0, 0.2], [0.2, 0.8]])
    u = np.linalg.eigh(Vs)[1][:, -1]
    xi = np.random.default_rng(0).standard_normal((n, 2))

    def tight_deviation(spread: float, dt: float, every: int) -> np.ndarray:
        X0 = R0 * u + spread * xi
        r = stability_ratios(RdModel("softmax", 2, V=Vs, A=A), X0, X0 + 1e-3, t_end, dt=dt, every=every)
        return r["radius"] / r["radius_bound"] - 1.0

    dev = tight_deviation(1e-9, DT, 8)
    tight = float(np.max(np.abs(dev)))
    # the deviation's sources, estimated a posteriori: the tokens' spread (the others pull the outermost token
    # inwards, to first order in the spread: rerun at twice the spread) and RK4 (step doubling, order 4: the
    # change over 15). Tolerance: 10x their sum, floored at 1e-12 for the rounding of e^{t|V|}
    spread_part = float(np.max(np.abs(tight_deviation(2e-9, DT, 8) - dev)))
    rk4_part = float(np.max(np.abs(tight_deviation(1e-9, 2 * DT, 4) - dev))) / 15.0
    tight_tol = max(10.0 * (spread_part + rk4_part), 1e-12)
    ok &= tight <= tight_tol and float(np.max(dev)) <= 1e-12
    adv = adversarial_search(model, 4, t_end, R0=R0, starts=adversarial_starts, max_evals=adversarial_evals, seed=7)
    adv_gap = adv["log_constant"] - np.log(adv["ratio"])
    ok &= adv_gap >= 0.0
    worst_log_gap = min(worst_log_gap, adv_gap)
    return CheckResult(cid, _status(ok), {"max_radius_over_bound": worst_radius, "tight_case_deviation": tight,
                                          "adversarial_ratio": adv["ratio"], "log_C": adv["log_constant"],
                                          "min_log10_slack": float(worst_log_gap / np.log(10))},
                       "radius <= e^{t|V|} R0 (attained in the tight case); W_2 ratio <= C(t)",
                       f"radius ratio <= 1 + 1e-12, tight case |ratio - 1| <= {tight_tol:.2g} (10x the a-posteriori "
                       "estimate: spread doubled + RK4 step doubling); log C - log ratio >= 0",
                       {"cases": cases, "tight_case": {"deviation": tight, "tolerance": tight_tol,
                                                       "spread_estimate": spread_part, "rk4_estimate": rk4_part}, "adversarial": {"ratio": adv["ratio"], "evaluations": adv["evaluations"],
                                                        "log_C": adv["log_constant"], "X0": adv["X0"].tolist(),
                                                        "eps": adv["eps"]},
                        "V": V.tolist(), "A": A.tolist(), "R0": R0, "t_end": t_end, "p": 2.0, "ot": "pot (ot.emd2)",
                        "integrator": "rk4", "dt": DT})


@claim(id="rd.well-posedness",
       title="support radius <= e^{int |V|} R0 and W_2(t)/W_2(0) <= C(T, R0) on random and adversarial measures",
       source=CACP + ", well-posedness and Wasserstein stability", note="rd-well-posedness.md")
def check_well_posedness() -> CheckResult:
    return well_posedness()


@claim(id="rd.well-posedness-search", default=False,
       title="the same bounds against a longer adversarial search (3 starts x 150 evaluations, 3 random measures)",
       source=CACP + ", well-posedness and Wasserstein stability", note="rd-well-posedness.md")
def check_well_posedness_search() -> CheckResult:
    res = well_posedness(seeds=(0, 1, 2), adversarial_starts=3, adversarial_evals=150)
    return CheckResult("rd.well-posedness-search", res.status, res.measured, res.expected, res.tolerance, res.details)


@claim(id="rd.codimension-survey", default=False,
       title="codimension of the limit set for V outside the proved cases (measured; the conjecture is not decided)",
       source=GLPR + ", general value matrices (conjectured limit geometry)", note="rd-hyperplanes.md")
def check_codimension_survey() -> CheckResult:
    from numerics.rd.conjectures import CATALOGUE, codimension_survey

    rows = codimension_survey()
    return CheckResult("rd.codimension-survey", "inconclusive", {r["case"] + f" seed {r['seed']}": r["codimension"]
                                                                 for r in rows},
                       "heuristic: codimension = number of eigenvalues of V with Re > 0", "none (measurement)",
                       {"rows": rows, "catalogue": {k: list(v) for k, v in CATALOGUE.items()}, "integrator": "rk4"})


from numerics.rd import frank_wolfe_claims  # noqa: E402, F401  (rd.frank-wolfe-*: arXiv 2508.09628)
