"""Normalisation schemes in the core: Model(norm=...), the (theta, r) state through the integrators, files."""
from __future__ import annotations

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core.blocks import MultiHead
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.norms import NORMS, RADIUS_MAX, NormField, renormalize_directions
from numerics.core.trajectory import Trajectory, resume, simulate, uniform_sphere

X0 = uniform_sphere(7, 4, 11)
PARAMS = {"post": {}, "pre": {"radius0": 2.0}, "peri": {}, "mix": {"norm_switch": 0.5},
          "ngpt": {"norm_alpha": 0.3}, "sqrt": {"norm_scale": 0.5}, "lnscale": {"norm_scale": 0.5, "radius0": 1.5}}


@pytest.mark.parametrize("method", ["layer", "rk4", "adaptive"])
def test_post_is_the_existing_flow_bit_for_bit(method):
    rng = np.random.default_rng(0)
    Q = np.eye(4) + 0.3 * rng.standard_normal((4, 4))
    solver = Solver(method, dt=None if method == "adaptive" else 0.05, backend="direct")
    a = simulate(Model("sa", 1.5, Q=Q), X0, 1.0, solver=solver)
    b = simulate(Model("sa", 1.5, Q=Q, norm="post"), X0, 1.0, solver=solver)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.times, b.times) and np.array_equal(a.energy, b.energy)
    assert b.radius is None and "norm" not in b.meta


@pytest.mark.parametrize("norm", NORMS[1:])
def test_schemes_run_keep_unit_directions_and_positive_radii(norm):
    tr = simulate(Model("sa", 1.0, norm=norm, **PARAMS[norm]), X0, 2.0, solver=Solver("rk4", dt=0.05))
    assert tr.radius.shape == tr.X.shape[:2]
    assert np.max(np.abs(np.linalg.norm(tr.X, axis=2) - 1)) < 1e-14
    assert np.all(tr.radius > 0)
    if norm != "lnscale":  # lnscale follows E at beta(t): no monotonicity is claimed for the saved E_beta
        assert np.all(np.diff(tr.energy) >= -1e-13)  # positive speed factors: E_beta still increases (Q = K = V = I)
    if norm in ("ngpt",):
        assert np.all(tr.radius == 1.0)


def test_model_meta_round_trip():
    m = Model("usa", 0.5, norm="mix", norm_switch=2.0, centering=True)
    back = Model.from_meta(m.to_meta())
    assert (back.norm, back.norm_switch, back.centering, back.radius0) == ("mix", 2.0, True, 1.0)
    m = Model("sa", 1.0, norm="ngpt", norm_alpha=0.25)
    assert Model.from_meta(m.to_meta()).norm_alpha == 0.25


@pytest.mark.parametrize("kwargs, message", [
    ({"norm": "layernorm"}, "norm must be one of"),
    ({"norm": "mix"}, "needs norm_switch"),
    ({"norm": "pre", "norm_switch": 1.0}, "does not apply"),
    ({"norm": "post", "radius0": 2.0}, "radius 1"),
    ({"norm": "pre", "radius0": -1.0}, "radius0 must be > 0"),
    ({"norm": "pre", "noise": 0.1}, "noise"),
    ({"norm": "ngpt", "norm_alpha": 0.0}, "norm_alpha must be > 0"),
    ({"norm": "pre", "norm_scale": 2.0}, "does not apply"),
    ({"norm": "peri", "time_unit": "rescaled", "kind": "usa"}, "natural time unit"),
    ({"norm": "pre", "centering": "yes"}, "centering must be"),
    ({"norm": "pre", "radius0": [1.0, -2.0]}, "radius0 must lie in"),
    ({"norm": "pre", "radius0": [1.0, 1e101]}, "radius0 must lie in"),
    ({"norm": "pre", "radius0": [[1.0]]}, "radius0 must have 1 dimensions"),
    ({"norm": "pre", "radius0": []}, "empty array"),
    ({"norm": "pre", "radius0": [1.0, float("inf")]}, "non-finite"),
    ({"norm": "pre", "radius0": ["a"]}, "numeric array"),
    ({"norm": "post", "radius0": [1.0, 2.0]}, "radius 1"),
    ({"norm": "lnscale", "mlp": "4"}, "mlp is not supported|mlp must"),
    ({"norm": "peri", "norm_scale": 2.0}, "'sqrt' and 'lnscale'"),
])
def test_bad_options_are_one_line_errors(kwargs, message):
    kw = {"kind": "sa", "beta": 1.0, **kwargs}
    with pytest.raises(InputError, match=message) as info:
        Model(**kw)
    assert "\n" not in str(info.value)


