"""Tests of numerics.rd: the rescaled integration against the unrescaled one, the attention matrix, the limit
geometry, exact optimal transport, and planted errors that the rd claims must catch."""
import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core.model import SaveAt, Solver
from numerics.gaussian.solutions import SinkhornState, attention_matrix, particle_velocity
from numerics.rd import claims as rd_claims
from numerics.rd import dynamics
from numerics.rd.dynamics import rescaled_velocity, simulate_rd
from numerics.rd.geometry import boolean_limit, hull_vertices, hyperplane_coordinates, predicted_limit
from numerics.rd.model import RdModel
from numerics.rd.stability import log_stability_constant, radius, wasserstein

V_NONNORMAL = np.array([[0.6, 0.4], [-0.1, 0.3]])
A0 = np.array([[0.8, 0.3], [-0.2, 0.5]])
Q0 = np.array([[1.0, 0.2], [0.1, 0.9]])
K0 = np.array([[0.7, -0.1], [0.3, 0.8]])


def _model(attention):
    if attention == "l2":
        return RdModel("l2", 2, V=V_NONNORMAL, Q=Q0, K=K0)
    return RdModel(attention, 2, V=V_NONNORMAL, A=A0)


def _unrescaled(model, X0, t_end, steps):
    """Plain RK4 on dx/dt = V sum_j P_ij x_j (the gaussian particle field, no rescaling): a second code path."""
    g = model.gaussian()
    state = SinkhornState(np.zeros(len(X0)), np.zeros(len(X0))) if model.attention == "sinkhorn" else None
    f = lambda X: particle_velocity(g, X, state=state, sinkhorn_tol=1e-12)
    h, X, out = t_end / steps, X0.copy(), [X0.copy()]
    for _ in range(steps):
        k1 = f(X)
        k2 = f(X + h / 2 * k1)
        k3 = f(X + h / 2 * k2)
        k4 = f(X + h * k3)
        X = X + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(X.copy())
    return np.array(out)


@pytest.mark.parametrize("attention, t_end", [("softmax", 1.5), ("l2", 1.5), ("sinkhorn", 0.5)])
def test_rescaled_equation_matches_unrescaled(attention, t_end):
    # both paths are RK4 with h = 0.01 (error ~1e-9 here); x = e^{tV} z must agree to 1e-7 relative
    # (Sinkhorn to tolerance 1e-9 in the rescaled path: a shorter run keeps the test fast)
    model = _model(attention)
    X0 = 0.7 * np.random.default_rng(3).standard_normal((7, 2))
    steps = int(round(t_end / 0.01))
    run = simulate_rd(model, X0, t_end, solver=Solver("rk4", dt=0.01), save=SaveAt(every=steps))
    Xu = _unrescaled(model, X0, t_end, steps)
    assert np.max(np.abs(run.X[-1] - Xu[-1])) <= 1e-7 * np.max(np.abs(Xu[-1]))


def test_rescaled_velocity_matches_finite_differences_of_the_unrescaled_solution():
    # z(t) = e^{-tV} x(t) from the unrescaled solution; the central difference of z (h = 1e-3 with RK4 steps of
    # 1e-3: error O(h^2) ~ 1e-7) equals V (P z - z) at the midpoint
    model = _model("softmax")
    X0 = 0.7 * np.random.default_rng(4).standard_normal((6, 2))
    h = 1e-3
    Xu = _unrescaled(model, X0, 1.0 + h, 1001)
    Z = np.array([X @ np.linalg.inv(model.propagator(k * h)).T for k, X in ((999, Xu[999]), (1000, Xu[1000]),
                                                                          (1001, Xu[1001]))])
    fd = (Z[2] - Z[0]) / (2 * h)
    exact = rescaled_velocity(model, 1.0, Z[1])
    assert np.max(np.abs(fd - exact)) <= 1e-6 * np.max(np.abs(exact))
    # the planted error "dz/dt = V P z" (the -z term dropped) is far off
    att, _ = model.rescaled_attention(1.0, float(np.max(np.abs(Z[1]))))
    wrong = particle_velocity(att, Z[1]) @ model.V.T
    assert np.max(np.abs(fd - wrong)) > 1e-2


@pytest.mark.parametrize("attention", ["softmax", "l2", "sinkhorn"])
def test_attention_matrix_reproduces_the_particle_velocity(attention):
    model = _model(attention).gaussian()
    X = np.random.default_rng(5).standard_normal((9, 2))
    state = SinkhornState(np.zeros(9), np.zeros(9)) if attention == "sinkhorn" else None
    P = attention_matrix(model, X, state=state, sinkhorn_tol=1e-12)
    v = particle_velocity(model, X, state=state, sinkhorn_tol=1e-12)
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-14)
    assert np.max(np.abs(P @ X @ model.V.T - v)) <= 1e-10
    if attention == "sinkhorn":
        assert np.allclose(P.sum(axis=0), 1.0, atol=1e-8)


