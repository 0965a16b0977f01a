"""attnflow's view of the trained model: heads as MultiHead, the depth schedule, the idealisation ladder, iterations."""
import numpy as np
import pytest

from numerics.trained import checkpoint as ck
from tests.numerics.trained_support import SHORT, model, requires_models, trace  # noqa: F401 - fixtures

pytestmark = requires_models


def test_multihead_blocks_are_the_weights(model):
    from numerics.trained.heads import multihead

    w = model.layer_weights[0]
    mh = multihead(w, model.heads, beta=1.0)
    h, k = 5, model.d_head
    rows = slice(h * k, (h + 1) * k)
    assert np.allclose(mh.score_maps[h], w.Wq[rows].T @ w.Wk[rows] / np.sqrt(k), rtol=0, atol=1e-14)
    assert np.allclose(mh.value_maps[h], w.Wo[:, rows] @ w.Wv[rows], rtol=0, atol=1e-14)


def test_schedule_with_the_layer_step_reproduces_the_idealised_sublayer(model, trace):
    from numerics.trained.flows import attnflow_depth_run, idealised_sublayer, layer_input_scales

    frames = attnflow_depth_run(model, trace)
    r2 = layer_input_scales(trace)
    U = frames[0]
    for l in range(2):
        U = idealised_sublayer(U, model.layer_weights[l], model.heads, r2[l])
        assert np.abs(U - frames[l + 1]).max() < 1e-12


def test_schedule_check_sees_swapped_queries_and_keys(model, trace):
    """Planted error: Q and K exchanged in one layer's heads (A -> A^T) changes the output far beyond rounding."""
    import dataclasses

    from numerics.trained.flows import idealised_sublayer, layer_input_scales
    from numerics.trained.geometry import unit_rows

    w = model.layer_weights[0]
    bad = dataclasses.replace(w, Wq=w.Wk, Wk=w.Wq)
    U = unit_rows(trace.states[0])
    r2 = layer_input_scales(trace)[0]
    assert np.abs(idealised_sublayer(U, bad, model.heads, r2) - idealised_sublayer(U, w, model.heads, r2)).max() > 1e-3


def test_ladder_ends_exactly_at_the_model_and_starts_away_from_it(model, trace):
    from numerics.trained.flows import LADDER, angles, sublayer_ladder

    outs = sublayer_ladder(trace.states[0], model.layer_weights[0], model.heads, model.ln_eps)
    assert list(outs) == list(LADDER)
    assert angles(outs["LayerNorm"], trace.sublayer[0]).max() < 1e-12
    assert angles(outs["attnflow"], trace.sublayer[0]).mean() > 0.05


def test_sign_structure_is_k_positive_k_negative(model):
    from numerics.trained.heads import head_reports, sym_eigenvalues

    reps = head_reports(model, 0, r2=1.0)
    assert all((r.sym_positive, r.sym_negative) == (model.d_head, model.d_head) for r in reps)
    rng = np.random.default_rng(1)
    Q, K = rng.standard_normal((3, 10)), rng.standard_normal((3, 10))
    e = sym_eigenvalues(Q, K, 1.0)
    assert (e > 1e-9).sum() == 3 and (e < -1e-9).sum() == 3


def test_blowup_time_matches_the_gaussian_moment_ode():
    """t* = 1/(2 lambda_max(sym A)) against the numerically integrated moment ODE (numerics.gaussian)."""
    from numerics.gaussian.solutions import gaussian_attention, solve_moment_ode
    from numerics.trained.heads import blowup_time, sym_eigenvalues

    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((1, 3)), rng.standard_normal((1, 3))
    t_star = blowup_time(sym_eigenvalues(Q, K, 0.5))
    A = 0.5 * K.T @ Q
    sol = solve_moment_ode(gaussian_attention("softmax", 3, V=np.eye(3), A=A), np.zeros(3), np.eye(3), 10 * t_star)
    assert sol.status == "blow-up"
    assert abs(sol.blowup_time - t_star) < 1e-3 * t_star


def test_iterated_layer_variants_agree_with_the_model_object(model):
    """The attention variant (idealised_sublayer) is attnflow's layer step of Model(heads=...)."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate
    from numerics.trained.flows import iterate_layer
    from numerics.trained.heads import multihead

    run = iterate_layer(model, SHORT, layer=2, steps=2, variant="attention")
    m = Model(kind="sa", beta=1.0, heads=multihead(model.layer_weights[1], model.heads, run.r2))
    traj = simulate(m, run.frames[0], 2.0, solver=Solver("layer", dt=1.0, backend="direct"), save=SaveAt(every=1))
    assert np.abs(np.asarray(traj.X) - run.frames).max() < 1e-12
    block = iterate_layer(model, SHORT, layer=2, steps=2, variant="block")
    assert block.frames.shape == (3, run.frames.shape[1], 384)


def test_geometry_and_plateaus():
    from numerics.trained.geometry import layer_geometry, plateaus

    rng = np.random.default_rng(0)
    c = rng.standard_normal((2, 384))
    X = np.concatenate([c[0] + 1e-3 * rng.standard_normal((5, 384)), c[1] + 1e-3 * rng.standard_normal((4, 384))])
    g = layer_geometry(X[None], eps=0.1)[0]
    assert g.clusters == 2 and g.largest_cluster == 5
    assert abs(sum(g.histogram) - 1) < 1e-12
    assert plateaus([5, 5, 5, 3, 3, 2, 2, 2, 2], 3) == [(5, 0, 2), (2, 5, 8)]