def test_radius_blow_up_is_refused():
    """V = -I turns the radial law inward (dr/dt = <theta, A> < 0): the radius reaches 0 and the run stops with
    one line."""
    model = Model("sa", 1.0, V=-np.eye(4), norm="pre")
    with pytest.raises(InputError, match="radius blow-up") as info:
        simulate(model, X0, 5.0, solver=Solver("rk4", dt=0.05))
    assert "\n" not in str(info.value)
    Y = np.hstack([X0, np.full((7, 1), 2 * RADIUS_MAX)])
    with pytest.raises(InputError, match="radius blow-up"):
        renormalize_directions(Y)


def test_vector_field_is_refused_for_radial_models():
    with pytest.raises(InputError, match="theta, r"):
        Model("sa", 1.0, norm="pre").vector_field(7, 4)


@pytest.mark.parametrize("norm", ["pre", "mix"])
def test_save_load_and_resume_continue_the_run(tmp_path, norm):
    model = Model("sa", 1.0, norm=norm, **PARAMS[norm])
    full = simulate(model, X0, 1.0, solver=Solver("rk4", dt=0.05))
    half = simulate(model, X0, 0.4, solver=Solver("rk4", dt=0.05))
    path = tmp_path / "t.npz"
    half.save(path)
    loaded = Trajectory.load(path)
    assert np.array_equal(loaded.radius, half.radius)
    cont = resume(path, 1.0)
    assert cont.radius.shape == cont.X.shape[:2]
    assert np.max(np.abs(cont.X[-1] - full.X[-1])) < 1e-12
    assert np.max(np.abs(cont.radius[-1] - full.radius[-1])) < 1e-12


def test_resume_without_radius_is_refused(tmp_path):
    tr = simulate(Model("sa", 1.0, norm="pre"), X0, 0.2, solver=Solver("rk4", dt=0.05))
    Trajectory(tr.times, tr.X, tr.energy, tr.meta, tr.arrays).save(tmp_path / "t.npz")
    with pytest.raises(InputError, match="no radius"):
        resume(tmp_path / "t.npz", 1.0)


def test_bad_radius_in_a_file_is_refused(tmp_path):
    tr = simulate(Model("sa", 1.0, norm="pre"), X0, 0.2, solver=Solver("rk4", dt=0.05))
    Trajectory(tr.times, tr.X, tr.energy, tr.meta, tr.arrays, radius=-tr.radius).save(tmp_path / "t.npz")
    with pytest.raises(InputError, match="radii must lie"):
        Trajectory.load(tmp_path / "t.npz")


def test_mix_adaptive_and_rk4_agree_across_the_switch():
    model = Model("sa", 1.0, norm="mix", norm_switch=0.5)
    a = simulate(model, X0, 1.5, solver=Solver("rk4", dt=0.01), save=SaveAt(times=[0, 0.5, 1.5]))
    b = simulate(model, X0, 1.5, solver=Solver("adaptive", rtol=1e-11, atol=1e-13), save=SaveAt(times=[0, 0.5, 1.5]))
    assert np.max(np.abs(a.radius - b.radius)) < 1e-8
    assert np.all(a.radius[:2] == 1.0)


def test_planted_switch_inside_a_step_loses_the_order(monkeypatch):
    """Shown to fail: without the split at the Mix-LN switch (one segment), rk4 and adaptive differ by far
    more than the tolerance above."""
    from numerics.core import norms

    monkeypatch.setattr(norms.RadialRun, "integrate", lambda self, field, Y0, t_end, method, **kw:
                        __import__("numerics.core.integrators", fromlist=["integrate"]).integrate(
                            field, Y0, t_end, method, steppers=self.steppers, project=self.project, **kw))
    model = Model("sa", 1.0, norm="mix", norm_switch=0.505)
    a = simulate(model, X0, 1.5, solver=Solver("rk4", dt=0.01))
    b = simulate(model, X0, 1.5, solver=Solver("adaptive", rtol=1e-11, atol=1e-13))
    assert np.max(np.abs(a.radius[-1] - b.radius[-1])) > 1e-6


