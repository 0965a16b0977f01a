r"""Clusters of a configuration on :math:`\mathbb{S}^{d-1}` at one time: components of the eps-neighbourhood graph.

Two particles are *eps-neighbours* when their geodesic distance :math:`d(x, y) = \arccos\langle x, y\rangle` is
at most :math:`\varepsilon`; the clusters are the connected components of the eps-neighbour graph (split by
vectorised label propagation, :func:`component_labels`; NetworkX is the tests' reference). This is single-linkage clustering cut at height :math:`\varepsilon`
(``scipy.cluster.hierarchy.fcluster(..., t=eps, criterion="distance")`` on geodesic distances), which
:func:`single_linkage_labels` computes as an :math:`O(n^2)` reference.

Edges are found without an all-pairs Python loop:

- ``kdtree``: :class:`scipy.spatial.cKDTree` ``query_pairs`` on the chord distance
  :math:`\lVert x - y\rVert \le 2 \sin(\varepsilon / 2)` (chord and geodesic distance are increasing functions of
  each other for :math:`\varepsilon \le \pi`); fast in low :math:`d`.
- ``gram``: blocked Gram matrix, candidates :math:`\langle x_i, x_j\rangle \ge \cos\varepsilon - \mathrm{slack}`,
  each candidate then confirmed with the exact chord :math:`\lVert x_i - x_j\rVert` (the Gram test alone loses
  accuracy for :math:`\varepsilon` below about :math:`10^{-6}`); memory :math:`O(\mathrm{block} \cdot n)`, for
  any :math:`d`.

Geodesic distances are computed as :math:`2 \arcsin(\lVert x - y\rVert / 2)`, accurate for tiny distances
(:math:`\arccos\langle x, y\rangle` is not).

Source: the cluster notion of GLPR (arXiv 2312.10794) and GKPR (arXiv 2410.06833), made operational with a
distance threshold. Verified by: clusters.single-linkage.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx
import numpy as np
from scipy.spatial import cKDTree

from numerics.common.errors import InputError, require_choice, require_finite_array, require_points, require_real
from numerics.core.field import block_rows

#: default clustering threshold (radians). Inside a cluster, distances contract like e^{-t} (sa, natural time;
#: 1 - <x_i, x_j> ~ e^{-2t}), so a cluster born at time t0 is below 1e-3 by about t0 + 7, while iid uniform
#: points on S^1 stay apart for n up to about 2 pi / 1e-3 ~ 6000 (typical spacing 2 pi / n).
from numerics.clusters.names import DEFAULT_EPS  # noqa: E402, F401 - re-exported; light module for the CLI parser

EDGE_METHODS = ("auto", "kdtree", "gram")
#: ``auto`` uses the k-d tree up to this dimension and the blocked Gram matrix above it
KDTREE_MAX_DIM = 8


def geodesic_distance(x, y) -> np.ndarray:
    r"""Great-circle distance :math:`2 \arcsin(\lVert x - y\rVert / 2)` between unit vectors (broadcasts over
    leading axes)."""
    chord = np.linalg.norm(np.asarray(x, float) - np.asarray(y, float), axis=-1)
    return 2.0 * np.arcsin(np.minimum(chord / 2.0, 1.0))


@dataclass(frozen=True)
class Clusters:
    """The eps-clusters of one configuration.

    Attributes
    ----------
    labels : (n,) int ndarray
        Cluster of each particle, numbered 0..k-1 in the order of each cluster's smallest particle index.
    sizes : (k,) ndarray
        Number of particles per cluster (or total weight when weights were given).
    centres : (k, d) ndarray
        Normalised (weighted) means of the members; a row of NaN if the mean is zero (antipodal members).
    diameters : (k,) ndarray
        Largest geodesic distance between two members (0 for singletons).
    eps : float
        The threshold (radians).
    """

    labels: np.ndarray
    sizes: np.ndarray
    centres: np.ndarray
    diameters: np.ndarray
    eps: float

    @property
    def count(self) -> int:
        return int(self.sizes.shape[0])

    def members(self, c: int) -> np.ndarray:
        """Particle indices of cluster ``c`` (sorted)."""
        return np.flatnonzero(self.labels == c)


def eps_graph_edges(X: np.ndarray, eps: float, method: str = "auto", block: int | None = None) -> np.ndarray:
    """Pairs (i, j), i < j, at geodesic distance <= eps, as an (m, 2) int array (no validation; see
    :func:`find_clusters`). For eps >= pi every pair qualifies; a star on particle 0 is returned instead, which
    has the same connected components."""
    n, d = X.shape
    if eps >= math.pi:
        return np.column_stack([np.zeros(n - 1, int), np.arange(1, n)])
    if method == "auto":
        method = "kdtree" if d <= KDTREE_MAX_DIM else "gram"
    chord = 2.0 * math.sin(eps / 2.0)
    if method == "kdtree":
        pairs = cKDTree(X).query_pairs(r=chord, output_type="ndarray")
        return pairs.reshape(-1, 2).astype(int)
    # Gram candidates with a slack covering rounding in <x_i, x_j> (|error| <= d * 2^-52 for unit rows),
    # then the exact chord test, so that the result matches the k-d tree's.
    threshold = math.cos(eps) - 1e-12
    b = block or block_rows(n)
    found = []
    for start in range(0, n, b):
        G = X[start:start + b] @ X.T
        rows, cols = np.nonzero(G >= threshold)
        rows = rows + start
        keep = cols > rows
        rows, cols = rows[keep], cols[keep]
        exact = np.linalg.norm(X[rows] - X[cols], axis=1) <= chord
        found.append(np.column_stack([rows[exact], cols[exact]]))
    return np.concatenate(found) if found else np.zeros((0, 2), int)


def component_labels(n: int, edges: np.ndarray) -> np.ndarray:
    """Connected components of the graph on 0..n-1 with ``edges``, labelled 0..k-1 in the order of each
    component's smallest vertex.

    Vectorised label propagation on the edge list (hooking and pointer jumping): every vertex points to a
    vertex of its component with a label no larger than its own; each round hooks the root of one end of every
    edge whose ends differ onto the smaller root, then shortcuts the pointers to their roots. Labels only merge
    along edges, and the rounds end when no edge joins two labels, so the labels are then the components. A
    clustered state (one 32-token cluster: 496 edges) needs two rounds. This replaced a NetworkX graph, whose
    Python-level ``add_edges_from`` took about 40 % of a phase-diagram sweep (the ``one_cluster`` observable);
    :func:`component_labels_networkx` is kept as the independent reference the tests compare with.
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    u, v = edges[:, 0], edges[:, 1]
    label = np.arange(n)
    while True:
        lu, lv = label[u], label[v]
        cross = lu != lv
        if not cross.any():
            break
        lu, lv = lu[cross], lv[cross]
        # hook: the larger root of each crossing edge points to the smaller one
        np.minimum.at(label, np.maximum(lu, lv), np.minimum(lu, lv))
        while True:  # shortcut: every vertex points to its root
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt
    _, smallest, inverse = np.unique(label, return_index=True, return_inverse=True)
    rank = np.empty(smallest.size, dtype=int)
    rank[np.argsort(smallest, kind="stable")] = np.arange(smallest.size)
    return rank[inverse.reshape(-1)].astype(int)


