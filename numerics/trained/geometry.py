r"""Layer-by-layer geometry of token states: pairwise cosines, their histogram, mean cosine and eps-clusters.

GLPR (arXiv 2312.10794, Figure 1 and its ALBERT experiment) plot, layer by layer, the histogram of the pairwise inner
products :math:`\langle x_i, x_j\rangle / (\lVert x_i\rVert\, \lVert x_j\rVert)` of the tokens of one input: the mass
moves to 1 as the tokens cluster. Here the same statistics are measured for any stack of token states (L + 1, n, d):

- the histogram of the :math:`n(n - 1)/2` cosines of distinct pairs (fixed bins on [-1, 1]);
- the mean cosine over distinct pairs;
- the number of eps-clusters of the normalised tokens (components of the graph joining tokens at geodesic distance
  :math:`\le \varepsilon`, :func:`numerics.clusters.detection.find_clusters`; :math:`\varepsilon` in radians, stated
  with every count).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numerics.clusters.detection import find_clusters
from numerics.common.errors import InputError, require_finite_array, require_int, require_real

#: default cluster threshold for trained tokens, radians (cos 0.3 = 0.955)
DEFAULT_EPS = 0.3
DEFAULT_BINS = 40


def unit_rows(X: np.ndarray) -> np.ndarray:
    """Rows scaled to unit norm (zero rows raise InputError)."""
    X = np.asarray(X, dtype=float)
    r = np.linalg.norm(X, axis=-1, keepdims=True)
    if np.any(r == 0):
        raise InputError("a token state is the zero vector: its direction is undefined")
    return X / r


def pair_cosines(X: np.ndarray) -> np.ndarray:
    """Cosines of the distinct pairs i < j of the rows of X (n (n - 1) / 2 values)."""
    U = unit_rows(X)
    G = np.clip(U @ U.T, -1.0, 1.0)
    iu = np.triu_indices(U.shape[0], k=1)
    return G[iu]


@dataclass(frozen=True)
class LayerGeometry:
    """Statistics of one layer's tokens."""

    layer: int
    mean_cosine: float
    median_cosine: float
    clusters: int
    largest_cluster: int
    histogram: list

    def to_dict(self) -> dict:
        return {"layer": self.layer, "mean_cosine": self.mean_cosine, "median_cosine": self.median_cosine,
                "clusters": self.clusters, "largest_cluster": self.largest_cluster, "histogram": self.histogram}


def layer_geometry(states, eps: float = DEFAULT_EPS, bins: int = DEFAULT_BINS) -> list[LayerGeometry]:
    """:class:`LayerGeometry` for each frame of ``states`` (F, n, d) (frames are layers or iterations).

    The histogram holds the fraction of pairs per bin of [-1, 1] split into ``bins`` equal bins.
    """
    S = require_finite_array(states, "states", ndim=3)
    if S.shape[1] < 2:
        raise InputError("need at least two tokens")
    eps = require_real(eps, "eps", minimum=0.0, strict_minimum=True)
    bins = require_int(bins, "bins", minimum=2)
    edges = np.linspace(-1.0, 1.0, bins + 1)
    out = []
    for l, X in enumerate(S):
        c = pair_cosines(X)
        h, _ = np.histogram(c, bins=edges)
        cl = find_clusters(unit_rows(X), eps, method="gram")
        out.append(LayerGeometry(l, float(c.mean()), float(np.median(c)), int(cl.count),
                                 int(max(cl.sizes)), (h / c.size).tolist()))
    return out


def histogram_edges(bins: int = DEFAULT_BINS) -> np.ndarray:
    """Bin edges of :func:`layer_geometry`'s histograms."""
    return np.linspace(-1.0, 1.0, bins + 1)


def plateaus(counts, min_length: int = 3) -> list[tuple[int, int, int]]:
    """Maximal runs of equal consecutive counts of length >= ``min_length``: (count, first, last) frame."""
    counts = list(counts)
    out, start = [], 0
    for i in range(1, len(counts) + 1):
        if i == len(counts) or counts[i] != counts[start]:
            if i - start >= min_length:
                out.append((int(counts[start]), start, i - 1))
            start = i
    return out