def test_centering_keeps_directions_in_the_hyperplane_and_heads_combine():
    heads = MultiHead.from_single(None, None, None, d=4, H=2)
    model = Model("sa", 1.0, heads=heads, causal=True, norm="peri", centering=True)
    tr = simulate(model, X0, 1.0, solver=Solver("rk4", dt=0.05))
    assert np.max(np.abs(tr.X.sum(axis=2))) < 1e-13
    with pytest.raises(InputError, match="d >= 3"):
        simulate(Model("sa", 1.0, norm="pre", centering=True), uniform_sphere(3, 2, 0), 1.0)


def test_layer_method_is_the_schemes_own_layer():
    """The pre-LN layer x <- x + h A(N(x)) exactly, one step from a known state."""
    model = Model("sa", 1.0, norm="pre", radius0=2.0)
    field = NormField(model, 4)
    Y = np.hstack([X0, np.full((7, 1), 2.0)])
    out = field.layer(Y, 0.1, 0.0)
    x_new = 2.0 * X0 + 0.1 * field.output(X0)
    assert np.allclose(out[:, -1], np.linalg.norm(x_new, axis=1), rtol=0, atol=1e-15)
    assert np.allclose(out[:, :-1], x_new / np.linalg.norm(x_new, axis=1)[:, None], rtol=0, atol=1e-15)


@pytest.mark.parametrize("positions", [{"alibi": 1.0}, {"rope": 10.0}])
def test_schemes_use_the_models_positions(positions):
    """The attention output of a scheme is the block field's, positions included (they were once dropped)."""
    from numerics.core.blocks import block_velocity

    X = uniform_sphere(6, 4, seed=3)
    plain = NormField(Model("sa", 2.0, norm="pre"), 4)
    with_pos = NormField(Model("sa", 2.0, norm="pre", **positions), 4)
    expected = block_velocity(X, MultiHead.from_single(None, None, None, d=4), 2.0, "sa", project=False,
                              positions=Model("sa", 2.0, **positions).position_encoding())
    assert np.array_equal(with_pos.output(X), expected)
    assert np.max(np.abs(with_pos.output(X) - plain.output(X))) > 1e-3


@pytest.mark.parametrize("backend", ["fourier", "numba", "harmonic"])
def test_schemes_refuse_other_field_backends(backend):
    with pytest.raises(InputError, match="backend is not available"):
        simulate(Model("sa", 1.0, norm="pre"), uniform_sphere(4, 3, seed=0), 0.1,
                 solver=Solver("rk4", dt=0.05, backend=backend))


def test_mix_layer_is_post_before_the_switch_and_pre_after():
    """Mix-LN's layer map (its definition, used by ``method="layer"``) is the post-LN layer for layers that start
    before the switch and the pre-LN layer after it (mutant ``norm-mix-switch-swapped`` survived every other
    check: the flows agree at radius 1, where the two layers differ only at second order in h)."""
    d = X0.shape[1]
    Y = np.hstack([X0, np.full((X0.shape[0], 1), 1.3)])  # a radius != 1: post and pre layers differ at first order
    mix = NormField(Model("sa", 1.0, norm="mix", norm_switch=0.5), d)
    post = NormField(Model("sa", 1.0, norm="post"), d)
    pre = NormField(Model("sa", 1.0, norm="pre"), d)
    h = 0.1
    assert np.array_equal(mix.layer(Y, h, 0.2), post.layer(Y, h, 0.2))
    assert np.array_equal(mix.layer(Y, h, 0.7), pre.layer(Y, h, 0.7))
    assert np.max(np.abs(post.layer(Y, h, 0.2) - pre.layer(Y, h, 0.2))) > 1e-3  # the check can tell them apart


# -- per-token radii ----------------------------------------------------------------------------------------------
def test_per_token_radius0_runs_saves_and_resumes(tmp_path):
    r0 = np.linspace(0.5, 3.0, 7)
    model = Model("sa", 1.0, norm="pre", radius0=r0)
    assert model.radius0.flags.writeable is False and np.array_equal(model.radius0, r0)
    tr = simulate(model, X0, 0.4, solver=Solver("rk4", dt=0.05))
    assert np.array_equal(tr.radius[0], r0)
    tr.save(tmp_path / "t.npz")
    back = Trajectory.load(tmp_path / "t.npz")
    assert np.array_equal(Model.from_meta(back.meta).radius0, r0)
    full = simulate(model, X0, 1.0, solver=Solver("rk4", dt=0.05))
    cont = resume(tmp_path / "t.npz", 1.0)
    assert np.max(np.abs(cont.radius[-1] - full.radius[-1])) < 1e-12
    # one number and the array of that number give the same run bit for bit
    a = simulate(Model("sa", 1.0, norm="pre", radius0=2.0), X0, 0.4, solver=Solver("rk4", dt=0.05))
    b = simulate(Model("sa", 1.0, norm="pre", radius0=np.full(7, 2.0)), X0, 0.4, solver=Solver("rk4", dt=0.05))
    assert np.array_equal(a.X, b.X) and np.array_equal(a.radius, b.radius)
    assert Model("sa", 1.0, norm="post", radius0=np.ones(3)).norm == "post"  # all ones: allowed