def test_long_horizon_neither_overflows_nor_changes_the_limit():
    # t = 400: the logit scale e^{2t} ~ 1e347 overflows float64; it is capped and the z stay finite
    model = RdModel("softmax", 1, V=[[1.0]], A=[[1.0]])
    X0 = np.random.default_rng(0).standard_normal((9, 1))
    short = simulate_rd(model, X0, 10.0, solver=Solver("rk4", dt=0.05), save=SaveAt(every=200))
    long_ = simulate_rd(model, X0, 400.0, solver=Solver("rk4", dt=0.2), save=SaveAt(every=2000))
    assert np.all(np.isfinite(long_.Z)) and np.all(np.isfinite(long_.P))
    assert model.rescaled_attention(400.0, 3.0)[1] < 1e300  # the cap was active
    assert np.all(np.abs(long_.X[-1]) > 1e170)  # x = e^{400} z, still representable
    assert boolean_limit(long_.P[-1])["assignment"] == boolean_limit(short.P[-1])["assignment"]
    assert np.max(np.abs(long_.Z[-1] - short.Z[-1])) < 1e-3


def test_model_validation_and_meta_round_trip():
    m = RdModel("softmax", 2, V=V_NONNORMAL, Q=Q0, K=K0)
    assert np.allclose(m.A, K0.T @ Q0)
    again = RdModel.from_meta(m.to_meta())
    assert np.array_equal(again.A, m.A) and np.array_equal(again.V, m.V)
    with pytest.raises(InputError):
        RdModel("softmax", 2, V=None, A=A0)
    with pytest.raises(InputError):
        RdModel("l2", 2, V=V_NONNORMAL, A=A0)
    with pytest.raises(InputError):
        RdModel("softmax", 3, V=V_NONNORMAL, A=A0)
    with pytest.raises(InputError):
        RdModel("softmax", 2, V=[[np.nan, 0], [0, 1]], A=A0)
    with pytest.raises(InputError):
        simulate_rd(m, np.zeros((3, 3)), 1.0, solver=Solver("rk4", dt=0.1))


def test_simulate_rd_refuses_huge_and_non_finite_step_counts_before_allocating():
    """2e11 saved steps are refused by the estimate before the set of saved steps is built (was a MemoryError
    after a long allocation); t_end/dt = inf is an InputError (was an OverflowError from int(inf))."""
    m = RdModel("softmax", 2, V=V_NONNORMAL, Q=Q0, K=K0)
    X0 = np.random.default_rng(0).standard_normal((4, 2))
    with pytest.raises(InputError, match="of memory"):
        simulate_rd(m, X0, 1e10, solver=Solver("rk4", dt=0.05), save=SaveAt(every=1), keep_P=False)
    with pytest.raises(InputError, match="not a finite number of steps"):
        simulate_rd(m, X0, 1e308, solver=Solver("rk4", dt=1e-300))
    run = simulate_rd(m, X0, 1.0, solver=Solver("rk4", dt=0.3), save=SaveAt(every=2), keep_P=False)
    np.testing.assert_allclose(run.times, [0.0, 0.5, 1.0])  # 4 steps of 0.25: steps 0, 2 and 4
    run = simulate_rd(m, X0, 1.0, solver=Solver("rk4", dt=0.25), save=SaveAt(every=3), keep_P=False)
    np.testing.assert_allclose(run.times, [0.0, 0.75, 1.0])  # the multiples of 3 and the last step


def test_geometry_helpers():
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.2, 0.2]])
    assert hull_vertices(Z) == [0, 1, 2]
    W = np.array([[4.0, 0.0], [0.0, 4.0], [0.8, 0.8], [0.3, 0.2]])
    assert hull_vertices(W) == [0, 1, 3]
    assert hull_vertices(np.array([[3.0], [-1.0], [0.5]])) == [0, 1]
    with pytest.raises(InputError):
        hull_vertices(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))
    pred = predicted_limit(W, np.eye(2))
    assert pred["leaders"] == [0, 1]  # token 3 is a hull vertex but attends to token 0, not to itself
    assert pred["assignment"] == [0, 1, 0, 0] and pred["determined"] == [True, True, False, False]
    lim = boolean_limit(np.array([[0.0, 1.0], [0.0, 1.0]]))
    assert lim == {"leaders": [1], "assignment": [1, 1], "boolean_gap": 0.0, "rank": 1}
    hp = hyperplane_coordinates(np.array([[1.0, 0.0], [1.0, 5.0], [-2.0, 1.0]]), np.diag([1.0, -0.5]))
    assert hp["count"] == 2 and np.allclose(sorted(hp["values"]), [-2.0, 1.0])
    with pytest.raises(InputError):
        hyperplane_coordinates(Z, np.eye(2))  # top eigenvalue not simple


