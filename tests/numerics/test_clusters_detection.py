"""eps-graph clusters: equivalence with SciPy single linkage, both edge methods, sizes/centres/diameters."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.clusters.detection import (canonical_labels, cluster_diameter, eps_graph_edges, find_clusters,
                               geodesic_distance, single_linkage_labels)
from numerics.common.errors import InputError
from tests.strategies import sphere_points


@st.composite
def clustered_points(draw):
    """Points scattered around a few centres (non-trivial components at small eps)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n, d, k = draw(st.integers(2, 60)), draw(st.integers(2, 12)), draw(st.integers(1, 5))
    C = rng.standard_normal((k, d))
    X = C[rng.integers(0, k, n)]
    X = X / np.linalg.norm(X, axis=1, keepdims=True) + 0.05 * rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


eps_values = st.floats(1e-3, 3.5, allow_nan=False)


@given(X=sphere_points(n=st.integers(1, 40)), eps=eps_values)
def test_matches_single_linkage_uniform(X, eps):
    ref = single_linkage_labels(X, eps)
    for method in ("kdtree", "gram"):
        assert np.array_equal(find_clusters(X, eps, method=method).labels, ref)


@given(X=clustered_points(), eps=st.floats(1e-3, 0.5))
def test_matches_single_linkage_clustered(X, eps):
    ref = single_linkage_labels(X, eps)
    assert np.array_equal(find_clusters(X, eps, method="kdtree").labels, ref)
    assert np.array_equal(find_clusters(X, eps, method="gram").labels, ref)


def test_edges_are_exactly_the_close_pairs(rng):
    X = rng.standard_normal((80, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    eps = 0.4
    D = geodesic_distance(X[:, None, :], X[None, :, :])
    want = {(i, j) for i in range(80) for j in range(i + 1, 80) if D[i, j] <= eps}
    for method in ("kdtree", "gram"):
        got = {tuple(map(int, e)) for e in eps_graph_edges(X, eps, method, block=7)}
        assert got == want


def test_geodesic_distance_accurate_for_tiny_angles():
    for theta in (1e-12, 1e-8, 1e-3, 1.0, 3.0):
        x, y = np.array([1.0, 0.0]), np.array([math.cos(theta), math.sin(theta)])
        assert geodesic_distance(x, y) == pytest.approx(theta, rel=1e-12)


def test_sizes_centres_diameters_on_the_circle():
    angles = np.array([0.0, 0.01, 0.02, 1.0, 1.005, 3.0])
    X = np.column_stack([np.cos(angles), np.sin(angles)])
    cl = find_clusters(X, 0.015)
    assert cl.count == 3
    assert cl.labels.tolist() == [0, 0, 0, 1, 1, 2]
    assert cl.sizes.tolist() == [3, 2, 1]
    # diameters: largest member distance (exact angles), 0 for the singleton
    assert cl.diameters == pytest.approx([0.02, 0.005, 0.0], abs=1e-12)
    # centre of an arc symmetric about 0.01 is at angle 0.01
    assert cl.centres[0] == pytest.approx([math.cos(0.01), math.sin(0.01)], abs=1e-12)
    assert np.linalg.norm(cl.centres, axis=1) == pytest.approx(np.ones(3))
    assert cl.members(1).tolist() == [3, 4]


def test_weights_shift_centre_and_sizes():
    X = np.array([[1.0, 0.0], [math.cos(0.01), math.sin(0.01)]])
    cl = find_clusters(X, 0.1, weights=[3.0, 1.0])
    assert cl.sizes.tolist() == [4.0]
    mean = 3 * X[0] + X[1]
    assert cl.centres[0] == pytest.approx(mean / np.linalg.norm(mean))


def test_large_eps_joins_everything_and_zero_eps_separates(rng):
    X = rng.standard_normal((30, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    assert find_clusters(X, math.pi).count == 1
    assert find_clusters(X, 0.0).count == 30


def test_diameter_blocks_agree():
    rng = np.random.default_rng(3)
    P = rng.standard_normal((50, 3))
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    assert cluster_diameter(P, entries=10) == pytest.approx(cluster_diameter(P), rel=1e-14)
    D = geodesic_distance(P[:, None, :], P[None, :, :])
    assert cluster_diameter(P) == pytest.approx(D.max(), rel=1e-12)


def test_canonical_labels():
    assert canonical_labels([5, 5, 2, 9, 2]).tolist() == [0, 0, 1, 2, 1]


@pytest.mark.parametrize("kwargs, match", [
    ({"eps": -0.1}, "eps"),
    ({"eps": "x"}, "eps"),
    ({"eps": 0.1, "method": "brute"}, "method"),
    ({"eps": 0.1, "weights": [1.0, -1.0]}, "weights"),
])
def test_bad_input(kwargs, match):
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(InputError, match=match):
        find_clusters(X, **kwargs)


def test_off_sphere_rejected():
    with pytest.raises(InputError, match="norm"):
        find_clusters(np.array([[2.0, 0.0]]), 0.1)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.data())
def test_component_labels_equal_networkx(n, data):
    """The compiled components (SciPy) give the same labels, in the same order, as the NetworkX reference."""
    from numerics.clusters.detection import component_labels, component_labels_networkx

    m = data.draw(st.integers(0, 3 * n)) if n else 0
    pairs = data.draw(st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, max(n - 1, 0))),
                               min_size=m, max_size=m)) if n else []
    edges = np.array(pairs, dtype=int).reshape(-1, 2)
    got, want = component_labels(n, edges), component_labels_networkx(n, edges)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_component_labels_order_by_smallest_vertex():
    """Shown to fail: labels by SciPy's raw order (or reversed) differ from the smallest-vertex order."""
    from numerics.clusters.detection import component_labels

    edges = np.array([[4, 1], [3, 0], [2, 5]])
    assert component_labels(6, edges).tolist() == [0, 1, 2, 0, 1, 2]
    assert component_labels(3, np.zeros((0, 2), int)).tolist() == [0, 1, 2]


@given(X=sphere_points(n=st.integers(1, 40)), eps=eps_values)
def test_cluster_count_equals_find_clusters(X, eps):
    """The count without sizes and centres equals find_clusters' count (the sweeps' observables use it)."""
    from numerics.clusters.detection import cluster_count

    assert cluster_count(X, eps) == find_clusters(X, eps).count
