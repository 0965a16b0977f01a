"""Claim of the consensus under rotary positions (numerics.architectures.rope_consensus; note
proofs_notes/architectures-rope-consensus.md). Registered from :mod:`numerics.architectures.claims`.

- architectures.rope-consensus: with RoPE and V = I the consensus is an equilibrium; its transverse spectrum is
  the derived (A - diag(A 1)) (x) I_{d-1} (random non-symmetric Q, K, d = 4 and 5, consecutive and gapped
  labels, sa and usa), equal to the eigenvalues of attnflow's finite-difference Jacobian; with Q = K = I it depends
  on the consensus point only through its energy in each rotary plane; no transverse eigenvalue has a positive
  real part; a closed hemisphere stays invariant (tokens started on its boundary included).
"""
from __future__ import annotations

import numpy as np

from numerics.common.verification import CheckResult, claim

_SOURCE = ("Ye, RoPE as dynamics, arXiv 2607.24502 (July 2026; only third-party summaries were reachable): "
           "consensus stays an equilibrium whose transverse spectrum depends on how the consensus point's energy "
           "splits across the rotary planes; closed hemispheres are invariant. The spectrum here is attnflow's own "
           "derivation")

BASE = 7.0
BETA = 1.3
N = 5
LABELS = ((0.0, 1.0, 2.0, 3.0, 4.0), (0.0, 2.0, 3.0, 7.0, 11.0))
#: tolerances (why): the Jacobian by central differences with h = 1e-6 (measured ~ 1e-9); an equilibrium and the
#: torus invariance, round-off of the field and of an eigenvalue solver; the split dependence, a difference
#: of order 0.1 (two rotary planes with frequencies 1 and 7^{-1/2}); the hemisphere, round-off of the boundary
#: projection (~ 4e-16)
JACOBIAN_TOL = 1e-7
ROUNDOFF = 1e-12
SPLIT_MIN = 1e-2


def _status(ok: bool) -> str:
    return "passed" if ok else "failed"


def _random_scores(rng, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Q, K = I + 0.5 G (G standard Gaussian): well conditioned, and Q^T K far from symmetric."""
    return np.eye(d) + 0.5 * rng.standard_normal((d, d)), np.eye(d) + 0.5 * rng.standard_normal((d, d))


def jacobian_rows(seed: int = 4) -> list[dict]:
    from numerics.architectures.rope_consensus import measured_spectrum, predicted_spectrum, spectrum_distance
    from numerics.core.model import Model
    from numerics.core.trajectory import uniform_sphere

    rng = np.random.default_rng(seed)
    rows = []
    for d in (4, 5):
        Q, K = _random_scores(rng, d)
        x = uniform_sphere(1, d, rng)[0]
        for labels in LABELS:
            for kind in ("sa", "usa"):
                predicted = predicted_spectrum(x, Q, K, labels, BASE, BETA, kind)
                measured = measured_spectrum(x, Q, K, labels, BASE, BETA, kind)
                f = Model(kind, BETA, Q=Q, K=K, rope=BASE, positions=np.asarray(labels)).vector_field(N, d,
                                                                                                      "direct")[0]
                rows.append({"d": d, "labels": list(labels), "kind": kind,
                             "error": spectrum_distance(predicted, measured),
                             "largest_real_part": float(predicted.real.max()),
                             "largest_imaginary_part": float(np.abs(predicted.imag).max()),
                             "field_at_consensus": float(np.abs(f(np.tile(x, (N, 1)))).max())})
    return rows


def split_rows() -> dict:
    """Q = K = I, d = 4: the same plane energies (a torus rotation) give the same spectrum, the energies moved
    between the planes give another."""
    from numerics.architectures.rope_consensus import predicted_spectrum, spectrum_distance, torus_rotation

    I = np.eye(4)
    x = np.array([0.6, 0.0, 0.8, 0.0])
    swapped = np.array([0.8, 0.0, 0.6, 0.0])
    out = {}
    for kind in ("sa", "usa"):
        base = predicted_spectrum(x, I, I, LABELS[1], BASE, 2.0, kind)
        rotated = predicted_spectrum(torus_rotation(x, (0.4, 1.1)), I, I, LABELS[1], BASE, 2.0, kind)
        other = predicted_spectrum(swapped, I, I, LABELS[1], BASE, 2.0, kind)
        out[kind] = {"same_split": spectrum_distance(base, rotated), "other_split": spectrum_distance(base, other)}
    return out


def hemisphere_rows() -> list[dict]:
    from numerics.architectures.rope_consensus import hemisphere_margin

    rows = []
    for d, seed in ((4, 3), (5, 8)):
        Q, K = _random_scores(np.random.default_rng(seed), d)
        rows.append({"d": d, "seed": seed, **hemisphere_margin(Q, K, BASE, BETA, 8, d, seed, 20.0)})
    return rows


@claim(id="architectures.rope-consensus",
       title="RoPE, V = I: consensus is an equilibrium with transverse spectrum (A - diag(A 1)) (x) I (derived) = "
             "attnflow's FD Jacobian; it depends on x only through the rotary-plane energies (Q = K = I); "
             "no unstable direction; closed hemispheres invariant",
       source=_SOURCE, note="architectures-rope-consensus.md")
def check_rope_consensus() -> CheckResult:
    jac = jacobian_rows()
    split = split_rows()
    hemi = hemisphere_rows()
    flags = {"equilibrium": all(r["field_at_consensus"] <= ROUNDOFF for r in jac),
             "jacobian": all(r["error"] <= JACOBIAN_TOL for r in jac),
             "no_unstable_direction": all(r["largest_real_part"] <= ROUNDOFF for r in jac),
             "complex_cases": any(r["largest_imaginary_part"] > 1e-3 for r in jac),
             "same_split_same_spectrum": all(v["same_split"] <= ROUNDOFF for v in split.values()),
             "other_split_other_spectrum": all(v["other_split"] >= SPLIT_MIN for v in split.values()),
             "hemisphere": all(r["min_margin"] >= -ROUNDOFF for r in hemi)}
    measured = {"jacobian_error": max(r["error"] for r in jac),
                "largest_real_part": max(r["largest_real_part"] for r in jac),
                "split_difference": min(v["other_split"] for v in split.values()),
                "hemisphere_margin": min(r["min_margin"] for r in hemi), "flags": flags}
    expected = {"jacobian_error": 0.0, "largest_real_part": "<= 0", "split_difference": f">= {SPLIT_MIN:g}",
                "hemisphere_margin": ">= 0"}
    return CheckResult("architectures.rope-consensus", _status(all(flags.values())), measured, expected,
                       f"Jacobian {JACOBIAN_TOL:g}; equilibrium, torus invariance, real parts and hemisphere "
                       f"{ROUNDOFF:g}; a different split moves the spectrum by >= {SPLIT_MIN:g}",
                       {"jacobian": jac, "split": split, "hemisphere": hemi, "base": BASE, "beta": BETA})
