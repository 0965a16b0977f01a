"""method="adaptive" picks DOP853 or DP5 by tolerance and records it; DOP853's initial step is Hairer's hinit
(checked against SciPy's implementation); DP5 is fifth order by step halving. Each check fails on a planted error."""
import numpy as np
import pytest

import numerics.core.integrators as integ
from numerics.core.field import make_field
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere


@pytest.fixture(scope="module")
def problem():
    return make_field(3, 1.0, "sa"), uniform_sphere(8, 3, 1)


def _scipy_hinit(field, X, rtol, atol):
    from scipy.integrate._ivp.common import select_initial_step

    shape = X.shape
    fun = lambda t, y: field(y.reshape(shape)).ravel()  # noqa: E731
    y0 = X.ravel()
    return float(select_initial_step(fun, 0.0, y0, np.inf, np.inf, fun(0.0, y0), 1, 7, rtol, atol))


@pytest.mark.parametrize("rtol", [1e-3, 1e-9, 1e-12])
def test_dop853_initial_step_is_scipys(problem, rtol):
    field, X0 = problem
    mine = integ._hinit(lambda X, t: field(X), X0, field(X0), 0.0, rtol, rtol * 1e-3, 7)
    assert mine == pytest.approx(_scipy_hinit(field, X0, rtol, rtol * 1e-3), rel=1e-12)


def test_initial_step_check_catches_a_wrong_exponent(problem):
    field, X0 = problem
    planted = integ._hinit(lambda X, t: field(X), X0, field(X0), 0.0, 1e-9, 1e-12, 8)  # h^(1/9), not 1/8
    assert planted != pytest.approx(_scipy_hinit(field, X0, 1e-9, 1e-12), rel=1e-6)


def _dp5_slope(field, X0):
    steppers = {"dp5": integ.step_dp5}
    _, ref = integ.integrate_fixed(field, X0, 1.0, 1 / 256, "dp5", save_every=10**9, steppers=steppers)
    return integ.observed_order(field, X0, 1.0, "dp5", [1 / 4, 1 / 8, 1 / 16, 1 / 32], ref[-1], steppers)[0]


def test_dp5_is_fifth_order(problem):
    field, X0 = problem
    assert abs(_dp5_slope(field, X0) - 5.0) <= 0.3


def test_dp5_order_check_catches_a_planted_weight(problem, monkeypatch):
    field, X0 = problem
    B5 = integ._DP_B5.copy()
    B5[0] += 1e-3  # weights no longer sum to 1: first order
    monkeypatch.setattr(integ, "_DP_B5", B5)
    assert abs(_dp5_slope(field, X0) - 5.0) > 0.3


def test_adaptive_scheme_rule():
    assert integ.adaptive_scheme(1e-9) == "dop853" and integ.adaptive_scheme(1e-3) == "dop853"
    assert integ.adaptive_scheme(1.1e-3) == "dp5" and integ.adaptive_scheme(1e-2) == "dp5"


@pytest.mark.parametrize("rtol, used", [(1e-8, "dop853"), (1e-2, "dp5")])
def test_adaptive_runs_the_chosen_scheme_and_records_it(rtol, used):
    model, X0 = Model("sa", 2.0), uniform_sphere(12, 3, 4)
    save = SaveAt(times=np.linspace(0.0, 2.0, 5))
    auto = simulate(model, X0, 2.0, solver=Solver("adaptive", rtol=rtol, atol=rtol * 1e-3), save=save)
    pinned = simulate(model, X0, 2.0, solver=Solver(used, rtol=rtol, atol=rtol * 1e-3), save=save)
    assert auto.meta["method_used"] == used and auto.meta["integrator_stats"]["method_used"] == used
    assert auto.meta["method"] == "adaptive" and pinned.meta["method_used"] == used
    assert np.array_equal(auto.X, pinned.X)
    assert auto.meta["integrator_stats"]["field_evaluations"] == pinned.meta["integrator_stats"]["field_evaluations"]


