"""Tests of the mean-field regimes: quantitative clustering (numerics.meanfield.quantitative), low temperature
(numerics.meanfield.low_temperature) and the moderate regime (numerics.meanfield.moderate): formulas against
independent computations, and planted errors that the meanfield.quantitative-*, low-temperature-* and moderate-*
claims must catch."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from numerics.common.errors import InputError
from numerics.meanfield import low_temperature, moderate, quantitative
from numerics.meanfield import low_temperature_claims as lt_claims
from numerics.meanfield import moderate_claims as mod_claims
from numerics.meanfield import quantitative_claims as q_claims
from numerics.meanfield.quantitative import (antipode_grid, dirac_distance, ott_antonsen_w2, sharp_w2_rate,
                                             weighted_angle_velocity, wrapped_cauchy_density,
                                             wrapped_cauchy_quantiles)


# -- quantitative ---------------------------------------------------------------------------------------------------
def test_ott_antonsen_solves_its_ode():
    # d|z|/dt = |z| (1 - |z|^2) / 2 by DOP853, then W_2 = sqrt(2 (1 - |z|))
    sol = solve_ivp(lambda t, y: 0.5 * y * (1 - y ** 2), (0, 10), [0.3], t_eval=[0, 2, 5, 10], rtol=1e-12,
                    atol=1e-14, method="DOP853")
    assert np.allclose(ott_antonsen_w2(sol.t, 0.3), np.sqrt(2 * (1 - sol.y[0])), rtol=1e-9)
    with pytest.raises(InputError):
        ott_antonsen_w2([0.0], 1.0)


def test_wrapped_cauchy_moments_and_quantiles():
    theta = 2 * np.pi * np.arange(4096) / 4096
    f = wrapped_cauchy_density(theta, 0.4)
    h = 2 * np.pi / 4096
    assert f.sum() * h == pytest.approx(1.0, abs=1e-12)
    assert (f * np.exp(1j * theta)).sum() * h == pytest.approx(0.4, abs=1e-12)
    q = wrapped_cauchy_quantiles(20000, 0.4)
    assert abs(np.exp(1j * q).mean() - 0.4) < 1e-4
    t, dt = antipode_grid(500)
    assert dt.sum() == pytest.approx(2 * np.pi, rel=1e-3) and np.all(np.diff(t) > 0)   # midpoint rule


def test_dirac_distance_is_the_nearest_dirac():
    rng = np.random.default_rng(0)
    th = rng.normal(0.3, 0.4, 200)
    W = dirac_distance(th)
    r = abs(np.exp(1j * th).mean())
    assert W ** 2 == pytest.approx(2 * (1 - r), rel=1e-10)
    # no other Dirac mass is closer
    for phi in np.linspace(-np.pi, np.pi, 13):
        assert W <= math.sqrt(np.mean(np.abs(np.exp(1j * th) - np.exp(1j * phi)) ** 2)) + 1e-12


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_weighted_velocity_against_a_direct_sum(model):
    from numerics.circle.fourier import harmonics_for_tolerance

    rng = np.random.default_rng(1)
    th = rng.uniform(0, 2 * np.pi, 60)
    w = rng.uniform(0.1, 1, 60)
    w /= w.sum()
    beta = 1.7
    u = th[None, :] - th[:, None]
    kern = np.exp(beta * np.cos(u))
    direct = (kern * np.sin(u)) @ w
    if model == "sa":
        direct = direct / (kern @ w)
    K = harmonics_for_tolerance(beta, 1e-14, model=model)
    assert np.max(np.abs(weighted_angle_velocity(th, w, beta, model, K) - direct)) <= 1e-12


def test_sharp_rate_values():
    assert sharp_w2_rate(0.0, "usa") == 0.5
    assert sharp_w2_rate(1.0, "usa") == pytest.approx(math.exp(-1) / 2)
    assert sharp_w2_rate(0.0, "usa", d=3) == 1.0
    assert sharp_w2_rate(2.0, "sa", d=3) == 1.0 and sharp_w2_rate(2.0, "sa") == 0.5


def test_quantitative_claims_fail_on_planted_errors(monkeypatch):
    monkeypatch.setattr(q_claims, "ott_antonsen_w2", lambda t, rho0: ott_antonsen_w2(1.1 * np.asarray(t), rho0))
    assert q_claims.ott_antonsen(grid=300, t_end=8.0, particles=512).status == "failed"
    monkeypatch.setattr(q_claims, "sharp_w2_rate", lambda beta, model, d=2: math.exp(-beta))
    assert q_claims.sharp_rate(grid=300, t_end=10.0, window=(6.0, 10.0)).status == "failed"


def test_quantitative_characteristics_fail_with_uniform_masses(monkeypatch):
    real = quantitative.antipode_grid
    monkeypatch.setattr(quantitative, "antipode_grid", lambda m, stretch=20.0: (real(m, stretch)[0],
                                                                                 np.full(m, 2 * np.pi / m)))
    assert q_claims.ott_antonsen(grid=300, t_end=8.0, particles=512).status == "failed"


# -- low temperature ------------------------------------------------------------------------------------------------
def test_bessel_table_against_scipy():
    from scipy.special import i0e, i1e

    x = np.concatenate([[0.0, 1e-9], np.exp(np.random.default_rng(0).uniform(-15, 15, 2000))])
    e0, q = low_temperature.bessel_i0e_ratio(x)
    assert np.max(np.abs(e0 / i0e(x) - 1)) <= 1e-10
    assert np.max(np.abs(q[2:] / (i1e(x[2:]) / i0e(x[2:])) - 1)) <= 1e-9


def test_radial_velocity_is_the_angular_integral():
    # m_beta(r e_1) by trapezoid quadrature over the angles of each ring (spectrally accurate) vs the Bessel form
    r, w = low_temperature.disc_rings(12)
    beta = 6.0
    phi = 2 * np.pi * np.arange(256) / 256
    bessel = low_temperature.radial_velocity(r, w, beta)
    for i in range(0, 12, 3):
        e = np.exp(beta * r[i] * r[:, None] * np.cos(phi)[None, :]) * w[:, None]
        direct = (e * r[:, None] * np.cos(phi)[None, :]).sum() / e.sum() - r[i]
        assert bessel[i] == pytest.approx(direct, abs=1e-10)   # the Bessel splines are exact to ~1e-10


def test_gaussian_attention_mean_is_affine():
    # for N(alpha, Sigma) the softmax mean of y with weight e^{beta y^T A z} is alpha + beta Sigma A z
    from numpy.polynomial.hermite_e import hermegauss

    x, wx = hermegauss(40)
    wx = wx / wx.sum()
    alpha, L = np.array([0.4, -0.2]), np.array([[0.5, 0.0], [0.2, 0.3]])
    Sigma = L @ L.T
    A, beta, z = np.array([[1.0, 0.3], [-0.2, 0.8]]), 1.3, np.array([0.7, -0.4])
    Y = alpha + np.stack(np.meshgrid(x, x, indexing="ij"), -1).reshape(-1, 2) @ L.T
    W = np.outer(wx, wx).ravel() * np.exp(beta * Y @ (A @ z))
    assert np.allclose(W @ Y / W.sum(), alpha + beta * Sigma @ A @ z, atol=1e-12)


def test_zero_temperature_defect_of_the_disc():
    # E(1 - |z|)^2 = 1/6 for the uniform disc (the stretched ring grid is a second-order quadrature)
    errs = []
    for m in (1000, 4000):
        r, w = low_temperature.disc_rings(m)
        errs.append(abs(math.sqrt(w @ (1 - r) ** 2) / low_temperature.zero_temperature_defect(0.0) - 1))
    assert errs[1] < 1e-4 and errs[0] / errs[1] > 5


#: converged closest approach at beta = 16 from an independent reference (an exact radial reduction to 7 digits,
#: issue 43): t* and W_2(mu_t*, uniform on the circle)
CONVERGED_BETA16 = (1.7047, 0.23704)


def test_refined_approach_is_within_its_printed_accuracy():
    ref = low_temperature.refined_approach(16.0, 60)
    for key, exact in zip(("t_star", "W2_star"), CONVERGED_BETA16):
        # the printed accuracy is the only tolerance: the extrapolated value must be inside it
        assert abs(ref[key] - exact) <= ref[f"{key}_error"], key
        # and the raw 60-ring value (what the command used to print) is not: the estimate is not vacuous
        assert abs(ref[f"{key}_N"] - exact) > ref[f"{key}_error"], key


def test_low_temperature_claims_fail_on_planted_errors(monkeypatch):
    real_flow = lt_claims.radial_flow
    with monkeypatch.context() as m:
        m.setattr(lt_claims, "radial_flow",
                  lambda beta, rings, t_end, saves=201: real_flow(1.5 * beta, rings, t_end, saves=saves))
        assert lt_claims.concentration(betas=(16.0, 64.0, 256.0), rings=20).status == "failed"
    real = low_temperature.consensus_gaussian_moments
    monkeypatch.setattr(lt_claims, "consensus_gaussian_moments",
                        lambda a, S, A, V, beta, t_end, saves=101: real(a, S, A, np.asarray(V).T, beta, t_end, saves))
    assert lt_claims.terminal(n=200, t_end=8.0).status == "failed"


# -- moderate -------------------------------------------------------------------------------------------------------
def test_oja_flow_solves_its_ode():
    X0 = np.random.default_rng(0).standard_normal((5, 3))
    X0 /= np.linalg.norm(X0, axis=1, keepdims=True)
    V = np.array([[1.0, 0.2, 0.0], [0.2, 0.5, 0.1], [0.0, 0.1, -0.3]])
    h = 1e-5
    X = moderate.oja_flow(X0, V, 0.7)
    dX = (moderate.oja_flow(X0, V, 0.7 + h) - moderate.oja_flow(X0, V, 0.7 - h)) / (2 * h)
    VX = X @ V.T
    assert np.max(np.abs(dX - (VX - np.sum(X * VX, axis=1, keepdims=True) * X))) <= 1e-8


def test_pair_merge_time_tends_to_its_laplace_order():
    ratios = [moderate.pair_merge_time(1.0, b, (0.5, 0.3))["time"] /
              moderate.pair_merge_time(1.0, b, (0.5, 0.3))["leading_order"] for b in (20.0, 40.0, 80.0)]
    assert abs(ratios[2] - 1) < abs(ratios[1] - 1) < abs(ratios[0] - 1) and abs(ratios[2] - 1) < 0.05
    with pytest.raises(InputError):
        moderate.top_eigenspace(np.eye(3))


def test_clustering_prediction_takes_the_first_mode_to_reach_the_threshold():
    """n = 1000, beta = 10, seed 0: the mode 5 (not l_max = 4) is seeded high enough to win; the prediction from
    every mode's own seed names it and is on time (1.075 measured), the l_max-only one was 2x late (0.50)."""
    result = mod_claims.clustering(cases=((1000, 10.0),), seeds=(0,))
    row = result.details["rows"][0]
    assert row["l_max"] == 4 and row["dominant_mode"] == 5 == row["predicted_mode"], row
    assert 0.7 <= row["ratio"] <= 1.3 and row["ratio_l_max_only"] < 0.7, row
    assert result.status == "passed"