def test_per_token_radius0_length_and_ensembles_carry_their_radii():
    with pytest.raises(InputError, match="radius0 has 3 radii, the initial state has 7 tokens"):
        simulate(Model("sa", 1.0, norm="pre", radius0=[1.0, 2.0, 3.0]), X0, 0.1)
    with pytest.raises(InputError, match="radius0 has 3 radii, the initial state has 7 tokens"):
        simulate(Model("sa", 1.0, norm="pre", radius0=[1.0, 2.0, 3.0]), np.stack([X0, X0]), 0.1)
    # a batch carries its radii (B, n): each member equals its single run, radii included, bit for bit
    model = Model("sa", 1.0, norm="pre", radius0=np.linspace(0.5, 2.0, 7))
    other = X0[::-1].copy()
    batch = simulate(model, np.stack([X0, other]), 0.3, solver=Solver("rk4", dt=0.05))
    assert batch.X.shape == (7, 2, 7, 4) and batch.radius.shape == (7, 2, 7)
    for b, start in enumerate((X0, other)):
        single = simulate(model, start, 0.3, solver=Solver("rk4", dt=0.05))
        assert np.array_equal(batch.X[:, b], single.X) and np.array_equal(batch.radius[:, b], single.radius)


# -- LayerNorm Scaling --------------------------------------------------------------------------------------------
def test_lnscale_field_is_pre_at_beta_over_l():
    """NormField of lnscale at time t: attention at beta / (1 + t/tau), laws of pre-LN with branch 1/sqrt(l);
    the other schemes' attention does not depend on t (the hook leaves them unchanged)."""
    from numerics.core.blocks import block_velocity

    tau, t, beta = 0.5, 1.5, 2.0
    r = np.linspace(1.0, 2.0, 7)
    Y = np.hstack([X0, r[:, None]])
    field = NormField(Model("sa", beta, norm="lnscale", norm_scale=tau), 4)
    heads = MultiHead.from_single(None, None, None, d=4)
    ell = 1.0 + t / tau
    A = block_velocity(X0, heads, beta / ell, "sa", project=False)
    a = np.einsum("ij,ij->i", X0, A)
    out = field(Y, t)
    assert np.allclose(out[:, -1], a / np.sqrt(ell), rtol=1e-14, atol=0)
    assert np.allclose(out[:, :-1], (A - a[:, None] * X0) / (np.sqrt(ell) * r[:, None]), rtol=0, atol=1e-15)
    pre = NormField(Model("sa", beta, norm="pre"), 4)
    assert np.array_equal(pre(Y, 0.0), pre(Y, 7.0)) and field.depth_beta(t) == beta / ell
    assert pre.depth_beta(t) is None
    # the saved energy is E at the fixed beta; lnscale follows E at beta / l, so it is not claimed monotone
    assert not Model("sa", beta, norm="lnscale").is_gradient_flow and Model("sa", beta, norm="sqrt").is_gradient_flow


def test_planted_lnscale_without_depth_beta_differs():
    """Shown to fail: dropping the depth-dependent beta (the sqrt scheme) changes the run by far more than the
    claim's literal-layer tolerance (architectures.norm-lnscale compares the literal layer to 1e-12)."""
    from numerics.architectures import norms as experiments

    assert experiments.lnscale_vs_sqrt(t_end=1.0)["direction_difference"] > 1e-3


def test_lnscale_layer_is_the_literal_layer():
    """The layer method of lnscale is x + h A_beta(N(x) / sqrt(l)) with the attention fed the scaled LN output
    (mutant ``norm-lnscale-layer-unscaled`` dropped the value factor 1/sqrt(l) and survived the field tests)."""
    from numerics.core.blocks import block_velocity

    tau, t, h, beta = 0.5, 1.5, 0.1, 2.0
    r = np.linspace(1.0, 2.0, 7)
    Y = np.hstack([X0, r[:, None]])
    field = NormField(Model("sa", beta, norm="lnscale", norm_scale=tau), 4)
    ell = 1.0 + t / tau
    x_new = r[:, None] * X0 + h * block_velocity(X0 / np.sqrt(ell), MultiHead.from_single(None, None, None, d=4),
                                                 beta, "sa", project=False)
    out = field.layer(Y, h, t)
    assert np.allclose(out[:, :-1] * out[:, -1:], x_new, rtol=0, atol=1e-14)


