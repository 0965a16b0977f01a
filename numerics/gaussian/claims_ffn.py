"""Claim on attention plus an affine feed-forward layer (numerics.gaussian.ffn; note
proofs_notes/gaussian-ffn-regimes.md). Registered from :mod:`numerics.gaussian.claims`.

- gaussian.gaussian-ffn-regimes: the precision of attention (V = v I) + feed-forward W x + c solves the linear
  Lyapunov equation (symbolic); with W's spectrum in Re > 0 the covariance converges to Sigma* = P*^{-1} when
  P* > 0 and v S_A <= 0, and blows up in finite time from every start when P* has a negative eigenvalue (the ODE
  against the closed form); with an eigenvalue of W in Re < 0 the outcome depends on Sigma_0 (both outcomes
  shown at d = 1); W = 0 reduces to the existing softmax moment ODE.
"""
from __future__ import annotations

import numpy as np

from numerics.common.verification import CheckResult, claim

SOURCE = ("Alcalde, Ji, Zuazua, Reachability and asymptotics of Gaussian Transformer dynamics, arXiv 2606.07600 "
          "(abstract read; the conditions are derived in attnflow)")

MEAN0 = np.array([0.5, -0.3])
COV0 = np.array([[1.0, 0.3], [0.3, 0.6]])
W0 = np.array([[1.0, 0.4], [-0.2, 0.8]])                 # eigenvalues 0.9 +- 0.26 i: expanding feed-forward
C0 = np.array([0.1, -0.2])
A_STABLE = np.array([[-1.0, 0.3], [-0.1, -0.5]])         # S_A negative definite
A_BLOWUP = np.array([[0.6, 0.2], [0.0, 0.4]])            # S_A positive definite
STARTS = (0.01 * np.eye(2), COV0, 100.0 * np.eye(2))


def ffn_measurements() -> dict:
    from numerics.gaussian.ffn import (blowup_time, ffn_regime, precision_closed_form, relative_error,
                                       solve_ffn_moments)
    from numerics.gaussian.solutions import gaussian_attention, solve_moment_ode
    from theory.gaussian import ffn_precision_derivation, ffn_scalar_derivation

    I2 = np.eye(2)
    proofs = {"precision": ffn_precision_derivation(2).verify().status,
              "scalar": ffn_scalar_derivation().verify().status}
    # converging side: every start tends to Sigma* = P*^{-1}; the ODE's precision equals the closed form
    stable = ffn_regime(A_STABLE, 1.0, W0)
    conv = []
    for S0 in STARTS:
        sol = solve_ffn_moments(A_STABLE, I2, W0, C0, MEAN0, S0, 40.0)
        conv.append(relative_error(sol.covs[-1], stable.Sigma_star))
    closed = max(relative_error(np.linalg.inv(solve_ffn_moments(A_STABLE, I2, W0, C0, MEAN0, COV0, t).covs[-1]),
                                precision_closed_form(t, COV0, A_STABLE, 1.0, W0)) for t in (0.5, 2.0))
    S = stable.Sigma_star
    J = S @ A_STABLE + W0
    equilibrium_residual = float(np.max(np.abs(J @ S + S @ J.T)))
    # blow-up side: every start blows up, at the time where P(t) becomes singular
    unstable = ffn_regime(A_BLOWUP, 1.0, W0)
    blow = []
    for S0 in STARTS:
        t_star = blowup_time(S0, A_BLOWUP, 1.0, W0)
        sol = solve_ffn_moments(A_BLOWUP, I2, W0, C0, MEAN0, S0, 2 * (t_star or 10.0), blowup_norm=1e12)
        blow.append({"t_star": t_star, "ode_stop": float(sol.times[-1]), "status": sol.status})
    # the condition on W matters: a contracting direction (w < 0) with a > 0 at d = 1 has sigma* = -w/(v a)
    # unstable: blow-up above it, collapse to 0 below it
    w, a = -0.5, 1.0
    sigma_star = -w / a
    scalar = {}
    for name, s0 in (("above", 1.2 * sigma_star), ("below", 0.8 * sigma_star)):
        sol = solve_ffn_moments([[a]], [[1.0]], [[w]], [0.0], [0.0], [[s0]], 40.0)
        scalar[name] = {"status": sol.status, "final": float(sol.covs[-1][0, 0]), "stop": float(sol.times[-1])}
    scalar_regime = ffn_regime([[a]], 1.0, [[w]]).kind
    # W = 0, c = 0: the existing softmax moment ODE (numerics.gaussian.solutions)
    V1 = np.array([[1.0, 0.2], [-0.3, 0.8]])
    A1 = np.array([[0.8, 0.3], [-0.2, 0.5]])
    ref = solve_moment_ode(gaussian_attention("softmax", 2, V=V1, A=A1), MEAN0, COV0, 0.3)
    mine = solve_ffn_moments(A1, V1, np.zeros((2, 2)), np.zeros(2), MEAN0, COV0, 0.3)
    w0_err = max(relative_error(mine.covs[-1], ref.final_cov), relative_error(mine.means[-1], ref.final_mean))
    return {"proofs": proofs, "stable_kind": stable.kind,
            "stable_W_eigenvalues": [[float(z.real), float(z.imag)] for z in stable.W_eigenvalues],
            "P_star_eigenvalues": stable.P_star_eigenvalues.tolist(), "Sigma_star": S.tolist(),
            "convergence_err": max(conv), "closed_form_err": closed, "equilibrium_residual": equilibrium_residual,
            "blowup_kind": unstable.kind, "blowup_P_star_eigenvalues": unstable.P_star_eigenvalues.tolist(),
            "blowup": blow, "blowup_time_err": max(abs(b["ode_stop"] - b["t_star"]) / b["t_star"] for b in blow
                                                   if b["t_star"] is not None) if all(b["t_star"] for b in blow)
            else None,
            "scalar_regime": scalar_regime, "scalar": scalar, "sigma_star": sigma_star, "w0_err": w0_err}


