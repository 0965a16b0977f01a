"""Claims architectures.norm-* pass, and each goes red on a planted error (the mutants of benchmarks/mutants.py)."""
from __future__ import annotations

import numpy as np
import pytest

from numerics.architectures import norm_claims
from numerics.architectures import norms as E
from numerics.core import norms as core_norms


def test_equiangular_start_is_equiangular():
    X = E.equiangular_start(5, 7, 0.3, seed=4)
    mean, spread = E.gram_spread(X)
    assert mean == pytest.approx(0.3, abs=1e-14) and spread < 1e-14
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-15)
    assert E.mean_gap(X) == pytest.approx(0.7, rel=1e-13)


@pytest.mark.parametrize("check", [norm_claims.check_post_exact, norm_claims.check_derivation,
                                   norm_claims.check_deep_collapse, norm_claims.check_centering])
def test_quick_claims_pass(check):
    result = check()
    assert result.status == "passed", result


@pytest.mark.slow
@pytest.mark.parametrize("check", [norm_claims.check_equiangular, norm_claims.check_equiangular_usa,
                                   norm_claims.check_rates])
def test_slow_claims_pass(check):
    assert check().status == "passed"


def test_planted_pre_layer_radius_fails_the_derivation_check(monkeypatch):
    """Shown to fail: the pre-LN layer with its branch doubled (x <- x + 2 h A) converges to another flow."""
    original = core_norms.NormField.layer

    def wrong(self, Y, h, t):
        return original(self, Y, 2 * h if self.model.norm == "pre" else h, t)

    monkeypatch.setattr(core_norms.NormField, "layer", wrong)
    rows = E.layer_order_rows(schemes=("pre",))
    assert abs(rows[0]["observed_order"] - 1.0) > norm_claims.LAYER_ORDER_BAND


def test_planted_speed_factor_fails_the_equiangular_check(monkeypatch):
    """Shown to fail: particles moved with g doubled (a wrong speed regulation) leave the reduced ODE."""
    original = core_norms.NormField.__call__

    def doubled(self, Y, t):
        out = original(self, Y, t)
        out[:, :self.d] *= 2.0
        return out

    monkeypatch.setattr(core_norms.NormField, "__call__", doubled)
    rows = E.equiangular_rows(schemes=("peri",), kinds=("sa",), t_end=2.0)
    assert rows[0]["rho_error"] > norm_claims.EQUIANGULAR_TOLERANCE


def test_planted_radial_law_fails_the_rates_check(monkeypatch):
    """Shown to fail: a radial law of the wrong size (dr/dt = 2 <theta, A>) breaks the closed form (r_0 + t)."""
    original = core_norms.NormField.__call__

    def faster(self, Y, t):
        out = original(self, Y, t)
        out[:, self.d] *= 2.0
        return out

    monkeypatch.setattr(core_norms.NormField, "__call__", faster)
    rows = E.closed_form_rows(schemes=("pre",), t_end=4.0, long_time=1e2)
    assert rows[0]["particles_vs_closed"] > norm_claims.CLOSED_FORM_TOLERANCE
