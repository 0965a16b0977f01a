"""numerics.noise.homogenized_phase: the two-token phase grid against the scale-function probability and the
derived boundary beta_c(d) = log(d/sigma^2) (usa)."""
import math

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.noise.homogenized_phase import boundary, phase_grid


def test_boundary_closed_forms():
    assert boundary(8, 2.0, "usa") == pytest.approx(math.log(2.0))
    assert boundary(8, 2.0, "sa") == pytest.approx(math.log(2 * 8 / 4 - 1) / 2)
    assert math.isnan(boundary(2, 2.0, "sa"))  # 2 d / sigma^2 - 1 = 0: the log diverges, no boundary


def test_grid_against_prediction_on_both_sides():
    """Cells at least 0.9 away from the boundary: below it never antipodal, above it the predicted fraction."""
    g = phase_grid([0.0, 2.5], [12], sigma=2.0, samples=150, seed=3)
    assert g["boundary"][0] == pytest.approx(math.log(3.0))
    assert g["predicted"][0, 0] == 0.0 and g["measured"][0, 0] <= 0.02
    p, m, se = g["predicted"][0, 1], g["measured"][0, 1], g["se"][0, 1]
    assert p > 0.3 and abs(m - p) < 4 * se + 0.03
    assert np.all(g["undecided"] < 0.05)


def test_bad_input():
    with pytest.raises(InputError):
        phase_grid([1.0], [3], model="nope")
