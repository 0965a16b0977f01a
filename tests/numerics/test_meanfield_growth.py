"""numerics.meanfield.growth: log-amplitude fits, power spectra, particle growth rates."""
import numpy as np
import pytest
from scipy import special

from numerics.common.errors import InputError
from numerics.meanfield.growth import (circle_order_parameters, degree_power_spectrum, fit_log_growth, linear_window,
                             particle_growth_rates_circle, zonal_profile_sums)
from numerics.core.trajectory import uniform_sphere


def test_fit_recovers_exact_exponentials_and_window():
    t = np.linspace(0, 10, 101)
    rates = np.array([0.3, 0.7, -0.2])
    amps = 1e-4 * np.exp(np.outer(t, rates))
    window = linear_window(t, amps.max(axis=1), 1e-2)
    assert t[window[1] - 1] <= np.log(100) / 0.7 < t[window[1]]
    fits = fit_log_growth(t, amps, [1, 2, 3], window)
    assert [f.rate for f in fits] == pytest.approx(list(rates), abs=1e-12)
    fits2 = fit_log_growth(t, amps**2, [1, 2, 3], window, power=2.0)
    assert [f.rate for f in fits2] == pytest.approx(list(rates), abs=1e-12)


def test_window_too_short_is_an_input_error():
    t = np.linspace(0, 1, 10)
    with pytest.raises(InputError, match="too short"):
        linear_window(t, np.ones(10), 0.5)


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_zonal_recurrence_matches_scipy(d, rng):
    G = rng.uniform(-1, 1, (6, 9))
    lam = (d - 2) / 2
    for l, got in enumerate(zonal_profile_sums(G, d, 7), start=1):
        ref = special.eval_chebyt(l, G) if d == 2 else special.eval_gegenbauer(l, lam, G) / special.eval_gegenbauer(l, lam, 1.0)
        assert got == pytest.approx(ref.sum(), rel=1e-12, abs=1e-12)


def test_power_spectrum_on_circle_is_squared_order_parameter():
    X = uniform_sphere(300, 2, 4)
    theta = np.arctan2(X[:, 1], X[:, 0])
    assert degree_power_spectrum(X, 6) == pytest.approx(circle_order_parameters(theta, 6) ** 2, rel=1e-10)


def test_power_spectrum_of_uniform_points_is_about_one_over_n():
    n = 2000
    P = degree_power_spectrum(uniform_sphere(n, 3, 0), 6)
    assert np.all(P > 0)
    assert np.mean(P * n) == pytest.approx(1.0, abs=0.35)  # E[n P_l] = 1, chi-square spread over 6 degrees


def test_particle_rate_of_the_fastest_mode_on_circle():
    g = particle_growth_rates_circle(5.0, "sa", 10_000, seed=0, modes=6, threshold=0.1, tol=1e-8, saves=30)
    i = int(np.argmax(g.predicted))
    assert g.relative_errors()[i] < 0.05
    assert g.window[0] > 0 and g.window[1] > g.window[0]


def test_rates_quadrature_claim_sees_an_error_that_vanishes_at_d2(monkeypatch):
    """meanfield.rates-quadrature passes; with the Laplacian eigenvalue l(l+d-2) replaced by l(l+2d-4) (equal
    at d = 2, so the S^1 PDE and particle claims cannot see it) in the rates it fails."""
    import numerics.meanfield.growth as growth
    import theory.meanfield as tm
    from numerics.meanfield.claims import check_rates_quadrature

    assert check_rates_quadrature().status == "passed"
    right_pred, right_mp = growth.predicted_rates, tm.growth_rate

    def wrong_pred(model, d, beta, modes, time_unit="natural"):
        return [r * (m + 2 * d - 4) / (m + d - 2) for r, m in zip(right_pred(model, d, beta, modes, time_unit), modes)]

    monkeypatch.setattr(growth, "predicted_rates", wrong_pred)
    assert check_rates_quadrature().status == "failed"
    monkeypatch.setattr(growth, "predicted_rates", right_pred)
    monkeypatch.setattr(tm, "growth_rate", lambda model, d, l, beta, *a, **k: right_mp(model, d, l, beta, *a, **k)
                        * (l + 2 * d - 4) / (l + d - 2))
    assert check_rates_quadrature().status == "failed"
