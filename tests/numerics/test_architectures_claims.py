"""The architecture claims pass, and each check fails on a planted error (sign, transpose, wrong layer, no mask)."""
from __future__ import annotations

import numpy as np
import pytest

import numerics.architectures.causal as causal
import numerics.architectures.claims as C
import numerics.core.blocks as blocks
import numerics.core.integrators as integrators
import numerics.gaussian.solutions as gs


def test_two_token_merge_time_matches_simulation():
    rows = C.causal_two_token_errors([(1, 3, 1.0, 1e-3)])
    assert rows[0]["relative_time_error"] <= C.MERGE_TOLERANCE
    assert rows[0]["x1_displacement"] <= C.X1_ROUNDOFF


def test_merge_time_check_fails_with_planted_sign_error(monkeypatch):
    original = causal.two_token_rate

    def wrong(theta, x1, u, beta, Q, K):  # planted: sigma(-z) instead of sigma(z)
        return original(theta, x1, u, -beta, Q, K)

    monkeypatch.setattr(causal, "two_token_rate", wrong)
    monkeypatch.setattr(C, "two_token_rate", wrong)
    rows = C.causal_two_token_errors([(1, 3, 1.0, 1e-3)])
    assert rows[0]["relative_time_error"] > 1e3 * C.MERGE_TOLERANCE


def test_collapse_needs_the_mask():
    runs = C.causal_collapse_runs([(11, 5, 3, 1.0)], causal=False)  # planted: the mask dropped
    assert runs[0]["x1_displacement"] > 1e-3


def test_identical_heads_check_fails_with_transposed_value(monkeypatch):
    ok = C.identical_heads_error(H=2, seeds=(5,), kinds=("sa",))
    assert ok[0]["relative_error"] <= C.HEADS_TOLERANCE
    from numerics.core.attention import Attention

    original = Attention.heads.__func__  # the block prepare of the attention pipeline

    def wrong(cls, beta, kind, heads, *args, **kwargs):  # planted: W_h^T V_h^T for W_h^T V_h
        swapped = blocks.MultiHead(heads.Q, heads.K, np.transpose(heads.V, (0, 2, 1)), heads.W, scale=heads.scale)
        return original(cls, beta, kind, swapped, *args, **kwargs)

    monkeypatch.setattr(Attention, "heads", classmethod(wrong))
    bad = C.identical_heads_error(H=2, seeds=(5,), kinds=("sa",))
    assert bad[0]["relative_error"] > 1e-3


def test_mixed_kernel_check_fails_with_planted_beta(monkeypatch):
    original = blocks.mixed_kernel_coefficients
    monkeypatch.setattr(blocks, "mixed_kernel_coefficients",
                        lambda heads, tol=1e-14: [(b * 1.001, w) for b, w in original(heads, tol)])
    rows = C.mixed_kernel_errors()
    assert max(r["fourier_relative_error"] for r in rows) > 1e3 * C.FOURIER_TOLERANCE


def test_gaussian_heads_quadrature_and_planted_transpose(monkeypatch):
    rows = C.gaussian_heads_quadrature(cases=((2, 2, 31),))
    assert rows[0]["relative_error"] <= C.QUADRATURE_TOLERANCE
    original = gs.affine_velocity

    def wrong(model, alpha, Sigma):  # planted: A_h^T instead of A_h in every head's slope
        if isinstance(model, gs.GaussianHeads):
            parts = [(h.V @ alpha, h.V @ Sigma @ h.A.T) for h in model.heads]
            return sum(p[0] for p in parts), sum(p[1] for p in parts)
        return original(model, alpha, Sigma)

    monkeypatch.setattr(gs, "affine_velocity", wrong)
    rows = C.gaussian_heads_quadrature(cases=((2, 2, 31),))
    assert rows[0]["relative_error"] > 1e-3


def test_gaussian_heads_cross_terms_are_not_a_sum_for_the_layer_map():
    """The ODE right-hand side is a sum over heads; the exact one-layer closure is not (h^2 cross terms)."""
    model, mean, cov = C.gaussian_heads_problem(2, 2, 31)
    _, S_all = gs.layer_gaussian_map(model, mean, cov, 0.5)
    parts = [gs.layer_gaussian_map(gs.GaussianHeads((h,)), mean, cov, 0.5)[1] - cov for h in model.heads]
    J1, J2 = (gs.affine_velocity(h, mean, cov)[1] for h in model.heads)
    cross = 0.25 * (J1 @ cov @ J2.T + J2 @ cov @ J1.T)  # h^2 (J_1 Sigma J_2^T + J_2 Sigma J_1^T), h = 0.5
    assert np.abs(cross).max() > 1e-4
    np.testing.assert_allclose(S_all - cov - sum(parts), cross, atol=1e-14)
    rhs_all = gs.moment_rhs(model, mean, cov)[1]
    rhs_sum = sum(gs.moment_rhs(gs.GaussianHeads((h,)), mean, cov)[1] for h in model.heads)
    np.testing.assert_allclose(rhs_all, rhs_sum, atol=1e-14)


def test_schedule_check_fails_when_the_layer_step_uses_the_next_layer(monkeypatch):
    ok = C.discrete_map_errors(seeds=(22,), L=3)
    assert max(r["max_difference"] for r in ok) <= C.DISCRETE_TOLERANCE
    original = integrators._timed
    monkeypatch.setattr(integrators, "_timed", lambda field, t: original(field, None if t is None else t + 1.0))
    bad = C.discrete_map_errors(seeds=(22,), L=3)
    assert max(r["max_difference"] for r in bad) > 1e-3


@pytest.mark.parametrize("check", [C.check_heads_reduce, C.check_schedule])
def test_fast_claims_pass(check):
    assert check().status == "passed"
