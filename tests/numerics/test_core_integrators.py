"""Sphere integrators: observed orders (claim 4), adaptive accuracy, unit norms."""
import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core.field import make_field
from numerics.core.integrators import integrate_adaptive, integrate_fixed, observed_order, step_layer, step_rk4
from numerics.core.trajectory import uniform_sphere


@pytest.fixture(scope="module")
def problem():
    X0 = uniform_sphere(8, 3, 1)
    field = make_field(3, 1.0, "sa")
    _, ref = integrate_fixed(field, X0, 1.0, 1 / 1024, "rk4", save_every=10**9)
    return field, X0, ref[-1]


def test_layer_is_first_order(problem):
    field, X0, ref = problem
    slope, errors = observed_order(field, X0, 1.0, "layer", [1 / 16, 1 / 32, 1 / 64, 1 / 128], ref)
    assert abs(slope - 1.0) <= 0.1, errors


def test_rk4_is_fourth_order(problem):
    field, X0, ref = problem
    slope, errors = observed_order(field, X0, 1.0, "rk4", [1 / 4, 1 / 8, 1 / 16, 1 / 32], ref)
    assert abs(slope - 4.0) <= 0.2, errors


def test_adaptive_meets_tolerance_and_hits_save_times(problem):
    field, X0, ref = problem
    save = np.array([0.0, 0.25, 0.6, 1.0])
    # a correct DP5 needs well under 10^3 steps here; the step cap turns a broken error estimate (the mutant
    # dp-b5-coefficient: steps shrink to ~rtol) into a quick failure instead of a 10^7-step hang
    times, states, stats = integrate_adaptive(field, X0, save, rtol=1e-10, atol=1e-12, max_steps=10_000)
    assert np.array_equal(times, save)
    assert np.abs(states[-1] - ref).max() < 1e-8  # reference rk4 error at dt = 1/1024 is ~1e-12
    assert stats.accepted > 0 and stats.evaluations >= 7 * stats.accepted
    assert np.allclose(np.linalg.norm(states, axis=2), 1.0, atol=1e-15)


def test_adaptive_rejects_bad_save_times(problem):
    field, X0, _ = problem
    with pytest.raises(InputError):
        integrate_adaptive(field, X0, [0.0, 1.0, 0.5])


def test_steps_stay_on_sphere_and_layer_formula(problem):
    field, X0, _ = problem
    h = 0.3
    Y = step_layer(field, X0, h)
    raw = X0 + h * field(X0)
    assert np.allclose(Y, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-15)
    assert np.allclose(np.linalg.norm(step_rk4(field, X0, h), axis=1), 1.0, atol=1e-15)


def test_fixed_saves_every_and_last(problem):
    field, X0, _ = problem
    times, states = integrate_fixed(field, X0, 1.0, 0.1, "layer", save_every=3)
    assert times[0] == 0.0 and times[-1] == pytest.approx(1.0)
    assert len(times) == len(states) == 1 + 3 + 1  # steps 3, 6, 9 and the last (10)
    with pytest.raises(InputError):
        integrate_fixed(field, X0, 1.0, 0.1, "adaptive")


def test_adaptive_meets_its_tolerance():
    """Dormand-Prince at rtol = 1e-8 (atol 1e-10) on sa, beta = 2, n = 20, t = 2 against rtol = 1e-13: the global
    error is of the order of the local tolerance times t and the Lipschitz constant (O(1) here); measured
    9e-10, bound 1e-7. An error estimate that is 1000x too small (a planted mutant, which every other test let
    through) gives ~2e-6."""
    from numerics.core.field import make_field
    from numerics.core.integrators import integrate_adaptive
    from numerics.core.trajectory import uniform_sphere

    X0 = uniform_sphere(20, 3, 0)
    f = make_field(3, 2.0, "sa")
    ref = integrate_adaptive(f, X0, [0.0, 2.0], rtol=1e-13, atol=1e-14)[1][-1]
    X = integrate_adaptive(f, X0, [0.0, 2.0], rtol=1e-8, atol=1e-10)[1][-1]
    assert np.abs(X - ref).max() <= 1e-7


