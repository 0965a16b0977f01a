"""Reduced model: coincident groups evolve exactly like it; two-cluster merge time two ways; predictions."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from numerics.common.errors import InputError
from numerics.core.field import attention_field
from numerics.core.integrators import integrate_adaptive
from numerics.clusters.merge_tree import merge_history
from numerics.clusters.reduced import (closest_pair_order, compare_merges, expand_reduced, make_reduced_field,
                              predict_merges, reduce_configuration, two_cluster_laplace, two_cluster_merge_time)
from numerics.core.trajectory import simulate, uniform_sphere


@pytest.mark.parametrize("model", ["sa", "usa"])
@pytest.mark.parametrize("beta", [0.0, 3.0, -1.0])
def test_reduced_field_equals_full_field_on_coincident_groups(model, beta):
    Y = uniform_sphere(4, 3, 5)
    sizes = [1, 2, 3, 4]
    full = attention_field(expand_reduced(Y, sizes), beta, model)
    red = make_reduced_field(beta, sizes, model)(Y)
    assert np.max(np.abs(np.repeat(red, sizes, axis=0) - full)) <= 1e-13


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_coincident_groups_evolve_like_the_reduced_model(model):
    Y = uniform_sphere(3, 3, 2)
    sizes = [2, 3, 5]
    save = np.linspace(0.0, 5.0, 6)
    full = simulate(model, 4.0, 5.0, X0=expand_reduced(Y, sizes), method="adaptive", save_times=save,
                    rtol=1e-10, atol=1e-12)
    _, red, _ = integrate_adaptive(make_reduced_field(4.0, sizes, model), Y, save, rtol=1e-10, atol=1e-12)
    # the groups stay exactly coincident (up to rounding) and follow the reduced ODE up to the integration
    # tolerance (rtol 1e-10: both runs take different steps)
    assert np.max(np.abs(full.X - np.repeat(red, sizes, axis=1))) <= 1e-8


def test_two_cluster_time_quadrature_vs_scalar_ode():
    theta0, beta, eps = 1.0, 6.0, 1e-3

    def rhs(t, y):
        return [-2 * math.sin(y[0]) / (1 + math.exp(beta * (1 - math.cos(y[0]))))]

    def hit(t, y):
        return y[0] - eps
    hit.terminal = True
    sol = solve_ivp(rhs, [0, 1e6], [theta0], events=hit, rtol=1e-12, atol=1e-14, method="LSODA")
    assert sol.t_events[0][0] == pytest.approx(two_cluster_merge_time(theta0, beta, eps), rel=1e-7)


def test_laplace_relative_error_decreases_like_one_over_beta():
    theta0 = 1.2
    c = 2 * math.cos(theta0) / math.sin(theta0) ** 2
    rel = [two_cluster_merge_time(theta0, b, 1e-3) / two_cluster_laplace(theta0, b) - 1 for b in (100, 200, 400)]
    for b, r in zip((100, 200, 400), rel):
        assert b * r == pytest.approx(c, rel=0.05)
    second = [two_cluster_merge_time(theta0, b, 1e-3) / two_cluster_laplace(theta0, b, 2) - 1 for b in (100, 200)]
    assert abs(second[1]) < abs(second[0]) / 3  # O(beta^-2)


def test_predict_merges_two_particles_matches_quadrature():
    theta0, beta, eps = 1.2, 8.0, 1e-3
    Y = np.array([[1.0, 0.0], [math.cos(theta0), math.sin(theta0)]])
    p = predict_merges(Y, [5, 5], beta, eps=eps, t_start=0.0, t_end=1e4, frames=50)
    (event,) = p.events
    assert event.time == pytest.approx(two_cluster_merge_time(theta0, beta, eps), rel=1e-5)
    assert event.clusters == (0, 1) and event.sizes == (5.0, 5.0) and p.final_sizes.tolist() == [10.0]


def test_closest_pair_order_and_prediction_at_large_beta():
    angles = [0.0, 0.8, 2.0, 3.4]  # gaps 0.8, 1.2, 1.4, (2 pi - 3.4 = 2.88)
    Y = np.column_stack([np.cos(angles), np.sin(angles)])
    order = closest_pair_order(Y, [1, 1, 1, 1])
    assert order[0] == frozenset({0, 1})
    p = predict_merges(Y, [1, 1, 1, 1], 15.0, eps=1e-3, t_start=0.0, t_end=1e12, frames=60)
    assert [p.leaves[e.new] for e in p.events] == order


def test_compare_merges_matches_by_content():
    traj = simulate("sa", 6.0, 400.0, X0=np.column_stack([np.cos([0, 0.9, 2.4]), np.sin([0, 0.9, 2.4])]),
                    method="adaptive", save_times=np.concatenate([[0], np.geomspace(0.1, 400, 80)]),
                    rtol=1e-10, atol=1e-12)
    Y, sizes, _ = reduce_configuration(traj.X[0], 1e-3)
    p = predict_merges(Y, sizes, 6.0, eps=1e-3, t_start=0.0, t_end=400.0)
    rows = compare_merges(p, merge_history(traj.times, traj.X, 1e-3))
    assert [r["clusters"] for r in rows] == [[0, 1], [0, 1, 2]]
    # three single particles are exactly the reduced model: predicted times lie within the observed brackets
    assert all(r["ratio"] is not None and 0.9 < r["ratio"] <= 1.0 + 1e-9 for r in rows)


def test_bad_input():
    with pytest.raises(InputError, match="sizes"):
        make_reduced_field(1.0, [1, 0])
    with pytest.raises(InputError, match="t_end"):
        predict_merges(np.eye(2), [1, 1], 1.0, eps=1e-3, t_start=2.0, t_end=1.0)
    with pytest.raises(InputError, match="eps"):
        two_cluster_merge_time(0.5, 3.0, 0.6)
    with pytest.raises(InputError, match="sizes"):
        expand_reduced(np.eye(2), [1, 1.5])
