"""Claims on Gaussian solutions of the transformer PDE in R^d (CACP, arXiv 2501.18322)."""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import expm

from numerics.gaussian.solutions import (
    ATTENTIONS,
    BLOWUP_FACTOR,
    K_STANDARD_ERRORS,
    compare_particles_to_ode,
    gaussian_attention,
    moment_rhs,
    particle_velocity,
    scalar_closed_form,
    simulate_particles,
    softmax_blowup_time,
    softmax_identity_value_closed_form,
    softmax_low_rank_limit,
    solve_moment_ode,
    velocity_by_quadrature,
)
from numerics.common.verification import CheckResult, claim
from numerics.gaussian.verdict import POWER_MIN_MOTION

SOURCE = "arXiv 2501.18322 (CACP), Gaussian solutions"

# d = 2 scenario shared by the particle checks (fixed, not tuned: moderate anisotropy, non-symmetric A and V)
MEAN0 = np.array([0.5, -0.3])
COV0 = np.array([[1.0, 0.3], [0.3, 0.6]])
A0 = np.array([[0.8, 0.3], [-0.2, 0.5]])
V0 = np.array([[1.0, 0.2], [-0.3, 0.8]])
Q0 = np.array([[1.0, 0.2], [0.1, 0.9]])
K0 = np.array([[0.7, -0.1], [0.3, 0.8]])


def _model(attention, d=2, A=A0, V=V0, Q=Q0, K=K0):
    if attention == "l2":
        return gaussian_attention(attention, d, V=V, Q=Q, K=K)
    return gaussian_attention(attention, d, V=V, A=A)


def _random_problem(rng, d):
    L = rng.normal(size=(d, d)) * 0.6
    return (rng.normal(size=d) * 0.5, L @ L.T + 0.3 * np.eye(d), rng.normal(size=(d, d)) * 0.7,
            rng.normal(size=(d, d)), rng.normal(size=(d, d)) * 0.6, rng.normal(size=(d, d)) * 0.6)


@claim(id="gaussian.ode-vs-quadrature",
       title="derived Gaussian moment ODEs = quadrature of the velocity field (softmax, L2, Sinkhorn)",
       source=SOURCE + ", Gaussian closure for each attention", note="gaussian-ode-vs-quadrature.md")
def check_ode_vs_quadrature() -> CheckResult:
    # Tensor Gauss-Hermite quadrature of Gamma from its definition (a discrete Sinkhorn plan on the weighted
    # nodes for Sinkhorn) integrates exponential-of-quadratic integrands to ~1e-14 at these node counts (tested
    # against 40-60 nodes); 1e-8 relative leaves a wide margin and still catches any wrong term (O(1) errors).
    rng = np.random.default_rng(20250130)
    tol, worst, cases = 1e-8, 0.0, []
    for case in range(2):
        alpha, Sigma, A, V, Q, K = _random_problem(rng, 2)
        for attention in ATTENTIONS:
            model = _model(attention, 2, A, V, Q, K)
            da, dS = moment_rhs(model, alpha, Sigma)
            qa, qS = velocity_by_quadrature(model, alpha, Sigma, nodes=16 if attention == "sinkhorn" else 30)
            scale = max(1.0, float(np.max(np.abs(np.concatenate([da, dS.ravel()])))))
            err = float(max(np.max(np.abs(da - qa)), np.max(np.abs(dS - qS)))) / scale
            worst = max(worst, err)
            cases.append({"case": case, "attention": attention, "relative_error": err})
    status = "passed" if worst <= tol else "failed"
    return CheckResult("gaussian.ode-vs-quadrature", status, worst, 0.0, f"<= {tol:g}",
                       {"cases": cases, "d": 2, "seed": 20250130,
                        "quadrature": "tensor Gauss-Hermite, 30 nodes/axis (16 for Sinkhorn, plan to 1e-13)"})


