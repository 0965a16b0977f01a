"""Claims of the common matrix noise (numerics.noise.common, theory.common_noise; notes
proofs_notes/noise-common-noise-orders.md and proofs_notes/noise-common-noise-lyapunov.md). Registered from
:mod:`numerics.noise.claims`.

- noise.common-noise-orders: the integrators against the derived one-point law: weak order (E<e_1, x(t)> against
  exp(-c (d-1) t)), strong order (against a fine-step run of the same Brownian path), and the Ito-Stratonovich
  correction (Euler-Maruyama on the Ito form with and without the derived drift -c (d-1) x).
- noise.common-noise-lyapunov: the measured synchronisation rate of two nearby tokens (no attention) against the
  derived top Lyapunov exponent -a, a = 2 sigma^2 (goe), sigma^2/d (values).
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.verification import CheckResult, claim

_SOURCE = ("Engel-Shalova arXiv 2603.06187 (abstract and introduction: the random quadratic form "
           "dX = -P_X o dQ X, Q = (B + B^T)/2; Brownian one-point motion, synchronising two-point motion); "
           "constants derived in theory.common_noise")
#: the test case: d, sigma, horizon
D, SIGMA, T = 3, 0.8, 1.0


def _status(ok: bool) -> str:
    return "passed" if ok else "failed"


def weak_errors(law: str = "goe", steps=(0.1, 0.05), samples: int = 60000, seed: int = 1) -> dict:
    """E<e_1, x(T)> - exp(-c (d-1) T) of projected Euler-Maruyama at each step, with standard errors."""
    from numerics.noise.common import diffusion_constant, mean_alignment

    exact = math.exp(-diffusion_constant(law, D, SIGMA) * (D - 1) * T)
    out = {"exact": exact, "dt": list(steps), "error": [], "se": []}
    for dt in steps:
        mean, se = mean_alignment(D, SIGMA, law, T, dt, samples, seed=seed)
        out["error"].append(mean - exact)
        out["se"].append(se)
    out["order"] = math.log2(out["error"][0] / out["error"][1]) if out["error"][1] > 0 else float("nan")
    return out


def strong_errors(scheme: str, law: str = "goe", fine: int = 128, coarsen=(16, 8, 4), samples: int = 400,
                  seed: int = 2, t: float = 0.5) -> dict:
    """E max_i |x_i^h(t) - x_i^fine(t)| for two tokens driven by one Brownian path at coarse steps k h_fine."""
    from numerics.core.sampling import uniform_sphere
    from numerics.noise.common import brownian_paths, run_paths

    X0 = uniform_sphere(samples * 2, D, seed).reshape(samples, 2, D)
    xi = brownian_paths(fine, D, samples, seed + 1)
    ref = run_paths(X0, t, xi, SIGMA, law, scheme, 1)
    errs = [float(np.mean(np.max(np.linalg.norm(run_paths(X0, t, xi, SIGMA, law, scheme, k) - ref, axis=-1),
                                 axis=-1))) for k in coarsen]
    h = [t * k / fine for k in coarsen]
    order = float(np.polyfit(np.log(h), np.log(errs), 1)[0])
    return {"scheme": scheme, "h": h, "error": errs, "order": order}


def ito_correction(law: str = "goe", dt: float = 0.02, samples: int = 40000, seed: int = 3) -> dict:
    """Euler-Maruyama on the Ito form, with the derived drift -c (d-1) x and without it: the mean |x(T)|^2
    (1 with it; 1 + 2 c (d-1) T to first order without) and E<e_1, x(T)> against the closed form.

    With the drift the run is repeated at step 2 dt (seed + 1, independent): Euler-Maruyama's weak error is
    O(dt), so ``extrapolated`` = 2 f(dt) - f(2 dt) removes it (O(dt^2) left) and its standard error
    sqrt(4 se(dt)^2 + se(2 dt)^2) is the whole window (issue 43: no fixed allowance for the bias)."""
    from numerics.noise.common import diffusion_constant, ito_paths

    c = diffusion_constant(law, D, SIGMA)
    with_it = ito_paths(D, SIGMA, law, T, dt, samples, seed, correction=True)
    coarse = ito_paths(D, SIGMA, law, T, 2 * dt, samples, seed + 1, correction=True)
    extrapolated = {}
    for key in ("norm2", "alignment"):
        extrapolated[key] = 2 * with_it[key] - coarse[key]
        extrapolated[key + "_se"] = math.hypot(2 * with_it[key + "_se"], coarse[key + "_se"])
    without = ito_paths(D, SIGMA, law, T, dt, samples, seed, correction=False)
    return {"c": c, "exact_alignment": math.exp(-c * (D - 1) * T), "with": with_it, "with_coarse": coarse,
            "extrapolated": extrapolated, "without": without,
            "predicted_norm2_without": 1 + 2 * c * (D - 1) * T}


# slow tier (issue 44: the default verify stays under 60 s of CPU): the mutants common-noise-* and random-weights-*
# are killed by tests/numerics/test_common_noise.py and tests/theory/test_common_noise_theory.py;
# noise.common-noise-dissipation stays in the default run
@claim(id="noise.common-noise-orders",
       title="common matrix noise: projected Euler-Maruyama has weak order 1 against E<e, x(t)> = "
             "exp(-c (d-1) t), c = sigma^2/2; Euler-Maruyama and Heun strong order 1/2 on one Brownian path; "
             "the Ito form needs exactly the derived drift -c (d-1) x",
       source=_SOURCE, note="noise-common-noise-orders.md", default=False)
def check_common_noise_orders() -> CheckResult:
    weak = weak_errors()
    strong = {s: strong_errors(s) for s in ("projected-em", "heun")}
    ito = ito_correction()
    w, wo, x = ito["with"], ito["without"], ito["extrapolated"]
    flags = {
        # the errors stand out of the sampling noise (5 SE) and halve with the step (order 1 within 0.4)
        "weak_resolved": all(abs(e) > 5 * s for e, s in zip(weak["error"], weak["se"])),
        "weak_order": abs(weak["order"] - 1.0) < 0.4,
        "strong_order": all(abs(r["order"] - 0.5) < 0.2 for r in strong.values()),
        # the Ito form with the derived drift keeps |x| = 1 on average and matches the one-point law; without it
        # |x|^2 grows like 1 + 2 c (d-1) t. The scheme's O(dt) bias (0.008 in |x|^2, 11 SE) is removed by
        # Richardson extrapolation from dt and 2 dt, not allowed for by a fixed 0.01 (issue 43)
        "ito_norm": abs(x["norm2"] - 1) < 4 * x["norm2_se"],
        "ito_alignment": abs(x["alignment"] - ito["exact_alignment"]) < 4 * x["alignment_se"],
        "ito_without": abs(wo["norm2"] - ito["predicted_norm2_without"]) < 0.1 * (ito["predicted_norm2_without"] - 1),
    }
    return CheckResult("noise.common-noise-orders", _status(all(flags.values())),
                       {"weak_order": weak["order"], "strong_order_em": strong["projected-em"]["order"],
                        "strong_order_heun": strong["heun"]["order"], "ito_norm2": w["norm2"],
                        "norm2_without_correction": wo["norm2"], "flags": flags},
                       {"weak_order": 1, "strong_order": 0.5, "ito_norm2": 1,
                        "norm2_without_correction": ito["predicted_norm2_without"]},
                       "weak order 1 +- 0.4 (errors > 5 SE); strong order 1/2 +- 0.2; |x|^2 = 1 and the alignment "
                       "within 4 SE of the Richardson extrapolation (dt, 2 dt) with the drift, 1 + 2c(d-1)T within "
                       "10% of the excess without",
                       {"weak": weak, "strong": strong, "ito": ito, "d": D, "sigma": SIGMA, "t": T, "law": "goe"})


def lyapunov_measurements(samples: int = 6000, dt: float = 0.01, t: float = 2.0, seed: int = 4) -> dict:
    """The rate at dt, Richardson-extrapolated twice with 2 dt and 4 dt on the same paths, with a mean-zero control
    variate."""
    from numerics.noise.common import angle_coefficient, lyapunov_rate_extrapolated

    out = {}
    for law in ("goe", "values"):
        r = lyapunov_rate_extrapolated(D, SIGMA, law, t, dt, samples, seed=seed, scheme="heun")
        out[law] = {"measured": r["rate"], "se": r["se"], "derived": -angle_coefficient(law, D, SIGMA),
                    "at_dt": r["fine"], "at_dt_se": r["fine_se"], "at_2dt": r["coarse"], "at_4dt": r["coarsest"],
                    "first_order": r["first_order"], "first_order_se": r["first_order_se"],
                    "step_bias": r["step_bias"]}
    return out


# slow tier (issue 44): see noise.common-noise-orders above
@claim(id="noise.common-noise-lyapunov",
       title="common matrix noise without attention: two nearby tokens synchronise at the derived top Lyapunov "
             "exponent -a, a = 2 sigma^2 (goe), sigma^2/d (values)",
       source=_SOURCE, note="noise-common-noise-lyapunov.md", default=False)
def check_common_noise_lyapunov() -> CheckResult:
    mm = lyapunov_measurements()
    # 4 standard errors of the extrapolated rate and nothing else: the scheme's bias (3.6% at h = 0.01, goe: more
    # than the 3% once allowed for it) is removed by Richardson over h, 2 h and 4 h (issue 43; once, over h and 2 h
    # only, left 1.8 standard errors of h^2 on average over eight seeds)
    flags = {law: abs(m["measured"] - m["derived"]) < 4 * m["se"] for law, m in mm.items()}
    return CheckResult("noise.common-noise-lyapunov", _status(all(flags.values())),
                       {law: m["measured"] for law, m in mm.items()},
                       {law: m["derived"] for law, m in mm.items()},
                       "4 SE of the rate Richardson-extrapolated from h = 0.01, 0.02, 0.04 (one Brownian path)",
                       {**mm, "d": D, "sigma": SIGMA, "flags": flags})


#: the two-token case: values law (random value matrices), d = 3, sigma^2 = 16/25 (a = 16/75), start angle
TWO_TOKEN = {"law": "values", "d": 3, "sigma2": (16, 25), "theta0": 2.5, "offset": 1.0}


def _antipodal_rate(model: str):
    """(f, f') of beta -> w(pi) - a in Arb (the antipodal pair attracts where f < 0), for the TWO_TOKEN case."""
    from flint import arb

    num, den = TWO_TOKEN["sigma2"]
    a = arb(num) / (arb(den) * TWO_TOKEN["d"])
    if model == "usa":
        return (lambda b: (-b).exp() - a), (lambda b: -((-b).exp()))
    return (lambda b: 2 / ((2 * b).exp() + 1) - a), (lambda b: -4 * (2 * b).exp() / ((2 * b).exp() + 1) ** 2)


def certified_threshold(model: str) -> dict:
    """beta_c of the TWO_TOKEN case: Arb-certified root of w(pi) - a, Brent's root in floating point, and the
    closed form of :func:`theory.common_noise.two_token_threshold`."""
    import sympy as sp
    from flint import fmpq
    from scipy.optimize import brentq

    from numerics.noise.common import pair_weight
    from theory.certified.balls import Interval
    from theory.certified.roots import certify_root
    from theory.common_noise import two_token_threshold

    num, den = TWO_TOKEN["sigma2"]
    closed = float(two_token_threshold(TWO_TOKEN["law"], TWO_TOKEN["d"], sp.sqrt(sp.Rational(num, den)), model))
    a = num / (den * TWO_TOKEN["d"])
    brent = brentq(lambda b: float(pair_weight(b, model, -1.0)) - a, closed - 2.0, closed + 2.0, xtol=1e-14)
    f, fp = _antipodal_rate(model)
    lo, hi = fmpq(int(math.floor((closed - 0.5) * 1024)), 1024), fmpq(int(math.ceil((closed + 0.5) * 1024)), 1024)
    cert = certify_root(f, fp, Interval(lo, hi)).to_dict(digits=20)
    return {"closed_form": closed, "brent": brent, "certified": cert,
            "certified_mid": (float(cert["lo"]) + float(cert["hi"])) / 2}


def two_token_measurements(samples: int = 800, t: float = 30.0, dt: float = 0.02, seed: int = 5) -> dict:
    from numerics.noise.common import antipodal_probability, two_token_outcomes

    law, d, th0, off = TWO_TOKEN["law"], TWO_TOKEN["d"], TWO_TOKEN["theta0"], TWO_TOKEN["offset"]
    sigma = math.sqrt(TWO_TOKEN["sigma2"][0] / TWO_TOKEN["sigma2"][1])
    out = {}
    for model in ("usa", "sa"):
        thr = certified_threshold(model)
        sides = {}
        for side, beta in (("below", thr["closed_form"] - off), ("above", thr["closed_form"] + off)):
            sides[side] = {"beta": beta, "predicted": antipodal_probability(law, d, sigma, beta, model, th0),
                           **two_token_outcomes(law, d, sigma, beta, model, th0, t, dt, samples, seed)}
        out[model] = {"threshold": thr, "sides": sides}
    return out


# slow tier (issue 44): see noise.common-noise-orders above
@claim(id="noise.common-noise-two-token-transition",
       title="two tokens with attention and the random-value common noise: the antipodal pair attracts iff "
             "w(pi) < a = sigma^2/d; beta_c Arb-certified (usa, sa) and the particles' antipodal fraction equals "
             "the scale-function probability on both sides",
       source=("Fedorov-Sander-Elie-Marion-Lauriere arXiv 2601.21942 (abstract: for two tokens a phase transition in "
               "interaction strength and d above which antipodal configurations attract with positive probability); "
               "the criterion and the probability derived here"),
       note="noise-common-noise-two-token-transition.md", default=False)
def check_common_noise_two_token_transition() -> CheckResult:
    mm = two_token_measurements()
    flags = {}
    for model, m in mm.items():
        thr, below, above = m["threshold"], m["sides"]["below"], m["sides"]["above"]
        flags[model] = {
            "certified_contains_closed_form": float(thr["certified"]["lo"]) <= thr["closed_form"]
            <= float(thr["certified"]["hi"]) and float(thr["certified"]["width"]) < 1e-12,
            "brent_3_digits": abs(thr["brent"] - thr["closed_form"]) < 5e-4,
            "below_never_antipodal": below["predicted"] == 0.0 and below["antipodal"] <= 0.005,
            "above_matches": above["predicted"] > 0.1
            and abs(above["antipodal"] - above["predicted"]) < 4 * above["se"] + 0.02,
        }
    ok = all(all(f.values()) for f in flags.values())
    return CheckResult("noise.common-noise-two-token-transition", _status(ok),
                       {m: {"beta_c": v["threshold"]["certified_mid"],
                            "antipodal_above": v["sides"]["above"]["antipodal"]} for m, v in mm.items()},
                       {m: {"beta_c": v["threshold"]["closed_form"],
                            "antipodal_above": v["sides"]["above"]["predicted"]} for m, v in mm.items()},
                       "beta_c: Arb enclosure of width < 1e-12 containing the closed form, Brent within 5e-4; "
                       "antipodal fraction 0 (<= 0.005) below, scale-function probability within 4 SE + 0.02 above",
                       {**mm, "case": TWO_TOKEN, "flags": flags})


def depth_limit_measurements(samples: int = 100000, seed: int = 6) -> dict:
    from numerics.noise.random_weights import depth_study

    return {f"{entries}-H{heads}": depth_study(depths=(8, 16, 32), entries=entries, heads=heads, samples=samples,
                                               seed=seed)
            for entries, heads in (("rademacher", 1), ("uniform", 4))}


# slow tier (issue 44): see noise.common-noise-orders above
@claim(id="noise.random-weights-depth-limit",
       title="random-weight layers (entries +-1 or uniform, H heads, resampled per layer and head, step sqrt(T/L) "
             "on the values) converge as the depth L grows to the common-noise SDE: E<e, x_L> -> exp(-c (d-1) T) "
             "at the rate 1/L",
       source=("Fedorov et al. arXiv 2601.21942 and Koubbi-Geshkovski-Rigollet arXiv 2604.01978 (abstracts: random "
               "weights resampled across layers and heads, diffusion scaling, common-noise SDE limits); the rate is "
               "the derived weak order 1"),
       note="noise-random-weights-depth-limit.md", default=False)
def check_random_weights_depth_limit() -> CheckResult:
    mm = depth_limit_measurements()
    flags = {name: all(abs(e) > 5 * s for e, s in zip(r["error"], r["se"])) and -1.3 < r["rate"] < -0.6
             and abs(r["error"][-1]) < 0.4 * abs(r["error"][0]) for name, r in mm.items()}
    return CheckResult("noise.random-weights-depth-limit", _status(all(flags.values())),
                       {name: r["rate"] for name, r in mm.items()}, {name: -1 for name in mm},
                       "errors above 5 SE; fitted rate in (-1.3, -0.6); the error at L = 32 below 0.4 of L = 8's (1/L predicts 0.25)",
                       {**mm, "flags": flags, "d": 3, "sigma": 0.8, "t": 1.0})


#: the dissipation case: two tokens, usa with identity matrices at beta = 1, goe law, V = (sin theta)^(1/2),
#: started at theta_0 = 3 (near the antipode, where the attention drift fights the noise hardest)
DISSIPATION = {"law": "goe", "d": 3, "beta": 1.0, "model": "usa", "p": 0.5, "theta0": 3.0,
               "sigmas": {"coercive": 0.8, "not coercive": 0.3}}


def dissipation_measurements(samples: int = 4000, t: float = 2.0, dt: float = 0.01, seed: int = 7,
                             rate_samples: int = 8000, rate_span: float = 0.1, rate_dt: float = 0.01) -> dict:
    from numerics.noise.common import angle_coefficient, coercivity, pair_dissipation, pair_initial_rate, pair_weight

    c = DISSIPATION
    out = {}
    for side, sigma in c["sigmas"].items():
        kmin, at = coercivity(c["law"], c["d"], sigma, c["beta"], c["model"], c["p"])
        run = pair_dissipation(c["law"], c["d"], sigma, c["beta"], c["model"], c["theta0"], c["p"], t, dt, samples,
                               seed, every=10)
        cos0 = math.cos(c["theta0"])
        kappa0 = (angle_coefficient(c["law"], c["d"], sigma) * ((1 - c["p"]) * cos0 ** 2 + math.sin(c["theta0"]) ** 2)
                  + float(pair_weight(c["beta"], c["model"], cos0)) * cos0)
        # the initial rate: forward differences over rate_span and 2 rate_span, at dt and 2 dt on one Brownian
        # path, Richardson-extrapolated in both (issue 43: the bias is removed in the run, not allowed for by 25%)
        rate = pair_initial_rate(c["law"], c["d"], sigma, c["beta"], c["model"], c["theta0"], c["p"], rate_span,
                                 rate_dt, rate_samples, seed + 1)
        V0, dt_save = run["mean"][0], run["times"][1]
        out[side] = {"sigma": sigma, "kappa_min": kmin, "argmin": at, "kappa_theta0": kappa0,
                     "bound": [V0 * math.exp(-c["p"] * kmin * s) for s in run["times"]],
                     "initial_rate": rate["rate"], "initial_rate_se": rate["se"], "rate_estimate": rate,
                     "saved_difference_rate": (run["mean"][1] / V0 - 1) / dt_save,
                     "saved_difference_rate_se": run["se"][1] / V0 / dt_save,
                     "predicted_initial_rate": -c["p"] * kappa0, **run}
    return out


@claim(id="noise.common-noise-dissipation",
       title="two tokens under attention and common noise: E (sin theta)^p <= exp(-p kappa_min t) V(0) with "
             "kappa = a ((1-p) cos^2 + sin^2) + w cos; coercive noise (kappa_min > 0) dissipates it, weaker noise "
             "lets it grow from near the antipode at the derived initial rate",
       source=("Agazzi-Bruno-Mosig Garcia-Saviozzi-Romito arXiv 2604.26898 (abstract: exponential dissipation of the "
               "interaction energy on average when the common noise is coercive relative to the attention drift); "
               "the functional and the condition here are attnflow's own"),
       note="noise-common-noise-dissipation.md")
def check_common_noise_dissipation() -> CheckResult:
    mm = dissipation_measurements()
    co, nc = mm["coercive"], mm["not coercive"]
    below_bound = all(m <= b + 4 * s for side in (co, nc) for m, b, s in zip(side["mean"], side["bound"], side["se"]))
    flags = {
        "condition_sides": co["kappa_min"] > 0 > nc["kappa_min"],
        "bound_holds": below_bound,
        "coercive_dissipates": co["mean"][-1] < co["mean"][0] - 4 * co["se"][-1] and co["initial_rate"] < 0,
        "not_coercive_grows": all(m > nc["mean"][0] + 4 * s for m, s in zip(nc["mean"][1:], nc["se"][1:])),
        # the doubly extrapolated rate (bias O(span^2 + dt^2)) within 4 of its standard errors: no fixed allowance
        # (the old 25% let a 5% error of the attention drift pass)
        "initial_rates": all(abs(x["initial_rate"] - x["predicted_initial_rate"]) < 4 * x["initial_rate_se"]
                             for x in (co, nc)),
    }
    return CheckResult("noise.common-noise-dissipation", _status(all(flags.values())),
                       {side: {"kappa_min": x["kappa_min"], "initial_rate": x["initial_rate"],
                               "V_end/V_0": x["mean"][-1] / x["mean"][0]} for side, x in mm.items()},
                       {side: {"kappa_min": "> 0" if side == "coercive" else "< 0",
                               "initial_rate": x["predicted_initial_rate"],
                               "V_end/V_0": f"<= {x['bound'][-1] / x['bound'][0]:.4f}"} for side, x in mm.items()},
                       "the bound within 4 SE at every saved time; dissipation / growth beyond 4 SE; initial rate "
                       "within 4 SE of its Richardson extrapolation (spans 0.1, 0.2; steps 0.01, 0.02; one path)",
                       {**mm, "case": DISSIPATION, "flags": flags})
