"""Which layer ``--norm post --method layer`` applies: N(x + h P_x A) (the sphere flow's projected Euler), not the
literal Post-LN layer N(x + h A) (docs/guide/normalization.md, "Two Post-LN layers").

The two layers have the same limit h -> 0 but differ at O(h^2) per step; after 30 steps of 0.1 they are
several 1e-2 apart, so a test at 1e-12 against one and > 1e-2 from the other tells them apart.
"""
from __future__ import annotations

import numpy as np

import attnflow as af

N_TOKENS, DIM, BETA, STEP, STEPS = 8, 3, 1.0, 0.1, 30


def _attention(X: np.ndarray, beta: float) -> np.ndarray:
    """A_i = sum_j e^{beta <x_i, x_j>} x_j / Z_i (sa, Q = K = V = I), written out here, independently of the
    package's pipeline."""
    W = np.exp(beta * (X @ X.T))
    return (W @ X) / W.sum(axis=1, keepdims=True)


def _unit(Y: np.ndarray) -> np.ndarray:
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


def projected_layer(X: np.ndarray, h: float, beta: float = BETA) -> np.ndarray:
    """N(x + h P_x A): the step along the tangent field."""
    A = _attention(X, beta)
    return _unit(X + h * (A - np.sum(A * X, axis=1, keepdims=True) * X))


def literal_layer(X: np.ndarray, h: float, beta: float = BETA) -> np.ndarray:
    """N(x + h A): the Post-LN layer as a network writes it."""
    return _unit(X + h * _attention(X, beta))


def _iterate(layer, X0: np.ndarray) -> np.ndarray:
    X = X0
    for _ in range(STEPS):
        X = layer(X, STEP)
    return X


def test_post_layer_method_applies_the_projected_layer():
    X0 = af.uniform_sphere(N_TOKENS, DIM, seed=1)
    tr = af.simulate(af.Model("sa", BETA, norm="post"), X0, STEP * STEPS, solver=af.Solver("layer", dt=STEP))
    assert tr.X.shape[0] == STEPS + 1
    projected, literal = _iterate(projected_layer, X0), _iterate(literal_layer, X0)
    assert np.max(np.abs(tr.X[-1] - projected)) <= 1e-12
    # the two candidate layers are far apart at this step: the comparison above can tell them apart
    assert np.max(np.abs(projected - literal)) > 1e-2
    assert np.max(np.abs(tr.X[-1] - literal)) > 1e-2


def test_cli_post_layer_is_the_projected_layer(tmp_path):
    """The command line goes through the same path: ``simulate --norm post --method layer``."""
    from numerics.cli import main

    X0 = af.uniform_sphere(N_TOKENS, DIM, seed=1)
    np.save(tmp_path / "x0.npy", X0)
    out = tmp_path / "post.npz"
    main(["simulate", "--model", "sa", "--beta", str(BETA), "--init", str(tmp_path / "x0.npy"), "--t-end",
          str(STEP * STEPS), "--method", "layer", "--dt", str(STEP), "--norm", "post", "--out", str(out)])
    X = np.load(out)["X"]
    assert np.max(np.abs(X[-1] - _iterate(projected_layer, X0))) <= 1e-12
    assert np.max(np.abs(X[-1] - _iterate(literal_layer, X0))) > 1e-2


def test_mix_post_phase_is_the_literal_layer():
    """Mix-LN's post phase under ``--method layer`` is the scheme's own layer N(x + h A) (the other one)."""
    X0 = af.uniform_sphere(N_TOKENS, DIM, seed=1)
    tr = af.simulate(af.Model("sa", BETA, norm="mix", norm_switch=10.0), X0, STEP * STEPS,
                     solver=af.Solver("layer", dt=STEP))
    assert np.max(np.abs(tr.X[-1] - _iterate(literal_layer, X0))) <= 1e-12
