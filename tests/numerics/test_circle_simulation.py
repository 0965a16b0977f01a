"""numerics.circle.angles: angle integrators, order parameters, energy, circle simulations vs the sphere code."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from numerics.circle.angles import (
    circle_energy,
    initial_angles,
    kuramoto_order_parameter,
    make_angle_field,
    max_angle_deviation,
    order_parameters,
    simulate_circle,
    sphere_angle_deviation,
    step_angle_layer,
)
from numerics.common.errors import InputError
from numerics.core.field import interaction_energy, make_field
from numerics.core.integrators import step_layer
from numerics.core.trajectory import uniform_sphere


def _circle(theta):
    return np.c_[np.cos(theta), np.sin(theta)]


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_angle_layer_is_the_transformer_layer(model, rng):
    theta = rng.uniform(-np.pi, np.pi, 50)
    for h in (0.1, 1.0):
        X1 = step_layer(make_field(2, 3.0, model), _circle(theta), h)
        th1 = step_angle_layer(make_angle_field(3.0, model), theta, h)
        assert max_angle_deviation(np.arctan2(X1[:, 1], X1[:, 0]), th1) <= 1e-13


def test_backends_agree(rng):
    theta = rng.uniform(-np.pi, np.pi, 80)
    for model in ("sa", "usa"):
        a = make_angle_field(2.0, model, backend="fourier")(theta)
        b = make_angle_field(2.0, model, backend="direct")(theta)
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max()


def test_rk4_is_fourth_order():
    errs = []
    ref = simulate_circle("sa", 2.0, 1.0, n=30, seed=3, method="rk4", dt=0.005).theta[-1]
    for dt in (0.1, 0.05):
        errs.append(np.abs(simulate_circle("sa", 2.0, 1.0, n=30, seed=3, method="rk4", dt=dt).theta[-1] - ref).max())
    slope = np.log2(errs[0] / errs[1])
    assert 3.6 <= slope <= 4.4, (errs, slope)


def test_adaptive_agrees_with_rk4():
    a = simulate_circle("usa", 1.0, 2.0, n=40, seed=2, method="adaptive", rtol=1e-11, atol=1e-12,
                        save_times=np.linspace(0, 2, 5))
    b = simulate_circle("usa", 1.0, 2.0, n=40, seed=2, method="rk4", dt=0.005, save_every=100)
    assert np.allclose(a.times, b.times)
    assert max_angle_deviation(a.theta, b.theta) <= 1e-9


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_simulation_matches_sphere_simulation(model):
    circ = simulate_circle(model, 1.5, 1.0, n=60, seed=7, method="rk4", dt=0.01)
    out = sphere_angle_deviation(circ)
    # two code paths, both pinned: angle equations with the Fourier field vs the direct sphere field
    assert out["backends"] == {"angles": "fourier", "sphere": "direct"}
    # both RK4 at h = 0.01 over t = 1: each integrator error ~1e-10; tolerance 1e-8
    assert out["max_angle_deviation"] <= 1e-8
    assert out["frames"] == circ.times.size


def _wrong_sine_coefficients(monkeypatch):
    """Plant an error in the Fourier sine coefficients b_k (b_2 doubled) of the angle field."""
    import numerics.circle.fourier as fourier
    right = fourier.fourier_coefficients

    def wrong(beta, K):
        a, b = right(beta, K)
        b = b.copy()
        b[1:2] *= 2.0
        return a, b

    monkeypatch.setattr(fourier, "fourier_coefficients", wrong)


def test_sphere_comparison_sees_wrong_fourier_coefficients(monkeypatch):
    # before the backend was pinned, simulate(backend="auto") picked the (equally wrong) Fourier field on the
    # sphere side too and the deviation stayed ~1e-13
    _wrong_sine_coefficients(monkeypatch)
    circ = simulate_circle("sa", 1.5, 1.0, n=60, seed=7, method="rk4", dt=0.01)
    assert sphere_angle_deviation(circ)["max_angle_deviation"] > 1e-4


def test_sphere_vs_angle_claim_fails_on_wrong_fourier_coefficients(monkeypatch):
    from numerics.circle.claims import check_sphere_vs_angle_quick
    good = check_sphere_vs_angle_quick()
    assert good.status == "passed" and good.details["backends_as_pinned"]
    assert all(r["backends"] == {"angles": "fourier", "sphere": "direct"} for r in good.details["per_beta"].values())
    _wrong_sine_coefficients(monkeypatch)
    bad = check_sphere_vs_angle_quick()
    assert bad.status == "failed" and bad.measured > 1e-6, bad.measured


def test_energy_increases_and_order_parameter_bounds():
    for model in ("sa", "usa"):
        c = simulate_circle(model, 3.0, 5.0, n=50, seed=1, method="rk4", dt=0.05)
        assert np.all(np.diff(c.energy) >= -1e-12)  # E_beta is a Lyapunov function (ascent) for sa and usa
        assert np.all((c.order_parameter >= 0) & (c.order_parameter <= 1 + 1e-15))


def test_same_seed_same_numbers_and_same_particles_as_sphere():
    a = simulate_circle("sa", 1.0, 0.5, n=20, seed=11, method="layer", dt=0.1)
    b = simulate_circle("sa", 1.0, 0.5, n=20, seed=11, method="layer", dt=0.1)
    assert np.array_equal(a.theta, b.theta)
    assert np.allclose(_circle(initial_angles(20, 11)), uniform_sphere(20, 2, 11), atol=1e-15)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60),
       beta=st.sampled_from([-3.0, -0.5, 0.0, 1e-3, 0.4, 2.0, 15.0, 150.0]))
def test_circle_energy_equals_direct_energy(seed, n, beta):
    theta = np.random.default_rng(seed).uniform(-np.pi, np.pi, n)
    direct = interaction_energy(_circle(theta), beta)
    # both sums are exact up to rounding: relative 1e-12 plus an absolute floor for near-zero energies
    assert abs(circle_energy(theta, beta) - direct) <= 1e-12 * abs(direct) + 1e-15
    if beta >= 0:
        g = interaction_energy(_circle(theta), beta, normalization="gkpr")
        assert abs(circle_energy(theta, beta, normalization="gkpr") - g) <= 1e-12 * g


def test_order_parameters_direct_sum(rng):
    theta = rng.uniform(0, 2 * np.pi, 500)
    r = order_parameters(theta, 5)
    for k in range(1, 6):
        assert abs(r[k - 1] - np.exp(1j * k * theta).mean()) <= 1e-14
    assert abs(kuramoto_order_parameter(theta) - abs(r[0])) <= 1e-15


def test_validation():
    with pytest.raises(InputError):
        simulate_circle("sa", 1.0, 1.0, n=5, method="rk4")  # no dt
    with pytest.raises(InputError):
        simulate_circle("sa", 1.0, -1.0, n=5, dt=0.1)
    with pytest.raises(InputError):
        simulate_circle("xx", 1.0, 1.0, n=5, dt=0.1)
    with pytest.raises(InputError):
        simulate_circle("sa", 1.0, 1.0, dt=0.1)
    with pytest.raises(InputError):
        circle_energy(np.array([0.0, 1.0]), -1.0, normalization="gkpr")
    with pytest.raises(InputError):
        make_angle_field(1.0, "sa", backend="gpu")


@pytest.mark.parametrize("beta", [-10.0, -20.0, -50.0])
def test_circle_energy_negative_beta_clustered(beta, rng):
    # alternating Bessel weights: the order-parameter sum cancels for clustered states; the fallback keeps 1e-12
    theta = rng.normal(0.0, 0.1, 300)
    direct = interaction_energy(_circle(theta), beta)
    assert abs(circle_energy(theta, beta) - direct) <= 1e-12 * abs(direct)
    with pytest.raises(InputError):
        circle_energy(rng.normal(0.0, 0.1, 5000), beta)


@pytest.mark.slow
def test_full_sphere_vs_angle_claim():
    # the default=False claim (t in [0, 20], n = 200, beta in {0, 1, 5}); about 35 s
    from numerics.circle.claims import check_sphere_vs_angle
    res = check_sphere_vs_angle()
    assert res.status == "passed", res.details
    assert all(r["backends"] == {"angles": "fourier", "sphere": "direct"} for r in res.details["per_beta"].values())


@pytest.mark.parametrize("method", ["adaptive", "dp5", "dop853"])
def test_every_adaptive_method_runs_and_names_its_scheme(method):
    """dp5 once raised KeyError here; 'adaptive' names the scheme its tolerance chose (dop853 at rtol <= 1e-3)."""
    from numerics.circle.angles import simulate_circle

    tr = simulate_circle("sa", 1.0, 1.0, n=5, seed=0, method=method, rtol=1e-8)
    expected = {"dp5": "Dormand-Prince 5(4)", "dop853": "Dormand-Prince 8(5,3)", "adaptive": "Dormand-Prince 8(5,3)"}
    assert tr.meta["scheme"].startswith(expected[method])


def test_adaptive_angle_runs_stop_at_the_work_limit(monkeypatch):
    """Like the sphere runs: an adaptive angle run cannot know its length in advance and stops with a one-line
    error once its evaluations use up the work limit (2e-5 hours: a few thousand evaluations at n = 16)."""
    monkeypatch.setenv("ATTNFLOW_MAX_WORK_HOURS", "2e-5")
    with pytest.raises(InputError, match="work limit"):
        simulate_circle("sa", 1.0, 1e308, n=16, seed=0, method="dop853")