def test_moderate_claims_fail_on_planted_errors(monkeypatch):
    real_oja = moderate.oja_flow
    monkeypatch.setattr(moderate, "oja_flow", lambda X0, V, t: real_oja(X0, V, 1.5 * t))
    assert mod_claims.alignment(betas=(8.0, 16.0, 32.0), tokens_per_beta=10).status == "failed"
    monkeypatch.setattr(mod_claims, "heat_limit_ratio", lambda beta, ks: moderate.heat_limit_ratio(beta, ks) ** 1.01)
    assert mod_claims.clustering(cases=((1000, 8.0),)).status == "failed"
    real_pair = moderate.pair_merge_time
    monkeypatch.setattr(mod_claims, "pair_merge_time",
                        lambda theta0, beta, masses=(0.5, 0.5), end=None: real_pair(theta0, beta, (0.5, 0.5), end))
    assert mod_claims.pairing(betas=(10.0,)).status == "failed"


@pytest.mark.slow
@pytest.mark.parametrize("check", [q_claims.check_ott_antonsen, q_claims.check_rate_quick, q_claims.check_rate,
                                   lt_claims.check_concentration_quick, lt_claims.check_concentration,
                                   lt_claims.check_terminal, mod_claims.check_alignment,
                                   mod_claims.check_clustering_quick, mod_claims.check_clustering,
                                   mod_claims.check_pairing])