def _particle_check(claim_id, runs):
    worst, motion, details = 0.0, math.inf, []
    for attention, n, method, t_end, steps in runs:
        model = _model(attention)
        run = simulate_particles(model, MEAN0, COV0, t_end, n=n, steps=steps, seed=7, method=method,
                                 sinkhorn_tol=1e-8)
        cmp = compare_particles_to_ode(model, run, MEAN0, COV0)
        worst = max(worst, cmp["max_deviation_in_standard_errors"])
        motion = min(motion, cmp["motion_in_standard_errors"])
        details.append({"attention": attention, "n": n, "integrator": method, "t_end": t_end, "steps": steps,
                        "max_deviation_in_standard_errors": cmp["max_deviation_in_standard_errors"],
                        "motion_in_standard_errors": cmp["motion_in_standard_errors"],
                        "empirical_mean": cmp["mean"].tolist(), "predicted_mean": cmp["predicted_mean"].tolist(),
                        "empirical_cov": cmp["cov"].tolist(), "predicted_cov": cmp["predicted_cov"].tolist(),
                        "ode_mean": cmp["ode_mean"].tolist(), "ode_cov": cmp["ode_cov"].tolist(),
                        **({"sinkhorn_iterations": run.meta["sinkhorn_iterations"]}
                           if attention == "sinkhorn" else {})})
    # power: a comparison within k standard errors says nothing unless the prediction itself moved by many of
    # them (a model that predicts no motion at all must be far outside the band)
    powerful = motion >= POWER_MIN_MOTION
    status = "passed" if (worst <= K_STANDARD_ERRORS and powerful) else "failed"
    return CheckResult(claim_id, status, worst, 0.0,
                       f"<= {K_STANDARD_ERRORS:g} standard errors; motion >= {POWER_MIN_MOTION:g} standard errors",
                       {"runs": details, "seed": 7, "min_motion_in_standard_errors": motion,
                        "power_ok": powerful,
                        "compared": "empirical moments of simulate_particles vs layer_gaussian_map (layer) or "
                                    "moment_flow (rk4) from the population moments",
                        "standard_error": "Gaussian sampling distribution of the initial moments, propagated by "
                                          "the linearised moment map (delta method)",
                        "mean0": MEAN0.tolist(), "cov0": COV0.tolist(), "A": A0.tolist(), "V": V0.tolist(),
                        "Q": Q0.tolist(), "K": K0.tolist()})


# slow tier (issue 44: the default verify stays under 60 s of CPU): its mutants gauss-* are killed by the gaussian
# tests (proofs_notes/verification-power.md); five gaussian claims stay in the default run
@claim(id="gaussian.ode-vs-particles",
       title="particles from N(alpha, Sigma) follow the Gaussian closure, one residual layer (quick)",
       source=SOURCE + ", Gaussian closure vs particle system", note="gaussian-ode-vs-particles.md", default=False)
def check_ode_vs_particles() -> CheckResult:
    # One residual layer x <- x + h Gamma(x) (h = 0.5) is the one-step Euler map of the PDE; its Gaussian closure
    # is exact (layer_gaussian_map), so the comparison has no time-discretisation error. n = 10^4 for softmax
    # and L2; Sinkhorn at n = 2000 because each evaluation needs ~20 full log-domain Sinkhorn passes (the n = 10^4
    # Sinkhorn run is in gaussian.ode-vs-particles-rk4).
    return _particle_check("gaussian.ode-vs-particles",
                           [("softmax", 10000, "layer", 0.5, 1), ("l2", 10000, "layer", 0.5, 1),
                            ("sinkhorn", 2000, "layer", 0.5, 1)])


@claim(id="gaussian.ode-vs-particles-rk4",
       title="particles (n = 10^4, RK4) vs the moment ODE at t = 0.25 for all three attention types",
       source=SOURCE + ", Gaussian closure vs particle system", note="gaussian-ode-vs-particles.md", default=False)
def check_ode_vs_particles_rk4() -> CheckResult:
    # one RK4 step h = 0.25: the local error on the moments is O(h^5) ~ 1e-5 of the motion, far below one
    # standard error (~1e-2 at n = 10^4).
    return _particle_check("gaussian.ode-vs-particles-rk4",
                           [(a, 10000, "rk4", 0.25, 1) for a in ATTENTIONS])


#: the smallest tolerance of gaussian.softmax-closed-form (relative): rounding in the closed form
#: (Sigma_0^{-1} - 2t S_A)^{-1} at t*/2 and in the pole fit, ~4x the largest error measured at rtol 1e-11
#: (2.6e-12), so that a case whose a-posteriori estimate happens to cancel is not failed by rounding
_SOFTMAX_CF_FLOOR = 1e-11


@claim(id="gaussian.softmax-closed-form",
       title="softmax, V = I: Sigma(t) = (Sigma0^-1 - 2t S_A)^-1 solves the ODE; solver finds the blow-up time",
       source=SOURCE + ", traditional attention with V = I", note="gaussian-softmax-closed-form.md")
