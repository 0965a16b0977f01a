"""Issue 43, "tolerances wider than the error they guard": each tightened claim fails on an error planted inside the
gap between its old tolerance and the method's error (the same errors as the mutants noise-diffusion-1e-6,
rd-growth-1e-7, lc-reduced-rtol-loose and rd-prediction-logits-transpose of benchmarks/mutants.py), and passes
without it (so that the mutation run's pytest subset also sees these mutants)."""
from __future__ import annotations

import numpy as np


def test_noise_threshold_sees_a_diffusion_coefficient_off_by_1e_6(monkeypatch):
    # the old tolerance (rel 1e-4) let this pass: the measured D_c moves by 1.0e-6
    from numerics.meanfield import pde
    from numerics.noise.claims import check_threshold

    assert check_threshold().status == "passed"
    original = pde.CircleContinuityOperator.__init__

    def perturbed(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.diffusion = self.diffusion * (1 + 1e-6)

    monkeypatch.setattr(pde.CircleContinuityOperator, "__init__", perturbed)
    result = check_threshold()
    assert result.status == "failed"
    assert 1e-7 < result.measured["max_rel_err_Dc"] < 1e-4   # inside the old gap


def test_well_posedness_tight_case_sees_a_growth_rate_low_by_1e_7(monkeypatch):
    from numerics.rd import claims
    from numerics.rd.model import RdModel

    assert claims.check_well_posedness().status == "passed"
    monkeypatch.setattr(RdModel, "propagator",
                        lambda self, t: np.exp(self.growth_rate * (1 - 1e-7) * t) * self.shifted_propagator(t))
    result = claims.check_well_posedness()
    assert result.status == "failed"
    assert 1e-8 < result.measured["tight_case_deviation"] < 1e-6   # inside the old gap


def test_flow_transition_sees_the_reduced_ode_run_loosely(monkeypatch):
    from numerics.longcontext import claims, flow

    assert claims.check_flow_transition().status == "passed"
    monkeypatch.setattr(flow, "RTOL", 1e-9)
    result = claims.check_flow_transition()
    assert result.status == "failed"
    assert 1e-10 < result.details["particle_error"] < 1e-8   # inside the old gap


def test_polytope_leaders_sees_transposed_prediction_logits(monkeypatch):
    # with A = I the transpose is invisible; the non-symmetric A of the claim sees it
    from numerics.rd import claims, geometry

    assert claims.polytope_leaders(seeds=(0,), general_seeds=(0,)).status == "passed"
    monkeypatch.setattr(geometry, "logits", lambda Z, A: (Z @ A) @ Z.T)
    assert claims.polytope_leaders(seeds=(0,), general_seeds=()).status == "passed"
    assert claims.polytope_leaders(seeds=(0,), general_seeds=(0,)).status == "failed"
