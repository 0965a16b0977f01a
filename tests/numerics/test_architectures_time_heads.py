"""Several heads with time-dependent weights (numerics.architectures.time_heads; claim
architectures.time-dependent-heads)."""
import numpy as np
import pytest

from numerics.common.errors import InputError


def test_time_dependent_heads_claim_passes():
    from numerics.architectures.claims_time_heads import check_time_dependent_heads

    r = check_time_dependent_heads()
    assert r.status == "passed", r.measured["flags"]


def test_partial_time_is_the_time_derivative_at_fixed_state():
    from numerics.architectures.claims_time_heads import problem
    from numerics.architectures.time_heads import energy, partial_time
    from numerics.core.trajectory import uniform_sphere

    Bs, cases = problem()
    X = uniform_sphere(5, 3, 1)
    h = 1e-5
    for w in cases.values():
        fd = (energy(X, 1.5, Bs, w, 0.9 + h) - energy(X, 1.5, Bs, w, 0.9 - h)) / (2 * h)
        assert abs(partial_time(X, 1.5, Bs, w, 0.9) - fd) < 1e-8


def test_constant_weights_are_the_autonomous_heads():
    from numerics.architectures.claims_time_heads import problem
    from numerics.architectures.time_heads import heads_at, settling_weights

    Bs, _ = problem()
    w = settling_weights([0.8, 0.3], [0.8, 0.3], [1.0, 1.0], [1.0, 1.0])
    a, b = heads_at(Bs, w, 0.0), heads_at(Bs, w, 5.0)
    assert np.array_equal(a.score_maps, b.score_maps) and np.array_equal(a.value_maps, b.value_maps)


def test_oscillating_amplitude_checked():
    from numerics.architectures.time_heads import oscillating_weights

    with pytest.raises(InputError):
        oscillating_weights([1.0], 1.5, 1.0, [0.0])
