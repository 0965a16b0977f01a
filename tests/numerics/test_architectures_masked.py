"""The masked mean-field solver (numerics.architectures.masked_meanfield): exact integration of polynomials,
mixtures of curves vs interleaved causal particles, input errors, and planted errors that the claim catches."""
from __future__ import annotations

import numpy as np
import pytest

from numerics.architectures import claims as AC
from numerics.architectures import masked_meanfield as MM
from numerics.common.errors import InputError
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate


def test_integration_matrix_is_exact_for_polynomials():
    N = 12
    s = MM.chebyshev_labels(N)
    S = MM.integration_matrix(N)
    for k in range(N):  # degree <= N - 1: exact up to rounding
        np.testing.assert_allclose(S @ s**k, s ** (k + 1) / (k + 1), atol=1e-14)
    assert np.abs(S @ s**N - s ** (N + 1) / (N + 1)).max() > 1e-10  # degree N is not (the check can fail)


def test_constant_curve_is_stationary():
    """A constant curve is stationary (every token attends to copies of itself: P_x x = 0)."""
    x = np.array([0.6, 0.8])
    sol = MM.solve_masked_meanfield(lambda s: np.tile(x, (s.size, 1)), 1.0, 2.0, kind="usa", N=8)
    assert np.abs(sol.X[-1] - x).max() < 1e-12  # round-off of P_x x (~1e-16 e^beta per evaluation), integrated


def test_mixture_of_two_curves_vs_interleaved_particles():
    """M = 2 curves with equal weights: 2m tokens, tokens 2k-1, 2k at label k/m on curves 1, 2. First-order
    convergence in m (observed order within 0.15 of 1). The curves start at the same point at s = 0: the k-th
    token of curve 1 weighs the curves k : k-1 instead of 1 : 1, an O(1/k) weight error on curves O(k/m) apart.
    (Curves 1 rad apart at s = 0 give a boundary layer, error ~ 1/(4 s m), and a measured order of about 0.5.)"""
    def curves(s):
        g1, g2 = 2.0 * s, -1.5 * s + 0.2 * np.sin(4 * s)
        return np.stack([np.stack([np.cos(g1), np.sin(g1)], -1), np.stack([np.cos(g2), np.sin(g2)], -1)])

    T = 2.0
    sol = MM.solve_masked_meanfield(curves, T, 1.0, N=32)
    errs = []
    for m in (40, 80):
        lab = np.arange(1, m + 1) / m
        X0 = np.moveaxis(curves(lab), 0, 1).reshape(2 * m, 2)  # token order: (label 1/m, curve 1), (1/m, 2), ...
        tr = simulate(Model("sa", 1.0, causal=True), X0, T, solver=Solver("adaptive", rtol=1e-11, atol=1e-13,
                      backend="direct"), save=SaveAt(times=[0.0, T]))
        Xp = tr.X[-1].reshape(m, 2, 2)
        errs.append(np.abs(np.moveaxis(Xp, 1, 0) - sol.at(lab)).max())
    assert abs(np.log2(errs[0] / errs[1]) - 1.0) < 0.15, errs


@pytest.mark.parametrize("kwargs, message", [
    ({"initial": lambda s: np.stack([2 * np.cos(s), np.sin(s)], -1)}, "unit sphere"),
    ({"initial": lambda s: np.ones(3)}, "initial curves must give"),
    ({"weights": [0.5, 0.6]}, "curve weights"),
    ({"Q": np.eye(3)}, "Q must be 2 x 2"),
    ({"kind": "xa"}, "model"),
    ({"N": 1}, "label nodes"),
    ({"t_end": 0.0}, "t_end must be > 0"),   # nothing to integrate (was a confusing message about the times)
    ({"t_end": -1.0}, "t_end must be > 0"),
])
def test_input_errors(kwargs, message):
    args = {"initial": MM.curve_circle, "t_end": 1.0, "beta": 1.0}
    args.update(kwargs)
    with pytest.raises(InputError, match=message):
        MM.solve_masked_meanfield(args.pop("initial"), args.pop("t_end"), args.pop("beta"), **args)


def test_claim_fails_with_the_mask_reversed():
    """Planted: particles attend to labels >= s (mask reversed). The error stays O(1): observed order ~ 0."""
    rows = AC.masked_meanfield_rows(MM.curve_circle, kinds=("sa",), ns=(50, 100, 200), reverse=True)
    res = AC._masked_result("planted", rows)
    assert res.status == "failed" and rows[0]["particles"][-1]["max_error"] > 0.5


def test_claim_fails_with_a_planted_solver_error(monkeypatch):
    """Planted: the solver integrates from 0 to s with beta 2% too large. The particle error stops shrinking at
    order 1."""
    real = MM.masked_velocity
    monkeypatch.setattr(MM, "masked_velocity", lambda X, w, S, beta, *a: real(X, w, S, 1.02 * beta, *a))
    rows = AC.masked_meanfield_rows(MM.curve_circle, kinds=("sa",), ns=(50, 100, 200))
    assert AC._masked_result("planted", rows).status == "failed", rows[0]["observed_orders"]


def test_particle_errors_returns_the_largest_run_and_reports_progress():
    """return_largest gives the state of max(ns) (sizes unsorted), the same as a separate causal_particles run;
    progress counts the particle work sum n^2 and ends at the total."""
    sol = MM.solve_masked_meanfield(MM.curve_circle, 0.5, 1.0, N=16)
    calls = []
    rows, X = MM.particle_errors(sol, MM.curve_circle, (24, 12), beta=1.0, return_largest=True,
                                 progress=lambda done, total: calls.append((done, total)))
    assert [r["n"] for r in rows] == [24, 12] and X.shape == (24, 2)
    assert np.array_equal(X, MM.causal_particles(MM.curve_circle, 24, 0.5, 1.0))
    done = [c[0] for c in calls]
    assert all(c[1] == 24**2 + 12**2 for c in calls) and done == sorted(done) and done[-1] == 24**2 + 12**2
    assert MM.particle_errors(sol, MM.curve_circle, (12,), beta=1.0) == rows[1:]   # default: rows only


def test_self_convergence_is_the_difference_of_two_solves():
    sol, fine, err = MM.self_convergence(MM.curve_circle, 0.5, 1.0, N=16)
    assert sol.labels.size == 16 and fine.labels.size == 24
    grid = np.linspace(0.0, 1.0, 201)
    assert err == float(np.max(np.abs(sol.at(grid) - fine.at(grid)))) and err < 1e-6
