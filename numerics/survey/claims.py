"""Claims ``survey.*``: quantitative statements of the survey arXiv 2512.01868 that no other claim covers. The
statements the survey restates from other papers are linked to their claims in proofs_notes/survey-statements.md."""
from __future__ import annotations

import numpy as np

from numerics.common.verification import CheckResult, claim
from numerics.core.model import Model
from numerics.core.trajectory import uniform_sphere
from numerics.survey.meanshift import mean_shift_gradient, time_factor

SOURCE = "Rigollet, The mean-field dynamics of transformers, arXiv 2512.01868 (survey, ICM 2026)"
#: sa field vs (1/beta) x FD gradient of log f: O(h^2) + round-off/h ~ 1e-10 relative (measured ~1e-10): 1e-7
MEANSHIFT_TOLERANCE = 1e-7
MEANSHIFT_BETAS = (0.5, 2.0, 8.0)


def mean_shift_rows(betas=MEANSHIFT_BETAS, n: int = 12, d: int = 3, seed: int = 4) -> list[dict]:
    """Per beta: the least-squares factor c in v^{sa} = c grad log f (expected 1/beta) and the relative residual
    of v^{sa} - grad log f / beta (field: backend direct; gradient: central differences of log f)."""
    out = []
    X = uniform_sphere(n, d, seed)
    for beta in betas:
        field, backend = Model("sa", beta).vector_field(n, d, "direct")
        V = field(X)
        G = mean_shift_gradient(X, beta)
        out.append({"beta": beta, "backend": backend, "time_factor": time_factor(V, G), "expected": 1.0 / beta,
                    "relative_residual": float(np.max(np.abs(V - G / beta)) / np.max(np.abs(V)))})
    return out


@claim(id="survey.mean-shift",
       title="sa is the Riemannian gradient ascent of the log kernel density, with time factor 1/beta: "
             "v_i = (1/beta) grad log f_X(x_i)",
       source=SOURCE + ", attention as mean-shift clustering", note="survey-mean-shift.md")
def check_mean_shift() -> CheckResult:
    rows = mean_shift_rows()
    worst = max(max(abs(r["time_factor"] * r["beta"] - 1.0), r["relative_residual"]) for r in rows)
    ok = worst <= MEANSHIFT_TOLERANCE
    return CheckResult("survey.mean-shift", "passed" if ok else "failed", worst, 0.0,
                       f"|beta c - 1| and residual <= {MEANSHIFT_TOLERANCE:g}",
                       {"cases": rows, "paths": "sa field (backend direct) vs central differences of log f_X"})
