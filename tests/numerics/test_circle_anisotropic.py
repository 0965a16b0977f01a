"""Anisotropic metastability on S^1, K = diag(a, b) (numerics.circle.anisotropic, theory.circle_anisotropic;
claims circle.anisotropic-saddle and circle.anisotropic-log-n)."""
import numpy as np
import pytest

from numerics.common.errors import InputError


def test_anisotropic_saddle_claim_passes():
    from numerics.circle.claims_anisotropic import check_anisotropic_saddle

    r = check_anisotropic_saddle()
    assert r.status == "passed", r.measured["flags"]


@pytest.mark.parametrize("kind", ["sa", "usa"])
def test_symbolic_spectrum_is_the_closed_form(kind):
    from theory.circle_anisotropic import matches_closed_form

    assert matches_closed_form(2, kind)


def test_sa_unstable_eigenvalue_is_not_the_papers_e_minus_gamma():
    from numerics.circle.anisotropic import gamma, measured_spectrum

    g = gamma(np.pi / 2, 0.5, 1.5)
    top = measured_spectrum(np.pi / 2, 2, 0.5, 1.5, "sa").real.max()
    assert abs(top - np.exp(-g) / np.cosh(g)) < 1e-8 and abs(top - np.exp(-g)) > 0.1
    top_usa = measured_spectrum(np.pi / 2, 2, 0.5, 1.5, "usa").real.max()
    assert abs(top_usa - np.exp(-g)) < 1e-8


def test_isotropic_kernel_has_the_same_rate_at_every_angle():
    from numerics.circle.anisotropic import measured_spectrum

    tops = [measured_spectrum(phi, 2, 1.0, 1.0).real.max() for phi in (0.0, 0.4, 1.3)]
    assert np.ptp(tops) < 1e-8


def test_bad_inputs():
    from numerics.circle.anisotropic import escape_time, unstable_rate

    with pytest.raises(InputError):
        unstable_rate(1.0, "ssa")
    with pytest.raises(InputError):
        escape_time(0.0, 1, 0.0, 0.5, 1.5)


@pytest.mark.slow
def test_anisotropic_log_n_claim_passes():
    from numerics.circle.claims_anisotropic import check_anisotropic_log_n

    r = check_anisotropic_log_n()
    assert r.status == "passed", r.measured["flags"]