def check_softmax_closed_form() -> CheckResult:
    # Each case is solved twice up to its blow-up, saving t*/2 on the way: at the claim's settings (DOP853 rtol
    # 1e-11, the library's pole fit at BLOWUP_FACTOR) and once looser (rtol 1e-10, pole fit at BLOWUP_FACTOR/10).
    # The loose run's error is ~10x the tight run's (rtol; the fit's remainder grows like 1/factor^2), so the
    # change between the two estimates it a posteriori: the tolerance is 10x that estimate, floored at
    # _SOFTMAX_CF_FLOOR (rounding; proofs_notes/gaussian-softmax-closed-form.md)
    rng = np.random.default_rng(11)
    d = 3
    L = rng.normal(size=(d, d))
    cov0 = L @ L.T + 0.5 * np.eye(d)
    mean0 = rng.normal(size=d)
    A_sym = rng.normal(size=(d, d))
    A_sym = (A_sym + A_sym.T) / 2
    A_gen = rng.normal(size=(d, d))
    errors, estimates, tolerances = {}, {}, {}
    for name, A in (("symmetric A", A_sym), ("general A", A_gen)):
        model = gaussian_attention("softmax", d, V=np.eye(d), A=A)
        t_star = softmax_blowup_time(cov0, A)
        t_half = 0.5 * t_star
        a_cf, S_cf = softmax_identity_value_closed_form(mean0, cov0, A, t_half)
        tight = solve_moment_ode(model, mean0, cov0, 2 * t_star, save_times=[0.0, t_half], rtol=1e-11, atol=1e-13)
        loose = solve_moment_ode(model, mean0, cov0, 2 * t_star, save_times=[0.0, t_half], rtol=1e-10, atol=1e-12,
                                 blowup_factor=BLOWUP_FACTOR / 10)
        scale = float(np.max(np.abs(S_cf)))
        errors[f"{name}: cov at t*/2"] = float(np.max(np.abs(tight.covs[-1] - S_cf))) / scale
        estimates[f"{name}: cov at t*/2"] = float(np.max(np.abs(loose.covs[-1] - tight.covs[-1]))) / scale
        if a_cf is not None:
            scale = float(np.max(np.abs(a_cf)))
            errors[f"{name}: mean at t*/2"] = float(np.max(np.abs(tight.means[-1] - a_cf))) / scale
            estimates[f"{name}: mean at t*/2"] = float(np.max(np.abs(loose.means[-1] - tight.means[-1]))) / scale
        if tight.blowup_time is None or loose.blowup_time is None:
            errors[f"{name}: blow-up time"] = estimates[f"{name}: blow-up time"] = math.inf
        else:
            errors[f"{name}: blow-up time"] = abs(tight.blowup_time - t_star) / t_star
            estimates[f"{name}: blow-up time"] = abs(loose.blowup_time - tight.blowup_time) / t_star
        errors[f"{name}: t* (formula)"] = t_star
    for key, est in estimates.items():
        tolerances[key] = max(10.0 * est, _SOFTMAX_CF_FLOOR)
    # low-rank limit: S_A = U diag(-1, 0, 0) U^T (negative semi-definite, 2-dimensional kernel), A not symmetric
    U = np.linalg.qr(rng.normal(size=(d, d)))[0]
    A_nsd = U @ np.diag([-1.0, 0.0, 0.0]) @ U.T + 0.3 * np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 0]])  # + skew part
    limit = softmax_low_rank_limit(cov0, A_nsd)
    _, S_far = softmax_identity_value_closed_form(mean0, cov0, A_nsd, 1e7)
    model = gaussian_attention("softmax", d, V=np.eye(d), A=A_nsd)
    sol = solve_moment_ode(model, mean0, cov0, 50.0, save_times=[0.0, 50.0], rtol=1e-11, atol=1e-13)
    _, S50 = softmax_identity_value_closed_form(mean0, cov0, A_nsd, 50.0)
    errors["low rank: closed form at t=1e7 vs limit"] = float(np.max(np.abs(S_far - limit)))
    # the flow contracts onto the limit, so the solver's error stays at rounding: no loose run, the floor alone
    errors["low rank: solver vs closed form at t=50"] = (float(np.max(np.abs(sol.final_cov - S50)))
                                                         / float(np.max(np.abs(S50))))
    tolerances["low rank: solver vs closed form at t=50"] = _SOFTMAX_CF_FLOOR
    rank = int(np.sum(np.linalg.eigvalsh(limit) > 1e-10))
    ok = (all(errors[k] <= tol for k, tol in tolerances.items())
          and errors["low rank: closed form at t=1e7 vs limit"] <= 1e-6 and rank == 2)
    measured = max(v for k, v in errors.items() if "formula" not in k)
    worst_over_tol = max(errors[k] / tol for k, tol in tolerances.items())
    return CheckResult("gaussian.softmax-closed-form", "passed" if ok else "failed", measured, 0.0,
                       f"cov/mean at t*/2 and blow-up time (rel) <= max(10 x a-posteriori estimate, "
                       f"{_SOFTMAX_CF_FLOOR:g}) each (estimate: rerun at rtol 1e-10 and pole fit at "
                       f"BLOWUP_FACTOR/10); low-rank solver {_SOFTMAX_CF_FLOOR:g} rel; limit 1e-6 (O(1/t) at t=1e7)",
                       {"errors": errors, "error_estimates": estimates, "tolerances": tolerances,
                        "max_error_over_tolerance": worst_over_tol, "limit_rank": rank, "expected_rank": 2,
                        "d": d, "seed": 11})


