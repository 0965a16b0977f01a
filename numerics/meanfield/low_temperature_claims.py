"""Claims meanfield.low-temperature-*: concentration at low temperature and the terminal phase (Alcalde, Bungert,
Riedl, Roith, arXiv 2605.10931), for the consensus flow dz/dt = V(m_beta(z) - z) of :mod:`numerics.meanfield.
low_temperature` (the paper's model could not be read; see the notes ``proofs_notes/meanfield-low-temperature-*.md``).
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.verification import CheckResult, claim
from numerics.meanfield.low_temperature import (
    closest_approach,
    consensus_gaussian_moments,
    radial_flow,
    ring_particles,
    zero_temperature_defect,
)

ABRR = "ABRR arXiv 2605.10931"


def _approach_rows(betas, rings):
    rows = []
    for beta in betas:
        t_end = math.log(beta) + 2.0
        times, D = radial_flow(beta, rings, t_end, saves=int(40 * t_end) + 1)
        t_star, D_star = closest_approach(times, D)
        early = times <= 1.0
        rows.append({"beta": beta, "t_star": t_star, "D_star": D_star, "t_star_minus_log_beta": t_star - math.log(beta),
                     "D_star_beta_over_log_beta": D_star * beta / math.log(beta),
                     "D_star_over_bound_shape": D_star / math.sqrt(math.log(beta + 1) / beta),
                     "early_gap_to_zero_temperature": float(np.max(np.abs(D[early] - zero_temperature_defect(
                         times[early]))))})
    return rows


def concentration(betas=(16.0, 64.0, 256.0), rings: int = 40, check_rings: int | None = None) -> CheckResult:
    cid = "meanfield.low-temperature-concentration" if len(betas) > 3 else \
        "meanfield.low-temperature-concentration-quick"
    rows = _approach_rows(betas, rings)
    logb = np.log(betas)
    ts = np.array([r["t_star"] for r in rows])
    X = np.column_stack([np.ones_like(logb), logb])
    coef, *_ = np.linalg.lstsq(X, ts, rcond=None)
    resid = ts - X @ coef
    dof = max(1, len(ts) - 2)
    se = math.sqrt(float(resid @ resid) / dof / float(np.sum((logb - logb.mean()) ** 2)))
    c = np.array([r["D_star_beta_over_log_beta"] for r in rows])
    shape = [r["D_star_over_bound_shape"] for r in rows]
    # two routes at beta = 8: the radial Bessel reduction and weighted ring points moved by the 2-D field
    t1, D1 = radial_flow(8.0, 16, 2.0, saves=21)
    t2, D2 = ring_particles(8.0, 16, 20, 2.0, saves=21)
    routes = float(np.max(np.abs(D1 / D2 - 1.0)))
    details = {"rows": rows, "rings": rings, "t_star_fit": {"slope": float(coef[1]), "stderr": se,
                                                           "intercept": float(coef[0])},
               "constant_D_star_beta_over_log_beta": {"mean": float(c.mean()), "sd": float(c.std(ddof=1))},
               "routes_beta8": routes, "compared": "radial reduction (Bessel splines) vs weighted ring points "
               "moved by numerics.rd.consensus.integrate_flow (16 rings x 20 points)",
               "model": "dz/dt = m_beta(z) - z, A = V = I, mu_0 uniform on the unit disc", "integrator": "rk4"}
    ok = (abs(coef[1] - 1.0) <= 0.05 and routes <= 1e-9 and float(c.std(ddof=1)) <= 0.03 * float(c.mean())
          and all(a > b for a, b in zip(shape, shape[1:])))
    if check_rings:
        fine = _approach_rows(betas, check_rings)
        details["fine_rings"] = check_rings
        details["fine_rows"] = fine
        drift = max(abs(f["D_star"] / r["D_star"] - 1.0) for f, r in zip(fine, rows))
        details["D_star_change_with_rings"] = drift
        ok &= drift <= 0.01
    return CheckResult(cid, "passed" if ok else "failed",
                       {"t_star_slope_in_log_beta": float(coef[1]), "D_star_beta_over_log_beta": float(c.mean()),
                        "routes": routes},
                       {"t_star_slope_in_log_beta": 1.0, "D_star": "~ c log(beta)/beta"},
                       "slope 1 +- 0.05; c constant to 3%; routes 1e-9; D*/sqrt(log(beta+1)/beta) decreasing",
                       details)


@claim(id="meanfield.low-temperature-concentration-quick",
       title="A = V = I, uniform disc: mu_t comes closest to the zero-temperature limit at t* = log(beta) + c, "
             "at distance ~ 1.34 log(beta)/beta (beta = 16, 64, 256)",
       source=ABRR + ", concentration on log(beta) time scales", note="meanfield-low-temperature-concentration.md")
def check_concentration_quick() -> CheckResult:
    return concentration()


@claim(id="meanfield.low-temperature-concentration", default=False,
       title="the same over beta = 10..1280 (8 values), 160 rings, checked against 320 rings",
       source=ABRR + ", concentration on log(beta) time scales", note="meanfield-low-temperature-concentration.md")
def check_concentration() -> CheckResult:
    return concentration(betas=(10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0), rings=160, check_rings=320)


# -- terminal phase ---------------------------------------------------------------------------------------------
#: a non-normal V with eigenvalues 1 and 0.35 (right eigenvectors (1, 0) and (-0.2, 0.65) / norm)
TERMINAL_V = np.array([[1.0, 0.2], [0.0, 0.35]])


def _cov_log_slopes(times, S, window):
    ev = np.array([np.linalg.eigvalsh(0.5 * (s + s.T)) for s in S])
    sel = (times >= window[0]) & (times <= window[1])
    return [float(-np.polyfit(times[sel], np.log(ev[sel, k]), 1)[0] / 2.0) for k in range(ev.shape[1])]


def terminal(n: int = 400, beta: float = 2.0, t_end: float = 10.0, seed: int = 0) -> CheckResult:
    cid = "meanfield.low-temperature-terminal"
    from numerics.rd.consensus import integrate_flow

    V, A = TERMINAL_V, np.eye(2)
    rng = np.random.default_rng(seed)
    Z0 = np.array([1.0, 0.5]) + math.sqrt(0.05) * rng.standard_normal((n, 2))
    alpha0, Sigma0 = Z0.mean(axis=0), np.cov(Z0.T, bias=True)
    times, alpha, Sigma = consensus_gaussian_moments(alpha0, Sigma0, A, V, beta, t_end, saves=41)
    stats = lambda Z: (Z.mean(axis=0), np.cov(Z.T, bias=True))  # noqa: E731
    tp, obs = integrate_flow(Z0, A, beta, t_end, 0.1, V=V, saves=41, observe=stats)
    mean_err = max(float(np.linalg.norm(m - a)) for (m, _), a in zip(obs, alpha))
    cov_err = max(float(np.linalg.norm(C - S) / np.linalg.norm(S)) for (_, C), S in zip(obs, Sigma))
    window = (5.0, t_end)
    ode_rates = _cov_log_slopes(times, Sigma, window)
    part_rates = _cov_log_slopes(tp, np.array([C for _, C in obs]), window)
    spec = sorted(np.linalg.eigvals(V).real)
    # the late spread lies along the slow right eigenvector of V
    w, U = np.linalg.eig(V)
    slow = U[:, int(np.argmin(w.real))].real
    axis = np.linalg.eigh(obs[-1][1])[1][:, -1]
    alignment = float(abs(axis @ slow) / np.linalg.norm(slow))
    rate_err = max(abs(r / s - 1.0) for r, s in zip(sorted(ode_rates), spec))
    part_rate_err = max(abs(r / s - 1.0) for r, s in zip(sorted(part_rates), spec))
    # the particles are not exactly Gaussian: their attention mean differs from alpha + beta Sigma A z by terms of
    # order beta^2 (third cumulants ~ sigma^3 / sqrt(n) ~ 1e-3 here), hence the tolerances on mean and covariance
    ok = mean_err <= 5e-3 and cov_err <= 2e-2 and rate_err <= 0.02 and part_rate_err <= 0.05 and alignment >= 0.999
    return CheckResult(cid, "passed" if ok else "failed",
                       {"rates_ode": sorted(ode_rates), "rates_particles": sorted(part_rates),
                        "mean_error": mean_err, "covariance_error": cov_err, "alignment_with_slow_eigenvector":
                        alignment},
                       {"rates": spec}, "rates 2% (ODE) and 5% (particles); mean 5e-3; covariance 2e-2 rel; "
                                        "alignment >= 0.999",
                       {"V": V.tolist(), "A": A.tolist(), "beta": beta, "n": n, "seed": seed, "window": list(window),
                        "compared": "Gaussian moment ODE (DOP853) vs particles (numerics.rd.consensus, RK4 dt 0.1) "
                                    "started from the same mean and covariance",
                        "beta_times_initial_variance": beta * 0.05})


@claim(id="meanfield.low-temperature-terminal",
       title="terminal phase: the spread decays like e^{-tV} Sigma e^{-tV^T} (rates = spectrum of V), along the "
             "slow eigenvector of V",
       source=ABRR + ", terminal phase set by the value matrix", note="meanfield-low-temperature-terminal.md")
def check_terminal() -> CheckResult:
    return terminal()
