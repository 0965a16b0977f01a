"""Merge tree over frames: union-find identities, events, violations, linkage export, bracket refinement."""
import math

import networkx as nx
import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, is_valid_linkage

from numerics.common.errors import InputError
from numerics.clusters.merge_tree import merge_history, reintegrator_from_meta
from numerics.clusters.reduced import two_cluster_merge_time
from numerics.core.trajectory import simulate


def circle(angles):
    a = np.asarray(angles, float)
    return np.column_stack([np.cos(a), np.sin(a)])


# five particles on S^1: {0,1} join at t=1, {2,3} at t=2, then everything at t=3
FRAMES = [[0.0, 0.5, 2.0, 2.4, 4.0],
          [0.0, 1e-4, 2.0, 2.4, 4.0],
          [0.0, 1e-4, 2.0, 2.0 + 1e-4, 4.0],
          [0.0, 1e-4, 2e-4, 3e-4, 4e-4]]
TIMES = [0.0, 1.0, 2.0, 3.0]


def synthetic(frames=FRAMES, times=TIMES):
    return np.array(times), np.array([circle(f) for f in frames])


def test_events_tree_and_attributes():
    t, X = synthetic()
    h = merge_history(t, X, 1e-3)
    assert h.counts.tolist() == [5, 4, 3, 1]
    assert [(e.time, e.clusters, e.sizes) for e in h.merges] == [
        (1.0, (0, 1), (1.0, 1.0)), (2.0, (2, 3), (1.0, 1.0)), (3.0, (4, 5, 6), (1.0, 2.0, 2.0))]
    assert [e.bracket for e in h.merges] == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]
    assert not h.pairwise and h.pairwise_fraction == pytest.approx(2 / 3)
    tree = h.tree
    assert nx.is_arborescence(tree.reverse())
    assert set(tree.successors(0)) == {5} and tree.edges[0, 5]["time"] == 1.0
    root = h.roots()
    assert root == [7]
    assert tree.nodes[7]["members"] == (0, 1, 2, 3, 4) and tree.nodes[7]["size"] == 5
    assert tree.nodes[5]["birth"] == 1.0 and tree.nodes[5]["death"] == 3.0
    assert tree.nodes[7]["death"] == math.inf
    assert np.linalg.norm(tree.nodes[5]["centre"]) == pytest.approx(1.0)
    assert h.violations == []


def test_linkage_is_valid_and_cuts_back_to_frames():
    t, X = synthetic()
    h = merge_history(t, X, 1e-3)
    Z = h.linkage()
    assert Z.shape == (4, 4) and is_valid_linkage(Z)
    # cutting the dendrogram just after time 2 gives the frame-2 partition
    labels = fcluster(Z, t=2.5, criterion="distance")
    assert len(set(labels)) == 3 and labels[0] == labels[1] and labels[2] == labels[3]


def test_linkage_needs_top_when_clusters_survive():
    t, X = synthetic(FRAMES[:3], TIMES[:3])
    h = merge_history(t, X, 1e-3)
    with pytest.raises(InputError, match="never merge"):
        h.linkage()
    Z = h.linkage(top=10.0)
    assert is_valid_linkage(Z) and Z[-1, 2] == 10.0 and Z[-1, 3] == 5


def test_split_is_reported_not_hidden():
    frames = [[0.0, 0.5, 2.0], [0.0, 1e-4, 2.0], [0.0, 0.3, 2.0], [0.0, 0.3, 2.0], [0.0, 1e-4, 2.0]]
    t, X = synthetic(frames, [0.0, 1.0, 2.0, 3.0, 4.0])
    h = merge_history(t, X, 1e-3)
    assert len(h.merges) == 1
    assert [v.to_dict() for v in h.violations] == [{"cluster": 3, "start": 2.0, "end": 3.0, "pieces": [1.0, 1.0]}]


def test_refined_merge_time_of_two_particles_matches_quadrature():
    # two particles on S^1 = two equal clusters (masses 1/2): exact merge time from the reduced ODE
    theta0, beta, eps = 1.2, 4.0, 1e-3
    T = two_cluster_merge_time(theta0, beta, eps)
    traj = simulate("sa", beta, 2 * T, X0=circle([0.0, theta0]), method="adaptive",
                    save_times=np.linspace(0, 2 * T, 9), rtol=1e-10, atol=1e-12)
    h = merge_history(traj.times, traj.X, eps, reintegrate=reintegrator_from_meta(traj.meta), time_rtol=1e-8)
    (event,) = h.merges
    lo, hi = event.bracket
    assert hi - lo <= 1e-9 + 1e-8 * hi
    # the bracket must contain the exact time up to the integration error (rtol 1e-10 over ~30 time units)
    assert lo - 1e-6 <= T <= hi + 1e-6
    assert h.info["converged"] and h.info["max_mismatch"] < 1e-8


def test_refinement_splits_a_coarse_triple_merge():
    # the coarse frames (0, 1, 40) see three particles join at once; refinement resolves two pairwise merges
    traj = simulate("sa", 4.0, 40.0, X0=circle([0.0, 0.5, 1.3]), method="adaptive",
                    save_times=[0.0, 1.0, 40.0], rtol=1e-9, atol=1e-12)
    coarse = merge_history(traj.times, traj.X, 1e-3)
    assert [(e.time, e.clusters) for e in coarse.merges] == [(40.0, (0, 1, 2))] and not coarse.pairwise
    fine = merge_history(traj.times, traj.X, 1e-3, reintegrate=reintegrator_from_meta(traj.meta), time_rtol=1e-6)
    assert [(e.clusters, e.sizes) for e in fine.merges] == [((0, 1), (1.0, 1.0)), ((2, 3), (1.0, 2.0))]
    assert fine.pairwise
    first, second = (e.time for e in fine.merges)
    assert 1.0 < first < second < 40.0
    assert all(e.bracket[1] - e.bracket[0] <= 1e-9 + 1e-6 * e.time for e in fine.merges)


@pytest.mark.parametrize("times, X, match", [
    ([0.0, 1.0], np.zeros((3, 2, 2)), "same"),
    ([0.0, 0.0], np.array([circle([0, 1])] * 2), "increase"),
])
def test_bad_input(times, X, match):
    with pytest.raises(InputError, match=match):
        merge_history(times, X, 1e-3)


def test_meta_without_parameters_rejected():
    with pytest.raises(InputError, match="meta lacks"):
        reintegrator_from_meta({})


def test_linkage_cut_at_each_frame_time_gives_that_frames_clusters():
    from numerics.clusters.detection import canonical_labels, find_clusters

    traj = simulate("sa", 4.0, 300.0, n=10, d=2, seed=11, method="adaptive",
                    save_times=np.concatenate([[0.0], np.geomspace(0.1, 300.0, 40)]), rtol=1e-9, atol=1e-11)
    h = merge_history(traj.times, traj.X, 1e-3)
    assert h.violations == []  # otherwise tracked and actual partitions may differ
    Z = h.linkage(top=1e6)
    assert is_valid_linkage(Z)
    for t, X in zip(traj.times, traj.X):
        cut = canonical_labels(fcluster(Z, t=t, criterion="distance"))
        assert np.array_equal(cut, find_clusters(X, 1e-3).labels), t
