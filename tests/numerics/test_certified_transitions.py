"""Certificates of the long-context transition and the noisy first-order transition (numerics.certified
.claims_transitions and .claims_noise, theory.certified.longcontext / first_order / landau): issued on small cases, each containing
the independent mpmath value; planted errors (a wrong sign, a wrong Bessel order, a float shortcut, a bound too
tight) make them FAIL or refuse them. The full claims run in ``attnflow verify`` and in the slow tests."""
from __future__ import annotations

import mpmath as mp
import pytest
import sympy as sp
from flint import fmpq

import numerics.certified.claims_noise as cn
import numerics.certified.claims_transitions as ct
import theory.certified.first_order as fo
import theory.certified.landau as landau
import theory.certified.longcontext as lc
from theory.certified.balls import CertificateRefused, FloatingPointRefused, Interval


# -- long contexts ---------------------------------------------------------------------------------------------
def test_critical_gamma_is_exact_with_signs_either_side():
    c = lc.critical_gamma("9/10")
    assert c.gamma_c == fmpq(10) and c.slope == fmpq(-1, 10)
    assert c.below[1] > 0 > c.above[1]


def test_crossing_contains_the_closed_form_and_the_width_is_two_log_nine():
    n, rho = 10 ** 4, "1/2"
    roots = {p: lc.crossing_gamma(n, rho, p) for p in ("1/10", "1/2", "9/10")}
    with mp.workdps(60):
        for p, cert in roots.items():
            x = ct._crossing_reference(n, fmpq(1, 2), lc.exact(p))
            assert ct.as_mpf(cert.enclosure.lo) <= x <= ct.as_mpf(cert.enclosure.hi)
            assert cert.enclosure.width < fmpq(1, 10 ** 30)
        lo, hi = roots["1/10"].enclosure, roots["9/10"].enclosure
        width = 2 * mp.log(9) / (mp.mpf(1) / 2 * mp.log(n))
        assert ct.as_mpf(hi.lo - lo.hi) <= width <= ct.as_mpf(hi.hi - lo.lo)


def test_critical_limit_bound_holds_and_limit_is_four_rho_over_one_plus_three_rho():
    c = lc.critical_limit("1/2", ns=(100, 10 ** 6))
    assert c.limit == fmpq(4, 5)
    assert all(abs(v - c.limit) * n <= c.bound for n, v in c.values.items())
    with_residual = lc.critical_limit("1/2", "1/2", ns=(100,))
    assert with_residual.limit == fmpq(9, 13)          # (3/2)^2 (1/2) / ((3/2)^2 (1/2) + 1 (1/2))


def test_planted_wrong_exponent_sign_refuses(monkeypatch):
    import theory.longcontext as theory_lc
    monkeypatch.setattr(theory_lc, "off_diagonal_mass_exponent", lambda: 1 + theory_lc.gamma * (1 - theory_lc.rho))
    with pytest.raises(CertificateRefused):
        lc.critical_gamma("1/2")


def test_planted_bound_too_tight_refuses(monkeypatch):
    monkeypatch.setattr(lc, "fmpq", lambda a, b=1: fmpq(9, 10) if (a, b) == (11, 10) else fmpq(a, b))
    with pytest.raises(CertificateRefused, match="cannot prove|fails at"):
        lc.critical_limit("1/2", ns=(100,))


def test_a_float_target_or_rho_is_refused():
    with pytest.raises(FloatingPointRefused):
        lc.crossing_gamma(1000, "1/2", 0.5)
    with pytest.raises(FloatingPointRefused):
        lc.critical_gamma(0.5)


def test_wrong_self_weight_misses_the_reference(monkeypatch):
    """A wrong sign in the self weight's exponent (p_n with n^{+gamma(1-rho)}): the claim FAILS."""
    import theory.longcontext as theory_lc
    monkeypatch.setattr(theory_lc, "self_weight", lambda n, beta, rho_: sp.exp(beta) / (
        sp.exp(beta) + (n - 1) * sp.exp(-beta * rho_ + 2 * beta)))
    lc._self_weight_function.cache_clear()
    monkeypatch.setattr(ct, "RHOS", ("1/2",))
    monkeypatch.setattr(ct, "TOKENS", (100,))
    r = ct.check_longcontext_critical_gamma()
    lc._self_weight_function.cache_clear()
    assert r.status == "failed"
    assert any("misses the reference" in p or "refused" in p for p in r.details["problems"])


# -- the noisy first-order transition ----------------------------------------------------------------------------
SMALL = {**cn.FIRST_ORDER_CASE, "L": 6, "infinite": False}


def _small_first_order():
    ledger = ct.Ledger("test")
    got = cn._first_order(ledger, SMALL)
    return ledger, got


def test_truncated_first_order_is_certified_and_contains_mpmath():
    ledger, got = _small_first_order()
    assert not ledger.problems, ledger.problems
    entry = ledger.items["D_1st(L=6)"]
    assert entry["contains reference"] and float(entry["width"]) < 1e-33      # 128 bits: ~1e-36
    D1 = got["cert"].enclosure[-1]
    assert fmpq(81, 100) < D1.lo < D1.hi < fmpq(41, 50)     # between D_c = 0.7476 and 41/50 (L = 6 model)


