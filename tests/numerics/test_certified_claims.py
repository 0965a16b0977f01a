"""The certified claims (numerics.certified): each default certificate is issued and contains the mpmath value;
planted errors (a wrong Bessel order, a wrong sign, a wrong d) make it FAIL, and a floating-point shortcut
anywhere in the chain refuses the certificate."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sps
import sympy as sp

import numerics.certified.claims as claims
import theory.certified.statements as statements
from theory.certified.balls import FloatingPointRefused, Interval
from theory.certified.expressions import arb_function
from theory.certified.roots import certify_root

FAST = [claims.check_noise_threshold, claims.check_critical_noise, claims.check_growth_rates,
        claims.check_circle_three_clusters, claims.check_circle_polygons, claims.check_strict_saddles]


@pytest.mark.parametrize("check", FAST, ids=lambda f: f.__name__)
def test_default_certificates_are_issued(check):
    r = check()
    assert r.status == "certified", r.details.get("problems")
    assert "method" in r.details and r.details["precision_bits"] == 128
    for name, entry in r.details["certificates"].items():
        assert "refused" not in entry, name
        if "contains reference" in entry:
            assert entry["contains reference"], name


def test_switch_points_are_certified_in_order(monkeypatch):
    monkeypatch.setattr(claims, "DIMENSIONS", (2, 3))  # the full default claim runs in test_notes_numbers
    r = claims.check_switch_points()
    assert r.status == "certified", r.details.get("problems")
    # beta*(3) = beta_1(3): lambda_2/lambda_1 = 3 q(beta) on S^2, so the two certificates must overlap
    b1 = r.details["certificates"]["beta_1(d=3)"]["enclosure"]
    assert b1.startswith("[1.816154525435883962764")


def test_three_cluster_threshold_is_exactly_minus_two_thirds():
    r = claims.check_circle_three_clusters()
    entry = r.details["certificates"]["in-plane cluster mode p=1"]
    assert entry["exact value"] == "-2/3" and entry["contains reference"]


# -- planted errors: the certificate fails (misses the reference or is refused), it does not merely widen ----------
def test_wrong_bessel_order_fails(monkeypatch):
    monkeypatch.setattr(claims, "DIMENSIONS", (2, 5))  # two dimensions keep the test short
    def wrong(d):
        half = sp.Rational(d, 2)
        return sp.besseli(half + 2, statements.BETA) / sp.besseli(half, statements.BETA) - sp.Rational(1, d)
    monkeypatch.setattr(statements, "noise_threshold_expr", wrong)
    r = claims.check_noise_threshold()
    assert r.status == "failed"
    assert all("misses the reference" in p for p in r.details["problems"])
    widths = [e["width"] for e in r.details["certificates"].values()]
    assert all(float(w) < 1e-30 for w in widths)  # still tight: the error moved the root, it did not widen it


def test_wrong_sign_fails(monkeypatch):
    monkeypatch.setattr(claims, "DIMENSIONS", (2, 5))
    def wrong(d):
        half = sp.Rational(d, 2)
        return sp.besseli(half + 1, statements.BETA) / sp.besseli(half, statements.BETA) + sp.Rational(1, d)
    monkeypatch.setattr(statements, "noise_threshold_expr", wrong)
    r = claims.check_noise_threshold()
    assert r.status == "failed" and all("certificate refused" in p for p in r.details["problems"])


def test_wrong_sign_of_a_hessian_branch_fails(monkeypatch):
    from theory import structured

    original = structured.circle_cluster_spectrum

    def flipped(k, m, d, kernel=None):
        return [structured.SpectralBranch(b.label, -b.value, b.multiplicity, b.rotation)
                for b in original(k, m, d, kernel)]
    monkeypatch.setattr(structured, "circle_cluster_spectrum", flipped)
    r = claims.check_circle_three_clusters()
    assert r.status == "failed"
    assert any("not 'nonpositive'" in p for p in r.details["problems"])


def test_wrong_d_fails(monkeypatch):
    monkeypatch.setattr(claims, "DIMENSIONS", (2, 5))
    original = statements.growth_rate_expr
    statements._compiled_rate.cache_clear()
    monkeypatch.setattr(statements, "growth_rate_expr", lambda model, d, l: original(model, d + 1, l))
    try:
        r = claims.check_growth_rates()
    finally:
        statements._compiled_rate.cache_clear()
    assert r.status == "failed" and any("misses the reference" in p for p in r.details["problems"])


# -- floating-point shortcuts are refused ------------------------------------------------------------------------
def test_a_bound_evaluated_in_float64_is_refused():
    """A derivative bound computed in float64 (scipy) passed to the root certificate: refused, not used."""
    x = sp.Symbol("x")
    f = arb_function(sp.besseli(1, x) / sp.besseli(0, x) - sp.Rational(1, 2), (x,))

    def float_derivative(ball):
        mid = float(ball.mid())
        return np.float64(0.5 * (sps.iv(0, mid) + sps.iv(2, mid)) / sps.iv(0, mid))
    with pytest.raises(FloatingPointRefused):
        certify_root(f, float_derivative, Interval.of(1, 2))
    with pytest.raises(FloatingPointRefused):
        Interval.of(0.5, 2)


def test_a_float64_shortcut_in_a_claim_refuses_the_certificate(monkeypatch):
    """lambda_l evaluated in float64 on the way (scipy.special.iv) instead of in Arb: the claim is not certified."""
    monkeypatch.setattr(claims, "DIMENSIONS", (2, 5))
    statements._compiled_rate.cache_clear()

    def float_rate(model, d, l):
        return lambda ball: np.float64(sps.iv(l + d / 2 - 1, float(ball.mid())))
    monkeypatch.setattr(statements, "_compiled_rate", float_rate)
    r = claims.check_growth_rates()
    assert r.status == "failed"
    assert all("FloatingPointRefused" in p for p in r.details["problems"])


@pytest.mark.slow
@pytest.mark.parametrize("check", [claims.check_switch_points_full, claims.check_circle_polygons_full],
                         ids=lambda f: f.__name__)
def test_slow_certificates_are_issued(check):
    """l = 1..8 switch points in order (d = 2..8); polygons n = 3..8 on (0, 20] (7-60 s each, by machine load)."""
    r = check()
    assert r.status == "certified", r.details.get("problems")
