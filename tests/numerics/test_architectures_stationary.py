"""Stationary points of architecture models: the finite-difference Jacobian spectrum agrees with the critical-point
Jacobian of numerics.critical for one head (Q = K = V = I), and a planted wrong step sign is caught."""
from __future__ import annotations

import numpy as np
import pytest

from numerics.critical.stationary import field_jacobian, stationary_report
from numerics.common.errors import InputError
from numerics.core.blocks import MultiHead, Schedule
from numerics.core.model import Model
from numerics.critical.report import linearized_jacobian


def _polygon(n, d):
    th = 2 * np.pi * np.arange(n) / n
    X = np.zeros((n, d))
    X[:, 0], X[:, 1] = np.cos(th), np.sin(th)
    return X


@pytest.mark.parametrize("kind", ["sa", "usa"])
@pytest.mark.parametrize("d", [2, 3])
def test_spectrum_matches_critical_report(kind, d):
    X = _polygon(3, d)
    a = np.sort(np.linalg.eigvals(field_jacobian(Model(kind, 1.0), X)).real)
    b = np.sort(np.linalg.eigvals(linearized_jacobian(X, 1.0, kind)).real)
    assert np.abs(a - b).max() < 1e-8  # central differences, h = 1e-5: O(h^2) + round-off ~ 1e-10


def test_planted_error_is_detected():
    X = _polygon(3, 2)
    wrong = -field_jacobian(Model("usa", 1.0), X)  # planted sign error
    b = np.sort(np.linalg.eigvals(linearized_jacobian(X, 1.0, "usa")).real)
    assert np.abs(np.sort(np.linalg.eigvals(wrong).real) - b).max() > 0.1


def test_report_on_heads_and_rejects_schedules():
    X = _polygon(3, 3)
    rep = stationary_report(Model("sa", 1.0, heads=MultiHead.scaled_identity([1.0, -3.0], 3, [0.7, 0.3])), X,
                            symmetry_modes=3)
    assert rep["residual"] < 1e-14 and rep["verdict"] == "unstable"
    with pytest.raises(InputError, match="time-independent"):
        stationary_report(Model("sa", 1.0, schedule=Schedule.constant(MultiHead.from_single(d=3))), X)


def test_jacobian_reports_progress_per_column():
    """progress(columns done, n(d-1)) after each of the n(d-1) columns (the critical command's stderr progress)."""
    calls = []
    stationary_report(Model("sa", 1.0), _polygon(4, 3), progress=lambda done, total: calls.append((done, total)))
    assert calls == [(k, 8) for k in range(1, 9)]
