"""numerics.longcontext.fixed_query and gaps: samplers, the Poisson quadrature, routes, scales, limits."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import exp1

from numerics.common.errors import InputError
from numerics.longcontext import fixed_query as fq
from numerics.longcontext import gaps


@pytest.mark.parametrize("d", [2, 3, 4, 7])
def test_distances_have_the_law_of_uniform_keys(rng, d):
    """The Beta shortcut against keys drawn on the sphere: a two-sample Kolmogorov-Smirnov test."""
    u = fq.direct_distances(20000, d, rng)
    K = rng.standard_normal((20000, d))
    t = K[:, 0] / np.linalg.norm(K, axis=1)
    assert stats.ks_2samp(u, 1 - t).pvalue > 1e-4
    assert stats.kstest(u, lambda x: fq.distance_cdf(d, x)).pvalue > 1e-4


@pytest.mark.parametrize("d", [2, 3, 5])
def test_quantile_inverts_the_cdf_down_to_tiny_probabilities(d):
    y = np.array([1e-300, 1e-100, 1e-12, 0.3, 0.9])
    assert np.allclose(fq.distance_cdf(d, fq.distance_quantile(d, y)), y, rtol=1e-10)
    x = np.array([1e-8, 0.5, 1.9])
    density = [(fq.distance_cdf(d, v * (1 + 1e-6)) - fq.distance_cdf(d, v * (1 - 1e-6))) / (2e-6 * v) for v in x]
    assert np.allclose(fq.distance_density(d, x), density, rtol=1e-6)


def test_poisson_quadrature_reduces_to_the_one_dimensional_formula_on_s2():
    for c, tol in ((0.1, 1e-8), (0.4, 1e-12), (2.0, 1e-12)):  # far below the critical c the nodes tire
        ref = integrate.quad(lambda lam: math.exp(-lam - 0.5 * (np.euler_gamma + math.log(lam) + exp1(lam)) / c)
                             if lam > 0 else 1.0, 0, np.inf, limit=200)[0]
        assert fq.poisson_top_weight(3, c) == pytest.approx(ref, abs=tol)


@pytest.mark.parametrize("d", [2, 4, 9])
def test_poisson_quadrature_converges_in_its_nodes(d):
    c = fq.poisson_half_constant_quadrature(d)
    assert fq.poisson_top_weight(d, c) == pytest.approx(0.5, abs=1e-11)
    assert fq.poisson_top_weight(d, c, nodes=(96, 90, 144)) == pytest.approx(0.5, abs=1e-11)


def test_planted_wrong_poisson_constant_is_caught_by_the_monte_carlo(monkeypatch):
    """kappa doubled: the quadrature constant moves far outside the simulated process's error bars."""
    mc = fq.poisson_half_constant(3, 2000, seed=1)
    right = fq.poisson_half_constant_quadrature(3)
    assert abs(mc["constant"] - right) < 4 * mc["standard_error"]
    monkeypatch.setattr(fq, "poisson_constant", lambda d: 2 * 0.5)
    fq.poisson_half_constant_quadrature.cache_clear()
    try:
        wrong = fq.poisson_half_constant_quadrature(3)
    finally:
        fq.poisson_half_constant_quadrature.cache_clear()
    assert abs(mc["constant"] - wrong) > 10 * mc["standard_error"]


def test_order_statistics_route_matches_the_direct_route():
    """At n = 3000 both routes estimate the same E W_1 (independent samples; 4 standard errors)."""
    n, d = 3000, 5
    beta = fq.poisson_half_constant_quadrature(d) * n ** fq.critical_exponent(d)
    top = fq.TopKeys(n, d, 3000, np.random.default_rng(5))
    W = top.top_weight(beta)
    direct = fq.direct_top_weight(n, d, beta, 600, seed=6)
    se = math.hypot(W.std(ddof=1) / math.sqrt(W.size), direct["top_weight_se"])
    assert abs(W.mean() - direct["top_weight"]) < 4 * se


def test_the_tail_of_the_order_route_is_its_conditional_mean():
    """K = 16 kept keys plus the Laguerre tail against K = 512 kept keys, same spacings: E W_1 agrees."""
    n, d, beta = 10**5, 3, 5e3
    a = fq.TopKeys(n, d, 2000, np.random.default_rng(3), K=16).top_weight(beta).mean()
    b = fq.TopKeys(n, d, 2000, np.random.default_rng(3), K=512).top_weight(beta).mean()
    assert a == pytest.approx(b, abs=0.02)


def test_subcritical_output_is_the_bessel_ratio():
    res = fq.subcritical_output(20000, 3, 4.0, replicates=60, seed=2)
    assert res["limit"] == pytest.approx(1 / math.tanh(4.0) - 1 / 4.0, rel=1e-13)  # I_{3/2}/I_{1/2}
    assert abs(res["z"]) < 4
    assert res["measured_sd"] / res["predicted_sd"] == pytest.approx(1.0, abs=0.35)


def test_fixed_query_refuses_bad_routes_and_sizes():
    with pytest.raises(InputError):
        fq.finite_n_half_constant(100, 3, 100, route="other")
    with pytest.raises(InputError, match="n > K"):
        fq.TopKeys(10, 3, 5, np.random.default_rng(0))


# -- gap counting ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", gaps.FAMILIES)
def test_accumulation_scale_two_routes(name):
    fam = gaps.ScoreFamily(name, rho=0.3, d=4)
    for n in (50, 10**5):
        assert fam.accumulation_scale(n) == pytest.approx(fam.accumulation_scale_numeric(n), rel=1e-5)


def test_planted_wrong_hazard_is_caught_by_the_numeric_sup(monkeypatch):
    fam = gaps.ScoreFamily("gaussian")
    monkeypatch.setattr(gaps.ScoreFamily, "accumulation_scale", lambda self, n: float(n * gaps.norm.pdf(
        self.typical_max(n))) / 2)
    assert abs(fam.accumulation_scale(1000) / fam.accumulation_scale_numeric(1000) - 1) > 0.1


def test_gumbel_constant_is_the_poisson_dirichlet_median_of_the_top_weight(rng):
    """E V_1 of PD(1/c) by simulation: weights e^{c xi} of a Poisson process with intensity e^{-x} on R, i.e.
    Gamma_k^{-c} with Gamma_k the arrival times of a unit Poisson process (the top K points kept, the rest by
    its mean, int_K^oo x^{-c} dx = K^{1-c}/(c-1)), at c = c_G: the mean top weight is 1/2."""
    c = gaps.gumbel_half_constant()
    K = 4000
    G = np.cumsum(rng.exponential(size=(1000, K)), axis=1)
    w = G ** (-c)
    V1 = w[:, 0] / (w.sum(axis=1) + K ** (1 - c) / (c - 1))
    assert abs(V1.mean() - 0.5) < 4 * V1.std(ddof=1) / math.sqrt(V1.size)
    assert gaps.gumbel_top_weight(1.0) == 0.0


def test_simplex_family_ratio_is_exact():
    r = gaps.measure_family(gaps.ScoreFamily("simplex", rho=0.2), 500, 10)
    assert r["ratio"] == pytest.approx(math.log(499) / math.log(500), rel=1e-14)


def test_families_refuse_unknown_names():
    with pytest.raises(InputError):
        gaps.ScoreFamily("cauchy")
