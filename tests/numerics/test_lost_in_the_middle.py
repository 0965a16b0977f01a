"""numerics.architectures.lost_in_the_middle: the closed form against the series, the finite-N matrix exponential,
the masked mean field and the particle system, and the threshold; each route shown to fail on a planted error."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from numerics.architectures import lost_in_the_middle as L
from numerics.core.model import Model


@pytest.mark.parametrize("c,y", [(0.05, 0.0), (0.7, 0.3), (3.0, 2.0), (11.0, 6.0), (1e-7, 1e-4)])
def test_psi_closed_form_matches_series(c, y):
    assert abs(float(L.psi(c, y)) - L.psi_series(c, y)) <= 1e-13 * L.psi_series(c, y)


def test_finite_n_converges_at_first_order():
    a = float(L.mode_rates(1.0, 1)[0])
    errs = []
    for N in (64, 128, 256):
        sig = np.arange(1, N) / N
        G = L.correlation(2.0, sig, a, 1.0)
        errs.append(np.max((np.abs(L.discrete_correlation(N, 2.0, 1.0, 1.0, a) - G) / G)[sig >= 0.1]))
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(np.abs(orders - 1.0) < 0.1), orders


def test_planted_label_kernel_without_normalisation_fails(monkeypatch):
    """Planted: kappa with e^{lambda s} - 1 for 1 - e^{-lambda s} in the denominator (a lost e^{lambda s}): finite N
    disagrees."""
    a = float(L.mode_rates(1.0, 1)[0])
    N = 256
    sig = np.arange(1, N) / N
    monkeypatch.setattr(L, "label_kernel", lambda s, sigma, lam: lam * np.exp(lam * (np.asarray(sigma) - s))
                        / np.expm1(lam * np.asarray(s, float)))
    G = L.correlation(2.0, sig, a, 1.0)
    assert np.max((np.abs(L.discrete_correlation(N, 2.0, 1.0, 1.0, a) - G) / G)[sig >= 0.1]) > 0.1


def test_threshold_is_the_sign_change_of_the_right_end_slope():
    for beta, lam in ((1.0, 1.0), (2.0, 0.5)):
        tc = L.threshold(beta, lam)
        h = 1e-4

        def slope(t):
            S = L.profile(np.array([1.0, 1.0 - h, 1.0 - 2 * h]), t, beta, lam)
            return (3 * S[0] - 4 * S[1] + S[2]) / (2 * h)

        assert abs(brentq(slope, 0.2 * tc, 5 * tc, xtol=1e-14) / tc - 1.0) < 1e-6
        assert abs(slope(0.7 * tc) / L.right_end_slope(0.7 * tc, beta, lam) - 1.0) < 1e-6
    assert L.threshold(1.0, 0.0) == 0.0 and L.right_end_slope(1.0, 1.0, 0.0) < 0  # no recency without ALiBi
    assert abs(L.threshold(1.0) - 2.457488980328256) < 1e-12  # the authors' script at lambda = 1, M = 8, 20 modes
    assert abs(L.threshold(1.0, time="sa") / L.threshold(1.0) - np.i0(1.0)) < 1e-12


def test_u_shape_below_threshold_and_not_above():
    grid = np.linspace(0.02, 1.0, 491)
    tc = L.threshold(1.0)
    below = L.profile_shape(grid, L.profile(grid, 0.5 * tc, 1.0))
    above = L.profile_shape(grid, L.profile(grid, 1.5 * tc, 1.0))
    assert below["u_shaped"] and below["interior_local_minima"] == 1 and 0.1 < below["argmin"] < 0.9
    assert not above["u_shaped"] and above["argmin"] == 1.0


def test_masked_meanfield_response_matches_closed_form():
    (row,) = L.masked_meanfield_response(2.0, 1.0, 1.0, 1, (0.5,), curves=12, N=40)
    assert row["relative_error"] < 1e-6


def test_planted_missing_normaliser_in_sa_rates_fails(monkeypatch):
    """Planted: the sa rates without the 1/I_0(beta) of the softmax normaliser; the masked mean field disagrees."""
    from scipy.special import iv

    monkeypatch.setattr(L, "mode_rates", lambda beta, n_max, time="paper":
                        np.arange(1, n_max + 1) ** 2 * iv(np.arange(1, n_max + 1), beta) / beta)
    (row,) = L.masked_meanfield_response(2.0, 1.0, 1.0, 1, (0.5,), curves=12, N=40)
    assert row["relative_error"] > 1e-2


def test_angle_system_is_the_models_field_and_its_jacobian():
    N = 9
    rng = np.random.default_rng(1)
    th = rng.uniform(0, 2 * np.pi, (1, N))
    lab = np.arange(1, N + 1) / N
    v, A = L.angle_velocity_and_jacobian(th, 1.3, 0.7, lab)
    X = np.stack([np.cos(th[0]), np.sin(th[0])], 1)
    V = Model("sa", 1.3, alibi=0.7, causal=True, positions=lab).vector_field(N, 2, "direct")[0](X)
    np.testing.assert_allclose(-X[:, 1] * V[:, 0] + X[:, 0] * V[:, 1], v[0], atol=1e-15)
    h = 1e-6
    fd = np.stack([(L.angle_velocity_and_jacobian(th + h * e, 1.3, 0.7, lab)[0]
                    - L.angle_velocity_and_jacobian(th - h * e, 1.3, 0.7, lab)[0])[0] / (2 * h)
                   for e in np.eye(N)[:, None, :]], axis=1)
    np.testing.assert_allclose(A[0], fd, atol=1e-9)


def test_particle_tangent_is_the_derivative_of_the_flow():
    N = 6
    rng = np.random.default_rng(4)
    th0 = rng.uniform(0, 2 * np.pi, (1, N))
    lab = np.arange(1, N + 1) / N
    _, row = L.particle_tangent(th0, 1.0, 0.05, 1.0, 1.0, lab)
    h = 1e-6
    fd = [(L.particle_tangent(th0 + h * e, 1.0, 0.05, 1.0, 1.0, lab)[0][0, -1]
           - L.particle_tangent(th0 - h * e, 1.0, 0.05, 1.0, 1.0, lab)[0][0, -1]) / (2 * h) for e in np.eye(N)]
    np.testing.assert_allclose(row[0], fd, atol=1e-8)


def test_particle_profile_agrees_with_linear_theory_at_small_time():
    """N = 48, 48 runs, t = 1 (sa time): within 4 standard errors of the finite-N linear prediction per bin."""
    N, t, bins = 48, 1.0, 3
    pp = L.particle_profile(N, t, 1.0, 1.0, runs=48, bins=bins, dt=0.1, seed=5)
    a, w = L.mode_rates(1.0, 20, "sa"), L.window(20, 8.0)
    g = sum(wn * L.discrete_correlation(N, t, 1.0, 1.0, an, "sa") for an, wn in zip(a, w))
    linear = np.array([g[gr].mean() for gr in np.array_split(np.arange(N - 1), bins)])
    z = (pp.mean - linear) / pp.stderr
    assert np.max(np.abs(z)) < 4.0, z
    # planted: a rate 1.5 times too large in the linear prediction is rejected
    g2 = sum(wn * L.discrete_correlation(N, t, 1.0, 1.0, 1.5 * an, "sa") for an, wn in zip(a, w))
    wrong = np.array([g2[gr].mean() for gr in np.array_split(np.arange(N - 1), bins)])
    assert np.max(np.abs((pp.mean - wrong) / pp.stderr)) > 4.0


def test_threshold_rows_and_planted_factor(monkeypatch):
    from numerics.architectures.claims import LITM_THRESHOLD_TOLERANCE, lost_in_the_middle_threshold_rows

    rows = lost_in_the_middle_threshold_rows()
    assert max(r["relative_error"] for r in rows["thresholds"]) <= LITM_THRESHOLD_TOLERANCE
    original = L.threshold
    monkeypatch.setattr(L, "threshold", lambda *a, **k: 2.0 * original(*a, **k))  # planted factor 2
    rows = lost_in_the_middle_threshold_rows()
    assert min(r["relative_error"] for r in rows["thresholds"]) > 0.1


@pytest.mark.slow
def test_default_claim_passes():
    from numerics.architectures.claims import check_lost_in_the_middle

    assert check_lost_in_the_middle().status == "passed"


@pytest.mark.slow
def test_particle_claim():
    from numerics.architectures.claims import check_lost_in_the_middle_particles

    r = check_lost_in_the_middle_particles()
    assert r.status == "passed", r.details
