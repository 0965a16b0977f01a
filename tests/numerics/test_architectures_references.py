"""Claims architectures.per-head-mlp, architectures.head-score-scale and architectures.masked-indicator: they
pass, and planted errors of the per-head MLP wiring, the default score scale and the mask indicator (numerical
and symbolic) make them fail."""
import pytest

from numerics.architectures import claims
from tests.planting import plant_mutant


def test_the_claims_pass():
    for check in (claims.check_per_head_mlp, claims.check_head_score_scale, claims.check_masked_indicator):
        result = check()
        assert result.status == "passed", (result.claim_id, result.measured)


@pytest.mark.parametrize("mutant, check", [
    ("blocks-per-head-mlp-index", "check_per_head_mlp"),
    ("blocks-mlp-output-scale", "check_per_head_mlp"),
    ("blocks-mlp-input-scale", "check_per_head_mlp"),
    ("heads-default-scale-k", "check_head_score_scale"),
    ("heads-default-scale-d", "check_head_score_scale"),
    ("masked-indicator-strict", "check_masked_indicator"),
    ("masked-indicator-reversed", "check_masked_indicator"),
    ("symbolic-causal-range", "check_masked_indicator"),
    ("blocks-causal-mask-direction", "check_masked_indicator"),
])
def test_claims_fail_on_planted_errors(monkeypatch, mutant, check):
    plant_mutant(monkeypatch, mutant)
    assert getattr(claims, check)().status == "failed"
