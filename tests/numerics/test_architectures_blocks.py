"""The transformer-block model features of numerics.core.blocks through the Model object."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.common.errors import InputError
from numerics.core.blocks import MLP, MultiHead, Schedule
from numerics.core.model import Model, Solver
from numerics.core.trajectory import Trajectory, resume, simulate, uniform_sphere


def _rng():
    return np.random.default_rng(1414)


def _random_heads(rng, H=2, k=2, d=3):
    return MultiHead(*(rng.standard_normal((H, k, d)) for _ in range(4)))


def _dense_block(X, heads, beta, kind, mlp=None, causal=False):
    """Independent dense reference: loops over heads, full n x n matrices, explicit mask."""
    n, d = X.shape
    H = heads.Q.shape[0]
    c = heads.scale
    total = np.zeros((n, d))
    for h in range(H):
        S = beta * c * (X @ heads.Q[h].T) @ (X @ heads.K[h].T).T
        E = np.exp(S)
        if causal:
            E = np.tril(E)
        A = E @ X / (E.sum(axis=1, keepdims=True) if kind == "sa" else n)
        y = A @ heads.V[h].T @ heads.W[h]
        total += y if mlp is None else mlp(H * y) / H
    return total - np.sum(X * total, axis=1, keepdims=True) * X


@pytest.mark.parametrize("kind", ["sa", "usa"])
@pytest.mark.parametrize("causal", [False, True])
def test_block_field_matches_dense_reference(kind, causal):
    rng = _rng()
    X = uniform_sphere(9, 3, rng)
    heads = _random_heads(rng)
    mlp = MLP(rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal((3, 4)),
              rng.standard_normal(3), "gelu")
    for m in (None, mlp):
        f, backend = Model(kind, 1.5, heads=heads, mlp=m, causal=causal).vector_field(9, 3, "direct")
        assert backend == "blocks"
        np.testing.assert_allclose(f(X), _dense_block(X, heads, 1.5, kind, m, causal), atol=1e-12)


def test_planted_transpose_in_reference_is_detected():
    rng = _rng()
    X = uniform_sphere(9, 3, rng)
    heads = _random_heads(rng)
    f, _ = Model("sa", 1.0, heads=heads).vector_field(9, 3, "direct")
    wrong = MultiHead(heads.K, heads.Q, heads.V, heads.W)  # planted error: Q and K swapped
    assert np.abs(f(X) - _dense_block(X, wrong, 1.0, "sa")).max() > 1e-3


def test_small_block_size_changes_nothing():
    from numerics.core.blocks import block_velocity

    rng = _rng()
    X = uniform_sphere(11, 3, rng)
    heads = _random_heads(rng)
    a = block_velocity(X, heads, 2.0, "sa", causal=True)
    b = block_velocity(X, heads, 2.0, "sa", causal=True, block=3)
    np.testing.assert_allclose(a, b, atol=1e-14)


def test_bad_combinations_raise():
    rng = _rng()
    heads = _random_heads(rng)
    with pytest.raises(InputError, match="either Q, K, V"):
        Model("sa", 1.0, Q=np.eye(3), heads=heads)
    with pytest.raises(InputError, match="disagree on d"):
        Model("sa", 1.0, heads=heads, mlp=MLP.identity(4))
    with pytest.raises(InputError, match="natural time unit"):
        Model("usa", 1.0, heads=heads, time_unit="rescaled")
    with pytest.raises(InputError, match="share one shape"):
        MultiHead(np.ones((2, 2, 3)), np.ones((2, 2, 3)), np.ones((2, 3, 3)), np.ones((2, 2, 3)))
    with pytest.raises(InputError, match="non-finite"):
        MultiHead(np.full((1, 2, 3), np.nan), np.ones((1, 2, 3)), np.ones((1, 2, 3)), np.ones((1, 2, 3)))
    with pytest.raises(InputError, match="increase strictly"):
        Schedule(times=[0, 0], heads=(heads, heads))
    with pytest.raises(InputError, match="schedule carries"):
        Model("sa", 1.0, schedule=Schedule.constant(heads), mlp=MLP.identity(3))
    with pytest.raises(InputError, match="causal must be"):
        Model("sa", 1.0, causal="yes")
    with pytest.raises(InputError, match="fourier"):
        Model("sa", 1.0, heads=heads, causal=True).vector_field(5, 3, "fourier")


def test_trajectory_round_trip_and_resume(tmp_path):
    rng = _rng()
    heads = _random_heads(rng)
    mlp = MLP(rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal((3, 4)),
              rng.standard_normal(3), "relu")
    sch = Schedule(times=[0.0, 0.5], heads=(heads, MultiHead.from_single(d=3)), mlps=(mlp, None))
    model = Model("sa", 1.0, schedule=sch, causal=True)
    X0 = uniform_sphere(6, 3, rng)
    full = simulate(model, X0, 1.0, solver=Solver("rk4", dt=0.1))
    half = simulate(model, X0, 0.5, solver=Solver("rk4", dt=0.1))
    path = tmp_path / "t.npz"
    half.save(path)
    back = Trajectory.load(path)
    m2 = back.model
    assert m2.causal and m2.schedule.layers == 2
    np.testing.assert_array_equal(m2.schedule.heads[0].Q, heads.Q)
    resumed = resume(path, 1.0)
    np.testing.assert_allclose(resumed.X[-1], full.X[-1], atol=1e-13)
    inline = Model.from_meta(model.to_meta())  # arrays written inline as lists
    np.testing.assert_array_equal(inline.schedule.mlps[0].W1, mlp.W1)


def test_cluster_reintegration_uses_the_architecture_model():
    from numerics.clusters.merge_tree import reintegrator_from_meta
    from numerics.core.model import SaveAt

    rng = _rng()
    model = Model("sa", 2.0, heads=_random_heads(rng), causal=True)
    X0 = uniform_sphere(5, 3, rng)
    tr = simulate(model, X0, 1.0, solver=Solver("adaptive", rtol=1e-11, atol=1e-13), save=SaveAt(times=[0.0, 1.0]))
    again = reintegrator_from_meta(tr.meta, tr.arrays)(X0, np.array([0.0, 1.0]))
    np.testing.assert_allclose(again[-1], tr.X[-1], atol=1e-8)
    plain = reintegrator_from_meta({k: v for k, v in tr.meta.items() if k not in ("heads", "causal")})
    assert np.abs(plain(X0, np.array([0.0, 1.0]))[-1] - tr.X[-1]).max() > 1e-3  # the plain model differs


@pytest.mark.parametrize("causal", [False, True])
def test_equivariance_and_tangency(causal):
    """x -> O x with Q_h, K_h, V_h, W_h -> (.) O^T and MLP W1 -> W1 O^T, W2 -> O W2, b2 -> O b2 maps v to O v."""
    rng = _rng()
    d = 3
    X = uniform_sphere(8, d, rng)
    heads = _random_heads(rng, H=2, k=2, d=d)
    mlp = MLP(rng.standard_normal((4, d)), rng.standard_normal(4), rng.standard_normal((d, 4)), rng.standard_normal(d),
              "gelu")
    O, _ = np.linalg.qr(rng.standard_normal((d, d)))
    rot_heads = MultiHead(*(M @ O.T for M in (heads.Q, heads.K, heads.V, heads.W)), scale=heads.scale)
    rot_mlp = MLP(mlp.W1 @ O.T, mlp.b1, O @ mlp.W2, O @ mlp.b2, "gelu")
    v = Model("sa", 1.3, heads=heads, mlp=mlp, causal=causal).vector_field(8, d, "direct")[0](X)
    w = Model("sa", 1.3, heads=rot_heads, mlp=rot_mlp, causal=causal).vector_field(8, d, "direct")[0](X @ O.T)
    np.testing.assert_allclose(w, v @ O.T, atol=1e-12)
    assert np.abs(np.sum(v * X, axis=1)).max() < 1e-14


# -- one MLP per head -------------------------------------------------------------------------------------------
def _per_head_mlp(rng, H, d=3, m=4, act="gelu"):
    return MLP(rng.standard_normal((H, m, d)), rng.standard_normal((H, m)), rng.standard_normal((H, d, m)),
               rng.standard_normal((H, d)), act)


@pytest.mark.parametrize("kind", ["sa", "usa"])
def test_identical_heads_with_identical_per_head_mlps_equal_one_head(kind):
    """Path blocks with H = 3 identical heads (W_h = I/H) and 3 copies of one MLP (per-head arrays) vs path blocks
    with one head and that MLP (shared 2-D arrays): same sums, rounding only."""
    rng = _rng()
    d, H = 3, 3
    Q, K, V = (rng.standard_normal((d, d)) for _ in range(3))
    one = MLP(rng.standard_normal((5, d)), rng.standard_normal(5), rng.standard_normal((d, 5)),
              rng.standard_normal(d), "tanh")
    copies = MLP(*(np.repeat(getattr(one, k)[None], H, 0) for k in ("W1", "b1", "W2", "b2")), "tanh")
    X = uniform_sphere(7, d, rng)
    many = Model(kind, 1.2, heads=MultiHead.from_single(Q, K, V, H=H), mlp=copies).vector_field(7, d, "direct")[0](X)
    single = Model(kind, 1.2, heads=MultiHead.from_single(Q, K, V, H=1), mlp=one).vector_field(7, d, "direct")[0](X)
    np.testing.assert_allclose(many, single, rtol=0, atol=1e-13 * np.abs(single).max())
    # planted: a different MLP in one head must show
    W2 = copies.W2.copy()
    W2[1] *= 1.01
    other = Model(kind, 1.2, heads=MultiHead.from_single(Q, K, V, H=H),
                  mlp=MLP(copies.W1, copies.b1, W2, copies.b2, "tanh")).vector_field(7, d, "direct")[0](X)
    assert np.abs(other - single).max() > 1e-5


def test_per_head_mlp_validation():
    rng = _rng()
    heads = _random_heads(rng, H=2)
    with pytest.raises(InputError, match="3 heads, but the attention has 2"):
        Model("sa", 1.0, heads=heads, mlp=_per_head_mlp(rng, 3))
    with pytest.raises(InputError, match="mlp b2 must have 2 dimensions"):
        MLP(np.ones((2, 4, 3)), np.ones((2, 4)), np.ones((2, 3, 4)), np.ones(3))
    with pytest.raises(InputError, match="mlp shapes must be W1 \\(H, m, d\\)"):
        MLP(np.ones((2, 4, 3)), np.ones((2, 4)), np.ones((3, 3, 4)), np.ones((2, 3)))
    with pytest.raises(InputError, match="say which head"):
        _per_head_mlp(rng, 2)(np.ones((1, 3)))
    with pytest.raises(InputError, match="layer 1: the MLP has weights for 3 heads"):
        Schedule(times=[0.0, 1.0], heads=(heads, heads), mlps=(None, _per_head_mlp(rng, 3)))
    with pytest.raises(InputError, match="2 heads, but the attention has 1"):
        Model("sa", 1.0, mlp=_per_head_mlp(rng, 2))


def test_schedule_with_per_head_mlps_is_the_discrete_map(tmp_path):
    """A schedule file with per-layer per-head MLP arrays (L, H, m, d) loads, round-trips through a trajectory, and
    the layer step with h = 1 equals the dense discrete map (numerics.architectures.deep, einsum MLP)."""
    from numerics.architectures.deep import discrete_transformer

    rng = _rng()
    L, H, k, d, m = 3, 2, 2, 3, 4
    path = tmp_path / "sched.npz"
    np.savez(path, times=np.arange(L, dtype=float), **{c: rng.standard_normal((L, H, k, d)) for c in "QKVW"},
             W1=rng.standard_normal((L, H, m, d)), b1=rng.standard_normal((L, H, m)),
             W2=rng.standard_normal((L, H, d, m)), b2=rng.standard_normal((L, H, d)), activation=np.array("relu"))
    sched = Schedule.load(path)
    assert all(ml.heads == H for ml in sched.mlps)
    X0 = uniform_sphere(6, d, rng)
    model = Model("sa", 1.0, schedule=sched, causal=True)
    tr = simulate(model, X0, float(L), solver=Solver("layer", dt=1.0, backend="direct"))
    ref = discrete_transformer(X0, sched, 1.0, "sa", causal=True)
    assert np.abs(tr.X - ref).max() < 1e-13
    out = tmp_path / "run.npz"
    tr.save(out)
    back = Trajectory.load(out)
    np.testing.assert_array_equal(Model.from_meta(back.meta, back.arrays).schedule.mlps[2].W1, sched.mlps[2].W1)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), H=st.integers(2, 4), kind=st.sampled_from(["sa", "usa"]),
       causal=st.booleans())
def test_permuting_heads_with_their_mlps_leaves_the_field_unchanged(seed, H, kind, causal):
    """Property: the field is a sum over heads, so a permutation applied to the heads and to their MLPs together
    changes nothing (rounding only); applied to the heads alone it changes the field (the pairing matters)."""
    rng = np.random.default_rng(seed)
    heads = _random_heads(rng, H=H)
    mlp = _per_head_mlp(rng, H, act="tanh")
    perm = np.roll(np.arange(H), 1)
    p_heads = MultiHead(*(getattr(heads, k)[perm] for k in "QKVW"), scale=heads.scale)
    p_mlp = MLP(*(getattr(mlp, k)[perm] for k in ("W1", "b1", "W2", "b2")), "tanh")
    X = uniform_sphere(5, 3, rng)
    ref = Model(kind, 0.8, heads=heads, mlp=mlp, causal=causal).vector_field(5, 3, "direct")[0](X)
    both = Model(kind, 0.8, heads=p_heads, mlp=p_mlp, causal=causal).vector_field(5, 3, "direct")[0](X)
    alone = Model(kind, 0.8, heads=p_heads, mlp=mlp, causal=causal).vector_field(5, 3, "direct")[0](X)
    scale = np.abs(ref).max()
    assert np.abs(both - ref).max() <= 1e-13 * max(scale, 1.0)
    assert np.abs(alone - ref).max() > 1e-8 * max(scale, 1.0)
