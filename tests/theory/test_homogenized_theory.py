"""theory.homogenized: the derived identities proved, checked by an independent NumPy route, and seen to fail on
planted errors."""
import math

import numpy as np
import pytest
import sympy as sp

from theory import homogenized as H


@pytest.mark.parametrize("d", [2, 3])
def test_value_moments_proved(d):
    assert H.value_moments_derivation(d).verify().status == "proved"


@pytest.mark.parametrize("d", [3, 4])
def test_two_point_drift_proved(d):
    assert H.two_point_drift_derivation(d).verify().status == "proved"


def test_planted_drift_fails():
    """(d - 1 + rho^2) instead of (d - 2 + rho^2) leaves a nonzero residual."""
    deriv = H.two_point_drift_derivation(3)
    s = sp.Symbol("s_xy", real=True)
    wrong = type(deriv)(title="planted", source="", lhs=deriv.lhs + s, rhs=deriv.rhs)
    assert not wrong.verify().ok
    moments = H.value_moments_derivation(2)
    assert not type(moments)(title="planted", source="", lhs=moments.lhs, rhs=2 * moments.rhs).verify().ok


def test_two_point_drift_by_sampling():
    """An independent route: projected steps with correlated Gaussian kicks, each paired with its negative."""
    rng = np.random.default_rng(0)
    d, h, m = 5, 1e-3, 400000
    x = np.eye(d)[0]
    y = np.cos(0.7) * x + np.sin(0.7) * np.eye(d)[1]
    sxx, syy, sxy = 1.0, 0.6, 0.5
    L = np.linalg.cholesky(np.array([[sxx, sxy], [sxy, syy]]))
    Z = rng.standard_normal((m, 2, d))
    D, G = (math.sqrt(h) * np.einsum("ab,mbd->mad", L, Z)).transpose(1, 0, 2)
    drift = 0.0
    for sign in (1, -1):
        xp = x + sign * D
        yp = y + sign * G
        drift = drift + ((xp * yp).sum(1) / np.linalg.norm(xp, axis=1) / np.linalg.norm(yp, axis=1)).mean() / 2
    measured = (drift - x @ y) / h
    derived = H.two_point_drift(d, x @ y, sxx, syy, sxy)
    assert abs(measured - derived) < 0.02 * abs(derived) + 0.01


def test_limits_and_thresholds():
    assert H.homogenized_time(100, 0.1, 4) == pytest.approx(0.25)
    # a common translation (all covariances equal) pushes rho up: (1 - rho)(d - 2 - rho) s
    assert H.two_point_drift(5, 0.3, 1, 1, 1) == pytest.approx((1 - 0.3) * (5 - 2 - 0.3))
    b = H.large_n_threshold(16, sp.Rational(1, 2))
    assert float(H.large_n_collapse_ratio(16, b)) == pytest.approx(0.5)
    assert H.collapse_ratio(16, 1, 1) == pytest.approx(14 / 15)
