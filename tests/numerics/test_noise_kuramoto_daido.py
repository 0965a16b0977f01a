"""The noisy Kuramoto-Daido model W = cos u + m cos 2u (numerics.noise.kuramoto_daido)."""
import numpy as np
import pytest

from numerics.common.errors import InputError


def test_kuramoto_daido_claim_passes():
    from numerics.noise.claims_daido import check_kuramoto_daido

    r = check_kuramoto_daido()
    assert r.status == "passed", r.measured["flags"]


def test_linear_threshold_is_their_K_sharp():
    from numerics.noise.kuramoto_daido import linear_threshold

    for m in (0.0, 0.3, 1.0, 1.7, 5.0):
        D, mode = linear_threshold(m)
        assert 1 / (2 * D) == pytest.approx(min(1.0, 1.0 / m) if m > 0 else 1.0, rel=1e-15)
        assert mode == (1 if m <= 1 else 2)


def test_first_order_inside_the_window_by_two_routes():
    from numerics.noise.kuramoto_daido import grid_minimum, kuramoto_daido_transition

    tr = kuramoto_daido_transition(1.0)
    assert tr.kind == "discontinuous" and tr.ordered == "polar" and tr.coupling < 0.9
    above, _ = grid_minimum(1.0, tr.noise * (1 + 1e-4))
    below, r = grid_minimum(1.0, tr.noise * (1 - 1e-4))
    assert above >= -1e-12 and below < 0 and r[0] > 0.5


def test_grid_gradient_matches_finite_differences():
    from numerics.noise.kuramoto_daido import grid_free_energy

    c, h = np.array([1.0, 0.7, -0.3]), 1e-6
    _, grad, _ = grid_free_energy(c, 0.53, 0.8)
    fd = [(grid_free_energy(c + h * e, 0.53, 0.8)[0] - grid_free_energy(c - h * e, 0.53, 0.8)[0]) / (2 * h)
          for e in np.eye(3)]
    assert np.allclose(grad, fd, atol=1e-8)


def test_bad_m():
    from numerics.noise.kuramoto_daido import kuramoto_daido_transition

    with pytest.raises(InputError):
        kuramoto_daido_transition(-1.0)
    with pytest.raises(InputError):
        kuramoto_daido_transition(float("nan"))


@pytest.mark.slow
def test_kuramoto_daido_window_claim_passes():
    from numerics.noise.claims_daido import check_kuramoto_daido_window

    r = check_kuramoto_daido_window()
    assert r.status == "passed", r.measured["flags"]
