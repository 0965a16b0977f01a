"""Claim circle.layer-step: the angle layer equals the sphere layer to rounding; planted errors in the layer map
make it fail."""
import pytest

from numerics.circle import claims
from tests.planting import plant_mutant


def test_layer_step_claim_passes():
    result = claims.check_layer_step()
    assert result.status == "passed" and result.details["backends_as_pinned"]


@pytest.mark.parametrize("mutant", ["angle-layer-no-arctan", "angle-layer-half-angle"])
def test_layer_step_claim_fails_on_planted_errors(monkeypatch, mutant):
    plant_mutant(monkeypatch, mutant)
    assert claims.check_layer_step().status == "failed"
