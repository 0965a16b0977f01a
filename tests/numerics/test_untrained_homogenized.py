"""numerics.decoder.untrained.homogenized_prediction: the score scale std^2 d and the causal overlaps, against
random attention layers with real weight matrices (an independent route), and the uniform limit in closed form."""
import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.decoder.untrained import homogenized_prediction


def test_overlaps_match_random_weight_layers():
    d, n, k, std, draws = 64, 6, 16, 0.1, 3000
    rng = np.random.default_rng(5)
    Y = np.sqrt(d) * np.eye(d)[:n]  # RMS-normalised, orthogonal tokens
    G = np.zeros((n, n))
    mask = np.tril(np.ones((n, n), dtype=bool))
    for _ in range(draws):
        Wq, Wk = std * rng.standard_normal((2, k, d))
        S = np.where(mask, (Y @ Wq.T) @ (Y @ Wk.T).T / np.sqrt(k), -np.inf)
        A = np.exp(S - S.max(axis=1, keepdims=True))
        A /= A.sum(axis=1, keepdims=True)
        G += A @ A.T / draws
    pred = homogenized_prediction(d, n, std, head_dim=k, samples=20000, seed=1)
    assert pred["score_std"] == pytest.approx(std ** 2 * d)
    off = ~np.eye(n, dtype=bool)
    assert pred["overlap_self"] == pytest.approx(np.trace(G) / n, rel=0.02)
    assert pred["overlap_cross"] == pytest.approx(G[off].mean(), rel=0.02)


def test_uniform_limit_closed_form():
    """Vanishing scores: causal rows 1/(i+1), G_ik = 1/(max(i, k) + 1)."""
    d, n = 8, 5
    pred = homogenized_prediction(d, n, 1e-4, head_dim=4, samples=50)
    i = np.arange(n)
    G = 1.0 / (np.maximum.outer(i, i) + 1)
    off = ~np.eye(n, dtype=bool)
    assert pred["R"] == pytest.approx((d - 2) * G[off].mean() / ((d - 1) * np.trace(G) / n), rel=1e-6)


def test_more_common_noise_at_the_smaller_scale():
    small, own = (homogenized_prediction(576, 60, s, samples=500) for s in (0.02, 1 / 24))
    assert small["R"] > own["R"] and small["first_block_cosine"] > own["first_block_cosine"]


def test_bad_input():
    with pytest.raises(InputError):
        homogenized_prediction(576, 60, 0.0)
