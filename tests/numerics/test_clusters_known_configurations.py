"""Claims clusters.detection-threshold and clusters.reduced-energy: they pass, and each planted error of the
threshold, the diameters and the reduced energy (the mutants of benchmarks/mutants.py) makes them fail."""
import math

import numpy as np
import pytest

from numerics.clusters import claims
from numerics.clusters.known_configurations import great_circle, random_rotation, threshold_cases
from tests.planting import plant_mutant


def test_the_claims_pass():
    assert claims.check_detection_threshold().status == "passed"
    assert claims.check_reduced_energy().status == "passed"


@pytest.mark.parametrize("mutant", ["clusters-chord-arc", "clusters-chord-half", "clusters-gram-threshold",
                                    "clusters-diameter-arcsin"])
def test_threshold_claim_fails_on_planted_errors(monkeypatch, mutant):
    plant_mutant(monkeypatch, mutant)
    assert claims.check_detection_threshold().status == "failed"


@pytest.mark.parametrize("mutant", ["staircase-reduced-shift", "staircase-reduced-factor2"])
def test_reduced_energy_claim_fails_on_planted_errors(monkeypatch, mutant):
    plant_mutant(monkeypatch, mutant)
    assert claims.check_reduced_energy().status == "failed"


def test_planted_chains_have_the_planted_distances():
    R = random_rotation(5, np.random.default_rng(0))
    P = great_circle([0.0, 0.3, 0.6], 5, R)
    assert np.allclose(np.linalg.norm(P, axis=1), 1.0, atol=1e-15)
    assert math.isclose(math.acos(P[0] @ P[1]), 0.3, rel_tol=1e-12)
    assert all(r["joined_count"] == 1 and r["split_count"] == 2 for r in threshold_cases(seed=5))
