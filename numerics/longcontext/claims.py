"""Claims on long contexts: beta_n = gamma log n (arXiv 2510.05554), a fixed query against n keys
(arXiv 2605.08505), the gap-counting scale (arXiv 2605.12697), and ``Model(beta_scaling="log")``.

Default (fast) claims:
- longcontext.simplex-critical-gamma: gamma_c = 1/(1 - rho) and the limits of the simplex layer, derived
  symbolically and reached by the exact finite-n map at n = 1e48;
- longcontext.simplex-reduction: the O(1) map equals the O(n^2 d) particle layer, the generated code and mpmath;
- longcontext.simplex-transition: the transition over n = 10 .. 1e12: midpoint log(n-1)/((1-rho) log n), width
  exactly 2 log 9 / ((1 - rho) log n), finite-size exponent -1 of the width of rho';
- longcontext.flow-transition: the sa flow from a simplex start has the same gamma_c (initial speed limits
  2 rho (1 - rho), rho (1 - rho), 0); the particle system under Model(beta_scaling="log") follows the reduced ODE;
- longcontext.beta-scaling-model: Model(beta_scaling="log", gamma) is Model(beta = gamma log n) bit for bit;
- longcontext.almost-simplex-finite-d: at n = 1e3 in R^64 the Monte Carlo gamma_1/2 matches the annealed
  prediction and is shifted above gamma_c;
- longcontext.fixed-query-critical-constant: C_d (E W_1 = 1/2 at beta = C_d n^{2/(d-1)}) by quadrature of the
  Poisson limit, by simulated Poisson processes, by exact order statistics at n = 1e6 and directly at n = 1e3;
- longcontext.gap-counting: the accumulation scale A_n by two routes, its four laws, and beta_1/2 / A_n bounded.
Slow (``attnflow verify --all``): longcontext.almost-simplex-scan, longcontext.fixed-query-regimes,
longcontext.gap-counting-limits.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.verification import CheckResult, claim
from numerics.longcontext import almost_simplex, fixed_query, flow, gaps, simplex
from numerics.longcontext import claims_at_birth  # noqa: F401  (registers longcontext.at-birth)

SOURCE_SIMPLEX = ("arXiv 2510.05554 (Chen, Lin, Polyanskiy, Rigollet, critical attention scaling), simplex model, "
                  "beta_n = gamma log n")
SOURCE_FIXED = "arXiv 2605.08505 (scaling limits of long-context transformers), fixed query vs n uniform keys"
SOURCE_GAPS = "arXiv 2605.12697 (Karakida, Hayase), gap-counting accumulation scale"
#: standard errors allowed between a Monte Carlo estimate and its prediction (a 4-sigma band: a false alarm
#: about once in 16,000 runs for a normal estimate)
K_SE = 4.0


def _status(ok: bool) -> str:
    return "passed" if ok else "failed"


# -- the simplex model -----------------------------------------------------------------------------------------------
@claim(id="longcontext.simplex-critical-gamma",
       title="simplex layer with beta = gamma log n: gamma_c = 1/(1 - rho); limits 0, 1/2, 1 of A_ii and of rho'",
       source=SOURCE_SIMPLEX + ", main theorem (critical scaling and the three regimes)",
       note="longcontext-simplex-critical-gamma.md")
def check_simplex_critical_gamma() -> CheckResult:
    import sympy as sp

    from theory import longcontext as lc

    cid = "longcontext.simplex-critical-gamma"
    symbolic = {
        "exponent": sp.simplify(lc.off_diagonal_mass_exponent() - (1 - lc.gamma * (1 - lc.rho))) == 0,
        "critical_gamma": sp.simplify(lc.critical_gamma_expr() - 1 / (1 - lc.rho)) == 0,
        "self_weights": lc.limit_self_weights() == {"subcritical": 0, "critical": sp.Rational(1, 2),
                                                    "supercritical": 1},
    }
    lims = lc.limit_inner_products_expr()
    no_residual = {k: sp.simplify(v.subs(lc.r, 0)) for k, v in lims.items()}
    symbolic["no_residual"] = (sp.simplify(no_residual["subcritical"] - 1) == 0
                               and sp.simplify(no_residual["critical"] - 4 * lc.rho / (1 + 3 * lc.rho)) == 0
                               and sp.simplify(no_residual["supercritical"] - lc.rho) == 0)
    # second route: the exact finite-n map (numerics) at n = 1e48 against the closed forms (theory); the
    # distance to the limit is O(n^{-1/2}) below (gamma = gamma_c / 2) and O(1/n) at and above
    worst, cases = 0.0, []
    for rho in (0.1, 0.5, 0.9):
        gc = lc.critical_gamma(rho)
        for alpha, q in ((0.0, 1.0), (1.0, 2.0)):
            closed = lc.limit_inner_products(rho, alpha, q)
            formula = {k: float(v.subs({lc.rho: rho, lc.r: alpha * math.sqrt(q)})) for k, v in lims.items()}
            for regime, g in zip(("subcritical", "critical", "supercritical"), (gc / 2, gc, 2 * gc)):
                layer = simplex.simplex_layer(1e48, g, rho, alpha, q)
                err = max(abs(float(layer.rho_out) - closed[regime]), abs(formula[regime] - closed[regime]),
                          abs(float(layer.p) - {"subcritical": 0, "critical": 0.5, "supercritical": 1}[regime]))
                worst = max(worst, err)
                cases.append({"rho": rho, "alpha": alpha, "q": q, "regime": regime, "gamma": g,
                              "rho_out_n1e48": float(layer.rho_out), "limit": closed[regime], "error": err})
    ok = all(symbolic.values()) and worst <= 1e-12
    return CheckResult(cid, _status(ok), worst, 0.0, "<= 1e-12 (and every symbolic identity proved)",
                       {"symbolic": symbolic, "critical_gamma": str(lc.critical_gamma_expr()),
                        "limits_no_residual": {k: str(v) for k, v in no_residual.items()},
                        "limits": {k: str(v) for k, v in lims.items()}, "cases": cases,
                        "compared": "sympy limits (theory.longcontext) vs the exact map at n = 1e48 "
                                    "(numerics.longcontext.simplex.simplex_layer)"})


@claim(id="longcontext.simplex-reduction",
       title="the O(1) simplex map = the O(n^2 d) particle layer = the generated code = mpmath",
       source=SOURCE_SIMPLEX + ", the simplex (equiangular) reduction of one layer",
       note="longcontext-simplex-reduction.md")
def check_simplex_reduction() -> CheckResult:
    from theory import longcontext as lc

    cid = "longcontext.simplex-reduction"
    derivations = {n: lc.simplex_layer_derivation(n).verify().status for n in (3, 4)}
    rng = np.random.default_rng(20251007)
    particle_worst, particle_cases = 0.0, []
    for n in (5, 50, 300):
        Y = simplex.simplex_tokens(n, 0.3, d=n + 3, rng=rng)
        for alpha in (0.0, 0.7):
            for g in (1.0, 1 / 0.7, 3.0):
                out = simplex.particle_layer(math.sqrt(2.0) * Y, g * math.log(n), alpha)
                q_out, rho_out, dev = simplex.gram_summary(out)
                red = simplex.simplex_layer(n, g, 0.3, alpha, 2.0)
                err = max(abs(q_out - float(red.q_out)) / float(red.q_out), abs(rho_out - float(red.rho_out)), dev)
                particle_worst = max(particle_worst, err)
                particle_cases.append({"n": n, "alpha": alpha, "gamma": g, "error": err})
    gen = lc.simplex_map_function()
    code_worst = 0.0
    for _ in range(40):
        n = float(10 ** rng.uniform(0.5, 9))
        g, rho, alpha, q = rng.uniform(0.2, 4), rng.uniform(0, 0.95), rng.uniform(0, 2), rng.uniform(0.5, 3)
        p_mp, q_mp, rho_mp = lc.simplex_layer_mp(n, g, rho, alpha, q)
        q_gen, rho_gen = gen(n, float(p_mp), rho, alpha * math.sqrt(q))
        red = simplex.simplex_layer(n, g, rho, alpha, q)
        code_worst = max(code_worst, abs(q_gen / float(q_mp) - 1), abs(rho_gen - float(rho_mp)),
                         abs(float(red.q_out) / float(q_mp) - 1), abs(float(red.rho_out) - float(rho_mp)),
                         abs(float(red.p) - float(p_mp)))
    worst = max(particle_worst, code_worst)
    ok = all(v == "proved" for v in derivations.values()) and particle_worst <= 1e-12 and code_worst <= 1e-12
    return CheckResult(cid, _status(ok), worst, 0.0, "<= 1e-12 (particles: relative q', absolute rho')",
                       {"derivations": derivations, "particle_error": particle_worst, "code_error": code_worst,
                        "particle_cases": particle_cases, "seed": 20251007,
                        "compared": "particle_layer (explicit rotated simplex tokens, O(n^2 d)) vs simplex_layer "
                                    "(O(1) spectral form) vs theory.longcontext.simplex_map_function (generated) "
                                    "vs simplex_layer_mp (mpmath, 50 digits)"})


@claim(id="longcontext.simplex-transition",
       title="the transition over n = 10 .. 1e12: midpoint log(n-1)/((1-rho) log n), width 2 log 9/((1-rho) log n)",
       source=SOURCE_SIMPLEX + ", the phase transition at finite n (sharpness)",
       note="longcontext-simplex-transition.md")
def check_simplex_transition() -> CheckResult:
    cid = "longcontext.simplex-transition"
    rho, alpha, q = 0.5, 1.0, 1.0
    ns = [10.0**k for k in range(1, 13)]
    rows = simplex.transition_table(ns, rho, alpha, q)
    mid_err = max(abs(r["gamma_half"] / (math.log(r["n"] - 1) / ((1 - rho) * math.log(r["n"]))) - 1) for r in rows)
    width_err = max(abs(r["width_p_log_n"] / (2 * math.log(9) / (1 - rho)) - 1) for r in rows)
    fit = simplex.width_scaling_fit([r for r in rows if r["n"] >= 1e3], "width_rho")
    slope_err = abs(fit["slope"] + 1.0)
    ok = mid_err <= 1e-12 and width_err <= 1e-9 and slope_err <= 0.01
    return CheckResult(cid, _status(ok), {"midpoint": mid_err, "width_p": width_err, "slope_rho": fit["slope"]},
                       {"midpoint": 0.0, "width_p": 0.0, "slope_rho": -1.0},
                       "midpoint 1e-12 rel, width 1e-9 rel, slope +- 0.01",
                       {"rho": rho, "alpha": alpha, "q": q, "rows": rows, "fit": fit,
                        "meaning": "the transition sharpens only like 1/log n; the width of rho' has the same "
                                   "finite-size exponent (-1 in log n) beyond n = 1e3"})


# the reduced ODE's stated accuracy (numerics.longcontext.flow.RTOL/ATOL as documented): the flow-transition check
# budgets its error from these numbers, not from the module's, so loosening the module's rtol fails the check
_REDUCED_RTOL, _REDUCED_ATOL = 1e-12, 1e-14


@claim(id="longcontext.flow-transition",
       title="sa flow from a simplex start, beta = gamma log n: initial speed -> 2 rho(1-rho), rho(1-rho), 0",
       source=SOURCE_SIMPLEX + "; equiangular ODE of GLPR arXiv 2312.10794 / survey arXiv 2512.01868",
       note="longcontext-flow-transition.md")
def check_flow_transition() -> CheckResult:
    import sympy as sp

    from theory import longcontext as lc
    from theory import symbols as sym
    from theory.codegen import compile_function

    cid = "longcontext.flow-transition"
    limits = lc.flow_speed_limits()
    expected = {"subcritical": 2 * lc.rho * (1 - lc.rho), "critical": lc.rho * (1 - lc.rho),
                "supercritical": sp.Integer(0)}
    symbolic_ok = all(sp.simplify(limits[k] - expected[k]) == 0 for k in expected)
    F = compile_function("flow_speed", (sym.n, lc.gamma, lc.rho), lc.flow_speed(),
                         doc="sa equiangular speed at beta = gamma log n; arguments n, gamma, rho")
    rng = np.random.default_rng(7)
    code_err = 0.0
    for _ in range(30):
        n, g, rho = float(10 ** rng.uniform(0.5, 6)), rng.uniform(0.2, 4), rng.uniform(0.01, 0.95)
        code_err = max(code_err, abs(float(flow.flow_speed(rho, n, g)) / float(F(n, g, rho)) - 1))
    limit_err = 0.0
    for rho in (0.25, 0.5, 0.75):
        gc = 1 / (1 - rho)
        for regime, g in zip(expected, (gc / 2, gc, 2 * gc)):
            limit = float(expected[regime].subs(lc.rho, rho))
            limit_err = max(limit_err, abs(float(flow.flow_speed(rho, 1e24, g)) - limit))
    times = np.linspace(0.0, 2.0, 9)
    particle_err, spread, runs, over_tol = 0.0, 0.0, [], 0.0
    for g in (1.0, 2.0, 4.0):  # rho = 0.5: gamma_c = 2
        P = flow.particle_trajectory(32, g, 0.5, times, dt=0.01, seed=3)
        R = flow.reduced_trajectory(32, g, 0.5, times)
        err = float(np.max(np.abs(P["mean"] - R)))
        # the two errors, estimated: RK4's by step doubling (order 4: the change from dt 0.02 to 0.01 is 15x the
        # error at 0.01), the reduced ODE's by the rtol/atol it is run at (stated here, not read from the module,
        # so that a loosened rtol cannot loosen its own check). Tolerance: 10x their sum
        P2 = flow.particle_trajectory(32, g, 0.5, times, dt=0.02, seed=3)
        rk4_est = float(np.max(np.abs(P2["mean"] - P["mean"]))) / 15.0
        tol = 10.0 * (rk4_est + _REDUCED_RTOL * float(np.max(np.abs(R))) + _REDUCED_ATOL)
        particle_err, spread = max(particle_err, err), max(spread, float(np.max(P["spread"])))
        over_tol = max(over_tol, err / tol)
        runs.append({"gamma": g, "beta": P["beta"], "max_error": err, "rk4_estimate": rk4_est, "tolerance": tol,
                     "s_final": float(R[-1]),
                     "meta_beta_scaling": P["meta"].get("beta_scaling"), "meta_gamma": P["meta"].get("gamma")})
    ok = symbolic_ok and code_err <= 1e-12 and limit_err <= 1e-10 and over_tol <= 1.0 and spread <= 1e-12
    return CheckResult(cid, _status(ok), max(particle_err, limit_err), 0.0,
                       "particles vs reduced ODE <= 10 x (RK4 step-doubling estimate + rtol 1e-12 |s| + atol) per "
                       f"gamma (largest {max(r['tolerance'] for r in runs):.2g}), F at n = 1e24 vs limits <= 1e-10, "
                       "code 1e-12",
                       {"particle_error_over_tolerance": over_tol, "symbolic_limits": {k: str(v) for k, v in limits.items()}, "symbolic_ok": symbolic_ok,
                        "code_error": code_err, "limit_error_n1e24": limit_err, "particle_error": particle_err,
                        "equiangular_spread": spread, "runs": runs, "n": 32, "rho": 0.5,
                        "compared": "simulate(Model('sa', beta_scaling='log', gamma)) (rk4 dt 0.01, backend direct, "
                                    "32 rotated simplex tokens in R^33) vs the reduced ODE (DOP853, rtol 1e-12)"})


@claim(id="longcontext.beta-scaling-model",
       title="Model(beta_scaling='log', gamma) is Model(beta = gamma log n) bit for bit (field, simulate, resume)",
       source=SOURCE_SIMPLEX + " (beta_n = gamma log n); attnflow's model object (docs/design.md)",
       note="longcontext-beta-scaling-model.md")
def check_beta_scaling_model() -> CheckResult:
    from numerics.common.errors import InputError
    from numerics.core.blocks import MultiHead
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import resume, simulate, uniform_sphere

    cid = "longcontext.beta-scaling-model"
    mismatches, cases = [], []
    rng = np.random.default_rng(11)
    heads = MultiHead(Q=rng.normal(size=(2, 2, 3)), K=rng.normal(size=(2, 2, 3)), V=rng.normal(size=(2, 2, 3)),
                      W=rng.normal(size=(2, 2, 3)))
    for kind in ("sa", "usa"):
        for n, d, backend, extra in ((3, 3, "direct", {}), (17, 2, "fourier", {}), (200, 4, "direct", {}),
                                     (9, 3, "direct", {"heads": heads}), (12, 3, "direct", {"causal": True})):
            X = uniform_sphere(n, d, seed=n)
            g = 0.8
            f_log, b_log = Model(kind, beta_scaling="log", gamma=g, **extra).vector_field(n, d, backend)
            f_fix, b_fix = Model(kind, g * math.log(n), **extra).vector_field(n, d, backend)
            same = b_log == b_fix and np.array_equal(f_log(X), f_fix(X))
            cases.append({"kind": kind, "n": n, "d": d, "backend": b_log, "architecture": sorted(extra), "same": same})
            if not same:
                mismatches.append(cases[-1])
    X0 = uniform_sphere(24, 3, seed=5)
    solver = Solver("rk4", dt=0.05, backend="direct")
    a = simulate(Model("sa", beta_scaling="log", gamma=1.5), X0, 0.5, solver=solver, save=SaveAt(every=2))
    b = simulate(Model("sa", 1.5 * math.log(24)), X0, 0.5, solver=solver, save=SaveAt(every=2))
    sim_same = (np.array_equal(a.X, b.X) and np.array_equal(a.energy, b.energy) and a.meta["beta"] == b.meta["beta"]
                and a.meta.get("beta_scaling") == "log" and a.meta.get("gamma") == 1.5
                and "beta_scaling" not in b.meta)
    ra, rb = resume(a, 1.0), resume(b, 1.0)
    resume_same = np.array_equal(ra.X, rb.X) and np.array_equal(ra.energy, rb.energy)
    round_trip = Model.from_meta(a.meta).to_meta() == Model("sa", beta_scaling="log", gamma=1.5).to_meta()
    refusals = {}
    for label, make in (("no n", lambda: Model("sa", beta_scaling="log", gamma=1.0).effective_beta(None)),
                        ("gamma <= 0", lambda: Model("sa", beta_scaling="log", gamma=0.0)),
                        ("beta and gamma", lambda: Model("sa", 1.0, beta_scaling="log", gamma=1.0)),
                        ("spec without n", lambda: Model("sa", beta_scaling="log", gamma=1.0).to_spec(3))):
        try:
            make()
            refusals[label] = "accepted"
        except InputError as exc:
            refusals[label] = str(exc)
    refused = all(v != "accepted" for v in refusals.values())
    ok = not mismatches and sim_same and resume_same and round_trip and refused
    return CheckResult(cid, _status(ok), len(mismatches) + (not sim_same) + (not resume_same) + (not round_trip)
                       + (not refused), 0, "0 mismatches",
                       {"field_cases": cases, "simulate_same": sim_same, "resume_same": resume_same,
                        "meta_round_trip": round_trip, "refusals": refusals, "effective_beta": a.meta["beta"],
                        "compared": "bitwise: the log-scaled model against the fixed model at beta = gamma log n"})


@claim(id="longcontext.almost-simplex-finite-d",
       title="almost-simplex tokens in R^64, n = 1e3: gamma_1/2 = annealed prediction, shifted above 1/(1 - rho)",
       source=SOURCE_SIMPLEX + " (almost-simplex configurations at finite d; the construction is ours)",
       note="longcontext-almost-simplex.md")
def check_almost_simplex() -> CheckResult:
    return _almost_simplex("longcontext.almost-simplex-finite-d", [(1000, 64)], configurations=16, queries=8)


def _almost_simplex(cid: str, cases, configurations: int, queries: int, seed: int = 2025) -> CheckResult:
    rho = 0.5
    rows, worst_z, shifts_ok = [], 0.0, True
    for n, d in cases:
        s = almost_simplex.summarise(almost_simplex.crossing_gammas(n, d, rho, queries, configurations, seed))
        se = max(s["standard_error"], 1e-12)
        z = abs(s["gamma_half"] - s["annealed_gamma_half"]) / se
        shift = s["gamma_half"] - s["simplex_gamma_half"]
        shifts_ok &= shift > K_SE * se  # finite d moves the transition up, beyond the noise
        worst_z = max(worst_z, z)
        rows.append({**s, "z_annealed": z, "z_quenched": abs(s["gamma_half"] - s["quenched_gamma_half"]) / se,
                     "shift_above_simplex": shift})
    ok = worst_z <= K_SE and shifts_ok
    return CheckResult(cid, _status(ok), round(worst_z, 3), 0.0, f"|z| <= {K_SE:g} (and a shift > {K_SE:g} SE)",
                       {"rho": rho, "rows": rows, "seed": seed, "configurations": configurations,
                        "queries": queries, "compared": "Monte Carlo (almost_simplex.crossing_gammas) vs the annealed "
                                                        "root of (n - 1) e^{-b} M_{d-1}(b) = 1"})


@claim(id="longcontext.almost-simplex-scan", default=False,
       title="almost-simplex scan n = 1e2 .. 1e6, d = 32 and 128: gamma_1/2 vs annealed; shift ~ log n / (2(d-1))",
       source=SOURCE_SIMPLEX + " (finite n and d)", note="longcontext-almost-simplex.md")
def check_almost_simplex_scan() -> CheckResult:
    cases = [(n, d) for d in (32, 128) for n in (100, 1000, 10**4, 10**5, 10**6)]
    return _almost_simplex("longcontext.almost-simplex-scan", cases, configurations=8, queries=4)


# -- a fixed query against n keys ------------------------------------------------------------------------------------
@claim(id="longcontext.fixed-query-critical-constant",
       title="fixed query vs n uniform keys: C_d (E W_1 = 1/2 at beta = C_d n^{2/(d-1)}) by four routes",
       source=SOURCE_FIXED + ", the critical regime (a constant the paper leaves open)",
       note="longcontext-fixed-query-critical-constant.md")
def check_fixed_query_constant() -> CheckResult:
    from scipy import integrate
    from scipy.special import exp1

    from theory import longcontext as lc

    cid = "longcontext.fixed-query-critical-constant"
    kappa_err = max(abs(fixed_query.poisson_constant(d) / float(lc.poisson_constant(d)) - 1) for d in (2, 3, 4, 5, 8))
    quad_err = 0.0
    for d, c in ((2, 0.04), (5, 1.85)):
        quad_err = max(quad_err, abs(fixed_query.poisson_top_weight(d, c)
                                     - fixed_query.poisson_top_weight(d, c, nodes=(96, 90, 144))))
    # d = 3: the Poisson process is homogeneous (rate kappa = 1/2): E W_1 = int e^{-l - kappa Ein(l)/c} dl
    ein = (lambda lam: np.euler_gamma + math.log(lam) + float(exp1(lam)))
    one_d = integrate.quad(lambda lam: math.exp(-lam - 0.5 * ein(lam) / 0.4) if lam > 0 else 1.0, 0, np.inf,
                           limit=200)[0]
    quad_err = max(quad_err, abs(one_d - fixed_query.poisson_top_weight(3, 0.4)))
    rows, worst_z = [], 0.0
    for d in (2, 3):
        C = fixed_query.poisson_half_constant_quadrature(d)
        estimates = [fixed_query.poisson_half_constant(d, 4000, seed=1),
                     fixed_query.finite_n_half_constant(10**6, d, 2000, seed=2, route="order"),
                     fixed_query.finite_n_half_constant(1000, d, 400, seed=3, route="direct")]
        for est in estimates:
            z = abs(est["constant"] - C) / est["standard_error"]
            worst_z = max(worst_z, z)
            rows.append({"d": d, "quadrature": C, "route": est["route"], "n": est.get("n"),
                         "estimate": est["constant"], "standard_error": est["standard_error"], "z": z,
                         "replicates": est["replicates"], "seed": est["seed"]})
    ok = kappa_err <= 1e-14 and quad_err <= 1e-10 and worst_z <= K_SE
    return CheckResult(cid, _status(ok), round(worst_z, 3), 0.0,
                       f"|z| <= {K_SE:g}; kappa 1e-14; quadrature 1e-10",
                       {"constants": {d: fixed_query.poisson_half_constant_quadrature(d) for d in (2, 3)},
                        "kappa_error": kappa_err, "quadrature_error": quad_err, "rows": rows,
                        "compared": "Poisson-limit quadrature (Mecke formula) vs simulated Poisson processes vs exact "
                                    "top order statistics at n = 1e6 vs all n = 1e3 keys"})


@claim(id="longcontext.fixed-query-regimes", default=False,
       title="fixed query: E W_1 -> 0 below n^{2/(d-1)}, -> 1 above, stays at 1/2 at C_d n^{2/(d-1)} (n to 1e12)",
       source=SOURCE_FIXED + ", the three regimes; the subcritical output I_{d/2}/I_{d/2-1} with Gaussian spread",
       note="longcontext-fixed-query-regimes.md")
def check_fixed_query_regimes() -> CheckResult:
    cid = "longcontext.fixed-query-regimes"
    rows, problems = [], []
    for d in (3, 5):
        C = fixed_query.poisson_half_constant_quadrature(d)
        a = fixed_query.critical_exponent(d)
        table = []
        for n in (10**3, 10**6, 10**9, 10**12):
            top = fixed_query.TopKeys(n, d, 4000, np.random.default_rng([9, d, n % 997]))
            entry = {"n": n}
            for label, beta in (("below", float(n) ** (0.5 * a)), ("at", C * float(n) ** a),
                                ("above", float(n) ** (1.5 * a))):
                W = top.top_weight(beta)
                entry[label] = (float(W.mean()), float(W.std(ddof=1) / math.sqrt(W.size)))
            table.append(entry)
            if abs(entry["at"][0] - 0.5) > K_SE * entry["at"][1] + 0.01:  # 0.01: the finite-n drift allowed
                problems.append(f"d={d} n={n}: E W_1 at C_d = {entry['at'][0]:.4f}")
        below, above = [e["below"][0] for e in table], [e["above"][0] for e in table]
        if not (all(np.diff(below) < 0) and below[-1] < 0.02 and all(np.diff(above) > 0) and above[-1] > 0.98):
            problems.append(f"d={d}: below {below}, above {above}")
        rows.append({"d": d, "C_d": C, "table": table})
    direct = fixed_query.direct_top_weight(10**6, 3, fixed_query.poisson_half_constant_quadrature(3) * 1e6, 200,
                                           seed=4)
    if abs(direct["top_weight"] - 0.5) > K_SE * direct["top_weight_se"]:
        problems.append(f"direct n = 1e6: E W_1 = {direct['top_weight']:.4f} +- {direct['top_weight_se']:.3f}")
    sub = fixed_query.subcritical_output(10**5, 3, 5.0, replicates=200, seed=6)
    if abs(sub["z"]) > K_SE or abs(sub["measured_sd"] / sub["predicted_sd"] - 1) > 0.25:
        ratio = sub["measured_sd"] / sub["predicted_sd"]
        problems.append(f"subcritical output: z = {sub['z']:.2f}, sd ratio {ratio:.3f}")
    return CheckResult(cid, _status(not problems), len(problems), 0, "0 problems",
                       {"rows": rows, "direct_n1e6": direct, "subcritical": sub, "problems": problems,
                        "sd_ratio_tolerance": "0.25 (200 replicates: the sd itself has ~5% sampling error)"})


# -- gap counting ----------------------------------------------------------------------------------------------------
def _scale_routes() -> tuple[float, float, list]:
    """Worst relative difference between A_n by hazard (closed form) and by the numeric sup, and between A_n and
    its leading law at n = 1e300 (the laws are asymptotic)."""
    worst, law_err, cases = 0.0, 0.0, []
    for name in gaps.FAMILIES:
        fam = gaps.ScoreFamily(name, rho=0.5, d=3)
        for n in (100, 10**4, 10**6):
            a, b = fam.accumulation_scale(n), fam.accumulation_scale_numeric(n)
            worst = max(worst, abs(a / b - 1))
            cases.append({"family": name, "n": n, "hazard": a, "numeric_sup": b, "law": fam.leading_law(n)})
    for name, d in (("flat-edge", 3), ("sphere", 3), ("sphere", 5), ("simplex", 3)):
        fam = gaps.ScoreFamily(name, rho=0.5, d=d)
        law_err = max(law_err, abs(fam.accumulation_scale(10**15) / fam.leading_law(10**15) - 1))
    return worst, law_err, cases


@claim(id="longcontext.gap-counting",
       title="gap counting: A_n by two routes; laws (2 log n)^{1/2}, log n, (log n)^2, n^{2/(d-1)}; beta_1/2 ~ A_n",
       source=SOURCE_GAPS + "; the four laws from arXiv 2510.05554, 2605.08505 and extreme-value theory",
       note="longcontext-gap-counting.md")
def check_gap_counting() -> CheckResult:
    import sympy as sp

    from theory import longcontext as lc

    cid = "longcontext.gap-counting"
    laws = lc.accumulation_scale_laws()
    nn, m, kap = sp.Symbol("n", positive=True), sp.Symbol("m", positive=True), sp.Symbol("kappa", positive=True)
    symbolic_ok = (sp.simplify(laws["flat-edge"] - sp.log(nn) ** 2) == 0
                   and sp.simplify(laws["sphere"] - m * (kap * nn) ** (1 / m)) == 0)
    worst, law_err, cases = _scale_routes()
    ratios = []
    for name in gaps.FAMILIES:
        fam = gaps.ScoreFamily(name, rho=0.5, d=3)
        for n in (100, 1000):
            r = gaps.measure_family(fam, n, 64, seed=3)
            ratios.append({k: r[k] for k in ("family", "n", "accumulation_scale", "beta_half", "ratio", "ratio_se")})
    lo, hi = min(r["ratio"] for r in ratios), max(r["ratio"] for r in ratios)
    ok = symbolic_ok and worst <= 1e-5 and law_err <= 1e-6 and 0.5 <= lo and hi <= 2.0
    return CheckResult(cid, _status(ok), {"scale_routes": worst, "ratio_range": [round(lo, 3), round(hi, 3)]},
                       {"scale_routes": 0.0, "ratio_range": "within [0.5, 2]"},
                       "A_n routes 1e-5 rel; laws at n = 1e15: 1e-6 rel; ratios in [0.5, 2]",
                       {"symbolic_laws": {k: str(v) for k, v in laws.items()}, "symbolic_ok": symbolic_ok,
                        "law_error_n1e15": law_err, "scale_cases": cases, "ratios": ratios, "rows_per_n": 64,
                        "seed": 3, "meaning": "A_n varies by four different laws; beta_1/2 tracks it within a "
                                              "factor of two for every family"})


@claim(id="longcontext.gap-counting-limits", default=False,
       title="gap counting: beta_1/2 / A_n -> 1 (simplex), c_G = 1.5492 (Gumbel tails), C_d/(m kappa^{1/m}) (sphere)",
       source=SOURCE_GAPS + "; Poisson-Dirichlet limit of the Gumbel domain; arXiv 2605.08505 (sphere)",
       note="longcontext-gap-counting.md")
def check_gap_counting_limits() -> CheckResult:
    cid = "longcontext.gap-counting-limits"
    out, problems = [], []
    for name in gaps.FAMILIES:
        fam = gaps.ScoreFamily(name, rho=0.5, d=3)
        results = [gaps.measure_family(fam, n, 200, seed=5) for n in (10**2, 10**3, 10**4, 10**5, 10**6)]
        limit = fam.limit_ratio()
        entry = {"family": name, "limit": limit,
                 "rows": [{k: r[k] for k in ("n", "ratio", "ratio_se", "entropy_half_scale", "entropy_double_scale")}
                          for r in results]}
        if name == "simplex":
            err = abs(results[-1]["ratio"] - math.log(10**6 - 1) / math.log(10**6))
            if err > 1e-12:
                problems.append(f"simplex ratio off by {err:.2g}")
        elif name == "sphere":  # converges fast (O(1/n) corrections for d = 3): the last two n within K_SE
            for r in results[-2:]:
                if abs(r["ratio"] - limit) > K_SE * r["ratio_se"]:
                    problems.append(f"sphere n = {r['n']}: {r['ratio']:.4f} +- {r['ratio_se']:.3f} vs {limit:.4f}")
        else:  # Gumbel domain: corrections ~ 1/log n; extrapolate c + b / log n over n = 1e3 .. 1e6
            fit = gaps.ratio_fit(results[1:])
            entry["fit"] = fit
            if abs(fit["intercept"] - limit) > K_SE * fit["intercept_se"]:
                problems.append(f"{name}: extrapolated {fit['intercept']:.3f} +- {fit['intercept_se']:.3f} "
                                f"vs c_G = {limit:.4f}")
        out.append(entry)
    return CheckResult(cid, "passed" if not problems else "inconclusive", len(problems), 0, "0 problems",
                       {"families": out, "problems": problems, "rows_per_n": 200, "seed": 5,
                        "status_rule": "inconclusive (not failed) when a limit is not reached within the window: the "
                                       "Gumbel-domain corrections are O(1/log n)"})
