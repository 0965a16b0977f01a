"""theory.architectures: the block-field derivations verify, fail on planted errors, and the emitted code matches
numerics.core.blocks."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from theory import architectures as A
from theory.derivation import Derivation


@pytest.mark.parametrize("kind", ["sa", "usa"])
def test_one_head_and_identical_heads(kind):
    assert A.one_head_derivation(kind).verify().ok
    assert A.identical_heads_derivation(kind).verify().ok


def test_causal_derivations():
    assert A.causal_first_token_derivation(3).verify(simplify=False).ok
    assert A.causal_two_token_derivation(2).verify(simplify=False).ok
    for kind in ("sa", "usa"):
        assert A.causal_meanfield_derivation(kind=kind).verify(simplify=False).ok


def test_planted_errors_fail():
    der = A.causal_two_token_derivation(2)
    wrong = Derivation(der.title, der.source, der.lhs, 2 * der.rhs, sampler=der.sampler)  # planted factor 2
    assert not wrong.verify(simplify=False).ok
    der = A.one_head_derivation("sa")
    pts = [A.sym.particle(j + 1, 2) for j in range(2)]
    rng_Q = sp.Matrix([[1, 2], [0, 1]])  # not symmetric: swapping Q and K transposes Q^T K
    swapped = A.block_particle_field("sa", pts, 0, [(sp.eye(2), rng_Q, sp.eye(2), sp.eye(2))])
    straight = A.block_particle_field("sa", pts, 0, [(rng_Q, sp.eye(2), sp.eye(2), sp.eye(2))])
    planted = Derivation("Q and K swapped", "test", swapped, straight, sampler=der.sampler)  # planted transpose
    assert not planted.verify(simplify=False).ok


def test_multihead_gaussian_proved_and_gradient_structure():
    assert A.multihead_gaussian_derivation(2, 2).verify().status == "proved"
    assert A.multihead_gradient_derivation().verify(simplify=False).ok
    obstruction = A.gradient_obstruction(2)
    assert obstruction != sp.zeros(2, 2)
    B = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"B_{min(i, j) + 1}{max(i, j) + 1}", real=True))
    at_identity = obstruction.subs({B[0, 0]: 3, B[1, 1]: 3, B[0, 1]: 0})
    assert sp.simplify(at_identity) == sp.zeros(2, 2)


def test_gradient_structure_fails_for_identity_value():
    """Planted: V = I instead of V = c B; the gradient identity must fail."""
    from theory.gaussian import symmetric_matrix

    der = A.multihead_gradient_derivation(H=1)
    pts = [A.sym.particle(j + 1, 2) for j in range(2)]
    B = symmetric_matrix("B0", 2)
    c = sp.Symbol("c0", real=True)
    lhs = A.block_particle_field("usa", pts, 0, [(B, sp.eye(2), c * sp.eye(2), sp.eye(2))])
    assert not Derivation("V = c I", "test", lhs, der.rhs, sampler=der.sampler).verify(simplify=False).ok


def test_emitted_code_matches_numerics():
    from numerics.core.blocks import MLP, MultiHead, block_velocity

    rng = np.random.default_rng(3)
    H, k, d, n = 2, 2, 2, 2  # small: theory.codegen's common-subexpression pass dominates the run time
    arrs = [rng.integers(-3, 4, size=(H, k, d)) / 2 for _ in range(4)]
    mlp = (rng.integers(-3, 4, size=(3, d)) / 2, rng.integers(-3, 4, size=3) / 2,
           rng.integers(-3, 4, size=(d, 3)) / 2, rng.integers(-3, 4, size=d) / 2, "tanh")
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    heads = MultiHead(*arrs, scale=0.5)
    for causal, i in ((False, 0), (True, 0)):  # token 1 sees both tokens, or (causal) itself only
        f = A.block_velocity_function("sa", n, [tuple(a[h] for a in arrs) for h in range(H)], scale=sp.Rational(1, 2),
                                      mlp=mlp, causal=causal, particle=i)
        v = np.array(f(*X.ravel(), 1.3))
        ref = block_velocity(X, heads, 1.3, "sa", MLP(*mlp), causal)[i]
        np.testing.assert_allclose(v, ref, atol=1e-13)


def test_schedule_derivation_and_planted_wrong_interval():
    assert A.schedule_derivation().verify().ok
    Q, K, V, W = A.head_matrices(1, 2, 2)
    pts = [A.sym.particle(j + 1, 2) for j in range(2)]
    field = A.scheduled_particle_field("sa", pts, 0, [([(K, Q, V, W)], None), ([(Q, K, V, W)], None)], [0, 1])
    fixed = A.block_particle_field("sa", pts, 0, [(Q, K, V, W)])
    planted = Derivation("first layer at t = 1/2 (wrong interval)", "test", field.subs(A.sym.t, sp.Rational(1, 2)),
                         fixed, sampler=A.one_head_derivation("sa").sampler)
    wrong_entries = {e: v for e, v in zip(list(Q) + list(K) + list(V) + list(W), [1, 2, 0, 1, 1, 0, 3, 1] * 2)}
    assert not Derivation(planted.title, "test", planted.lhs.subs(wrong_entries), planted.rhs.subs(wrong_entries),
                          sampler=planted.sampler).verify(simplify=False).ok


# -- one MLP per head (the notes' form (1/H) sum_h P(MLP^[h](V^[h] a^[h]))) ------------------------------------------
@pytest.mark.parametrize("kind", ["sa", "usa"])
def test_per_head_mlp_derivations(kind):
    assert A.per_head_mlp_derivation(kind).verify(simplify=False).ok
    assert A.identical_heads_mlp_derivation(kind).verify(simplify=False).ok


def test_per_head_mlp_planted_errors_fail():
    """Planted: the two heads' MLPs swapped, and W_h = I instead of I/H; both must fail."""
    der = A.per_head_mlp_derivation("sa")
    pts = [A.sym.particle(j + 1, 2) for j in range(2)]
    heads = [A.head_matrices(h, 2, 2)[:3] for h in range(2)]
    mlps = [A._mlp_symbols(h, 2, 2, "tanh") for h in range(2)]
    swapped = A.block_particle_field("sa", pts, 0, [(Q, K, V, sp.eye(2) / 2) for Q, K, V in heads], mlp=mlps[::-1])
    assert not Derivation("MLPs swapped", "test", swapped, der.rhs, sampler=der.sampler).verify(points=1, simplify=False).ok
    no_avg = A.block_particle_field("sa", pts, 0, [(Q, K, V, sp.eye(2)) for Q, K, V in heads], mlp=mlps)
    assert not Derivation("W = I", "test", no_avg, der.rhs, sampler=der.sampler).verify(points=1, simplify=False).ok


