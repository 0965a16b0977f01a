"""Energy staircase: plateau detection and heights sum_c (m_c/n)^2."""
import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core.field import interaction_energy
from numerics.clusters.reduced import expand_reduced
from numerics.clusters.staircase import detect_plateaus, energy_staircase, normalized_energies, plateau_deviation


def test_detect_plateaus_on_a_synthetic_staircase():
    t = np.concatenate([[0.0], np.geomspace(0.1, 1e4, 101)])
    E = np.where(t < 10, 0.25, np.where(t < 1000, 0.5, 1.0)) + 1e-5 * np.sin(t)
    runs = detect_plateaus(t, E, tol=1e-3, min_ratio=3.0)
    assert [(t[i], t[j]) for i, j in runs] == [(0.1, t[t < 10][-1]), (t[t >= 10][0], t[t < 1000][-1]),
                                               (t[t >= 1000][0], 1e4)]


def test_short_runs_are_not_plateaus():
    t = np.array([1.0, 1.1, 1.2, 5.0])
    assert detect_plateaus(t, np.array([0.1, 0.1, 0.9, 0.95]), min_ratio=3.0) == []


def test_heights_of_coincident_groups():
    angles = [0.0, 2.0, 4.0]
    Y = np.column_stack([np.cos(angles), np.sin(angles)])
    X = expand_reduced(Y, [1, 2, 3])
    frames = np.array([X] * 5)
    t = np.array([0.0, 1.0, 2.0, 5.0, 10.0])
    beta = 30.0
    (p,) = energy_staircase(t, frames, beta, 1e-3)
    assert p.predicted == pytest.approx((1 + 4 + 9) / 36)
    assert p.height == pytest.approx(interaction_energy(X, beta, normalization="gkpr"))
    assert p.height == pytest.approx(p.reduced_energy, rel=1e-12)
    # cross terms e^{-30 (1 - cos 2)} ~ 1e-18: the height is sum (m/n)^2
    assert plateau_deviation([p]) < 1e-12
    assert normalized_energies(frames, beta).shape == (5,)


def test_bad_input():
    with pytest.raises(InputError, match="differ"):
        detect_plateaus([1.0, 2.0], [1.0])
    with pytest.raises(InputError, match="beta"):
        energy_staircase([0.0], np.zeros((1, 1, 2)) + [1.0, 0.0], -1.0, 1e-3)