@claim(id="gaussian.sinkhorn-mean",
       title="Sinkhorn: the mean moves as e^{tV} alpha0; no finite-time blow-up in the scalar case",
       source=SOURCE + ", Sinkhorn attention", note="gaussian-sinkhorn-mean.md")
def check_sinkhorn_mean() -> CheckResult:
    details = {}
    model = _model("sinkhorn")
    t = 1.0
    sol = solve_moment_ode(model, MEAN0, COV0, t, save_times=[0.0, t], rtol=1e-11, atol=1e-13)
    expected = expm(t * V0) @ MEAN0
    details["ode mean vs e^{tV} alpha0 (rel)"] = float(np.max(np.abs(sol.final_mean - expected)) / np.max(np.abs(expected)))
    # particles: the doubly stochastic attention conserves sum_i x_i up to V: mean(x + h Gamma) = (I + h V) mean(x)
    rng = np.random.default_rng(5)
    X = MEAN0 + rng.standard_normal((1500, 2)) @ np.linalg.cholesky(COV0).T
    vel = particle_velocity(model, X, sinkhorn_tol=1e-10)
    details["particle mean velocity vs V mean (abs)"] = float(np.max(np.abs(vel.mean(axis=0) - V0 @ X.mean(axis=0))))
    # scalar case: v a > 0 is the unstable direction; the softmax variance blows up at 1/(2 v a sigma0) = 0.5,
    # the Sinkhorn variance must not before t = 20 and must match the implicit closed form
    v, a, s0, a0 = 1.0, 1.0, 1.0, 0.7
    sk = gaussian_attention("sinkhorn", 1, V=[[v]], A=[[a]])
    sm = gaussian_attention("softmax", 1, V=[[v]], A=[[a]])
    T = 20.0
    sk_sol = solve_moment_ode(sk, [a0], [[s0]], T, save_times=[0.0, 5.0, T], rtol=1e-11, atol=1e-13)
    sm_sol = solve_moment_ode(sm, [a0], [[s0]], T, save_times=[0.0, T], rtol=1e-11, atol=1e-13)
    cf = [scalar_closed_form("sinkhorn", a0, s0, tt, v=v, a=a) for tt in (5.0, T)]
    details["scalar sinkhorn status"] = sk_sol.status
    details["scalar softmax blow-up time (expected 0.5)"] = sm_sol.blowup_time
    details["scalar sinkhorn sigma(20) vs closed form (rel)"] = (
        abs(sk_sol.covs[-1][0, 0] - cf[1][1]) / cf[1][1] if sk_sol.status == "completed" else math.inf)
    details["scalar sinkhorn sigma(5) vs closed form (rel)"] = (
        abs(sk_sol.covs[1][0, 0] - cf[0][1]) / cf[0][1] if sk_sol.status == "completed" else math.inf)
    details["scalar sinkhorn growth rate log(sigma(20)/sigma(5))/15 (expected -> 2 v sign(a) = 2)"] = (
        math.log(cf[1][1] / cf[0][1]) / 15.0)
    ok = (details["ode mean vs e^{tV} alpha0 (rel)"] <= 1e-9 and details["particle mean velocity vs V mean (abs)"] <= 1e-8
          and sk_sol.status == "completed" and details["scalar sinkhorn sigma(20) vs closed form (rel)"] <= 1e-8
          and details["scalar sinkhorn sigma(5) vs closed form (rel)"] <= 1e-8
          and sm_sol.status == "blow-up" and abs(sm_sol.blowup_time - 0.5) <= 1e-6)
    measured = max(details["ode mean vs e^{tV} alpha0 (rel)"], details["scalar sinkhorn sigma(20) vs closed form (rel)"])
    return CheckResult("gaussian.sinkhorn-mean", "passed" if ok else "failed", measured, 0.0,
                       "mean 1e-9 rel (ODE), 1e-8 abs (particles, Sinkhorn tol 1e-10); scalar closed form 1e-8 rel",
                       details)


