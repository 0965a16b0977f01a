"""Spectral selection with Q^T K = V = V^T (numerics.architectures.spectral, claim
architectures.spectral-selection)."""
import numpy as np
import pytest

from numerics.common.errors import InputError


def test_spectral_selection_claim_passes():
    from numerics.architectures.claims_spectral import check_spectral_selection

    r = check_spectral_selection()
    assert r.status == "passed", r.measured["flags"]


def test_consensus_closed_form_is_the_pole_spectrum():
    from numerics.architectures.spectral import consensus_rates, pole_rates

    lam = (1.5, -0.4, 0.7, 0.2)
    for kind in ("sa", "usa"):
        for k in range(4):
            assert np.allclose(consensus_rates(lam, k, 5, 0.8, kind), pole_rates(lam, k, (1,) * 5, 0.8, kind),
                               atol=1e-12)


def test_only_the_largest_positive_eigenvalue_is_a_stable_consensus():
    from numerics.architectures.spectral import consensus_rates

    lam = (2.0, 1.0, -1.5)
    assert [k for k in range(3) if consensus_rates(lam, k, 4).max() < 0] == [0]
    # all eigenvalues negative: no stable consensus at all (the split states take over)
    assert not any(consensus_rates((-0.5, -1.0, -2.0), k, 4).max() < 0 for k in range(3))


def test_measured_jacobian_matches_in_d4_with_a_random_factorisation():
    from numerics.architectures.spectral import factor_scores, measured_pole_rates, pole_rates, symmetric_value

    lam = (1.2, 0.4, -0.9, 0.1)
    V, U = symmetric_value(lam, 11)
    Q, K = factor_scores(V, 12)
    signs = (1, -1, 1)
    m = measured_pole_rates(V, U, 0, signs, 1.7, "sa", Q=Q, K=K)
    assert np.max(np.abs(m - pole_rates(lam, 0, signs, 1.7, "sa"))) < 1e-7


def test_bad_model_kind():
    from numerics.architectures.spectral import metric_factors

    with pytest.raises(InputError):
        metric_factors(np.eye(3), 1.0, np.eye(3), "ssa")


def test_tangent_jacobian_agrees_with_the_critical_areas_jacobian():
    from numerics.architectures.spectral import factor_scores, symmetric_value, tangent_jacobian
    from numerics.core.field import attention_field
    from numerics.core.model import Model
    from numerics.core.trajectory import uniform_sphere
    from numerics.critical.stationary import field_jacobian

    V, _ = symmetric_value((1.0, -0.5, 0.3), 4)
    Q, K = factor_scores(V, 5)
    X = uniform_sphere(4, 3, 6)  # not an equilibrium: the two bases differ, the spectra must not
    ours = np.linalg.eigvals(tangent_jacobian(lambda Y: attention_field(Y, 1.1, "sa", Q=Q, K=K, V=V), X))
    theirs = np.linalg.eigvals(field_jacobian(Model("sa", 1.1, Q=Q, K=K, V=V), X))
    key = lambda z: (round(z.real, 6), round(z.imag, 6))  # noqa: E731
    assert np.allclose(sorted(ours, key=key), sorted(theirs, key=key), atol=1e-6)