def component_labels_networkx(n: int, edges: np.ndarray) -> np.ndarray:
    """:func:`component_labels` with NetworkX (the reference of the tests: a second, independent code path)."""
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(map(tuple, edges))
    comps = sorted((min(c), c) for c in nx.connected_components(graph))
    labels = np.empty(n, dtype=int)
    for k, (_, comp) in enumerate(comps):
        labels[list(comp)] = k
    return labels


def find_clusters(X, eps: float, *, weights=None, method: str = "auto", block: int | None = None,
                  normalize: bool = False) -> Clusters:
    r"""Clusters of X: connected components of the graph joining particles at geodesic distance
    :math:`\le` ``eps``.

    Parameters
    ----------
    X : (n, d) array_like
        Unit vectors (checked to 1e-8 unless ``normalize``).
    eps : float
        Threshold in radians, :math:`0 \le \varepsilon` (:math:`\varepsilon \ge \pi` joins everything).
    weights : (n,) array_like, optional
        Positive particle weights (e.g. the masses of reduced-model particles); sizes are then sums of weights
        and centres weighted means. Default: every particle counts 1.
    method : {"auto", "kdtree", "gram"}
        How edges are found (see the module docstring); the result does not depend on it.

    Returns
    -------
    Clusters

    Notes
    -----
    Equivalent to single-linkage clustering cut at eps (:func:`single_linkage_labels`). The comparison is
    "<= eps"; particles at exactly distance eps are a measure-zero event whose side depends on rounding.
    Source: GLPR (arXiv 2312.10794), GKPR (arXiv 2410.06833). Verified by: clusters.single-linkage.
    """
    X = require_points(X, "X", normalize=normalize)
    eps = require_real(eps, "eps", minimum=0.0)
    method = require_choice(method, "method", EDGE_METHODS)
    n = X.shape[0]
    if weights is None:
        w = np.ones(n)
    else:
        w = require_finite_array(weights, "weights", ndim=1)
        if w.shape != (n,) or np.any(w <= 0):
            raise InputError(f"weights must be {n} positive numbers, got shape {w.shape} min {w.min():g}")
    labels = component_labels(n, eps_graph_edges(X, eps, method, block))
    return clusters_from_labels(X, labels, eps, w)


