"""theory.meanfield: derivations (stationarity, denominator, linearisation), Funk-Hecke, rates, l_max, switches."""
import math

import mpmath as mp
import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from theory import meanfield as mf
from theory import symbols as sym
from theory.derivation import Derivation


@pytest.mark.parametrize("model", ["usa", "sa"])
def test_circle_linearisation_is_proved(model):
    D = mf.circle_linearization_derivation(model)
    assert D.verify().status == "proved"
    # the stationarity step: -d/dth(rho v) vanishes at eps = 0
    assert sp.simplify(D.steps[-1].expr) == 0
    assert D.steps[0].expr == 0  # the particle kernel is the theta-derivative of W


@pytest.mark.parametrize("model", ["usa", "sa"])
@pytest.mark.parametrize("d", [2, 3, 4])
def test_sphere_linearisation_verifies(model, d):
    D = mf.linearization_derivation(model, d)
    assert D.verify(points=3).ok
    at_zero = [st_.expr for st_ in D.steps if "stationary" in st_.text][0]
    assert at_zero == 0


@pytest.mark.parametrize("d", [2, 3, 5])
def test_uniform_measure_is_stationary(d):
    assert mf.stationarity_derivation(d).verify().status == "proved"


def test_sa_denominator_drops_out():
    D = mf.denominator_derivation(3)
    assert D.verify().status == "proved"


def test_a_wrong_rate_is_caught():
    """The verification can fail: twice docs/conventions.md's S^1 rate is rejected."""
    good = mf.circle_linearization_derivation("usa")
    bad = Derivation("wrong", "test", good.lhs, 2 * good.rhs)
    assert bad.verify(simplify=True).status == "failed"


def test_rate_expression_matches_design_on_circle():
    k, b = sym.l, sym.beta
    assert sp.simplify(mf.growth_rate_expr("usa", 2) - k**2 * sp.besseli(k, b) / b) == 0
    assert sp.simplify(mf.growth_rate_expr("sa", 2) - k**2 * sp.besseli(k, b) / (b * sp.besseli(0, b))) == 0


@pytest.mark.parametrize("d", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("l", [0, 1, 4])
def test_funk_hecke_taylor_coefficients_agree_exactly(d, l):
    assert mf.funk_hecke_series_derivation(d, l, order=10).verify().status == "proved"


@pytest.mark.parametrize("d,l,beta", [(2, 3, 4.0), (3, 0, 0.7), (4, 5, 9.0), (5, 2, -3.0), (6, 1, 15.0), (3, 3, -2.5)])
def test_funk_hecke_quadrature_matches_closed_form(d, l, beta):
    with mp.workdps(25):
        q = mf.funk_hecke_quadrature(d, l, beta, dps=25)
        c = mf.funk_hecke_value(d, l, beta, dps=25)
        assert abs(q - c) <= mp.mpf("1e-15") * abs(c)  # quadrature reaches ~1e-20 here


@given(model=st.sampled_from(["sa", "usa"]), d=st.integers(2, 6), l=st.integers(1, 12),
       beta=st.floats(-30, 60).filter(lambda b: abs(b) > 1e-3), unit=st.sampled_from(["natural", "rescaled"]))
def test_generated_rates_match_mpmath(model, d, l, beta, unit):
    f = mf.growth_rate_function(model, d, unit)
    ref = float(mf.growth_rate(model, d, l, beta, unit, dps=30))
    got = float(f(float(l), beta))
    assert got == pytest.approx(ref, rel=1e-11, abs=1e-300)  # ive vs mpmath: rounding only


@pytest.mark.parametrize("d", [2, 3, 5])
def test_rate_limit_at_beta_zero(d):
    for model in ("sa", "usa"):
        assert float(mf.growth_rate(model, d, 1, 1e-9)) == pytest.approx((d - 1) / d, rel=1e-8)
        assert float(mf.growth_rate(model, d, 3, 1e-9)) == pytest.approx(0, abs=1e-8)
        assert float(mf.growth_rate(model, d, 1, 0.0)) == (d - 1) / d


@pytest.mark.parametrize("d", [2, 3, 4])
def test_switch_points_are_ties_and_bound_the_staircase(d):
    sw = mf.switch_points(d, 40.0)
    assert [a for _, a, _ in sw] == list(range(1, len(sw) + 1))
    for b, l, _ in sw:
        r = mf.growth_rates("sa", d, b, l + 1)
        assert r[l - 1] == pytest.approx(r[l], rel=1e-10)
        assert mf.dominant_degree("usa", d, b * (1 - 1e-3)).l_max == l
        assert mf.dominant_degree("sa", d, b * (1 + 1e-3)).l_max == l + 1
    rng = np.random.default_rng(0)
    for beta in rng.uniform(0.05, 40.0, 10):
        assert mf.dominant_degree("sa", d, beta).l_max == 1 + sum(b < beta for b, _, _ in sw)


def test_l_max_on_circle_grows_like_sqrt_two_beta():
    for beta in (50.0, 200.0):
        assert abs(mf.dominant_degree("sa", 2, beta).l_max - math.sqrt(2 * beta)) <= 1


def test_near_ties_and_runner_up_reported():
    dom = mf.dominant_degree("sa", 2, 10.0)       # switch 4 -> 5 at beta = 10.228
    assert (dom.l_max, dom.runner_up) == (4, 5)
    assert dom.near_tie and 1 < dom.ratio < 1.05
    assert mf.dominant_degree("sa", 2, 5.0).ratio == pytest.approx(0.6826783336 / 0.6000891395, rel=1e-8)


def test_negative_beta_favours_odd_degrees():
    rates = mf.growth_rates("usa", 3, -4.0, 6)
    assert all(r > 0 for r in rates[0::2]) and all(r < 0 for r in rates[1::2])


def test_bad_inputs():
    with pytest.raises(ValueError):
        mf.growth_rate_expr("xx", 2)
    with pytest.raises(ValueError):
        mf.funk_hecke_closed_form(1)
    with pytest.raises(ValueError):
        mf.growth_rates("sa", 2, 1.0, 0)


def test_switch_points_agree_with_a_numpy_argmax_scan():
    """Second code path: argmax over l of the generated NumPy rates on a fine beta grid changes exactly at the
    mpmath roots (to the grid spacing)."""
    f = mf.growth_rate_function("sa", 2)
    betas = np.linspace(0.05, 30.0, 6000)
    ls = np.arange(1, 30, dtype=float)
    lmax = ls[np.argmax(f(ls[:, None], betas[None, :]), axis=0)]
    jumps = betas[1:][np.diff(lmax) != 0]
    roots = [b for b, _, _ in mf.switch_points(2, 30.0)]
    assert len(jumps) == len(roots)
    assert np.max(np.abs(jumps - roots)) <= betas[1] - betas[0]


def test_standalone_rates_module_matches_compiled_functions(tmp_path):
    from theory.codegen import write_module
    import importlib.util

    path = write_module(tmp_path / "rates.py", mf.growth_rates_module_source((2, 4)))
    spec = importlib.util.spec_from_file_location("rates", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ls = np.arange(1, 9, dtype=float)
    for d in (2, 4):
        for model in ("sa", "usa"):
            assert np.allclose(getattr(mod, f"rate_{model}_d{d}")(ls, 3.5), mf.growth_rate_function(model, d)(ls, 3.5),
                               rtol=1e-14, atol=0)