def test_dop853_is_eighth_order(problem):
    """Fixed DOP853 steps h = 1/2 ... 1/8 to t = 1: least-squares slope of log error against log h."""
    from numerics.core.integrators import step_dop853

    field, X0, _ = problem
    ref = X0
    for _ in range(64):
        ref = step_dop853(field, ref, 1 / 64)
    errors = []
    for steps in (2, 4, 8):
        X = X0
        for _ in range(steps):
            X = step_dop853(field, X, 1 / steps)
        errors.append(float(np.max(np.linalg.norm(X - ref, axis=1))))
    slope = np.polyfit(np.log([1 / 2, 1 / 4, 1 / 8]), np.log(errors), 1)[0]
    assert abs(slope - 8.0) <= 0.5, errors


def test_dop853_dense_output_order_and_tolerance(problem):
    """The interpolant at mid-step converges like h^8 (7th-order interpolant, local error); adaptive runs meet
    the tolerance at interpolated output times and use fewer evaluations than Dormand-Prince 5(4)."""
    from numerics.core.integrators import _dop853_dense, _dop853_stages, _dop853_tableau, integrate_dop853

    field, X0, ref = problem
    C, A, B, E3, E5, D = _dop853_tableau()
    g = lambda Y, t: field(Y)  # noqa: E731
    errors = []
    for h in (0.4, 0.2, 0.1):
        K = np.empty((16,) + X0.shape)
        f = field(X0)
        X1 = _dop853_stages(g, X0, f, 0.0, h, K)
        K[12] = f1 = field(X1)
        mid = _dop853_dense(g, X0, X1, f, f1, K, 0.0, h, A, C, D)(h / 2)
        exact = X0
        for _ in range(32):
            exact = step_dop853_flat(field, exact, h / 64)
        errors.append(float(np.max(np.abs(mid - exact))))
    slope = np.polyfit(np.log([0.4, 0.2, 0.1]), np.log(errors), 1)[0]
    assert abs(slope - 8.0) <= 0.6, errors
    save = np.array([0.0, 0.25, 0.6, 1.0])
    times, states, stats = integrate_dop853(field, X0, save, rtol=1e-10, atol=1e-12)
    _, _, dp5 = integrate_adaptive(field, X0, save, rtol=1e-10, atol=1e-12)
    assert np.array_equal(times, save) and np.abs(states[-1] - ref).max() < 1e-8
    assert np.allclose(np.linalg.norm(states, axis=2), 1.0, atol=1e-15)
    assert stats.evaluations < dp5.evaluations, (stats.evaluations, dp5.evaluations)


def step_dop853_flat(field, X, h):
    from numerics.core.integrators import step_dop853

    return step_dop853(field, X, h, project=None)


def test_dop853_order_check_catches_a_planted_weight_error(problem, monkeypatch):
    """Moving 1e-6 of weight from b_1 to b_6 (still consistent: sum b = 1) breaks the order conditions of
    order >= 2: the observed slope falls far below 8."""
    import numerics.core.integrators as integ

    real = integ._dop853_tableau
    C, A, B, E3, E5, D = real()
    B = B.copy()
    B[0] -= 1e-6
    B[5] += 1e-6
    monkeypatch.setattr(integ, "_dop853_tableau", lambda: (C, A, B, E3, E5, D))
    field, X0, _ = problem
    ref = X0
    for _ in range(64):
        ref = real_step(real, field, ref, 1 / 64)
    errors = []
    for steps in (2, 4, 8):
        X = X0
        for _ in range(steps):
            X = integ.step_dop853(field, X, 1 / steps)
        errors.append(float(np.max(np.linalg.norm(X - ref, axis=1))))
    slope = np.polyfit(np.log([1 / 2, 1 / 4, 1 / 8]), np.log(errors), 1)[0]
    assert slope < 4.0, errors


def real_step(tableau, field, X, h):
    C, A, B, _, _, _ = tableau()
    K = [field(X)]
    for s in range(1, 12):
        K.append(field(X + h * sum(A[s, j] * K[j] for j in range(s))))
    X = X + h * sum(B[j] * K[j] for j in range(12))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_dop853_time_dependent_flat_field():
    """dx/dt = t x on a flat space (project=None): x(t) = x0 e^{t^2/2} at interpolated and step-end outputs."""
    from numerics.core.integrators import integrate

    def field(X, t):
        return t * X

    field.time_dependent = True
    X0 = np.array([[1.0, -0.5]])
    times, states, stats = integrate(field, X0, 2.0, "dop853", save_times=np.linspace(0.0, 2.0, 7), rtol=1e-11,
                                     atol=1e-13, project=None)
    exact = X0[None] * np.exp(times ** 2 / 2)[:, None, None]
    assert np.max(np.abs(states - exact) / np.abs(exact)) < 1e-9
    assert stats["field_evaluations"] > 0