def test_emitted_code_per_head_mlp_matches_numerics():
    """Emitted code (fixed signature f(x1_1, .., xn_d, beta)) with one MLP per head vs numerics.core.blocks (MLP
    weights with a leading head axis) and vs the dense reference numerics.architectures.deep."""
    from numerics.architectures.deep import dense_block_velocity
    from numerics.core.blocks import MLP, MultiHead, block_velocity

    rng = np.random.default_rng(4)
    H, k, d, n, m = 2, 2, 2, 2, 2
    arrs = [rng.integers(-3, 4, size=(H, k, d)) / 2 for _ in range(4)]
    W1, b1 = rng.integers(-3, 4, size=(H, m, d)) / 2, rng.integers(-3, 4, size=(H, m)) / 2
    W2, b2 = rng.integers(-3, 4, size=(H, d, m)) / 2, rng.integers(-3, 4, size=(H, d)) / 2
    per_head = [(W1[h], b1[h], W2[h], b2[h], "tanh") for h in range(H)]
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    heads = MultiHead(*arrs, scale=0.5)
    mlp = MLP(W1, b1, W2, b2, "tanh")
    assert mlp.heads == H
    for kind in ("sa", "usa"):
        f = A.block_velocity_function(kind, n, [tuple(a[h] for a in arrs) for h in range(H)],
                                      scale=sp.Rational(1, 2), mlp=per_head, particle=1)
        v = np.array(f(*X.ravel(), 1.3))
        ref = block_velocity(X, heads, 1.3, kind, mlp)[1]
        np.testing.assert_allclose(v, ref, atol=1e-13)
        np.testing.assert_allclose(dense_block_velocity(X, heads, 1.3, kind, mlp)[1], ref, atol=1e-13)
        # planted: the heads' MLPs in the other order give another field
        wrong = block_velocity(X, heads, 1.3, kind, MLP(W1[::-1], b1[::-1], W2[::-1], b2[::-1], "tanh"))[1]
        assert np.max(np.abs(wrong - v)) > 1e-3


@pytest.mark.parametrize("case", ["usa-symmetric", "sa-one-head", "usa-scaled-identity"])
def test_gradient_cases_have_closed_one_forms(case):
    assert A.gradient_curl_derivation(case).verify(simplify=False, points=3).ok


def test_curl_is_nonzero_for_two_sa_heads_and_v_identity():
    """The obstructions: exact curl entry C_01 at a point (20 digits), nonzero for two sa heads with the metric of
    head 1 and of both heads, and for usa with V = I, symmetric B != bI."""
    I2 = sp.eye(2)
    two = [(I2, I2, I2, I2 / 2), (3 * I2, I2, I2, I2 / 2)]
    angles = (0.1, 1.3, 2.9)
    for metric in ([0], [0, 1]):
        assert abs(float(A.curl_at("sa", two, angles, 1, metric, digits=20)[0, 1])) > 1e-2
    B = sp.Matrix([[1, sp.Rational(1, 2)], [sp.Rational(1, 2), -sp.Rational(1, 2)]])
    assert abs(float(A.curl_at("usa", [(B, I2, I2, I2)], angles, 1, digits=20)[0, 1])) > 0.5
