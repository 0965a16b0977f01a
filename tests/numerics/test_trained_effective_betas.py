"""Issue 43, "outputs computed but never judged": the heads' effective inverse temperatures (beta_iso, beta_spec)
against the raw weights' scores, the comparison of trained.head-blowup-time; it fails on the mutant
trained-beta-iso-head-width (tr S_h / k for tr S_h / d) of benchmarks/mutants.py."""
from __future__ import annotations

import dataclasses

from numerics.trained import heads
from numerics.trained.claims import _effective_beta_gap
from tests.numerics.trained_support import model, requires_models  # noqa: F401 - fixtures

pytestmark = requires_models


def test_effective_betas_agree_with_the_raw_scores(model):
    gap, rows = _effective_beta_gap(model)
    assert gap <= 1e-10
    assert len(rows) == 2 * model.heads


def test_effective_betas_comparison_sees_the_head_width_for_the_model_width(model, monkeypatch):
    original = heads.head_reports
    k = model.d // model.heads

    def head_width(ckpt, layer, r2):
        return [dataclasses.replace(r, beta_iso=r.beta_iso * ckpt.d / k) for r in original(ckpt, layer, r2)]

    monkeypatch.setattr(heads, "head_reports", head_width)
    gap, _ = _effective_beta_gap(model)
    assert gap > 1e-2
