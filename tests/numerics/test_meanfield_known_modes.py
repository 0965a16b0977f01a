"""Claims meanfield.zonal-sums and meanfield.dominant-mode: they pass, and the planted errors of the Gegenbauer
recurrence, the power-spectrum normalisation and the dominant mode make them fail."""
import numpy as np
import pytest

from numerics.meanfield import claims
from numerics.meanfield.known_modes import planted_angles
from tests.planting import plant_mutant


def test_zonal_sums_claim_passes_and_fails_on_planted_errors(monkeypatch):
    assert claims.check_zonal_sums().status == "passed"


@pytest.mark.parametrize("mutant", ["zonal-recurrence-coefficient", "zonal-first-term", "power-spectrum-normalisation"])
def test_zonal_sums_claim_fails(monkeypatch, mutant):
    plant_mutant(monkeypatch, mutant)
    assert claims.check_zonal_sums().status == "failed"


def test_dominant_mode_claim_passes():
    result = claims.check_dominant_mode()
    assert result.status == "passed", result.measured
    assert result.measured["modes"] == [3, 2]


@pytest.mark.parametrize("mutant", ["metastable-dominant-offbyone",
                                    pytest.param("metastable-linear-frame-last", marks=pytest.mark.slow),
                                    pytest.param("order-parameters-offbyone", marks=pytest.mark.slow)])
def test_dominant_mode_claim_fails(monkeypatch, mutant):
    plant_mutant(monkeypatch, mutant)
    assert claims.check_dominant_mode().status == "failed"


def test_planted_angles_carry_the_planted_amplitudes():
    from numerics.meanfield.growth import circle_order_parameters

    r = circle_order_parameters(planted_angles(1000, {2: 0.01, 5: 1e-3}), 6)
    assert abs(r[1] - 0.01) < 1e-4 and abs(r[4] - 1e-3) < 1e-5
    assert max(r[0], r[2], r[5]) < 1e-4 and r[3] < 0.05 * r[1]  # second-order harmonics only
