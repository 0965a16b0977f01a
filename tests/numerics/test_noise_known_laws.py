"""Claims noise.sphere-order-parameter and noise.weak2-with-drift: they pass, and planted errors of the S^2
order parameter and of the weak-order-2 splitting with a drift make them fail."""
import pytest

from numerics.noise import claims
from tests.planting import plant_mutant


def test_the_claims_pass():
    assert claims.check_sphere_order_parameter().status == "passed"
    assert claims.check_weak2_with_drift().status == "passed"


@pytest.mark.parametrize("mutant", ["sphere-order-parameter-sqrt", "sphere-order-parameter-degree",
                                    "sphere-mean-vector-order"])
def test_order_parameter_claim_fails_on_planted_errors(monkeypatch, mutant):
    plant_mutant(monkeypatch, mutant)
    assert claims.check_sphere_order_parameter().status == "failed"


@pytest.mark.parametrize("mutant", ["sde-weak2-half-drift", "sde-weak2-midpoint", "sde-weak2-noise-step"])
def test_weak2_claim_fails_on_planted_errors(monkeypatch, mutant):
    plant_mutant(monkeypatch, mutant)
    assert claims.check_weak2_with_drift().status == "failed"
