"""Lost in the middle at birth (numerics.longcontext.at_birth, claim longcontext.at-birth): the Cesaro powers exactly
and in their continuous limit, and the claim failing on planted errors."""
import math
from fractions import Fraction

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.longcontext import at_birth as ab
from numerics.longcontext.claims_at_birth import check_at_birth


def test_the_two_exact_routes_and_the_matrix_power_agree():
    for H in range(5):
        exact = ab.last_row_h(12, H)
        assert exact == ab.last_row_power(12, H) and sum(exact) == 1
        assert np.allclose(np.array(exact, dtype=float), np.linalg.matrix_power(ab.cesaro_matrix(12), H)[-1],
                           rtol=0, atol=1e-15)
    # by hand: n = 3, H = 2: last row of M^2 = (1/3)(1 + 1/2 + 1/3, 1/2 + 1/3, 1/3)
    assert ab.last_row_h(3, 2) == [Fraction(11, 18), Fraction(5, 18), Fraction(1, 9)]


def test_residual_rows_and_limits():
    a = Fraction(2, 5)
    assert ab.residual_row(9, 3, a) == ab.residual_row_direct(9, 3, a)
    assert ab.residual_row(9, 3, 1) == ab.last_row_h(9, 3) and ab.residual_row(9, 3, 0)[-1] == 1
    y = np.array([0.2, 0.5, 0.9])
    assert np.allclose(ab.residual_density(y, 3, 1.0), ab.density(y, 3), rtol=1e-15, atol=0)
    assert ab.density(1.0, 1) == 1.0 and ab.density(1 / math.e, 4) == pytest.approx(1 / 6, rel=1e-15)


def test_bad_input():
    with pytest.raises(InputError, match="alpha"):
        ab.residual_row(5, 2, 1.5)
    with pytest.raises(InputError, match="n"):
        ab.last_row_h(0, 2)


def test_the_claim_passes():
    r = check_at_birth()
    assert r.status == "passed", r.measured


@pytest.mark.parametrize("plant", ["factorial", "recursion"])
def test_the_claim_fails_on_planted_errors(monkeypatch, plant):
    if plant == "factorial":
        monkeypatch.setattr(ab, "density", lambda y, H: np.log(1.0 / np.asarray(y, float)) ** (H - 1) / math.factorial(H))
    else:
        orig = ab.last_row_h

        def shifted(n, H, exact=True):  # one degree too many in the recursion
            return orig(n, H + 1 if H >= 2 else H, exact)

        monkeypatch.setattr(ab, "last_row_h", shifted)
    assert check_at_birth().status == "failed"
