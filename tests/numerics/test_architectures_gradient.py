"""Gradient structure with several heads: energy gradient by finite differences, loop circulations against the
symbolic curl of theory.architectures, and planted errors that the claim catches."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from numerics.architectures import claims as AC
from numerics.architectures import gradient as G
from numerics.core.blocks import MultiHead


def _symbolic_heads(heads: MultiHead):
    return [tuple(sp.Matrix(getattr(heads, k)[h]).applyfunc(lambda e: sp.Rational(float(e)))
                  for k in "QKVW") for h in range(heads.H)]


@pytest.mark.parametrize("name", ["usa, symmetric B != bI, V = I (round)", "sa, heads b = 1, 3 (metric Z^1)"])
def test_circulation_matches_symbolic_curl(name):
    """Two independent paths: Richardson-extrapolated loop circulation (numerics, blocks field) vs the exact curl
    of the 1-form differentiated by SymPy (theory.architectures.curl_at), at the claim's loop centre, beta = 1."""
    from theory.architectures import curl_at

    kind, heads, metric, _ = AC.gradient_cases()[name]
    row = AC.curl_rows(cases={name: AC.gradient_cases()[name]})[0]
    pairs = ((0, 1), (0, 2), (1, 2))
    C = curl_at(kind, _symbolic_heads(heads), AC.LOOP_ANGLES, 1, metric, pairs=pairs, digits=20)
    scale = max(abs(float(c)) for c in C.values())
    for v in row["curls"]:
        exact = float(C[tuple(v["pair"])])
        # Richardson removes the r^2 term: the remainder is O(r^4) = 6e-6 times fourth derivatives of the 1-form,
        # of the size of its largest curl entry; 1e-4 * scale leaves a factor ~16
        assert abs(v["curl"] - exact) <= 1e-4 * scale, (v, exact)


def test_field_is_n_times_the_fd_energy_gradient_and_the_check_catches_a_planted_factor(monkeypatch):
    """The usa field with symmetric heads equals n x the FD gradient of the head energy; the check must fail when
    the energy misses its factor 1/2 (planted)."""
    rows = AC.energy_gradient_errors(seeds=(3,))
    assert rows[0]["relative_error"] < AC.GRADIENT_FD_TOLERANCE
    real = G.heads_energy
    monkeypatch.setattr(G, "heads_energy", lambda X, beta, terms: 2.0 * real(X, beta, terms))
    assert AC.energy_gradient_errors(seeds=(3,))[0]["relative_error"] > 0.5


def test_claim_fails_when_a_gradient_case_loses_its_structure():
    """Planted: the first gradient case gets value maps c_h I instead of c_h B_h; its curl is then nonzero and the
    claim (which expects zero) fails."""
    cases = AC.gradient_cases()
    key = "usa, symmetric B_h, V_h = c_h B_h (round)"
    kind, heads, metric, expect = cases[key]
    eye = np.repeat(np.eye(2)[None], 2, 0)
    cases[key] = (kind, MultiHead(heads.Q, heads.K, np.stack([0.7 * np.eye(2), -1.3 * np.eye(2)]), eye, scale=1.0),
                  metric, expect)
    res = AC._gradient_result("planted", AC.energy_gradient_errors(seeds=(3,)), AC.curl_rows(cases=cases))
    assert res.status == "failed"


def test_symmetric_energy_terms_detects_structure():
    rng = np.random.default_rng(0)
    B = rng.standard_normal((3, 3))
    B = B + B.T
    assert G.symmetric_energy_terms(AC.symmetric_heads([B], [0.5]))[0][1] == pytest.approx(0.5)
    assert G.symmetric_energy_terms(MultiHead.from_single(Q=B + np.triu(np.ones((3, 3))), d=3)) is None
    assert G.symmetric_energy_terms(MultiHead.from_single(Q=B, d=3)) is None  # V = I/H is not c B
