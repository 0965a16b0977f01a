"""The clusters claims: the default ones pass (slow), and the one-cluster claim can fail (fast)."""
import pytest

from numerics.common.verification import all_claims, run_claim


@pytest.mark.slow
@pytest.mark.parametrize("cid", ["clusters.single-linkage", "clusters.pairwise-merging",
                                 "clusters.two-cluster-merge-time", "clusters.staircase",
                                 "clusters.single-cluster-d3"])
def test_default_claim_passes(cid):
    (c,) = [c for c in all_claims() if c.id == cid]
    assert c.default
    result = run_claim(c).result
    assert result.status == "passed", result.details


def _reversed_fields(monkeypatch):
    """Plant the error of the old review: particle velocity reversed (energy descent instead of ascent)."""
    import numerics.clusters.claims as cc
    right = cc.make_field

    def reversed_field(*args, **kwargs):
        f = right(*args, **kwargs)
        return lambda X: -f(X)

    monkeypatch.setattr(cc, "make_field", reversed_field)


def test_single_cluster_fails_on_reversed_velocity(monkeypatch):
    # the old check could only return passed or inconclusive, and passed with the velocity reversed
    from numerics.clusters.claims import _one_cluster_result, time_to_one_cluster
    from numerics.core.trajectory import uniform_sphere

    X0 = uniform_sphere(16, 3, 0)
    good = time_to_one_cluster(X0, 1.0, 1000.0)
    assert good["final_count"] == 1 and good["energy_monotone"]
    assert _one_cluster_result("x", [good], 1000.0).status == "passed"
    _reversed_fields(monkeypatch)
    bad = time_to_one_cluster(X0, 1.0, 1000.0)
    assert bad["final_state"] == "unclustered" and not bad["energy_monotone"]
    assert _one_cluster_result("x", [bad], 1000.0).status == "failed"


def test_reduced_model_preconditions():
    """Singletons are not clusters; tight, separated groups of >= 2 coincident particles are."""
    import numpy as np

    from numerics.clusters.claims import reduced_model_preconditions
    from numerics.clusters.detection import find_clusters
    from numerics.core.trajectory import uniform_sphere

    spread = uniform_sphere(8, 3, 4)  # 8 singletons: diameter 0 each, but nothing clustered
    pre = reduced_model_preconditions(spread, find_clusters(spread, 1e-3), 5.0, 1e-3)
    assert not pre["formed"] and not pre["ok"]
    Y = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    X = np.repeat(Y, [3, 5], axis=0)
    pre = reduced_model_preconditions(X, find_clusters(X, 1e-3), 5.0, 1e-3)
    assert pre["ok"] and pre["field_disagreement"] <= 1e-12
    close = np.array([[1.0, 0.0, 0.0], [1.0, 2e-3, 0.0]])
    close /= np.linalg.norm(close, axis=1, keepdims=True)
    Xc = np.repeat(close, [2, 2], axis=0)
    Xc[1] = [1.0, 0.0, 1e-6]
    Xc /= np.linalg.norm(Xc, axis=1, keepdims=True)
    pre = reduced_model_preconditions(Xc, find_clusters(Xc, 1e-3), 5.0, 1e-3)
    assert not pre["separated"]  # centres 2e-3 apart with a diameter of 1e-6: < 1e4 x diameter