@claim(id="gaussian.gaussian-ffn-regimes",
       title="attention + affine feed-forward on Gaussians: dP/dt = -(W^T P + P W) - 2 v S_A; spec(W) in Re > 0: "
             "convergence to Sigma* = P*^{-1} (P* > 0) or blow-up from every start (P* indefinite)",
       source=SOURCE, note="gaussian-ffn-regimes.md")
def check_gaussian_ffn() -> CheckResult:
    m = ffn_measurements()
    flags = {"proved": all(s == "proved" for s in m["proofs"].values()),
             "converges": m["stable_kind"] == "converges" and m["convergence_err"] <= 1e-9
             and m["closed_form_err"] <= 1e-9 and m["equilibrium_residual"] <= 1e-12,
             "blows_up": m["blowup_kind"] == "blow-up" and m["blowup_time_err"] is not None
             and m["blowup_time_err"] <= 1e-6 and all(b["status"] == "blow-up" for b in m["blowup"]),
             "depends_on_start": m["scalar_regime"] == "depends on Sigma_0"
             and m["scalar"]["above"]["status"] == "blow-up" and m["scalar"]["below"]["status"] == "completed"
             and m["scalar"]["below"]["final"] < 1e-6,
             "W_zero_is_softmax": m["w0_err"] <= 1e-9}
    return CheckResult("gaussian.gaussian-ffn-regimes", "passed" if all(flags.values()) else "failed",
                       {"convergence_err": m["convergence_err"], "blowup_time_err": m["blowup_time_err"],
                        "flags": flags},
                       {"converges": "Sigma -> P*^{-1}", "blows_up": "at the root of det P(t)"},
                       "Sigma(40) vs Sigma* rel 1e-9; ODE precision vs closed form rel 1e-9; ODE stop (|Sigma| = 1e12) "
                       "vs the closed-form blow-up time rel 1e-6; W = 0 vs the softmax solver rel 1e-9", m)