def test_dop853_needs_fewer_evaluations_than_dp5_at_matched_accuracy(problem):
    """The basis of the rule at rtol <= 1e-3 (counts, not times; n = 8, d = 3, beta = 1, t in [0, 4]): DP5 at
    rtol 1e-9 reaches an error near 4e-11 with about 500 evaluations; DOP853 at rtol 1e-11 is more accurate
    (about 1.6e-11) with about 300. The reference is DOP853 at rtol 1e-13 (error near 1e-12 by the same sweep)."""
    field, X0 = problem
    save = np.linspace(0.0, 4.0, 5)
    _, ref, _ = integ.integrate_dop853(field, X0, save, rtol=1e-13, atol=1e-15)
    _, a, sa = integ.integrate_dop853(field, X0, save, rtol=1e-11, atol=1e-14)
    _, b, sb = integ.integrate_adaptive(field, X0, save, rtol=1e-9, atol=1e-12)
    err_a, err_b = np.max(np.abs(a - ref)), np.max(np.abs(b - ref))
    assert err_a <= err_b and sa.evaluations < sb.evaluations, (err_a, err_b, sa.evaluations, sb.evaluations)


def test_cli_reports_the_scheme_adaptive_ran(capsys, tmp_path):
    from tests.cli.helpers import run_json

    argv = ["simulate", "--model", "sa", "--n", "10", "--d", "3", "--beta", "1", "--t-end", "0.5", "--method",
            "adaptive", "--out", str(tmp_path / "a.npz")]
    assert run_json(capsys, argv)["method_used"] == "dop853"
    assert run_json(capsys, argv + ["--rtol", "1e-2"])["method_used"] == "dp5"


@pytest.mark.parametrize("method", ["dop853", "dp5"])
def test_adaptive_runs_stop_at_the_work_limit(method, monkeypatch):
    """An adaptive run's length is not known in advance (t_end = 1e308 used to run until the 10^7-step cap):
    it stops with a clear error once its field evaluations use up the work limit."""
    import time

    from numerics.common.errors import InputError
    from numerics.common.limits import evaluation_budget

    monkeypatch.setenv("ATTNFLOW_MAX_WORK_HOURS", "2e-5")  # 3.6e8 operations: ~3000 evaluations at n = 16
    budget = evaluation_budget(16 * 16 * (2 * 3 + 8))
    assert 1000 < budget < 10_000
    start = time.process_time()  # CPU time, which load does not stretch (tests/cpu_budget.py)
    with pytest.raises(InputError, match="work limit") as info:
        simulate(Model("sa", 1.0), uniform_sphere(16, 3, 0), 1e308, solver=Solver(method, rtol=1e-6))
    assert time.process_time() - start < 60
    evaluations = float(str(info.value).split("stopped after ")[1].split()[0])
    assert budget <= evaluations <= budget + 13  # one step past the budget at most (12 evaluations + hinit)


def _dop853_against_scipy(field, X0):
    """Our DOP853 and SciPy's on the same flat problem (no projection) at rtol 1e-8, atol 1e-11: the same
    algorithm (error estimate, RMS norm, hinit, step factors) takes the same steps, so the outputs agree to
    rounding (measured 2.2e-15) and the evaluation counts differ by SciPy's bookkeeping only."""
    from scipy.integrate import solve_ivp

    times = np.linspace(0.0, 2.0, 5)
    _, states, stats = integ.integrate_dop853(field, X0, times, rtol=1e-8, atol=1e-11, project=None)
    shape = X0.shape
    ref = solve_ivp(lambda t, y: field(y.reshape(shape)).ravel(), (0.0, 2.0), X0.ravel(), method="DOP853",
                    t_eval=times, rtol=1e-8, atol=1e-11)
    return float(np.max(np.abs(states.reshape(len(times), -1) - ref.y.T))), stats.evaluations, ref.nfev


def test_dop853_takes_scipys_steps(problem):
    field, X0 = problem
    diff, ours, theirs = _dop853_against_scipy(field, X0)
    assert diff <= 1e-12, diff
    assert abs(ours - theirs) <= 5, (ours, theirs)


def test_dop853_step_check_catches_the_max_norm(problem, monkeypatch):
    """With the max norm of dp5 instead of the RMS norm (the code before it matched SciPy) the steps differ."""
    field, X0 = problem
    monkeypatch.setattr(integ, "_rms", lambda Z: float(np.max(np.abs(Z))) if Z.size else 0.0)
    diff, ours, theirs = _dop853_against_scipy(field, X0)
    assert diff > 1e-12 or abs(ours - theirs) > 5
