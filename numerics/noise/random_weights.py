"""Random-weight layers: the discrete network whose depth limit is the common-noise SDE.

Layer l of a depth-L network over the depth horizon T (step h = T/L) moves every token by

    x_i <- ( x_i + h v_i(X) - sigma sqrt(h) P_{x_i} M_l x_i ) / |...|,    M_l = (1/sqrt(H)) sum_h law(G_{l,h}),

with H heads whose weight matrices G_{l,h} have independent entries of mean 0 and variance 1, drawn afresh for
every layer and head (as at initialisation, resampled across depth) and shared by all tokens. ``law`` is the
normalisation of :mod:`numerics.noise.common` (``goe``: (G + G^T)/sqrt(2); ``values``: G/sqrt(d)), so the layer's
random kick has the covariance of sigma dQ over a step h whatever the entry distribution. With Gaussian entries a
layer is exactly a projected Euler-Maruyama step of the SDE; with other entries (``rademacher``: +-1,
``uniform``: on [-sqrt(3), sqrt(3)]) the network converges to the same limit as L grows, by matching the first two
moments of each step (an invariance principle; the third moments vanish by symmetry), at the weak rate 1/L of
the scheme. This is the depth scaling sqrt(h) of the value weights in Fedorov et al. (arXiv 2601.21942, abstract:
diffusion scaling) and, with H heads, the common-noise regime of Koubbi, Geshkovski and Rigollet (arXiv
2604.01978, abstract: weights resampled across layers and heads); the papers' exact scalings were not read.

Verified by: noise.random-weights-depth-limit (numerics.noise.claims_common), tests/numerics/test_common_noise.py.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import require_choice, require_int, require_real
from numerics.noise.common import LAWS, diffusion_constant, increment, step_projected_em, zero_field

#: entry distributions of the weight matrices (mean 0, variance 1)
ENTRIES = ("gaussian", "rademacher", "uniform")


def weight_entries(rng: np.random.Generator, shape, entries: str) -> np.ndarray:
    """Independent entries of mean 0 and variance 1 from ``entries``."""
    if entries == "gaussian":
        return rng.standard_normal(shape)
    if entries == "rademacher":
        return rng.integers(0, 2, size=shape) * 2.0 - 1.0
    return rng.uniform(-math.sqrt(3.0), math.sqrt(3.0), size=shape)


def layer_kick_matrix(rng: np.random.Generator, batch: int, d: int, heads: int, entries: str) -> np.ndarray:
    """(batch, d, d) standard-normal-like matrices (1/sqrt(H)) sum_h G_{l,h}: one per system for one layer."""
    G = weight_entries(rng, (heads, batch, d, d), entries)
    return G.sum(axis=0) / math.sqrt(heads)


def network_alignment(depth: int, t: float, d: int, sigma: float, law: str = "goe", entries: str = "rademacher",
                      heads: int = 1, samples: int = 20000, seed=0) -> tuple[float, float]:
    """E<e_1, x_L> of one token from e_1 through a depth-L random-weight network without attention, with its
    standard error; the SDE limit is exp(-c (d-1) t) (:func:`numerics.noise.common.diffusion_constant`)."""
    depth = require_int(depth, "depth", minimum=1)
    heads = require_int(heads, "heads", minimum=1)
    sigma = require_real(sigma, "sigma", minimum=0.0)
    law = require_choice(law, "law", LAWS)
    entries = require_choice(entries, "entries", ENTRIES)
    h = t / depth
    rng = np.random.default_rng(seed)
    X = np.zeros((samples, 1, d))
    X[:, 0, 0] = 1.0
    for _ in range(depth):
        G = layer_kick_matrix(rng, samples, d, heads, entries)
        X = step_projected_em(zero_field, X, h, sigma, increment(law, G, h), exact=False)
    e = X[:, 0, 0]
    return float(e.mean()), float(e.std(ddof=1) / math.sqrt(samples))


def depth_study(depths=(4, 8, 16), t: float = 1.0, d: int = 3, sigma: float = 0.8, law: str = "goe",
                entries: str = "rademacher", heads: int = 1, samples: int = 200000, seed=0) -> dict:
    """The network's error against the SDE limit at each depth and the fitted rate (slope of log error vs
    log L; the scheme's weak order 1 predicts -1)."""
    exact = math.exp(-diffusion_constant(law, d, sigma) * (d - 1) * t)
    errors, ses = [], []
    for L in depths:
        mean, se = network_alignment(L, t, d, sigma, law, entries, heads, samples, seed)
        errors.append(mean - exact)
        ses.append(se)
    rate = float(np.polyfit(np.log(depths), np.log(np.abs(errors)), 1)[0])
    return {"depths": list(depths), "exact": exact, "error": errors, "se": ses, "rate": rate, "entries": entries,
            "heads": heads, "law": law}
