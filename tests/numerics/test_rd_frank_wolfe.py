"""Tests of numerics.rd.consensus and numerics.rd.frank_wolfe: the consensus field against the Gaussian-area particle
field, hardmax = the Frank-Wolfe oracle, the Voronoi closed form, the NSD bound as a property, and planted errors that
the rd.frank-wolfe-* claims must catch."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from numerics.common.errors import InputError
from numerics.gaussian.solutions import GaussianAttention, particle_velocity
from numerics.rd import consensus, frank_wolfe
from numerics.rd import frank_wolfe_claims as claims
from numerics.rd.consensus import attention_mean, integrate_flow, iterate_layers
from numerics.rd.frank_wolfe import (b_diameter, definiteness, hull_oracle, nsd_contraction_factor, polygon_tokens,
                                     voronoi_cells, voronoi_prediction)


def test_attention_mean_is_the_gaussian_area_softmax_field():
    # two code paths: the consensus mean at beta equals the R^d particle field with A scaled by beta and V = I
    rng = np.random.default_rng(3)
    Z, A = rng.standard_normal((30, 3)), rng.standard_normal((3, 3))
    for beta in (0.3, 2.0, 7.0):
        other = particle_velocity(GaussianAttention("softmax", 3, beta * A, np.eye(3)), Z)
        assert np.max(np.abs(attention_mean(Z, A, beta) - other)) <= 1e-12


def test_weights_are_masses_of_repeated_tokens():
    # a token of mass 2 acts like two copies of it
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((5, 2))
    w = np.array([2.0, 1, 1, 1, 1])
    dup = np.vstack([Z[:1], Z])
    assert np.allclose(attention_mean(Z, np.eye(2), 1.7, weights=w), attention_mean(dup, np.eye(2), 1.7)[1:],
                       atol=1e-13)
    with pytest.raises(InputError):
        attention_mean(Z, np.eye(2), 1.0, weights=[1, 2])


def test_hardmax_target_solves_the_linear_programme():
    rng = np.random.default_rng(1)
    Z, A = rng.standard_normal((9, 3)), rng.standard_normal((3, 3))
    T = attention_mean(Z, A, math.inf)
    for i in range(9):
        y, value = hull_oracle(Z, A @ Z[i])
        assert value == pytest.approx(float((A @ Z[i]) @ T[i]), rel=1e-10, abs=1e-10)


def test_softmax_layers_tend_to_hardmax():
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((10, 2))
    errs = [np.max(np.abs(attention_mean(Z, np.eye(2), b) - attention_mean(Z, np.eye(2), math.inf)))
            for b in (10.0, 100.0, 1000.0)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-6


def test_definiteness_kinds():
    assert definiteness(np.eye(2))["kind"] == "psd"
    assert definiteness(-np.eye(2))["kind"] == "nsd"
    assert definiteness(np.diag([1.0, -1.0]))["kind"] == "indefinite"
    assert definiteness(np.zeros((2, 2)))["kind"] == "zero"
    assert not definiteness(np.array([[1.0, 1.0], [0.0, 1.0]]))["symmetric"]


def test_b_diameter_against_brute_force():
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((12, 3))
    M = rng.standard_normal((3, 3))
    B = M @ M.T
    brute = max(math.sqrt((Z[i] - Z[k]) @ B @ (Z[i] - Z[k])) for i in range(12) for k in range(12))
    assert b_diameter(Z, B) == pytest.approx(brute, rel=1e-12)
    # the difference form keeps relative precision where the Gram form loses it
    Zs = 3.0 + 1e-9 * rng.standard_normal((6, 2))
    brute = max(np.linalg.norm(Zs[i] - Zs[k]) for i in range(6) for k in range(6))
    assert b_diameter(Zs, np.eye(2)) == pytest.approx(brute, rel=1e-6)


def test_voronoi_closed_form_and_fixed_vertices():
    A = np.array([[2.0, 0.3], [0.3, 0.5]])
    Z0 = polygon_tokens((0.1, 1.6, 3.0, 4.5), 12, 0, A=A)
    cells = voronoi_cells(Z0, A)
    assert cells["vertices"] == [0, 1, 2, 3] and cells["all_self_inclusive"]
    k, frames = iterate_layers(Z0, A, math.inf, 0.3, 20)
    assert np.max(np.abs(frames - voronoi_prediction(Z0, A, 0.3, k))) <= 1e-14
    assert np.array_equal(frames[:, :4], np.broadcast_to(Z0[:4], frames[:, :4].shape))


def test_voronoi_prediction_refuses_a_vertex_outside_its_cell():
    Z = np.array([[0.3, 0.5], [2.0, 0.3], [-1.0, 0.0], [0.0, -1.0], [0.2, 0.1]])
    assert not voronoi_cells(Z, np.eye(2))["all_self_inclusive"]
    with pytest.raises(InputError, match="own cell"):
        voronoi_prediction(Z, np.eye(2), 0.2, [0, 1])


@given(seed=st.integers(0, 10_000), step=st.sampled_from([0.05, 0.2, 0.5, 0.8, 1.0]),
       n=st.integers(2, 7), d=st.integers(1, 3))
def test_nsd_diameter_bound_holds_at_every_layer(seed, step, n, d):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((d, d))
    B = M @ M.T + 1e-6 * np.eye(d)
    Z0 = rng.standard_normal((n, d)) * rng.uniform(0.1, 5) + rng.standard_normal(d) * rng.uniform(0, 5)
    _, frames = iterate_layers(Z0, -B, math.inf, step, 8)
    D = [b_diameter(F, B) for F in frames]
    for a, b in zip(D, D[1:]):
        if a > 1e-10 * D[0]:
            assert b <= nsd_contraction_factor(step) * a * (1 + 1e-12) + 1e-15


def test_consensus_inputs_are_refused_with_one_line_errors():
    with pytest.raises(InputError):
        iterate_layers(np.ones((3, 2)), np.eye(3), math.inf, 0.1, 2)
    with pytest.raises(InputError):
        iterate_layers(np.ones((3, 2)), np.eye(2), -1.0, 0.1, 2)
    with pytest.raises(InputError):
        iterate_layers(np.ones((3, 2)), np.eye(2), 1.0, 1.5, 2)
    with pytest.raises(InputError):
        integrate_flow(np.ones((3, 2)), np.eye(2), 1.0, 1.0, 0.1, V=np.eye(3))
    with pytest.raises(InputError, match="margin"):
        polygon_tokens((0.0, 2.0, 4.0), 3, 0, margin=10.0)


def test_work_is_estimated_before_a_huge_run(monkeypatch):
    monkeypatch.setenv("ATTNFLOW_MAX_WORK_HOURS", "0.0001")
    with pytest.raises(InputError, match="would take"):
        iterate_layers(np.random.default_rng(0).standard_normal((2000, 2)), np.eye(2), 1.0, 0.1, 10**6, every=10**6)


# -- the claims pass, and fail on planted errors -------------------------------------------------------------------
def test_step_claim_passes_and_fails_on_argmin_targets(monkeypatch):
    assert claims.frank_wolfe_step(trials=3).status == "passed"
    real = consensus.attention_mean

    def argmin_targets(Z, A, beta, weights=None, block=None):
        if math.isinf(beta):
            return Z[np.argmin((Z @ A.T) @ Z.T, axis=1)]
        return real(Z, A, beta, weights, block)

    monkeypatch.setattr(claims, "attention_mean", argmin_targets)
    assert claims.frank_wolfe_step(trials=3).status == "failed"


def test_voronoi_claim_fails_with_a_wrong_rate(monkeypatch):
    real = frank_wolfe.voronoi_prediction
    monkeypatch.setattr(claims, "voronoi_prediction",
                        lambda Z0, A, step, layers: real(Z0, A, step, np.asarray(layers) + 1))
    assert claims.voronoi(seeds=(0,), betas=(100.0, 200.0, 400.0)).status == "failed"


def test_nsd_claim_fails_with_a_tighter_bound(monkeypatch):
    monkeypatch.setattr(claims, "nsd_contraction_factor", lambda step: 1.0 - step)
    assert claims.nsd_contraction(trials=40).status == "failed"


def test_persistence_claim_fails_with_equal_cluster_masses(monkeypatch):
    real = frank_wolfe.consensus_velocity

    def massless(Z, A, beta, V=None, weights=None):
        return real(Z, A, beta, V, None)

    monkeypatch.setattr(frank_wolfe, "consensus_velocity", massless)
    assert claims.persistence(betas=(14.0, 16.0, 18.0)).status == "failed"


@pytest.mark.slow
def test_persistence_claim_over_seven_betas():
    assert claims.check_frank_wolfe_persistence().status == "passed"