def test_regime_claims_pass(check):
    assert check().status == "passed"


def test_gaussian_moment_equations_match_the_mean_field_velocity_by_quadrature():
    """Second route for the Gaussian moment ODE of the consensus flow, without its closed-form tilt: at t = 0 its
    (alpha', Sigma') equal the moments of the velocity field of ``numerics.rd.consensus.consensus_velocity`` over a
    30 x 30 Gauss-Hermite quadrature of N(alpha, Sigma) (the quadrature is the measure the tokens attend to).
    Measured: 5.1e-7 (Sigma') and 5.9e-8 (alpha') relative, the O(h) error of the forward difference at h = 1e-6
    (the quadrature's own error is below 1e-12 from 20 nodes on); tolerance 1e-5. Kills ``mf-lt-gaussian-order``
    (V on the wrong side of beta Sigma A - I: ~1.5 relative here, where Sigma does not commute with V), which the
    terminal claim's 2% covariance tolerance let through."""
    from numerics.rd.consensus import consensus_velocity

    V = np.array([[1.0, 0.6], [-0.3, 0.4]])
    A, beta = np.eye(2), 2.0
    alpha0, L = np.array([0.4, -0.2]), np.array([[0.5, 0.0], [0.35, 0.2]])
    x, w = np.polynomial.hermite_e.hermegauss(30)
    X1, X2 = np.meshgrid(x, x, indexing="ij")
    W = np.outer(w, w).ravel()
    W /= W.sum()
    Y = alpha0 + np.stack([X1.ravel(), X2.ravel()], axis=1) @ L.T
    vel = consensus_velocity(Y, A, beta, V, weights=W)
    Yc, Wv = Y - alpha0, W[:, None] * vel
    dSigma_quadrature, dalpha_quadrature = Yc.T @ Wv + Wv.T @ Yc, W @ vel
    h = 1e-6
    _, alpha, Sigma = low_temperature.consensus_gaussian_moments(alpha0, L @ L.T, A, V, beta, h, saves=2)
    err_S = np.linalg.norm((Sigma[1] - Sigma[0]) / h - dSigma_quadrature) / np.linalg.norm(dSigma_quadrature)
    err_a = np.linalg.norm((alpha[1] - alpha[0]) / h - dalpha_quadrature) / np.linalg.norm(dalpha_quadrature)
    assert err_S <= 1e-5 and err_a <= 1e-5, (err_S, err_a)
