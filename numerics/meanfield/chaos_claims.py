"""Claim of the propagation of chaos for a distinguished token (numerics.meanfield.chaos; note
proofs_notes/meanfield-propagation-of-chaos.md). Registered from :mod:`numerics.meanfield.claims`.

- meanfield.propagation-of-chaos (slow): E sup_{t <= T} of the finite- vs infinite-context deviation decays like
  n^{-1/2} (fitted slope within max(3 se, 0.1) of -1/2) for the token on S^1 and on S^2 and for the context's
  Fourier moments on S^1 against the pseudo-spectral mean-field solver; sqrt(n) times the mean deviation agrees
  across n at every depth (uniformity in depth) within 50%; the same contexts through the circle's Fourier field
  (S^1) and the spherical-harmonic field (S^2) give the same token path to 1e-6.
"""
from __future__ import annotations

from numerics.common.verification import CheckResult, claim

_SOURCE = ("Chen, Lin, Liu, Rigollet, Propagation of chaos in contextual flow maps, arXiv 2605.16747 (abstract): "
           "finite vs infinite context deviation O(n^{-1/2}) uniformly along depth for transformers")
#: context lengths, ensemble size, horizon, step, Fourier moments of the context metric
NS, MEMBERS, T_END, DT, K = (128, 256, 512, 1024), 48, 2.0, 0.1, 4
#: the slope band: max(3 standard errors, this)
SLOPE_BAND = 0.1
#: uniformity in depth: max over t > 0 and n of |sqrt(n) E dev_n(t) / mean_n - 1|
DEPTH_SPREAD = 0.5
#: the token's path with the sphere's fast field (Fourier on S^1, harmonics on S^2) vs the ensemble's direct sums
#: (both at their default tolerances; four orders below the smallest deviation measured)
BACKEND_AGREEMENT = 1e-6


def _within(fit: dict) -> bool:
    return abs(fit["slope"] + 0.5) <= max(3 * fit["stderr"], SLOPE_BAND)


@claim(id="meanfield.propagation-of-chaos",
       title="propagation of chaos: finite- vs infinite-context deviation ~ n^{-1/2} uniformly in depth "
             "(token on S^1 and S^2, context moments on S^1 vs the mean-field solver)",
       source=_SOURCE, note="meanfield-propagation-of-chaos.md", default=False)
def check_propagation_of_chaos() -> CheckResult:
    from numerics.meanfield.chaos import chaos_study

    s1 = chaos_study("S1", ns=NS, members=MEMBERS, t_end=T_END, dt=DT, seed=0, K=K)
    s2 = chaos_study("S2", ns=NS, members=MEMBERS, t_end=T_END, dt=DT, seed=0, K=K)
    fits = {"S1 token": s1["token_fit"], "S1 context": s1["context_fit"], "S2 token": s2["token_fit"]}
    flags = {name: _within(f) for name, f in fits.items()}
    flags["depth"] = max(s1["depth_spread"], s2["depth_spread"]) <= DEPTH_SPREAD
    backends = max(s1["backend_check"]["max_token_difference"], s2["backend_check"]["max_token_difference"])
    flags["backends"] = backends <= BACKEND_AGREEMENT
    measured = {name: f"{f['slope']:.3f} +- {f['stderr']:.3f}" for name, f in fits.items()}
    return CheckResult("meanfield.propagation-of-chaos", "passed" if all(flags.values()) else "failed",
                       {**measured, "depth_spread": max(s1["depth_spread"], s2["depth_spread"]),
                        "backend_difference": backends, "flags": flags},
                       {name: -0.5 for name in fits},
                       f"|slope + 1/2| <= max(3 se, {SLOPE_BAND}); depth spread <= {DEPTH_SPREAD}; Fourier / harmonic "
                       f"field vs direct sums <= {BACKEND_AGREEMENT:g}",
                       {"S1": s1, "S2": s2, "model": "sa, Q = K = V = I, beta = 1",
                        "paths": {"infinite context": "token: exactly fixed at x* by symmetry (S^1 rho_0 = "
                                  "(1 + cos/2)/2pi, S^2 uniform); context: numerics.meanfield.pde.solve_continuity_circle",
                                  "finite context": "numerics.core.simulate on (B, n + 1, d), RK4 dt 0.1"}})