def cluster_count(X, eps: float, *, normalize: bool = False) -> int:
    """The number of eps-clusters of X: ``find_clusters(X, eps, normalize=normalize).count`` (the same edges and
    components) without the sizes, centres and diameters, which a count does not need (the ``one_cluster`` and
    ``first_merge`` observables of a sweep ask for nothing else, once per saved frame of every cell)."""
    X = require_points(X, "X", normalize=normalize)
    eps = require_real(eps, "eps", minimum=0.0)
    n = X.shape[0]
    return int(component_labels(n, eps_graph_edges(X, eps, "auto", None)).max()) + 1 if n else 0


def clusters_from_labels(X: np.ndarray, labels: np.ndarray, eps: float, weights: np.ndarray | None = None
                         ) -> Clusters:
    """Sizes, centres and diameters for a given labelling 0..k-1 (no validation)."""
    n, d = X.shape
    w = np.ones(n) if weights is None else weights
    k = int(labels.max()) + 1 if n else 0
    sizes = np.bincount(labels, weights=w, minlength=k)
    sums = np.zeros((k, d))
    np.add.at(sums, labels, w[:, None] * X)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        centres = np.where(norms > 1e-12 * sizes[:, None], sums / norms, np.nan)
    order = np.argsort(labels, kind="stable")  # members of every cluster in one pass, not k boolean masks
    starts = np.searchsorted(labels[order], np.arange(k + 1))
    diameters = np.array([cluster_diameter(X[order[starts[c]:starts[c + 1]]]) if starts[c + 1] - starts[c] > 1
                          else 0.0 for c in range(k)])
    return Clusters(labels=labels, sizes=sizes, centres=centres, diameters=diameters, eps=float(eps))


def cluster_diameter(P: np.ndarray, entries: int = 1 << 21) -> float:
    """Largest geodesic distance between two rows of P, from exact chords |p_i - p_j| in blocks (memory
    O(entries))."""
    m, d = P.shape
    if m < 2:
        return 0.0
    b = max(1, entries // (m * d))
    best = 0.0
    for start in range(0, m, b):
        diff = P[start:start + b, None, :] - P[None, :, :]
        best = max(best, float(np.sqrt(np.einsum("ijk,ijk->ij", diff, diff).max())))
    return 2.0 * math.asin(min(best / 2.0, 1.0))


def single_linkage_labels(X, eps: float) -> np.ndarray:
    """Reference: SciPy single-linkage clustering on geodesic distances, cut at eps, relabelled like
    :func:`find_clusters` (order of smallest member). :math:`O(n^2)` memory; for tests and checks."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import pdist

    X = require_points(X, "X")
    eps = require_real(eps, "eps", minimum=0.0)
    n = X.shape[0]
    if n == 1:
        return np.zeros(1, dtype=int)
    dist = 2.0 * np.arcsin(np.minimum(pdist(X) / 2.0, 1.0))
    raw = fcluster(linkage(dist, method="single"), t=eps, criterion="distance")
    return canonical_labels(raw)


def canonical_labels(raw) -> np.ndarray:
    """Relabel a partition 0..k-1 in the order of each block's smallest index (to compare partitions)."""
    raw = np.asarray(raw)
    _, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inverse.ravel()]
