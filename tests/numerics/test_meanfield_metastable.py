"""numerics.meanfield.metastable: gap clustering and the metastable count."""
import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.meanfield.metastable import count_clusters_by_gaps, metastable_experiment


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_gap_clusters_on_synthetic_data(k, rng):
    centers = 2 * np.pi * np.arange(k) / k + 0.03      # one cluster straddles theta = 0 when spread > 0.03
    theta = np.concatenate([c + 0.02 * rng.standard_normal(400) for c in centers])
    out = count_clusters_by_gaps(theta)
    assert out.count == k and sum(out.sizes) == theta.size
    assert np.sort(out.centers) == pytest.approx(np.sort(np.mod(centers, 2 * np.pi)), abs=0.01)


def test_uniform_angles_have_no_clusters_and_stragglers_are_not_clusters(rng):
    assert count_clusters_by_gaps(rng.uniform(0, 2 * np.pi, 5000)).count == 0
    theta = np.concatenate([np.full(500, 1.0), np.full(500, 4.0), [2.5]])
    out = count_clusters_by_gaps(theta)
    assert out.count == 2 and out.stragglers == 1


def test_metastable_small_run_is_deterministic_and_reports_per_seed():
    a = metastable_experiment(2.1, 1500, seeds=2)
    b = metastable_experiment(2.1, 1500, seeds=2)
    assert a.observed == b.observed and a.dominant_modes == b.dominant_modes
    assert a.predicted == 2 and len(a.observed) == 2
    assert a.observed == [2, 2]
    d = a.to_dict()
    assert {"predicted", "observed", "dominant_modes", "fraction_matching"} <= d.keys()


def test_bad_inputs():
    with pytest.raises(InputError):
        metastable_experiment(-1.0, 1000, seeds=1)
    with pytest.raises(InputError):
        metastable_experiment(2.0, 10, seeds=1)
    with pytest.raises(InputError):
        count_clusters_by_gaps([0.1, 0.2], min_gap=-1)
