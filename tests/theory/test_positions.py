"""theory.architectures, positions: the ALiBi/RoPE derivations verify, fail on planted errors, and the generated
code of the block field with positions matches numerics.core.blocks (hand-written) to rounding."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from theory import architectures as A
from theory.derivation import Derivation


def test_alibi_gradient_and_rope_identities_are_proved():
    assert A.alibi_gradient_derivation().verify().status == "proved"
    assert A.rope_relative_derivation(4).verify().status == "proved"
    assert A.rope_relative_derivation(3).verify().status == "proved"  # odd k: last coordinate fixed
    assert A.rope_gradient_derivation().verify().status == "proved"


def test_causal_positions_derivations():
    assert A.causal_positions_first_token_derivation().verify(simplify=False).ok
    assert A.causal_positions_two_token_derivation().verify(simplify=False, points=3).ok


def test_planted_asymmetric_bias_breaks_the_gradient(monkeypatch):
    """Planted: the bias -lambda (p_i - p_j) without the absolute value (not symmetric): v != n grad E."""
    monkeypatch.setattr(A, "position_weight", lambda alibi, h, H, p, q: sp.exp(-alibi * (p - q)))
    der = A.alibi_gradient_derivation()
    assert not der.verify(simplify=False).ok


def test_planted_plain_rope_values_are_not_the_gradient():
    """RoPE with plain values (what the block field does) is not n grad E_R: the identity fails at points."""
    der = A.rope_gradient_derivation(3)
    pts = [A.sym.particle(j + 1, 2) for j in range(3)]
    ps = sp.symbols("p1:4", real=True)
    I = sp.eye(2)
    plain = A.block_particle_field("usa", pts, 0, [(I, I, I, I)], rope=1, labels=list(ps))
    base = der.sampler

    def sampler(rng):
        subs = dict(base(rng))
        # rotations with rational entries: p = atan(4/3), 2 atan(4/3) (cos 3/5 and -7/25), 0
        subs.update({ps[0]: 0, ps[1]: sp.atan(sp.Rational(4, 3)), ps[2]: 2 * sp.atan(sp.Rational(4, 3))})
        return subs

    assert not Derivation("plain values", "test", plain, der.rhs, sampler=sampler).verify(simplify=False).ok


def test_planted_wrong_rotation_sign_fails():
    """Planted: R(p)^T instead of R(p) on the key side; the relative-position identity fails."""
    der = A.rope_relative_derivation(2)
    p, r = sp.symbols("p r", real=True)
    q, k = sp.Matrix(sp.symbols("q1:3", real=True)), sp.Matrix(sp.symbols("k1:3", real=True))
    wrong = ((A.rope_rotation(p, 2, 1) * q).T * (A.rope_rotation(r, 2, 1).T * k))[0, 0]
    assert sp.simplify(sp.expand_trig(wrong - der.rhs.subs(sp.Symbol("b", positive=True), 1))) != 0


@pytest.mark.parametrize("kind,causal,alibi,rope,labels,d,particle", [
    ("sa", False, 0.7, None, [0.0, 3.0], 3, 1), ("usa", True, 0.4, 3.0, None, 3, 1),
    ("sa", False, [0.5, 0.1], 2.0, [0.0, 2.0], 2, 0), ("usa", True, None, 10.0, [1.0, -1.0], 2, 1)])
def test_generated_block_field_with_positions_matches_hand_written(kind, causal, alibi, rope, labels, d, particle):
    """One token's velocity from the generated code (SymPy -> NumPy) against numerics.core.blocks; small n and d
    because the symbolic expression of RoPE with several heads grows quickly (n = 2 or 3 tokens, one particle)."""
    from numerics.core.blocks import MultiHead, block_velocity
    from numerics.core.positions import PositionEncoding

    rng = np.random.default_rng(3)
    H = 2 if isinstance(alibi, list) else 1
    n = 2 if labels is not None else 3
    Q, K, V, W = (np.round(rng.standard_normal((H, d, d)), 2) for _ in range(4))
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    heads = MultiHead(Q, K, V, W, scale=0.5)
    pos = PositionEncoding(None if alibi is None else (np.array(alibi) if isinstance(alibi, list) else alibi),
                           rope, None if labels is None else np.array(labels))
    ref = block_velocity(X, heads, 1.3, kind, causal=causal, positions=pos)[particle]
    f = A.block_velocity_function(kind, n, [(Q[h], K[h], V[h], W[h]) for h in range(H)], scale=sp.Rational(1, 2),
                                  causal=causal, particle=particle, alibi=alibi, rope=rope, labels=labels)
    np.testing.assert_allclose(np.array(f(*X.ravel(), 1.3)), ref, atol=1e-13)
