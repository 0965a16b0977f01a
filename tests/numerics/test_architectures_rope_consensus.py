"""The consensus under rotary positions (numerics.architectures.rope_consensus, theory.rope_consensus; claim
architectures.rope-consensus)."""
import numpy as np
import pytest

from numerics.common.errors import InputError


def test_rope_consensus_claim_passes():
    from numerics.architectures.claims_rope_consensus import check_rope_consensus

    r = check_rope_consensus()
    assert r.status == "passed", r.measured["flags"]


def test_logits_from_the_planes_equal_the_rotated_scores():
    from numerics.architectures.rope_consensus import consensus_logits
    from numerics.core.positions import rotate

    rng = np.random.default_rng(1)
    d, labels = 6, np.array([0.0, 1.5, 4.0, 9.0])
    Q, K = rng.standard_normal((d, d)), rng.standard_normal((d, d))
    x = rng.standard_normal(d)
    x /= np.linalg.norm(x)
    n = labels.size
    left = rotate(np.tile(Q @ x, (n, 1)), labels, 5.0)
    right = rotate(np.tile(K @ x, (n, 1)), labels, 5.0)
    assert np.allclose(consensus_logits(x, Q, K, labels, 5.0, 0.7), 0.7 * left @ right.T, atol=1e-13)


def test_sa_spectrum_has_the_rigid_motions_at_zero():
    from numerics.architectures.rope_consensus import predicted_spectrum

    x = np.array([0.0, 0.6, 0.0, 0.8])
    ev = predicted_spectrum(x, np.eye(4), np.eye(4), [0, 1, 2], 10.0, 1.0, "sa")
    assert np.sum(np.abs(ev) < 1e-14) == 3 and ev.size == 9


def test_bad_kind():
    from numerics.architectures.rope_consensus import consensus_weights

    with pytest.raises(InputError):
        consensus_weights(np.zeros((2, 2)), "ssa")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sa", "usa"])
def test_symbolic_consensus_jacobian(kind):
    from theory.rope_consensus import consensus_jacobian_identity

    assert consensus_jacobian_identity((0, 2), kind)