#: replicate-spread bounds for the standard-error yardstick (see check_standard_error_yardstick)
SPREAD_BOUNDS = (0.6, 1.5)


def replicate_deviations(attention: str, n: int, seeds, t_end: float = 0.5) -> np.ndarray:
    """(replicates, statistics) array of (empirical - predicted) / SE for one residual layer, one row per seed."""
    model = _model(attention)
    rows = []
    for seed in seeds:
        run = simulate_particles(model, MEAN0, COV0, t_end, n=n, steps=1, seed=int(seed), method="layer",
                                 sinkhorn_tol=1e-8)
        rows.append(compare_particles_to_ode(model, run, MEAN0, COV0)["deviations_in_standard_errors"])
    return np.array(rows)


@claim(id="gaussian.standard-error-yardstick",
       title="replicate particle runs spread as the predicted standard error says (softmax, L2: ratio in [0.6, 1.5])",
       source=SOURCE + ", Gaussian closure vs particle system (yardstick of gaussian.ode-vs-particles)",
       note="gaussian-ode-vs-particles.md")
def check_standard_error_yardstick() -> CheckResult:
    """The yardstick of gaussian.ode-vs-particles checked on its own: 16 independent runs (seeds 100..115,
    n = 1000, one layer h = 0.5) give 16 deviations (empirical - predicted)/SE per statistic (2 means and 3
    covariance entries). If SE is right their sample standard deviation is 1: the pooled ratio
    sqrt(mean_statistics var_replicates) has about 5 x 15 = 75 degrees of freedom (fewer: the statistics are
    correlated), so its standard deviation is about 0.1-0.15 and [0.6, 1.5] is a ~3-4 sigma band. A doubled SE
    gives 0.5, a halved one 2. The replicate mean of each statistic (bias, in units of SE/sqrt(16)) is reported:
    at n = 1000 the softmax bias is below the noise here (the heavy-tail bias grows with n and time, see the note).
    """
    out, ok = {}, True
    seeds = range(100, 116)
    for attention in ("softmax", "l2"):
        Z = replicate_deviations(attention, 1000, seeds)
        var = np.var(Z, axis=0, ddof=1)
        ratio = float(np.sqrt(np.mean(var)))
        # the mean and the covariance statistics separately (2 x 15 and 3 x 15 degrees of freedom): a wrong SE
        # of one group alone must not hide in the pooled ratio
        groups = {"mean": float(np.sqrt(np.mean(var[:2]))), "cov": float(np.sqrt(np.mean(var[2:])))}
        bias = (Z.mean(axis=0) / (Z.std(axis=0, ddof=1) / math.sqrt(len(Z)))).tolist()
        out[attention] = {"spread_ratio": ratio, "spread_ratio_by_group": groups,
                          "bias_in_standard_errors_of_the_mean": bias}
        ok &= all(SPREAD_BOUNDS[0] <= r <= SPREAD_BOUNDS[1] for r in (ratio, *groups.values()))
    ratios = [r for v in out.values() for r in (v["spread_ratio"], *v["spread_ratio_by_group"].values())]
    worst = max(abs(math.log(r)) for r in ratios)
    return CheckResult("gaussian.standard-error-yardstick", "passed" if ok else "failed",
                       max(ratios, key=lambda r: abs(math.log(r))), 1.0,
                       f"in [{SPREAD_BOUNDS[0]}, {SPREAD_BOUNDS[1]}]",
                       {"compared": "sample standard deviation over 16 seeds of (empirical moments - "
                                    "layer_gaussian_map prediction) vs the delta-method standard error of "
                                    "compare_particles_to_ode", "n": 1000, "seeds": [100, 115], "h": 0.5,
                        "per_attention": out, "worst_abs_log_ratio": worst})
from numerics.gaussian import claims_ffn  # noqa: E402,F401  (registers gaussian.gaussian-ffn-regimes)
