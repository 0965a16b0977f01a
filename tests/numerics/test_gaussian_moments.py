"""numerics.gaussian.solutions: moment ODE vs quadrature and generated code, solver, closed forms, particles."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import expm

from numerics.gaussian import solutions as NG
from numerics.common.errors import InputError
from theory import gaussian as TG


def _problem(seed, d):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(d, d)) * 0.6
    return (rng.normal(size=d) * 0.5, L @ L.T + 0.3 * np.eye(d), rng.normal(size=(d, d)) * 0.7,
            rng.normal(size=(d, d)), rng.normal(size=(d, d)) * 0.6, rng.normal(size=(d, d)) * 0.6)


def _model(attention, d, A, V, Q, K):
    if attention == "l2":
        return NG.gaussian_attention(attention, d, V=V, Q=Q, K=K)
    return NG.gaussian_attention(attention, d, V=V, A=A)


_CASES = [(a, d, seed) for a in NG.ATTENTIONS for d, seed in ((1, 0), (2, 1))]
_CASES += [("l2", 3, 2)] + [pytest.param(a, 3, 2, marks=pytest.mark.slow) for a in ("softmax", "sinkhorn")]


@pytest.mark.parametrize("attention,d,seed", _CASES)
def test_moment_rhs_matches_quadrature(attention, d, seed):
    alpha, Sigma, A, V, Q, K = _problem(seed, d)
    model = _model(attention, d, A, V, Q, K)
    nodes = {1: 60, 2: 16, 3: 12}[d] if attention == "sinkhorn" else {1: 60, 2: 30, 3: 20}[d]
    da, dS = NG.moment_rhs(model, alpha, Sigma)
    qa, qS = NG.velocity_by_quadrature(model, alpha, Sigma, nodes=nodes)
    # Gauss-Hermite is spectrally accurate here; d = 3 with few nodes is the loosest case
    tol = 1e-7 * max(1.0, float(np.max(np.abs(dS)))) if d == 3 else 1e-9
    np.testing.assert_allclose(da, qa, atol=tol)
    np.testing.assert_allclose(dS, qS, atol=tol)


@pytest.mark.parametrize("attention", NG.ATTENTIONS)
@pytest.mark.parametrize("d", [1, 2])
def test_hand_written_matrix_form_matches_generated_code(attention, d):
    alpha, Sigma, A, V, Q, K = _problem(10 + d, d)
    model = _model(attention, d, A, V, Q, K)
    iu = np.triu_indices(d)
    args = list(alpha) + list(Sigma[iu]) + (list(Q.ravel()) + list(K.ravel()) if attention == "l2" else list(A.ravel()))
    args += list(V.ravel())
    if attention == "sinkhorn":
        S = TG.sinkhorn_conditional_covariance_function(d)(*Sigma[iu], *A.ravel())
        args += list(S)
    out = np.array(TG.moment_rhs_function(attention, d)(*args), dtype=float)
    da, dS = NG.moment_rhs(model, alpha, Sigma)
    np.testing.assert_allclose(out, np.concatenate([da, dS[iu]]), rtol=1e-11, atol=1e-12)


@settings(max_examples=15)
@given(st.integers(1, 6), st.integers(0, 10**6))
def test_sinkhorn_conditional_covariance_solves_riccati(d, seed):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(d, d))
    Sigma = L @ L.T + 0.1 * np.eye(d)
    A = rng.normal(size=(d, d))
    S = NG.sinkhorn_conditional_covariance(Sigma, A)
    scale = np.max(np.abs(Sigma))
    np.testing.assert_allclose(S @ A @ Sigma @ A.T @ S + S, Sigma, atol=1e-9 * scale)
    # the joint covariance of the plan is positive definite and its cross precision is -A^T
    C = Sigma @ A.T @ S
    joint = np.block([[Sigma, C], [C.T, Sigma]])
    assert np.linalg.eigvalsh(joint)[0] > 0
    P = np.linalg.inv(joint)
    np.testing.assert_allclose(P[:d, d:], -A.T, atol=1e-6 * max(1, np.max(np.abs(P))))


def test_softmax_closed_form_and_blowup():
    alpha, Sigma, A, _, _, _ = _problem(3, 2)
    A = A + np.eye(2)  # make the symmetric part have a positive direction
    model = NG.gaussian_attention("softmax", 2, V=np.eye(2), A=A)
    t_star = NG.softmax_blowup_time(Sigma, A)
    assert t_star is not None
    sol = NG.solve_moment_ode(model, alpha, Sigma, 0.8 * t_star, save_times=[0, 0.8 * t_star], rtol=1e-11)
    _, S_cf = NG.softmax_identity_value_closed_form(alpha, Sigma, A, 0.8 * t_star)
    np.testing.assert_allclose(sol.final_cov, S_cf, rtol=1e-8)
    blow = NG.solve_moment_ode(model, alpha, Sigma, 3 * t_star)
    assert blow.status == "blow-up"
    assert abs(blow.blowup_time - t_star) <= 1e-6 * t_star
    assert blow.times[-1] <= t_star


def test_softmax_symmetric_mean_closed_form():
    alpha, Sigma, A, _, _, _ = _problem(4, 3)
    A = (A + A.T) / 2
    model = NG.gaussian_attention("softmax", 3, V=np.eye(3), A=A)
    t_star = NG.softmax_blowup_time(Sigma, A) or 1.0
    t = 0.5 * t_star
    sol = NG.solve_moment_ode(model, alpha, Sigma, t, save_times=[0, t], rtol=1e-11)
    a_cf, _ = NG.softmax_identity_value_closed_form(alpha, Sigma, A, t)
    np.testing.assert_allclose(sol.final_mean, a_cf, rtol=1e-8)


def test_no_blowup_when_symmetric_part_negative_definite():
    Sigma = np.array([[1.0, 0.2], [0.2, 0.5]])
    A = -np.eye(2) + np.array([[0, 0.5], [-0.5, 0]])
    assert NG.softmax_blowup_time(Sigma, A) is None
    sol = NG.solve_moment_ode(NG.gaussian_attention("softmax", 2, V=np.eye(2), A=A), [0.1, 0.2], Sigma, 20.0)
    assert sol.status == "completed" and sol.blowup_time is None
    # collapse: Sigma(t) ~ (2 t)^{-1} |S_A|^{-1} -> 0
    np.testing.assert_allclose(NG.softmax_low_rank_limit(Sigma, A), 0.0)


@pytest.mark.parametrize("attention,kw", [("softmax", {"a": 0.7}), ("softmax", {"a": -0.4}),
                                          ("l2", {"q": 0.9, "k": 0.6}), ("l2", {"q": -0.9, "k": 0.6}),
                                          ("sinkhorn", {"a": 0.8}), ("sinkhorn", {"a": -1.3})])
def test_scalar_closed_forms_match_ode(attention, kw):
    v, a0, s0, t = 0.9, 0.6, 0.8, 0.5
    if attention == "l2":
        model = NG.gaussian_attention("l2", 1, V=[[v]], Q=[[kw["q"]]], K=[[kw["k"]]])
    else:
        model = NG.gaussian_attention(attention, 1, V=[[v]], A=[[kw["a"]]])
    sol = NG.solve_moment_ode(model, [a0], [[s0]], t, save_times=[0, t], rtol=1e-12, atol=1e-14)
    alpha, sigma = NG.scalar_closed_form(attention, a0, s0, t, v=v, **kw)
    assert sol.final_mean[0] == pytest.approx(alpha, rel=1e-9)
    assert sol.final_cov[0, 0] == pytest.approx(sigma, rel=1e-9)


def test_sinkhorn_mean_is_exponential_of_v():
    alpha, Sigma, A, V, _, _ = _problem(6, 3)
    model = NG.gaussian_attention("sinkhorn", 3, V=V, A=A)
    sol = NG.solve_moment_ode(model, alpha, Sigma, 0.7, save_times=[0, 0.7], rtol=1e-11)
    np.testing.assert_allclose(sol.final_mean, expm(0.7 * V) @ alpha, rtol=1e-9, atol=1e-12)


def test_layer_map_is_euler_plus_second_order_term():
    alpha, Sigma, A, V, _, _ = _problem(7, 2)
    model = NG.gaussian_attention("softmax", 2, V=V, A=A)
    h = 1e-3
    a1, S1 = NG.layer_gaussian_map(model, alpha, Sigma, h)
    da, dS = NG.moment_rhs(model, alpha, Sigma)
    np.testing.assert_allclose(a1, alpha + h * da, atol=1e-15)
    assert np.max(np.abs(S1 - Sigma - h * dS)) <= 10 * h * h * np.max(np.abs(dS)) ** 2 + 1e-14


@pytest.mark.parametrize("bad,match", [
    (np.array([[1.0, 0.3], [0.2, 1.0]]), "not symmetric"),
    (np.array([[1.0, 2.0], [2.0, 1.0]]), "not positive definite"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), "non-finite"),
    (np.eye(3), "2 x 2"),
])
def test_bad_covariance_is_rejected(bad, match):
    model = NG.gaussian_attention("softmax", 2, V=np.eye(2), A=np.eye(2))
    with pytest.raises(InputError, match=match):
        NG.solve_moment_ode(model, [0.0, 0.0], bad, 1.0)


def test_attention_parameters_are_validated():
    with pytest.raises(InputError):
        NG.gaussian_attention("l2", 2, V=np.eye(2), A=np.eye(2))
    with pytest.raises(InputError):
        NG.gaussian_attention("softmax", 2, V=np.eye(2))
    with pytest.raises(InputError):
        NG.gaussian_attention("sinkhorn", 2, V=np.eye(2), A=np.eye(3))


def test_blowup_with_scaled_value_matrix():
    # V = c I is V = I in the time c t: the blow-up time divides by c (no closed form is used by the solver)
    Sigma, A = np.array([[1.0, 0.3], [0.3, 0.6]]), np.array([[0.8, 0.3], [-0.2, 0.5]])
    t_star = NG.softmax_blowup_time(Sigma, A)
    model = NG.gaussian_attention("softmax", 2, V=2.5 * np.eye(2), A=A)
    sol = NG.solve_moment_ode(model, [0.1, 0.2], Sigma, 10.0)
    assert sol.status == "blow-up"
    assert sol.blowup_time == pytest.approx(t_star / 2.5, rel=1e-6)


def test_exponential_growth_is_not_a_blowup():
    # Sinkhorn, d = 2, expanding V: Sigma grows exponentially past the 1e8 stop and must be continued
    model = NG.gaussian_attention("sinkhorn", 2, V=3 * np.eye(2), A=np.array([[1.0, 0.2], [0.1, 0.8]]))
    sol = NG.solve_moment_ode(model, [0.1, 0.2], np.eye(2), 8.0, save_times=[0.0, 8.0])
    assert sol.status == "completed" and sol.blowup_time is None
    assert np.trace(sol.final_cov) > 1e8 * 2
