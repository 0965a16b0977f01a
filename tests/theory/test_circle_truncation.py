"""The truncation bound of the Fourier series (mpmath reference vs numerics.circle.fourier)."""
import mpmath as mp
import pytest

from numerics.circle.fourier import harmonics_for_tolerance
from theory.circle import amos_ratio_bound, harmonics_for_tolerance_mp, tail_bound_mp, truncation_error_bound_mp


@pytest.mark.parametrize("x", [1e-3, 0.5, 4.0, 50.0, 400.0])
def test_amos_ratio_bound(x):
    with mp.workdps(30):
        for kk in (0, 1, 3, 10, 40, 150):
            assert mp.besseli(kk + 1, x) / mp.besseli(kk, x) <= amos_ratio_bound(kk, x)


@pytest.mark.parametrize("b", [0.1, 1.0, 10.0, 60.0])
def test_tail_majorant_bounds_both_truncation_errors(b):
    with mp.workdps(20):
        for K in (2, harmonics_for_tolerance_mp(b, 1e-12)):
            sin_tail, cos_tail = truncation_error_bound_mp(K, b)
            major = tail_bound_mp(K, b)
            assert sin_tail <= major and cos_tail <= 2 * major


@pytest.mark.parametrize("b", [0.0, 0.1, 1.0, 10.0, 100.0, 1000.0, -7.0])
@pytest.mark.parametrize("tol", [1e-6, 1e-12])
def test_numeric_harmonics_match_mpmath_reference(b, tol):
    assert abs(harmonics_for_tolerance(b, tol) - harmonics_for_tolerance_mp(b, tol)) <= 1


@pytest.mark.parametrize("b", [0.5, 10.0, 100.0, -3.0])
def test_sa_harmonics_match_mpmath_reference(b):
    from numerics.circle.fourier import SA_DENOMINATOR_GUARD
    K = harmonics_for_tolerance(b, 1e-12, model="sa")
    assert abs(K - harmonics_for_tolerance_mp(b, 1e-12, guard=SA_DENOMINATOR_GUARD)) <= 1
    assert K >= harmonics_for_tolerance(b, 1e-12)
