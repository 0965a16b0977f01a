"""A verdict, with its reasoning, for a particle run compared with the Gaussian moment ODE.

``compare_particles_to_ode`` measures the deviation of the empirical moments from the prediction in standard
errors (SE) and how far the prediction moved (``motion``, same units). A bare deviation says little: within
k = 4 SE is only evidence when the prediction moved by many SE (power), and beyond k SE the softmax case is
expected at large n, because the softmax weights e^{<A x, y>} of Gaussian tokens are log-normal (heavy tailed):
the empirical softmax average over n tokens is biased at order 1/n^{c} with c < 1 that shrinks with |A| Sigma,
while the SE shrinks like 1/sqrt(n), so the deviation in SE grows with n (proofs_notes/gaussian-ode-vs-particles.md,
"Softmax at finite n"). Source: CACP arXiv 2501.18322 (mean-field limit n -> infinity).
"""
from __future__ import annotations

from numerics.gaussian.solutions import K_STANDARD_ERRORS

#: the prediction must move by at least this many SE for agreement to be evidence (gaussian.ode-vs-particles)
POWER_MIN_MOTION = 8.0


def particle_verdict(comparison: dict, attention: str) -> tuple[str, str]:
    """(verdict, reasoning) for a ``compare_particles_to_ode`` result.

    Verdicts: ``consistent`` (within k SE and the prediction moved >= POWER_MIN_MOTION SE), ``uninformative``
    (within k SE but the prediction barely moved: the comparison has no power), ``finite-n softmax bias``
    (softmax beyond k SE: expected heavy-tail bias, rerun at smaller n or compare several n), ``deviates``
    (L2 or Sinkhorn beyond k SE: the particles do not follow the ODE).
    """
    dev = float(comparison["max_deviation_in_standard_errors"])
    motion = float(comparison["motion_in_standard_errors"])
    k = float(comparison.get("k", K_STANDARD_ERRORS))
    if dev <= k:
        if motion >= POWER_MIN_MOTION:
            return "consistent", (f"moments within {dev:.2f} <= {k:g} SE of the ODE while the prediction moved "
                                  f"{motion:.1f} SE: the comparison could have seen a wrong model")
        return "uninformative", (f"within {dev:.2f} SE, but the prediction moved only {motion:.1f} < "
                                 f"{POWER_MIN_MOTION:g} SE: a model predicting no motion would pass too "
                                 "(use a longer time or more tokens)")
    if attention == "softmax":
        return "finite-n softmax bias", (
            f"{dev:.2f} > {k:g} SE: softmax weights of Gaussian tokens are heavy tailed, so the empirical softmax "
            "is biased at finite n while the SE shrinks like 1/sqrt(n); the deviation in SE grows with n. Compare "
            "several n (bias grows like a power of n, noise stays ~1 SE) or see "
            "proofs_notes/gaussian-ode-vs-particles.md; not evidence against the mean-field ODE by itself")
    return "deviates", (f"{dev:.2f} > {k:g} SE for {attention} attention (light-tailed weights, no known finite-n "
                        "bias): the particles do not follow the Gaussian moment ODE at this n")
