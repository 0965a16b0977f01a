"""What is proved and what is conjectured about the limit geometry of R^d self-attention (GLPR arXiv 2305.05465),
and a measurement of the codimension of the limit set for value matrices outside the proved cases.

The statements are those of the paper as summarised in its abstract and overview (see
``proofs_notes/rd-polytope-leaders.md`` for what could and could not be checked against the full text).
"""
from __future__ import annotations

import numpy as np

from numerics.core.model import SaveAt, Solver
from numerics.rd.dynamics import simulate_rd
from numerics.rd.geometry import boolean_limit, limit_codimension, spread
from numerics.rd.model import RdModel

#: the catalogue: id -> (status, statement, where attnflow checks or measures it)
CATALOGUE = {
    "rd-d1-boolean": ("proved (GLPR)", "d = 1, V > 0, QK > 0: P(t) converges to a low-rank Boolean matrix led by "
                      "the extreme tokens", "claim rd.one-dimensional-boolean"),
    "rd-identity-polytope": ("proved (GLPR)", "V = I_d (Q^T K positive definite): the rescaled tokens converge to "
                             "the vertices of a convex polytope (the leaders)", "claim rd.polytope-leaders"),
    "rd-hyperplanes": ("proved (GLPR)", "V with a simple positive top eigenvalue: the rescaled tokens cluster on at "
                       "most three parallel hyperplanes", "claim rd.hyperplanes"),
    "rd-multiplicity-mixed": ("partly proved (GLPR: special cases)", "top eigenvalue of multiplicity k: a mix of "
                              "polytope (in the top eigenspace) and subspace clustering; limit set of codimension k",
                              "claim rd.codimension-survey (measured, not decided)"),
    "rd-general-V": ("conjecture (ours, a heuristic)", "general V: the limit set of the rescaled tokens has "
                     "codimension equal to the number of eigenvalues of V with positive real part (z-components "
                     "along them contract toward the leader, those along Re < 0 expand)",
                     "claim rd.codimension-survey (measured, not decided)"),
}

#: value matrices of the survey: name -> (V, codimension predicted by the heuristic: #{eigenvalues, Re > 0})
SURVEY = {
    "top multiplicity 2 (d = 3)": (np.diag([1.0, 1.0, -0.5]), 2),
    "simple top, second positive (d = 3)": (np.diag([1.0, 0.3, -0.5]), 2),
    "simple top, others negative (d = 3)": (np.diag([1.0, -0.2, -0.5]), 1),
    "complex top pair (d = 3)": (np.array([[0.8, -0.6, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, -0.3]]), 2),
}


def codimension_survey(n: int = 30, t_end: float = 20.0, seeds=(0, 1), dt: float = 0.025) -> list[dict]:
    """The codimension of the limit set (:func:`numerics.rd.geometry.limit_codimension`) for each SURVEY matrix."""
    rows = []
    for name, (V, expected) in SURVEY.items():
        d = V.shape[0]
        model = RdModel("softmax", d, V=V, A=np.eye(d))
        for seed in seeds:
            X0 = np.random.default_rng(seed).standard_normal((n, d))
            run = simulate_rd(model, X0, t_end, solver=Solver("rk4", dt=dt), save=SaveAt(every=10_000))
            lim = boolean_limit(run.P[-1])
            cod = limit_codimension(run.Z[-1], lim["assignment"], scale=spread(X0))
            rows.append({"case": name, "seed": seed, "codimension": cod["codimension"],
                         "group_dimensions": cod["group_dimensions"], "leaders": len(lim["leaders"]),
                         "boolean_gap": lim["boolean_gap"], "heuristic": expected})
    return rows
