"""numerics.core.field against a naive n x n reference; blocking, overflow, memory; properties of claims 1 and 3."""
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from numerics.common.errors import InputError
from numerics.core.field import attention_field, block_rows, interaction_energy, make_field
from numerics.core.trajectory import uniform_sphere
from tests.strategies import betas, models, sphere_points


def naive_field(X, beta, model, Q=None, K=None, V=None, time_unit="natural"):
    """Direct transcription of docs/conventions.md's table with a full n x n matrix (small n only)."""
    n, d = X.shape
    Q, K, V = (np.eye(d) if M is None else M for M in (Q, K, V))
    S = (X @ Q.T) @ (X @ K.T).T  # S_ij = <Q x_i, K x_j>
    W = np.exp(beta * S)
    N = W @ (X @ V.T)
    if model == "sa":
        out = N / W.sum(axis=1, keepdims=True)
    else:
        out = N / n * (np.exp(-beta) if time_unit == "rescaled" else 1.0)
    return out - np.sum(X * out, axis=1, keepdims=True) * X


@pytest.mark.parametrize("model", ["sa", "usa"])
@pytest.mark.parametrize("time_unit", ["natural", "rescaled"])
@pytest.mark.parametrize("general", [False, True])
def test_field_matches_naive_reference(model, time_unit, general, rng):
    X = uniform_sphere(30, 4, rng)
    mats = {k: rng.standard_normal((4, 4)) / 2 for k in "QKV"} if general else {}
    for beta in (-3.0, 0.0, 0.7, 5.0):
        ref = naive_field(X, beta, model, time_unit=time_unit, **mats)
        got = attention_field(X, beta, model, time_unit=time_unit, **mats)
        # relative to the field's size: both are O(30) flops per entry in float64
        assert np.abs(got - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_blocked_equals_unblocked(model, rng):
    X = uniform_sphere(103, 3, rng)
    full = attention_field(X, 2.0, model, block=103)
    for block in (1, 7, 50):
        assert np.allclose(attention_field(X, 2.0, model, block=block), full, rtol=0, atol=1e-14)
    assert interaction_energy(X, 2.0, block=7) == pytest.approx(interaction_energy(X, 2.0, block=103), rel=1e-14)


@pytest.mark.parametrize("beta", [1e2, 1e3, 1e4, -1e4])
def test_large_beta_no_overflow(beta, rng):
    X = uniform_sphere(40, 3, rng)
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is legitimate
        v = attention_field(X, beta, "sa")
        assert np.all(np.isfinite(v))
        if beta > 0:
            u = attention_field(X, beta, "usa", time_unit="rescaled")
            assert np.all(np.isfinite(u))
    # against a naive softmax with the exact row maximum subtracted (the stable textbook form)
    L = beta * (X @ X.T)
    W = np.exp(L - L.max(axis=1, keepdims=True))
    ref = (W @ X) / W.sum(axis=1, keepdims=True)
    ref -= np.sum(X * ref, axis=1, keepdims=True) * X
    assert np.abs(v - ref).max() <= 1e-12


def test_usa_natural_overflow_is_an_input_error(rng):
    X = uniform_sphere(5, 3, rng)
    with pytest.raises(InputError, match="rescaled"):
        attention_field(X, 1e4, "usa")


def test_sa_row_shift_fallback_with_general_qk(rng):
    """|beta| |A x_i| far above every logit: the blocked kernel must recover the row exactly."""
    X = uniform_sphere(20, 3, rng)
    Q = np.diag([300.0, 1.0, 1.0])
    K = np.eye(3)
    ref = naive_field(X, 2.0, "sa", Q=Q, K=K)
    got = attention_field(X, 2.0, "sa", Q=Q, K=K)
    assert np.abs(got - ref).max() < 1e-9


def test_memory_stays_blocked():
    """Peak traced memory with a small block is far below one n x n array (no n x n allocation)."""
    n = 3000
    X = uniform_sphere(n, 3, 0)
    tracemalloc.start()
    attention_field(X, 1.0, "sa", block=32)
    interaction_energy(X, 1.0, block=32)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.1 * n * n * 8  # n x n float64 would be 72 MB; a block of 32 rows is 0.8 MB


@pytest.mark.slow
def test_n_50000_d3_runs_blocked():
    n = 50_000
    X = uniform_sphere(n, 3, 1)
    assert block_rows(n) * n <= 1 << 22
    tracemalloc.start()
    v = attention_field(X, 1.0, "sa")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert v.shape == (n, 3) and np.all(np.isfinite(v))
    assert peak < 0.01 * n * n * 8


def test_energy_conventions(rng):
    X = uniform_sphere(25, 3, rng)
    beta = 1.3
    S = X @ X.T
    glpr_plain = np.exp(beta * S).sum() / (2 * beta * 25**2)
    assert interaction_energy(X, beta) == pytest.approx(glpr_plain - 1 / (2 * beta), rel=1e-13)
    assert interaction_energy(X, beta, normalization="gkpr") == pytest.approx(np.exp(beta * (S - 1)).mean(), rel=1e-13)
    m = X.mean(axis=0)
    assert interaction_energy(X, 0.0) == pytest.approx(0.5 * m @ m, rel=1e-14)
    # continuity at beta = 0 (expm1 form): |E(1e-9) - E(0)| = O(1e-9)
    assert abs(interaction_energy(X, 1e-9) - interaction_energy(X, 0.0)) < 1e-8


def test_make_field_validates_once():
    with pytest.raises(InputError):
        make_field(3, float("nan"), "sa")
    with pytest.raises(InputError):
        make_field(3, 1.0, "xx")
    with pytest.raises(InputError):
        make_field(3, 1.0, "sa", Q=np.eye(2))


@given(X=sphere_points(), beta=betas)
def test_usa_is_n_times_gradient_property(X, beta):
    """Claim 1: directional derivative of E_beta = <v_usa, xi>/n (central differences, independent path)."""
    n = X.shape[0]
    rng = np.random.default_rng(n)
    xi = rng.standard_normal(X.shape)
    xi -= np.sum(X * xi, axis=1, keepdims=True) * X
    h = 1e-5

    def retract(t):
        Y = X + t * xi
        return Y / np.linalg.norm(Y, axis=1, keepdims=True)

    fd = (interaction_energy(retract(h), beta) - interaction_energy(retract(-h), beta)) / (2 * h)
    v = attention_field(X, beta, "usa")
    expected = float(np.sum(v * xi)) / n
    scale = np.exp(abs(beta)) * max(1.0, float(np.abs(xi).sum()))
    # O(h^2) truncation (~ e^|beta| h^2) plus round-off of E / h (~ 1e-16 e^|beta| / h)
    assert abs(fd - expected) <= 1e-8 * scale
    # sa: grad_i E = (Z_i / n^2) v_i^sa, Z_i = sum_j e^{beta s_ij}: the same directional derivative
    Z = np.exp(beta * (X @ X.T)).sum(axis=1)
    v_sa = attention_field(X, beta, "sa")
    assert abs(fd - float(np.sum((Z / n**2)[:, None] * v_sa * xi))) <= 1e-8 * scale


@given(X=sphere_points(), beta=betas, model=models, seed=st.integers(0, 2**31))
def test_permutation_and_rotation_equivariance_property(X, beta, model, seed):
    """Claim 3: tangency, permutation and O(d) equivariance."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    v = attention_field(X, beta, model)
    # rounding is relative to the vector before the projection, not to v (which can vanish: n = 1): for usa in
    # the natural unit that is (1/n) sum_j e^{beta s_ij} x_j, up to e^{|beta|} (e^10 = 22026 here)
    W = np.exp(beta * (X @ X.T))
    unprojected = (W / (W.sum(axis=1, keepdims=True) if model == "sa" else n)) @ X
    tol = 1e-12 * max(1.0, float(np.abs(v).max()), float(np.abs(unprojected).max()))
    assert np.abs(np.sum(X * v, axis=1)).max() <= tol
    p = rng.permutation(n)
    assert np.abs(attention_field(X[p], beta, model) - v[p]).max() <= tol
    R, _ = np.linalg.qr(rng.standard_normal((d, d)))
    assert np.abs(attention_field(X @ R.T, beta, model) - v @ R.T).max() <= tol


def test_general_qkv_claim_sees_transposed_scores(monkeypatch):
    """core.general-qkv-field passes, and fails when the scores use A = K^T Q instead of Q^T K."""
    import numerics.core.field as field
    from numerics.core.claims import check_general_qkv_field

    assert check_general_qkv_field().status == "passed"
    right = field._matrices

    def transposed(d, Q, K, V):
        M, V = right(d, Q, K, V)
        return (None if M is None else M.T), V

    monkeypatch.setattr(field, "_matrices", transposed)
    bad = check_general_qkv_field()
    assert bad.status == "failed" and bad.measured > 1e-3
