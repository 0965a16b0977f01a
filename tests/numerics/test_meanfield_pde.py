"""numerics.meanfield.pde: the S^1 continuity-equation solver (stationarity, linearisation, conservation, rates)."""
import math

import numpy as np
import pytest
from scipy import special

from numerics.common.errors import InputError
from numerics.meanfield.growth import pde_growth_rates, predicted_rates
from numerics.meanfield.pde import CircleContinuityOperator, solve_continuity_circle

GRID = 128


def _theta(m=GRID):
    return 2 * np.pi * np.arange(m) / m


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_uniform_density_is_stationary(model):
    op = CircleContinuityOperator(3.0, model, GRID)
    rhs = op(0.0, np.full(GRID, 1 / (2 * np.pi)))
    assert np.max(np.abs(rhs)) < 1e-14


@pytest.mark.parametrize("model", ["sa", "usa"])
@pytest.mark.parametrize("beta", [-2.0, 0.0, 1.5, 7.0])
def test_discrete_linearisation_matches_lambda_k(model, beta):
    """(rhs(rho_0 + eps cos k th)) / eps -> lambda_k cos(k th) as eps -> 0 (remainder O(eps))."""
    op = CircleContinuityOperator(beta, model, GRID)
    th = _theta()
    eps = 1e-7
    for k in (1, 2, 3, 5):
        rhs = op(0.0, 1 / (2 * np.pi) + eps * np.cos(k * th)) / eps
        lam = predicted_rates(model, 2, beta, [k])[0]
        # O(eps) nonlinear remainder relative to the mode: 1e-5 is loose for eps = 1e-7, tight against a wrong k^2
        assert np.max(np.abs(rhs - lam * np.cos(k * th))) <= 1e-5 * max(1.0, abs(lam))


def test_convolution_multipliers_against_trapezoid_quadrature():
    """Generated I_k(beta) e^{-|beta|} vs the trapezoid rule of (1/2pi) int e^{beta(cos u - 1)} cos(ku) du
    (spectrally accurate for periodic analytic integrands): an independent route to the Fourier multiplier."""
    beta = 6.0
    op = CircleContinuityOperator(beta, "sa", GRID)
    u = _theta(256)
    for k in range(0, 10):
        quad = np.mean(np.exp(beta * (np.cos(u) - 1)) * np.cos(k * u))
        assert op.partition_multiplier[k] / (2 * np.pi) == pytest.approx(quad, rel=1e-12, abs=1e-16)
        assert quad == pytest.approx(special.ive(k, beta), rel=1e-12, abs=1e-16)


def test_mass_is_conserved_and_positivity_monitored():
    h = solve_continuity_circle(5.0, "sa", grid=GRID, t_end=30.0, amplitude=1e-4, seed=3, perturbation_modes=8)
    assert h.max_mass_drift < 1e-12
    assert h.stopped in ("unresolved", "t_end")
    assert h.min_density.shape == h.times.shape
    assert h.meta["dealiasing"] == "2/3 rule"


@pytest.mark.parametrize("model,beta", [("sa", 5.0), ("usa", 2.0)])
def test_pde_rates_match_theory(model, beta):
    scale = 1.0 if model == "sa" else math.exp(beta)
    h = solve_continuity_circle(beta, model, grid=GRID, t_end=30.0 / scale, amplitude=1e-6, seed=0,
                                perturbation_modes=8)
    g = pde_growth_rates(h, threshold=1e-2)
    top = max(g.predicted)
    lead = [i for i, p in enumerate(g.predicted) if p >= 0.5 * top]
    assert max(g.relative_errors()[i] for i in lead) < 0.01
    assert g.dominant_mode == int(np.argmax(g.predicted)) + 1


def test_seed_reproducible_and_different():
    a = solve_continuity_circle(2.0, "sa", grid=64, t_end=1.0, amplitude=1e-3, seed=1, saves=3)
    b = solve_continuity_circle(2.0, "sa", grid=64, t_end=1.0, amplitude=1e-3, seed=1, saves=3)
    c = solve_continuity_circle(2.0, "sa", grid=64, t_end=1.0, amplitude=1e-3, seed=2, saves=3)
    assert np.array_equal(a.density, b.density) and not np.allclose(a.density, c.density)


def test_bad_inputs():
    with pytest.raises(InputError, match="even"):
        solve_continuity_circle(1.0, "sa", grid=63, t_end=1.0)
    with pytest.raises(InputError, match="positive density"):
        solve_continuity_circle(1.0, "sa", grid=64, t_end=1.0, amplitude=0.2, perturbation_modes=10)
    with pytest.raises(InputError):
        solve_continuity_circle(1.0, "xx", grid=64, t_end=1.0)
    with pytest.raises(InputError):
        solve_continuity_circle(1.0, "sa", grid=64, t_end=-1.0)
    with pytest.raises(InputError, match="overflows"):
        solve_continuity_circle(800.0, "usa", grid=64, t_end=1.0)