def test_wasserstein_two_backends_and_exact_cases():
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((12, 3)), rng.standard_normal((12, 3))
    for p in (1.0, 2.0, 3.0):
        assert abs(wasserstein(X, Y, p, "pot") - wasserstein(X, Y, p, "assignment")) <= 1e-10
    shift = np.array([0.3, -0.4, 1.2])
    assert abs(wasserstein(X, X + shift, 2.0) - np.linalg.norm(shift)) <= 1e-12
    assert wasserstein(X, X[::-1]) == 0.0
    with pytest.raises(InputError):
        wasserstein(X, Y[:5], 2.0, "assignment")


def test_radius_and_constant():
    model = RdModel("softmax", 2, V=np.eye(2), A=np.eye(2))
    assert log_stability_constant(model, 0.0, 0.5) == 0.0
    # rate at t = 0 with a = v = 1, R0 = 1/2: q = 1/4, rate = 1/4 + e^{1/2} (3/2)
    h = 1e-6
    assert abs(log_stability_constant(model, h, 0.5) / h - (0.25 + np.exp(0.5) * 1.5)) < 1e-4
    assert np.allclose(radius(np.array([[[3.0, 4.0], [0.0, 1.0]]])), [5.0])


# -- the claims pass, and fail on planted errors -------------------------------------------------------------
def test_claims_pass_on_reduced_parameters():
    assert rd_claims.polytope_leaders(seeds=(0, 4)).status == "passed"
    assert rd_claims.one_dimensional_boolean(seeds=(0,)).status == "passed"
    assert rd_claims.hyperplanes(seeds=(0,)).status == "passed"


def test_polytope_claim_fails_on_a_wrong_prediction_rule(monkeypatch):
    # planted: predict the token of *smallest* logit (argmin instead of argmax)
    def argmin_rule(Z0, A, margin=5.0):
        out = predicted_limit(Z0, A, margin)
        L = (Z0 @ A.T) @ Z0.T
        out["assignment"] = [int(j) for j in np.argmin(L, axis=1)]
        return out

    monkeypatch.setattr(rd_claims, "predicted_limit", argmin_rule)
    assert rd_claims.polytope_leaders(seeds=(0,)).status == "failed"


def test_boolean_claims_fail_without_the_logit_growth(monkeypatch):
    # planted: the rescaled logits forget the factor e^{2t} (A(t) = A): P never becomes Boolean
    original = RdModel.rescaled_attention

    def no_growth(self, t, z_scale):
        return original(self, 0.0, z_scale)

    monkeypatch.setattr(RdModel, "rescaled_attention", no_growth)
    assert rd_claims.one_dimensional_boolean(seeds=(0,)).status == "failed"
    assert rd_claims.polytope_leaders(seeds=(0,)).status == "failed"


def test_hyperplane_claim_fails_with_the_right_eigenvector(monkeypatch):
    # planted: the normal of the hyperplanes taken as the right eigenvector of V instead of the left one
    import numerics.rd.geometry as geometry

    def right_eigenvector(V):
        mu, W = np.linalg.eig(np.asarray(V))
        k = int(np.argmax(mu.real))
        return float(mu[k].real), W[:, k].real / np.linalg.norm(W[:, k].real)

    monkeypatch.setattr(geometry, "top_left_eigenvector", right_eigenvector)
    assert rd_claims.hyperplanes(seeds=(0,)).status == "failed"


def test_well_posedness_claim_fails_when_the_dynamics_runs_with_2V(monkeypatch):
    original = dynamics.rescaled_velocity

    def doubled(model, t, Z, state=None, z_scale=None):
        return 2.0 * original(model, t, Z, state, z_scale) + Z @ model.V.T  # dx/dt = 2 V sum P x in x-terms
    monkeypatch.setattr(dynamics, "rescaled_velocity", doubled)
    res = rd_claims.well_posedness(seeds=(0,), adversarial_starts=1, adversarial_evals=5)
    assert res.status == "failed"
    assert res.measured["tight_case_deviation"] > 1e-2


# -- property: the radius bound on random models and tokens (Hypothesis draws the seeds) ----------------------
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), attention=st.sampled_from(["softmax", "l2"]), d=st.integers(1, 3))
def test_radius_never_exceeds_its_bound(seed, attention, d):
    from numerics.rd.stability import log_radius

    rng = np.random.default_rng(seed)
    V = rng.standard_normal((d, d))
    mats = {"Q": rng.standard_normal((d, d)), "K": rng.standard_normal((d, d))} if attention == "l2" else \
        {"A": rng.standard_normal((d, d))}
    model = RdModel(attention, d, V=V, **mats)
    X0 = rng.standard_normal((6, d))
    run = simulate_rd(model, X0, 1.0, solver=Solver("rk4", dt=0.02), keep_P=False)
    logR = log_radius(model, run.times, run.Z)
    log_bound = run.times * np.linalg.norm(V, 2) + logR[0]
    assert np.all(logR <= log_bound + 1e-9)
    assert np.allclose(np.exp(logR), radius(run.X), rtol=1e-10)
