"""Field evaluations of the adaptive integrators against SciPy's DOP853 at matched accuracy.

Rows: ``adaptive`` (``method="adaptive"``: the scheme :func:`numerics.core.integrators.adaptive_scheme` picks,
recorded as ``method_used``), ``dp5`` (Dormand-Prince 5(4)), ``dop853`` and SciPy's DOP853.

For a tolerance sweep, each integrator runs the ``sa`` dynamics from the same start to ``t_end`` with 11
output times; its accuracy is the largest error of the outputs against a reference (SciPy DOP853 at
rtol = 2.5e-14, atol = 1e-16), and its cost the number of field evaluations. The comparison is at matched
accuracy: for each attnflow run, SciPy's evaluations at the same error are interpolated (log-log) from its
own sweep. No timing is involved; the counts do not depend on machine load.
"""
from __future__ import annotations

import numpy as np

from numerics.common.errors import require_int, require_real
from numerics.core.field import make_field
from numerics.core.integrators import integrate, integrate_adaptive, integrate_dop853
from numerics.core.trajectory import uniform_sphere

TOLERANCES = (1e-5, 1e-7, 1e-9, 1e-11)


def _scipy_run(field, X0, times, rtol, atol):
    from scipy.integrate import solve_ivp

    shape = X0.shape
    sol = solve_ivp(lambda t, y: field(y.reshape(shape)).ravel(), (times[0], times[-1]), X0.ravel(),
                    method="DOP853", rtol=rtol, atol=atol, t_eval=times)
    states = sol.y.T.reshape((len(times),) + shape)
    return states / np.linalg.norm(states, axis=2, keepdims=True), int(sol.nfev)


def benchmark_adaptive(n: int = 32, d: int = 3, beta: float = 1.0, t_end: float = 10.0, seed: int = 0,
                       tolerances=TOLERANCES) -> dict:
    """Evaluations against error for ``adaptive`` (the scheme adaptive_scheme(rtol) picks), ``dp5``, ``dop853``
    and SciPy's DOP853; see the module text."""
    n = require_int(n, "n", minimum=2)
    d = require_int(d, "d", minimum=2)
    beta = require_real(beta, "beta")
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    field = make_field(d, beta, "sa")
    X0 = uniform_sphere(n, d, seed)
    times = np.linspace(0.0, t_end, 11)
    ref, _ = _scipy_run(field, X0, times, 2.5e-14, 1e-16)  # SciPy clips rtol below 100 eps

    def error(states):
        return float(np.max(np.linalg.norm(states - ref, axis=2)))

    runs = {"adaptive": [], "dp5": [], "dop853": [], "scipy-dop853": []}
    for tol in tolerances:
        for name, run in (("dp5", integrate_adaptive), ("dop853", integrate_dop853)):
            _, states, stats = run(field, X0, times, rtol=tol, atol=tol * 1e-3)
            runs[name].append({"rtol": tol, "error": error(states), "evaluations": stats.evaluations})
        # method="adaptive" as users call it: the scheme adaptive_scheme(rtol) picks, recorded as method_used
        _, states, stats = integrate(field, X0, float(times[-1]), "adaptive", save_times=times, rtol=tol,
                                     atol=tol * 1e-3)
        runs["adaptive"].append({"rtol": tol, "error": error(states), "evaluations": stats["field_evaluations"],
                                 "method_used": stats["method_used"]})
    # SciPy's sweep: every half decade from 100x looser than the loosest (at most 1e-3) to 100x tighter than the tightest
    # tolerance, so that the log-log interpolation at an attnflow run's error spans at most half a decade
    lo, hi = min(np.log10(max(tolerances)) + 2, -3.0), np.log10(min(tolerances)) - 2  # looser diverges at n = 32
    for tol in 10.0 ** np.arange(lo, hi - 0.25, -0.5):
        states, nfev = _scipy_run(field, X0, times, tol, tol * 1e-3)
        runs["scipy-dop853"].append({"rtol": tol, "error": error(states), "evaluations": nfev})
    sp = sorted(runs["scipy-dop853"], key=lambda r: r["error"])
    log_err = np.log([r["error"] for r in sp])
    log_ev = np.log([r["evaluations"] for r in sp])
    for name in ("adaptive", "dp5", "dop853"):
        for r in runs[name]:
            inside = log_err[0] <= np.log(r["error"]) <= log_err[-1]
            r["scipy_evaluations_at_same_error"] = (float(np.exp(np.interp(np.log(r["error"]), log_err, log_ev)))
                                                    if inside else None)
            r["ratio_to_scipy"] = (r["evaluations"] / r["scipy_evaluations_at_same_error"]
                                   if inside else None)
    return {"n": n, "d": d, "beta": beta, "t_end": t_end, "outputs": int(times.size), "runs": runs}