def test_planted_wrong_bessel_order_in_the_couplings_fails(monkeypatch):
    from theory.certified.statements import growth_rate_expr
    from theory.noise import laplacian_eigenvalue

    fo._coupling_expr.cache_clear()
    monkeypatch.setattr(fo, "_coupling_expr", lambda d, l: fo.arb_function(
        growth_rate_expr("usa", d, l + 1) / laplacian_eigenvalue(l, d), (sp.Symbol("beta", real=True),)))
    ledger, _ = _small_first_order()
    assert any("misses the reference" in p or "refused" in p for p in ledger.problems), ledger.items


def test_planted_wrong_free_energy_sign_fails(monkeypatch):
    """Delta F with the interaction's sign flipped, -(1/2) sum w_l m_l^2 - D log Z: the certificate FAILS."""
    original = fo._equations

    def wrong(model, m, D, with_D, jacobian):
        F, J = original(model, m, D, with_D, jacobian)
        if with_D:
            F[-1] = F[-1] - sum((w * x * x for w, x in zip(model.weights, m)), fo.arb(0))
        return F, J
    monkeypatch.setattr(fo, "_equations", wrong)
    ledger, _ = _small_first_order()
    assert ledger.problems and ("misses the reference" in ledger.problems[0] or "refused" in ledger.problems[0])


def test_a_float_beta_refuses_the_first_order_certificate():
    with pytest.raises(FloatingPointRefused):
        fo.truncated_model(3, 3.0, 4)
    ledger = ct.Ledger("test")
    cn._first_order(ledger, {**SMALL, "beta": 3.0})
    assert ledger.problems and "FloatingPointRefused" in ledger.problems[0]


def test_even_dimension_is_refused_not_approximated():
    with pytest.raises(ValueError, match="odd d"):
        fo.truncated_model(2, "3", 4)


# -- the Landau quartic coefficient -----------------------------------------------------------------------------
def test_quartic_changes_sign_at_beta_star():
    signs = landau.quartic_sign_map(3, "1", "3")
    assert [s for _, s, _ in signs.runs] == [1, -1]
    with mp.workdps(60):
        ref = cn.reference_noise_threshold(3)
        assert ct.as_mpf(signs.zero.enclosure.lo) <= ref <= ct.as_mpf(signs.zero.enclosure.hi)


def test_planted_wrong_bessel_order_moves_the_quartic_zero(monkeypatch):
    from theory.certified.statements import growth_rate_expr
    monkeypatch.setattr(landau, "growth_rate_expr", lambda model, d, j: growth_rate_expr(model, d, j + 1))
    landau._compiled.cache_clear()
    try:
        signs = landau.quartic_sign_map(3, "1/2", "6")
        with mp.workdps(60):
            ref = cn.reference_noise_threshold(3)
            assert not ct.as_mpf(signs.zero.enclosure.lo) <= ref <= ct.as_mpf(signs.zero.enclosure.hi)
    except CertificateRefused:
        pass
    finally:
        landau._compiled.cache_clear()


def test_sign_outside_the_zero_is_checked():
    f = landau._compiled(3)
    with pytest.raises(CertificateRefused):
        landau._sign_on(f, Interval.of("1", "3"), 200)     # contains beta*(3): no constant sign


# -- the full claims (each also runs in `attnflow verify`) ---------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("check", [ct.check_longcontext_critical_gamma, ct.check_longcontext_critical_limit,
                                   ct.check_longcontext_poisson_constant, cn.check_noise_first_order,
                                   cn.check_landau_quartic, cn.check_landau_quartic_full,
                                   cn.check_noise_first_order_truncation, cn.check_noise_fold],
                         ids=lambda f: f.__name__)
def test_transition_certificates_are_issued(check):
    r = check()
    assert r.status == "certified", r.details.get("problems")
    for name, entry in r.details["certificates"].items():
        assert "refused" not in entry, name
        if "contains reference" in entry:
            assert entry["contains reference"], name


def test_a_wrong_poisson_closed_form_is_refused(monkeypatch):
    original = lc.poisson_constant_closed
    monkeypatch.setattr(lc, "poisson_constant_closed", lambda d: original(d) * sp.sqrt(2))   # a 2^{d/2} slip
    with pytest.raises(CertificateRefused, match="differs from the closed form"):
        lc.poisson_constant(3)


@pytest.mark.slow
def test_fold_contains_the_continuation_fold():
    """The certified D_fold (infinite system, L = 20 + tail) against numerics.noise's float arclength
    continuation (L = 32, fold refined by Brent): inside the enclosure up to the continuation's stated accuracy."""
    from numerics.noise.transitions import mode_transition

    r = cn.check_noise_fold()
    assert r.status == "certified", r.details.get("problems")
    tr = mode_transition(3, 3.0, 1)
    mid, width = float(r.details["numbers"]["D_fold:mid"]), float(r.details["numbers"]["D_fold:width"])
    assert abs(tr.fold.value - mid) <= width + tr.fold.accuracy, (tr.fold.value, tr.fold.accuracy, mid, width)