# -- batches: the state (B, n, d + 1), radii (B, n) ------------------------------------------------------------------
def test_batches_save_load_and_resume_their_radii(tmp_path):
    from numerics.core.ensemble import Members

    model = Model("sa", 1.0, norm="mix", norm_switch=0.3)
    starts = np.stack([X0, uniform_sphere(7, 4, 12)])
    members = Members(beta=[1.0, -0.5])
    full = simulate(model, starts, 1.0, solver=Solver("rk4", dt=0.05), members=members)
    half = simulate(model, starts, 0.4, solver=Solver("rk4", dt=0.05), members=members)
    half.save(tmp_path / "t.npz")
    loaded = Trajectory.load(tmp_path / "t.npz")
    assert loaded.radius.shape == (9, 2, 7) and np.array_equal(loaded.radius, half.radius)
    cont = resume(tmp_path / "t.npz", 1.0)
    assert cont.radius.shape == cont.X.shape[:-1]
    assert np.max(np.abs(cont.X[-1] - full.X[-1])) < 1e-12
    assert np.max(np.abs(cont.radius[-1] - full.radius[-1])) < 1e-12
    Trajectory(half.times, half.X, half.energy, half.meta, half.arrays).save(tmp_path / "u.npz")
    with pytest.raises(InputError, match="no radius"):
        resume(tmp_path / "u.npz", 1.0)


def test_batches_refuse_what_the_schemes_refuse_in_one_line():
    from numerics.core.ensemble import Members

    model, starts = Model("sa", 1.0, norm="pre"), np.stack([X0, X0])
    for backend in ("numba", "fourier"):  # the single run's line (test_schemes_refuse_other_field_backends)
        solver = Solver("rk4", dt=0.05, backend=backend)
        with pytest.raises(InputError) as one:
            simulate(model, X0, 0.1, solver=solver)
        with pytest.raises(InputError) as many:
            simulate(model, starts, 0.1, solver=solver)
        assert str(one.value) == str(many.value)
    with pytest.raises(InputError, match="^normalisation schemes are deterministic here: noise > 0 is not supported$"):
        simulate(model, starts, 0.1, members=Members(noise=[0.1, 0.2]))
    with pytest.raises(InputError, match="per-member Q, K, V are not supported with norm='pre'"):
        simulate(model, starts, 0.1, members=Members(V=np.stack([np.eye(4), -np.eye(4)])))
    with pytest.raises(InputError, match="^per-member adaptive steps do not take norm='pre' .*use --step shared$"):
        simulate(model, starts, 0.1, solver=Solver("dp5", step="per-member"))
    # a radius that collapses names its member and token
    with pytest.raises(InputError, match="radius blow-up: member 1 token 2 has radius"):
        renormalize_directions(np.concatenate([starts, np.ones((2, 7, 1))], axis=-1)
                               * np.where(np.arange(5) == 4, np.array([[1.0] * 7, [1, 1, -1, 1, 1, 1, 1]])[..., None],
                                          1.0))


@pytest.mark.parametrize("norm", ["lnscale", "peri"])
def test_batch_members_with_their_own_beta_equal_single_runs(norm):
    """Per-member betas reach the scheme's field (lnscale: each member's depth beta_b / l), radii included."""
    from numerics.core.ensemble import Members, member

    betas = [2.0, -1.0, 0.5]
    starts = np.stack([uniform_sphere(7, 4, s) for s in (1, 2, 3)])
    batch = simulate(Model("sa", 1.0, norm=norm), starts, 0.3, solver=Solver("rk4", dt=0.05),
                     members=Members(beta=betas))
    for b, beta in enumerate(betas):
        single = simulate(Model("sa", beta, norm=norm), starts[b], 0.3, solver=Solver("rk4", dt=0.05))
        assert np.array_equal(batch.X[:, b], single.X) and np.array_equal(batch.radius[:, b], single.radius)
        one = member(batch, b)  # a member as a single run's trajectory keeps its radii
        assert one.meta["beta"] == beta and np.array_equal(one.radius, single.radius)
