"""Catalogue entries: outcomes and verdicts on known configurations, notes present, searches on small budgets."""
from pathlib import Path

import numpy as np
import pytest

from numerics.conjectures.catalogue import SMOOTH_STEP, catalogue, landscape_outcome, no_spurious_maximum
from numerics.critical.configurations import circle_clusters, regular_polygon
from numerics.core.trajectory import uniform_sphere

ROOT = Path(__file__).resolve().parents[2]


def test_catalogue_has_the_required_entries_with_notes():
    cat = catalogue()
    for cid in ("s1-sync-negative-beta", "crmb-taylor-benign", "crmb-convex-spurious", "metastable-lmax",
                "sphere-single-cluster", "s1-no-spurious-maxima", "landscape"):
        assert cid in cat
        note = ROOT / "proofs_notes" / cat[cid].note
        assert note.exists(), note


def _verdict(inputs):
    return no_spurious_maximum(inputs, landscape_outcome(inputs))


@pytest.mark.parametrize("masses", [[1, 1, 1], [2, 2, 2]])
def test_three_equal_clusters_below_minus_two_thirds_is_a_counterexample(masses):
    v = _verdict({"beta": -1.0, "X0": circle_clusters(2, masses=masses)})
    assert v.holds is False and v.data["cluster_sizes"] == masses


def test_three_equal_clusters_above_threshold_is_a_saddle():
    # clusters of 2: the intra-cluster weight -phi'(1) < 0 gives descent directions, the cluster modes ascent ones
    v = _verdict({"beta": -0.5, "X0": circle_clusters(2, masses=[2, 2, 2])})
    assert v.holds is True and v.data["classification"] == "strict saddle"
    # single points: only the (positive) inter-cluster weights remain, a local minimum of E
    v = _verdict({"beta": -0.5, "X0": circle_clusters(2, masses=[1, 1, 1])})
    assert v.holds is True and v.data["classification"] == "local minimum"


def test_ascent_from_a_random_start_synchronises_for_positive_beta():
    v = _verdict({"beta": 0.5, "X0": uniform_sphere(7, 2, 3)})
    assert v.holds is True and v.data["cluster_sizes"] == [7]


def test_smooth_step_kernel_has_a_spurious_pentagon():
    """CRMB: an increasing convex kernel with a spurious local maximum on S^1 for n = 5."""
    inputs = {"beta": 1.0, "X0": regular_polygon(5, 2), "kernel": SMOOTH_STEP,
              "params": {"eps": 0.05, "w": 0.1, "c": -0.25}}
    v = _verdict(inputs)
    assert v.holds is False and v.data["cluster_sizes"] == [1] * 5


def test_sphere_simplex_is_a_saddle():
    from numerics.critical.configurations import simplex

    v = _verdict({"beta": 1.0, "X0": simplex(3)})
    assert v.holds is True
    # beta = 0: {mean(X) = 0} is a critical manifold (degenerate), but an ascent direction exists: not a maximum
    v = _verdict({"beta": 0.0, "X0": simplex(3)})
    assert v.holds is True and v.data["classification"] == "degenerate"


def test_search_finds_negative_beta_counterexample():
    from dataclasses import replace

    from numerics.conjectures.catalogue import circle_landscape_conjecture

    c = replace(circle_landscape_conjecture(-1.6, -0.8), shrink_budget=5)
    r = c.run(max_examples=30, seed=0)
    assert r.status == "counterexample"
    sizes = r.counterexample["verdict"]["cluster_sizes"]
    assert len(sizes) == 3 and len(set(sizes)) == 1
    assert np.all(r.counterexample["outcome"]["top_eigenvalues"][:-1] < 0)


@pytest.mark.slow
@pytest.mark.parametrize("cid", ["crmb-convex-spurious", "crmb-taylor-benign", "sphere-single-cluster",
                                 "s1-sync-negative-beta", "metastable-lmax"])
def test_catalogue_entries_run(cid):
    c = catalogue()[cid]
    r = c.run(seed=0)
    # the outcome must match what the literature expects whenever it decides (not: any status is fine)
    if c.expected == "counterexample":
        assert r.status == "counterexample", r
    elif c.expected == "no-counterexample-found":
        assert r.status == "no-counterexample-found" and r.decided > 0, r
    else:  # open: any outcome is news, but the search must have run and decided some examples
        assert c.expected == "open" and r.examples_tried > 0 and r.decided > 0, r


def test_landscape_expectation_follows_the_verified_counterexample():
    """The default landscape range [-1, 1] contains beta < -2/3, where conjecture.negative-beta-counterexample
    finds three equal clusters as a strict local maximum: the literature expects a counterexample, not 'open'."""
    from numerics.conjectures.catalogue import catalogue, literature_expectation

    assert catalogue()["landscape"].expected == "counterexample"
    assert literature_expectation(-0.5, 1.0) == "open"
    assert literature_expectation(0.1, 1.0) == "no-counterexample-found"
    assert literature_expectation(-1.0, 1.0, kernel="exp(beta*s) + s**3") == "open"
